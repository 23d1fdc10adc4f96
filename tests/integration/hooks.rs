//! `rewind hook`, run as an agent runs it: a new process per event with the
//! payload on stdin (the payload shapes are those recorded from the real
//! agents in tests/agents/samples; tests/integration/agents_e2e.rs runs the agents
//! themselves). Then the person at the terminal looks and restores with the
//! CLI.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common;

struct Project {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    /// Hooks hand their events to the project's hook server (else every
    /// hook records its own, `REWIND_SERVER=0`).
    server: bool,
}

/// A test that started a hook server stops it, however it ends.
impl Drop for Project {
    fn drop(&mut self) {
        if self.server {
            let _ = Command::new(common::bin())
                .args(["server", "stop"])
                .env("REWIND_HOME", self.home.path())
                .current_dir(self.dir.path())
                .output();
        }
    }
}

impl Project {
    fn new() -> Project {
        Project {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            server: false,
        }
    }

    fn with_server() -> Project {
        let mut p = Project::new();
        p.server = true;
        p
    }

    /// A project whose `REWIND_HOME` path is `len` bytes long.
    fn with_server_and_home_of(len: usize) -> Project {
        let tmp = std::env::temp_dir();
        // `<tmp>/<prefix><6 random characters>`.
        let prefix = "h".repeat(len - tmp.as_os_str().len() - 1 - 6);
        let home = tempfile::Builder::new().prefix(&prefix).tempdir().unwrap();
        assert_eq!(home.path().as_os_str().len(), len);
        Project {
            dir: tempfile::tempdir().unwrap(),
            home,
            server: true,
        }
    }
    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }
    fn write(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join(rel)).ok()
    }

    /// One hook event; returns (exit code, stdout).
    fn hook(&self, agent: &str, payload: &Value) -> (i32, String) {
        self.hook_raw(agent, payload.to_string().as_bytes())
    }

    fn hook_raw(&self, agent: &str, payload: &[u8]) -> (i32, String) {
        self.hook_env(agent, payload, &[])
    }

    fn hook_env(&self, agent: &str, payload: &[u8], env: &[(&str, &Path)]) -> (i32, String) {
        let mut child = Command::new(common::bin())
            .args(["hook", "--agent", agent])
            .env("REWIND_HOME", self.home.path())
            .env("REWIND_SERVER", if self.server { "1" } else { "0" })
            // A server this test forgets stops by itself.
            .env("REWIND_SERVER_IDLE_SECS", "120")
            // Set by the agents themselves; a test run inside one must not
            // inherit them.
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("GEMINI_PROJECT_DIR")
            .envs(env.iter().copied())
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(payload).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// A terminal command in the project; returns stdout (asserting success).
    fn cli(&self, args: &[&str]) -> String {
        let out = Command::new(common::bin())
            .args(args)
            .env("REWIND_HOME", self.home.path())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "rewind {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn payload(&self, session: &str, event: &str, extra: Value) -> Value {
        let mut p = json!({
            "session_id": session,
            "transcript_path": "/dev/null",
            "cwd": self.dir.path().to_str().unwrap(),
            "hook_event_name": event,
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    }

    fn store_sessions(&self) -> Vec<PathBuf> {
        let projects = self.home.path().join("projects");
        let Ok(stores) = std::fs::read_dir(&projects) else {
            return Vec::new();
        };
        stores
            .flatten()
            .flat_map(|s| {
                std::fs::read_dir(s.path().join("sessions"))
                    .into_iter()
                    .flatten()
            })
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect()
    }
}

fn entries(session: &Path) -> Vec<Value> {
    std::fs::read_to_string(session)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (kind, turn, label or tool) of each step-snapshot.
fn snapshots(session: &Path) -> Vec<(String, u64, String)> {
    entries(session)
        .iter()
        .filter(|e| e["customType"] == "step-snapshot")
        .map(|e| {
            let d = &e["data"];
            let what = d["label"]
                .as_str()
                .or(d["tool"]["name"].as_str())
                .unwrap_or("")
                .to_string();
            (
                d["kind"].as_str().unwrap().to_string(),
                d["turnIndex"].as_u64().unwrap(),
                what,
            )
        })
        .collect()
}

#[test]
fn a_claude_code_session_is_recorded_turn_by_turn_and_each_turn_restores() {
    let p = Project::new();
    p.write(".gitignore", ".env\n");
    p.write(".env", "KEY=1");
    p.write("keep.txt", "never touched by the agent");
    p.write("old/x.txt", "x");
    let root = p.root();
    let abs = |rel: &str| root.join(rel).to_str().unwrap().to_string();
    let sid = "48e1dd1b-5365-4635-b55e-c0a1bcfacd43";
    let ev = |event: &str, extra: Value| p.payload(sid, event, extra);
    let ok = |v: Value| {
        assert_eq!(p.hook("claude-code", &v), (0, String::new()), "{v}");
    };
    let tool = |event: &str, name: &str, input: Value| {
        ev(event, json!({"tool_name": name, "tool_input": input}))
    };

    ok(ev("SessionStart", json!({"source": "startup"})));
    // Turn 1: a Write (fast path), a shell that deletes a directory.
    ok(ev(
        "UserPromptSubmit",
        json!({"prompt": "Create a.txt\nand clean up"}),
    ));
    let write = json!({"file_path": abs("a.txt"), "content": "alpha\n"});
    ok(tool("PreToolUse", "Write", write.clone()));
    p.write("a.txt", "alpha\n");
    ok(tool("PostToolUse", "Write", write));
    ok(tool(
        "PreToolUse",
        "Read",
        json!({"file_path": abs("a.txt")}),
    ));
    ok(tool("PreToolUse", "Bash", json!({"command": "rm -r old"})));
    std::fs::remove_dir_all(p.dir.path().join("old")).unwrap();
    ok(tool("PostToolUse", "Bash", json!({"command": "rm -r old"})));
    ok(ev("Stop", json!({"stop_hook_active": false})));
    ok(ev("SessionEnd", json!({"reason": "other"})));
    let after_turn_1 = (p.read("a.txt"), p.read("old/x.txt"));

    // Turn 2, a resumed run (-p --resume: SessionStart again, same id):
    // an Edit and a shell mv.
    ok(ev("SessionStart", json!({"source": "resume"})));
    ok(ev("UserPromptSubmit", json!({"prompt": "Edit and move"})));
    let edit = json!({"file_path": abs("a.txt"), "old_string": "alpha", "new_string": "beta"});
    ok(tool("PreToolUse", "Edit", edit.clone()));
    p.write("a.txt", "beta\n");
    ok(tool("PostToolUse", "Edit", edit));
    ok(tool(
        "PreToolUse",
        "Bash",
        json!({"command": "mv a.txt b.txt"}),
    ));
    std::fs::rename(p.dir.path().join("a.txt"), p.dir.path().join("b.txt")).unwrap();
    ok(tool(
        "PostToolUse",
        "Bash",
        json!({"command": "mv a.txt b.txt"}),
    ));
    ok(ev("Stop", json!({})));

    // One rewind session for the agent session, holding every step.
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let snaps = snapshots(&sessions[0]);
    let want: Vec<(String, u64, String)> = [
        ("baseline", 0, ""),
        ("message", 1, "Create a.txt"),
        ("tool", 1, "Write"),
        ("tool", 1, "Bash"),
        ("turn", 1, ""),
        ("message", 2, "Edit and move"),
        ("tool", 2, "Edit"),
        ("tool", 2, "Bash"),
        ("turn", 2, ""),
    ]
    .iter()
    .map(|(k, t, w)| (k.to_string(), *t, w.to_string()))
    .collect();
    assert_eq!(snaps, want);
    // Nothing was recorded as changed "outside" the agent.
    assert!(!snaps.iter().any(|s| s.0 == "outside"));

    // The person at the terminal: the log names each turn's prompt and
    // numbers its steps.
    let log = p.cli(&["log"]);
    assert!(log.contains("[Create a.txt]"), "{log}");
    assert!(log.contains("step 1: Write"), "{log}");
    assert!(log.contains("step 2: Bash"), "{log}");
    // `undo` right after a turn puts back the state before it...
    let out = p.cli(&["undo", "--yes"]);
    assert!(out.contains("before turn 2"), "{out}");
    assert_eq!((p.read("a.txt"), p.read("old/x.txt")), after_turn_1);
    assert_eq!(p.read("b.txt"), None);
    // ... and `undo` again takes that back.
    p.cli(&["undo", "--yes"]);
    assert_eq!(p.read("b.txt").as_deref(), Some("beta\n"));
    // Back to just before one tool call: the shell of turn 1 (step 2).
    let out = p.cli(&["restore", "1", "--before-step", "2", "--yes"]);
    assert!(out.contains("before step 2 of turn 1"), "{out}");
    assert_eq!(p.read("a.txt").as_deref(), Some("alpha\n"));
    assert_eq!(p.read("old/x.txt").as_deref(), Some("x"));
    p.cli(&["undo", "--yes"]);
    assert_eq!(p.read("old/x.txt"), None);
    assert_eq!(p.read("b.txt").as_deref(), Some("beta\n"));

    // Back to the end of turn 1.
    let turn_1_end = entries(&sessions[0])
        .iter()
        .rfind(|e| e["customType"] == "step-snapshot" && e["data"]["turnIndex"] == 1)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    p.cli(&["restore", &turn_1_end, "--yes"]);
    assert_eq!((p.read("a.txt"), p.read("old/x.txt")), after_turn_1);
    assert_eq!(p.read("b.txt"), None);
    assert_eq!(
        p.read("keep.txt").as_deref(),
        Some("never touched by the agent")
    );
    assert_eq!(p.read(".env").as_deref(), Some("KEY=1"));
    // And the restore undone.
    p.cli(&["undo", "--yes"]);
    assert_eq!(p.read("b.txt").as_deref(), Some("beta\n"));
    assert_eq!(p.read("a.txt"), None);
    // Back to the baseline: the deleted directory returns.
    let baseline = entries(&sessions[0])[1]["id"].as_str().unwrap().to_string();
    p.cli(&["restore", &baseline, "--yes"]);
    assert_eq!(p.read("old/x.txt").as_deref(), Some("x"));
    assert_eq!(p.read("b.txt"), None);
    let status = p.cli(&["status"]);
    assert!(status.contains("no failures recorded"), "{status}");
}

#[test]
fn codex_patches_and_gemini_relative_paths_take_the_fast_path() {
    let p = Project::new();
    p.write("a.txt", "a");
    let ok = |agent: &str, v: Value| assert_eq!(p.hook(agent, &v), (0, String::new()), "{v}");
    ok("codex", p.payload("c1", "SessionStart", json!({})));
    ok(
        "codex",
        p.payload("c1", "UserPromptSubmit", json!({"prompt": "patch"})),
    );
    p.write("new.txt", "n");
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+n\n*** End Patch";
    ok(
        "codex",
        p.payload(
            "c1",
            "PostToolUse",
            json!({"tool_name": "apply_patch", "tool_input": {"command": patch}}),
        ),
    );
    ok("gemini", p.payload("g1", "SessionStart", json!({})));
    ok(
        "gemini",
        p.payload("g1", "BeforeAgent", json!({"prompt": "edit"})),
    );
    p.write("a.txt", "edited");
    ok(
        "gemini",
        p.payload(
            "g1",
            "AfterTool",
            json!({"tool_name": "replace", "tool_input": {"file_path": "a.txt"}}),
        ),
    );
    ok("gemini", p.payload("g1", "AfterAgent", json!({})));
    // Two agent sessions, two rewind sessions; each step recorded what
    // its tool changed (the fast path scans only the tool's paths).
    let mut sessions = p.store_sessions();
    sessions.sort_by_key(|s| std::fs::metadata(s).unwrap().modified().unwrap());
    assert_eq!(sessions.len(), 2);
    let codex = entries(&sessions[0]);
    let step = codex
        .iter()
        .rfind(|e| e["customType"] == "step-snapshot")
        .unwrap();
    assert_eq!(step["data"]["diff"]["added"], json!(["new.txt"]), "{step}");
    assert_eq!(step["data"]["stats"]["filesScanned"], 1, "{step}");
    let gemini = entries(&sessions[1]);
    let step = gemini
        .iter()
        .rfind(|e| e["data"]["tool"]["name"] == "replace")
        .unwrap();
    assert_eq!(step["data"]["diff"]["modified"], json!(["a.txt"]), "{step}");
}

#[test]
fn a_hook_never_breaks_the_agent_and_failures_show_in_status() {
    let p = Project::new();
    p.write("a.txt", "a");
    // Malformed payloads, an unknown agent, an empty stdin: exit 0, no output.
    for bad in [
        &b"{not json"[..],
        b"",
        b"[]",
        b"{\"hook_event_name\": \"Stop\"}",
    ] {
        assert_eq!(p.hook_raw("claude-code", bad), (0, String::new()));
    }
    assert_eq!(p.hook_raw("no-such-agent", b"{}"), (0, String::new()));
    // A project that does not exist.
    let gone = json!({"session_id": "s", "cwd": "/no/such/dir", "hook_event_name": "Stop"});
    assert_eq!(p.hook("codex", &gone), (0, String::new()));
    // A session the store cannot write: a directory in its file's place
    // (fails for root too).
    let ok_start = p.payload("s2", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &ok_start), (0, String::new()));
    let session = p.store_sessions()[0].clone();
    let saved = std::fs::read(&session).unwrap();
    std::fs::remove_file(&session).unwrap();
    std::fs::create_dir(&session).unwrap();
    let stop = p.payload("s2", "Stop", json!({}));
    assert_eq!(p.hook("codex", &stop), (0, String::new()));
    std::fs::remove_dir(&session).unwrap();
    std::fs::write(&session, saved).unwrap();

    let status = p.cli(&["status"]);
    assert!(status.contains("recent failure(s)"), "{status}");
    assert!(status.contains("not JSON"), "{status}");
    assert!(status.contains("has no session_id"), "{status}");
    assert!(status.contains("codex Stop"), "{status}");
    assert!(
        status.contains("rewind hook --agent no-such-agent: no such agent (this rewind knows claude-code, codex"),
        "{status}"
    );
    // After the failures the next event records normally.
    assert_eq!(p.hook("codex", &stop), (0, String::new()));
    let snaps = snapshots(&p.store_sessions()[0]);
    assert_eq!(snaps.last().unwrap().0, "turn", "{snaps:?}");
}

#[test]
fn parallel_hooks_of_one_session_all_record() {
    parallel_hooks_all_record(Project::new());
}

#[test]
fn parallel_hooks_of_one_session_all_record_through_the_server() {
    parallel_hooks_all_record(Project::with_server());
}

fn parallel_hooks_all_record(p: Project) {
    p.write("seed.txt", "s");
    let start = p.payload("par", "SessionStart", json!({}));
    assert_eq!(p.hook("claude-code", &start), (0, String::new()));
    // The prompt, as an agent sends it before any tool.
    let prompt = p.payload("par", "UserPromptSubmit", json!({"prompt": "many files"}));
    assert_eq!(p.hook("claude-code", &prompt), (0, String::new()));
    let root = p.root();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let name = format!("f{i}.txt");
            p.write(&name, &format!("{i}"));
            let payload = p.payload(
                "par",
                "PostToolUse",
                json!({"tool_name": "Write", "tool_input": {"file_path": root.join(&name)}}),
            );
            let mut child = Command::new(common::bin())
                .args(["hook", "--agent", "claude-code"])
                .env("REWIND_HOME", p.home.path())
                .env("REWIND_SERVER", if p.server { "1" } else { "0" })
                .env("REWIND_SERVER_IDLE_SECS", "120")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(payload.to_string().as_bytes())
                .unwrap();
            child
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success() && out.stdout.is_empty());
    }
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1);
    let added: Vec<String> = entries(&sessions[0])
        .iter()
        .filter(|e| e["data"]["kind"] == "tool")
        .flat_map(|e| {
            e["data"]["diff"]["added"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(added.len(), 8, "{added:?}");
    let status = p.cli(&["status"]);
    assert!(status.contains("no failures recorded"), "{status}");
}

#[test]
fn a_shell_that_changes_directory_stays_in_the_agents_project() {
    let p = Project::new();
    p.write("sub/keep.txt", "k");
    let root = p.root();
    let start = p.payload("cd", "SessionStart", json!({}));
    let env = [("CLAUDE_PROJECT_DIR", root.as_path())];
    assert_eq!(
        p.hook_env("claude-code", start.to_string().as_bytes(), &env),
        (0, String::new())
    );
    // After `cd sub`, Claude Code's payloads carry the new cwd.
    p.write("sub/made.txt", "m");
    let mut after = p.payload(
        "cd",
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "echo m > made.txt"}}),
    );
    after["cwd"] = json!(root.join("sub"));
    assert_eq!(
        p.hook_env("claude-code", after.to_string().as_bytes(), &env),
        (0, String::new())
    );
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1, "one project, one session: {sessions:?}");
    let last = entries(&sessions[0]).pop().unwrap();
    assert_eq!(
        last["data"]["diff"]["added"],
        json!(["sub/made.txt"]),
        "{last}"
    );
}

