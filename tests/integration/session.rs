//! Session-file behaviour through the binary: resume, torn tails, locks,
//! re-initialization, lazy initialization, shutdown and EOF, the on-disk
//! format, and the persistent stat cache.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{skip_or_fail, Fixture, Sidecar};

fn init_params(fx: &Fixture, extra: Value) -> Value {
    let mut p = json!({
        "cwd": fx.project.path().to_str().unwrap(),
        "storeDir": fx.store.path().to_str().unwrap(),
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

/// Open (resume) `session` in a new sidecar.
fn resume(fx: &Fixture, session: &str) -> (Sidecar, Value) {
    fx.start(json!({ "sessionFile": session }))
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn is_iso(s: &str) -> bool {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok()
        && s.ends_with('Z')
}

// ------------------------------------------------------------------ resume

#[test]
fn resume_of_an_unchanged_disk_appends_nothing() {
    let fx = Fixture::new();
    fx.write("a.txt", "one");
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    let baseline = init["baseline"].clone();
    fx.write("a.txt", "two");
    let snap = s.ok("snapshot", json!({}));
    s.ok("append_entry", json!({"entryId": "host-1", "text": "hi"}));
    let lab = s.ok("label", json!({"targetId": snap["entryId"], "label": "L"}));
    assert!(s.finish().success());
    let before = std::fs::read(&session).unwrap();

    let (mut s, init) = resume(&fx, &session);
    assert_eq!(init["resumed"], true, "{init}");
    assert_eq!(init["sessionFile"], session.as_str());
    assert_eq!(
        init["baseline"], baseline,
        "baseline is the session's first snapshot"
    );
    assert_eq!(init["leafId"], lab["entryId"], "the leaf is the last entry");
    assert!(init.get("recovered").is_none(), "{init}");
    assert_eq!(std::fs::read(&session).unwrap(), before, "nothing appended");
    // The leaf is the last line, and the label is known again.
    let tree = s.ok("get_tree", json!({}));
    assert_eq!(tree["leafId"], lab["entryId"]);
    let cps = s.ok("list_checkpoints", json!({"query": "L"}));
    assert_eq!(cps["checkpoints"][0]["entryId"], snap["entryId"], "{cps}");
    // An unchanged snapshot after resume appends nothing either.
    let r = s.ok("snapshot", json!({}));
    assert!(r["entryId"].is_null(), "{r}");
    assert!(s.finish().success());
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn resume_records_edits_made_while_no_sidecar_ran() {
    let fx = Fixture::new();
    fx.write("a.txt", "one");
    fx.write("gone.txt", "bye");
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    s.ok("append_entry", json!({"entryId": "msg-1"}));
    assert!(s.finish().success());

    fx.write("a.txt", "edited outside");
    fx.write("new.txt", "new");
    fx.remove("gone.txt");
    let (mut s, init) = resume(&fx, &session);
    assert_eq!(init["resumed"], true);
    let outside = init["recovered"]["outsideEntryId"].clone();
    assert!(outside.is_string(), "{init}");
    assert_eq!(init["leafId"], outside, "{init}");
    let cps = s.ok("list_checkpoints", json!({}));
    let list = cps["checkpoints"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{cps}");
    let last = &list[1];
    assert_eq!(last["entryId"], outside);
    assert_eq!(last["kind"], "outside");
    assert_eq!(last["parentId"], "msg-1", "appended at the leaf");
    assert_eq!(
        last["turnIndex"], 1,
        "one more than the checkpoint at the parent"
    );
    assert_eq!(
        (
            last["added"].clone(),
            last["modified"].clone(),
            last["deleted"].clone()
        ),
        (json!(1), json!(1), json!(1))
    );
    let m = s.ok("get_modified_files", json!({}));
    let files: Vec<(String, String, Value)> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().into(),
                f["status"].as_str().unwrap().into(),
                f["entryId"].clone(),
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("a.txt".into(), "modified".into(), outside.clone()),
            ("gone.txt".into(), "deleted".into(), outside.clone()),
            ("new.txt".into(), "added".into(), outside.clone()),
        ]
    );
    // Exactly one entry was appended.
    let entries = lines(Path::new(&session));
    assert_eq!(entries.len(), 1 + 3, "header, baseline, msg-1, outside");
    // Resuming again: the disk now matches, nothing more.
    assert!(s.finish().success());
    let (s, init) = resume(&fx, &session);
    assert!(init.get("recovered").is_none(), "{init}");
    drop(s);
    assert_eq!(lines(Path::new(&session)).len(), 4);
}

// --------------------------------------------------------------- torn tail

fn session_with_some_entries(fx: &Fixture) -> (String, Value) {
    fx.write("a.txt", "a");
    let (mut s, init) = fx.start(json!({}));
    fx.write("a.txt", "b");
    s.ok("snapshot", json!({}));
    assert!(s.finish().success());
    (init["sessionFile"].as_str().unwrap().to_string(), init)
}

#[test]
fn a_torn_tail_that_does_not_parse_is_truncated() {
    let fx = Fixture::new();
    let (session, _) = session_with_some_entries(&fx);
    let good = std::fs::read(&session).unwrap();
    let leaf = lines(Path::new(&session)).last().unwrap()["id"].clone();
    let garbage = br#"{"type":"message","id":"abcd1234","parentId":"#;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&session)
        .unwrap()
        .write_all(garbage)
        .unwrap();
    let (mut s, init) = resume(&fx, &session);
    assert_eq!(init["recovered"]["tornTail"], "truncated", "{init}");
    assert_eq!(init["recovered"]["truncatedBytes"], garbage.len(), "{init}");
    assert_eq!(init["leafId"], leaf);
    assert_eq!(
        std::fs::read(&session).unwrap(),
        good,
        "cut back to the last whole line"
    );
    // Appends continue on a line of their own.
    s.ok("append_entry", json!({"entryId": "after"}));
    assert!(s.finish().success());
    let all = lines(Path::new(&session));
    assert_eq!(all.last().unwrap()["id"], "after");
    assert_eq!(all.last().unwrap()["parentId"], leaf);
}

#[test]
fn a_torn_tail_that_parses_is_completed() {
    let fx = Fixture::new();
    let (session, _) = session_with_some_entries(&fx);
    let good = std::fs::read(&session).unwrap();
    let leaf = lines(Path::new(&session)).last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let line = format!(
        r#"{{"type":"message","id":"host-tail","parentId":"{leaf}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"x"}}}}"#
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(&session)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let (mut s, init) = resume(&fx, &session);
    assert_eq!(init["recovered"]["tornTail"], "completed", "{init}");
    assert_eq!(init["leafId"], "host-tail", "{init}");
    let mut want = good.clone();
    want.extend_from_slice(line.as_bytes());
    want.push(b'\n');
    assert_eq!(std::fs::read(&session).unwrap(), want);
    s.ok("append_entry", json!({"entryId": "after"}));
    assert!(s.finish().success());
    let all = lines(Path::new(&session));
    assert_eq!(all.last().unwrap()["parentId"], "host-tail");
}

// -------------------------------------------------------------------- lock

#[test]
fn a_second_sidecar_on_the_same_session_gets_1004_and_the_first_keeps_working() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut first, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    let before = std::fs::read(&session).unwrap();

    let mut second = fx.spawn();
    let e = second.err(
        "initialize",
        init_params(&fx, json!({"sessionFile": session})),
    );
    assert_eq!(e["code"], 1004, "{e}");
    assert_eq!(
        std::fs::read(&session).unwrap(),
        before,
        "the loser wrote nothing"
    );
    // The second process is still alive and answers.
    let r = second.call("stats", json!({}));
    assert!(r.get("id").is_some(), "{r}");
    assert!(second.finish().success());

    fx.write("a.txt", "b");
    let r = first.ok("snapshot", json!({}));
    assert!(r["entryId"].is_string(), "{r}");
    assert!(first.finish().success());
}

// ------------------------------------------------------- re-initialization

#[test]
fn a_second_initialize_releases_the_first_session() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut s, a) = fx.start(json!({}));
    let a_file = a["sessionFile"].as_str().unwrap().to_string();
    let other = tempfile::tempdir().unwrap();
    let b_file = other.path().join("b.jsonl");
    let b = s.ok(
        "initialize",
        init_params(&fx, json!({"sessionFile": b_file.to_str().unwrap()})),
    );
    assert_eq!(b["sessionFile"], b_file.to_str().unwrap());
    assert_eq!(b["resumed"], false);
    assert_ne!(b["sessionId"], a["sessionId"]);
    // A is free: another process can open it now.
    let (other_side, init) = resume(&fx, &a_file);
    assert_eq!(init["resumed"], true);
    // Requests now go to B.
    fx.write("a.txt", "b");
    let r = s.ok("snapshot", json!({}));
    let tree = s.ok("get_tree", json!({}));
    assert_eq!(tree["leafId"], r["entryId"]);
    assert_eq!(lines(&b_file).last().unwrap()["id"], r["entryId"]);
    // Both stores list: the session outside sessions/ is registered.
    let st = s.ok("stats", json!({}));
    assert_eq!(st["sessions"], 2, "{st}");
    assert!(other_side.finish().success());
    assert!(s.finish().success());
}

#[test]
fn a_failed_second_initialize_keeps_the_previous_session_open() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut holder, held) = fx.start(json!({}));
    let held_file = held["sessionFile"].as_str().unwrap().to_string();

    let other = tempfile::tempdir().unwrap();
    let mine = other.path().join("mine.jsonl");
    let mut s = fx.spawn();
    s.ok(
        "initialize",
        init_params(&fx, json!({"sessionFile": mine.to_str().unwrap()})),
    );
    let e = s.err(
        "initialize",
        init_params(&fx, json!({"sessionFile": held_file})),
    );
    assert_eq!(e["code"], 1004, "{e}");
    // Still on `mine`, still locked by us.
    fx.write("a.txt", "changed");
    let r = s.ok("snapshot", json!({}));
    assert!(r["entryId"].is_string(), "{r}");
    assert_eq!(lines(&mine).last().unwrap()["id"], r["entryId"]);
    let mut third = fx.spawn();
    let e = third.err(
        "initialize",
        init_params(&fx, json!({"sessionFile": mine.to_str().unwrap()})),
    );
    assert_eq!(e["code"], 1004, "the previous session is still locked: {e}");
    drop(third);
    // The holder was not disturbed.
    holder.ok("get_tree", json!({}));
    assert!(holder.finish().success());
    assert!(s.finish().success());
}

