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

// ------------------------------------------------------- install --mcp

fn mcp(e: &Env, agents: &[Agent], scope: &Scope, install: bool) -> Plan {
    let plan =
        mcp::plan(agents, scope, install.then_some(Path::new(BIN)), &e.paths).expect("plan mcp");
    plan.apply().expect("apply mcp");
    plan
}

#[test]
fn mcp_registration_keeps_foreign_entries_and_uninstall_restores_the_files() {
    let e = env();
    let gemini = e.root.join("home/.gemini/settings.json");
    let gemini_before = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-server\"\n    }\n  }\n}\n";
    write(&gemini, gemini_before);
    let codex = e.root.join("home/.codex/config.toml");
    let codex_before =
        "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other-server\"\n";
    write(&codex, codex_before);
    let claude = e.root.join("home/.claude.json");
    write(&claude, CLAUDE_FOREIGN);

    let all: Vec<Agent> = Agent::ALL.to_vec();
    let plan = mcp(&e, &all, &Scope::User, true);
    assert!(plan.edits.iter().all(|x| x.changed()), "{plan:?}");
    let g: serde_json::Value = serde_json::from_str(&read(&gemini)).expect("gemini json");
    assert_eq!(
        g["mcpServers"]["rewind"],
        serde_json::json!({"command": BIN, "args": ["mcp"]})
    );
    assert_eq!(g["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(g["theme"], "dark");
    let c: serde_json::Value = serde_json::from_str(&read(&claude)).expect("claude json");
    assert_eq!(
        c["mcpServers"]["rewind"],
        serde_json::json!({"type": "stdio", "command": BIN, "args": ["mcp"]})
    );
    assert_eq!(c["model"], "opus");
    let t = read(&codex);
    assert!(t.starts_with(codex_before), "{t}");
    let doc: toml_edit::DocumentMut = t.parse().expect("toml");
    assert_eq!(doc["mcp_servers"]["rewind"]["command"].as_str(), Some(BIN));
    assert_eq!(
        doc["mcp_servers"]["rewind"]["args"]
            .as_array()
            .and_then(|a| a.get(0))
            .and_then(|v| v.as_str()),
        Some("mcp")
    );
    let env_vars: Vec<&str> = doc["mcp_servers"]["rewind"]["env_vars"]
        .as_array()
        .expect("env_vars")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(env_vars, ["REWIND_HOME", "XDG_DATA_HOME"]);

    // Twice changes nothing.
    let again = mcp(&e, &all, &Scope::User, true);
    assert!(again.edits.iter().all(|x| !x.changed()), "{again:?}");

    mcp(&e, &all, &Scope::User, false);
    assert_eq!(read(&gemini), gemini_before);
    assert_eq!(read(&codex), codex_before);
    assert_eq!(read(&claude), CLAUDE_FOREIGN);
    // The hooks' settings were never touched.
    assert!(!e.root.join("home/.claude/settings.json").exists());
}

#[test]
fn mcp_project_files_are_created_and_removed_and_codex_projects_are_refused() {
    let e = env();
    mcp(&e, &[Agent::ClaudeCode, Agent::Gemini], &e.project(), true);
    let claude = e.root.join("project/.mcp.json");
    let gemini = e.root.join("project/.gemini/settings.json");
    assert!(read(&claude).contains("\"rewind\""));
    assert!(read(&gemini).contains("\"rewind\""));
    let un = mcp(&e, &[Agent::ClaudeCode, Agent::Gemini], &e.project(), false);
    assert!(un.edits.iter().all(|x| x.deletes()), "{un:?}");
    assert!(!claude.exists() && !gemini.exists());

    let err = mcp::plan(
        &[Agent::Codex],
        &e.project(),
        Some(Path::new(BIN)),
        &e.paths,
    )
    .expect_err("codex project");
    assert!(format!("{err:#}").contains("without --project"));
}

#[test]
fn a_foreign_rewind_mcp_server_is_refused_not_replaced() {
    let e = env();
    let gemini = e.root.join("home/.gemini/settings.json");
    let foreign =
        "{\"mcpServers\": {\"rewind\": {\"command\": \"npx\", \"args\": [\"rewind-mcp\"]}}}";
    write(&gemini, foreign);
    for install in [true, false] {
        let err = mcp::plan(
            &[Agent::Gemini],
            &Scope::User,
            install.then_some(Path::new(BIN)),
            &e.paths,
        )
        .expect_err("foreign server");
        assert!(format!("{err:#}").contains("did not write"), "{err:#}");
    }
    assert_eq!(read(&gemini), foreign);
    let err = mcp::codex_toml(
        Some("[mcp_servers.rewind]\ncommand = \"/usr/bin/rewind\"\nargs = [\"serve\"]\n"),
        Some(BIN),
    )
    .expect_err("foreign toml server");
    assert!(err.contains("did not write"), "{err}");
    // Ours, at another path: pointed at this binary.
    let (text, what) = mcp::codex_toml(
        Some("[mcp_servers.rewind]\ncommand = \"/old/rewind\"\nargs = [\"mcp\"]\n"),
        Some(BIN),
    )
    .expect("ours")
    .expect("a change");
    assert!(what.contains("pointed"), "{what}");
    assert!(text.contains(BIN), "{text}");
    assert!(!text.contains("/old/rewind"), "{text}");
    // Ours, from before env_vars: given them.
    let (text, what) = mcp::codex_toml(
        Some(&format!(
            "[mcp_servers.rewind]\ncommand = \"{BIN}\"\nargs = [\"mcp\"]\n"
        )),
        Some(BIN),
    )
    .expect("ours")
    .expect("a change");
    assert!(what.contains("REWIND_HOME"), "{what}");
    assert!(
        text.contains("env_vars = [\"REWIND_HOME\", \"XDG_DATA_HOME\"]"),
        "{text}"
    );
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
fn opencode_mcp_server_merges_into_opencode_json() {
    let e = env();
    let config = e.root.join("project/opencode.json");
    let before = "{\n  \"model\": \"x/y\",\n  \"mcp\": {\n    \"other\": {\n      \"type\": \"remote\",\n      \"url\": \"http://h\"\n    }\n  }\n}\n";
    write(&config, before);
    let plan = mcp(&e, &[Agent::OpenCode], &e.project(), true);
    assert!(plan.edits[0].changed());
    let v: serde_json::Value = serde_json::from_str(&read(&config)).expect("json");
    assert_eq!(
        v["mcp"]["rewind"],
        serde_json::json!({"type": "local", "command": [BIN, "mcp"], "enabled": true})
    );
    assert_eq!(v["mcp"]["other"]["url"], "http://h");
    assert!(!mcp(&e, &[Agent::OpenCode], &e.project(), true).edits[0].changed());
    mcp(&e, &[Agent::OpenCode], &e.project(), false);
    assert_eq!(read(&config), before);
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

/// Droid's `.factory/mcp.json` and Copilot CLI's `mcp-config.json` /
/// `.github/mcp.json`, each as the agent's own `mcp add` writes it (Droid
/// 0.215.0, Copilot CLI 1.0.102), beside the user's servers; `file` is
/// the agent's user file in `home/`.
fn user_mcp_file_keeps_other_servers(
    agent: Agent,
    file: &str,
    foreign: &str,
    ours: serde_json::Value,
) {
    let e = env();
    let file = e.root.join("home").join(file);
    write(&file, foreign);
    let plan = mcp(&e, &[agent], &Scope::User, true);
    assert!(plan.edits[0].changed(), "{plan:?}");
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["mcpServers"]["rewind"], ours, "{agent}");
    assert!(v["mcpServers"]["other"].is_object(), "{agent}: {v}");
    assert!(!mcp(&e, &[agent], &Scope::User, true).edits[0].changed());
    let un = mcp(&e, &[agent], &Scope::User, false);
    assert!(un.edits[0].changed(), "{un:?}");
    assert_eq!(read(&file), foreign, "{agent}");
    // Uninstalled twice: nothing to do.
    assert!(!mcp(&e, &[agent], &Scope::User, false).edits[0].changed());
}

#[test]
fn droid_mcp_server_goes_into_factory_mcp_json() {
    let foreign = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"other-server\",\n      \"args\": [],\n      \"disabled\": false\n    }\n  }\n}\n";
    let ours = serde_json::json!({"type": "stdio", "command": BIN, "args": ["mcp"]});
    user_mcp_file_keeps_other_servers(Agent::Droid, ".factory/mcp.json", foreign, ours.clone());
    // A project's: created, then removed again.
    let e = env();
    mcp(&e, &[Agent::Droid], &e.project(), true);
    let file = e.root.join("project/.factory/mcp.json");
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["mcpServers"]["rewind"], ours);
    let un = mcp(&e, &[Agent::Droid], &e.project(), false);
    assert!(un.edits[0].deletes(), "{un:?}");
    assert!(!file.exists());
}

#[test]
fn copilot_mcp_server_goes_into_mcp_config_json() {
    let foreign = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"tools\": [\n        \"*\"\n      ],\n      \"type\": \"local\",\n      \"command\": \"other-server\",\n      \"args\": []\n    }\n  }\n}\n";
    let ours =
        serde_json::json!({"type": "local", "command": BIN, "args": ["mcp"], "tools": ["*"]});
    user_mcp_file_keeps_other_servers(
        Agent::Copilot,
        ".copilot/mcp-config.json",
        foreign,
        ours.clone(),
    );
    // $COPILOT_HOME/mcp-config.json when it is set.
    let e = env();
    let mut paths = e.paths.clone();
    paths.copilot_home = Some(e.root.join("copilot-home"));
    let bin = Path::new(BIN);
    mcp::plan(&[Agent::Copilot], &Scope::User, Some(bin), &paths)
        .unwrap()
        .apply()
        .unwrap();
    assert!(e.root.join("copilot-home/mcp-config.json").exists());
    assert!(!e.root.join("home/.copilot").exists());
    // A project's: .github/mcp.json (not Claude Code's .mcp.json), created
    // and removed again; a foreign `rewind` there is refused.
    mcp(&e, &[Agent::Copilot], &e.project(), true);
    let file = e.root.join("project/.github/mcp.json");
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["mcpServers"]["rewind"], ours);
    assert!(!e.root.join("project/.mcp.json").exists());
    let un = mcp(&e, &[Agent::Copilot], &e.project(), false);
    assert!(un.edits[0].deletes(), "{un:?}");
    assert!(!file.exists());
    let theirs = "{\"mcpServers\": {\"rewind\": {\"type\": \"local\", \"command\": \"npx\", \"args\": [\"rewind-mcp\"]}}}";
    write(&file, theirs);
    let err = mcp::plan(&[Agent::Copilot], &e.project(), Some(bin), &e.paths)
        .expect_err("foreign server");
    assert!(format!("{err:#}").contains("did not write"), "{err:#}");
    assert_eq!(read(&file), theirs);
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

#[test]
fn cline_mcp_server_goes_into_cline_mcp_settings_json() {
    let foreign = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"transport\": {\n        \"type\": \"stdio\",\n        \"command\": \"other-server\",\n        \"args\": []\n      }\n    }\n  }\n}\n";
    let ours = serde_json::json!({"transport": {"type": "stdio", "command": BIN, "args": ["mcp"]}});
    user_mcp_file_keeps_other_servers(
        Agent::Cline,
        ".cline/data/settings/cline_mcp_settings.json",
        foreign,
        ours,
    );
    // $CLINE_DIR/data/settings/… when it is set; no project's file.
    let e = env();
    let mut paths = e.paths.clone();
    paths.cline_dir = Some(e.root.join("cline-home"));
    let bin = Path::new(BIN);
    mcp::plan(&[Agent::Cline], &Scope::User, Some(bin), &paths)
        .unwrap()
        .apply()
        .unwrap();
    assert!(e
        .root
        .join("cline-home/data/settings/cline_mcp_settings.json")
        .exists());
    let err =
        mcp::plan(&[Agent::Cline], &e.project(), Some(bin), &e.paths).expect_err("cline project");
    assert!(format!("{err:#}").contains("without --project"), "{err:#}");
    assert!(!mcp::has_project_file(Agent::Cline) && !mcp::has_project_file(Agent::Codex));
    // Ours in Cline's shape is known as ours; someone else's is refused.
    let file = e
        .root
        .join("home/.cline/data/settings/cline_mcp_settings.json");
    let theirs = "{\"mcpServers\": {\"rewind\": {\"transport\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"rewind-mcp\"]}}}}";
    write(&file, theirs);
    let err =
        mcp::plan(&[Agent::Cline], &Scope::User, Some(bin), &e.paths).expect_err("foreign server");
    assert!(format!("{err:#}").contains("did not write"), "{err:#}");
    assert_eq!(read(&file), theirs);
}
