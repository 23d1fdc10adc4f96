//! The watcher against full scans, and what staging refuses.

use super::*;

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

/// `git status` and friends rewrite `.git/index` all the time; with the
/// same tracked paths that changes nothing a scan captures, so the watcher
/// is still trusted. A path newly tracked (it may be ignored, and tracked
/// files are captured even then) means a full scan.
#[test]
fn a_rewritten_git_index_with_the_same_paths_needs_no_full_scan() {
    use crate::working_copy::FullScan;
    let t = T::new();
    let git = |args: &[&str]| t.git(args);
    t.write(".gitignore", "build/\n");
    t.write("a.txt", "1");
    git(&["init", "-q"]);
    git(&["add", "a.txt", ".gitignore"]);
    let (mut e, _) = t.open();
    let full = |e: &Engine| -> u64 { e.working_copy.scan_counts().full.values().sum() };
    let before = full(&e);
    // Rewritten (new inode, new mtime), same paths.
    git(&["add", "a.txt"]);
    std::fs::copy(
        t.dir.path().join(".git/index"),
        t.dir.path().join(".git/index.copy"),
    )
    .unwrap();
    std::fs::rename(
        t.dir.path().join(".git/index.copy"),
        t.dir.path().join(".git/index"),
    )
    .unwrap();
    t.write("a.txt", "2");
    let s = snap(&mut e);
    assert_eq!(s.diff.modified, vec!["a.txt"]);
    assert_eq!(full(&e), before, "{:?}", e.working_copy.scan_counts());
    // A file in an ignored directory, then tracked: captured, through a
    // full scan.
    t.write("build/out.txt", "x");
    assert!(snap(&mut e).entry_id.is_none(), "ignored, not captured");
    git(&["add", "-f", "build/out.txt"]);
    let s = snap(&mut e);
    assert_eq!(s.diff.added, vec!["build/out.txt"]);
    assert_eq!(
        e.working_copy
            .scan_counts()
            .full
            .get(&FullScan::RulesChanged),
        Some(&1)
    );
}

/// A checkpoint after `.git/index` changed reads and parses it once: the
/// scan's tracked paths and the git state it records share the parse (issue
/// 40; before, each parsed it). A checkpoint that finds it unchanged reads
/// it not at all.
#[test]
fn a_changed_git_index_is_read_once_per_checkpoint() {
    use crate::session::records::StepSnapshot;
    let t = T::new();
    let git = |args: &[&str]| t.git(args);
    t.write("a.txt", "1");
    t.write("b.txt", "1");
    git(&["init", "-q"]);
    git(&["add", "a.txt"]);
    let (mut e, _) = t.open();
    let reads = |e: &Engine| e.working_copy.git_index_reads();
    let listing = |e: &Engine, id: &EntryId| {
        let entry = e.log().index().get(id).unwrap().clone();
        entry.record::<StepSnapshot>().unwrap().git_index_tree_hash
    };
    let first = reads(&e);
    assert_eq!(first, 1, "the baseline's scan and git state: one read");

    git(&["add", "b.txt"]);
    t.write("a.txt", "2");
    let s = snap(&mut e);
    let changed = listing(&e, &s.entry_id.unwrap());
    assert!(changed.is_some(), "the git state was recorded");
    assert_eq!(reads(&e), first + 1);

    t.write("a.txt", "3");
    let s = snap(&mut e);
    assert_eq!(listing(&e, &s.entry_id.unwrap()), changed);
    assert_eq!(reads(&e), first + 1);
}

pub(super) mod watched_equals_full_scan {
    //! With the watcher, a snapshot merges only the changed paths into the
    //! last scan's files and tree. Whatever the changes, the result must be
    //! the tree a full scan of the same disk makes.
    use super::*;
    use proptest::prelude::*;

    /// Names whose byte order interleaves a directory's descendants with
    /// its siblings ("a" < "a-b" < "a.txt" < "a/b" < "ab").
    pub(in crate::engine::tests) const NAMES: &[&str] =
        &["a", "a-b", "a.txt", "a/b", "a/b/c", "a/c", "ab", "ab/x"];

    #[derive(Debug, Clone)]
    pub(in crate::engine::tests) enum Op {
        Write(usize, u8),
        Remove(usize),
        RemoveDir(usize),
    }

    pub(in crate::engine::tests) fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..NAMES.len(), any::<u8>()).prop_map(|(i, b)| Op::Write(i, b)),
            1 => (0..NAMES.len()).prop_map(Op::Remove),
            1 => (0..NAMES.len()).prop_map(Op::RemoveDir),
        ]
    }

    pub(in crate::engine::tests) fn apply(root: &Path, op: &Op) {
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