#[test]
fn initialize_twice_on_the_same_session_file_reopens_it() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    let again = s.ok(
        "initialize",
        init_params(&fx, json!({"sessionFile": session})),
    );
    assert_eq!(again["resumed"], true, "{again}");
    assert_eq!(again["sessionId"], init["sessionId"]);
    assert_eq!(again["leafId"], init["leafId"]);
    assert!(s.finish().success());
}

// ------------------------------------------------------ lazy / shutdown / EOF

#[test]
fn without_initialize_the_first_request_opens_a_session_with_cli_defaults() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let mut s = fx.spawn();
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["changed"], false, "the baseline was just taken: {r}");
    assert!(r["entryId"].is_null(), "{r}");
    let sessions = fx.session_files();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let st = s.ok("stats", json!({}));
    assert_eq!(st["projectRoot"], fx.root().to_str().unwrap());
    assert_eq!(st["snapshots"], 1);
    fx.write("a.txt", "b");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["a.txt"]));
    assert!(s.finish().success());
}

#[test]
fn lazy_initialization_uses_the_session_flag() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let other = tempfile::tempdir().unwrap();
    let session = other.path().join("named.jsonl");
    let mut s = Sidecar::spawn(&[
        "--cwd",
        fx.project.path().to_str().unwrap(),
        "--store",
        fx.store.path().to_str().unwrap(),
        "--session",
        session.to_str().unwrap(),
    ]);
    let t = s.ok("get_tree", json!({}));
    assert_eq!(
        t["entries"].as_array().unwrap().len(),
        1,
        "the baseline: {t}"
    );
    assert!(s.finish().success());
    let all = lines(&session);
    assert_eq!(all[0]["type"], "session");
    assert_eq!(all[1]["id"], t["leafId"]);
    assert!(fx.session_files().is_empty(), "{:?}", fx.session_files());
}

