//! `rewind restore --conversation` with the real agents (versions pinned in
//! tests/agents/package-lock.json), offline against the scripted model
//! server of tests/agents, hooks written by `rewind install --project` and
//! the hook server on: three turns with distinct prompts; the start of turn
//! 2 restored with its conversation; the original transcript byte for byte
//! as it was; the files as at the start of turn 2; the printed command run
//! headless with a new prompt, whose model requests hold turn 1 and nothing
//! of turns 2 and 3; the resumed turn checkpointed into the same rewind
//! session, a branch beside turn 2; and with the transcript gone, the files
//! restored, the conversation refused in one line with its own status, and
//! nothing written where the transcript was. Claude Code's fork is also
//! resumed in its terminal UI (a pseudo-terminal, tests/agents/tui.py): the
//! `-p` flags that fork a session are ignored there, which is why the fork
//! is a truncated copy of the transcript.
//!
//! Needs `npm ci` in tests/agents (as agents_e2e.rs; REWIND_AGENTS_E2E=1
//! turns a missing install into a failure).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::agents_e2e::{
    agents_dir, agents_installed, passed, path_with_rewind, rewind, run_agent, tree, turn_sessions,
    StopServer,
};
use crate::common;

/// The harness, with rewind's hooks (`rewind install --project`).
fn drive(agent: &str, root: &Path, out: &Path, home: &Path, extra: &[&str]) -> Value {
    let result = run_agent(agent, root, out, home)
        .args(extra)
        .env("REWIND_SERVER", "1")
        .output()
        .unwrap();
    passed(&format!("{agent} {extra:?}"), &result)
}

