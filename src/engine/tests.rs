//! Engine semantics, in process (the integration tests speak the same
//! through the binary).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use super::api::*;
use super::*;
use crate::repo_path::RepoPath;

fn rp(path: &str) -> RepoPath {
    RepoPath::parse(path).expect("a clean test path")
}
use crate::store::TreeEntry;
use crate::working_copy::ScanOptions;

struct T {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl T {
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

/// Navigate to `target` with every option at its default.
fn nav_to(target: impl Into<String>) -> NavigateTreeParams {
    NavigateTreeParams {
        target_id: target.into(),
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
    assert_eq!(list.checkpoints[0].kind, "manual");
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
    let by_path: Vec<(String, Option<String>, Option<u64>)> = m
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
        from: Some(Point::Entry("nope".into())),
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
    assert_eq!(cps.checkpoints.last().unwrap().kind, "outside");
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
            entry_id: Some("msg-1".into()),
            text: Some("hello".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(!m.existed);
    let again = e
        .append_entry(AppendEntryParams {
            entry_id: Some("msg-1".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(again.existed);
    let conflict = e.append_entry(AppendEntryParams {
        entry_id: Some("msg-1".into()),
        parent_id: Some("msg-1".into()),
        ..Default::default()
    });
    assert!(matches!(conflict, Err(EngineError::InvalidParams(_))));
    let bad = e.append_entry(AppendEntryParams {
        entry_id: Some("has space".into()),
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

fn read(t: &T, rel: &str) -> Option<String> {
    std::fs::read_to_string(t.dir.path().join(rel)).ok()
}

#[test]
fn restore_undo_redo() {
    let t = T::new();
    t.write("a.txt", "v1");
    let events = Arc::new(std::sync::Mutex::new(Vec::<EngineEvent>::new()));
    let sink = events.clone();
    let (mut e, init) = Engine::open_with_events(
        t.config(None),
        Some(Arc::new(move |event| sink.lock().unwrap().push(event))),
    )
    .unwrap();
    t.write("a.txt", "v2");
    t.write("new/added.txt", "added");
    let s1 = snap(&mut e);
    // Preview changes nothing and appends nothing.
    let before = std::fs::read(e.session_file()).unwrap();
    let pv = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(init.baseline.entry_id.clone()),
            preview: Some(true),
            ..Default::default()
        })
        .unwrap();
    assert!(pv.preview);
    assert_eq!(pv.restored, vec!["a.txt"]);
    assert_eq!(pv.deleted, vec!["new/added.txt"]);
    assert_eq!(std::fs::read(e.session_file()).unwrap(), before);
    assert_eq!(read(&t, "a.txt").as_deref(), Some("v2"));

    let r = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(init.baseline.entry_id.clone()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.restored, vec!["a.txt"]);
    assert_eq!(r.deleted, vec!["new/added.txt"]);
    assert_eq!(read(&t, "a.txt").as_deref(), Some("v1"));
    assert!(
        !t.dir.path().join("new").exists(),
        "emptied directory removed"
    );
    assert!(r.unrevert_entry_id.is_some());
    {
        let ev = events.lock().unwrap();
        assert_eq!(
            ev.last(),
            Some(&EngineEvent::FilesChanged {
                reason: super::api::ChangeReason::Restore,
                written: vec![rp("a.txt")],
                deleted: vec![rp("new/added.txt")],
            })
        );
    }
    // Nothing left to do: a second restore writes nothing and appends no
    // unrevert-point.
    let again = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(init.baseline.entry_id.clone()),
            ..Default::default()
        })
        .unwrap();
    assert!(again.unrevert_entry_id.is_none());

    let u = e.undo(UndoParams::default()).unwrap();
    assert_eq!(read(&t, "a.txt").as_deref(), Some("v2"));
    assert_eq!(read(&t, "new/added.txt").as_deref(), Some("added"));
    assert!(u.unrevert_entry_id.is_some());
    // Undo of the undo is a redo.
    e.undo(UndoParams::default()).unwrap();
    assert_eq!(read(&t, "a.txt").as_deref(), Some("v1"));
    let _ = s1;
}

#[test]
fn dirty_files_follow_on_conflict() {
    let t = T::new();
    t.write("a.txt", "v1");
    t.write("b.txt", "b1");
    let (mut e, init) = t.open();
    t.write("a.txt", "v2");
    t.write("b.txt", "b2");
    snap(&mut e);
    // Edited outside since the last snapshot.
    t.write("a.txt", "outside");
    let target = Some(init.baseline.entry_id.clone());
    let abort = e.restore_files(RestoreFilesParams {
        target_entry_id: target.clone(),
        on_conflict: Some(OnConflict::Abort),
        ..Default::default()
    });
    match abort {
        Err(EngineError::Conflicts(c)) => {
            assert_eq!(c.len(), 1);
            assert_eq!(c[0].path, "a.txt");
            assert_eq!(c[0].reason, ConflictReason::Dirty);
        }
        other => panic!("expected conflicts, got {other:?}"),
    }
    assert_eq!(
        read(&t, "b.txt").as_deref(),
        Some("b2"),
        "abort touched nothing"
    );
    let skip = e
        .restore_files(RestoreFilesParams {
            target_entry_id: target.clone(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(skip.dirty, vec!["a.txt"]);
    assert_eq!(skip.skipped, vec!["a.txt"]);
    assert_eq!(skip.restored, vec!["b.txt"]);
    assert_eq!(read(&t, "a.txt").as_deref(), Some("outside"));
    // The outside edit was kept by the pre-restore snapshot either way.
    let cps = e
        .list_checkpoints(ListCheckpointsParams::default())
        .unwrap();
    assert!(cps.checkpoints.iter().any(|c| c.kind == "pre-restore"));
    let over = e
        .restore_files(RestoreFilesParams {
            target_entry_id: target,
            on_conflict: Some(OnConflict::Overwrite),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(over.restored, vec!["a.txt"]);
    assert_eq!(read(&t, "a.txt").as_deref(), Some("v1"));
}

#[test]
fn uncaptured_files_are_never_touched() {
    let t = T::new();
    // An ignored directory is never entered (small ignored files are
    // captured, ignored directories are not).
    t.write(".gitignore", "logs/\n");
    t.write("a.txt", "1");
    let (mut e, init) = t.open();
    t.write("logs/debug.log", "ignored, keep me");
    t.write("a.txt", "2");
    snap(&mut e);
    e.restore_files(RestoreFilesParams {
        target_entry_id: Some(init.baseline.entry_id),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        read(&t, "logs/debug.log").as_deref(),
        Some("ignored, keep me")
    );
    assert_eq!(read(&t, "a.txt").as_deref(), Some("1"));
}

#[test]
fn navigate_away_and_back() {
    let t = T::new();
    t.write("a.txt", "base");
    let (mut e, init) = t.open();
    t.write("a.txt", "branch one");
    let s1 = snap(&mut e).entry_id.unwrap();
    let nav = e
        .navigate_tree(NavigateTreeParams {
            target_id: init.baseline.entry_id.clone(),
            skip_files: None,
            summarize: Some(true),
            summary: None,
            label: Some("retry".into()),
            preview: None,
            on_conflict: None,
        })
        .unwrap();
    assert_eq!(nav.old_leaf_id, s1);
    assert_eq!(read(&t, "a.txt").as_deref(), Some("base"));
    let leaf = nav.new_leaf_id.clone().unwrap();
    assert_eq!(e.get_tree().unwrap().leaf_id, leaf);
    // A new turn branches off the baseline.
    t.write("a.txt", "branch two");
    let s2 = snap(&mut e);
    assert_eq!(s2.diff.modified, vec!["a.txt"]);
    let list = e
        .list_checkpoints(ListCheckpointsParams::default())
        .unwrap();
    assert!(
        list.checkpoints.iter().all(|c| c.entry_id != s1),
        "abandoned branch is off the path"
    );
    // Back to the first branch: its files come back, and the second
    // branch's work is kept by a pre-restore snapshot... (it was snapshotted).
    let back = e.navigate_tree(nav_to(s1.clone())).unwrap();
    assert_eq!(read(&t, "a.txt").as_deref(), Some("branch one"));
    assert_eq!(back.restore.unwrap().restored, vec!["a.txt"]);
    // Survives a restart: the leaf is the navigation's last entry.
    let file = e.session_file().to_path_buf();
    drop(e);
    let (_e, init2) = Engine::open(t.config(Some(file))).unwrap();
    assert_eq!(init2.leaf_id, back.new_leaf_id.unwrap());
    assert!(init2.recovered.is_none());
}

#[test]
fn approve_and_reset() {
    let t = T::new();
    t.write("a.txt", "1");
    let (mut e, _) = t.open();
    assert!(!e.get_status().unwrap().has_unapproved);
    t.write("a.txt", "2");
    let st = e.get_status().unwrap();
    assert!(st.has_unapproved);
    assert_eq!(st.changed_files[0].base_content.as_deref(), Some("1"));
    let ap = e
        .approve(ApproveParams {
            message: Some("ok".into()),
        })
        .unwrap();
    assert_eq!(ap.snapshots_approved, 2);
    assert!(!e.get_status().unwrap().has_unapproved);
    t.write("a.txt", "3");
    t.write("b.txt", "new");
    snap(&mut e);
    let r = e.reset(ResetParams::default()).unwrap();
    assert_eq!(r.reset_to, ap.approved_tree_hash.to_hex());
    assert_eq!(read(&t, "a.txt").as_deref(), Some("2"));
    assert_eq!(read(&t, "b.txt"), None);
    // Undoable like any restore.
    e.undo(UndoParams::default()).unwrap();
    assert_eq!(read(&t, "a.txt").as_deref(), Some("3"));
    assert!(matches!(
        T::new().open().0.undo(UndoParams::default()),
        Err(EngineError::NothingToUndo)
    ));
}

#[test]
fn interrupted_restore_is_completed_on_open() {
    let t = T::new();
    t.write("a.txt", "1");
    let (mut e, init) = t.open();
    t.write("a.txt", "2");
    snap(&mut e);
    let r = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(init.baseline.entry_id),
            ..Default::default()
        })
        .unwrap();
    let file = e.session_file().to_path_buf();
    let unrevert = r.unrevert_entry_id.unwrap();
    let entry = e.log().index().get(&unrevert).unwrap().clone();
    drop(e);
    // Simulate a crash after the unrevert-point but before the file was
    // written: the journal is still there and the disk has the old file.
    let d = entry.data().unwrap();
    let journal = journal::Journal {
        version: 1,
        unrevert_entry_id: unrevert.clone(),
        pre_rollback_tree_hash: d["preRollbackTreeHash"].as_str().unwrap().into(),
        working_tree_hash: d["workingTreeHash"].as_str().unwrap().into(),
        writes: vec!["a.txt".into()],
        deletes: vec![],
    };
    journal
        .write(&crate::store::Layout::session_journal(&file), false)
        .unwrap();
    t.write("a.txt", "2");
    let (_e, init2) = Engine::open(t.config(Some(file.clone()))).unwrap();
    let rec = init2.recovered.unwrap().interrupted_restore.unwrap();
    assert_eq!(rec.action, RecoveryAction::Completed);
    assert_eq!(rec.restored, vec!["a.txt"]);
    assert_eq!(read(&t, "a.txt").as_deref(), Some("1"));
    assert!(!crate::store::Layout::session_journal(&file).exists());
}

#[test]
fn the_watcher_sees_what_the_host_did_not_announce() {
    let t = T::new();
    t.write("a.txt", "1");
    t.write("dir/b.txt", "1");
    let (mut e, _) = t.open();
    t.write("a.txt", "2");
    t.write("dir/b.txt", "2");
    t.write("dir/new/c.txt", "3");
    let s = e
        .snapshot(SnapshotParams {
            kind: Some(SnapshotKind::Tool),
            paths: Some(vec![rp("a.txt")]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(s.diff.modified, vec!["a.txt", "dir/b.txt"]);
    assert_eq!(s.diff.added, vec!["dir/new/c.txt"]);
    // Nothing changed: no walk, nothing hashed, nothing appended.
    let same = snap(&mut e);
    assert_eq!((same.entry_id, same.stats.files_scanned), (None, 0));
    // An ignore rule changing means a full scan.
    t.write(".gitignore", "dir/\n");
    let ignored = snap(&mut e);
    assert_eq!(ignored.diff.added, vec![".gitignore"]);
    assert_eq!(ignored.diff.deleted.len(), 2, "{:?}", ignored.diff);
}

mod watched_equals_full_scan {
    //! With the watcher, a snapshot merges only the changed paths into the
    //! last scan's files and tree. Whatever the changes, the result must be
    //! the tree a full scan of the same disk makes.
    use super::*;
    use proptest::prelude::*;

    /// Names whose byte order interleaves a directory's descendants with
    /// its siblings ("a" < "a-b" < "a.txt" < "a/b" < "ab").
    const NAMES: &[&str] = &["a", "a-b", "a.txt", "a/b", "a/b/c", "a/c", "ab", "ab/x"];

    #[derive(Debug, Clone)]
    enum Op {
        Write(usize, u8),
        Remove(usize),
        RemoveDir(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..NAMES.len(), any::<u8>()).prop_map(|(i, b)| Op::Write(i, b)),
            1 => (0..NAMES.len()).prop_map(Op::Remove),
            1 => (0..NAMES.len()).prop_map(Op::RemoveDir),
        ]
    }

    fn apply(root: &Path, op: &Op) {
        match op {
            Op::Write(i, b) => {
                let p = root.join(NAMES[*i]);
                // A file where a directory is wanted (or the reverse) is
                // replaced, as an agent's tool would.
                for anc in p.ancestors().skip(1) {
                    if anc == root {
                        break;
                    }
                    if anc.is_file() {
                        std::fs::remove_file(anc).unwrap();
                    }
                }
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).unwrap();
                }
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, [*b]).unwrap();
            }
            Op::Remove(i) => {
                let _ = std::fs::remove_file(root.join(NAMES[*i]));
            }
            Op::RemoveDir(i) => {
                let _ = std::fs::remove_dir_all(root.join(NAMES[*i]));
            }
        }
    }

    /// The tree of a fresh full scan built from scratch (no stat cache, no
    /// earlier tree).
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
        })
        .unwrap();
        crate::store::build_tree(&e.store, &out.files).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn watched_snapshots_equal_full_scans(ops in proptest::collection::vec(op(), 1..10)) {
            let t = T::new();
            t.write("keep/k.txt", "k");
            let (mut watched, _) = t.open();
            let full_store = tempfile::tempdir().unwrap();
            let (mut full, _) = Engine::open(EngineConfig {
                store_dir: Some(full_store.path().to_path_buf()),
                watch: false,
                ..t.config(None)
            })
            .unwrap();
            for op in &ops {
                apply(t.dir.path(), op);
                let w = snap(&mut watched);
                let f = snap(&mut full);
                prop_assert_eq!(&w.tree_hash, &f.tree_hash, "after {:?}", op);
                prop_assert_eq!(&w.diff, &f.diff, "after {:?}", op);
                // Both engines derive their trees incrementally; a tree built
                // from scratch is the reference.
                prop_assert_eq!(&f.tree_hash, &rebuilt(&full), "after {:?}", op);
            }
        }
    }
}

/// A restore touches a path only while it holds what the plan was made from: content
/// that changed after the scan (a racing writer, an event the watcher missed) is kept and
/// reported dirty, whatever `onConflict` says.
#[test]
fn apply_keeps_a_path_that_changed_after_the_plan() {
    let t = T::new();
    t.write("x.txt", "planned against\n");
    t.write("y.txt", "gone\n");
    let (mut e, _) = t.open();
    let entry = |c: &[u8]| TreeEntry {
        kind: crate::store::EntryKind::File,
        id: e.store.put(c).unwrap().id,
        size: c.len() as u64,
    };
    let planned_x = entry(b"planned against\n");
    let planned_y = entry(b"gone\n");
    let target = entry(b"target\n");
    let before: FlatTree = [
        ("x.txt".to_string(), planned_x),
        ("y.txt".to_string(), planned_y),
    ]
    .into_iter()
    .collect();
    // Changed under our feet after the plan.
    t.write("x.txt", "written during the restore\n");
    t.write("y.txt", "also changed\n");
    let mut result = RestoreResult::default();
    let failed = e.apply(
        &[("x.txt".to_string(), target)],
        &["y.txt".to_string()],
        &before,
        "restore",
        &mut result,
    );
    assert_eq!(failed, ["y.txt", "x.txt"]);
    assert_eq!(result.dirty, ["y.txt", "x.txt"]);
    assert!(result.restored.is_empty() && result.deleted.is_empty());
    let read = |p: &str| std::fs::read_to_string(t.dir.path().join(p)).unwrap();
    assert_eq!(read("x.txt"), "written during the restore\n");
    assert_eq!(read("y.txt"), "also changed\n");
    // Unchanged since the plan: written.
    t.write("x.txt", "planned against\n");
    let mut result = RestoreResult::default();
    assert!(e
        .apply(
            &[("x.txt".to_string(), target)],
            &[],
            &before,
            "restore",
            &mut result
        )
        .is_empty());
    assert_eq!(read("x.txt"), "target\n");
}

/// Issue 10, found 8: staging through an in-project symlink captured `lnk/f1` as a file
/// below a deleted `lnk`, and a restore made a real directory of the link.
#[test]
fn staging_through_a_symlinked_parent_is_refused_and_never_captured() {
    let t = T::new();
    t.write(".gitignore", "d/\n");
    t.write("d/f1", "one\n");
    std::os::unix::fs::symlink("d", t.dir.path().join("lnk")).unwrap();
    let (mut e, _) = t.open();
    let err = e
        .stage_files(StageFilesParams {
            paths: vec![rp("lnk/f1")],
        })
        .unwrap_err();
    assert!(err.to_string().contains("not a real directory"), "{err}");
    // A path staged while its parent was a directory, which then became a link.
    e.stage_files(StageFilesParams {
        paths: vec![rp("x/f1")],
    })
    .unwrap();
    std::os::unix::fs::symlink("d", t.dir.path().join("x")).unwrap();
    let r = snap(&mut e);
    assert_eq!(r.diff.added, ["x"], "{:?}", r.diff);
    let files = e.flat(Some(r.tree_hash)).unwrap();
    assert_eq!(
        files.get("x").map(|f| f.kind),
        Some(crate::store::EntryKind::Symlink)
    );
    assert!(files.get("x/f1").is_none() && files.get("lnk/f1").is_none());
}