#[test]
fn a_file_that_is_not_a_session_is_refused_untouched() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let other = tempfile::tempdir().unwrap();
    for content in [
        &b"hello, world\n"[..],
        b"",
        b"{\"type\":\"session\",\"version\":99,\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
    ] {
        let path = other.path().join("not-a-session.jsonl");
        std::fs::write(&path, content).unwrap();
        let mut s = fx.spawn();
        let v = s.call(
            "initialize",
            init_params(&fx, json!({"sessionFile": path.to_str().unwrap()})),
        );
        assert!(v.get("error").is_some(), "{v}");
        assert_eq!(std::fs::read(&path).unwrap(), content, "untouched");
        // Still serving.
        let v = s.call("shutdown", Value::Null);
        assert!(v.get("result").is_some(), "{v}");
        assert!(s.wait().success());
    }
}

#[test]
fn lazy_initialization_also_works_in_the_pi_envelope() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let mut s = fx.spawn();
    s.send(&json!({"id": "q", "type": "list_checkpoints"}));
    let r = s.recv();
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["data"]["checkpoints"][0]["kind"], "baseline", "{r}");
    assert!(s.finish().success());
}

#[test]
fn shutdown_as_the_first_request_initializes_nothing() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let mut s = fx.spawn();
    let r = s.call("shutdown", Value::Null);
    assert_eq!(r["result"], json!({}), "{r}");
    let status = s.wait();
    assert!(status.success(), "{status:?}");
    assert!(fx.session_files().is_empty(), "{:?}", fx.session_files());
    // Nothing at all written under the store's sessions/.
    assert!(!fx.store.path().join("sessions").exists() || fx.session_files().is_empty());
}

