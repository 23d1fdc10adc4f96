//! A person's side of checkpoints (issue 38), through the binary: `rewind
//! checkpoint` (no turn number, the cap, what it captured), `rewind label`
//! (only what is given changes), bad input refused in one line with the
//! session untouched, `rewind pause`/`resume` (hooks, watch and MCP stand
//! down; a person's checkpoint does not), `rewind export` (Markdown and
//! JSON), `rewind status` naming what the latest checkpoint left out, the
//! page's label and checkpoint writes, and MCP's `label` tool.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common;

/// A project, its store and a home, gone with the test.
struct P {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl P {
    fn new() -> P {
        let p = P {
            dir: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        p.write("src/app.py", "print('hi')\n");
        p
    }

    fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(common::bin());
        // The subcommand, then where (before a `run`'s command), then the rest.
        c.args(&args[..1])
            .args(["--cwd", self.dir.path().to_str().unwrap()])
            .args(["--store", self.store.path().to_str().unwrap()])
            .args(&args[1..])
            .env("REWIND_HOME", self.home.path())
            .env("RUST_LOG", "warn")
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        c
    }

    /// (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.command(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "rewind {args:?}: {err}");
        out
    }

    /// A refusal: exit 1, one line on stderr, nothing on stdout.
    fn refused(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 1, "rewind {args:?} should fail: {out}{err}");
        assert_eq!(out, "", "rewind {args:?}");
        assert_eq!(err.lines().count(), 1, "one line: {err:?}");
        err
    }

    /// `rewind run` one turn writing `rel`.
    fn turn(&self, rel: &str, text: &str) {
        let script = format!("printf '%s' '{text}' > {rel}");
        self.ok(&["run", "--", "sh", "-c", &script]);
    }

    fn session(&self) -> PathBuf {
        let dir = self.store.path().join("sessions");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files.remove(0)
    }

    fn entries(&self) -> Vec<Value> {
        std::fs::read_to_string(self.session())
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The step-snapshots: (id, kind, turn, label).
    fn snapshots(&self) -> Vec<(String, String, u64, Option<String>)> {
        self.entries()
            .iter()
            .filter(|e| e["customType"] == "step-snapshot")
            .map(|e| {
                (
                    e["id"].as_str().unwrap().to_string(),
                    e["data"]["kind"].as_str().unwrap().to_string(),
                    e["data"]["turnIndex"].as_u64().unwrap(),
                    e["data"]["label"].as_str().map(str::to_string),
                )
            })
            .collect()
    }

    /// `rewind export --format json`'s checkpoints.
    fn exported(&self) -> Vec<Value> {
        let out = self.ok(&["export", "--format", "json"]);
        let doc: Value = serde_json::from_str(&out).unwrap();
        doc["checkpoints"].as_array().unwrap().clone()
    }

    fn exported_one(&self, id: &str) -> Value {
        self.exported()
            .into_iter()
            .find(|c| c["entryId"] == id)
            .unwrap_or_else(|| panic!("{id} exported"))
    }
}

#[test]
fn a_checkpoint_by_hand_takes_no_turn_number_and_says_what_it_captured() {
    let p = P::new();
    p.turn("a.txt", "one");
    p.write("b.txt", "bee");
    let out = p.ok(&["checkpoint", "before the refactor", "--note", "tests pass"]);
    assert!(out.starts_with("checkpoint "), "{out}");
    assert!(out.contains("(manual, 1 of 50 in this session)"), "{out}");
    // What it holds (src/app.py, a.txt, b.txt) and what it changed.
    assert!(out.contains("captured 3 file(s), 18 byte(s)"), "{out}");
    assert!(out.contains("1 added, 0 modified, 0 deleted"), "{out}");
    p.turn("a.txt", "two");
    let snaps = p.snapshots();
    let kinds: Vec<(&str, u64)> = snaps.iter().map(|s| (s.1.as_str(), s.2)).collect();
    // The agent's turns are 1 and 2 as if the manual one were not there.
    assert_eq!(
        kinds,
        [
            ("baseline", 0),
            ("message", 1),
            ("turn", 1),
            ("manual", 1),
            ("message", 2),
            ("turn", 2)
        ]
    );
    let manual = &snaps[3];
    assert_eq!(manual.3.as_deref(), Some("before the refactor"));
    let c = p.exported_one(&manual.0);
    assert_eq!(c["note"], "tests pass");
    assert_eq!(c["label"], "before the refactor");
}

