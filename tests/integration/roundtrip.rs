//! Property: whatever sequence of file operations happens between
//! snapshots, every snapshot records exactly the files that existed then,
//! byte for byte, and its diff is exactly the change since the previous one.
//!
//! One sidecar per case; the project starts empty, so the baseline is the
//! empty tree and "from the baseline" lists every file of a checkpoint.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use base64::Engine as _;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::{Fixture, Sidecar};

#[derive(Debug, Clone)]
enum Op {
    Write(String, Vec<u8>),
    Delete(String),
    Mkdir(String),
    Chmod(String, bool),
    Snapshot,
}

/// path -> (content, executable)
type Model = BTreeMap<String, (Vec<u8>, bool)>;

fn path() -> impl Strategy<Value = String> {
    // A small alphabet, so files and directories collide often.
    prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 1..=3)
        .prop_map(|v| v.join("/"))
}

fn content() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        "[a-z \n]{0,40}".prop_map(String::into_bytes),
        Just(b"same".to_vec()),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (path(), content()).prop_map(|(p, c)| Op::Write(p, c)),
        2 => path().prop_map(Op::Delete),
        1 => path().prop_map(Op::Mkdir),
        1 => (path(), any::<bool>()).prop_map(|(p, x)| Op::Chmod(p, x)),
        2 => Just(Op::Snapshot),
    ]
}

/// The proper prefixes of `p` ("a/b/c" → "a", "a/b").
fn parents(p: &str) -> Vec<String> {
    let parts: Vec<&str> = p.split('/').collect();
    (1..parts.len()).map(|i| parts[..i].join("/")).collect()
}

fn under(dir: &str, p: &str) -> bool {
    p.len() > dir.len() && p.starts_with(dir) && p.as_bytes()[dir.len()] == b'/'
}

/// Apply `op` to the disk and the model alike.
fn apply(root: &Path, model: &mut Model, op: &Op) {
    match op {
        Op::Write(p, bytes) => {
            // A file standing where a parent directory must go is replaced.
            for parent in parents(p) {
                if model.remove(&parent).is_some() {
                    std::fs::remove_file(root.join(&parent)).unwrap();
                }
            }
            let abs = root.join(p);
            if abs.is_dir() {
                std::fs::remove_dir_all(&abs).unwrap();
                model.retain(|k, _| !under(p, k));
            }
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            let exec = model.get(p).is_some_and(|(_, x)| *x);
            std::fs::write(&abs, bytes).unwrap();
            model.insert(p.clone(), (bytes.clone(), exec));
        }
        Op::Delete(p) => {
            let abs = root.join(p);
            if model.remove(p).is_some() {
                std::fs::remove_file(&abs).unwrap();
            } else if abs.is_dir() {
                std::fs::remove_dir_all(&abs).unwrap();
                model.retain(|k, _| !under(p, k));
            }
        }
        Op::Mkdir(p) => {
            let blocked = model.contains_key(p) || parents(p).iter().any(|q| model.contains_key(q));
            if !blocked {
                std::fs::create_dir_all(root.join(p)).unwrap();
            }
        }
        Op::Chmod(p, exec) => {
            if let Some(entry) = model.get_mut(p) {
                let mode = if *exec { 0o755 } else { 0o644 };
                std::fs::set_permissions(root.join(p), std::fs::Permissions::from_mode(mode))
                    .unwrap();
                entry.1 = *exec;
            }
        }
        Op::Snapshot => {}
    }
}

/// The diff lists the model says a snapshot must report.
fn model_diff(old: &Model, new: &Model) -> Value {
    let added: Vec<&String> = new.keys().filter(|k| !old.contains_key(*k)).collect();
    let deleted: Vec<&String> = old.keys().filter(|k| !new.contains_key(*k)).collect();
    let modified: Vec<&String> = new
        .iter()
        .filter(|(k, v)| old.get(*k).is_some_and(|o| o != *v))
        .map(|(k, _)| k)
        .collect();
    json!({"added": added, "modified": modified, "deleted": deleted})
}

fn content_of(d: &Value) -> Vec<u8> {
    let text = d["newContent"].as_str().unwrap_or_else(|| panic!("{d}"));
    match d["encoding"].as_str() {
        Some("base64") => base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap(),
        Some("utf8") => text.as_bytes().to_vec(),
        other => panic!("encoding {other:?}"),
    }
}

