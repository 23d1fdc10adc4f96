//! The remote against a local directory (`file://`), which serves the unit
//! tests; tests/integration/remote.rs runs the same paths against a real S3
//! server.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::remote::push::Check;
use crate::session::records::{Record, StepSnapshot};
use crate::session::{EntryId, Header, SessionId, SessionLog};
use crate::store::{build_tree, flatten, EntryKind, Store, TreeEntry};

pub(super) struct Side {
    pub(super) _dir: tempfile::TempDir,
    pub(super) store: Store,
    pub(super) remote: Remote,
}

/// A test's session id, typed as a command line's would be.
pub(super) fn typed_id(text: &str) -> SessionId {
    SessionId::parse(text).unwrap()
}

/// A store of its own with `url` as its remote.
pub(super) fn side(url: &str) -> Side {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store"), false).unwrap();
    let remote = Remote::open(store.layout(), Some(url)).unwrap();
    Side {
        _dir: dir,
        store,
        remote,
    }
}

/// `len` bytes no compressor shrinks (xorshift, `state` carried over
/// calls), for tests that need objects to fill packs.
pub(super) fn incompressible(len: usize, state: &mut u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            *state as u8
        })
        .collect()
}

/// A tree of `files` (path → content) stored in `store`.
pub(super) fn tree(store: &Store, files: &[(&str, &[u8])]) -> crate::store::ObjectId {
    let entries: BTreeMap<String, TreeEntry> = files
        .iter()
        .map(|(p, c)| {
            let id = store.put(c).unwrap().id;
            (
                p.to_string(),
                TreeEntry::new(EntryKind::File, id, c.len() as u64),
            )
        })
        .collect();
    let id = build_tree(store, &entries).unwrap();
    store.sync().unwrap();
    id
}

pub(super) fn checkpoint(log: &mut SessionLog, tree: crate::store::ObjectId) -> EntryId {
    let leaf = log.index().leaf().map(|e| e.id.clone());
    let record = StepSnapshot {
        snapshot_tree_hash: Some(tree),
        ..Default::default()
    };
    log.append(record.to_new_entry(None, leaf).unwrap())
        .unwrap()
        .id
}

fn new_session(s: &Side) -> (PathBuf, SessionLog) {
    let header = Header::new("/project");
    let path = s
        .store
        .layout()
        .new_session_file(&header.timestamp, &header.id);
    let log = SessionLog::create_with_header(&path, header, false).unwrap();
    (path, log)
}

fn files_of(store: &Store, id: crate::store::ObjectId) -> Vec<(String, Vec<u8>)> {
    flatten(store, &id)
        .unwrap()
        .iter()
        .map(|(p, e)| (p.clone(), store.get(&e.id).unwrap()))
        .collect()
}

fn many(n: usize) -> Vec<(String, Vec<u8>)> {
    (0..n)
        .map(|i| {
            (
                format!("d{}/f{i}.txt", i % 7),
                format!("content {i}\n").into_bytes(),
            )
        })
        .collect()
}

fn as_refs(v: &[(String, Vec<u8>)]) -> Vec<(&str, &[u8])> {
    v.iter().map(|(p, c)| (p.as_str(), c.as_slice())).collect()
}

#[test]
fn a_pushed_session_pulls_into_an_empty_store_whole_and_verified() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (path, mut log) = new_session(&a);
    let sid = log.header().id.clone();
    let files = many(100);
    let t1 = tree(&a.store, &as_refs(&files));
    let c1 = checkpoint(&mut log, t1);
    let r = push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    assert!(r.objects > 100 && r.packs == 1, "{r:?}");
    assert_eq!(r.requests, 5, "list, pack, index, chunk, manifest");
    // Nothing new: nothing sent. The background pusher asks nothing; a push
    // by hand lists the session's keys to see they are all still there.
    let again = push_session(&a.store, &a.remote, &path, Check::WhenSending).unwrap();
    assert!(again.up_to_date && again.requests == 0, "{again:?}");
    let checked = push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    assert!(checked.up_to_date && checked.requests == 1, "{checked:?}");

    // Three changed files: one small pack and one chunk.
    let mut changed = files.clone();
    for f in changed.iter_mut().take(3) {
        f.1 = b"edited\n".to_vec();
    }
    let t2 = tree(&a.store, &as_refs(&changed));
    let c2 = checkpoint(&mut log, t2);
    let r2 = push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    // The session's keys listed, packs listed, pack, index, chunk, manifest.
    assert!(r2.requests <= 6 && r2.objects < 20, "{r2:?}");

    let b = side(&url);
    let pulled = pull_session(&b.store, &b.remote, &typed_id(&sid)).unwrap();
    assert!(pulled.created);
    let copy = SessionLog::open_read_only(&pulled.session_file).unwrap();
    assert_eq!(
        std::fs::read(&pulled.session_file).unwrap(),
        std::fs::read(&path).unwrap(),
        "the session file, byte for byte"
    );
    assert!(copy.index().contains(&c1) && copy.index().contains(&c2));
    assert_eq!(files_of(&b.store, t1), files_of(&a.store, t1));
    assert_eq!(files_of(&b.store, t2), files_of(&a.store, t2));
}

