//! Paths a checkpoint could not read are recorded present, not captured
//! (docs/architecture.md rule 14): never listed as deleted or added, never
//! deleted or overwritten by a restore to that checkpoint, captured again
//! by the next checkpoint that can read them.

use super::*;
use crate::store::UncapturedReason;

fn read(t: &T, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(t.dir.path().join(rel)).ok()
}

fn chmod(t: &T, rel: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        t.dir.path().join(rel),
        std::fs::Permissions::from_mode(mode),
    )
    .unwrap();
}

/// Runs `f` on this thread (and the threads it starts) without the
/// capabilities that let root read any file, so `chmod 000` means what it
/// says also when the tests run as root (as CI does). Capabilities are per
/// thread on Linux and a new thread copies its creator's, so the scan's
/// walker threads lose them too; the permitted set is kept, so they come
/// back when `f` returns.
fn without_read_override<R>(f: impl FnOnce() -> R) -> R {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    const DAC_OVERRIDE: u32 = 1 << 1;
    const DAC_READ_SEARCH: u32 = 1 << 2;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut saved = [Data::default(); 2];
    // SAFETY: capget/capset with a version-3 header read and write exactly
    // two `Data` records, which `saved` and `dropped` are.
    unsafe {
        assert_eq!(
            libc::syscall(libc::SYS_capget, &mut header, saved.as_mut_ptr()),
            0
        );
        let mut dropped = saved;
        dropped[0].effective &= !(DAC_OVERRIDE | DAC_READ_SEARCH);
        assert_eq!(
            libc::syscall(libc::SYS_capset, &mut header, dropped.as_ptr()),
            0
        );
    }
    struct Restore(Header, [Data; 2]);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: as above; restores what capget returned.
            unsafe {
                libc::syscall(libc::SYS_capset, &mut self.0, self.1.as_ptr());
            }
        }
    }
    let _restore = Restore(header, saved);
    f()
}

fn paths(list: &[RepoPath]) -> Vec<&str> {
    list.iter().map(RepoPath::as_str).collect()
}

#[test]
fn an_unreadable_file_is_present_not_captured_and_no_restore_touches_it() {
    let t = T::new();
    t.write("a.txt", "a1\n");
    t.write("secret.env", "KEY=1\n");
    let (mut e, init) = t.open();
    chmod(&t, "secret.env", 0o000);
    t.write("a.txt", "a2\n");
    let s1 = without_read_override(|| snap(&mut e));
    assert_eq!(paths(&s1.diff.modified), ["a.txt"]);
    assert!(s1.diff.deleted.is_empty(), "{:?}", s1.diff);
    assert_eq!(paths(&s1.diff.not_captured), ["secret.env"]);
    assert_eq!(s1.stats.untracked.len(), 1);
    assert_eq!(s1.stats.untracked[0].reason, UncapturedReason::Unreadable);
    let s1_id = s1.entry_id.clone().unwrap();

    // Queries say "not captured", with the reason; never "deleted".
    let files = e
        .get_modified_files(RangeParams {
            from: None,
            to: Some(Point::Entry(s1_id.clone())),
        })
        .unwrap()
        .files;
    let secret = files.iter().find(|f| f.path == "secret.env").unwrap();
    assert_eq!(secret.status, FileStatus::NotCaptured);
    assert_eq!(secret.reason, Some(UncapturedReason::Unreadable));
    assert_eq!(secret.entry_id.as_ref(), Some(&s1_id));
    let diff = e
        .get_file_diff(FileDiffParams {
            to: Some(Point::Entry(s1_id.clone())),
            ..FileDiffParams::new(rp("secret.env"))
        })
        .unwrap()
        .unwrap();
    assert_eq!(diff.new_not_captured, Some(UncapturedReason::Unreadable));
    assert_eq!(diff.old_content.as_deref(), None, "no diff against nothing");
    assert!(diff.unified_diff.is_empty());
    let cps = e.list_checkpoints(Default::default()).unwrap().checkpoints;
    let cp = cps.iter().find(|c| c.entry_id == s1_id).unwrap();
    assert_eq!((cp.deleted, cp.not_captured), (0, 1));

    // Readable again, and changed: the next checkpoint captures it.
    chmod(&t, "secret.env", 0o644);
    t.write("secret.env", "KEY=2\n");
    let s2 = snap(&mut e);
    assert_eq!(paths(&s2.diff.recaptured), ["secret.env"]);
    assert!(s2.diff.added.is_empty());
    let s2_id = s2.entry_id.unwrap();
    let history = e
        .get_file_history(FileHistoryParams {
            file_path: rp("secret.env"),
            scope: None,
        })
        .unwrap()
        .versions;
    let statuses: Vec<_> = history.iter().map(|v| (v.status, v.reason)).collect();
    assert_eq!(
        statuses,
        [
            (FileStatus::Added, None),
            (FileStatus::NotCaptured, Some(UncapturedReason::Unreadable)),
            (FileStatus::Recaptured, Some(UncapturedReason::Unreadable)),
        ]
    );
    assert_eq!(history[1].hash, None);
    assert!(history[2].hash.is_some());

    // A restore to the checkpoint that could not read it leaves it alone,
    // and says so; the rest is restored.
    let r = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(s1_id.clone()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.not_captured.len(), 1);
    assert_eq!(r.not_captured[0].path, "secret.env");
    assert_eq!(r.not_captured[0].reason, UncapturedReason::Unreadable);
    assert!(paths(&r.skipped).contains(&"secret.env"));
    assert!(r.deleted.is_empty());
    assert_eq!(read(&t, "secret.env").unwrap(), b"KEY=2\n");
    assert_eq!(read(&t, "a.txt").unwrap(), b"a2\n");
    // Navigating there and back, undoing and resetting never delete it.
    e.navigate_tree(nav_to(init.baseline.entry_id.clone()))
        .unwrap();
    assert_eq!(read(&t, "secret.env").unwrap(), b"KEY=1\n");
    e.navigate_tree(nav_to(s1_id.clone())).unwrap();
    assert_eq!(read(&t, "secret.env").unwrap(), b"KEY=1\n");
    e.undo(UndoParams::default()).unwrap();
    assert_eq!(read(&t, "secret.env").unwrap(), b"KEY=1\n");
    e.navigate_tree(nav_to(s2_id)).unwrap();
    assert_eq!(read(&t, "secret.env").unwrap(), b"KEY=2\n");
}

