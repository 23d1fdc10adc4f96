//! A state-machine property test of rollback through the real binary:
//! random file operations on a small path alphabet, snapshots, restores
//! (all files or whole top-level subtrees), navigations and undos, checked
//! against a reference model of the project's files after every
//! restore-like step. An ignored file (`keep.log`) must never change, and at
//! the end every snapshot taken must still be restorable byte-exact.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};

use crate::common::{disk_state, Fixture, Node, Sidecar};

/// Paths the operations touch; `p` is a file or a directory (holding `p/q`)
/// over time, so files replace directories and the other way round.
const PATHS: [&str; 6] = ["a.txt", "b.bin", "d/c.txt", "d/e/f.txt", "p", "p/q"];
/// Top-level names: a `files` filter made of these covers whole subtrees.
const TOPS: [&str; 4] = ["a.txt", "b.bin", "d", "p"];
const KEEP: &[u8] = b"ignored, never captured, never touched";

type Model = BTreeMap<String, Node>;

#[derive(Debug, Clone)]
enum Op {
    Write(usize, Vec<u8>),
    Link(usize, u8),
    Delete(usize),
    ToggleExec(usize),
    Snapshot,
    Restore {
        target: Index,
        /// Which of TOPS to restore; None: all files.
        only: Option<[bool; 4]>,
    },
    Navigate(Index),
    Undo,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..PATHS.len(), prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(i, b)| Op::Write(i, b)),
        1 => (0..PATHS.len(), 0u8..3).prop_map(|(i, t)| Op::Link(i, t)),
        2 => (0..PATHS.len()).prop_map(Op::Delete),
        1 => (0..PATHS.len()).prop_map(Op::ToggleExec),
        3 => Just(Op::Snapshot),
        3 => (any::<Index>(), prop::option::of(any::<[bool; 4]>()))
            .prop_map(|(target, only)| Op::Restore { target, only }),
        2 => any::<Index>().prop_map(Op::Navigate),
        2 => Just(Op::Undo),
    ]
}

fn under(top: &str, path: &str) -> bool {
    path == top || path.starts_with(&format!("{top}/"))
}

// ------------------------------------------------------------ file operations

/// Make room for a file at `rel`: a directory there goes, and a file or
/// link where a parent directory must be goes.
fn clear_for(root: &Path, model: &mut Model, rel: &str) {
    let abs = root.join(rel);
    if let Ok(m) = std::fs::symlink_metadata(&abs) {
        if m.is_dir() {
            std::fs::remove_dir_all(&abs).unwrap();
        } else {
            std::fs::remove_file(&abs).unwrap();
        }
    }
    model.retain(|p, _| !under(rel, p));
    let mut parent = String::new();
    for comp in rel.split('/').collect::<Vec<_>>().split_last().unwrap().1 {
        if !parent.is_empty() {
            parent.push('/');
        }
        parent.push_str(comp);
        let abs = root.join(&parent);
        if let Ok(m) = std::fs::symlink_metadata(&abs) {
            if !m.is_dir() {
                std::fs::remove_file(&abs).unwrap();
                model.remove(&parent);
            }
        }
    }
    if let Some(dir) = abs.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
}

fn apply_file_op(root: &Path, model: &mut Model, op: &Op) {
    match op {
        Op::Write(i, bytes) => {
            let rel = PATHS[*i];
            let exec = matches!(model.get(rel), Some(Node::File { exec: true, .. }));
            let was_file = matches!(model.get(rel), Some(Node::File { .. }));
            if was_file {
                // Rewrite in place: the mode stays.
                std::fs::write(root.join(rel), bytes).unwrap();
            } else {
                clear_for(root, model, rel);
                std::fs::write(root.join(rel), bytes).unwrap();
                std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(0o644))
                    .unwrap();
            }
            model.insert(
                rel.to_string(),
                Node::File {
                    bytes: bytes.clone(),
                    exec,
                },
            );
        }
        Op::Link(i, t) => {
            let rel = PATHS[*i];
            let target = ["a.txt", "../outside", "missing"][*t as usize];
            clear_for(root, model, rel);
            std::os::unix::fs::symlink(target, root.join(rel)).unwrap();
            model.insert(rel.to_string(), Node::Link(target.to_string()));
        }
        Op::Delete(i) => {
            let rel = PATHS[*i];
            if model.remove(rel).is_some() {
                std::fs::remove_file(root.join(rel)).unwrap();
            }
        }
        Op::ToggleExec(i) => {
            let rel = PATHS[*i];
            if let Some(Node::File { exec, .. }) = model.get_mut(rel) {
                *exec = !*exec;
                let mode = if *exec { 0o755 } else { 0o644 };
                std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode))
                    .unwrap();
            }
        }
        _ => unreachable!(),
    }
}