#[test]
fn an_interrupted_push_resumes_without_sending_objects_again() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (path, mut log) = new_session(&a);
    let sid = log.header().id.clone();
    checkpoint(&mut log, tree(&a.store, &as_refs(&many(50))));
    push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    // As if the push had died after its packs: no manifest, no local state.
    let manifests = remote_dir.path().join(format!("sessions/{sid}/manifests"));
    std::fs::remove_dir_all(&manifests).unwrap();
    std::fs::remove_dir_all(a.remote.spec.state_dir(a.store.layout()).join("sessions")).unwrap();
    let b = side(&url);
    assert!(
        matches!(
            pull_session(&b.store, &b.remote, &typed_id(&sid)),
            Err(RemoteError::NoSuchSession { .. })
        ),
        "without its manifest the session is not there for readers"
    );
    let r = push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    assert_eq!((r.objects, r.packs), (0, 0), "{r:?}");
    assert!(r.log_bytes > 0);
    pull_session(&b.store, &b.remote, &typed_id(&sid)).unwrap();
}

#[test]
fn an_object_missing_on_the_remote_names_the_checkpoint_and_writes_nothing() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (path, mut log) = new_session(&a);
    let sid = log.header().id.clone();
    let c1 = checkpoint(&mut log, tree(&a.store, &as_refs(&many(40))));
    push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    for f in std::fs::read_dir(remote_dir.path().join("packs")).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let b = side(&url);
    let err = pull_session(&b.store, &b.remote, &typed_id(&sid)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&sid) && text.contains(c1.as_str()) && text.contains("not on the remote"),
        "{text}"
    );
    assert!(super::pull::find_local(b.store.layout(), &typed_id(&sid))
        .unwrap()
        .is_none());
}

#[test]
fn two_stores_pushing_one_session_make_two_branches_and_keep_each_leaf() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (path_a, mut log_a) = new_session(&a);
    let sid = log_a.header().id.clone();
    let base = checkpoint(&mut log_a, tree(&a.store, &[("x", b"1")]));
    push_session(&a.store, &a.remote, &path_a, Check::Remote).unwrap();

    let b = side(&url);
    let path_b = pull_session(&b.store, &b.remote, &typed_id(&sid))
        .unwrap()
        .session_file;
    let (mut log_b, _) = SessionLog::open(&path_b, false).unwrap();
    let on_b = checkpoint(&mut log_b, tree(&b.store, &[("x", b"from b")]));
    drop(log_b);
    let on_a = checkpoint(&mut log_a, tree(&a.store, &[("x", b"from a")]));
    drop(log_a);
    // Both push at once (one after the other here): two manifests.
    push_session(&b.store, &b.remote, &path_b, Check::Remote).unwrap();
    push_session(&a.store, &a.remote, &path_a, Check::Remote).unwrap();

    let r = pull_session(&a.store, &a.remote, &typed_id(&sid)).unwrap();
    assert_eq!(r.entries_added, 1, "{r:?}");
    let log = SessionLog::open_read_only(&path_a).unwrap();
    let ix = log.index();
    assert!(ix.contains(&on_b) && ix.contains(&on_a));
    assert_eq!(ix.get(&on_b).unwrap().parent_id.as_ref(), Some(&base));
    // The leaf is back on A's branch, below A's own checkpoint.
    assert!(ix.is_ancestor(&on_a, &ix.leaf().unwrap().id));
    assert_eq!(
        ix.latest_working_tree(),
        ix.get(&on_a).unwrap().recorded_tree()
    );
    // Pulling again adds nothing.
    assert_eq!(
        pull_session(&a.store, &a.remote, &typed_id(&sid))
            .unwrap()
            .entries_added,
        0
    );
}

