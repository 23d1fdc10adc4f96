//! Restores, undo, navigation, approve/reset, crash recovery and the
//! checkout's last check.

use super::*;

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

/// A dirty file the target has a directory in place of is kept, so the
/// target's files below it cannot be written either: they are skipped as in
/// the way, and the plan lists both (its `skipped` and `dirty`, typed as
/// `RepoPath` since issue 40).
#[test]
fn a_kept_file_blocks_the_directory_the_target_has_there() {
    let t = T::new();
    t.write("x/child.txt", "in a directory");
    t.write("b.txt", "b1");
    let (mut e, init) = t.open();
    std::fs::remove_dir_all(t.dir.path().join("x")).unwrap();
    t.write("x", "a file now");
    t.write("b.txt", "b2");
    snap(&mut e);
    // Edited outside since the last snapshot.
    t.write("x", "edited outside");
    let params = |preview| RestoreFilesParams {
        target_entry_id: Some(init.baseline.entry_id.clone()),
        preview: Some(preview),
        ..Default::default()
    };
    let preview = e.restore_files(params(true)).unwrap();
    let done = e.restore_files(params(false)).unwrap();
    for r in [&preview, &done] {
        assert_eq!(r.dirty, vec![rp("x")]);
        assert_eq!(r.skipped, vec![rp("x"), rp("x/child.txt")]);
        assert_eq!(
            r.conflicts,
            vec![
                Conflict {
                    path: rp("x"),
                    reason: ConflictReason::Dirty
                },
                Conflict {
                    path: rp("x/child.txt"),
                    reason: ConflictReason::InTheWay
                },
            ]
        );
        assert!(r.deleted.is_empty());
    }
    assert_eq!(preview.restored, vec![rp("b.txt")]);
    assert_eq!(done.restored, vec![rp("b.txt")]);
    assert_eq!(read(&t, "x").as_deref(), Some("edited outside"));
    assert_eq!(read(&t, "b.txt").as_deref(), Some("b1"));
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
    assert!(cps
        .checkpoints
        .iter()
        .any(|c| c.kind == CheckpointKind::PreRestore));
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
    assert_eq!(e.get_tree().unwrap().leaf_id, Some(leaf));
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
    assert_eq!(r.reset_to, ap.approved_tree_hash);
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
    let journal = crate::engine::rollback::journal::Journal {
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

/// A restore touches a path only while it holds what the plan was made from: content
/// that changed after the scan (a racing writer, an event the watcher missed) is kept and
/// reported dirty, whatever `onConflict` says.
#[test]
fn apply_keeps_a_path_that_changed_after_the_plan() {
    let t = T::new();
    t.write("x.txt", "planned against\n");
    t.write("y.txt", "gone\n");
    let (mut e, _) = t.open();
    let entry = |c: &[u8]| {
        TreeEntry::new(
            crate::store::EntryKind::File,
            e.store.put(c).unwrap().id,
            c.len() as u64,
        )
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
        &[(RepoPath::parse("x.txt").unwrap(), target)],
        &[RepoPath::parse("y.txt").unwrap()],
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
            &[(RepoPath::parse("x.txt").unwrap(), target)],
            &[],
            &before,
            "restore",
            &mut result
        )
        .is_empty());
    assert_eq!(read("x.txt"), "target\n");
}