// ------------------------------------------------------------------ the runner

struct World {
    fx: Fixture,
    s: Sidecar,
    model: Model,
    /// Snapshots taken: entry id and the model at that moment.
    snaps: Vec<(String, Model)>,
    /// Each unrevert-point's preRollback state, as the model saw it.
    pre: HashMap<String, Model>,
}

impl World {
    fn new() -> World {
        let fx = Fixture::new();
        fx.write(".gitignore", "*.log\n");
        fx.write("keep.log", KEEP);
        fx.write("a.txt", "initial");
        let (s, init) = fx.start(json!({}));
        let mut w = World {
            fx,
            s,
            model: Model::new(),
            snaps: Vec::new(),
            pre: HashMap::new(),
        };
        w.model = w.project_files();
        let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
        w.snaps.push((base, w.model.clone()));
        w
    }

    /// The project as on disk, without the ignored file.
    fn project_files(&self) -> Model {
        let mut d = disk_state(&self.fx.root());
        d.remove("keep.log");
        d
    }

    #[track_caller]
    fn check(&self, what: &str) {
        let disk = self.project_files();
        assert_eq!(
            disk, self.model,
            "after {what}: disk differs from the model"
        );
        assert_eq!(
            self.fx.read("keep.log").as_deref(),
            Some(KEEP),
            "after {what}: the ignored file changed"
        );
    }

    /// Check a RestoreResult's lists against the model change it made.
    #[track_caller]
    fn check_lists(&self, r: &Value, before: &Model, what: &str) {
        let mut written: Vec<&str> = self
            .model
            .iter()
            .filter(|(p, n)| before.get(*p) != Some(*n))
            .map(|(p, _)| p.as_str())
            .collect();
        written.sort();
        let deleted: Vec<&str> = before
            .keys()
            .filter(|p| !self.model.contains_key(*p))
            .map(String::as_str)
            .collect();
        assert_eq!(r["restored"], json!(written), "{what}: {r}");
        assert_eq!(r["deleted"], json!(deleted), "{what}: {r}");
        assert_eq!(r["conflicts"], json!([]), "{what}: {r}");
        assert_eq!(r["skipped"], json!([]), "{what}: {r}");
        if written.is_empty() && deleted.is_empty() {
            assert!(r["unrevertEntryId"].is_null(), "{what}: {r}");
        } else {
            let u = r["unrevertEntryId"].as_str().expect("an unrevert-point");
            self.pre_insert_check(u);
        }
    }

    fn pre_insert_check(&self, u: &str) {
        assert!(!self.pre.contains_key(u), "unrevert id {u} reused");
    }

    fn record_unrevert(&mut self, r: &Value, before: Model) {
        if let Some(u) = r["unrevertEntryId"].as_str() {
            self.pre.insert(u.to_string(), before);
        }
    }

