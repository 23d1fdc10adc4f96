//! `rewind install` / `rewind uninstall` run as the real binary, with
//! `HOME`, `CODEX_HOME` and `REWIND_HOME` in a temporary directory: every
//! agent, user and project scope.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(dir.path()).expect("canonical");
        for d in ["home", "codex-home", "project", "bin"] {
            fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        Home { _dir: dir, root }
    }

    /// Put a stand-in for an agent's command on PATH (`install all`
    /// installs for the agents found there).
    fn agent_on_path(&self, command: &str) {
        use std::os::unix::fs::PermissionsExt;
        let file = self.p("bin").join(command);
        fs::write(&file, "#!/bin/sh\n").expect("write");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rewind"))
            .args(args)
            .current_dir(&self.root)
            .env("HOME", self.p("home"))
            .env("CODEX_HOME", self.p("codex-home"))
            .env("REWIND_HOME", self.p("rewind-home"))
            .env("PATH", self.p("bin"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("COPILOT_HOME")
            .env_remove("XDG_DATA_HOME")
            .output()
            .expect("run rewind")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "rewind {args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

fn json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// The commands registered per event: `{event: [command, …]}`.
fn commands(settings: &Value) -> Vec<(String, Vec<String>)> {
    let Some(hooks) = settings["hooks"].as_object() else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<String>)> = hooks
        .iter()
        .map(|(event, groups)| {
            let cmds = groups
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
                .filter_map(|h| h["command"].as_str().map(str::to_owned))
                .collect();
            (event.clone(), cmds)
        })
        .collect();
    out.sort();
    out
}

fn sorted(events: &[&str], cmd: &str) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<_> = events
        .iter()
        .map(|e| (e.to_string(), vec![cmd.to_owned()]))
        .collect();
    v.sort();
    v
}

const CLAUDE: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionEnd",
];
const CODEX: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
];
const GEMINI: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "SessionEnd",
];