#[test]
fn shutdown_flushes_exits_zero_and_reads_no_further() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    // shutdown and a request behind it in the same write.
    let mut bytes = br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#.to_vec();
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(
        br#"{"jsonrpc":"2.0","id":"late","method":"snapshot","params":{"kind":"manual"}}"#,
    );
    bytes.extend_from_slice(b"\n");
    let before = std::fs::read(&session).unwrap();
    s.send_raw(&bytes);
    let rest = s.drain();
    let replies: Vec<Value> = rest
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        replies.first().map(|r| r["id"].clone()),
        Some(json!("bye")),
        "{rest:?}"
    );
    assert!(
        replies
            .iter()
            .all(|r| r["id"] != "late" || r.get("error").is_some()),
        "nothing is done after shutdown: {rest:?}"
    );
    assert!(s.wait().success());
    assert_eq!(
        std::fs::read(&session).unwrap(),
        before,
        "the manual snapshot was not taken"
    );
    // The lock is released.
    let (s2, init) = resume(&fx, &session);
    assert_eq!(init["resumed"], true);
    drop(s2);
}

#[test]
fn eof_exits_zero_and_releases_the_lock() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    let status = s.finish();
    assert!(status.success(), "{status:?}");
    let (mut s, init) = resume(&fx, &session);
    assert_eq!(init["resumed"], true, "{init}");
    s.ok("snapshot", json!({}));
    assert!(s.finish().success());
}

#[test]
fn eof_right_after_a_request_still_answers_it() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut s, _) = fx.start(json!({}));
    fx.write("a.txt", "b");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"snapshot\"}\n");
    s.close_stdin();
    let rest = s.drain();
    assert_eq!(rest.len(), 1, "{rest:?}");
    let v: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["diff"]["modified"], json!(["a.txt"]), "{v}");
    assert!(s.wait().success());
}

// ----------------------------------------------------------------- format