#[test]
fn a_failed_shell_command_is_recorded_as_its_own_step() {
    // Claude Code sends PostToolUseFailure, not PostToolUse, when a tool
    // fails; a shell may have deleted files before it exited non-zero.
    let p = Project::new();
    p.write("doomed.txt", "d");
    let ok = |v: Value| assert_eq!(p.hook("claude-code", &v), (0, String::new()), "{v}");
    ok(p.payload("f", "SessionStart", json!({})));
    ok(p.payload("f", "UserPromptSubmit", json!({"prompt": "clean"})));
    let bash = json!({"tool_name": "Bash", "tool_input": {"command": "rm doomed.txt; exit 3"}});
    ok(p.payload("f", "PreToolUse", bash.clone()));
    std::fs::remove_file(p.dir.path().join("doomed.txt")).unwrap();
    let mut failed = p.payload("f", "PostToolUseFailure", bash);
    failed["error"] = json!("Exit code 3");
    ok(failed);
    let sessions = p.store_sessions();
    let last = entries(&sessions[0]).pop().unwrap();
    assert_eq!(last["data"]["kind"], "tool", "{last}");
    assert_eq!(
        last["data"]["diff"]["deleted"],
        json!(["doomed.txt"]),
        "{last}"
    );
}

// ------------------------------------------------------------ the hook server

