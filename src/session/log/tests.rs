use super::*;
use proptest::prelude::*;
use serde_json::{json, Map};

use crate::store::ObjectId;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0f8e4c1a-1111-4222-8333-444455556666","timestamp":"2026-11-21T19:12:00.123Z","cwd":"/abs/project"}"#;

fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> PathBuf {
    let p = dir.path().join(name);
    fs::write(&p, content).unwrap();
    p
}

fn fields(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn id(s: &str) -> EntryId {
    EntryId::from_input(s)
}

fn message(parent: Option<&str>, text: &str) -> NewEntry {
    NewEntry {
        entry_type: "message".into(),
        parent_id: parent.map(id),
        fields: fields(json!({"role":"user","text":text})),
        ..NewEntry::default()
    }
}

/// A tree id named after `name`, as a record writes it.
fn tree(name: &str) -> String {
    ObjectId::of(name.as_bytes()).to_hex()
}

fn snapshot(parent: Option<&str>, t: &str) -> NewEntry {
    NewEntry::custom(
        "step-snapshot",
        parent.map(id),
        json!({"snapshotTreeHash":tree(t),"baselineTreeHash":tree("b"),"turnIndex":0}),
    )
}

#[test]
fn create_append_reopen_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions/deep/s.jsonl");
    let mut log = SessionLog::create(&path, "/abs/project", true).unwrap();
    assert!(log.index().is_empty());
    assert_eq!(log.path(), path);
    let header = log.header().clone();
    assert_eq!(header.version, 3);
    assert_eq!(header.cwd, "/abs/project");

    let base = log.append(snapshot(None, "t0")).unwrap();
    assert_eq!(base.id.as_str().len(), 8);
    assert!(base.id.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
    let m = log.append(message(Some(base.id.as_str()), "hi")).unwrap();
    let mut host = message(Some(base.id.as_str()), "side branch");
    host.id = Some(id("host-msg-1"));
    let h = log.append(host).unwrap();
    assert_eq!(h.id, "host-msg-1");
    let lab = log
        .append(NewEntry {
            entry_type: "label".into(),
            parent_id: Some(m.id.clone()),
            fields: fields(json!({"targetId": base.id, "label": "start", "note": "n"})),
            ..NewEntry::default()
        })
        .unwrap();
    assert_eq!(log.index().leaf().unwrap(), &lab);
    let before: Vec<Entry> = log.index().entries().to_vec();
    drop(log);

    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    assert_eq!(lines.len(), 5);
    assert!(text.ends_with('\n'));
    assert_eq!(lines[0], header.to_line());
    assert!(lines[1].starts_with(&format!(
        r#"{{"type":"custom","customType":"step-snapshot","id":"{}","parentId":null,"timestamp":""#,
        base.id
    )));
    assert!(lines[2].starts_with(r#"{"type":"message","id":""#));

    let (log, report) = SessionLog::open(&path, true).unwrap();
    assert_eq!(report, OpenReport::default());
    assert_eq!(log.header(), &header);
    assert_eq!(log.index().entries(), &before[..]);
    assert_eq!(log.index().leaf().unwrap().id, lab.id);
    assert_eq!(
        log.index().label_of(&base.id),
        Some(("start".into(), Some("n".into())))
    );
    assert_eq!(log.index().checkpoint_at(&h.id).unwrap().id, base.id);
    assert_eq!(log.index().first_snapshot().unwrap().id, base.id);
}

#[test]
fn append_rejects_bad_ids_and_parents_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut log = SessionLog::create(&path, "/p", false).unwrap();
    let base = log.append(snapshot(None, "t0")).unwrap();
    let len = fs::metadata(&path).unwrap().len();

    for bad in ["", "has space", "tab\there", &"x".repeat(65)] {
        let mut e = message(None, "x");
        e.id = Some(id(bad));
        let err = log.append(e).unwrap_err();
        assert!(
            matches!(err, SessionError::BadId { ref id } if id == bad),
            "{err}"
        );
    }
    let mut e = message(None, "x");
    e.id = Some(base.id.clone());
    assert!(matches!(
        log.append(e).unwrap_err(),
        SessionError::DuplicateId { id } if id == base.id
    ));
    assert!(matches!(
        log.append(message(Some("ghost"), "x")).unwrap_err(),
        SessionError::UnknownParent { id } if id == "ghost"
    ));
    assert_eq!(fs::metadata(&path).unwrap().len(), len);
    assert_eq!(log.index().len(), 1);
    assert_eq!(log.index().leaf().unwrap().id, base.id);

    // A 64-char host id is fine; parentId None is written as null.
    let mut e = message(None, "x");
    e.id = Some(id(&"y".repeat(64)));
    let ok = log.append(e).unwrap();
    assert_eq!(ok.raw["parentId"], Value::Null);
}

#[test]
fn unknown_fields_and_types_survive() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"custom","customType":"step-snapshot","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","data":{"snapshotTreeHash":"0123456789abcdef0123456789abcdef","future":{"x":[1,2.5,null,true]}},"extra":"kept"}"#,
        r#"{"type":"model_change","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"m","nested":{"deep":{"deeper":"ü\u2028"}}}"#,
        r#"{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi\nthere"}],"timestamp":1767225602000}}"#,
    ];
    let original = format!("{HEADER}\n{}\n", lines.join("\n"));
    let path = write(&dir, "s.jsonl", &original);
    let (mut log, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, None);
    let ix = log.index();
    assert_eq!(ix.len(), 3);
    for (e, line) in ix.entries().iter().zip(lines) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(Value::Object(e.raw.clone()), v);
        let again: Value = serde_json::from_str(&e.to_line()).unwrap();
        assert_eq!(again, v);
    }
    let mc = ix.get(&id("aaaa0002")).unwrap().clone();
    assert_eq!(mc.entry_type, "model_change");
    assert_eq!(ix.checkpoint_at(&id("aaaa0003")).unwrap().id, "aaaa0001");
    assert_eq!(ix.leaf().unwrap().id, "aaaa0003");

    // Appending never rewrites what was there.
    log.append(message(Some("aaaa0002"), "more")).unwrap();
    drop(log);
    let now = fs::read_to_string(&path).unwrap();
    assert!(now.starts_with(&original));
    let (log, _) = SessionLog::open(&path, false).unwrap();
    assert_eq!(log.index().get(&id("aaaa0002")).unwrap(), &mc);
    assert_eq!(log.index().leaf().unwrap().parent_id, Some(id("aaaa0002")));
}