/// A session whose objects span many packs pulls whole: a tree stored by
/// this pull is walked like one still missing (the bug: trees that arrived
/// in the first packs were taken for complete, and the blobs of later packs
/// never came; 227 objects short on a 25,660-file tree).
#[test]
fn a_session_spanning_many_packs_pulls_every_object() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let remote_a = Remote::open(a.store.layout(), Some(&url))
        .unwrap()
        .with_pack_bytes(4096);
    let (path, mut log) = new_session(&a);
    let sid = log.header().id.clone();
    // One directory of incompressible files: each file fills a pack of
    // its own, and the directory's tree shares the last pack with the root.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let files: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| (format!("d/f{i}.bin"), incompressible(3000, &mut x)))
        .collect();
    let t = tree(&a.store, &as_refs(&files));
    checkpoint(&mut log, t);
    let r = push_session(&a.store, &remote_a, &path, Check::Remote).unwrap();
    assert!(r.packs >= 20, "{r:?}");
    let b = side(&url);
    let pulled = pull_session(&b.store, &b.remote, &typed_id(&sid)).unwrap();
    assert_eq!(pulled.objects, r.objects, "{pulled:?}");
    assert_eq!(files_of(&b.store, t), files_of(&a.store, t));
}

fn gc_params(keep_last: u64) -> gc::RemoteGcParams {
    gc::RemoteGcParams {
        keep_last: Some(keep_last),
        max_age_days: None,
        grace: std::time::Duration::ZERO,
        dry_run: false,
    }
}

/// gc on a remote: an old session goes with its manifest and chunks; the
/// packs only it reached are marked by one run and deleted by the next; the
/// session kept still pulls whole.
#[test]
fn remote_gc_keeps_the_newest_and_deletes_packs_in_two_runs() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (old_path, mut old_log) = new_session(&a);
    let old_id = old_log.header().id.clone();
    checkpoint(
        &mut old_log,
        tree(&a.store, &[("old.txt", b"only in the old session")]),
    );
    push_session(&a.store, &a.remote, &old_path, Check::Remote).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (new_path, mut new_log) = new_session(&a);
    let new_id = new_log.header().id.clone();
    let t = tree(&a.store, &as_refs(&many(30)));
    checkpoint(&mut new_log, t);
    push_session(&a.store, &a.remote, &new_path, Check::Remote).unwrap();
    let packs = || {
        std::fs::read_dir(remote_dir.path().join("packs"))
            .unwrap()
            .count()
    };
    assert_eq!(packs(), 4, "two packs and their indexes");

    let dry = gc::run(
        &a.remote,
        &gc::RemoteGcParams {
            dry_run: true,
            ..gc_params(1)
        },
    )
    .unwrap();
    assert_eq!(dry.sessions_removed, vec![typed_id(&old_id)]);
    assert_eq!(packs(), 4, "a dry run changes nothing");
    let first = gc::run(&a.remote, &gc_params(1)).unwrap();
    assert_eq!((first.marked, first.deleted), (1, 0), "{first:?}");
    assert!(!remote_dir
        .path()
        .join(format!("sessions/{old_id}"))
        .join("manifests")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
    let second = gc::run(&a.remote, &gc_params(1)).unwrap();
    assert_eq!((second.marked, second.deleted), (0, 1), "{second:?}");
    assert_eq!(packs(), 2);

    let b = side(&url);
    let pulled = pull_session(&b.store, &b.remote, &typed_id(&new_id)).unwrap();
    assert!(pulled.created);
    assert_eq!(files_of(&b.store, t), files_of(&a.store, t));
    assert!(matches!(
        pull_session(&b.store, &b.remote, &typed_id(&old_id)),
        Err(RemoteError::NoSuchSession { .. })
    ));
}