/// Check a checkpoint against the model: exactly these files, these bytes.
fn verify(s: &mut Sidecar, entry: &str, model: &Model) {
    let m = s.ok("get_modified_files", json!({ "toEntryId": entry }));
    let listed: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["status"], "added", "{f}");
            f["path"].as_str().unwrap()
        })
        .collect();
    let want: Vec<&str> = model.keys().map(String::as_str).collect();
    assert_eq!(listed, want, "files at {entry}");
    for (path, (bytes, _)) in model {
        let d = s.ok(
            "get_file_diff",
            json!({"filePath": path, "toEntryId": entry}),
        );
        assert_eq!(d["oldContent"], Value::Null, "{d}");
        assert_eq!(&content_of(&d), bytes, "content of {path} at {entry}");
    }
    // A path the model does not hold is absent there.
    for ghost in ["a", "a/b", "c/c/c"] {
        if !model.contains_key(ghost) {
            let d = s.ok(
                "get_file_diff",
                json!({"filePath": ghost, "toEntryId": entry}),
            );
            assert!(d.is_null(), "{ghost} at {entry}: {d}");
        }
    }
}

fn run(ops: &[Op]) {
    let fx = Fixture::new();
    let (mut s, init) = fx.start(json!({}));
    assert_eq!(init["baseline"]["files"], 0);
    let root = fx.root();
    let mut model = Model::new();
    let mut recorded = Model::new();
    let mut last = init["baseline"]["entryId"].as_str().unwrap().to_string();
    let mut checkpoints: Vec<(String, Model)> = vec![(last.clone(), Model::new())];
    for op in ops.iter().chain(std::iter::once(&Op::Snapshot)) {
        apply(&root, &mut model, op);
        if let Op::Snapshot = op {
            let r = s.ok("snapshot", json!({}));
            assert_eq!(r["diff"], model_diff(&recorded, &model), "after {ops:?}");
            assert_eq!(r["changed"], json!(recorded != model), "{r}");
            match r["entryId"].as_str() {
                Some(id) => last = id.to_string(),
                None => assert_eq!(recorded, model, "an unchanged snapshot: {r}"),
            }
            recorded = model.clone();
            checkpoints.push((last.clone(), model.clone()));
        }
    }
    for (entry, m) in &checkpoints {
        verify(&mut s, entry, m);
    }
    assert!(s.finish().success());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_snapshot_holds_exactly_the_files_of_its_moment(ops in prop::collection::vec(op(), 1..=12)) {
        run(&ops);
    }
}

#[test]
fn a_known_tricky_sequence() {
    // A file becomes a directory and back, exec bits flip, content returns
    // to an earlier value.
    run(&[
        Op::Write("a".into(), b"file".to_vec()),
        Op::Chmod("a".into(), true),
        Op::Snapshot,
        Op::Write("a/b".into(), vec![0, 255, 1]),
        Op::Snapshot,
        Op::Delete("a".into()),
        Op::Write("a".into(), b"file".to_vec()),
        Op::Snapshot,
        Op::Mkdir("b/c".into()),
        Op::Write("c/c/c".into(), Vec::new()),
        Op::Snapshot,
        Op::Snapshot,
    ]);
}

#[test]
fn the_empty_tree_hash_is_a_point_in_any_store() {
    // The empty tree, as an empty project's baseline reports it.
    let empty = Fixture::new();
    let (s, init) = empty.start(json!({}));
    let empty_tree = init["baseline"]["treeHash"].as_str().unwrap().to_string();
    drop(s);
    // A project that never was empty: its store never held the empty tree.
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    fx.write("d/b.txt", "b");
    let (mut s, init) = fx.start(json!({}));
    let m = s.ok(
        "get_modified_files",
        json!({"fromHash": empty_tree, "toEntryId": init["baseline"]["entryId"]}),
    );
    let paths: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.txt", "d/b.txt"], "{m}");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "a.txt", "fromHash": empty_tree}),
    );
    assert_eq!(d["oldContent"], Value::Null, "{d}");
    assert_eq!(d["newContent"], "a", "{d}");
}