fn entries(session: &Path) -> Vec<Value> {
    std::fs::read_to_string(session)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The checkpoint of `kind` of turn `n` (the first such on file order).
fn checkpoint(entries: &[Value], kind: &str, n: u64) -> Value {
    entries
        .iter()
        .find(|e| e["data"]["kind"] == kind && e["data"]["turnIndex"] == n)
        .unwrap_or_else(|| panic!("no {kind} checkpoint of turn {n}"))
        .clone()
}

/// `rewind` in the project: (status, stdout, stderr).
fn rewind_status(home: &Path, root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::bin())
        .args(args)
        .env("REWIND_HOME", home)
        .current_dir(root)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Files of a directory (names only).
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// What the model was asked after the restore: every request body of the
/// resumed turn, from the model server's dump directory.
fn request_bodies(dir: &Path) -> Vec<String> {
    names_in(dir)
        .iter()
        .map(|n| {
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(n)).unwrap()).unwrap();
            v["body"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

/// How the printed command is run after the restore.
#[derive(Clone, Copy, PartialEq)]
enum Resume {
    /// Headless (`-p`, `exec`), through the harness.
    Headless,
    /// In the agent's terminal UI, a prompt typed into it (Claude Code).
    Terminal,
}

/// The scripted model server of tests/agents on its own (the harness
/// starts its own for a headless run); stopped when dropped.
struct ModelServer {
    child: std::process::Child,
    url: String,
}

impl ModelServer {
    fn start(turns: usize, project: &Path, dump: &Path) -> ModelServer {
        use std::io::BufRead;
        let script = dump.with_extension("script.json");
        let made = Command::new("node")
            .args(["--input-type=module", "-e"])
            .arg(format!(
                "import {{ defaultScenario }} from {:?}; \
                 process.stdout.write(JSON.stringify(defaultScenario({turns})));",
                format!("file://{}", agents_dir().join("run-agent.mjs").display())
            ))
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        std::fs::write(&script, &made.stdout).unwrap();
        let mut child = Command::new("node")
            .arg(agents_dir().join("model-server.mjs"))
            .arg("--script")
            .arg(&script)
            .arg("--project")
            .arg(project)
            .args(["--port", "0", "--dump-dir"])
            .arg(dump)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = serde_json::from_str::<Value>(&line).unwrap()["url"]
            .as_str()
            .unwrap()
            .to_string();
        ModelServer { child, url }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `command` (`claude --resume ID`) in Claude Code's terminal UI, in the
/// config and home the harness gave the recorded turns (`run_dir`), against
/// `model`: the prompt of turn `turn` typed in, until its answer shows.
fn resume_in_terminal(
    command: &[String],
    root: &Path,
    run_dir: &Path,
    home: &Path,
    model: &ModelServer,
    turn: usize,
) {
    // What a person's first run settles in dialogs: onboarding done, the
    // key from the environment approved, the folder trusted.
    let config = run_dir.join("claude-config");
    let file = config.join(".claude.json");
    let mut state: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap_or_else(|_| "{}".into()))
            .unwrap();
    state["hasCompletedOnboarding"] = true.into();
    state["customApiKeyResponses"] = serde_json::json!({"approved": ["dummy"], "rejected": []});
    state["projects"][root.to_str().unwrap()] =
        serde_json::json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true});
    std::fs::write(&file, state.to_string()).unwrap();
    let claude = agents_dir().join("node_modules/.bin/claude");
    let mut tui = Command::new("python3");
    tui.arg(agents_dir().join("tui.py"))
        .arg("--cwd")
        .arg(root)
        .arg("--prompt")
        .arg(format!(
            "[[rewind-turn:{turn}]] Write extra-{turn}.txt and edit it."
        ))
        .arg("--until")
        .arg(format!("Turn {turn} done."))
        .args(["--timeout", "150", "--"])
        .arg(&claude)
        .args(&command[1..])
        .args(["--allowedTools", "Bash,Write,Edit,Read"]);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("ANTHROPIC_") || k.starts_with("CLAUDE") {
            tui.env_remove(k);
        }
    }
    let out = tui
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("HOME", run_dir.join("home"))
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("IS_SANDBOX", "1")
        .env("TERM", "xterm-256color")
        .env("REWIND_HOME", home)
        .env("REWIND_SERVER", "1")
        .env("REWIND_SERVER_IDLE_SECS", "300")
        .env("PATH", path_with_rewind())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "claude's terminal UI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn conversation(agent: &str, rewind_agent: &str, resume: Resume) {
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    std::fs::write(root.join("keep.txt"), "the agent never touches this\n").unwrap();
    let turns_dir = out.path().join("turns");
    let run_dir = out.path().join("run");
    rewind(
        home.path(),
        &root,
        &[
            "install",
            rewind_agent,
            "--project",
            root.to_str().unwrap(),
            "--bin",
            common::bin(),
        ],
    );
    let _stop = StopServer {
        home: home.path(),
        project: &root,
    };
    drive(
        agent,
        &root,
        &run_dir,
        home.path(),
        &["--turns", "3", "--save-turns", turns_dir.to_str().unwrap()],
    );
    let session = {
        let s = turn_sessions(home.path());
        assert_eq!(s.len(), 1, "{s:?}");
        s[0].clone()
    };
    let before = entries(&session);
    let turn2 = checkpoint(&before, "message", 2);
    let turn2_id = turn2["id"].as_str().unwrap().to_string();
    let turn3_end = checkpoint(&before, "turn", 3)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let conv = &checkpoint(&before, "turn", 3)["data"]["conversation"];
    assert_eq!(conv["agent"], rewind_agent, "{conv}");
    let transcript = PathBuf::from(conv["transcriptPath"].as_str().unwrap());
    let original = std::fs::read(&transcript).unwrap();
    assert!(
        turn2["data"]["conversation"]["position"].is_string(),
        "{agent}: turn 2's prompt has a position: {turn2}"
    );

    // The start of turn 2, files and conversation.
    let (code, stdout, stderr) = rewind_status(
        home.path(),
        &root,
        &["restore", &turn2_id, "--conversation", "--yes", "--json"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    let c = &answer["conversation"];
    assert_eq!(c["agent"], rewind_agent, "{answer}");
    let new_id = c["sessionId"].as_str().unwrap().to_string();
    assert_ne!(new_id, conv["sessionId"].as_str().unwrap());
    let command: Vec<String> = c["resumeCommand"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(answer["restore"]["restored"].is_array(), "{answer}");
    assert_eq!(
        std::fs::read(&transcript).unwrap(),
        original,
        "{agent}: the original transcript changed"
    );
    let turn1 = tree(&turns_dir.join("turn-1"));
    assert!(
        tree(&root) == turn1,
        "{agent}: the files are not as at the start of turn 2"
    );

    // The printed command with a new prompt: headless, or typed into the
    // agent's terminal UI.
    let bodies = match resume {
        Resume::Headless => {
            drive(
                agent,
                &root,
                &run_dir,
                home.path(),
                &[
                    "--turns",
                    "4",
                    "--dump",
                    "--continue",
                    &serde_json::to_string(&command).unwrap(),
                ],
            );
            request_bodies(&run_dir.join("requests"))
        }
        Resume::Terminal => {
            let dump = out.path().join("terminal-requests");
            let model = ModelServer::start(4, &root, &dump);
            resume_in_terminal(&command, &root, &run_dir, home.path(), &model, 4);
            drop(model);
            request_bodies(&dump)
        }
    };
    let asked: Vec<&String> = bodies
        .iter()
        .filter(|b| b.contains("[[rewind-turn:4]]"))
        .collect();
    assert!(!asked.is_empty(), "{agent}: no request of the resumed turn");
    for body in &asked {
        assert!(
            body.contains("[[rewind-turn:1]]"),
            "{agent}: turn 1 missing"
        );
        assert!(
            body.contains("Turn 1 done"),
            "{agent}: turn 1's answer missing"
        );
        for later in [
            "[[rewind-turn:2]]",
            "[[rewind-turn:3]]",
            "Turn 2 done",
            "Turn 3 done",
        ] {
            assert!(!body.contains(later), "{agent}: the model was sent {later}");
        }
    }
    assert_eq!(std::fs::read(&transcript).unwrap(), original);

    // The resumed turn: the same rewind session, a branch beside turn 2.
    let sessions = turn_sessions(home.path());
    assert_eq!(
        sessions,
        vec![session.clone()],
        "{agent}: another rewind session"
    );
    let all_sessions = names_in(session.parent().unwrap())
        .into_iter()
        .filter(|n| n.ends_with(".jsonl"))
        .count();
    assert_eq!(all_sessions, 1, "{agent}: a stray rewind session");
    let after = entries(&session);
    let resumed = after
        .iter()
        .find(|e| {
            e["data"]["kind"] == "message"
                && e["data"]["label"]
                    .as_str()
                    .is_some_and(|l| l.contains("[[rewind-turn:4]]"))
        })
        .unwrap_or_else(|| panic!("{agent}: the resumed turn was not recorded"));
    assert_eq!(resumed["data"]["turnIndex"], 2, "{agent}: {resumed}");
    assert_eq!(resumed["parentId"], turn2["parentId"], "{agent}: {resumed}");
    // Gemini CLI gives a session it imports an id of its own.
    let running = resumed["data"]["conversation"]["sessionId"].clone();
    if agent == "gemini" {
        assert_ne!(running, conv["sessionId"], "{agent}: {resumed}");
    } else {
        assert_eq!(running, new_id.as_str());
    }
    assert!(
        after.iter().any(|e| e["data"]["kind"] == "turn"
            && e["data"]["turnIndex"] == 2
            && e["data"]["conversation"]["sessionId"] == running),
        "{agent}: the resumed turn's end"
    );
    let all = rewind(home.path(), &root, &["log", "--all"]);
    assert!(
        all.contains("[[rewind-turn:2]]") && all.contains("[[rewind-turn:4]]"),
        "{all}"
    );
    let path = rewind(home.path(), &root, &["log"]);
    assert!(
        path.contains("[[rewind-turn:4]]") && !path.contains("[[rewind-turn:3]]"),
        "{path}"
    );
    // The original's entry ids still name its checkpoints.
    rewind(home.path(), &root, &["diff", &turn3_end, "--name-only"]);

    // The transcript gone. Claude Code and Codex keep their sessions beside
    // it: the files are restored, the conversation is refused in one line
    // with its own status, and nothing is written where it was. Gemini CLI
    // imports a copy from rewind's store: the conversation is restored all
    // the same (its retention deletes transcripts by itself).
    let dir = transcript.parent().unwrap().to_path_buf();
    std::fs::remove_file(&transcript).unwrap();
    let listed = names_in(&dir);
    let (code, stdout, stderr) = rewind_status(
        home.path(),
        &root,
        &["restore", &turn2_id, "--conversation", "--yes"],
    );
    if agent == "gemini" {
        assert_eq!(code, 0, "{agent}: {stdout}{stderr}");
        assert!(stdout.contains("gemini --session-file"), "{stdout}");
    } else {
        assert_eq!(code, 3, "{agent}: {stdout}{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("gone"), "{stderr}");
    }
    assert!(tree(&root) == turn1, "{agent}: files not restored");
    assert_eq!(
        names_in(&dir),
        listed,
        "{agent}: something was written there"
    );
}

#[test]
fn claude_code() {
    if agents_installed() {
        conversation("claude", "claude-code", Resume::Headless);
    }
}

/// The fork opens in Claude Code's terminal UI too (issue 37: its own
/// `--resume-session-at … --fork-session` works only with `-p`).
#[test]
fn claude_code_in_its_terminal_ui() {
    if agents_installed() {
        conversation("claude", "claude-code", Resume::Terminal);
    }
}

#[test]
fn codex() {
    if agents_installed() {
        conversation("codex", "codex", Resume::Headless);
    }
}

#[test]
fn gemini_cli() {
    if agents_installed() {
        conversation("gemini", "gemini", Resume::Headless);
    }
}