/// A remote directory (its URL) and a store that pushed two sessions to
/// it: an older one whose one file is `shared.txt` (the tree returned),
/// then a newer one; a gc keeping one session has marked the older one's
/// pack.
fn old_session_marked() -> (tempfile::TempDir, String, Side, crate::store::ObjectId) {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (old_path, mut old_log) = new_session(&a);
    let shared = tree(&a.store, &[("shared.txt", b"in both sessions")]);
    checkpoint(&mut old_log, shared);
    push_session(&a.store, &a.remote, &old_path, Check::Remote).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (keep_path, mut keep_log) = new_session(&a);
    checkpoint(&mut keep_log, tree(&a.store, &[("k.txt", b"kept")]));
    push_session(&a.store, &a.remote, &keep_path, Check::Remote).unwrap();
    let first = gc::run(&a.remote, &gc_params(1)).unwrap();
    assert_eq!(first.marked, 1, "{first:?}");
    (remote_dir, url, a, shared)
}

/// A push that needs objects of a pack gc marked does not count on it: it
/// sends them again, and the next gc's deletion of the marked pack costs
/// the new session nothing.
#[test]
fn a_push_beside_remote_gc_never_counts_on_a_marked_pack() {
    let (_remote_dir, url, a, shared) = old_session_marked();

    // Another session now needs the marked pack's objects: they go up again.
    let (new_path, mut new_log) = new_session(&a);
    let new_id = new_log.header().id.clone();
    checkpoint(&mut new_log, shared);
    let r = push_session(&a.store, &a.remote, &new_path, Check::Remote).unwrap();
    assert!(r.objects >= 2, "sent again, not counted on: {r:?}");
    let second = gc::run(&a.remote, &gc_params(2)).unwrap();
    assert_eq!(second.deleted, 1, "{second:?}");
    let b = side(&url);
    pull_session(&b.store, &b.remote, &typed_id(&new_id)).unwrap();
    assert_eq!(files_of(&b.store, shared), files_of(&a.store, shared));
}

/// The race the marks are for: a push lists the packs, gc marks one of
/// them, the push counts on it and writes its manifest. The next gc finds
/// the pack referenced again and takes the mark off instead of deleting it.
#[test]
fn remote_gc_unmarks_a_pack_a_push_counted_on_before_the_mark() {
    let (remote_dir, url, a, shared) = old_session_marked();
    let marks: Vec<_> = std::fs::read_dir(remote_dir.path().join("packs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gc"))
        .collect();
    assert_eq!(marks.len(), 1);
    // The push listed the packs before the mark existed.
    let mark = std::fs::read(&marks[0]).unwrap();
    std::fs::remove_file(&marks[0]).unwrap();
    let (new_path, mut new_log) = new_session(&a);
    let new_id = new_log.header().id.clone();
    checkpoint(&mut new_log, shared);
    let r = push_session(&a.store, &a.remote, &new_path, Check::Remote).unwrap();
    assert_eq!(r.objects, 0, "counted on the pack: {r:?}");
    std::fs::write(&marks[0], mark).unwrap();

    let next = gc::run(&a.remote, &gc_params(10)).unwrap();
    assert_eq!((next.unmarked, next.deleted), (1, 0), "{next:?}");
    let b = side(&url);
    pull_session(&b.store, &b.remote, &typed_id(&new_id)).unwrap();
    assert_eq!(files_of(&b.store, shared), files_of(&a.store, shared));
}

/// What a cut-short push left (a pack without its index) goes once older
/// than the grace period, and not before.
#[test]
fn remote_gc_removes_what_a_cut_short_push_left_after_the_grace() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let a = side(&url);
    let (path, mut log) = new_session(&a);
    checkpoint(&mut log, tree(&a.store, &[("x", b"x")]));
    push_session(&a.store, &a.remote, &path, Check::Remote).unwrap();
    let orphan = remote_dir.path().join(format!("packs/{:032x}.pack", 7u128));
    std::fs::write(&orphan, b"RWPK\x01\0\0\0").unwrap();
    let patient = gc::RemoteGcParams {
        grace: std::time::Duration::from_secs(3600),
        ..gc_params(10)
    };
    assert_eq!(gc::run(&a.remote, &patient).unwrap().strays, 0);
    assert!(orphan.exists(), "a push may still be writing its index");
    assert_eq!(gc::run(&a.remote, &gc_params(10)).unwrap().strays, 1);
    assert!(!orphan.exists());
}