/// A field of `rewind server status` (the first word after its name).
fn status_field(status: &str, name: &str) -> Option<String> {
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?;
        Some(rest.split_whitespace().next()?.to_string())
    })
}

/// `rewind server status` once a server answers: a hook that started one
/// records its event itself when the server is not listening within half a
/// second, and a loaded machine may take longer (10 s at most).
fn status_once_up(p: &Project) -> String {
    let started = std::time::Instant::now();
    loop {
        let status = p.cli(&["server", "status"]);
        if status_field(&status, "pid").is_some() || started.elapsed().as_secs() >= 10 {
            return status;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The events of one Claude Code turn that edits, creates and deletes
/// files through a shell command and a Write, with the files changed as
/// the tools would change them.
fn a_turn(p: &Project) -> Vec<(String, u64, String)> {
    let root = p.root();
    let ev = |event: &str, extra: Value| {
        let (code, out) = p.hook("claude-code", &p.payload("s1", event, extra));
        assert_eq!((code, out.as_str()), (0, ""), "{event}");
    };
    ev("SessionStart", json!({}));
    ev("UserPromptSubmit", json!({"prompt": "tidy up"}));
    let bash = json!({"tool_name": "Bash", "tool_input": {"command": "sed -i s/1/2/ a.txt; rm c.txt; mkdir -p new; echo b > new/b.txt"}});
    ev("PreToolUse", bash.clone());
    p.write("a.txt", "a2\n");
    std::fs::remove_file(root.join("c.txt")).unwrap();
    p.write("new/b.txt", "b\n");
    ev("PostToolUse", bash);
    let write = json!({"tool_name": "Write", "tool_input": {"file_path": root.join("d.txt")}});
    ev("PreToolUse", write.clone());
    p.write("d.txt", "d\n");
    ev("PostToolUse", write);
    ev("Stop", json!({}));
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1);
    // (kind, turn, tree) of each checkpoint: trees are content addressed,
    // so two projects with the same files have the same ones.
    entries(&sessions[0])
        .iter()
        .filter(|e| e["customType"] == "step-snapshot")
        .map(|e| {
            (
                e["data"]["kind"].as_str().unwrap().to_string(),
                e["data"]["turnIndex"].as_u64().unwrap(),
                e["data"]["snapshotTreeHash"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn seed(p: &Project) {
    p.write("a.txt", "a1\n");
    p.write("c.txt", "c\n");
    p.write("src/lib.rs", "fn x() {}\n");
}

#[test]
fn the_server_records_what_hooks_record_alone() {
    let alone = Project::new();
    seed(&alone);
    let want = a_turn(&alone);
    let served = Project::with_server();
    seed(&served);
    // Started and listening before the first event, so every event of the
    // turn is the server's to count.
    served.cli(&["server", "start"]);
    status_once_up(&served);
    let got = a_turn(&served);
    assert_eq!(got, want);
    assert!(alone
        .cli(&["server", "status"])
        .contains("no hook server runs"));

    let status = served.cli(&["server", "status"]);
    assert_eq!(
        status_field(&status, "events").as_deref(),
        Some("7"),
        "{status}"
    );
    assert_eq!(
        status_field(&status, "sessions").as_deref(),
        Some("1"),
        "{status}"
    );
    assert!(status.contains("watching "), "{status}");
    // Only the first event of a fresh server scans everything.
    assert!(status.contains("full: first scan: 1"), "{status}");
    let pid = status_field(&status, "pid").unwrap();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    assert!(served.cli(&["server", "stop"]).contains("stopped"));
    assert!(served
        .cli(&["server", "status"])
        .contains("no hook server runs"));
    let gone = std::time::Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(gone.elapsed().as_secs() < 10, "the server did not exit");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_killed_server_loses_nothing_and_is_replaced() {
    let p = Project::with_server();
    seed(&p);
    let start = p.payload("k", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &start), (0, String::new()));
    let prompt = p.payload("k", "UserPromptSubmit", json!({"prompt": "go"}));
    assert_eq!(p.hook("codex", &prompt), (0, String::new()));
    let first = status_field(&p.cli(&["server", "status"]), "pid").unwrap();
    // SIGKILL between events: its socket stays behind, stale.
    let killed = Command::new("kill").args(["-9", &first]).status().unwrap();
    assert!(killed.success());
    while std::path::Path::new(&format!("/proc/{first}/status")).exists()
        && !std::fs::read_to_string(format!("/proc/{first}/status"))
            .unwrap_or_default()
            .contains("zombie")
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // A change made while no server ran is recorded by the next event.
    p.write("while-down.txt", "x");
    let shell = json!({"tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "touch while-down.txt"]}});
    let after = p.payload("k", "PostToolUse", shell);
    assert_eq!(p.hook("codex", &after), (0, String::new()));
    assert_eq!(last_tool_added(&p), vec!["while-down.txt".to_string()]);
    let status = status_once_up(&p);
    let second = status_field(&status, "pid").unwrap();
    assert_ne!(first, second, "{status}");
    assert!(p.cli(&["status"]).contains("no failures recorded"));
}

/// The store deleted under a running server (`rm -rf` of rewind's data)
/// takes its socket along: the server exits within seconds instead of
/// idling for half an hour, and the next event records into a new store
/// through a new server.
#[test]
fn a_server_whose_store_is_deleted_exits_and_the_next_event_starts_over() {
    let p = Project::with_server();
    seed(&p);
    let start = p.payload("d", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &start), (0, String::new()));
    let first = status_field(&status_once_up(&p), "pid").unwrap();
    std::fs::remove_dir_all(store_dir(&p)).unwrap();
    let gone = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_or(true, |s| s.contains("zombie"))
    };
    let deleted = std::time::Instant::now();
    while !gone(&first) {
        assert!(
            deleted.elapsed() < std::time::Duration::from_secs(30),
            "server {first} still runs"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // On its way out it wrote nothing into the store that is gone (its
    // stat cache would have made `<store>/cache/` again).
    let left: Vec<_> = std::fs::read_dir(p.home.path().join("projects"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    p.write("after.txt", "x");
    let prompt = p.payload("d", "UserPromptSubmit", json!({"prompt": "go"}));
    assert_eq!(p.hook("codex", &prompt), (0, String::new()));
    let status = status_once_up(&p);
    let second = status_field(&status, "pid").unwrap();
    assert_ne!(first, second, "{status}");
    assert!(p.cli(&["status"]).contains("no failures recorded"));
}

/// Sessions recorded through hooks go when the keep rules say so: their
/// turns carry the prompt as a label, which describes them and does not
/// keep them (a checkpoint labelled by someone does).
#[test]
fn keep_rules_prune_old_hook_sessions() {
    let p = Project::new();
    seed(&p);
    for s in ["s1", "s2", "s3"] {
        for (event, extra) in [
            ("SessionStart", json!({})),
            ("UserPromptSubmit", json!({"prompt": format!("work {s}")})),
        ] {
            assert_eq!(
                p.hook("claude-code", &p.payload(s, event, extra)),
                (0, String::new())
            );
        }
        p.write("a.txt", s);
        let stop = p.payload(s, "Stop", json!({}));
        assert_eq!(p.hook("claude-code", &stop), (0, String::new()));
    }
    let out = p.cli(&["gc", "--keep-last", "1"]);
    assert!(out.contains("2 session(s) pruned"), "{out}");
    assert!(p.cli(&["log"]).contains("work s3"));
}

#[test]
fn a_server_of_another_build_gives_way() {
    let p = Project::with_server();
    seed(&p);
    // Another install of rewind: the same program at another path.
    let other = tempfile::tempdir().unwrap();
    let other_bin = other.path().join("rewind");
    std::fs::copy(common::bin(), &other_bin).unwrap();
    let hook_with = |bin: &Path, payload: &Value| {
        let spawn = || {
            Command::new(bin)
                .args(["hook", "--agent", "gemini"])
                .env("REWIND_HOME", p.home.path())
                .env("REWIND_SERVER_IDLE_SECS", "120")
                .env_remove("GEMINI_PROJECT_DIR")
                .env_remove("REWIND_SERVER")
                .current_dir(p.dir.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
        };
        // The copy's write descriptor can still be open in a child another
        // test thread forked meanwhile (until it execs): "text file busy"
        // for a moment (seen once).
        let mut tries = 0;
        let mut child = loop {
            match spawn() {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other.unwrap(),
            }
        };
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        assert!(child.wait_with_output().unwrap().status.success());
    };
    hook_with(&other_bin, &p.payload("g", "SessionStart", json!({})));
    let status = p.cli(&["server", "status"]);
    assert!(status.contains(other_bin.to_str().unwrap()), "{status}");
    let old = status_field(&status, "pid").unwrap();
    hook_with(
        Path::new(common::bin()),
        &p.payload("g", "BeforeAgent", json!({"prompt": "next"})),
    );
    // The old server exits once it has answered; the hook's new one takes
    // the lock after it.
    let status = status_once_up(&p);
    assert!(!status.contains(other_bin.to_str().unwrap()), "{status}");
    assert_ne!(status_field(&status, "pid").unwrap(), old, "{status}");
    let snaps = snapshots(&p.store_sessions()[0]);
    assert_eq!(snaps.len(), 2, "{snaps:?}");
}

#[test]
fn two_projects_have_two_servers_and_other_users_reach_neither() {
    let a = Project::with_server();
    let b = Project::with_server();
    for p in [&a, &b] {
        seed(p);
        assert_eq!(
            p.hook("codex", &p.payload("x", "SessionStart", json!({}))),
            (0, String::new())
        );
    }
    let pid = |p: &Project| status_field(&status_once_up(p), "pid").unwrap();
    assert_ne!(pid(&a), pid(&b));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip_or_fail("another user's connection needs root to run as that user");
        return;
    }
    // The server's directory is 0700: another user gets no further.
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::bin())
        .args(["server", "status"])
        .env("REWIND_HOME", a.home.path())
        .current_dir("/")
        .arg("--cwd")
        .arg(a.root())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    assert!(a.cli(&["server", "status"]).contains("events   1 served"));
}

/// A hook's failure is logged in the store of the agent's project, the one
/// `rewind status` there reads, also when the payload's cwd is where a
/// shell tool `cd`ed (it went to the cwd's store before).
#[test]
fn a_failure_after_a_cd_shows_in_the_projects_status() {
    let p = Project::new();
    p.write("sub/keep.txt", "k");
    let root = p.root();
    let env = [("CLAUDE_PROJECT_DIR", root.as_path())];
    let start = p.payload("f", "SessionStart", json!({}));
    assert_eq!(
        p.hook_env("claude-code", start.to_string().as_bytes(), &env),
        (0, String::new())
    );
    // The session file is damaged: the next event cannot be recorded.
    std::fs::write(&p.store_sessions()[0], "not a session\n").unwrap();
    let mut after = p.payload(
        "f",
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
    );
    after["cwd"] = json!(root.join("sub"));
    assert_eq!(
        p.hook_env("claude-code", after.to_string().as_bytes(), &env),
        (0, String::new())
    );
    let status = p.cli(&["status"]);
    assert!(status.contains("1 recent failure"), "{status}");
    assert!(status.contains("claude-code PostToolUse"), "{status}");
}

/// A server directory someone opened up (mode 0755) is not talked to as
/// is: the hook makes it private again, starts a server there, and the
/// event is recorded (by that server, or on a loaded machine by the hook).
#[test]
fn a_server_directory_left_open_is_made_private_again() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::with_server();
    seed(&p);
    assert_eq!(
        p.hook("codex", &p.payload("o", "SessionStart", json!({}))),
        (0, String::new())
    );
    assert!(p.cli(&["server", "stop"]).contains("stopped"));
    let dir = store_dir(&p).join("server");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prompt = p.payload("o", "UserPromptSubmit", json!({"prompt": "again"}));
    assert_eq!(p.hook("codex", &prompt), (0, String::new()));
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // A server runs there again. It recorded the event, unless it was not
    // listening within the hook's half second (a loaded machine), and the
    // hook recorded the event itself: both are right, once.
    let status = status_once_up(&p);
    assert!(status_field(&status, "pid").is_some(), "{status}");
    assert!(
        matches!(status_field(&status, "events").as_deref(), Some("0" | "1")),
        "{status}"
    );
    let snaps = snapshots(&p.store_sessions()[0]);
    assert_eq!(snaps.last().unwrap().0, "message", "{snaps:?}");
}

/// The store directory of a project that has recorded once.
fn store_dir(p: &Project) -> PathBuf {
    std::fs::read_dir(p.home.path().join("projects"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
}

/// The `diff.added` of the session's last tool checkpoint.
fn last_tool_added(p: &Project) -> Vec<String> {
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1);
    let tool = entries(&sessions[0])
        .into_iter()
        .rfind(|e| e["data"]["kind"] == "tool")
        .unwrap();
    serde_json::from_value(tool["data"]["diff"]["added"].clone()).unwrap_or_default()
}

/// More changes between two events than the server's watcher keeps
/// (`REWIND_WATCH_QUEUE`, tiny here): that event scans everything, misses
/// nothing, and the next one is back to what the watcher saw.
#[test]
fn an_overflowing_watcher_means_a_full_scan_and_nothing_missed() {
    let p = Project::with_server();
    seed(&p);
    let queue = [("REWIND_WATCH_QUEUE", Path::new("16"))];
    let ev = |event: &str, extra: Value| {
        let payload = p.payload("w", event, extra).to_string();
        let (code, out) = p.hook_env("claude-code", payload.as_bytes(), &queue);
        assert_eq!((code, out.as_str()), (0, ""), "{event}");
    };
    ev("SessionStart", json!({}));
    status_once_up(&p);
    ev("UserPromptSubmit", json!({"prompt": "many files"}));
    let bash = json!({"tool_name": "Bash", "tool_input": {"command": "gen.sh"}});
    ev("PreToolUse", bash.clone());
    // In a directory watched already (a new one would be one event).
    for i in 0..40 {
        p.write(&format!("src/f{i:02}.txt"), "g");
    }
    ev("PostToolUse", bash.clone());
    let want: Vec<String> = (0..40).map(|i| format!("src/f{i:02}.txt")).collect();
    assert_eq!(last_tool_added(&p), want);
    let status = p.cli(&["server", "status"]);
    assert!(status.contains("full: watcher lost track: 1"), "{status}");
    // Re-armed: one more file is what the watcher reports, no full scan.
    ev("PreToolUse", bash.clone());
    p.write("src/late.txt", "l");
    ev("PostToolUse", bash);
    assert_eq!(last_tool_added(&p), vec!["src/late.txt".to_string()]);
    let status = p.cli(&["server", "status"]);
    assert!(status.contains("full: watcher lost track: 1"), "{status}");
}

/// A server that may watch only a handful of directories (inotify's
/// per-user watch limit, set low inside a user namespace of its own): it
/// says so in `status`, scans everything on every event, and misses
/// nothing.
#[test]
fn a_server_out_of_watches_scans_everything_and_says_so() {
    let mut p = Project::new();
    for d in 0..12 {
        p.write(&format!("d{d}/keep.txt"), "k");
    }
    // One-shot first, to make the store the server below serves.
    let start = p.payload("l", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &start), (0, String::new()));
    let store = store_dir(&p);
    let script = format!(
        "echo 6 > /proc/sys/user/max_inotify_watches && exec \"$0\" server run --cwd '{}' --store '{}'",
        p.root().display(),
        store.display()
    );
    // Another home: the server records in the store it is given, not in
    // the one its environment would name.
    let elsewhere = tempfile::tempdir().unwrap();
    let server = Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c", &script])
        .arg(common::bin())
        .env("REWIND_HOME", elsewhere.path())
        .env("REWIND_SERVER_IDLE_SECS", "120")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut server) = server else {
        common::skip_or_fail("unshare is not installed");
        return;
    };
    // From here on hooks talk to it, and the test stops it.
    p.server = true;
    let served = p;
    let up = std::time::Instant::now();
    while status_field(&served.cli(&["server", "status"]), "pid").is_none() {
        if let Ok(Some(exit)) = server.try_wait() {
            let mut err = String::new();
            std::io::Read::read_to_string(server.stderr.as_mut().unwrap(), &mut err).unwrap();
            common::skip_or_fail(&format!(
                "no user namespace with its own watch limit here ({exit}): {err}"
            ));
            return;
        }
        assert!(up.elapsed().as_secs() < 10, "the server did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let shell = json!({"tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "make"]}});
    for round in 0..2 {
        let before = served.payload("l", "PreToolUse", shell.clone());
        assert_eq!(served.hook("codex", &before), (0, String::new()));
        served.write(&format!("d11/new{round}.txt"), "n");
        let after = served.payload("l", "PostToolUse", shell.clone());
        assert_eq!(served.hook("codex", &after), (0, String::new()));
        assert_eq!(
            last_tool_added(&served),
            vec![format!("d11/new{round}.txt")]
        );
    }
    let status = served.cli(&["server", "status"]);
    assert!(
        status.contains("the system's watch limit is reached"),
        "{status}"
    );
    assert!(status.contains("events   4 served"), "{status}");
    assert!(
        status_field(&status, "  full: watch limit reached:").is_some(),
        "{status}"
    );
    drop(served);
    let _ = server.wait();
}

/// SIGKILL while the server records an event: the hook hands the event to
/// a new server (or records it itself), exits 0, and nothing is lost; the
/// session verifies.
#[test]
fn a_server_killed_during_an_event_loses_nothing() {
    let p = Project::with_server();
    seed(&p);
    let start = p.payload("m", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &start), (0, String::new()));
    let first = status_field(&status_once_up(&p), "pid").unwrap();
    // Enough new content that recording it takes a while.
    let mut noise = vec![0u8; 1 << 20];
    for i in 0..96 {
        for (j, b) in noise.iter_mut().enumerate() {
            *b = (j as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(i)
                .rotate_left(i) as u8;
        }
        let path = p.dir.path().join(format!("big/b{i:02}.bin"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &noise).unwrap();
    }
    let shell = json!({"tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "gen"]}});
    let payload = p.payload("m", "PostToolUse", shell).to_string();
    let hook = std::thread::scope(|s| {
        let hook = s.spawn(|| p.hook_raw("codex", payload.as_bytes()));
        // Kill it once it is busy with the event (it reads the new files).
        let busy = std::time::Instant::now();
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{first}/io")).unwrap_or_default();
            let read: u64 = stat
                .lines()
                .find_map(|l| l.strip_prefix("rchar: "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if read > 8 << 20 || busy.elapsed().as_secs() > 20 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let killed = Command::new("kill").args(["-9", &first]).status().unwrap();
        assert!(killed.success());
        hook.join().unwrap()
    });
    assert_eq!(hook, (0, String::new()));
    let want: Vec<String> = (0..96).map(|i| format!("big/b{i:02}.bin")).collect();
    assert_eq!(last_tool_added(&p), want);
    // Once: also when the killed server had appended it (the event's id
    // goes with its checkpoint).
    let tools = entries(&p.store_sessions()[0])
        .iter()
        .filter(|e| e["data"]["kind"] == "tool")
        .count();
    assert_eq!(tools, 1);
    let status = status_once_up(&p);
    assert_ne!(status_field(&status, "pid").unwrap(), first, "{status}");
    assert!(p.cli(&["status"]).contains("no failures recorded"));
    let verify = p.cli(&["verify"]);
    assert!(verify.contains("no problems"), "{verify}");
}

/// Hooks of their own (`REWIND_SERVER=0`) find what a shell command
/// changed by stat, through the scan the previous hook saved
/// (docs/architecture.md "Hooks without a server: the saved scan"): edits,
/// a deletion, new files in old and new directories — and a project whose
/// saved scan is torn is walked instead, with the same checkpoints.
#[test]
fn one_shot_hooks_find_a_shell_commands_changes_through_the_saved_scan() {
    let run = |tear: bool| -> Vec<Value> {
        let p = Project::new();
        seed(&p);
        p.write("deep/er/x.txt", "x\n");
        // Settled: directory stats older than the racy window vouch for
        // their names.
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        let bash = json!({"tool_name": "Bash", "tool_input": {"command": "edit.sh"}});
        let ev = |event: &str, extra: Value| {
            if tear && p.home.path().join("projects").exists() {
                for f in std::fs::read_dir(store_dir(&p).join("cache"))
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    if f.file_name().to_string_lossy().starts_with("scan-") {
                        std::fs::write(f.path(), b"{\"version\":").unwrap();
                    }
                }
            }
            let (code, out) = p.hook("claude-code", &p.payload("s", event, extra));
            assert_eq!((code, out.as_str()), (0, ""), "{event}");
        };
        ev("SessionStart", json!({}));
        ev("UserPromptSubmit", json!({"prompt": "edit"}));
        ev("PreToolUse", bash.clone());
        let cache = store_dir(&p).join("cache");
        let saved = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .any(|f| f.file_name().to_string_lossy().starts_with("scan-"));
        assert!(saved, "a one-shot hook saves its scan");
        p.write("a.txt", "a2\n");
        std::fs::remove_file(p.dir.path().join("c.txt")).unwrap();
        p.write("src/new.rs", "fn y() {}\n");
        p.write("deep/er/y.txt", "y\n");
        p.write("fresh/dir/z.txt", "z\n");
        ev("PostToolUse", bash);
        let sessions = p.store_sessions();
        entries(&sessions[0])
            .into_iter()
            .filter(|e| e["customType"] == "step-snapshot")
            .map(|e| e["data"]["diff"].clone())
            .collect()
    };
    let diffs = run(false);
    let last = diffs.last().unwrap();
    assert_eq!(
        last["added"],
        json!(["deep/er/y.txt", "fresh/dir/z.txt", "src/new.rs"]),
        "{last}"
    );
    assert_eq!(last["modified"], json!(["a.txt"]), "{last}");
    assert_eq!(last["deleted"], json!(["c.txt"]), "{last}");
    assert_eq!(diffs, run(true));
}

/// Every hook event is a new process, so the executable is linked at a
/// fixed address (src/build.rs): the loader has no relocations to apply at
/// each start. An ELF header's `e_type` (offset 16) is 2 for such an
/// executable and 3 for a position-independent one.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_executable_needs_no_relocation_at_start() {
    let bytes = std::fs::read(crate::common::bin()).expect("read the rewind executable");
    assert_eq!(&bytes[..4], b"\x7fELF");
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    assert_eq!(e_type, 2, "ET_EXEC expected, found e_type {e_type}");
}

// ---------------------------------------- a hook server that cannot start

/// How long one hook event takes, start to exit.
fn timed_hook(p: &Project, payload: &Value) -> std::time::Duration {
    let t = std::time::Instant::now();
    assert_eq!(p.hook("claude-code", payload), (0, String::new()));
    t.elapsed()
}

fn median(mut times: Vec<std::time::Duration>) -> std::time::Duration {
    times.sort();
    times[times.len() / 2]
}

/// The median of `n` tool events (a Write of a new file each), with hooks
/// handing them to the server (`served`) or recording them themselves.
fn median_event(p: &mut Project, served: bool, n: usize) -> std::time::Duration {
    p.server = served;
    let times = (0..n)
        .map(|i| {
            let name = format!("{}-{i}.txt", if served { "served" } else { "alone" });
            p.write(&name, "x\n");
            let write =
                json!({"tool_name": "Write", "tool_input": {"file_path": p.root().join(&name)}});
            timed_hook(p, &p.payload("t", "PostToolUse", write))
        })
        .collect();
    p.server = true;
    median(times)
}

/// How many servers started and failed (each says why on its way out).
fn failed_servers(p: &Project) -> usize {
    std::fs::read_to_string(store_dir(p).join("server/server.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("rewind: "))
        .count()
}

/// A `REWIND_HOME` deep enough that the socket's path does not fit in a
/// socket address (107 bytes): it made every event start a server that
/// could not listen, wait half a second, then record alone. The server
/// listens all the same and events are as quick as without it.
#[test]
fn a_socket_path_too_long_for_an_address_still_reaches_the_server() {
    let mut p = Project::with_server_and_home_of(90);
    seed(&p);
    p.server = false;
    let start = p.payload("t", "SessionStart", json!({}));
    assert_eq!(p.hook("claude-code", &start), (0, String::new()));
    let socket = store_dir(&p).join("server/hook.sock");
    assert!(socket.as_os_str().len() > 107, "{}", socket.display());
    let alone = median_event(&mut p, false, 5);
    let served = median_event(&mut p, true, 5);
    eprintln!("long socket path: one-shot {alone:?}, through the server {served:?} (medians)");
    // Not the half second a hook waits for a server to listen.
    assert!(
        served < alone + std::time::Duration::from_millis(250),
        "one-shot {alone:?}, with the server {served:?}"
    );
    let status = status_once_up(&p);
    assert!(status_field(&status, "pid").is_some(), "{status}");
    // One server started, and it served the events after the first (the
    // first too, unless it was not listening within half a second).
    assert!(
        matches!(status_field(&status, "events").as_deref(), Some("4" | "5")),
        "{status}"
    );
    assert_eq!(failed_servers(&p), 0);
    assert!(p.cli(&["status"]).contains("no failures recorded"));
    assert_eq!(last_tool_added(&p), vec!["served-4.txt".to_string()]);
}

/// A directory left where the server's socket goes: the server cannot
/// listen. The first event finds out at once (not after half a second),
/// the next ones start no server at all, and `rewind status` says why.
#[test]
fn a_server_that_cannot_start_costs_nothing_and_says_why() {
    let mut p = Project::with_server();
    seed(&p);
    p.server = false;
    let start = p.payload("t", "SessionStart", json!({}));
    assert_eq!(p.hook("claude-code", &start), (0, String::new()));
    let planted = store_dir(&p).join("server/hook.sock");
    std::fs::create_dir_all(&planted).unwrap();
    let alone = median_event(&mut p, false, 5);
    let first = median_event(&mut p, true, 1);
    assert_eq!(failed_servers(&p), 1, "the first event tried a server");
    let served = median_event(&mut p, true, 5);
    eprintln!(
        "hook.sock in the way: one-shot {alone:?}, first event {first:?}, then {served:?} (median)"
    );
    assert_eq!(
        failed_servers(&p),
        1,
        "no event after the first tries again"
    );
    assert!(
        first < alone + std::time::Duration::from_millis(250),
        "one-shot {alone:?}, the first event with the server {first:?}"
    );
    assert!(
        served < alone + std::time::Duration::from_millis(250),
        "one-shot {alone:?}, with the server {served:?}"
    );
    assert!(planted.is_dir(), "what was in the way is left alone");
    assert_eq!(last_tool_added(&p), vec!["served-4.txt".to_string()]);
    let status = p.cli(&["status"]);
    assert!(status.contains("could not start"), "{status}");
    assert!(status.contains("in the way"), "{status}");
    let server = p.cli(&["server", "status"]);
    assert!(server.contains("could not start"), "{server}");
}

/// `<store>/server` planted as a symlink to another directory: it is not
/// used, and nothing is changed through it (its target's mode was made
/// 0700 before the check refused it).
#[test]
fn a_symlinked_server_directory_is_not_used_and_its_target_is_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::with_server();
    seed(&p);
    let start = p.payload("l", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &start), (0, String::new()));
    assert!(p.cli(&["server", "stop"]).contains("stopped"));
    let dir = store_dir(&p).join("server");
    std::fs::remove_dir_all(&dir).unwrap();
    let target = tempfile::tempdir().unwrap();
    std::fs::set_permissions(target.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(target.path(), &dir).unwrap();
    let prompt = p.payload("l", "UserPromptSubmit", json!({"prompt": "go"}));
    assert_eq!(p.hook("codex", &prompt), (0, String::new()));
    let mode = std::fs::metadata(target.path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o755, "the symlink's target was changed");
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "nothing is written through the symlink"
    );
    let snaps = snapshots(&p.store_sessions()[0]);
    assert_eq!(snaps.last().unwrap().0, "message", "{snaps:?}");
    let status = p.cli(&["status"]);
    assert!(status.contains("symbolic link"), "{status}");
}

/// A server killed right after `SessionStart` was answered, then an edit,
/// then the next event: the session's baseline is the project as the
/// agent found it, not with the edit (the server answered before taking
/// it, so the next event took it, edit included).
#[test]
fn a_server_killed_after_session_start_keeps_the_state_before_the_edits() {
    let p = Project::with_server();
    seed(&p);
    // Enough content that a baseline takes a while.
    let mut noise = vec![0u8; 1 << 20];
    for i in 0..32u32 {
        for (j, b) in noise.iter_mut().enumerate() {
            *b = (j as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(i)
                .rotate_left(i) as u8;
        }
        p.write(&format!("big/b{i:02}.bin"), "");
        std::fs::write(p.dir.path().join(format!("big/b{i:02}.bin")), &noise).unwrap();
    }
    p.cli(&["server", "start"]);
    let pid: i32 = status_field(&status_once_up(&p), "pid")
        .unwrap()
        .parse()
        .unwrap();
    let start = p.payload("k", "SessionStart", json!({}));
    assert_eq!(p.hook("codex", &start), (0, String::new()));
    // SAFETY: kill has no memory preconditions; the pid is the server's.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    p.write("a.txt", "edited after the session started\n");
    let prompt = p.payload("k", "UserPromptSubmit", json!({"prompt": "go"}));
    assert_eq!(p.hook("codex", &prompt), (0, String::new()));
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1);
    let checkpoints: Vec<Value> = entries(&sessions[0])
        .into_iter()
        .filter(|e| e["customType"] == "step-snapshot")
        .collect();
    let kinds: Vec<&str> = checkpoints
        .iter()
        .map(|e| e["data"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["baseline", "message"]);
    // The prompt's checkpoint sees the edit: the baseline is from before.
    assert_eq!(
        checkpoints[1]["data"]["diff"]["modified"],
        json!(["a.txt"]),
        "{}",
        checkpoints[1]
    );
    assert!(p.cli(&["status"]).contains("no failures recorded"));
}

/// One line of a Claude Code transcript.
fn claude_line(session: &str, kind: &str, uuid: &str, text: &str) -> String {
    json!({"type": kind, "uuid": uuid, "sessionId": session, "message": {"content": text}})
        .to_string()
        + "\n"
}

fn append(path: &Path, text: &str) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The id of the checkpoint of `kind` of turn `n` in the agent session's
/// rewind session, and that session file.
fn checkpoint_of(p: &Project, session: &str, kind: &str, n: u64) -> (String, PathBuf) {
    for file in p.store_sessions() {
        for e in entries(&file) {
            if e["data"]["kind"] == kind
                && e["data"]["turnIndex"] == n
                && e["data"]["conversation"]["sessionId"] == session
            {
                return (e["id"].as_str().unwrap().to_string(), file.clone());
            }
        }
    }
    panic!("no {kind} checkpoint of turn {n} for {session}");
}

/// Two turns of Claude Code through its hooks, the transcript written as
/// Claude Code writes it (its prompt's `queue-operation` lines before the
/// `UserPromptSubmit` hook, its messages after).
fn two_claude_turns(p: &Project, sid: &str, transcript: &Path) {
    let root = p.root();
    let t = transcript.to_str().unwrap();
    let ev = |event: &str, extra: Value| {
        let mut v = p.payload(sid, event, extra);
        v["transcript_path"] = json!(t);
        v
    };
    let ok = |v: Value| assert_eq!(p.hook("claude-code", &v), (0, String::new()));
    ok(ev("SessionStart", json!({"source": "startup"})));
    ok(ev("UserPromptSubmit", json!({"prompt": "one"})));
    append(transcript, &claude_line(sid, "user", "u1", "one"));
    append(transcript, &claude_line(sid, "assistant", "a1", "writing"));
    p.write("a.txt", "1");
    let write = json!({"tool_name": "Write", "tool_input": {"file_path": root.join("a.txt")}});
    ok(ev("PostToolUse", write.clone()));
    append(transcript, &claude_line(sid, "assistant", "a2", "done one"));
    ok(ev("Stop", json!({})));
    append(
        transcript,
        &json!({"type": "queue-operation", "sessionId": sid}).to_string(),
    );
    append(transcript, "\n");
    ok(ev("UserPromptSubmit", json!({"prompt": "two"})));
    append(transcript, &claude_line(sid, "user", "u2", "two"));
    p.write("a.txt", "2");
    ok(ev("PostToolUse", write));
    append(transcript, &claude_line(sid, "assistant", "a3", "done two"));
    ok(ev("Stop", json!({})));
}

/// A conversation restore forks the transcript at the checkpoint (the
/// original unchanged), and the fork's hooks record into the same rewind
/// session, below where the conversation was cut.
#[test]
fn a_conversation_restore_forks_the_transcript_and_the_fork_records_into_the_same_session() {
    let p = Project::new();
    let transcripts = tempfile::tempdir().unwrap();
    let sid = "0b7c2a55-4f6e-4a43-9c1e-6d1f0e3b2a10";
    let transcript = transcripts.path().join(format!("{sid}.jsonl"));
    two_claude_turns(&p, sid, &transcript);
    let original = std::fs::read(&transcript).unwrap();
    let (turn2, session) = checkpoint_of(&p, sid, "message", 2);
    let home = [("REWIND_HOME", p.home.path())];
    let (code, out, err) = common::run_cli_env(
        &["restore", &turn2, "--conversation", "--yes", "--json"],
        &p.root(),
        &home,
    );
    assert_eq!(code, 0, "{out}{err}");
    let answer: Value = serde_json::from_str(out.trim()).unwrap();
    let new = answer["conversation"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(answer["conversation"]["agent"], "claude-code");
    assert_eq!(
        answer["conversation"]["resumeCommand"],
        json!(["claude", "--resume", new])
    );
    assert_eq!(p.read("a.txt").as_deref(), Some("1"));
    assert_eq!(std::fs::read(&transcript).unwrap(), original);
    // Turn 1 whole, nothing of turn 2 (nor the queued prompt), the new id
    // in every line.
    let fork = transcripts.path().join(format!("{new}.jsonl"));
    let text = std::fs::read_to_string(&fork).unwrap();
    let want: String = [
        claude_line(sid, "user", "u1", "one"),
        claude_line(sid, "assistant", "a1", "writing"),
        claude_line(sid, "assistant", "a2", "done one"),
    ]
    .concat()
    .replace(sid, &new);
    assert_eq!(text, want);

    // The fork, resumed: the same rewind session, its first checkpoint
    // beside turn 2's.
    let t = fork.to_str().unwrap().to_string();
    let ev = |event: &str, extra: Value| {
        let mut v = p.payload(&new, event, extra);
        v["transcript_path"] = json!(t);
        v
    };
    assert_eq!(
        p.hook(
            "claude-code",
            &ev("SessionStart", json!({"source": "resume"}))
        )
        .0,
        0
    );
    assert_eq!(
        p.hook(
            "claude-code",
            &ev("UserPromptSubmit", json!({"prompt": "three"}))
        )
        .0,
        0
    );
    assert_eq!(p.store_sessions(), vec![session.clone()]);
    let (resumed, _) = checkpoint_of(&p, &new, "message", 2);
    let all = entries(&session);
    let parent = |id: &str| {
        all.iter()
            .find(|e| e["id"] == id)
            .map(|e| e["parentId"].clone())
            .unwrap()
    };
    assert_eq!(parent(&resumed), parent(&turn2));
    // The original's ids still work.
    let (turn1_end, _) = checkpoint_of(&p, sid, "turn", 1);
    p.cli(&["diff", &turn1_end, "--name-only"]);
}

/// What cannot be cut is refused in one line with status 3, after the files
/// are restored, and nothing is written: a transcript of unknown format, one
/// gone, and a checkpoint recorded without a conversation.
#[test]
fn a_conversation_restore_refuses_what_it_cannot_cut_and_writes_nothing() {
    let p = Project::new();
    let transcripts = tempfile::tempdir().unwrap();
    let home = [("REWIND_HOME", p.home.path())];
    let refused = |turn2: &str, session: &Path, why: &str| {
        p.write("a.txt", "changed");
        let listed = || {
            let mut v: Vec<_> = std::fs::read_dir(transcripts.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            v.sort();
            v
        };
        let before = listed();
        let (code, out, err) = common::run_cli_env(
            &[
                "restore",
                turn2,
                "--conversation",
                "--yes",
                "--session",
                session.to_str().unwrap(),
            ],
            &p.root(),
            &home,
        );
        assert_eq!(code, 3, "{out}{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(why), "{err}");
        assert_eq!(
            p.read("a.txt").as_deref(),
            Some("1"),
            "the files are restored"
        );
        assert_eq!(listed(), before, "nothing written");
    };

    // Not Claude Code's format.
    let odd = transcripts.path().join("odd.jsonl");
    std::fs::write(&odd, "plain text, not JSON\n").unwrap();
    let sid = "7f3d0c1e-2b4a-4c5d-8e6f-a0b1c2d3e4f5";
    two_claude_turns(&p, sid, &odd);
    let (turn2, session) = checkpoint_of(&p, sid, "message", 2);
    refused(&turn2, &session, "not in a format rewind knows");

    // Gone by the time of the restore.
    let sid = "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d";
    let gone = transcripts.path().join(format!("{sid}.jsonl"));
    two_claude_turns(&p, sid, &gone);
    let (turn2, session) = checkpoint_of(&p, sid, "message", 2);
    std::fs::remove_file(&gone).unwrap();
    refused(&turn2, &session, "gone");

    // Rewritten since (rotated).
    let sid = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";
    let rotated = transcripts.path().join(format!("{sid}.jsonl"));
    two_claude_turns(&p, sid, &rotated);
    let (turn2, session) = checkpoint_of(&p, sid, "message", 2);
    std::fs::write(&rotated, claude_line(sid, "user", "z", "another")).unwrap();
    refused(&turn2, &session, "no longer holds");

    // Recorded without a conversation (no transcript in the payload, as a
    // checkpoint recorded before rewind recorded conversations).
    let sid = "c0ffee00-0000-4000-8000-000000000001";
    let ev = |event: &str, extra: Value| {
        let mut v = p.payload(sid, event, extra);
        v.as_object_mut().unwrap().remove("transcript_path");
        v
    };
    p.hook("claude-code", &ev("SessionStart", json!({})));
    p.hook(
        "claude-code",
        &ev("UserPromptSubmit", json!({"prompt": "one"})),
    );
    p.write("a.txt", "1");
    p.hook("claude-code", &ev("Stop", json!({})));
    let session = p
        .store_sessions()
        .into_iter()
        .max_by_key(|f| std::fs::metadata(f).unwrap().modified().unwrap())
        .unwrap();
    let end = entries(&session)
        .iter()
        .rfind(|e| e["data"]["kind"] == "turn")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .unwrap();
    refused(
        &end,
        &session,
        "recorded without the conversation's position",
    );
}

/// MCP's `undo`, confirmed, puts the files back and answers with the
/// command that continues the conversation as it was before the turn: the
/// agent cannot cut its own.
#[test]
fn mcp_undo_answers_with_the_command_that_continues_the_conversation() {
    let p = Project::new();
    let transcripts = tempfile::tempdir().unwrap();
    let sid = "5d6e7f80-1a2b-4c3d-9e4f-a5b6c7d8e9f0";
    let transcript = transcripts.path().join(format!("{sid}.jsonl"));
    two_claude_turns(&p, sid, &transcript);
    let mut mcp = crate::mcp::Mcp::start(&p.root(), p.home.path());
    let plan = mcp.call("undo", json!({}));
    let done = crate::mcp::confirm(&mut mcp, "undo", json!({}), &plan);
    assert_eq!(p.read("a.txt").as_deref(), Some("1"));
    let c = &done["structuredContent"]["conversation"];
    assert_eq!(c["agent"], "claude-code", "{done}");
    let new = c["sessionId"].as_str().unwrap();
    assert_eq!(c["resumeCommand"], json!(["claude", "--resume", new]));
    let text: Vec<&str> = done["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    let line = text.last().unwrap();
    assert!(line.contains("cannot be cut from inside it"), "{line}");
    assert!(line.contains(&format!("claude --resume {new}")), "{line}");
    let fork = std::fs::read_to_string(transcripts.path().join(format!("{new}.jsonl"))).unwrap();
    assert_eq!(fork.lines().count(), 3, "turn 1 whole: {fork}");
}

/// `rewind log` marks the turns a restore rolled back, and no longer once
/// an undo took the restore back.
#[test]
fn the_log_marks_the_turns_a_restore_rolled_back() {
    let p = Project::new();
    let transcripts = tempfile::tempdir().unwrap();
    let sid = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d";
    two_claude_turns(&p, sid, &transcripts.path().join("t.jsonl"));
    let (turn2, _) = checkpoint_of(&p, sid, "message", 2);
    let out = p.cli(&["restore", &turn2, "--yes"]);
    let restore = out
        .split("unrevert-point ")
        .nth(1)
        .and_then(|s| s.get(..8))
        .unwrap()
        .to_string();
    let log = p.cli(&["log"]);
    let marked: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("(rolled back by {restore})")))
        .collect();
    // Turn 2's prompt, its tool and its end; nothing of turn 1.
    assert_eq!(marked.len(), 3, "{log}");
    assert!(marked.iter().all(|l| l.contains(" turn   2 ")), "{log}");
    p.cli(&["undo", "--yes"]);
    let log = p.cli(&["log"]);
    assert!(!log.contains("rolled back"), "{log}");
}

/// `rewind undo --conversation` after a turn forks the conversation before
/// it; `--launch` runs the command that continues it, in the project.
#[test]
fn undo_forks_the_conversation_before_the_turn_and_launch_runs_its_command() {
    let p = Project::new();
    let transcripts = tempfile::tempdir().unwrap();
    let sid = "b7c8d9e0-f1a2-4b3c-8d4e-5f6a7b8c9d0e";
    let transcript = transcripts.path().join(format!("{sid}.jsonl"));
    two_claude_turns(&p, sid, &transcript);
    let home = [("REWIND_HOME", p.home.path())];
    let (code, out, err) = common::run_cli_env(
        &["undo", "--conversation", "--yes", "--json"],
        &p.root(),
        &home,
    );
    assert_eq!(code, 0, "{out}{err}");
    let answer: Value = serde_json::from_str(out.trim()).unwrap();
    let new = answer["conversation"]["sessionId"].as_str().unwrap();
    assert_eq!(p.read("a.txt").as_deref(), Some("1"));
    let fork = std::fs::read_to_string(transcripts.path().join(format!("{new}.jsonl"))).unwrap();
    assert_eq!(fork.lines().count(), 3, "turn 1 whole: {fork}");

    // --launch: a `claude` on PATH that says where and how it ran.
    let bin = tempfile::tempdir().unwrap();
    let said = bin.path().join("said");
    let claude = bin.path().join("claude");
    std::fs::write(
        &claude,
        format!("#!/bin/sh\necho \"$PWD $*\" > '{}'\n", said.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let (turn1, _) = checkpoint_of(&p, sid, "turn", 1);
    let out = Command::new(common::bin())
        .args(["restore", &turn1, "--conversation-only", "--launch"])
        .env("REWIND_HOME", p.home.path())
        .env("PATH", path)
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = std::fs::read_to_string(&said).unwrap();
    assert!(
        said.starts_with(&format!("{} --resume ", p.root().display())),
        "{said}"
    );
}

/// Droid's prompt event, as its hook docs give it (`droid exec` 0.215.0
/// fires none, tests/integration/agents_e2e.rs `droid`): it starts a turn
/// labelled with the prompt, its `Create` takes the fast path, `Stop` ends
/// the turn, and the turn restores.
#[test]
fn a_droid_prompt_starts_a_labelled_turn() {
    let p = Project::new();
    p.write("keep.txt", "k");
    let ok = |v: Value| assert_eq!(p.hook("droid", &v), (0, String::new()), "{v}");
    ok(p.payload("d1", "SessionStart", json!({"source": "startup"})));
    ok(p.payload(
        "d1",
        "UserPromptSubmit",
        json!({"prompt": "add a.txt\nplease"}),
    ));
    let create =
        json!({"tool_name": "Create", "tool_input": {"file_path": p.root().join("a.txt")}});
    ok(p.payload("d1", "PreToolUse", create.clone()));
    p.write("a.txt", "a");
    ok(p.payload("d1", "PostToolUse", create));
    ok(p.payload("d1", "Stop", json!({"stop_hook_active": false})));
    let sessions = p.store_sessions();
    assert_eq!(sessions.len(), 1);
    let e = entries(&sessions[0]);
    let message = e.iter().find(|x| x["data"]["kind"] == "message").unwrap();
    assert_eq!(message["data"]["label"], "add a.txt", "{message}");
    assert_eq!(message["data"]["turnIndex"], 1);
    let step = e
        .iter()
        .rfind(|x| x["data"]["tool"]["name"] == "Create")
        .unwrap();
    assert_eq!(step["data"]["diff"]["added"], json!(["a.txt"]), "{step}");
    assert_eq!(step["data"]["stats"]["filesScanned"], 1, "{step}");
    assert!(e
        .iter()
        .any(|x| x["data"]["kind"] == "turn" && x["data"]["turnIndex"] == 1));
    p.cli(&["restore", message["id"].as_str().unwrap(), "--yes"]);
    assert_eq!(p.read("a.txt"), None);
    assert_eq!(p.read("keep.txt").as_deref(), Some("k"));
}

/// Issue 39 item 2: the plain payloads in tests/agents/samples/payloads
/// replay as docs/agents.md "Replaying a turn" says — `@PROJECT@` replaced by
/// the project, each line piped to `rewind hook --agent NAME` — and record
/// the agent's first turn: its prompt's checkpoint (labelled with the
/// prompt) and its end's. Droid's headless runs send no prompt event;
/// Cline's turn start names no prompt (its checkpoint has no label).
#[test]
fn every_agents_sample_turn_replays_into_a_turn() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/samples/payloads");
    let mut agents = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let agent = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let p = Project::new();
        let root = p.dir.path().canonicalize().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("transcript_path"), "{agent}");
        for line in text.lines() {
            let payload = line.replace("@PROJECT@", root.to_str().unwrap());
            let mut child = Command::new(common::bin())
                .args(["hook", "--agent", &agent])
                .env("REWIND_HOME", p.home.path())
                .env("REWIND_SERVER", "0")
                .env_remove("CLAUDE_PROJECT_DIR")
                .env_remove("GEMINI_PROJECT_DIR")
                .current_dir(&root)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(format!("{payload}\n").as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{agent}: {line}");
        }
        let log = Command::new(common::bin())
            .arg("log")
            .env("REWIND_HOME", p.home.path())
            .current_dir(&root)
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&log.stdout).into_owned();
        let kinds: Vec<&str> = log
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(4))
            .collect();
        let want: &[&str] = if agent == "droid" {
            &["baseline", "turn"]
        } else {
            &["baseline", "message", "turn"]
        };
        assert_eq!(kinds, want, "{agent}:\n{log}");
        if !matches!(agent.as_str(), "droid" | "cline") {
            assert!(log.contains("Create a.txt and b.txt"), "{agent}:\n{log}");
        }
        agents += 1;
    }
    assert_eq!(agents, 9, "one file per agent rewind installs into");
}