#[test]
fn a_directory_that_cannot_be_listed_keeps_its_files() {
    let t = T::new();
    t.write("d/x.txt", "x1\n");
    t.write("d/sub/y.txt", "y1\n");
    t.write("top.txt", "t1\n");
    let (mut e, _) = t.open();
    chmod(&t, "d", 0o000);
    t.write("top.txt", "t2\n");
    let s1 = without_read_override(|| snap(&mut e));
    assert!(s1.diff.deleted.is_empty(), "{:?}", s1.diff);
    assert_eq!(
        paths(&s1.diff.not_captured),
        ["d", "d/sub/y.txt", "d/x.txt"]
    );
    let s1_id = s1.entry_id.unwrap();
    chmod(&t, "d", 0o755);
    t.write("d/x.txt", "x2\n");
    let s2 = snap(&mut e);
    assert!(s2.diff.added.is_empty(), "{:?}", s2.diff);
    assert_eq!(paths(&s2.diff.recaptured), ["d", "d/sub/y.txt", "d/x.txt"]);
    // Back to the checkpoint that could not list `d`: its files stay as
    // they are now (x2), top.txt goes back.
    t.write("top.txt", "t3\n");
    let r = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(s1_id.clone()),
            on_conflict: Some(OnConflict::Overwrite),
            ..Default::default()
        })
        .unwrap();
    assert!(r.deleted.is_empty(), "{:?}", r.deleted);
    assert_eq!(read(&t, "d/x.txt").unwrap(), b"x2\n");
    assert_eq!(read(&t, "d/sub/y.txt").unwrap(), b"y1\n");
    assert_eq!(read(&t, "top.txt").unwrap(), b"t2\n");
    let left: Vec<&str> = r.not_captured.iter().map(|u| u.path.as_str()).collect();
    assert!(left.contains(&"d/x.txt"), "{left:?}");
    // One file of it, by name: still left alone.
    let r = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(s1_id),
            files: Some(vec![rp("d/sub/y.txt")]),
            ..Default::default()
        })
        .unwrap();
    assert!(r.deleted.is_empty() && r.restored.is_empty());
    assert_eq!(read(&t, "d/sub/y.txt").unwrap(), b"y1\n");
}

#[test]
fn revert_leaves_a_file_a_side_did_not_capture() {
    let t = T::new();
    t.write("a.txt", "a1\n");
    t.write("b.txt", "b1\n");
    let (mut e, _) = t.open();
    chmod(&t, "b.txt", 0o000);
    t.write("a.txt", "a2\n");
    let s1 = without_read_override(|| snap(&mut e));
    chmod(&t, "b.txt", 0o644);
    let r = e
        .revert(RevertParams {
            entry_id: s1.entry_id.unwrap(),
            to_entry_id: None,
            files: None,
            preview: None,
            on_conflict: None,
        })
        .unwrap();
    let b = r.files.iter().find(|f| f.path == "b.txt").unwrap();
    assert_eq!(b.status, RevertStatus::Skip);
    assert!(b.reason.as_deref().unwrap().contains("did not capture"));
    assert_eq!(read(&t, "b.txt").unwrap(), b"b1\n");
    assert_eq!(read(&t, "a.txt").unwrap(), b"a1\n");
}

