//! Rollback through the real binary: the pi fork's production cases,
//! AgentSmithy's file-change scenarios, restore_files details (preview,
//! no-op, treeHash, directories, notifications), navigate_tree, undo,
//! approve/reset, and what a restore must never touch.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{disk_dirs, disk_state, session_lines, Fixture, Node, Sidecar};

type Disk = BTreeMap<String, Node>;

fn files(pairs: &[(&str, &str)]) -> Disk {
    pairs
        .iter()
        .map(|(p, c)| (p.to_string(), Node::file(c)))
        .collect()
}

fn start(fx: &Fixture) -> (Sidecar, Value, PathBuf) {
    let (s, init) = fx.start(json!({}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    (s, init, session)
}

fn id(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not an id: {v}"))
        .to_string()
}

fn snap(s: &mut Sidecar) -> String {
    let r = s.ok("snapshot", json!({}));
    id(&r["entryId"])
}

#[track_caller]
fn assert_disk(fx: &Fixture, expected: &Disk) {
    let got = disk_state(&fx.root());
    assert_eq!(
        &got, expected,
        "project files differ from the expected state"
    );
}

/// The session file's entries with this id.
fn entry(session: &Path, entry_id: &str) -> Value {
    session_lines(session)
        .into_iter()
        .find(|l| l["id"] == entry_id)
        .unwrap_or_else(|| panic!("no entry {entry_id} in the session file"))
}

fn line_count(session: &Path) -> usize {
    session_lines(session).len()
}

/// The lines appended since the file had `n` lines.
fn appended_since(session: &Path, n: usize) -> Vec<Value> {
    session_lines(session).into_iter().skip(n).collect()
}

/// Ids on the path from the root to `leaf`, following parentId in get_tree.
fn path_ids(s: &mut Sidecar, leaf: &str) -> Vec<String> {
    let tree = s.ok("get_tree", json!({}));
    let parents: BTreeMap<String, Option<String>> = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (id(&e["id"]), e["parentId"].as_str().map(str::to_string)))
        .collect();
    let mut out = Vec::new();
    let mut cur = Some(leaf.to_string());
    while let Some(c) = cur {
        cur = parents
            .get(&c)
            .unwrap_or_else(|| panic!("{c} not in get_tree"))
            .clone();
        out.push(c);
    }
    out.reverse();
    out
}

fn files_changed(notes: &[Value]) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n["method"] == "files_changed")
        .map(|n| n["params"].clone())
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(id)
        .collect()
}

// ============================================== the pi fork's production cases

#[test]
fn restore_a_file_to_an_earlier_version() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    fx.write("b.txt", "b");
    let (mut s, init, session) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    let s1 = s.ok("snapshot", json!({}));
    fx.write("a.txt", "v3");
    let s2 = s.ok("snapshot", json!({}));

    let r = s.ok("restore_files", json!({"targetEntryId": s1["entryId"]}));
    assert_eq!(r["preview"], false);
    assert_eq!(r["restored"], json!(["a.txt"]), "{r}");
    assert_eq!(r["deleted"], json!([]));
    assert_eq!(r["dirty"], json!([]));
    assert_eq!(r["conflicts"], json!([]));
    assert_eq!(r["skipped"], json!([]));
    assert_disk(&fx, &files(&[("a.txt", "v2"), ("b.txt", "b")]));

    // The unrevert-point records what was replaced and what is on disk now.
    let u = entry(&session, &id(&r["unrevertEntryId"]));
    assert_eq!(u["type"], "custom");
    assert_eq!(u["customType"], "unrevert-point");
    assert_eq!(u["parentId"], s2["entryId"], "appended at the leaf");
    assert_eq!(u["data"]["preRollbackTreeHash"], s2["treeHash"]);
    assert_eq!(u["data"]["workingTreeHash"], s1["treeHash"]);
    assert_eq!(u["data"]["rolledBackToLeaf"], s1["entryId"]);
    assert_eq!(u["data"]["restoredFiles"], json!(["a.txt"]));
    let tree = s.ok("get_tree", json!({}));
    assert_eq!(tree["leafId"], r["unrevertEntryId"]);
    let cps = s.ok("list_checkpoints", json!({}));
    let last = cps["checkpoints"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(last["entryId"], r["unrevertEntryId"], "{cps}");
    assert_eq!(last["kind"], "restore");
    assert_eq!(
        last["turnIndex"], 2,
        "the turn of the snapshot above: {last}"
    );
    assert_eq!(last["modified"], 1, "{last}");
    let hist = s.ok("get_file_history", json!({"filePath": "a.txt"}));
    let kinds: Vec<&str> = hist["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["baseline", "turn", "turn", "restore"], "{hist}");

    let r = s.ok("restore_files", json!({"targetEntryId": base}));
    assert_eq!(r["restored"], json!(["a.txt"]), "{r}");
    assert_disk(&fx, &files(&[("a.txt", "v1"), ("b.txt", "b")]));
}

#[test]
fn files_added_after_the_rollback_point_are_deleted_and_emptied_dirs_removed() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    fx.write("keep/k.txt", "k");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("new.txt", "n");
    fx.write("deep/er/x.txt", "x");
    fx.write("deep/y.txt", "y");
    fx.write("keep/added.txt", "added");
    snap(&mut s);

    let r = s.ok("restore_files", json!({"targetEntryId": base}));
    assert_eq!(
        r["deleted"],
        json!(["deep/er/x.txt", "deep/y.txt", "keep/added.txt", "new.txt"]),
        "{r}"
    );
    assert_eq!(r["restored"], json!([]));
    assert_disk(&fx, &files(&[("a.txt", "a"), ("keep/k.txt", "k")]));
    // Directories the restore emptied are gone; one still holding a
    // captured file stays.
    assert_eq!(
        disk_dirs(&fx.root()),
        ["keep".to_string()].into_iter().collect::<BTreeSet<_>>()
    );
}

#[test]
fn restore_without_a_target_right_after_initialize_reports_dirty_under_skip() {
    let fx = Fixture::new();
    fx.write("a.txt", "orig");
    fx.write("d.txt", "d");
    let (mut s, _, session) = start(&fx);
    fx.write("a.txt", "edited");
    fx.write("c.txt", "created");
    fx.remove("d.txt");
    let before = disk_state(&fx.root());
    let n = line_count(&session);

    // Every change since the last checkpoint is dirty: under the default
    // (skip) each is a conflict, skipped, and nothing is written.
    let r = s.ok("restore_files", json!({}));
    assert_eq!(r["dirty"], json!(["a.txt", "c.txt", "d.txt"]), "{r}");
    assert_eq!(r["skipped"], json!(["a.txt", "c.txt", "d.txt"]));
    assert_eq!(
        r["conflicts"],
        json!([
            {"path": "a.txt", "reason": "dirty"},
            {"path": "c.txt", "reason": "dirty"},
            {"path": "d.txt", "reason": "dirty"},
        ])
    );
    assert_eq!(r["restored"], json!([]));
    assert_eq!(r["deleted"], json!([]));
    assert!(r["unrevertEntryId"].is_null(), "{r}");
    assert_eq!(disk_state(&fx.root()), before);
    // The disk differed from the checkpoint at the leaf: a pre-restore
    // snapshot keeps it, and nothing else is appended.
    let new = appended_since(&session, n);
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(new[0]["customType"], "step-snapshot");
    assert_eq!(new[0]["data"]["kind"], "pre-restore");
}