#[test]
fn the_session_file_is_valid_pi_v3() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    fx.write("b.txt", "b");
    let (mut s, init) = fx.start(json!({}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    // Named <timestamp>_<sessionId>.jsonl under <store>/sessions/.
    assert_eq!(session.parent().unwrap(), fx.store.path().join("sessions"));
    let name = session.file_name().unwrap().to_str().unwrap();
    assert!(
        name.ends_with(&format!("_{}.jsonl", init["sessionId"].as_str().unwrap())),
        "{name}"
    );
    s.ok(
        "append_entry",
        json!({"entryId": "u1", "role": "user", "text": "go"}),
    );
    fx.write("a.txt", "a2");
    fx.remove("b.txt");
    fx.write("c.txt", "c");
    let t1 = s.ok(
        "snapshot",
        json!({"kind": "tool", "tool": {"name": "edit", "input": {"x": 1}}, "label": "L1"}),
    );
    s.ok(
        "label",
        json!({"targetId": t1["entryId"], "label": "named", "note": "n"}),
    );
    fx.write("c.txt", "c2");
    s.ok("snapshot", json!({"turnIndex": 9}));
    assert!(s.finish().success());

    let all = lines(&session);
    let header = &all[0];
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert_eq!(header["id"], init["sessionId"]);
    assert!(is_iso(header["timestamp"].as_str().unwrap()), "{header}");
    assert_eq!(header["cwd"], fx.root().to_str().unwrap());

    let mut by_id: HashMap<String, &Value> = HashMap::new();
    for (i, e) in all[1..].iter().enumerate() {
        let id = e["id"].as_str().unwrap();
        if id != "u1" {
            assert!(is_hex(id, 8), "sidecar ids are 8 hex: {e}");
        }
        assert!(is_iso(e["timestamp"].as_str().unwrap()), "{e}");
        match &e["parentId"] {
            Value::Null => assert_eq!(i, 0, "only the first entry is a root: {e}"),
            Value::String(p) => assert!(by_id.contains_key(p), "parent precedes child: {e}"),
            other => panic!("parentId {other}"),
        }
        assert!(by_id.insert(id.to_string(), e).is_none(), "unique ids");
    }
    // Types in order: baseline, message, tool snapshot, label, turn snapshot.
    let kinds: Vec<String> = all[1..]
        .iter()
        .map(|e| {
            format!(
                "{}/{}",
                e["type"].as_str().unwrap(),
                e["customType"]
                    .as_str()
                    .or(e["data"]["kind"].as_str())
                    .unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "custom/step-snapshot",
            "message/",
            "custom/step-snapshot",
            "label/",
            "custom/step-snapshot"
        ]
    );
    // The leaf chain: each appended at the previous leaf.
    for w in all[1..].windows(2) {
        assert_eq!(w[1]["parentId"], w[0]["id"], "{}", w[1]);
    }
    let snaps: Vec<&Value> = all[1..]
        .iter()
        .filter(|e| e["customType"] == "step-snapshot")
        .collect();
    let mut prev_tree: Option<Value> = None;
    for (n, e) in snaps.iter().enumerate() {
        let d = &e["data"];
        for key in ["baselineTreeHash", "snapshotTreeHash"] {
            assert!(is_hex(d[key].as_str().unwrap(), 32), "{key}: {e}");
        }
        for key in ["added", "modified", "deleted"] {
            assert!(d["diff"][key].is_array(), "{e}");
        }
        assert!(d["turnIndex"].is_u64(), "{e}");
        assert!(d["kind"].is_string(), "{e}");
        // The diff is against the checkpoint at the parent.
        if let Some(p) = &prev_tree {
            assert_eq!(&d["baselineTreeHash"], p, "{e}");
        }
        prev_tree = Some(d["snapshotTreeHash"].clone());
        if n == 0 {
            assert_eq!(d["kind"], "baseline");
            assert_eq!(d["turnIndex"], 0);
            assert_eq!(d["diff"]["added"], json!(["a.txt", "b.txt"]));
            assert_eq!(d["snapshotTreeHash"], init["baseline"]["treeHash"]);
        }
    }
    let tool = snaps[1];
    assert_eq!(tool["data"]["kind"], "tool");
    assert_eq!(tool["data"]["turnIndex"], 1);
    assert_eq!(
        tool["data"]["tool"],
        json!({"name": "edit", "input": {"x": 1}})
    );
    assert_eq!(
        tool["data"]["diff"],
        json!({"added": ["c.txt"], "modified": ["a.txt"], "deleted": ["b.txt"]})
    );
    assert_eq!(snaps[2]["data"]["turnIndex"], 9);
    assert_eq!(snaps[2]["data"]["kind"], "turn");
    let label = all.iter().find(|e| e["type"] == "label").unwrap();
    assert_eq!(label["targetId"], t1["entryId"]);
    assert_eq!(label["label"], "named");
    assert_eq!(label["note"], "n");
    let msg = all.iter().find(|e| e["id"] == "u1").unwrap();
    assert_eq!(msg["type"], "message");
    assert_eq!(msg["message"]["role"], "user");
}

#[test]
fn a_git_project_records_branch_and_head() {
    let have_git = std::process::Command::new("git")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let fx = Fixture::new();
    if have_git {
        let ok = std::process::Command::new("git")
            .args(["init", "-q", "-b", "trunk"])
            .current_dir(fx.project.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    } else {
        skip_or_fail("git is not installed: the branch is read from a hand-written .git/HEAD");
        fx.write(".git/HEAD", "ref: refs/heads/trunk\n");
    }
    fx.write("a.txt", "a");
    let (mut s, init) = fx.start(json!({}));
    fx.write("a.txt", "b");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["git"]["branch"], "trunk", "{r}");
    assert!(s.finish().success());
    let all = lines(Path::new(init["sessionFile"].as_str().unwrap()));
    assert_eq!(all.last().unwrap()["data"]["git"]["branch"], "trunk");
}

// -------------------------------------------------------------- stat cache

#[test]
fn after_a_restart_an_unchanged_tree_is_not_rehashed() {
    let fx = Fixture::new();
    for i in 0..20 {
        fx.write(&format!("dir{}/f{i}.txt", i % 3), format!("content {i}"));
    }
    // Older than the racy window (two seconds for whole-second
    // timestamps), so the scan's stat cache vouches for them. Ageing the
    // mtime is not enough: the racy rule looks at the ctime too, which
    // nothing can set.
    std::thread::sleep(Duration::from_millis(2_100));
    let (s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    assert!(s.finish().success());

    // Without the watcher, the restart walks the project once (the stat
    // cache keeps it from reading files); after that the last scan's stats
    // say nothing changed, so no walk at all.
    let (mut s, init) = fx.start(json!({ "sessionFile": session, "options": {"watch": false} }));
    assert!(init.get("recovered").is_none(), "{init}");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["stats"]["filesScanned"], 0, "{r}");
    assert_eq!(r["stats"]["filesHashed"], 0, "{r}");
    assert_eq!(r["stats"]["bytesHashed"], 0, "{r}");
    // One changed file is the only one hashed.
    fx.write("dir0/f0.txt", "changed");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["stats"]["filesHashed"], 1, "{r}");
    assert_eq!(r["diff"]["modified"], json!(["dir0/f0.txt"]));
    assert!(s.finish().success());
}

#[test]
fn a_racy_rewrite_with_the_same_size_and_mtime_is_still_detected() {
    let fx = Fixture::new();
    let (mut s, _) = fx.start(json!({}));
    let path = fx.project.path().join("racy.txt");
    fx.write("racy.txt", "aaaa");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["racy.txt"]));
    fx.write("racy.txt", "bbbb");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["racy.txt"]), "{r}");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "racy.txt", "fromEntryId": r["entryId"], "toEntryId": "@working"}),
    );
    assert_eq!(d["oldContent"], "bbbb", "{d}");
}