#[test]
fn the_51st_manual_checkpoint_is_refused_saying_how_to_label_one_instead() {
    let p = P::new();
    for i in 1..=50 {
        p.write("n.txt", i.to_string());
        p.ok(&["checkpoint", &format!("cp {i}")]);
    }
    let before = std::fs::read(p.session()).unwrap();
    let err = p.refused(&["checkpoint", "one more"]);
    assert!(
        err.contains("already holds 50 manual checkpoints")
            && err.contains("rewind label ENTRY NAME")
            && err.contains("max_manual_per_session"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(p.session()).unwrap(),
        before,
        "nothing appended"
    );
    // A setting changes the cap.
    std::fs::write(
        p.store.path().join("config.toml"),
        "[checkpoints]\nmax_manual_per_session = 51\n",
    )
    .unwrap();
    assert!(p
        .ok(&["checkpoint", "one more"])
        .contains("(manual, 51 of 51 in this session)"));
}

#[test]
fn a_label_changes_only_what_it_is_given_and_bad_input_writes_nothing() {
    let p = P::new();
    p.turn("a.txt", "one");
    let turn = p.snapshots()[2].0.clone();
    let shown = |id: &str| {
        let c = p.exported_one(id);
        (c["label"].clone(), c["note"].clone())
    };
    let automatic = shown(&turn).0;
    assert!(
        automatic.as_str().unwrap().contains("(exit 0)"),
        "{automatic}"
    );

    // A note alone keeps the automatic label.
    let out = p.ok(&["label", &turn, "--note", "checked by hand"]);
    assert!(out.contains("note \"checked by hand\""), "{out}");
    assert_eq!(shown(&turn), (automatic.clone(), json!("checked by hand")));
    // A label alone keeps the note.
    p.ok(&["label", &turn, "good state"]);
    assert_eq!(
        shown(&turn),
        (json!("good state"), json!("checked by hand"))
    );
    // The same again appends nothing.
    let lines = p.entries().len();
    assert!(p
        .ok(&["label", &turn, "good state"])
        .contains("(unchanged)"));
    assert_eq!(p.entries().len(), lines);
    // An empty note removes the note only; --clear removes both.
    p.ok(&["label", &turn, "--note", ""]);
    assert_eq!(shown(&turn), (json!("good state"), Value::Null));
    p.ok(&["label", &turn, "--note", "again"]);
    p.ok(&["label", &turn, "--clear"]);
    assert_eq!(shown(&turn), (automatic, Value::Null));

    // Bad input: one line, and the session file not touched.
    let before = std::fs::read(p.session()).unwrap();
    let long = "x".repeat(4097);
    let label_entry = p
        .entries()
        .iter()
        .rev()
        .find(|e| e["type"] == "label")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .unwrap();
    for (args, says) in [
        (vec!["label", "feedbeef", "x"], "unknown entry id"),
        (vec!["label", &label_entry, "x"], "is not a checkpoint"),
        (vec!["label", &turn, &long], "4097 bytes long; at most 4096"),
        (
            vec!["label", &turn, "--note", &long],
            "the note is 4097 bytes",
        ),
        (vec!["label", &turn, "a\u{1b}[2Jb"], "control character"),
        (vec!["label", &turn, "two\nlines"], "a label is one line"),
        (vec!["label", &turn, "x\u{202e}y"], "control character"),
        (vec!["label", &turn], "nothing to set"),
        (vec!["checkpoint", &long], "4097 bytes long"),
        (
            vec!["checkpoint", "ok", "--note", "a\u{7}"],
            "control character",
        ),
    ] {
        let err = p.refused(&args);
        assert!(err.contains(says), "{args:?}: {err}");
        // The control character itself is never echoed raw.
        assert!(!err.contains('\u{1b}'), "{err:?}");
    }
    assert_eq!(std::fs::read(p.session()).unwrap(), before);
    // A note may span lines.
    p.ok(&["label", &turn, "--note", "line one\nline two"]);
    assert_eq!(shown(&turn).1, json!("line one\nline two"));
}

/// A Claude Code hook event in `p` (each hook alone); (exit code, stdout,
/// stderr).
fn hook(p: &P, event: &str, extra: Value) -> (i32, String, String) {
    hook_via(p, event, extra, false)
}

/// [`hook`], through the hook server when `server`.
fn hook_via(p: &P, event: &str, extra: Value, server: bool) -> (i32, String, String) {
    let mut payload = json!({
        "session_id": "6f1c2f5e-7d4e-4a59-9b43-1f0f3e1c2a10",
        "transcript_path": "/dev/null",
        "cwd": p.dir.path().to_str().unwrap(),
        "hook_event_name": event,
    });
    for (k, v) in extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    let mut child = Command::new(common::bin())
        .args(["hook", "--agent", "claude-code"])
        .env("REWIND_HOME", p.home.path())
        .env("REWIND_SERVER", if server { "1" } else { "0" })
        .env("REWIND_SERVER_IDLE_SECS", "60")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .current_dir(p.dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The hooks' store: the project's default one under `REWIND_HOME`.
fn hook_store(p: &P) -> PathBuf {
    let projects = p.home.path().join("projects");
    std::fs::create_dir_all(&projects).unwrap();
    match std::fs::read_dir(&projects).unwrap().flatten().next() {
        Some(e) => e.path(),
        None => {
            // None yet: `rewind pause` makes it where the hooks look.
            let (_, out, _) = run_home(p, &["status"]);
            let store = out
                .lines()
                .find_map(|l| l.strip_prefix("store    "))
                .unwrap()
                .to_string();
            PathBuf::from(store)
        }
    }
}

/// A command with the default store (the hooks'), in the project.
fn run_home(p: &P, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::bin())
        .args(args)
        .env("REWIND_HOME", p.home.path())
        .env("RUST_LOG", "warn")
        .current_dir(p.dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sessions_in(store: &Path) -> usize {
    std::fs::read_dir(store.join("sessions"))
        .map(|d| d.flatten().count())
        .unwrap_or(0)
}

#[test]
fn a_pause_stands_down_hooks_watch_and_mcp_but_not_a_person() {
    let p = P::new();
    let store = hook_store(&p);
    let (code, out, _) = run_home(&p, &["pause"]);
    assert_eq!(code, 0);
    assert!(out.contains("automatic checkpoints paused since "), "{out}");
    let (_, status, _) = run_home(&p, &["status"]);
    assert!(
        status.contains("paused   automatic checkpoints paused since "),
        "{status}"
    );

    // A hook exits 0, prints nothing, records nothing.
    for (event, extra) in [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": "edit"})),
        ("Stop", json!({})),
    ] {
        assert_eq!(hook(&p, event, extra), (0, String::new(), String::new()));
    }
    // Through the hook server too: none is started for a paused project.
    assert_eq!(
        hook_via(&p, "UserPromptSubmit", json!({"prompt": "edit"}), true),
        (0, String::new(), String::new())
    );
    assert_eq!(sessions_in(&store), 0, "no session was started");
    assert!(!store.join("server").join("hook.sock").exists());

    // `watch` waits for the resume and records nothing meanwhile.
    let (code, _, err) = run_home(&p, &["watch", "--for-seconds", "0.5"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("paused since"), "{err}");
    assert_eq!(sessions_in(&store), 0);

    // MCP takes no automatic checkpoint on start; a person's checkpoint is
    // taken all the same (here the first of a new session).
    let (code, out, err) = run_home(&p, &["checkpoint", "by hand"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(manual, 1 of 50"), "{out}");
    let session = std::fs::read_dir(store.join("sessions"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let lines = std::fs::read_to_string(&session).unwrap().lines().count();
    p.write("src/app.py", "print('changed while paused')\n");
    let mut mcp = crate::mcp::Mcp::start(p.dir.path(), p.home.path());
    let list = mcp.call("list_checkpoints", json!({}));
    assert_eq!(list["structuredContent"]["total"], 2, "{list}");
    drop(mcp);
    assert_eq!(
        std::fs::read_to_string(&session).unwrap().lines().count(),
        lines,
        "no `outside` checkpoint while paused"
    );

    // Resumed: the next event records (what changed meanwhile with it).
    assert!(run_home(&p, &["resume"]).1.contains("resumed"));
    let (_, status, _) = run_home(&p, &["status"]);
    assert!(!status.contains("paused"), "{status}");
    assert_eq!(hook(&p, "UserPromptSubmit", json!({"prompt": "edit"})).0, 0);
    assert_eq!(sessions_in(&store), 2, "the hook's own session");
}

#[test]
fn status_names_what_the_latest_checkpoint_left_out_and_how_to_include_it() {
    let p = P::new();
    // Over the 16 MiB size cap.
    let big = std::fs::File::create(p.dir.path().join("big.bin")).unwrap();
    big.set_len(20 * 1024 * 1024).unwrap();
    p.ok(&["checkpoint", "with a big file"]);
    let out = p.ok(&["status"]);
    assert!(
        out.contains("nothing changed since the latest checkpoint"),
        "{out}"
    );
    assert!(
        out.contains("not protected: 1 path(s) the latest checkpoint left out:")
            && out.contains("  big.bin (tooLarge): over the size cap"),
        "{out}"
    );
}

/// Ids, times, hashes and temporary paths out of a transcript.
fn redact(text: &str, p: &P) -> String {
    let mut s = text.replace(p.store.path().to_str().unwrap(), "[store]");
    let root = p.dir.path().canonicalize().unwrap();
    s = s.replace(root.to_str().unwrap(), "[project]");
    let mut out = String::new();
    for word in s.split_inclusive(['`', ' ', '|', '\n']) {
        let core = word.trim_end_matches(['`', ' ', '|', '\n']);
        let tail = &word[core.len()..];
        let redacted = if core.len() == 8 && core.chars().all(|c| c.is_ascii_hexdigit()) {
            "[id]".to_string()
        } else if core.len() >= 20 && core.starts_with("20") && core.ends_with('Z') {
            "[time]".to_string()
        } else if let Some(i) = core.find("/sessions/") {
            format!("{}/sessions/[session].jsonl", &core[..i])
        } else {
            core.to_string()
        };
        out.push_str(&redacted);
        out.push_str(tail);
    }
    out
}

#[test]
fn export_lists_every_checkpoint_in_order_with_label_note_files_and_lines() {
    let p = P::new();
    p.turn("src/app.py", "print(1)\nprint(2)\n");
    p.ok(&[
        "checkpoint",
        "reviewed",
        "--note",
        "the | pipes stay\nin their cell",
    ]);
    p.turn("a.txt", "alpha\n");
    let turn2 = p.snapshots()[5].0.clone();
    p.ok(&["label", &turn2, "--note", "adds a.txt"]);

    let json = p.exported();
    let kinds: Vec<&str> = json.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["baseline", "message", "turn", "manual", "message", "turn"]
    );
    let t1 = &json[2];
    assert_eq!(
        t1["files"],
        json!([{"path": "src/app.py", "status": "modified", "additions": 2, "deletions": 1}])
    );
    assert_eq!(
        (t1["additions"].as_u64(), t1["deletions"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(json[3]["note"], "the | pipes stay\nin their cell");
    assert_eq!(json[5]["note"], "adds a.txt");
    assert_eq!(json[5]["files"][0]["status"], "added");

    // By session id, as `rewind sessions` shows it; Markdown.
    let id = p
        .session()
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .rsplit_once('_')
        .unwrap()
        .1
        .to_string();
    let md = p.ok(&["export", "--session", &id]);
    insta::assert_snapshot!("export_md", redact(&md, &p));
    let err = p.refused(&["export", "--session", "no-such-session"]);
    assert!(err.contains("no session \"no-such-session\""), "{err}");

    // A session a sidecar holds and writes reads as it stands (no lock).
    let mut side = common::Sidecar::spawn(&[
        "--cwd",
        p.dir.path().to_str().unwrap(),
        "--store",
        p.store.path().to_str().unwrap(),
        "--session",
        p.session().to_str().unwrap(),
    ]);
    side.ok("initialize", json!({}));
    p.write("b.txt", "bee\n");
    side.ok("snapshot", json!({"label": "held"}));
    let held = p.exported();
    assert_eq!(held.last().unwrap()["label"], "held");
    assert!(side.finish().success());
}

/// One request to `rewind ui`.
fn post(port: u16, secret: &str, path: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Rewind-Token: {secret}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn the_pages_note_edit_keeps_the_label_and_its_checkpoint_button_records_one() {
    let p = P::new();
    p.turn("a.txt", "one");
    let turn = p.snapshots()[2].0.clone();
    p.ok(&["label", &turn, "keep me"]);
    let mut child = p
        .command(&["ui", "--no-open", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let rest = line.trim().strip_prefix("http://127.0.0.1:").unwrap();
    let (port, secret) = rest.split_once("/?token=").unwrap();
    let port: u16 = port.parse().unwrap();
    let write = |params: Value, token: Option<&str>| {
        let mut body = json!({"method": "label", "params": params});
        if let Some(t) = token {
            body["token"] = json!(t);
        }
        post(port, secret, "/api/write", &body)
    };
    // The note alone, as the page sends an edit of the note: the label
    // stays. (Before issue 38 the page sent `"label": null` and lost both.)
    let params = json!({"targetId": turn, "note": "checked"});
    let (status, plan) = write(params.clone(), None);
    assert_eq!(status, 200, "{plan}");
    let (status, done) = write(params, plan["token"].as_str());
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["label"], "keep me");
    assert_eq!(done["result"]["note"], "checked");
    // The checkpoint button: one step, answered with what it captured.
    let (status, made) = post(
        port,
        secret,
        "/api/write",
        &json!({"method": "checkpoint", "params": {"label": "from the page", "note": "n"}}),
    );
    assert_eq!(status, 200, "{made}");
    assert_eq!(made["result"]["manualCount"], 1);
    assert_eq!(made["result"]["files"], 2);
    let (status, bad) = post(
        port,
        secret,
        "/api/write",
        &json!({"method": "checkpoint", "params": {"label": "x".repeat(5000)}}),
    );
    assert_eq!(status, 400, "{bad}");
    let _ = child.kill();
    let _ = child.wait();
    let c = p.exported_one(&turn);
    assert_eq!(
        (c["label"].clone(), c["note"].clone()),
        (json!("keep me"), json!("checked"))
    );
}

#[test]
fn mcp_labels_a_checkpoint_and_records_one_with_a_note() {
    let p = P::new();
    let mut mcp = crate::mcp::Mcp::start(p.dir.path(), p.home.path());
    p.write("src/app.py", "print('two')\n");
    let cp = mcp.call("checkpoint", json!({"label": "two", "note": "why"}));
    let id = cp["structuredContent"]["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(cp["structuredContent"]["manualCount"], 1, "{cp}");
    let r = mcp.call("label", json!({"entryId": id, "label": "renamed"}));
    assert_eq!(r["structuredContent"]["label"], "renamed", "{r}");
    assert_eq!(r["structuredContent"]["note"], "why", "the note stays");
    let bad = mcp.call("label", json!({"entryId": "feedbeef", "note": "x"}));
    assert_eq!(bad["isError"], true, "{bad}");
}