fn bin() -> String {
    fs::canonicalize(env!("CARGO_BIN_EXE_rewind"))
        .expect("binary")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn user_install_of_all_agents_and_uninstall() {
    let h = Home::new();
    let codex_config = "# mine\nmodel = \"o3\"\n";
    fs::write(h.p("codex-home/config.toml"), codex_config).expect("write");
    // Kilo is not on PATH: `install all` leaves it out.
    for command in ["claude", "codex", "gemini", "opencode"] {
        h.agent_on_path(command);
    }

    let out = h.ok(&["install", "all"]);
    assert!(out.contains("added hooks SessionStart"), "{out}");
    assert!(out.contains("rewind log"), "{out}");
    assert!(out.contains("rewind undo"), "{out}");
    assert!(out.contains("rewind restore"), "{out}");

    let b = bin();
    let claude = json(&h.p("home/.claude/settings.json"));
    assert_eq!(
        commands(&claude),
        sorted(CLAUDE, &format!("\"{b}\" hook --agent claude-code"))
    );
    let codex = json(&h.p("codex-home/hooks.json"));
    assert_eq!(
        commands(&codex),
        sorted(CODEX, &format!("\"{b}\" hook --agent codex"))
    );
    assert_eq!(codex["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 3);
    assert_eq!(codex["hooks"]["Stop"][0]["hooks"][0]["timeout"], 60);
    let toml = fs::read_to_string(h.p("codex-home/config.toml")).expect("config");
    assert!(toml.starts_with(codex_config), "{toml}");
    assert!(toml.contains("[features]\nhooks = true #"), "{toml}");
    let gemini = json(&h.p("home/.gemini/settings.json"));
    assert_eq!(
        commands(&gemini),
        sorted(GEMINI, &format!("\"{b}\" hook --agent gemini"))
    );
    assert_eq!(gemini["hooksConfig"]["enabled"], true);
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["name"],
        "rewind-BeforeTool"
    );
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"],
        60000
    );
    let plugin =
        fs::read_to_string(h.p("home/.config/opencode/plugins/rewind.js")).expect("plugin");
    assert!(
        plugin.contains(&format!("[\"{b}\",\"hook\",\"--agent\",\"opencode\"]")),
        "{plugin}"
    );
    assert!(!h.p("home/.config/kilo").exists());

    let again = h.ok(&["install", "all"]);
    // One line for Codex's two files, left alike.
    assert_eq!(again.matches("already installed").count(), 4, "{again}");

    let out = h.ok(&["uninstall", "all"]);
    assert!(out.contains("removed hooks"), "{out}");
    assert!(!h.p("home/.claude/settings.json").exists());
    assert!(!h.p("codex-home/hooks.json").exists());
    assert!(!h.p("home/.gemini/settings.json").exists());
    assert!(!h.p("home/.config/opencode/plugins/rewind.js").exists());
    assert_eq!(
        fs::read_to_string(h.p("codex-home/config.toml")).expect("config"),
        codex_config
    );
    // Uninstall `all` is every agent, on PATH or not.
    let out = h.ok(&["uninstall", "all"]);
    // One line per agent here: a run of one agent's files in one directory
    // that fared alike is one (Codex's two, Cline's seven).
    assert_eq!(out.matches("nothing to remove").count(), 9, "{out}");
    assert_eq!(out.lines().count(), 9, "{out}");
    assert!(
        out.contains("/.cline/hooks/{TaskStart,TaskResume,PreToolUse,PostToolUse,TaskComplete,TaskCancel,TaskError}: nothing to remove"),
        "{out}"
    );
}

#[test]
fn install_all_without_any_agent_on_path_says_so() {
    let h = Home::new();
    let out = h.run(&["install", "all"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("on PATH"), "{err}");
    assert!(!h.p("home/.claude").exists());
}

#[test]
fn project_install_merges_with_foreign_settings_per_agent() {
    let h = Home::new();
    let files = [
        ("claude-code", ".claude/settings.json"),
        ("codex", ".codex/hooks.json"),
        ("gemini", ".gemini/settings.json"),
    ];
    let foreign = "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"echo hello\"\n          }\n        ]\n      }\n    ]\n  },\n  \"other\": [\n    1,\n    2\n  ]\n}\n";
    let project = h.p("project");
    let project_arg = project.to_str().expect("utf-8");
    for (agent, rel) in files {
        let file = project.join(rel);
        fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        fs::write(&file, foreign).expect("write");
        let out = h.ok(&[
            "install",
            agent,
            "--project",
            project_arg,
            "--bin",
            "/opt/rewind/bin/rewind",
        ]);
        assert!(out.contains(&file.display().to_string()), "{out}");
        let v = json(&file);
        assert_eq!(v["other"], serde_json::json!([1, 2]));
        let start = &v["hooks"]["SessionStart"];
        assert_eq!(start[0]["hooks"][0]["command"], "echo hello");
        assert_eq!(
            start[1]["hooks"][0]["command"],
            format!("\"/opt/rewind/bin/rewind\" hook --agent {agent}")
        );
        assert_eq!(
            h.ok(&[
                "install",
                agent,
                "--project",
                project_arg,
                "--bin",
                "/opt/rewind/bin/rewind"
            ])
            .matches("already installed")
            .count(),
            if agent == "codex" { 2 } else { 1 }
        );
    }
    // Nothing in the user's settings.
    assert!(!h.p("home/.claude").exists());
    assert!(!h.p("codex-home/hooks.json").exists());
    assert!(!h.p("home/.gemini").exists());
    // Codex's feature flag goes to $CODEX_HOME/config.toml.
    let toml = fs::read_to_string(h.p("codex-home/config.toml")).expect("config");
    assert!(toml.contains("hooks = true"), "{toml}");

    h.ok(&["uninstall", "all", "--project", project_arg]);
    for (_, rel) in files {
        assert_eq!(
            fs::read_to_string(project.join(rel)).expect("read"),
            foreign,
            "{rel}"
        );
    }
    assert!(!h.p("codex-home/config.toml").exists());
}

#[test]
fn malformed_settings_are_refused_untouched() {
    let h = Home::new();
    let file = h.p("home/.claude/settings.json");
    fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    fs::write(&file, "{\"hooks\": ").expect("write");
    for command in ["claude", "codex", "gemini"] {
        h.agent_on_path(command);
    }
    let out = h.run(&["install", "all"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert_eq!(fs::read_to_string(&file).expect("read"), "{\"hooks\": ");
    assert!(!h.p("codex-home/hooks.json").exists());
    assert!(!h.p("home/.gemini").exists());
    let out = h.run(&["uninstall", "claude-code"]);
    assert!(!out.status.success());
    assert_eq!(fs::read_to_string(&file).expect("read"), "{\"hooks\": ");
}

#[test]
fn the_hook_binary_must_be_named_rewind() {
    let h = Home::new();
    let out = h.run(&["install", "gemini", "--bin", "/usr/bin/other"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be named `rewind`"));
    assert!(!h.p("home/.gemini").exists());
}

/// Issue 39 item 7: install names the agent in the command it prints (no
/// `NAME` left in), a project install says its files are the project's, and
/// uninstall removes the directories install made once they are empty —
/// not one the user already had, nor one holding anything else.
#[test]
fn project_install_says_what_it_wrote_and_uninstall_leaves_no_empty_directory() {
    let h = Home::new();
    let project = h.p("project").display().to_string();
    fs::create_dir_all(h.p("project/.github")).expect("mkdir");
    let out = h.ok(&["install", "claude-code", "--project", &project]);
    assert!(
        out.contains("hook --agent claude-code at each step"),
        "{out}"
    );
    assert!(!out.contains("NAME"), "{out}");
    assert!(out.contains("part of the project"), "{out}");
    h.ok(&["install", "copilot", "--project", &project]);
    h.ok(&["install", "gemini", "--project", &project]);
    fs::write(h.p("project/.gemini/notes.txt"), "mine").expect("write");

    h.ok(&["uninstall", "all", "--project", &project]);
    assert!(
        !h.p("project/.claude").exists(),
        "made by install, now empty"
    );
    assert!(!h.p("project/.github/hooks").exists());
    assert!(
        h.p("project/.github").is_dir(),
        "the user's own directory stays"
    );
    assert!(
        h.p("project/.gemini/notes.txt").exists(),
        "a file of the user's stays"
    );
    // Only the directory that still holds the user's file is remembered.
    let record = json(&h.p("rewind-home/installed.json"));
    assert_eq!(
        record["created_dirs"],
        serde_json::json!([h.p("project/.gemini").display().to_string()]),
        "{record}"
    );
    fs::remove_file(h.p("project/.gemini/notes.txt")).expect("rm");
    h.ok(&["install", "gemini", "--project", &project]);
    h.ok(&["uninstall", "gemini", "--project", &project]);
    assert!(!h.p("project/.gemini").exists());
    assert!(
        !h.p("rewind-home/installed.json").exists(),
        "nothing left to record"
    );
}