#[test]
fn restore_without_a_target_right_after_initialize_discards_changes() {
    let fx = Fixture::new();
    fx.write("a.txt", "orig");
    fx.write("d.txt", "d");
    fx.write("sub/s.txt", "s");
    let (mut s, init, session) = start(&fx);
    fx.write("a.txt", "edited");
    fx.write("c.txt", "created");
    fx.write("sub/new/n.txt", "n");
    fx.remove("d.txt");

    let r = s.ok("restore_files", json!({"onConflict": "overwrite"}));
    assert_eq!(r["restored"], json!(["a.txt", "d.txt"]), "{r}");
    assert_eq!(r["deleted"], json!(["c.txt", "sub/new/n.txt"]));
    assert_eq!(
        r["dirty"],
        json!(["a.txt", "c.txt", "d.txt", "sub/new/n.txt"])
    );
    assert_eq!(r["conflicts"], json!([]));
    assert_disk(
        &fx,
        &files(&[("a.txt", "orig"), ("d.txt", "d"), ("sub/s.txt", "s")]),
    );
    // The discarded work went into a pre-restore snapshot at the baseline,
    // and the unrevert-point follows it.
    let u = entry(&session, &id(&r["unrevertEntryId"]));
    let pre = entry(&session, &id(&u["parentId"]));
    assert_eq!(pre["data"]["kind"], "pre-restore");
    assert_eq!(pre["parentId"], init["baseline"]["entryId"]);
    assert_eq!(
        u["data"]["workingTreeHash"], init["baseline"]["treeHash"],
        "{u}"
    );
    // ... so undo brings it back.
    s.ok("undo", json!({}));
    assert_disk(
        &fx,
        &files(&[
            ("a.txt", "edited"),
            ("c.txt", "created"),
            ("sub/new/n.txt", "n"),
            ("sub/s.txt", "s"),
        ]),
    );
}

#[test]
fn multi_round_sequential_rollback() {
    let fx = Fixture::new();
    fx.write("a.txt", "0");
    let (mut s, init, _) = start(&fx);
    let mut states = vec![(id(&init["baseline"]["entryId"]), disk_state(&fx.root()))];
    for i in 1..=4 {
        fx.write("a.txt", i.to_string());
        fx.write(&format!("n{i}.txt"), format!("turn {i}"));
        if i == 3 {
            fx.remove("n1.txt");
        }
        states.push((snap(&mut s), disk_state(&fx.root())));
    }
    // Back one turn at a time, down to the baseline ...
    for (entry_id, expected) in states.iter().rev().skip(1) {
        let r = s.ok("restore_files", json!({"targetEntryId": entry_id}));
        assert!(r["unrevertEntryId"].is_string(), "{r}");
        assert_eq!(r["conflicts"], json!([]), "{r}");
        assert_disk(&fx, expected);
    }
    // ... and forward again to the last turn.
    let (last, expected) = states.last().unwrap();
    s.ok("restore_files", json!({"targetEntryId": last}));
    assert_disk(&fx, expected);
}

#[test]
fn rollback_all_to_the_baseline() {
    let fx = Fixture::new();
    fx.write("a.txt", "a0");
    fx.write("src/lib.rs", "lib0");
    fx.write("src/gone.rs", "gone");
    let (mut s, init, _) = start(&fx);
    let baseline = disk_state(&fx.root());
    for turn in 0..3 {
        fx.write("a.txt", format!("a{}", turn + 1));
        fx.write(&format!("src/mod{turn}.rs"), "m");
        if turn == 1 {
            fx.remove("src/gone.rs");
            fx.write("src/lib.rs", "lib2");
        }
        snap(&mut s);
    }
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": init["baseline"]["entryId"]}),
    );
    assert_eq!(
        r["restored"],
        json!(["a.txt", "src/gone.rs", "src/lib.rs"]),
        "{r}"
    );
    assert_eq!(
        r["deleted"],
        json!(["src/mod0.rs", "src/mod1.rs", "src/mod2.rs"])
    );
    assert_disk(&fx, &baseline);
}

#[test]
fn rollback_all_after_a_partial_rollback() {
    let fx = Fixture::new();
    fx.write("a.txt", "a0");
    fx.write("b.txt", "b0");
    let (mut s, _, _) = start(&fx);
    fx.write("a.txt", "a1");
    fx.write("b.txt", "b1");
    let s1 = snap(&mut s);
    fx.write("a.txt", "a2");
    fx.write("b.txt", "b2");
    fx.write("c.txt", "c2");
    snap(&mut s);

    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": s1, "files": ["a.txt"]}),
    );
    assert_eq!(r["restored"], json!(["a.txt"]), "{r}");
    assert_eq!(r["deleted"], json!([]));
    assert_disk(
        &fx,
        &files(&[("a.txt", "a1"), ("b.txt", "b2"), ("c.txt", "c2")]),
    );
    // The unrevert-point recorded the whole disk, not only the filter.
    let r = s.ok("snapshot", json!({}));
    assert!(
        r["entryId"].is_null(),
        "nothing changed since the restore: {r}"
    );

    let r = s.ok("restore_files", json!({"targetEntryId": s1}));
    assert_eq!(
        r["restored"],
        json!(["b.txt"]),
        "only what still differs: {r}"
    );
    assert_eq!(r["deleted"], json!(["c.txt"]));
    assert_eq!(r["dirty"], json!([]));
    assert_disk(&fx, &files(&[("a.txt", "a1"), ("b.txt", "b1")]));
}

