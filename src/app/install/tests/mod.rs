use std::fs;
use std::path::{Path, PathBuf};

use super::codex::{self, MARK_KEY, MARK_TABLE, MARK_WAS_FALSE};
use super::json_merge::{self, Json};
use super::*;
const BIN: &str = "/opt/my tools/rewind";

struct Env {
    _dir: tempfile::TempDir,
    root: PathBuf,
    paths: Paths,
}

fn env() -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(dir.path()).expect("canonical tempdir");
    fs::create_dir_all(root.join("home")).expect("home");
    fs::create_dir_all(root.join("project")).expect("project");
    let paths = Paths {
        home: Some(root.join("home")),
        codex_home: None,
        claude_config_dir: None,
        xdg_config_home: None,
        copilot_home: None,
        cline_dir: None,
        rewind_home: rewind::store::Home::new(root.join("rewind-home")),
    };
    Env {
        _dir: dir,
        root,
        paths,
    }
}

impl Env {
    fn project(&self) -> Scope {
        Scope::Project(self.root.join("project"))
    }
    fn install(&self, agents: &[Agent], scope: &Scope) -> Plan {
        let plan = plan_install(agents, scope, Path::new(BIN), &self.paths).expect("plan install");
        plan.apply().expect("apply install");
        plan
    }
    fn uninstall(&self, agents: &[Agent], scope: &Scope) -> Plan {
        let plan = plan_uninstall(agents, scope, &self.paths).expect("plan uninstall");
        plan.apply().expect("apply uninstall");
        plan
    }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).expect("read")
}

/// A settings file in the agents' own layout, with foreign keys and a
/// foreign hook on an event we also use.
const CLAUDE_FOREIGN: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/check-bash \"$x\"",
            "timeout": 5
          }
        ]
      }
    ],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send hi"
          }
        ]
      }
    ]
  },
  "zeta": 1.5,
  "alpha": "é ☃"
}
"#;