/// A file rewritten in place, block by block, while snapshots run (a
/// database, a download): each checkpoint holds a version that existed, or
/// says the file was present but not captured. None calls it deleted, and
/// no restore to any of them deletes it.
#[test]
fn an_in_place_writer_across_snapshots_is_never_deleted() {
    use std::io::{Seek, SeekFrom, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    const BLOCK: usize = 64 * 1024;
    const BLOCKS: usize = 64;
    let t = T::new();
    t.write("keep.txt", "k\n");
    let path = t.dir.path().join("data.db");
    std::fs::write(&path, vec![b'a'; BLOCK * BLOCKS]).unwrap();
    let (mut e, _) = t.open();
    let stop = AtomicBool::new(false);
    let mut taken = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut v = b'a';
            while !stop.load(Ordering::Relaxed) {
                v = if v == b'z' { b'a' } else { v + 1 };
                for b in 0..BLOCKS {
                    f.seek(SeekFrom::Start((b * BLOCK) as u64)).unwrap();
                    f.write_all(&[v; BLOCK]).unwrap();
                }
            }
        });
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = Stop(&stop);
        for i in 0..8 {
            t.write("keep.txt", &format!("k{i}\n"));
            taken.push(snap(&mut e));
        }
    });
    let mut uncaptured = 0;
    for s in &taken {
        assert!(
            !paths(&s.diff.deleted).contains(&"data.db"),
            "a checkpoint called the file deleted: {:?}",
            s.diff
        );
        if paths(&s.diff.not_captured).contains(&"data.db") {
            uncaptured += 1;
        }
    }
    eprintln!(
        "{uncaptured} of {} checkpoints could not capture data.db",
        taken.len()
    );
    assert!(uncaptured > 0, "the writer never outran the reader");
    let now = read(&t, "data.db").unwrap();
    for s in &taken {
        let target = s.entry_id.clone().unwrap();
        let plan = e
            .restore_files(RestoreFilesParams {
                target_entry_id: Some(target),
                preview: Some(true),
                ..Default::default()
            })
            .unwrap();
        assert!(!paths(&plan.deleted).contains(&"data.db"));
    }
    // Restoring the last checkpoint that could not capture it keeps it.
    let last = taken
        .iter()
        .rev()
        .find(|s| paths(&s.diff.not_captured).contains(&"data.db"))
        .unwrap();
    let last_id = last.entry_id.clone().unwrap();
    let r = e
        .restore_files(RestoreFilesParams {
            target_entry_id: Some(last_id),
            ..Default::default()
        })
        .unwrap();
    assert!(r.not_captured.iter().any(|u| u.path == "data.db"));
    assert_eq!(read(&t, "data.db").unwrap(), now);
    // Quiet now: the next checkpoint captures it as usual.
    t.write("keep.txt", "end\n");
    let end = snap(&mut e);
    let tree = end.tree_hash;
    let entry = crate::store::lookup(&e.store, &tree, "data.db")
        .unwrap()
        .unwrap();
    assert!(entry.has_object());
    assert_eq!(e.store.get(&entry.id).unwrap(), now);
}

/// Random histories with unreadable moments (files and a directory locked
/// with `chmod 000` between snapshots): no checkpoint lists a file that was
/// on disk as deleted, and a restore to any checkpoint writes what it
/// captured, deletes what it knew absent and leaves alone what it did not
/// capture and what cannot be read now.
mod histories {
    use std::collections::{BTreeMap, BTreeSet};
    use std::os::unix::fs::MetadataExt;

    use proptest::prelude::*;

    use super::*;

    const FILES: &[&str] = &["a.txt", "b.txt", "d/x.txt", "d/y.txt"];
    /// What can be locked: each file, and the directory `d`.
    const LOCKS: &[&str] = &["a.txt", "b.txt", "d/x.txt", "d/y.txt", "d"];

