//! Engine semantics, in process (the integration tests speak the same
//! through the binary).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use super::api::*;
use super::*;
use crate::repo_path::RepoPath;
use crate::store::TreeEntry;
use crate::working_copy::ScanOptions;

mod conversation;
mod rollback;
mod saved_scan;
mod uncaptured;
mod watch;

fn rp(path: &str) -> RepoPath {
    RepoPath::parse(path).expect("a clean test path")
}

struct T {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl T {
    /// Runs git in the project, with no user or system configuration.
    fn git(&self, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(self.dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    }

    fn new() -> T {
        T {
            dir: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
        }
    }
    fn write(&self, rel: &str, c: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, c).unwrap();
    }
    fn config(&self, session: Option<PathBuf>) -> EngineConfig {
        EngineConfig {
            cwd: Some(self.dir.path().to_path_buf()),
            session_file: session,
            store_dir: Some(self.store.path().to_path_buf()),
            scan: ScanOptions::default(),
            fsync: false,
            watch: true,
            resume: Default::default(),
        }
    }
    fn open(&self) -> (Engine, Opened) {
        Engine::open(self.config(None)).unwrap()
    }
}

/// An entry id as a test names it.
fn id(s: &str) -> EntryId {
    EntryId::from_input(s)
}

/// Navigate to `target` with every option at its default.
fn nav_to(target: EntryId) -> NavigateTreeParams {
    NavigateTreeParams {
        target_id: target,
        skip_files: None,
        summarize: None,
        summary: None,
        label: None,
        preview: None,
        on_conflict: None,
    }
}

fn snap(e: &mut Engine) -> SnapshotResult {
    e.snapshot(SnapshotParams::default()).unwrap()
}

/// The tree of a fresh full scan of `e`'s project built from scratch (no
/// stat cache, no earlier tree): what every incremental scan must equal.
fn rebuilt(e: &Engine) -> crate::store::ObjectId {
    let out = crate::working_copy::scan(&crate::working_copy::ScanRequest {
        root: e.working_copy.root(),
        options: e.working_copy.options(),
        store: &e.store,
        cache: &crate::working_copy::StatCache::default(),
        prior: &FlatTree::new(),
        staged: e.working_copy.staged(),
        scope: None,
        tracked: &[],
        progress: None,
        listings: None,
        known: None,
    })
    .unwrap();
    crate::store::build_tree(&e.store, &out.files).unwrap()
}

#[test]
fn baseline_then_turns() {
    let t = T::new();
    t.write("a.txt", "one\n");
    t.write("src/b.rs", "fn b() {}\n");
    let (mut e, init) = t.open();
    assert!(!init.resumed);
    assert_eq!(init.baseline.files, 2);
    assert_eq!(init.leaf_id, init.baseline.entry_id);

    let same = snap(&mut e);
    assert_eq!(same.entry_id, None);
    assert!(!same.changed);
    assert_eq!(same.turn_index, 0);

    t.write("a.txt", "two\n");
    t.write("c.txt", "new\n");
    std::fs::remove_file(t.dir.path().join("src/b.rs")).unwrap();
    let s1 = snap(&mut e);
    assert!(s1.changed);
    assert_eq!(s1.turn_index, 1);
    assert_eq!(s1.diff.added, vec!["c.txt"]);
    assert_eq!(s1.diff.modified, vec!["a.txt"]);
    assert_eq!(s1.diff.deleted, vec!["src/b.rs"]);

    let manual = e
        .snapshot(SnapshotParams {
            kind: Some(SnapshotKind::Manual),
            label: Some("before refactor".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(manual.entry_id.is_some());
    assert!(!manual.changed);
    let list = e.list_checkpoints(ListCheckpointsParams {
        scope: None,
        query: Some("REFACTOR".into()),
    });
    let list = list.unwrap();
    assert_eq!(list.checkpoints.len(), 1);
    assert_eq!(list.checkpoints[0].kind, CheckpointKind::Manual);
}

/// A snapshot sent again with its `requestId` (a retry after a lost answer)
/// returns the checkpoint recorded the first time, as answered then, and
/// appends nothing; a request id that is not a host id is refused.
#[test]
fn a_snapshot_request_sent_again_returns_its_checkpoint() {
    let t = T::new();
    t.write("a.txt", "1");
    let (mut e, _) = t.open();
    t.write("a.txt", "2");
    let ask = |request: &str| SnapshotParams {
        kind: Some(SnapshotKind::Tool),
        request_id: Some(request.into()),
        ..Default::default()
    };
    let first = e.snapshot(ask("ev-1")).unwrap();
    assert!(first.changed && first.entry_id.is_some());
    t.write("a.txt", "3");
    let again = e.snapshot(ask("ev-1")).unwrap();
    assert_eq!(again.entry_id, first.entry_id);
    assert_eq!(again.tree_hash, first.tree_hash);
    assert_eq!(again.diff, first.diff);
    assert_eq!(again.turn_index, first.turn_index);
    assert_eq!(again.stats.files_hashed, first.stats.files_hashed);
    // Another request records what changed since.
    let next = e.snapshot(ask("ev-2")).unwrap();
    assert_ne!(next.entry_id, first.entry_id);
    assert_eq!(next.diff.modified, vec!["a.txt"]);
    for bad in ["", "has space", &"x".repeat(65)] {
        assert!(matches!(
            e.snapshot(ask(bad)),
            Err(EngineError::InvalidParams(_))
        ));
    }
}

#[test]
fn modified_files_ignore_changes_on_other_branches() {
    let t = T::new();
    t.write("a.txt", "1");
    let (mut e, init) = t.open();
    t.write("a.txt", "2");
    let s1 = snap(&mut e);
    // Back to the baseline, then a new branch changes a.txt again: the
    // earlier change (s1, first in the file) is not on the leaf's path.
    e.navigate_tree(nav_to(init.baseline.entry_id.clone()))
        .unwrap();
    t.write("a.txt", "3");
    let s2 = snap(&mut e);
    assert_ne!(s1.entry_id, s2.entry_id);
    let m = e.get_modified_files(RangeParams::default()).unwrap();
    assert_eq!(m.files.len(), 1);
    assert_eq!(m.files[0].entry_id, s2.entry_id);
    // From s1 (another branch) to the leaf: s2 is still the first change
    // on the leaf's path that is not on s1's.
    let m = e
        .get_modified_files(RangeParams {
            from: s1.entry_id.clone().map(Point::Entry),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(m.files[0].entry_id, s2.entry_id);
}

#[test]
fn modified_files_read_large_diffs_that_are_not_indexed_by_path() {
    // A baseline of more files than the per-path index takes: its diff is
    // read only when a range includes it.
    let t = T::new();
    for i in 0..1100 {
        t.write(&format!("d{}/f{i}.txt", i % 7), "x");
    }
    let (mut e, init) = t.open();
    t.write("d0/f0.txt", "changed");
    let s1 = snap(&mut e);
    t.write("new.txt", "n");
    let s2 = snap(&mut e);
    let from_empty = e
        .get_modified_files(RangeParams {
            from: Some(Point::Tree(crate::store::empty_tree_id())),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(from_empty.files.len(), 1101);
    let entry_of = |m: &ModifiedFilesResult, path: &str| {
        m.files
            .iter()
            .find(|f| f.path == path)
            .and_then(|f| f.entry_id.clone())
    };
    assert_eq!(
        entry_of(&from_empty, "d0/f0.txt"),
        Some(init.baseline.entry_id.clone())
    );
    assert_eq!(entry_of(&from_empty, "new.txt"), s2.entry_id);
    // From the baseline (the default), the baseline is outside the range.
    let m = e.get_modified_files(RangeParams::default()).unwrap();
    assert_eq!(entry_of(&m, "d0/f0.txt"), s1.entry_id);
    assert_eq!(m.files.len(), 2);
}

#[test]
fn modified_files_name_the_earliest_entry() {
    let t = T::new();
    t.write("a.txt", "1");
    let (mut e, init) = t.open();
    t.write("a.txt", "2");
    let s1 = snap(&mut e);
    t.write("b.txt", "new");
    let s2 = snap(&mut e);
    t.write("a.txt", "3");
    let s3 = snap(&mut e);
    let m = e.get_modified_files(RangeParams::default()).unwrap();
    let by_path: Vec<(String, Option<EntryId>, Option<u64>)> = m
        .files
        .iter()
        .map(|f| (f.path.to_string(), f.entry_id.clone(), f.turn_index))
        .collect();
    assert_eq!(
        by_path,
        vec![
            ("a.txt".into(), s1.entry_id.clone(), Some(1)),
            ("b.txt".into(), s2.entry_id.clone(), Some(2)),
        ]
    );
    // From s2: only a.txt, first changed by s3.
    let m = e
        .get_modified_files(RangeParams {
            from: s2.entry_id.clone().map(Point::Entry),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(m.files.len(), 1);
    assert_eq!(m.files[0].entry_id, s3.entry_id);
    // @working with an unsnapshotted edit: no entry names it.
    t.write("c.txt", "c");
    let m = e
        .get_modified_files(RangeParams {
            from: s3.entry_id.clone().map(Point::Entry),
            to: Some(Point::Working),
        })
        .unwrap();
    assert_eq!(m.files.len(), 1);
    assert_eq!(m.files[0].path, "c.txt");
    assert_eq!(m.files[0].entry_id, None);
    // By hash.
    let m = e
        .get_modified_files(RangeParams {
            from: Some(Point::Tree(init.baseline.tree_hash)),
            to: Some(Point::Tree(s1.tree_hash)),
        })
        .unwrap();
    assert_eq!(m.files.len(), 1);
    let bad = e.get_modified_files(RangeParams {
        from: Some(Point::Entry(id("nope"))),
        ..Default::default()
    });
    assert!(matches!(bad, Err(EngineError::UnknownEntry(_))));
}

#[test]
fn paths_fast_path_rechecks_only_announced_paths() {
    // Without the watcher, the contract's rule: only the announced paths.
    let t = T::new();
    t.write("a.txt", "1");
    t.write("b.txt", "1");
    let (mut e, _) = Engine::open(EngineConfig {
        watch: false,
        ..t.config(None)
    })
    .unwrap();
    t.write("a.txt", "2");
    t.write("b.txt", "2");
    let s = e
        .snapshot(SnapshotParams {
            kind: Some(SnapshotKind::Tool),
            paths: Some(vec![rp("a.txt"), rp("new/dir")]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(s.diff.modified, vec!["a.txt"]);
    // The unannounced change is picked up by the next full snapshot.
    let full = snap(&mut e);
    assert_eq!(full.diff.modified, vec!["b.txt"]);
    // A path's syntax is RepoPath's (the edge parses it); that it stays
    // inside the project is the engine's check, against the disk.
    assert!(RepoPath::parse("../x").is_err());
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), t.dir.path().join("lnk")).unwrap();
    let bad = e.snapshot(SnapshotParams {
        paths: Some(vec![rp("lnk/x")]),
        ..Default::default()
    });
    assert!(matches!(bad, Err(EngineError::BadPath(_))), "{bad:?}");
}

#[test]
fn file_diff_and_history() {
    let t = T::new();
    t.write("a.txt", "one\n");
    let (mut e, _) = t.open();
    t.write("a.txt", "one\ntwo\n");
    let s1 = snap(&mut e);
    std::fs::write(t.dir.path().join("bin.dat"), [0u8, 1, 2, 255]).unwrap();
    let s2 = snap(&mut e);
    let d = e
        .get_file_diff(FileDiffParams {
            to: s1.entry_id.clone().map(Point::Entry),
            ..FileDiffParams::new(rp("a.txt"))
        })
        .unwrap()
        .unwrap();
    assert_eq!(d.additions, 1);
    assert_eq!(d.deletions, 0);
    assert!(d.unified_diff.starts_with("--- a/a.txt\n+++ b/a.txt\n"));
    assert_eq!(d.old_content.as_deref(), Some("one\n"));
    let b = e
        .get_file_diff(FileDiffParams {
            ..FileDiffParams::new(rp("bin.dat"))
        })
        .unwrap()
        .unwrap();
    assert!(b.is_binary);
    assert_eq!(b.encoding, ContentEncoding::Base64);
    assert_eq!(b.new_content.as_deref(), Some("AAEC/w=="));
    assert!(e
        .get_file_diff(FileDiffParams {
            ..FileDiffParams::new(rp("nothing.txt"))
        })
        .unwrap()
        .is_none());
    let h = e
        .get_file_history(FileHistoryParams {
            file_path: rp("a.txt"),
            scope: None,
        })
        .unwrap();
    let statuses: Vec<FileStatus> = h.versions.iter().map(|v| v.status).collect();
    assert_eq!(statuses, vec![FileStatus::Added, FileStatus::Modified]);
    assert_eq!(h.versions[1].entry_id, s1.entry_id.unwrap());
    let _ = s2;
}

#[test]
fn resume_records_outside_edits_once() {
    let t = T::new();
    t.write("a.txt", "1");
    let (e, init) = t.open();
    let file = PathBuf::from(&init.session_file);
    drop(e);
    // Unchanged: nothing appended.
    let (e, again) = Engine::open(t.config(Some(file.clone()))).unwrap();
    assert!(again.resumed);
    assert!(again.recovered.is_none());
    assert_eq!(again.leaf_id, init.leaf_id);
    drop(e);
    t.write("a.txt", "edited while away");
    let (mut e, third) = Engine::open(t.config(Some(file.clone()))).unwrap();
    let outside = third.recovered.unwrap().outside_entry_id.unwrap();
    assert_eq!(third.leaf_id, outside);
    let cps = e
        .list_checkpoints(ListCheckpointsParams::default())
        .unwrap();
    assert_eq!(
        cps.checkpoints.last().unwrap().kind,
        CheckpointKind::Outside
    );
    assert_eq!(snap(&mut e).entry_id, None);
    // A second open of a held session is refused.
    let locked = Engine::open(t.config(Some(file)));
    assert!(matches!(locked, Err(e) if e.is_locked()));
}

#[test]
fn host_entries_and_labels() {
    let t = T::new();
    let (mut e, init) = t.open();
    let m = e
        .append_entry(AppendEntryParams {
            entry_id: Some(id("msg-1")),
            text: Some("hello".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(!m.existed);
    let again = e
        .append_entry(AppendEntryParams {
            entry_id: Some(id("msg-1")),
            ..Default::default()
        })
        .unwrap();
    assert!(again.existed);
    let conflict = e.append_entry(AppendEntryParams {
        entry_id: Some(id("msg-1")),
        parent_id: Some(id("msg-1")),
        ..Default::default()
    });
    assert!(matches!(conflict, Err(EngineError::InvalidParams(_))));
    let bad = e.append_entry(AppendEntryParams {
        entry_id: Some(id("has space")),
        ..Default::default()
    });
    assert!(matches!(bad, Err(EngineError::InvalidParams(_))));
    e.label(LabelParams {
        target_id: init.baseline.entry_id.clone(),
        label: Some("start".into()),
        note: Some("clean tree".into()),
    })
    .unwrap();
    let tree = e.get_tree().unwrap();
    assert_eq!(tree.entries.len(), 3);
    assert_eq!(tree.entries[0].label.as_deref(), Some("start"));
    let cps = e
        .list_checkpoints(ListCheckpointsParams {
            scope: Some(Scope::All),
            query: Some("clean".into()),
        })
        .unwrap();
    assert_eq!(cps.checkpoints.len(), 1);
    assert_eq!(cps.checkpoints[0].note.as_deref(), Some("clean tree"));
    e.label(LabelParams {
        target_id: init.baseline.entry_id.clone(),
        label: None,
        note: None,
    })
    .unwrap();
    assert_eq!(e.get_tree().unwrap().entries[0].label, None);
    let line = std::fs::read_to_string(e.session_file()).unwrap();
    assert!(line.contains(&json!({"role":"user","content":"hello"}).to_string()));
}