#[test]
fn rollback_after_rollback_then_a_new_turn_branches_off() {
    let fx = Fixture::new();
    fx.write("a.txt", "0");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    let mut ids = Vec::new();
    for i in 1..=3 {
        fx.write("a.txt", i.to_string());
        fx.write(&format!("t{i}.txt"), "t");
        ids.push(snap(&mut s));
    }
    let (s1, s2, s3) = (ids[0].clone(), ids[1].clone(), ids[2].clone());

    let n1 = s.ok("navigate_tree", json!({"targetId": s2}));
    assert_eq!(n1["oldLeafId"], s3.as_str());
    assert_disk(
        &fx,
        &files(&[("a.txt", "2"), ("t1.txt", "t"), ("t2.txt", "t")]),
    );
    let n2 = s.ok("navigate_tree", json!({"targetId": s1}));
    assert_eq!(n2["oldLeafId"], n1["newLeafId"]);
    assert_disk(&fx, &files(&[("a.txt", "1"), ("t1.txt", "t")]));

    // The new turn.
    fx.write("fresh.txt", "f");
    let s4 = s.ok("snapshot", json!({}));
    let s4_id = id(&s4["entryId"]);
    assert_eq!(
        s4["diff"],
        json!({"added": ["fresh.txt"], "modified": [], "deleted": []}),
        "relative to the checkpoint at s1: {s4}"
    );
    assert_eq!(s4["turnIndex"], 2, "one more than s1's turn: {s4}");
    let path = path_ids(&mut s, &s4_id);
    let n1_leaf = id(&n1["newLeafId"]);
    for abandoned in [&s2, &s3, &n1_leaf] {
        assert!(
            !path.contains(abandoned),
            "{abandoned} of the abandoned branch is on the new turn's path {path:?}"
        );
    }
    assert_eq!(path[0], base);
    assert!(path.contains(&s1));
    assert_eq!(path.last(), Some(&s4_id));

    let cps = s.ok("list_checkpoints", json!({}));
    let on_path: Vec<String> = cps["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| id(&c["entryId"]))
        .collect();
    for abandoned in [&s2, &s3] {
        assert!(!on_path.contains(abandoned), "{cps}");
    }
    assert!(on_path.contains(&s1) && on_path.contains(&s4_id), "{cps}");
    let all = s.ok("list_checkpoints", json!({"scope": "all"}));
    let s3_info = all["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["entryId"] == s3.as_str())
        .cloned()
        .expect("s3 listed with scope all");
    assert_eq!(s3_info["onCurrentPath"], false, "{s3_info}");
}

// ============================================ AgentSmithy's file-change scenarios

#[test]
fn changes_made_by_a_tool_are_rolled_back() {
    let fx = Fixture::new();
    fx.write("a.txt", "original");
    fx.write("del.txt", "to delete");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);

    fx.write("src/created.rs", "created by tool");
    let t1 = s.ok(
        "snapshot",
        json!({"kind": "tool", "paths": ["src/created.rs"], "tool": {"name": "write"}}),
    );
    assert_eq!(t1["diff"]["added"], json!(["src/created.rs"]), "{t1}");
    fx.write("a.txt", "modified by tool");
    let t2 = s.ok("snapshot", json!({"kind": "tool", "paths": ["a.txt"]}));
    assert_eq!(t2["diff"]["modified"], json!(["a.txt"]), "{t2}");
    fx.remove("del.txt");
    let t3 = s.ok("snapshot", json!({"kind": "tool", "paths": ["del.txt"]}));
    assert_eq!(t3["diff"]["deleted"], json!(["del.txt"]), "{t3}");

    s.ok("restore_files", json!({"targetEntryId": t2["entryId"]}));
    assert_disk(
        &fx,
        &files(&[
            ("a.txt", "modified by tool"),
            ("del.txt", "to delete"),
            ("src/created.rs", "created by tool"),
        ]),
    );
    s.ok("restore_files", json!({"targetEntryId": t1["entryId"]}));
    assert_disk(
        &fx,
        &files(&[
            ("a.txt", "original"),
            ("del.txt", "to delete"),
            ("src/created.rs", "created by tool"),
        ]),
    );
    s.ok("restore_files", json!({"targetEntryId": base}));
    assert_disk(
        &fx,
        &files(&[("a.txt", "original"), ("del.txt", "to delete")]),
    );
    s.ok("restore_files", json!({"targetEntryId": t3["entryId"]}));
    assert_disk(
        &fx,
        &files(&[
            ("a.txt", "modified by tool"),
            ("src/created.rs", "created by tool"),
        ]),
    );
}

#[test]
fn changes_made_by_a_shell_command_are_rolled_back() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    fx.write("gone.txt", "g");
    let (mut s, init, _) = start(&fx);
    let before = disk_state(&fx.root());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("echo hi > made.txt && mkdir -p out/x && printf x > out/x/y.txt && rm gone.txt && echo more >> a.txt")
        .current_dir(fx.root())
        .status()
        .unwrap();
    assert!(status.success());
    let after = disk_state(&fx.root());
    let t = s.ok("snapshot", json!({}));
    assert_eq!(
        t["diff"],
        json!({"added": ["made.txt", "out/x/y.txt"], "modified": ["a.txt"], "deleted": ["gone.txt"]}),
        "{t}"
    );

    s.ok(
        "restore_files",
        json!({"targetEntryId": init["baseline"]["entryId"]}),
    );
    assert_disk(&fx, &before);
    assert!(!fx.root().join("out").exists(), "emptied directory removed");
    s.ok("restore_files", json!({"targetEntryId": t["entryId"]}));
    assert_disk(&fx, &after);
    s.ok("undo", json!({}));
    assert_disk(&fx, &before);
}

#[test]
fn ignored_files_the_agent_staged_are_restored_as_captured() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("a.txt", "a");
    fx.write("keep.log", "never captured");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);

    fx.write("agent.log", "written by the agent");
    let staged = s.ok("stage_files", json!({"paths": ["agent.log"]}));
    assert_eq!(staged["staged"], json!(["agent.log"]));
    let s1 = s.ok("snapshot", json!({}));
    assert_eq!(s1["diff"]["added"], json!(["agent.log"]), "{s1}");
    fx.write("agent.log", "second version");
    let s2 = s.ok("snapshot", json!({}));
    assert_eq!(s2["diff"]["modified"], json!(["agent.log"]), "{s2}");

    let r = s.ok("restore_files", json!({"targetEntryId": s1["entryId"]}));
    assert_eq!(r["restored"], json!(["agent.log"]), "{r}");
    assert_eq!(
        fx.read("agent.log").as_deref(),
        Some(&b"written by the agent"[..])
    );
    let r = s.ok("restore_files", json!({"targetEntryId": base}));
    assert_eq!(r["deleted"], json!(["agent.log"]), "{r}");
    assert_eq!(fx.read("agent.log"), None);
    assert_eq!(
        fx.read("keep.log").as_deref(),
        Some(&b"never captured"[..]),
        "an ignored file never captured is left alone"
    );
    s.ok("restore_files", json!({"targetEntryId": s2["entryId"]}));
    assert_eq!(
        fx.read("agent.log").as_deref(),
        Some(&b"second version"[..])
    );
    assert_eq!(fx.read("keep.log").as_deref(), Some(&b"never captured"[..]));
}

#[test]
fn a_staged_file_deleted_before_the_next_checkpoint() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("a.txt", "a");
    let (mut s, _, _) = start(&fx);

    // Staged and written, then deleted before any snapshot saw it: nothing
    // to capture, nothing to restore.
    s.ok("stage_files", json!({"paths": ["never.log", "tmp.log"]}));
    fx.write("never.log", "n");
    fx.remove("never.log");
    let r = s.ok("snapshot", json!({}));
    assert!(r["entryId"].is_null(), "{r}");

    // Captured by one checkpoint, deleted before the next.
    fx.write("tmp.log", "scratch");
    let s1 = s.ok("snapshot", json!({}));
    assert_eq!(s1["diff"]["added"], json!(["tmp.log"]), "{s1}");
    fx.remove("tmp.log");
    let s2 = s.ok("snapshot", json!({}));
    assert_eq!(s2["diff"]["deleted"], json!(["tmp.log"]), "{s2}");

    let r = s.ok("restore_files", json!({"targetEntryId": s1["entryId"]}));
    assert_eq!(r["restored"], json!(["tmp.log"]), "{r}");
    assert_eq!(fx.read("tmp.log").as_deref(), Some(&b"scratch"[..]));
    let r = s.ok("restore_files", json!({"targetEntryId": s2["entryId"]}));
    assert_eq!(r["deleted"], json!(["tmp.log"]), "{r}");
    assert_eq!(fx.read("tmp.log"), None);
    assert_disk(&fx, &files(&[(".gitignore", "*.log\n"), ("a.txt", "a")]));
}

// ====================================================== restore_files details