    /// The leaf and the latest unrevert-point on its path, from get_tree.
    fn leaf_and_latest_unrevert(&mut self) -> (String, Option<String>) {
        let tree = self.s.ok("get_tree", json!({}));
        let entries: HashMap<String, &Value> = tree["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["id"].as_str().unwrap().to_string(), e))
            .collect();
        let leaf = tree["leafId"].as_str().unwrap().to_string();
        let mut cur = Some(leaf.clone());
        while let Some(c) = cur {
            let e = entries[&c];
            if e["customType"] == "unrevert-point" {
                return (leaf, Some(c));
            }
            cur = e["parentId"].as_str().map(str::to_string);
        }
        (leaf, None)
    }

    fn step(&mut self, op: &Op, n: usize) {
        let what = format!("step {n} {op:?}");
        match op {
            Op::Write(..) | Op::Link(..) | Op::Delete(_) | Op::ToggleExec(_) => {
                let root = self.fx.root();
                apply_file_op(&root, &mut self.model, op);
            }
            Op::Snapshot => {
                let r = self.s.ok("snapshot", json!({}));
                if let Some(id) = r["entryId"].as_str() {
                    self.snaps.push((id.to_string(), self.model.clone()));
                }
            }
            Op::Restore { target, only } => {
                let (id, target_model) = self.snaps[target.index(self.snaps.len())].clone();
                let tops: Vec<&str> = match only {
                    Some(mask) => TOPS
                        .iter()
                        .zip(mask)
                        .filter(|(_, on)| **on)
                        .map(|(t, _)| *t)
                        .collect(),
                    None => Vec::new(),
                };
                let mut params = json!({"targetEntryId": id, "onConflict": "overwrite"});
                if !tops.is_empty() {
                    params["files"] = json!(tops);
                }
                let r = self.s.ok("restore_files", params);
                let before = self.model.clone();
                if tops.is_empty() {
                    self.model = target_model;
                } else {
                    for top in &tops {
                        self.model.retain(|p, _| !under(top, p));
                        for (p, n) in &target_model {
                            if under(top, p) {
                                self.model.insert(p.clone(), n.clone());
                            }
                        }
                    }
                }
                self.check_lists(&r, &before, &what);
                self.record_unrevert(&r, before);
                self.check(&what);
            }
            Op::Navigate(target) => {
                let (id, target_model) = self.snaps[target.index(self.snaps.len())].clone();
                let (leaf, _) = self.leaf_and_latest_unrevert();
                let nav = self.s.ok(
                    "navigate_tree",
                    json!({"targetId": id, "onConflict": "overwrite"}),
                );
                let before = self.model.clone();
                if id == leaf {
                    assert!(nav["restore"].is_null(), "{what}: {nav}");
                    assert_eq!(nav["newLeafId"], json!(leaf), "{what}: {nav}");
                } else {
                    self.model = target_model;
                    let r = nav["restore"].clone();
                    self.check_lists(&r, &before, &what);
                    self.record_unrevert(&r, before);
                }
                self.check(&what);
            }
            Op::Undo => {
                let (_, latest) = self.leaf_and_latest_unrevert();
                let resp = self.s.call("undo", json!({"onConflict": "overwrite"}));
                match latest {
                    None => assert_eq!(resp["error"]["code"], 1001, "{what}: {resp}"),
                    Some(u) => {
                        let r = resp["result"].clone();
                        assert!(r.is_object(), "{what}: {resp}");
                        let before = self.model.clone();
                        self.model = self
                            .pre
                            .get(&u)
                            .unwrap_or_else(|| panic!("{what}: unknown unrevert-point {u}"))
                            .clone();
                        self.check_lists(&r, &before, &what);
                        self.record_unrevert(&r, before);
                    }
                }
                self.check(&what);
            }
        }
    }

    /// Every snapshot is still restorable, byte-exact.
    fn restore_every_snapshot(&mut self) {
        for (i, (id, m)) in self.snaps.clone().into_iter().enumerate() {
            let r = self.s.ok(
                "restore_files",
                json!({"targetEntryId": id, "onConflict": "overwrite"}),
            );
            let before = std::mem::replace(&mut self.model, m);
            let what = format!("final restore of snapshot {i} ({id})");
            self.check_lists(&r, &before, &what);
            self.check(&what);
        }
    }
}

fn run(ops: &[Op]) {
    let mut w = World::new();
    for (n, op) in ops.iter().enumerate() {
        w.step(op, n);
    }
    w.restore_every_snapshot();
    assert!(w.s.finish().success());
}

/// 16 cases by default; `REWIND_MODEL_CASES` asks for more (a longer hunt).
fn model_cases() -> u32 {
    std::env::var("REWIND_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: model_cases(),
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn rollback_matches_the_model(ops in prop::collection::vec(op(), 6..=20)) {
        run(&ops);
    }
}

/// A fixed sequence through the interesting transitions, so they are
/// covered whatever the random cases draw.
#[test]
fn a_fixed_walk_through_the_model() {
    let ops = vec![
        Op::Write(4, b"p is a file".to_vec()),
        Op::ToggleExec(4),
        Op::Write(2, b"c".to_vec()),
        Op::Snapshot,
        Op::Write(5, b"p is a dir now".to_vec()),
        Op::Link(0, 0),
        Op::Write(3, b"deep".to_vec()),
        Op::Snapshot,
        Op::Restore {
            target: any_index(1, 3),
            only: None,
        },
        Op::Restore {
            target: any_index(2, 3),
            only: Some([false, false, false, true]),
        },
        Op::Undo,
        Op::Undo,
        Op::Navigate(any_index(0, 3)),
        Op::Write(1, vec![0, 159, 146, 150]),
        Op::Navigate(any_index(2, 3)),
        Op::Undo,
        Op::Snapshot,
    ];
    run(&ops);
}

/// An Index that picks `i` out of `n`.
fn any_index(i: usize, n: usize) -> Index {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    loop {
        let ix = any::<Index>().new_tree(&mut runner).unwrap().current();
        if ix.index(n) == i {
            return ix;
        }
    }
}