#[test]
fn a_racy_rewrite_is_detected_across_a_restart() {
    let fx = Fixture::new();
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    let path = fx.project.path().join("racy.txt");
    fx.write("racy.txt", "aaaa");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    s.ok("snapshot", json!({}));
    assert!(s.finish().success());
    fx.write("racy.txt", "bbbb");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let (mut s, init) = resume(&fx, &session);
    let outside = init["recovered"]["outsideEntryId"].clone();
    assert!(outside.is_string(), "the edit is found on resume: {init}");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "racy.txt", "toEntryId": outside}),
    );
    assert_eq!(d["newContent"], "bbbb", "{d}");
    assert!(s.finish().success());
}

/// A host whose sidecar was killed after it recorded a snapshot, before the
/// answer arrived, starts a new sidecar on the session and sends the same
/// request again (`requestId`): it gets the checkpoint recorded, and no
/// second one is appended.
#[test]
fn a_snapshot_sent_again_after_a_crash_is_recorded_once() {
    let fx = Fixture::new();
    fx.write("a.txt", "one");
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    fx.write("a.txt", "two");
    let request = json!({"kind": "tool", "requestId": "host-req-7"});
    let first = s.ok("snapshot", request.clone());
    assert!(first["entryId"].is_string(), "{first}");
    s.kill();
    let (mut s, _) = resume(&fx, &session);
    let again = s.ok("snapshot", request);
    assert_eq!(again["entryId"], first["entryId"]);
    assert_eq!(again["treeHash"], first["treeHash"]);
    assert_eq!(again["diff"], first["diff"]);
    let bad = s.err("snapshot", json!({"requestId": "two words"}));
    assert_eq!(bad["code"], -32602, "{bad}");
    assert!(s.finish().success());
    let lines = std::fs::read_to_string(&session).unwrap();
    assert_eq!(lines.matches(r#""requestId":"host-req-7""#).count(), 1);
}