#[test]
fn preview_writes_nothing_and_appends_nothing() {
    let fx = Fixture::new();
    fx.write("a.txt", "a0");
    fx.write("b.txt", "b0");
    let (mut s, init, session) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "a1");
    fx.write("c.txt", "c1");
    snap(&mut s);
    // Unsnapshotted work too, which a real restore would snapshot first.
    fx.write("b.txt", "b-dirty");
    let disk = disk_state(&fx.root());
    let bytes = std::fs::read(&session).unwrap();

    for mode in ["skip", "overwrite", "abort"] {
        let r = s.ok(
            "restore_files",
            json!({"targetEntryId": base, "preview": true, "onConflict": mode}),
        );
        assert_eq!(r["preview"], true);
        assert!(r["unrevertEntryId"].is_null(), "{r}");
        assert_eq!(r["dirty"], json!(["b.txt"]), "{mode}: {r}");
        assert_eq!(r["deleted"], json!(["c.txt"]), "{mode}: {r}");
        if mode == "overwrite" {
            assert_eq!(r["restored"], json!(["a.txt", "b.txt"]), "{r}");
            assert_eq!(r["conflicts"], json!([]));
        } else {
            assert_eq!(r["restored"], json!(["a.txt"]), "{mode}: {r}");
            assert_eq!(
                r["conflicts"],
                json!([{"path": "b.txt", "reason": "dirty"}])
            );
            assert_eq!(r["skipped"], json!(["b.txt"]));
        }
    }
    let n = s.ok("navigate_tree", json!({"targetId": base, "preview": true}));
    assert!(n["newLeafId"].is_null(), "{n}");
    assert_eq!(n["restore"]["preview"], true, "{n}");
    let r = s.ok("reset", json!({"preview": true}));
    assert_eq!(r["restore"]["preview"], true, "{r}");

    assert_eq!(disk_state(&fx.root()), disk, "a preview touched files");
    assert_eq!(
        std::fs::read(&session).unwrap(),
        bytes,
        "a preview appended to the session"
    );
}

#[test]
fn nothing_to_change_appends_no_unrevert_point() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    fx.write("b.txt", "b");
    let (mut s, init, session) = start(&fx);
    let bytes = std::fs::read(&session).unwrap();

    // A clean disk, restored to the leaf: nothing at all.
    let r = s.ok("restore_files", json!({}));
    assert!(r["unrevertEntryId"].is_null(), "{r}");
    assert_eq!(r["restored"], json!([]));
    assert_eq!(r["deleted"], json!([]));
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": init["baseline"]["entryId"], "onConflict": "overwrite"}),
    );
    assert!(r["unrevertEntryId"].is_null(), "{r}");
    assert_eq!(std::fs::read(&session).unwrap(), bytes);

    // Only a file outside the filter differs: the pre-restore snapshot is
    // taken, but there is nothing to write, so no unrevert-point.
    fx.write("b.txt", "edited");
    let n = line_count(&session);
    let (notes, resp) = s.call_collect(
        "restore_files",
        json!({"files": ["a.txt"], "targetEntryId": init["baseline"]["entryId"]}),
    );
    let r = &resp["result"];
    assert!(r["unrevertEntryId"].is_null(), "{resp}");
    assert_eq!(r["restored"], json!([]));
    assert!(files_changed(&notes).is_empty(), "{notes:?}");
    let new = appended_since(&session, n);
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(new[0]["data"]["kind"], "pre-restore");
    assert_eq!(fx.read("b.txt").as_deref(), Some(&b"edited"[..]));
}

#[test]
fn restore_by_tree_hash() {
    let fx = Fixture::new();
    fx.write("a.txt", "a0");
    let (mut s, _, _) = start(&fx);
    fx.write("a.txt", "a1");
    fx.write("n.txt", "n");
    let s1 = s.ok("snapshot", json!({}));
    let at_s1 = disk_state(&fx.root());
    fx.write("a.txt", "a2");
    fx.remove("n.txt");
    snap(&mut s);

    let r = s.ok("restore_files", json!({"treeHash": s1["treeHash"]}));
    assert_eq!(r["restored"], json!(["a.txt", "n.txt"]), "{r}");
    assert_disk(&fx, &at_s1);

    let e = s.err("restore_files", json!({"treeHash": "0".repeat(32)}));
    assert_eq!(e["code"], 1001, "{e}");
    let e = s.err("restore_files", json!({"targetEntryId": "deadbeef"}));
    assert_eq!(e["code"], 1001, "{e}");
    let e = s.err(
        "restore_files",
        json!({"treeHash": s1["treeHash"], "targetEntryId": s1["entryId"]}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert_disk(&fx, &at_s1);
}

#[test]
fn files_may_name_a_directory() {
    let fx = Fixture::new();
    fx.write("src/a.rs", "a0");
    fx.write("src/b/c.rs", "c0");
    fx.write("srcx.txt", "x0");
    fx.write("docs/d.md", "d0");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("src/a.rs", "a1");
    fx.write("src/b/c.rs", "c1");
    fx.write("src/new.rs", "new");
    fx.write("srcx.txt", "x1");
    fx.write("docs/d.md", "d1");
    snap(&mut s);

    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": base, "files": ["src"]}),
    );
    assert_eq!(r["restored"], json!(["src/a.rs", "src/b/c.rs"]), "{r}");
    assert_eq!(r["deleted"], json!(["src/new.rs"]));
    assert_disk(
        &fx,
        &files(&[
            ("docs/d.md", "d1"),
            ("src/a.rs", "a0"),
            ("src/b/c.rs", "c0"),
            ("srcx.txt", "x1"),
        ]),
    );
    // A trailing slash names the directory too.
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": base, "files": ["docs/"]}),
    );
    assert_eq!(r["restored"], json!(["docs/d.md"]), "{r}");
    assert_eq!(fx.read("srcx.txt").as_deref(), Some(&b"x1"[..]));
}

#[test]
fn files_changed_comes_before_the_response_in_both_envelopes() {
    let fx = Fixture::new();
    fx.write("a.txt", "a0");
    fx.write("b.txt", "b0");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "a1");
    fx.write("c.txt", "c1");
    fx.remove("b.txt");
    let s1 = snap(&mut s);

    // JSON-RPC.
    let (notes, resp) = s.call_collect("restore_files", json!({"targetEntryId": base}));
    let fc = files_changed(&notes);
    assert_eq!(
        fc.len(),
        1,
        "one files_changed before the response: {notes:?}"
    );
    assert_eq!(notes.last().unwrap()["method"], "files_changed");
    assert_eq!(notes.last().unwrap()["jsonrpc"], "2.0");
    assert_eq!(
        fc[0],
        json!({"reason": "restore", "written": ["a.txt", "b.txt"], "deleted": ["c.txt"]})
    );
    assert_eq!(resp["result"]["restored"], json!(["a.txt", "b.txt"]));

    // pi-style: the notification takes the envelope of the request.
    let (notes, resp) =
        s.pi_collect(json!({"id": "r-1", "type": "restore_files", "targetEntryId": s1}));
    assert_eq!(resp["success"], true, "{resp}");
    assert_eq!(resp["command"], "restore_files");
    assert_eq!(resp["data"]["restored"], json!(["a.txt", "c.txt"]));
    let fc: Vec<&Value> = notes
        .iter()
        .filter(|n| n["type"] == "files_changed")
        .collect();
    assert_eq!(fc.len(), 1, "{notes:?}");
    assert_eq!(
        *fc[0],
        json!({"type": "files_changed", "reason": "restore", "written": ["a.txt", "c.txt"], "deleted": ["b.txt"]})
    );

    // Each operation names itself.
    let (notes, _) = s.pi_collect(json!({"id": "u-1", "type": "undo"}));
    let fc: Vec<&Value> = notes
        .iter()
        .filter(|n| n["type"] == "files_changed")
        .collect();
    assert_eq!(fc.len(), 1, "{notes:?}");
    assert_eq!(fc[0]["reason"], "undo");
    let (notes, _) = s.call_collect("navigate_tree", json!({"targetId": s1}));
    assert_eq!(files_changed(&notes)[0]["reason"], "navigate", "{notes:?}");
    let (notes, _) = s.call_collect("reset", json!({}));
    assert_eq!(files_changed(&notes)[0]["reason"], "reset", "{notes:?}");

    // An operation that changes nothing sends none.
    let (notes, resp) = s.call_collect("restore_files", json!({}));
    assert!(resp["result"]["unrevertEntryId"].is_null(), "{resp}");
    assert!(files_changed(&notes).is_empty(), "{notes:?}");
}