#[test]
fn torn_tail_that_parses_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let last = r#"{"type":"message","id":"bbbb0002","parentId":"bbbb0001","timestamp":"t"}"#;
    let content = format!(
        "{HEADER}\n{}\n{last}",
        r#"{"type":"custom","customType":"step-snapshot","id":"bbbb0001","parentId":null,"timestamp":"t","data":{"snapshotTreeHash":"0123456789abcdef0123456789abcdef"}}"#
    );
    let path = write(&dir, "s.jsonl", &content);
    let (mut log, report) = SessionLog::open(&path, true).unwrap();
    assert_eq!(report.torn_tail, Some(TornTail::Completed));
    assert_eq!(log.index().leaf().unwrap().id, "bbbb0002");
    assert_eq!(fs::read_to_string(&path).unwrap(), format!("{content}\n"));
    // The next append starts on a line of its own.
    log.append(message(Some("bbbb0002"), "x")).unwrap();
    drop(log);
    let (log, report) = SessionLog::open(&path, true).unwrap();
    assert_eq!(report.torn_tail, None);
    assert_eq!(log.index().len(), 3);
}

#[test]
fn torn_tail_that_does_not_parse_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let good = format!(
        "{HEADER}\n{}\n",
        r#"{"type":"custom","customType":"step-snapshot","id":"cccc0001","parentId":null,"timestamp":"t","data":{"snapshotTreeHash":"0123456789abcdef0123456789abcdef"}}"#
    );
    let garbage = r#"{"type":"message","id":"cccc0002","par"#;
    let path = write(&dir, "s.jsonl", &format!("{good}{garbage}"));
    let (mut log, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(
        report.torn_tail,
        Some(TornTail::Truncated {
            bytes: garbage.len() as u64
        })
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), good);
    assert_eq!(log.index().len(), 1);
    let e = log.append(message(Some("cccc0001"), "x")).unwrap();
    drop(log);
    let (log, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, None);
    assert_eq!(log.index().leaf().unwrap(), &e);

    // Non-UTF-8 and whitespace-only tails are torn too.
    let path = write(&dir, "b.jsonl", &format!("{HEADER}\n"));
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"type\":\xff\xfe")
        .unwrap();
    let (_, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, Some(TornTail::Truncated { bytes: 10 }));
    assert_eq!(fs::read_to_string(&path).unwrap(), format!("{HEADER}\n"));
}

