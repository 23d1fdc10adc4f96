//! The Claude Code plugin (clients/claude-code-plugin, with the repository's
//! .claude-plugin/marketplace.json) and the Gemini CLI extension
//! (clients/gemini-extension) without the agents: their hooks are the ones
//! `rewind install` writes, plus `--plugin`; their MCP server is `rewind
//! mcp`; the two copies of scripts/rewind.sh and of the slash commands
//! agree; scripts/rewind.sh finds the binary as docs/agents.md says; and
//! `rewind hook --plugin` stands down for an event the settings already
//! give to `rewind hook`. agents_e2e and agents_mcp run them in the agents.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn plugin() -> PathBuf {
    repo().join("clients/claude-code-plugin")
}

fn extension() -> PathBuf {
    repo().join("clients/gemini-extension")
}

fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What `rewind install AGENT --project` writes into a fresh project's
/// settings file.
fn installed_hooks(agent: &str, settings: &str) -> Value {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(common::bin())
        .args(["install", agent, "--project"])
        .arg(project.path())
        .env("REWIND_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_file(&project.path().join(settings))["hooks"].clone()
}

/// Each event's single hook entry, without its command.
fn entries_without_commands(hooks: &Value) -> Vec<(String, Value)> {
    hooks
        .as_object()
        .unwrap()
        .iter()
        .map(|(event, groups)| {
            let groups = groups.as_array().unwrap();
            assert_eq!(groups.len(), 1, "{event}");
            let entries = groups[0]["hooks"].as_array().unwrap();
            assert_eq!(entries.len(), 1, "{event}");
            let mut e = entries[0].clone();
            e.as_object_mut().unwrap().remove("command");
            (event.clone(), e)
        })
        .collect()
}

fn commands(hooks: &Value) -> Vec<String> {
    hooks
        .as_object()
        .unwrap()
        .values()
        .map(|g| g[0]["hooks"][0]["command"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn hooks_are_the_ones_rewind_install_writes_with_plugin() {
    let cases = [
        (
            "claude-code",
            ".claude/settings.json",
            plugin().join("hooks/hooks.json"),
            "sh \"${CLAUDE_PLUGIN_ROOT}/scripts/rewind.sh\" hook --agent claude-code --plugin",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            extension().join("hooks/hooks.json"),
            "sh \"${extensionPath}${/}scripts${/}rewind.sh\" hook --agent gemini --plugin",
        ),
    ];
    for (agent, settings, file, command) in cases {
        let ours = json_file(&file)["hooks"].clone();
        let install = installed_hooks(agent, settings);
        // The same events, in the same order, with the same timeout (and
        // Gemini's names).
        assert_eq!(
            entries_without_commands(&ours),
            entries_without_commands(&install),
            "{agent}"
        );
        assert!(
            commands(&ours).iter().all(|c| c == command),
            "{agent}: {ours}"
        );
        assert!(
            commands(&install)
                .iter()
                .all(|c| c.ends_with(&format!(" hook --agent {agent}"))),
            "{agent}"
        );
    }
}

#[test]
fn manifests_agree() {
    let version = env!("CARGO_PKG_VERSION");
    let market = json_file(&repo().join(".claude-plugin/marketplace.json"));
    let entry = &market["plugins"][0];
    assert_eq!(entry["name"], "rewind");
    assert_eq!(entry["version"], version);
    let source = repo().join(entry["source"].as_str().unwrap());
    assert_eq!(
        source.canonicalize().unwrap(),
        plugin().canonicalize().unwrap()
    );
    let manifest = json_file(&plugin().join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "rewind");
    assert_eq!(manifest["version"], version);
    assert_eq!(
        json_file(&plugin().join(".mcp.json")),
        json!({"mcpServers": {"rewind": {
            "command": "sh",
            "args": ["${CLAUDE_PLUGIN_ROOT}/scripts/rewind.sh", "mcp"]
        }}})
    );
    let ext = json_file(&extension().join("gemini-extension.json"));
    assert_eq!(ext["name"], "rewind");
    assert_eq!(ext["version"], version);
    assert_eq!(
        ext["mcpServers"],
        json!({"rewind": {
            "command": "sh",
            "args": ["${extensionPath}${/}scripts${/}rewind.sh", "mcp"]
        }})
    );
    assert!(extension()
        .join(ext["contextFileName"].as_str().unwrap())
        .is_file());
    assert_eq!(
        std::fs::read(plugin().join("scripts/rewind.sh")).unwrap(),
        std::fs::read(extension().join("scripts/rewind.sh")).unwrap(),
        "the two copies of scripts/rewind.sh differ"
    );
}

/// Gemini's commands are Claude's, word for word (`{{args}}` for
/// `$ARGUMENTS`; appended where Claude appends the arguments itself).
#[test]
fn slash_commands_agree() {
    let mut names = Vec::new();
    for f in std::fs::read_dir(plugin().join("commands"))
        .unwrap()
        .flatten()
    {
        let md = std::fs::read_to_string(f.path()).unwrap();
        let name = f.path().file_stem().unwrap().to_str().unwrap().to_string();
        let mut parts = md.splitn(3, "---\n");
        assert_eq!(parts.next(), Some(""), "{name}: front matter first");
        let front = parts.next().unwrap();
        let body = parts.next().unwrap();
        let description = front
            .lines()
            .find_map(|l| l.strip_prefix("description: "))
            .unwrap();
        let mut want = body
            .replace("$ARGUMENTS", "{{args}}")
            .trim_end()
            .to_string();
        if !body.contains("$ARGUMENTS") {
            want.push_str("\n\n{{args}}");
        }
        let toml_path = extension().join(format!("commands/rewind/{name}.toml"));
        let doc: toml_edit::DocumentMut = std::fs::read_to_string(&toml_path)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(doc["description"].as_str(), Some(description), "{name}");
        assert_eq!(
            doc["prompt"].as_str().map(str::trim_end),
            Some(want.as_str()),
            "{name}"
        );
        names.push(name);
    }
    names.sort();
    assert_eq!(names, ["diff", "restore", "revert", "turns", "undo"]);
    assert_eq!(
        std::fs::read_dir(extension().join("commands/rewind"))
            .unwrap()
            .count(),
        names.len()
    );
}

/// Run scripts/rewind.sh with `args`, the payload on stdin, and PATH.
fn script(
    args: &[&str],
    path: &str,
    rewind_bin: Option<&str>,
    stdin: &str,
) -> (i32, String, String) {
    let mut cmd = Command::new("sh");
    cmd.arg(plugin().join("scripts/rewind.sh"))
        .args(args)
        .env("PATH", path)
        .env_remove("REWIND_BIN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(b) = rewind_bin {
        cmd.env("REWIND_BIN", b);
    }
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(stdin.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rewind_sh_finds_the_binary_or_says_so() {
    let bin_dir = Path::new(common::bin())
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let system = "/usr/bin:/bin";
    // On PATH.
    let (code, out, _) = script(&["--version"], &format!("{bin_dir}:{system}"), None, "");
    assert_eq!(code, 0);
    assert!(out.starts_with("rewind "), "{out}");
    // REWIND_BIN wins.
    let (code, out, _) = script(&["--version"], system, Some(common::bin()), "");
    assert_eq!(code, 0);
    assert!(out.starts_with("rewind "), "{out}");
    // Nowhere: a hook still exits 0, and tells the person once, at the
    // session's start; the MCP server fails.
    if Command::new("sh")
        .args(["-c", "command -v rewind"])
        .env("PATH", system)
        .output()
        .unwrap()
        .status
        .success()
    {
        common::skip_or_fail("a rewind binary is installed in /usr/bin or /bin");
        return;
    }
    let start = r#"{"hook_event_name":"SessionStart","session_id":"s","cwd":"/"}"#;
    let (code, out, err) = script(
        &["hook", "--agent", "claude-code", "--plugin"],
        system,
        None,
        start,
    );
    assert_eq!(code, 0, "{err}");
    let msg: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(
        msg["systemMessage"]
            .as_str()
            .unwrap()
            .contains("not checkpointed"),
        "{out}"
    );
    let tool = r#"{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/"}"#;
    let (code, out, _) = script(
        &["hook", "--agent", "claude-code", "--plugin"],
        system,
        None,
        tool,
    );
    assert_eq!((code, out.as_str()), (0, ""));
    let (code, _, err) = script(&["mcp"], system, None, "");
    assert_eq!(code, 127);
    assert!(err.contains("rewind-sidecar"), "{err}");
}

/// `rewind hook --plugin`, the real binary: it records a prompt when the
/// project's settings do not run rewind at that event, and stands down
/// when they do.
#[test]
fn hook_plugin_stands_down_for_events_the_settings_record() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let hook = |event: &str, session: &str| {
        let payload = json!({
            "hook_event_name": event, "session_id": session,
            "cwd": root, "prompt": "hello",
        });
        let mut child = Command::new(common::bin())
            .args(["hook", "--agent", "claude-code", "--plugin"])
            .env("REWIND_HOME", home.path())
            .env("HOME", home.path())
            .env("REWIND_SERVER", "0")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CLAUDE_PROJECT_DIR")
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut input = child.stdin.take().unwrap();
            input.write_all(payload.to_string().as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty());
    };
    let sessions = || -> usize {
        let Ok(projects) = std::fs::read_dir(home.path().join("projects")) else {
            return 0;
        };
        projects
            .flatten()
            .map(|p| std::fs::read_dir(p.path().join("sessions")).map_or(0, |d| d.count()))
            .sum()
    };
    // `rewind install claude-code --project`: the settings record prompts.
    let out = Command::new(common::bin())
        .args(["install", "claude-code", "--project"])
        .arg(&root)
        .env("REWIND_HOME", home.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    hook("UserPromptSubmit", "a");
    assert_eq!(
        sessions(),
        0,
        "the plugin's hook recorded what the settings record"
    );
    // After `rewind uninstall` nothing else records the prompt: the
    // plugin's hook does.
    let out = Command::new(common::bin())
        .args(["uninstall", "claude-code", "--project"])
        .arg(&root)
        .env("REWIND_HOME", home.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    hook("UserPromptSubmit", "b");
    assert_eq!(
        sessions(),
        1,
        "the plugin's hook stood down with no settings hook"
    );
}