// ================================================================ navigate_tree

#[test]
fn navigate_to_the_baseline_and_back_brings_back_the_branch_latest_work() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, session) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    fx.write("n.txt", "n");
    let s1 = snap(&mut s);
    // Work not yet snapshotted.
    fx.write("a.txt", "v3 unsnapshotted");
    fx.write("u.txt", "unsnapshotted");
    let work = disk_state(&fx.root());

    let nav = s.ok(
        "navigate_tree",
        json!({"targetId": base, "onConflict": "overwrite"}),
    );
    let old_leaf = id(&nav["oldLeafId"]);
    assert_ne!(old_leaf, s1, "the pre-restore snapshot is the branch tip");
    let pre = entry(&session, &old_leaf);
    assert_eq!(pre["data"]["kind"], "pre-restore", "{pre}");
    assert_eq!(pre["parentId"], s1.as_str());
    assert_disk(&fx, &files(&[("a.txt", "v1")]));
    let new_leaf = id(&nav["newLeafId"]);
    assert_eq!(nav["restore"]["unrevertEntryId"], new_leaf.as_str());
    let u = entry(&session, &new_leaf);
    assert_eq!(
        u["parentId"],
        base.as_str(),
        "the chain hangs below the target"
    );

    let back = s.ok("navigate_tree", json!({"targetId": old_leaf}));
    assert_eq!(back["oldLeafId"], new_leaf.as_str(), "{back}");
    assert_disk(&fx, &work);
}

#[test]
fn skip_files_touches_nothing_and_appends_a_navigation_marker() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, session) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    snap(&mut s);
    fx.write("b.txt", "unsnapshotted");
    let disk = disk_state(&fx.root());
    let n = line_count(&session);

    let (notes, resp) = s.call_collect(
        "navigate_tree",
        json!({"targetId": base, "skipFiles": true}),
    );
    let nav = &resp["result"];
    assert!(nav["restore"].is_null(), "{resp}");
    assert!(files_changed(&notes).is_empty(), "{notes:?}");
    assert_eq!(disk_state(&fx.root()), disk);
    let new = appended_since(&session, n);
    assert_eq!(
        new.len(),
        1,
        "only the marker, no pre-restore snapshot: {new:?}"
    );
    assert_eq!(new[0]["type"], "custom");
    assert_eq!(new[0]["customType"], "navigation");
    assert_eq!(new[0]["parentId"], base.as_str());
    assert_eq!(nav["newLeafId"], new[0]["id"]);
    assert_eq!(s.ok("get_tree", json!({}))["leafId"], new[0]["id"]);

    // The next snapshot records the files under the new position.
    let s2 = s.ok("snapshot", json!({}));
    assert_eq!(
        s2["diff"],
        json!({"added": ["b.txt"], "modified": ["a.txt"], "deleted": []}),
        "{s2}"
    );
    assert_eq!(
        entry(&session, &id(&s2["entryId"]))["parentId"],
        new[0]["id"]
    );
}

#[test]
fn summarize_and_label_append_a_chain_whose_last_entry_is_the_leaf_after_a_restart() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, session) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    fx.write("b.txt", "b");
    let s1 = snap(&mut s);

    let nav = s.ok(
        "navigate_tree",
        json!({"targetId": base, "summarize": true, "label": "retry"}),
    );
    let sum_id = id(&nav["summaryEntryId"]);
    let sum = entry(&session, &sum_id);
    assert_eq!(sum["type"], "branch_summary", "{sum}");
    assert_eq!(sum["fromId"], base.as_str());
    assert_eq!(sum["parentId"], base.as_str());
    assert!(
        !sum["summary"].as_str().unwrap_or("").is_empty(),
        "a generated summary: {sum}"
    );
    assert_eq!(sum["details"]["oldLeafId"], s1.as_str());
    let lines = session_lines(&session);
    let label = lines
        .iter()
        .find(|l| l["type"] == "label" && l["parentId"] == sum_id.as_str())
        .unwrap_or_else(|| panic!("a label entry below the summary: {lines:?}"));
    assert_eq!(label["targetId"], base.as_str());
    assert_eq!(label["label"], "retry");
    let u = entry(&session, &id(&nav["newLeafId"]));
    assert_eq!(u["customType"], "unrevert-point");
    assert_eq!(
        u["parentId"], label["id"],
        "the unrevert-point ends the chain"
    );
    assert_eq!(lines.last().unwrap()["id"], nav["newLeafId"]);
    assert_disk(&fx, &files(&[("a.txt", "v1")]));

    // A given summary text is used as is; a label with skipFiles is the
    // whole chain (no marker needed).
    let nav2 = s.ok(
        "navigate_tree",
        json!({"targetId": s1, "summary": "went back", "skipFiles": true}),
    );
    let sum2 = entry(&session, &id(&nav2["summaryEntryId"]));
    assert_eq!(sum2["summary"], "went back");
    assert_eq!(sum2["fromId"], s1.as_str());
    assert_eq!(sum2["skipFiles"], true, "{sum2}");
    assert_eq!(nav2["newLeafId"], sum2["id"], "nothing else appended");
    let nav3 = s.ok(
        "navigate_tree",
        json!({"targetId": base, "label": "only a label", "skipFiles": true}),
    );
    let lab = entry(&session, &id(&nav3["newLeafId"]));
    assert_eq!(lab["type"], "label", "{lab}");
    assert_eq!(lab["parentId"], base.as_str());
    let leaf = id(&nav3["newLeafId"]);
    assert_eq!(session_lines(&session).last().unwrap()["id"], leaf.as_str());

    // After a restart the leaf is still there.
    assert!(s.finish().success());
    let (mut s, init) = fx.start(json!({"sessionFile": session}));
    assert_eq!(init["leafId"], leaf.as_str(), "{init}");
    assert!(init.get("recovered").is_none(), "nothing to record: {init}");
    assert_eq!(s.ok("get_tree", json!({}))["leafId"], leaf.as_str());
    let cps = s.ok("list_checkpoints", json!({}));
    let base_cp = cps["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["entryId"] == base.as_str())
        .cloned()
        .unwrap();
    assert_eq!(base_cp["label"], "only a label", "{base_cp}");
}

#[test]
fn navigating_to_the_current_leaf_is_a_no_op() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, _, session) = start(&fx);
    fx.write("a.txt", "v2");
    let s1 = snap(&mut s);
    fx.write("a.txt", "dirty");
    let bytes = std::fs::read(&session).unwrap();
    let (notes, resp) = s.call_collect(
        "navigate_tree",
        json!({"targetId": s1, "onConflict": "overwrite"}),
    );
    let nav = &resp["result"];
    assert_eq!(nav["newLeafId"], s1.as_str(), "{resp}");
    assert_eq!(nav["oldLeafId"], s1.as_str());
    assert!(nav["restore"].is_null());
    assert!(files_changed(&notes).is_empty());
    assert_eq!(std::fs::read(&session).unwrap(), bytes);
    assert_eq!(fx.read("a.txt").as_deref(), Some(&b"dirty"[..]));
}