#[test]
fn header_only_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "a.jsonl", &format!("{HEADER}\n"));
    let (log, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, None);
    assert!(log.index().is_empty());
    assert!(log.index().leaf().is_none());
    assert_eq!(log.header().id, "0f8e4c1a-1111-4222-8333-444455556666");
    assert_eq!(log.header().timestamp, "2026-11-21T19:12:00.123Z");
    assert_eq!(log.header().cwd, "/abs/project");

    // An unterminated header is completed like any other last line.
    let path = write(&dir, "b.jsonl", HEADER);
    let (_, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, Some(TornTail::Completed));
    assert_eq!(fs::read_to_string(&path).unwrap(), format!("{HEADER}\n"));
}

#[test]
fn not_a_session_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in [
        ("empty", ""),
        ("blank", "\n\n"),
        ("garbage", "hello world"),
        ("torn-header", r#"{"type":"session","vers"#),
        ("array", "[1,2]\n"),
        (
            "entry-first",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t"}
"#,
        ),
    ] {
        let path = write(&dir, name, content);
        let err = SessionLog::open(&path, false).unwrap_err();
        assert!(
            matches!(err, SessionError::NotASession { ref path } if path.ends_with(name)),
            "{name}: {err}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), content, "{name}");
    }
    let err = SessionLog::open(&dir.path().join("missing"), false).unwrap_err();
    assert!(
        matches!(err, SessionError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
}

#[test]
fn other_versions_and_bad_headers() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/p"}"#;
    let path = write(&dir, "v2", &format!("{v2}\n"));
    assert!(matches!(
        SessionLog::open(&path, false).unwrap_err(),
        SessionError::UnsupportedVersion { version: 2, .. }
    ));
    let v1 = r#"{"type":"session","id":"s","timestamp":"t","cwd":"/p"}"#;
    let path = write(&dir, "v1", &format!("{v1}\n"));
    assert!(matches!(
        SessionLog::open(&path, false).unwrap_err(),
        SessionError::UnsupportedVersion { version: 1, .. }
    ));
    let no_cwd = r#"{"type":"session","version":3,"id":"s","timestamp":"t"}"#;
    let path = write(&dir, "nocwd", &format!("{no_cwd}\n"));
    let err = SessionLog::open(&path, false).unwrap_err();
    assert!(
        matches!(err, SessionError::Malformed { line: 1, ref reason, .. } if reason.contains("cwd")),
        "{err}"
    );
}

#[test]
fn malformed_middle_line_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let e1 = r#"{"type":"custom","customType":"step-snapshot","id":"d1","parentId":null,"timestamp":"t","data":{"snapshotTreeHash":"0123456789abcdef0123456789abcdef"}}"#;
    let e3 = r#"{"type":"message","id":"d3","parentId":"d1","timestamp":"t"}"#;
    // Garbage on line 3, and a torn tail that must not be repaired since open fails.
    let content = format!("{HEADER}\n{e1}\nnot json\n{e3}\n{{\"torn");
    let path = write(&dir, "s.jsonl", &content);
    let err = SessionLog::open(&path, false).unwrap_err();
    assert!(
        matches!(err, SessionError::Malformed { line: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("s.jsonl:3:"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), content);

    // A terminated garbage last line is not a torn tail: it is an error too.
    let path = write(&dir, "t.jsonl", &format!("{HEADER}\n{e1}\n{{\"torn\n"));
    assert!(matches!(
        SessionLog::open(&path, false).unwrap_err(),
        SessionError::Malformed { line: 3, .. }
    ));

    let cases = [
        (
            r#"{"type":"message","parentId":"d1","timestamp":"t"}"#,
            "\"id\"",
        ),
        (
            r#"{"type":"message","id":"d1","parentId":null,"timestamp":"t"}"#,
            "already exists",
        ),
        (
            r#"{"type":"message","id":"d9","parentId":"ghost","timestamp":"t"}"#,
            "ghost",
        ),
        (
            r#"{"type":"message","id":"d9","parentId":7,"timestamp":"t"}"#,
            "parentId",
        ),
    ];
    for (line, needle) in cases {
        let path = write(
            &dir,
            "c.jsonl",
            &format!("{HEADER}\n{e1}\n\n{line}\n{e3}\n"),
        );
        let err = SessionLog::open(&path, false).unwrap_err();
        assert!(
            matches!(err, SessionError::Malformed { line: 4, ref reason, .. } if reason.contains(needle)),
            "{line}: {err}"
        );
    }
}

#[test]
fn blank_lines_and_crlf_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let e1 = r#"{"type":"message","id":"e1","parentId":null,"timestamp":"t"}"#;
    let e2 = r#"{"type":"message","id":"e2","parentId":"e1","timestamp":"t"}"#;
    let path = write(
        &dir,
        "s.jsonl",
        &format!("{HEADER}\r\n\n{e1}\r\n  \n{e2}\r\n"),
    );
    let (log, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, None);
    let ids: Vec<&str> = log
        .index()
        .entries()
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(ids, ["e1", "e2"]);
}

#[test]
fn lock_is_exclusive_and_released_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let log = SessionLog::create(&path, "/p", false).unwrap();
    let err = SessionLog::open(&path, false).unwrap_err();
    assert!(
        matches!(err, SessionError::Locked { path: ref p } if *p == path),
        "{err}"
    );
    assert!(err.to_string().contains("s.jsonl"));
    drop(log);

    let (log, _) = SessionLog::open(&path, false).unwrap();
    // A second open of the same file in this process is a separate open file
    // description, so the flock conflicts.
    assert!(matches!(
        SessionLog::open(&path, false).unwrap_err(),
        SessionError::Locked { .. }
    ));
    drop(log);
    let (_log, _) = SessionLog::open(&path, false).unwrap();

    // create never clobbers an existing file.
    let err = SessionLog::create(&path, "/p", false).unwrap_err();
    assert!(
        matches!(err, SessionError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
    );
}

#[test]
fn a_lock_held_elsewhere_refuses_open_before_anything_is_read_or_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "s.jsonl", &format!("{HEADER}\n{{\"torn"));
    let holder = File::open(&path).unwrap();
    holder.try_lock().unwrap();
    assert!(matches!(
        SessionLog::open(&path, false).unwrap_err(),
        SessionError::Locked { .. }
    ));
    assert!(fs::read_to_string(&path).unwrap().ends_with("{\"torn"));
    drop(holder);
    let (_, report) = SessionLog::open(&path, false).unwrap();
    assert_eq!(report.torn_tail, Some(TornTail::Truncated { bytes: 6 }));
}