#[test]
fn hook_commands_are_quoted_and_recognised() {
    let cmd = hook_command(Path::new("/a b/$x/rewind"), Agent::Codex).expect("cmd");
    assert_eq!(cmd, r#""/a b/\$x/rewind" hook --agent codex"#);
    assert!(is_rewind_hook_command(&cmd));
    assert!(is_rewind_hook_command(
        "/usr/bin/rewind hook --agent gemini"
    ));
    assert!(is_rewind_hook_command(
        "'/x y/rewind' hook  --agent claude-code"
    ));
    assert!(!is_rewind_hook_command(
        "/usr/bin/rewinder hook --agent gemini"
    ));
    assert!(!is_rewind_hook_command("/usr/bin/rewind serve"));
    assert!(!is_rewind_hook_command(
        "/usr/bin/rewind hook --agent gemini && rm -rf /"
    ));
    assert!(!is_rewind_hook_command(
        "\"/unterminated/rewind hook --agent codex"
    ));
    assert!(!is_rewind_hook_command(""));
}

#[test]
fn ordered_json_round_trips_the_agents_layout() {
    let v = json_merge::parse(CLAUDE_FOREIGN).expect("parse");
    assert_eq!(json_merge::print(&v, true), CLAUDE_FOREIGN);
    assert!(json_merge::parse("[1]").is_err());
    assert_eq!(json_merge::parse(" \n").expect("empty"), Json::object());
}

#[test]
fn claude_install_keeps_foreign_entries_and_uninstall_restores_the_file() {
    let e = env();
    let file = e.root.join("project/.claude/settings.json");
    write(&file, CLAUDE_FOREIGN);
    let plan = e.install(&[Agent::ClaudeCode], &e.project());
    assert_eq!(
        plan.edits[0].changes,
        ["added hooks SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd"]
    );
    let text = read(&file);
    // Foreign text kept byte for byte, ours appended after it.
    let foreign_group = &CLAUDE_FOREIGN[CLAUDE_FOREIGN
        .find("      {\n        \"matcher\"")
        .expect("group")
        ..CLAUDE_FOREIGN
            .find("\n    ],\n    \"Notification\"")
            .expect("end")];
    assert!(text.contains(foreign_group), "{text}");
    assert!(text.starts_with("{\n  \"model\": \"opus\",\n  \"permissions\""));
    assert!(text.ends_with("  },\n  \"zeta\": 1.5,\n  \"alpha\": \"é ☃\"\n}\n"));
    let v = json_merge::parse(&text).expect("parse");
    let pre = v.get("hooks").and_then(|h| h.get("PreToolUse"));
    let Some(Json::Array(groups)) = pre else {
        panic!("PreToolUse: {pre:?}")
    };
    assert_eq!(groups.len(), 2);
    assert_eq!(
        groups[1],
        Json::Object(vec![(
            "hooks".into(),
            Json::Array(vec![Json::Object(vec![
                ("type".into(), Json::str("command")),
                (
                    "command".into(),
                    Json::str(r#""/opt/my tools/rewind" hook --agent claude-code"#)
                ),
                ("timeout".into(), Json::num(60)),
            ])])
        )])
    );
    assert!(v
        .get("hooks")
        .and_then(|h| h.get("WorktreeCreate"))
        .is_none());

    // Idempotent.
    let again = e.install(&[Agent::ClaudeCode], &e.project());
    assert!(again
        .edits
        .iter()
        .all(|e| !e.changed() && e.changes.is_empty()));
    assert_eq!(read(&file), text);

    let un = e.uninstall(&[Agent::ClaudeCode], &e.project());
    assert_eq!(
        un.edits[0].changes,
        // In file order.
        ["removed hooks PreToolUse, SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop, SessionEnd"]
    );
    assert_eq!(read(&file), CLAUDE_FOREIGN);
    let un = e.uninstall(&[Agent::ClaudeCode], &e.project());
    assert!(!un.edits[0].changed());
}

#[test]
fn a_moved_binary_is_updated_in_place() {
    let e = env();
    let scope = Scope::User;
    e.install(&[Agent::ClaudeCode], &scope);
    let file = e.root.join("home/.claude/settings.json");
    let before = read(&file);
    let plan = plan_install(
        &[Agent::ClaudeCode],
        &scope,
        Path::new("/new/rewind"),
        &e.paths,
    )
    .expect("plan");
    plan.apply().expect("apply");
    assert!(plan.edits[0].changes[0].starts_with("pointed the hooks SessionStart"));
    let after = read(&file);
    assert_eq!(
        after,
        before.replace(r#"\"/opt/my tools/rewind\""#, r#"\"/new/rewind\""#)
    );
}

#[test]
fn a_created_file_is_removed_again_and_claude_config_dir_is_honoured() {
    let mut e = env();
    e.paths.claude_config_dir = Some(e.root.join("claude-cfg"));
    e.install(&[Agent::ClaudeCode], &Scope::User);
    let file = e.root.join("claude-cfg/settings.json");
    assert!(read(&file).ends_with("}\n"));
    assert!(!e.root.join("home/.claude").exists());
    let un = e.uninstall(&[Agent::ClaudeCode], &Scope::User);
    assert!(un.edits[0].deletes());
    assert!(!file.exists());
}

#[test]
fn malformed_files_are_refused_and_nothing_is_written() {
    let e = env();
    let bad = e.root.join("project/.gemini/settings.json");
    write(&bad, "{ \"hooks\": { oops } }");
    let err =
        plan_install(&Agent::ALL, &e.project(), Path::new(BIN), &e.paths).expect_err("malformed");
    let msg = format!("{err:#}");
    assert!(msg.contains(&bad.display().to_string()), "{msg}");
    assert!(msg.contains("nothing was changed"), "{msg}");
    assert_eq!(read(&bad), "{ \"hooks\": { oops } }");
    assert!(!e.root.join("project/.claude").exists());

    // A `hooks` that is not an object is refused too, on both paths.
    let claude = e.root.join("project/.claude/settings.json");
    write(&claude, "{\"hooks\": []}");
    assert!(plan_install(&[Agent::ClaudeCode], &e.project(), Path::new(BIN), &e.paths).is_err());
    assert!(plan_uninstall(&[Agent::ClaudeCode], &e.project(), &e.paths).is_err());
    assert_eq!(read(&claude), "{\"hooks\": []}");

    let toml = e.root.join("home/.codex/config.toml");
    write(&toml, "model = \n");
    let err = plan_install(&[Agent::Codex], &Scope::User, Path::new(BIN), &e.paths)
        .expect_err("bad toml");
    assert!(format!("{err:#}").contains("config.toml"));
}

#[test]
fn gemini_enables_hooks_and_uninstall_undoes_exactly_that() {
    let e = env();
    let file = e.root.join("project/.gemini/settings.json");
    // No final newline, hooksConfig present without `enabled`.
    let original = "{\n  \"hooksConfig\": {\n    \"notifications\": false\n  },\n  \"ui\": {\n    \"theme\": \"dark\"\n  }\n}";
    write(&file, original);
    let plan = e.install(&[Agent::Gemini], &e.project());
    assert_eq!(
        plan.edits[0].changes,
        [
            "added hooks SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent, SessionEnd",
            "set hooksConfig.enabled = true"
        ]
    );
    let v = json_merge::parse(&read(&file)).expect("parse");
    assert_eq!(
        v.get("hooksConfig"),
        Some(&Json::Object(vec![
            ("notifications".into(), Json::Bool(false)),
            ("enabled".into(), Json::Bool(true)),
        ]))
    );
    let entry = v
        .get("hooks")
        .and_then(|h| h.get("BeforeTool"))
        .map(|g| json_merge::print(g, false))
        .expect("BeforeTool");
    assert!(entry.contains("\"name\": \"rewind-BeforeTool\""), "{entry}");
    assert!(entry.contains("\"timeout\": 60000"), "{entry}");
    assert!(!read(&file).ends_with('\n'));
    e.install(&[Agent::Gemini], &e.project());
    e.uninstall(&[Agent::Gemini], &e.project());
    assert_eq!(read(&file), original);
    assert!(!e.paths.state_file().exists());

    // `enabled: false` is put back to false.
    let original = "{\n  \"hooksConfig\": {\n    \"enabled\": false\n  }\n}\n";
    write(&file, original);
    e.install(&[Agent::Gemini], &e.project());
    assert!(read(&file).contains("\"enabled\": true"));
    e.uninstall(&[Agent::Gemini], &e.project());
    assert_eq!(read(&file), original);

    // Already enabled by the user: left enabled.
    let original = "{\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}\n";
    write(&file, original);
    let plan = e.install(&[Agent::Gemini], &e.project());
    assert_eq!(plan.edits[0].changes.len(), 1);
    e.uninstall(&[Agent::Gemini], &e.project());
    assert_eq!(read(&file), original);
}

const CODEX_CONFIG: &str = r#"# my codex config
model = "gpt-5.5"   # the default

[features]
# plugins reach for the network
plugins = false

[projects."/x"]
trust_level = "trusted"
"#;

/// `disable_feature` of `enabled` writes `back`.
fn disables_to(enabled: &str, back: &str) {
    match codex::disable_feature(enabled).expect("disable") {
        Some((Action::Write(text), _)) => assert_eq!(text, back),
        other => panic!("not written back: {other:?}"),
    }
}

#[test]
fn codex_feature_edit_keeps_the_toml_and_is_undone_by_its_mark() {
    let out = codex::enable_feature(Some(CODEX_CONFIG))
        .expect("enable")
        .expect("changed");
    assert_eq!(
        out,
        CODEX_CONFIG.replace(
            "plugins = false\n",
            &format!("plugins = false\nhooks = true {MARK_KEY}\n")
        )
    );
    assert_eq!(codex::enable_feature(Some(&out)).expect("again"), None);
    disables_to(&out, CODEX_CONFIG);

    // A table we created goes with the key.
    let plain = "model = \"o3\"\n";
    let out = codex::enable_feature(Some(plain))
        .expect("enable")
        .expect("changed");
    assert!(out.contains(MARK_TABLE), "{out}");
    disables_to(&out, plain);

    // false → true → false, dotted keys kept dotted.
    let dotted = "features.hooks = false # mine\nfeatures.plugins = false\n";
    let out = codex::enable_feature(Some(dotted))
        .expect("enable")
        .expect("changed");
    assert!(out.contains(MARK_WAS_FALSE), "{out}");
    disables_to(&out, "features.hooks = false\nfeatures.plugins = false\n");

    // The user's own `hooks = true` is never removed.
    let own = "[features]\nhooks = true\n";
    assert_eq!(codex::enable_feature(Some(own)).expect("enable"), None);
    assert!(codex::disable_feature(own).expect("disable").is_none());

    assert!(codex::enable_feature(Some("features = { plugins = false }\n")).is_err());
    assert!(codex::enable_feature(Some("[features]\nhooks = \"yes\"\n")).is_err());
}

#[test]
fn codex_user_and_project_installs_share_the_feature_flag() {
    let mut e = env();
    e.paths.codex_home = Some(e.root.join("codex-home"));
    let config = e.root.join("codex-home/config.toml");
    write(&config, CODEX_CONFIG);
    let user_hooks = e.root.join("codex-home/hooks.json");
    let project_hooks = e.root.join("project/.codex/hooks.json");

    e.install(&[Agent::Codex], &Scope::User);
    let plan = e.install(&[Agent::Codex], &e.project());
    assert!(!plan.edits[1].changed(), "config already set");
    let text = read(&project_hooks);
    assert!(text.contains("\"timeout\": 3"), "{text}");
    assert!(text.contains(r#"\"/opt/my tools/rewind\" hook --agent codex"#));

    let plan = e.uninstall(&[Agent::Codex], &e.project());
    assert!(plan.edits[0].deletes());
    assert!(!project_hooks.exists());
    assert!(plan.edits[1].changes[0].starts_with("kept [features] hooks"));
    assert!(read(&config).contains(MARK_KEY));

    e.uninstall(&[Agent::Codex], &Scope::User);
    assert!(!user_hooks.exists());
    assert_eq!(read(&config), CODEX_CONFIG);
    assert!(!e.paths.state_file().exists());
}

#[cfg(unix)]
#[test]
fn symlinked_settings_are_edited_through_the_link() {
    let e = env();
    let real = e.root.join("dotfiles/settings.json");
    write(&real, "{}\n");
    let link = e.root.join("home/.claude/settings.json");
    fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    e.install(&[Agent::ClaudeCode], &Scope::User);
    assert!(fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(read(&real).contains("hook --agent claude-code"));
}

#[test]
fn opencode_and_kilo_get_a_plugin_file_of_their_own() {
    let e = env();
    let project = e.root.join("project");
    let plan = e.install(&[Agent::OpenCode, Agent::Kilo], &e.project());
    assert!(plan.edits.iter().all(Edit::changed), "{plan:?}");
    let plugin = read(&project.join(".opencode/plugins/rewind.js"));
    assert!(plugin.starts_with("// rewind: "), "{plugin}");
    assert!(
        plugin.contains(r#"const REWIND = ["/opt/my tools/rewind","hook","--agent","opencode"];"#),
        "{plugin}"
    );
    // No imports: OpenCode would npm-install its plugin package at every
    // start for a plugin that has one.
    assert!(!plugin.contains("import "), "{plugin}");
    let kilo = read(&project.join(".kilo/plugins/rewind.js"));
    assert!(kilo.contains(r#""--agent","kilo"]"#), "{kilo}");
    // Twice: nothing changes. The user's config is untouched.
    let again = e.install(&[Agent::OpenCode], &e.project());
    assert!(!again.edits[0].changed());
    assert!(!e.root.join("home/.config").exists());
    // Another binary: the plugin is pointed at it.
    let moved = plan_install(
        &[Agent::OpenCode],
        &e.project(),
        Path::new("/usr/bin/rewind"),
        &e.paths,
    )
    .expect("plan");
    assert_eq!(moved.edits[0].changes, ["updated the rewind plugin"]);

    e.uninstall(&[Agent::OpenCode, Agent::Kilo], &e.project());
    assert!(!project.join(".opencode/plugins/rewind.js").exists());
    assert!(!project.join(".kilo/plugins/rewind.js").exists());

    // A rewind.js that is not ours is refused, and kept by uninstall.
    let foreign = project.join(".opencode/plugins/rewind.js");
    write(&foreign, "export const Mine = async () => ({})\n");
    let err = plan_install(&[Agent::OpenCode], &e.project(), Path::new(BIN), &e.paths)
        .expect_err("foreign plugin");
    assert!(err.to_string().contains("did not write"), "{err}");
    e.uninstall(&[Agent::OpenCode], &e.project());
    assert_eq!(read(&foreign), "export const Mine = async () => ({})\n");

    // The user's plugin goes under $XDG_CONFIG_HOME when it is set.
    let mut paths = e.paths.clone();
    paths.xdg_config_home = Some(e.root.join("xdg"));
    plan_install(&[Agent::OpenCode], &Scope::User, Path::new(BIN), &paths)
        .and_then(|p| p.apply())
        .expect("user install");
    assert!(e.root.join("xdg/opencode/plugins/rewind.js").exists());
}

#[test]
fn qwen_code_hooks_go_into_qwen_settings() {
    let e = env();
    let file = e.root.join("project/.qwen/settings.json");
    write(&file, CLAUDE_FOREIGN);
    e.install(&[Agent::Qwen], &e.project());
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    let entry = &v["hooks"]["UserPromptSubmit"][0]["hooks"][0];
    assert_eq!(
        entry["command"],
        r#""/opt/my tools/rewind" hook --agent qwen-code"#
    );
    assert_eq!(entry["name"], "rewind-UserPromptSubmit");
    // Seconds: Qwen Code reads 1000 or more as milliseconds.
    assert_eq!(entry["timeout"], 60);
    assert_eq!(v["model"], "opus");
    e.uninstall(&[Agent::Qwen], &e.project());
    assert_eq!(read(&file), CLAUDE_FOREIGN);
}

#[test]
fn copilot_gets_a_hook_file_of_its_own() {
    let e = env();
    let file = e.root.join("project/.github/hooks/rewind.json");
    e.install(&[Agent::Copilot], &e.project());
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["version"], 1);
    assert_eq!(
        v["hooks"]["UserPromptSubmit"][0],
        serde_json::json!({"type": "command", "bash": r#""/opt/my tools/rewind" hook --agent copilot"#, "timeoutSec": 60})
    );
    assert!(!e.install(&[Agent::Copilot], &e.project()).edits[0].changed());
    e.uninstall(&[Agent::Copilot], &e.project());
    assert!(!file.exists());
    // Someone else's rewind.json is refused and left alone.
    let foreign = "{\"version\": 1, \"hooks\": {\"preToolUse\": [{\"type\": \"command\", \"bash\": \"./check.sh\"}]}}\n";
    write(&file, foreign);
    let err = plan_install(&[Agent::Copilot], &e.project(), Path::new(BIN), &e.paths)
        .expect_err("foreign hooks");
    assert!(err.to_string().contains("did not write"), "{err}");
    e.uninstall(&[Agent::Copilot], &e.project());
    assert_eq!(read(&file), foreign);
}

#[test]
fn droid_hooks_go_at_the_top_level_of_factory_hooks_json() {
    let e = env();
    let file = e.root.join("project/.factory/hooks.json");
    let foreign = "{\n  \"PreToolUse\": [\n    {\n      \"matcher\": \"Execute\",\n      \"hooks\": [\n        {\n          \"type\": \"command\",\n          \"command\": \"./check.sh\"\n        }\n      ]\n    }\n  ]\n}\n";
    write(&file, foreign);
    e.install(&[Agent::Droid], &e.project());
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert!(v.get("hooks").is_none(), "{v}");
    assert_eq!(v["PreToolUse"][0]["hooks"][0]["command"], "./check.sh");
    assert_eq!(
        v["PreToolUse"][1]["hooks"][0]["command"],
        r#""/opt/my tools/rewind" hook --agent droid"#
    );
    assert_eq!(v["Stop"][0]["hooks"][0]["timeout"], 60);
    assert!(!e.install(&[Agent::Droid], &e.project()).edits[0].changed());
    e.uninstall(&[Agent::Droid], &e.project());
    assert_eq!(read(&file), foreign);
}

#[test]
fn cline_gets_a_hook_file_per_event() {
    let e = env();
    let dir = e.root.join("project/.clinerules/hooks");
    // A hook of the user's own, for an event rewind does not use.
    write(&dir.join("PreCompact"), "#!/bin/sh\necho mine\n");
    e.install(&[Agent::Cline], &e.project());
    for event in super::cline::EVENTS {
        let text = read(&dir.join(event));
        assert!(text.starts_with("#!/bin/sh\n"), "{event}: {text}");
        assert!(
            text.ends_with("exec \"/opt/my tools/rewind\" hook --agent cline\n"),
            "{event}: {text}"
        );
    }
    let again = e.install(&[Agent::Cline], &e.project());
    assert!(again.edits.iter().all(|x| !x.changed()));
    e.uninstall(&[Agent::Cline], &e.project());
    for event in super::cline::EVENTS {
        assert!(!dir.join(event).exists(), "{event}");
    }
    // The user's hook stays, and so does the directory holding it.
    assert_eq!(read(&dir.join("PreCompact")), "#!/bin/sh\necho mine\n");
    // Someone else's file under one of rewind's names is refused, all of
    // the install with it, and left alone.
    write(&dir.join("PostToolUse"), "#!/bin/sh\n./lint.sh\n");
    let err = plan_install(&[Agent::Cline], &e.project(), Path::new(BIN), &e.paths)
        .expect_err("foreign hook");
    assert!(err.to_string().contains("did not write"), "{err}");
    assert!(!dir.join("TaskStart").exists());
    e.uninstall(&[Agent::Cline], &e.project());
    assert_eq!(read(&dir.join("PostToolUse")), "#!/bin/sh\n./lint.sh\n");
    // The user's: $CLINE_DIR/hooks, else ~/.cline/hooks.
    let mut paths = e.paths.clone();
    paths.cline_dir = Some(e.root.join("cline-home"));
    let bin = Path::new(BIN);
    plan_install(&[Agent::Cline], &Scope::User, bin, &paths)
        .unwrap()
        .apply()
        .unwrap();
    assert!(e.root.join("cline-home/hooks/TaskComplete").exists());
}

mod mcp_files;