#[test]
fn navigate_preview_and_unknown_targets() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, session) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    let s1 = s.ok("snapshot", json!({}));
    let bytes = std::fs::read(&session).unwrap();

    let p = s.ok(
        "navigate_tree",
        json!({"targetId": base, "preview": true, "label": "x"}),
    );
    assert!(p["newLeafId"].is_null(), "{p}");
    assert_eq!(p["oldLeafId"], s1["entryId"]);
    assert_eq!(p["restore"]["restored"], json!(["a.txt"]), "{p}");
    assert!(p["restore"]["unrevertEntryId"].is_null());
    assert_eq!(fx.read("a.txt").as_deref(), Some(&b"v2"[..]));

    let e = s.err("navigate_tree", json!({"targetId": "feedf00d"}));
    assert_eq!(e["code"], 1001, "{e}");
    let e = s.err("navigate_tree", json!({"targetId": s1["treeHash"]}));
    assert_eq!(e["code"], 1001, "a tree hash is not an entry id: {e}");
    assert_eq!(std::fs::read(&session).unwrap(), bytes);
}

// ========================================================================= undo

#[test]
fn undo_reverts_a_restore_and_undo_of_undo_is_redo() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, _, session) = start(&fx);
    fx.write("a.txt", "v2");
    fx.write("b.txt", "b");
    let s1 = snap(&mut s);
    let at_s1 = disk_state(&fx.root());
    fx.write("a.txt", "v3");
    fx.remove("b.txt");
    fx.write("c/d.txt", "d");
    snap(&mut s);
    let at_s2 = disk_state(&fx.root());

    let r = s.ok("restore_files", json!({"targetEntryId": s1}));
    let u1 = id(&r["unrevertEntryId"]);
    assert_disk(&fx, &at_s1);
    let bytes = std::fs::read(&session).unwrap();
    let p = s.ok("undo", json!({"preview": true}));
    assert_eq!(p["preview"], true, "{p}");
    assert_eq!(p["restored"], json!(["a.txt", "c/d.txt"]), "{p}");
    assert!(p["unrevertEntryId"].is_null());
    assert_disk(&fx, &at_s1);
    assert_eq!(
        std::fs::read(&session).unwrap(),
        bytes,
        "an undo preview appended"
    );
    let (notes, resp) = s.call_collect("undo", json!({}));
    let undo = &resp["result"];
    assert_eq!(files_changed(&notes).len(), 1);
    assert_eq!(undo["restored"], json!(["a.txt", "c/d.txt"]), "{resp}");
    assert_eq!(undo["deleted"], json!(["b.txt"]));
    assert_disk(&fx, &at_s2);
    let u2 = entry(&session, &id(&undo["unrevertEntryId"]));
    assert_eq!(u2["data"]["kind"], "undo", "{u2}");
    assert_eq!(u2["parentId"], u1.as_str());

    let redo = s.ok("undo", json!({}));
    assert!(redo["unrevertEntryId"].is_string(), "{redo}");
    assert_disk(&fx, &at_s1);
    s.ok("undo", json!({}));
    assert_disk(&fx, &at_s2);
}

#[test]
fn undo_reverts_a_navigation() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    fx.write("n.txt", "n");
    snap(&mut s);
    let at_s1 = disk_state(&fx.root());
    s.ok("navigate_tree", json!({"targetId": base}));
    assert_disk(&fx, &files(&[("a.txt", "v1")]));
    s.ok("undo", json!({}));
    assert_disk(&fx, &at_s1);
}

#[test]
fn undo_names_an_unrevert_point() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    let s1 = snap(&mut s);
    fx.write("a.txt", "v3");
    snap(&mut s);
    let r1 = s.ok("restore_files", json!({"targetEntryId": s1}));
    let r2 = s.ok("restore_files", json!({"targetEntryId": base}));
    assert_eq!(fx.read("a.txt").as_deref(), Some(&b"v1"[..]));
    // The older one: back to what it replaced (v3), not to v2.
    s.ok("undo", json!({"entryId": r1["unrevertEntryId"]}));
    assert_eq!(fx.read("a.txt").as_deref(), Some(&b"v3"[..]));
    s.ok("undo", json!({"entryId": r2["unrevertEntryId"]}));
    assert_eq!(fx.read("a.txt").as_deref(), Some(&b"v2"[..]));

    let e = s.err("undo", json!({"entryId": "0badc0de"}));
    assert_eq!(e["code"], 1001, "{e}");
    let e = s.err("undo", json!({"entryId": s1}));
    assert_eq!(e["code"], -32602, "not an unrevert-point: {e}");
}

#[test]
fn undo_with_nothing_to_undo_is_1001() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, _, session) = start(&fx);
    fx.write("a.txt", "v2");
    snap(&mut s);
    let bytes = std::fs::read(&session).unwrap();
    let e = s.err("undo", json!({}));
    assert_eq!(e["code"], 1001, "{e}");
    assert_eq!(std::fs::read(&session).unwrap(), bytes);
    assert_eq!(fx.read("a.txt").as_deref(), Some(&b"v2"[..]));
}

// ================================================================ approve / reset

fn status_paths(st: &Value) -> Vec<(String, String)> {
    st["changedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (id(&f["path"]), id(&f["status"])))
        .collect()
}

fn status_of<'a>(st: &'a Value, path: &str) -> &'a Value {
    st["changedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {st}"))
}