/// A lock held by another process. util-linux `flock -o FILE cat` holds an flock on
/// FILE until its stdin closes; skipped where that tool is missing.
#[test]
fn lock_held_by_another_process() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    drop(SessionLog::create(&path, "/p", false).unwrap());
    let Ok(mut child) = Command::new("flock")
        .arg("-o")
        .arg(&path)
        .arg("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
    else {
        eprintln!("flock(1) not available; skipping");
        return;
    };
    // Our own probing must not win the race, so the child uses a blocking flock.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut locked = false;
    while Instant::now() < deadline {
        match SessionLog::open(&path, false) {
            Err(SessionError::Locked { .. }) => {
                locked = true;
                break;
            }
            Ok(held) => drop(held),
            Err(e) => panic!("{e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(child.stdin.take()); // cat sees EOF, flock exits, the lock goes with it
    let status = child.wait().unwrap();
    assert!(locked, "the other process's lock was never seen");
    assert!(status.success());
    assert!(SessionLog::open(&path, false).is_ok());
}

#[test]
fn generated_ids_avoid_existing_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut log = SessionLog::create(&path, "/p", false).unwrap();
    let mut parent: Option<EntryId> = None;
    for _ in 0..200 {
        let e = log
            .append(message(parent.as_ref().map(EntryId::as_str), "x"))
            .unwrap();
        parent = Some(e.id);
    }
    assert_eq!(log.index().len(), 200);
    assert_eq!(
        log.index().path_to_root(parent.as_ref().unwrap()).len(),
        200
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// Random trees survive a reopen: same entries, leaf and checkpoints.
    #[test]
    fn random_trees_round_trip(
        spec in prop::collection::vec((prop::option::weighted(0.9, any::<prop::sample::Index>()), 0u8..4), 1..40)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut log = SessionLog::create(&path, "/p", false).unwrap();
        let mut ids: Vec<EntryId> = Vec::new();
        for (n, (parent, kind)) in spec.iter().enumerate() {
            let parent = parent.as_ref().filter(|_| n > 0).map(|p| ids[p.index(n)].clone());
            let p = parent.as_ref().map(EntryId::as_str);
            let e = match kind {
                0 => snapshot(p, &format!("tree{n}")),
                1 => NewEntry::custom("unrevert-point", parent.clone(),
                    json!({"workingTreeHash": tree(&format!("w{n}")), "preRollbackTreeHash":tree("x")})),
                2 => message(p, &n.to_string()),
                _ => NewEntry { entry_type: "whatever".into(), parent_id: parent.clone(),
                    fields: fields(json!({"k":[n]})), ..NewEntry::default() },
            };
            ids.push(log.append(e).unwrap().id);
        }
        let before = log.index().clone();
        drop(log);
        let (log, report) = SessionLog::open(&path, false).unwrap();
        prop_assert_eq!(report.torn_tail, None);
        let after = log.index();
        prop_assert_eq!(after.entries(), before.entries());
        prop_assert_eq!(after.leaf(), before.leaf());
        for id in &ids {
            prop_assert_eq!(after.checkpoint_at(id), before.checkpoint_at(id));
        }
        prop_assert_eq!(after.latest_working_tree(), before.latest_working_tree());
    }
}

/// A parked log reopened reads only what was appended since — by another
/// writer too — and gives the same index as reading the whole file; a file
/// replaced, or ending in a torn line, is handled as `open` handles it.
#[test]
fn a_parked_log_reopens_by_its_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut log = SessionLog::create(&path, "/p", false).unwrap();
    let a = log.append(message(None, "a")).unwrap();
    let parked = log.park().unwrap();
    // Another process appends while it is parked.
    {
        let (mut other, _) = SessionLog::open(&path, false).unwrap();
        other.append(message(Some(a.id.as_str()), "b")).unwrap();
    }
    let (log, report) = SessionLog::reopen(parked).unwrap();
    assert_eq!(report.torn_tail, None);
    let whole = {
        let bytes = fs::read(&path).unwrap();
        parse(&path, &bytes).unwrap().1
    };
    assert_eq!(log.index().entries().len(), 2);
    assert_eq!(
        log.index()
            .entries()
            .iter()
            .map(|e| &e.id)
            .collect::<Vec<_>>(),
        whole.entries().iter().map(|e| &e.id).collect::<Vec<_>>()
    );
    assert_eq!(log.index().leaf().unwrap().id, whole.leaf().unwrap().id);
    // A torn line appended while parked is cut, as open would.
    let mut log = log;
    log.append(message(None, "c")).unwrap();
    let len = fs::metadata(&path).unwrap().len();
    let parked = log.park().unwrap();
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"type":"message","id":"zz"#)
        .unwrap();
    let (log, report) = SessionLog::reopen(parked).unwrap();
    assert!(matches!(report.torn_tail, Some(TornTail::Truncated { .. })));
    assert_eq!(fs::metadata(&path).unwrap().len(), len);
    assert_eq!(log.index().entries().len(), 3);
    // Replaced by another file: read whole.
    let parked = log.park().unwrap();
    fs::remove_file(&path).unwrap();
    let mut fresh = SessionLog::create(&path, "/p", false).unwrap();
    fresh.append(message(None, "only")).unwrap();
    drop(fresh);
    let (log, _) = SessionLog::reopen(parked).unwrap();
    assert_eq!(log.index().entries().len(), 1);
}