    #[derive(Debug, Clone)]
    enum Op {
        Write(usize, u8),
        Delete(usize),
        Lock(usize),
        Unlock(usize),
        Snap,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..FILES.len(), any::<u8>()).prop_map(|(i, b)| Op::Write(i, b)),
            1 => (0..FILES.len()).prop_map(Op::Delete),
            2 => (0..LOCKS.len()).prop_map(Op::Lock),
            2 => (0..LOCKS.len()).prop_map(Op::Unlock),
            3 => Just(Op::Snap),
        ]
    }

    /// The project as the test knows it.
    #[derive(Clone, Debug, Default)]
    struct Model {
        files: BTreeMap<String, Vec<u8>>,
        locked: BTreeSet<String>,
    }

    impl Model {
        fn unreadable(&self, path: &str) -> bool {
            self.locked.contains(path) || (path.starts_with("d/") && self.locked.contains("d"))
        }

        fn apply(&mut self, t: &T, op: &Op) {
            match *op {
                Op::Write(i, b) => {
                    let p = FILES[i];
                    if self.unreadable(p) {
                        return;
                    }
                    t.write(p, &format!("{p} {b}\n"));
                    self.files
                        .insert(p.to_string(), format!("{p} {b}\n").into_bytes());
                }
                Op::Delete(i) => {
                    let p = FILES[i];
                    if self.locked.contains("d") && p.starts_with("d/") {
                        return;
                    }
                    if self.files.remove(p).is_some() {
                        std::fs::remove_file(t.dir.path().join(p)).unwrap();
                        self.locked.remove(p);
                    }
                }
                Op::Lock(i) | Op::Unlock(i) => {
                    let p = LOCKS[i];
                    let exists = if p == "d" {
                        t.dir.path().join("d").is_dir()
                    } else {
                        self.files.contains_key(p)
                            && !(p.starts_with("d/") && self.locked.contains("d"))
                    };
                    if !exists {
                        return;
                    }
                    if matches!(op, Op::Lock(_)) {
                        chmod(t, p, 0o000);
                        self.locked.insert(p.to_string());
                    } else {
                        chmod(t, p, if p == "d" { 0o755 } else { 0o644 });
                        self.locked.remove(p);
                    }
                }
                Op::Snap => {}
            }
        }
    }

    fn mtime(t: &T, p: &str) -> Option<i64> {
        std::fs::symlink_metadata(t.dir.path().join(p))
            .ok()
            .map(|m| m.mtime_nsec() + m.mtime() * 1_000_000_000)
    }

    /// Unlocks everything however the case ends, so the temp directories
    /// can be removed.
    struct Unlock<'a>(&'a T);
    impl Drop for Unlock<'_> {
        fn drop(&mut self) {
            use std::os::unix::fs::PermissionsExt;
            let root = self.0.dir.path();
            let _ =
                std::fs::set_permissions(root.join("d"), std::fs::Permissions::from_mode(0o755));
            for p in FILES {
                let _ =
                    std::fs::set_permissions(root.join(p), std::fs::Permissions::from_mode(0o644));
            }
        }
    }

    fn run(ops: Vec<Op>, order: Vec<usize>) -> std::result::Result<(), TestCaseError> {
        let t = T::new();
        let _unlock = Unlock(&t);
        let mut model = Model::default();
        model.apply(&t, &Op::Write(0, 0));
        model.apply(&t, &Op::Write(2, 0));
        let (mut e, init) = t.open();
        let mut checkpoints = vec![(init.baseline.entry_id.clone(), model.clone())];
        for op in &ops {
            model.apply(&t, op);
            if matches!(op, Op::Snap) {
                let s = snap(&mut e);
                for p in &s.diff.deleted {
                    prop_assert!(
                        !model.files.contains_key(p.as_str()),
                        "{p} is on disk but the checkpoint calls it deleted"
                    );
                }
                if let Some(id) = s.entry_id {
                    checkpoints.push((id, model.clone()));
                }
            }
        }
        for k in order {
            let (id, then) = &checkpoints[k % checkpoints.len()];
            let before: BTreeMap<&str, Option<i64>> =
                FILES.iter().map(|p| (*p, mtime(&t, p))).collect();
            e.restore_files(RestoreFilesParams {
                target_entry_id: Some(id.clone()),
                on_conflict: Some(OnConflict::Overwrite),
                ..Default::default()
            })
            .map_err(|err| TestCaseError::fail(format!("restore to {id}: {err}")))?;
            for p in FILES {
                // Unreadable now (the file, or the directory it would be
                // in), or not captured by the target: left as it is.
                let left_alone = model.unreadable(p) || then.unreadable(p);
                if left_alone {
                    prop_assert_eq!(mtime(&t, p), before[p], "{} was touched", p);
                    continue;
                }
                match then.files.get(*p) {
                    Some(content) => {
                        let now = read(&t, p);
                        prop_assert_eq!(now.as_ref(), Some(content), "{}", p);
                        model.files.insert(p.to_string(), content.clone());
                    }
                    None => {
                        prop_assert!(read(&t, p).is_none(), "{} should be deleted", p);
                        model.files.remove(*p);
                    }
                }
            }
            if !t.dir.path().join("d").is_dir() {
                model.locked.remove("d");
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn restores_never_touch_what_was_not_captured(
            ops in proptest::collection::vec(op(), 1..16),
            order in proptest::collection::vec(0usize..32, 1..4),
        ) {
            without_read_override(|| run(ops, order))?;
        }
    }
}