#[test]
fn approve_then_reset_restores_the_approved_state_and_is_undoable() {
    let fx = Fixture::new();
    fx.write("a.txt", "base\n");
    let (mut s, _, session) = start(&fx);

    let st = s.ok("get_status", json!({}));
    assert_eq!(st["hasUnapproved"], false, "{st}");
    assert!(st["approvedEntryId"].is_null());
    fx.write("a.txt", "approved\n");
    fx.write("b.txt", "b\n");
    let st = s.ok("get_status", json!({}));
    assert_eq!(st["hasUnapproved"], true);
    assert_eq!(
        status_paths(&st),
        vec![
            ("a.txt".into(), "modified".into()),
            ("b.txt".into(), "added".into())
        ]
    );
    assert_eq!(status_of(&st, "a.txt")["baseContent"], "base\n");

    let ap = s.ok("approve", json!({"message": "looks good"}));
    let approval = entry(&session, &id(&ap["approvedEntryId"]));
    assert_eq!(approval["customType"], "approval", "{approval}");
    assert_eq!(approval["data"]["approvedTreeHash"], ap["approvedTreeHash"]);
    assert_eq!(approval["data"]["message"], "looks good");
    let before = entry(&session, &id(&approval["parentId"]));
    assert_eq!(
        before["data"]["kind"], "approve",
        "unsnapshotted work snapshotted first"
    );
    let approved = disk_state(&fx.root());
    let st = s.ok("get_status", json!({}));
    assert_eq!(st["hasUnapproved"], false, "{st}");
    assert_eq!(st["approvedEntryId"], ap["approvedEntryId"]);
    assert!(st["lastApprovedAt"].is_string());

    fx.write("a.txt", "later\n");
    fx.write("c.txt", "c\n");
    fx.remove("b.txt");
    snap(&mut s);
    let later = disk_state(&fx.root());
    let st = s.ok("get_status", json!({}));
    assert_eq!(
        status_paths(&st),
        vec![
            ("a.txt".into(), "modified".into()),
            ("b.txt".into(), "deleted".into()),
            ("c.txt".into(), "added".into())
        ],
        "against the approval now"
    );
    assert_eq!(status_of(&st, "a.txt")["baseContent"], "approved\n");

    let (notes, resp) = s.call_collect("reset", json!({}));
    let reset = &resp["result"];
    assert_eq!(reset["resetTo"], ap["approvedTreeHash"], "{resp}");
    assert_eq!(reset["restore"]["restored"], json!(["a.txt", "b.txt"]));
    assert_eq!(reset["restore"]["deleted"], json!(["c.txt"]));
    assert_eq!(files_changed(&notes)[0]["reason"], "reset");
    assert_disk(&fx, &approved);
    let u = entry(&session, &id(&reset["restore"]["unrevertEntryId"]));
    assert_eq!(u["data"]["kind"], "reset");
    assert_eq!(s.ok("get_status", json!({}))["hasUnapproved"], false);

    s.ok("undo", json!({}));
    assert_disk(&fx, &later);

    // snapshotsApproved: the step-snapshots since the previous approval,
    // the approve snapshot included.
    fx.write("d.txt", "1");
    snap(&mut s);
    fx.write("d.txt", "2");
    snap(&mut s);
    fx.write("d.txt", "3");
    let ap2 = s.ok("approve", json!({}));
    assert_eq!(
        ap2["snapshotsApproved"], 4,
        "later, d=1, d=2, approve: {ap2}"
    );
    let ap3 = s.ok("approve", json!({}));
    assert_eq!(ap3["snapshotsApproved"], 0, "{ap3}");
}

#[test]
fn reset_without_an_approval_goes_to_the_baseline() {
    let fx = Fixture::new();
    fx.write("a.txt", "base");
    let (mut s, init, _) = start(&fx);
    let base = disk_state(&fx.root());
    fx.write("a.txt", "x");
    fx.write("n/e/w.txt", "w");
    snap(&mut s);
    let r = s.ok("reset", json!({}));
    assert_eq!(r["resetTo"], init["baseline"]["treeHash"], "{r}");
    assert_disk(&fx, &base);
    assert!(!fx.root().join("n").exists());
}

// ====================================================== what restores write

#[test]
fn exec_bits_and_symlinks_are_restored_as_such() {
    let fx = Fixture::new();
    let root = fx.root();
    fx.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    fx.write("plain.sh", "#!/bin/sh\n");
    fx.write("a.txt", "a");
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
    std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("outside")).unwrap();
    let (mut s, init, _) = start(&fx);
    let base = disk_state(&root);
    assert_eq!(
        base["run.sh"],
        Node::File {
            bytes: b"#!/bin/sh\n".to_vec(),
            exec: true
        }
    );

    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(
        root.join("plain.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::remove_file(root.join("link")).unwrap();
    fx.write("link", "now a file");
    std::fs::remove_file(root.join("dangling")).unwrap();
    std::os::unix::fs::symlink("elsewhere", root.join("dangling")).unwrap();
    std::fs::remove_file(root.join("a.txt")).unwrap();
    std::os::unix::fs::symlink("run.sh", root.join("a.txt")).unwrap();
    let s1 = snap(&mut s);
    let turn = disk_state(&root);

    s.ok(
        "restore_files",
        json!({"targetEntryId": init["baseline"]["entryId"]}),
    );
    assert_disk(&fx, &base);
    assert!(std::fs::symlink_metadata(root.join("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    s.ok("restore_files", json!({"targetEntryId": s1}));
    assert_disk(&fx, &turn);
}

#[test]
fn a_file_replaces_a_directory_and_vice_versa() {
    let fx = Fixture::new();
    fx.write("x", "x is a file");
    fx.write("y/inner/z.txt", "y is a directory");
    let (mut s, init, _) = start(&fx);
    let base = disk_state(&fx.root());
    fx.remove("x");
    fx.write("x/child.txt", "x is a directory now");
    fx.remove("y");
    fx.write("y", "y is a file now");
    let s1 = snap(&mut s);
    let turn = disk_state(&fx.root());

    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": init["baseline"]["entryId"]}),
    );
    assert_eq!(r["conflicts"], json!([]), "{r}");
    assert_disk(&fx, &base);
    assert!(fx.root().join("y/inner").is_dir());
    let r = s.ok("restore_files", json!({"targetEntryId": s1}));
    assert_eq!(r["conflicts"], json!([]), "{r}");
    assert_disk(&fx, &turn);
    assert!(fx.root().join("y").is_file());
}

#[test]
fn large_and_ignored_files_are_never_deleted_or_overwritten() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("a.txt", "a0");
    fx.write("data.bin", "small");
    // ignoredMaxSize 0: the ignored files here stand for ignored files
    // rewind does not capture (over the size, or in an ignored directory).
    let (mut s, init) = fx.start(json!({"options": {"maxFileSize": 100, "ignoredMaxSize": 0}}));
    let base = id(&init["baseline"]["entryId"]);
    let big = vec![7u8; 500];

    fx.write("a.txt", "a1");
    fx.write("keep.log", "ignored, written after the baseline");
    fx.write("big.bin", &big);
    fx.write("gen/made.txt", "m");
    fx.write(
        "gen/cache.log",
        "ignored in a directory the restore empties",
    );
    fx.remove("data.bin");
    let s1 = s.ok("snapshot", json!({}));
    assert!(
        s1["stats"]["untracked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["path"] == "big.bin" && u["reason"] == "tooLarge"),
        "{s1}"
    );
    // An uncaptured large file where the baseline has a (small) file.
    let big_data = vec![9u8; 300];
    fx.write("data.bin", &big_data);
    let r = s.ok("snapshot", json!({}));
    // Present, not captured (docs/architecture.md rule 14): neither added
    // nor a change of content.
    assert_eq!(r["diff"]["notCaptured"], json!(["data.bin"]), "{r}");
    assert_eq!(r["diff"]["added"], json!([]), "{r}");

    let check = |fx: &Fixture, when: &str| {
        assert_eq!(
            fx.read("keep.log").as_deref(),
            Some(&b"ignored, written after the baseline"[..]),
            "{when}"
        );
        assert_eq!(fx.read("big.bin"), Some(big.clone()), "{when}");
        assert_eq!(fx.read("data.bin"), Some(big_data.clone()), "{when}");
        assert_eq!(
            fx.read("gen/cache.log").as_deref(),
            Some(&b"ignored in a directory the restore empties"[..]),
            "{when}"
        );
    };
    for mode in ["skip", "overwrite"] {
        let r = s.ok(
            "restore_files",
            json!({"targetEntryId": base, "onConflict": mode}),
        );
        assert_eq!(
            r["conflicts"],
            json!([{"path": "data.bin", "reason": "untracked"}]),
            "{mode}: {r}"
        );
        assert!(strs(&r["skipped"]).contains(&"data.bin".to_string()));
        assert_eq!(fx.read("a.txt").as_deref(), Some(&b"a0"[..]));
        assert!(!fx.root().join("gen/made.txt").exists());
        check(&fx, &format!("restore ({mode})"));
        s.ok("undo", json!({"onConflict": mode}));
        check(&fx, &format!("undo ({mode})"));
    }
    s.ok(
        "navigate_tree",
        json!({"targetId": base, "onConflict": "overwrite"}),
    );
    check(&fx, "navigate");
    s.ok(
        "navigate_tree",
        json!({"targetId": s1["entryId"], "onConflict": "overwrite"}),
    );
    check(&fx, "navigate back");
    s.ok("reset", json!({"onConflict": "overwrite"}));
    check(&fx, "reset");
    s.ok("undo", json!({"onConflict": "overwrite"}));
    check(&fx, "undo of reset");
}

#[test]
fn navigate_and_restore_to_a_host_message() {
    // pi navigates to its own entries: the checkpoint at a message is the
    // latest tree-recording entry above it.
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, _, session) = start(&fx);
    s.ok(
        "append_entry",
        json!({"entryId": "user-1", "role": "user", "text": "do it"}),
    );
    fx.write("a.txt", "v2");
    fx.write("n.txt", "n");
    snap(&mut s);
    let at_s1 = disk_state(&fx.root());
    s.ok(
        "append_entry",
        json!({"entryId": "user-2", "role": "user", "text": "more"}),
    );
    fx.write("a.txt", "v3");
    snap(&mut s);

    let r = s.ok("restore_files", json!({"targetEntryId": "user-2"}));
    assert_eq!(r["restored"], json!(["a.txt"]), "{r}");
    assert_disk(&fx, &at_s1);
    let nav = s.ok("navigate_tree", json!({"targetId": "user-1"}));
    assert_disk(&fx, &files(&[("a.txt", "v1")]));
    let u = entry(&session, &id(&nav["newLeafId"]));
    assert_eq!(u["parentId"], "user-1", "{u}");
    // The next turn hangs below the message.
    fx.write("b.txt", "b");
    let t = s.ok("snapshot", json!({}));
    let path = path_ids(&mut s, &id(&t["entryId"]));
    assert!(path.contains(&"user-1".to_string()));
    assert!(!path.contains(&"user-2".to_string()), "{path:?}");
    assert_eq!(t["diff"]["added"], json!(["b.txt"]), "{t}");
}

#[test]
fn reset_uses_the_latest_approval_wherever_it_sits() {
    let fx = Fixture::new();
    fx.write("a.txt", "v1");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "approved on a branch");
    let ap = s.ok("approve", json!({}));
    let approved = disk_state(&fx.root());
    s.ok("navigate_tree", json!({"targetId": base}));
    assert_disk(&fx, &files(&[("a.txt", "v1")]));
    fx.write("b.txt", "other branch");
    snap(&mut s);
    let st = s.ok("get_status", json!({}));
    assert_eq!(st["approvedEntryId"], ap["approvedEntryId"], "{st}");
    let r = s.ok("reset", json!({}));
    assert_eq!(r["resetTo"], ap["approvedTreeHash"], "{r}");
    assert_disk(&fx, &approved);
}

#[test]
fn a_directory_a_turn_replaced_by_a_symlink_comes_back_as_a_directory() {
    let fx = Fixture::new();
    let root = fx.root();
    fx.write("sub/x.txt", "the directory's file");
    fx.write("other/x.txt", "another file of the same name");
    let (mut s, init, _) = start(&fx);
    let base = disk_state(&root);
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink("other", root.join("sub")).unwrap();
    let t = s.ok("snapshot", json!({}));
    assert_eq!(
        t["diff"],
        json!({"added": ["sub"], "modified": [], "deleted": ["sub/x.txt"]}),
        "{t}"
    );
    let turn = disk_state(&root);

    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": init["baseline"]["entryId"]}),
    );
    assert_eq!(r["conflicts"], json!([]), "{r}");
    assert_eq!(r["deleted"], json!(["sub"]), "{r}");
    assert_eq!(r["restored"], json!(["sub/x.txt"]), "{r}");
    assert!(std::fs::symlink_metadata(root.join("sub"))
        .unwrap()
        .is_dir());
    assert_disk(&fx, &base);
    // ... and back to the symlink, without touching what it points to.
    s.ok("restore_files", json!({"targetEntryId": t["entryId"]}));
    assert_disk(&fx, &turn);
}

#[test]
fn a_restore_warns_when_git_moved_since_the_checkpoint() {
    let fx = Fixture::new();
    let sha1 = "1111111111111111111111111111111111111111";
    let sha2 = "2222222222222222222222222222222222222222";
    fx.write(".git/HEAD", "ref: refs/heads/main\n");
    fx.write(".git/refs/heads/main", format!("{sha1}\n"));
    fx.write("a.txt", "v1");
    let (mut s, init, _) = start(&fx);
    let base = id(&init["baseline"]["entryId"]);
    fx.write("a.txt", "v2");
    let s1 = s.ok("snapshot", json!({}));
    assert_eq!(s1["git"], json!({"branch": "main", "head": sha1}), "{s1}");

    // Same branch and HEAD: no warning.
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": base, "preview": true}),
    );
    assert_eq!(r["warnings"], json!([]), "{r}");
    // HEAD moved.
    fx.write(".git/refs/heads/main", format!("{sha2}\n"));
    let r = s.ok("restore_files", json!({"targetEntryId": base}));
    let w = strs(&r["warnings"]);
    assert_eq!(w.len(), 1, "{r}");
    // Git has no such commits (a hand-made .git): short SHAs, not words.
    assert!(
        w[0].contains(&format!("{} then, {} now", &sha1[..7], &sha2[..7])),
        "{w:?}"
    );
    // Another branch.
    fx.write(".git/HEAD", "ref: refs/heads/feature\n");
    fx.write(".git/refs/heads/feature", format!("{sha2}\n"));
    let n = s.ok("navigate_tree", json!({"targetId": s1["entryId"]}));
    let w = strs(&n["restore"]["warnings"]);
    assert_eq!(w.len(), 1, "{n}");
    assert!(w[0].contains("main") && w[0].contains("feature"), "{w:?}");
    // .git itself is never touched by a restore.
    assert_eq!(
        fx.read(".git/HEAD").as_deref(),
        Some(&b"ref: refs/heads/feature\n"[..])
    );
}

/// Repro (issue 10, found 4), through the binary with default options (watcher on): a
/// directory moved out of the project and created again must keep being captured, so a
/// restore and its undo lose nothing written into it.
#[test]
fn a_directory_moved_out_and_recreated_keeps_being_captured() {
    let fx = Fixture::new();
    fx.write("a/b/f.txt", "f\n");
    let (mut s, init, _) = start(&fx);
    let baseline = id(&init["baseline"]["entryId"]);
    let away = tempfile::tempdir().unwrap();
    std::fs::rename(fx.root().join("a/b"), away.path().join("b")).unwrap();
    snap(&mut s);
    fx.write("a/b/g.txt", "v1\n");
    snap(&mut s);
    fx.write("a/b/g.txt", "v2\n");
    let r = s.ok("snapshot", json!({}));
    assert!(r["entryId"].is_string(), "v2 was not captured: {r}");
    assert_eq!(r["diff"]["modified"], json!(["a/b/g.txt"]));
    let r = s.ok("restore_files", json!({"targetEntryId": baseline}));
    assert_eq!(r["deleted"], json!(["a/b/g.txt"]), "{r}");
    s.ok("undo", json!({}));
    assert_eq!(fx.read("a/b/g.txt").unwrap(), b"v2\n");
    assert!(s.finish().success());
}
