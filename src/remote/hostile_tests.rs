//! A remote written by someone hostile (docs/remote.md "What a remote can
//! and cannot do to you"): each test crafts a `file://` remote as a hostile
//! or buggy writer would leave it and checks that pulling, pushing and gc
//! take no orders from it. The binary's side of the same (sizes under a
//! memory limit, escapes on the terminal, the project root, the default
//! session) is in tests/integration/hostile_remote.rs.

use std::path::{Path, PathBuf};

use super::gc::{run as remote_gc, RemoteGcParams};
use super::index::RemoteIndex;
use super::keys;
use super::push::Check;
use super::tests::{checkpoint, side, tree, typed_id, Side};
use super::*;
use crate::session::{Header, SessionLog};
use crate::store::{
    encode_index, pack_header, EntryKind, IndexEntry, ObjectId, Store, Tree, TreeEntry,
};

fn file_url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// A session of `s` with a header of `header`'s, one checkpoint per tree.
fn session_with(s: &Side, header: Header, trees: &[ObjectId]) -> (PathBuf, SessionLog) {
    let path = s
        .store
        .layout()
        .new_session_file(&header.timestamp, &header.id);
    let mut log = SessionLog::create_with_header(&path, header, false).unwrap();
    for t in trees {
        checkpoint(&mut log, *t);
    }
    (path, log)
}

/// Puts a session's bytes on the remote as one chunk and a manifest of
/// writer `writer`, as a push would (or a hostile writer, with any bytes).
fn plant_session(remote: &Remote, session: &str, writer: &str, bytes: &[u8]) {
    let hash = ObjectId::of(bytes).to_hex();
    remote
        .backend
        .put(&keys::chunk(&typed_id(session), &hash), bytes.to_vec())
        .unwrap();
    let manifest = serde_json::json!({
        "format": 1, "sessionId": session, "writer": writer, "cwd": "/elsewhere",
        "updated": "2020-01-01T00:00:00.000Z", "entries": 1, "leaf": null,
        "bytes": bytes.len(), "chunks": [{"hash": hash, "bytes": bytes.len()}],
    });
    remote
        .backend
        .put(
            &keys::manifest(&typed_id(session), writer),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
}

/// Uploads `records` (each an object's id and its record as a store holds
/// it) as one pack and its index; the pack's name.
fn plant_pack(remote: &Remote, records: &[(ObjectId, Vec<u8>)]) -> String {
    let mut pack = pack_header().to_vec();
    let mut entries = Vec::new();
    for (id, record) in records {
        entries.push(IndexEntry {
            id: *id,
            offset: pack.len() as u64,
            len: record.len() as u64,
        });
        pack.extend_from_slice(record);
    }
    let name = format!("{:032x}", rand::random::<u128>());
    remote.backend.put(&keys::pack(&name), pack).unwrap();
    remote
        .backend
        .put(&keys::pack_index(&name), encode_index(&mut entries))
        .unwrap();
    name
}

/// Rewrites the session file `bytes`' header line with `edit`.
fn with_header(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(first).unwrap();
    edit(&mut header);
    format!("{header}\n{rest}").into_bytes()
}

fn session_files(store: &Store) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(store.layout().sessions_dir())
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// Item 1: a chunk's header that reuses a local session's id (and time)
/// neither replaces nor grows that session's file; one whose id or time
/// is a path writes nowhere. Names come from the id asked for only.
#[test]
fn a_header_never_names_a_local_file() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let a = side(&url);
    let b = side(&url);
    // B's own session, three checkpoints.
    let t = tree(&b.store, &[("mine.txt", b"mine\n")]);
    let (b_file, b_log) = session_with(&b, Header::new("/b"), &[t, t, t]);
    let b_header = b_log.header().clone();
    drop(b_log);
    let b_bytes = std::fs::read(&b_file).unwrap();

    // A session of A's, pushed, then planted under another id with a
    // header naming B's session (same id and time).
    let ta = tree(&a.store, &[("theirs.txt", b"theirs\n")]);
    let (a_file, _log) = session_with(&a, Header::new("/a"), &[ta]);
    push_session(&a.store, &a.remote, &a_file, Check::Remote).unwrap();
    let a_bytes = std::fs::read(&a_file).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let cases = [
        (
            "reuse00",
            serde_json::json!({"id": b_header.id, "timestamp": b_header.timestamp}),
        ),
        (
            "abspath0",
            serde_json::json!({"id": "abspath0", "timestamp": format!("{}/x", outside.path().display())}),
        ),
        (
            "dotdot00",
            serde_json::json!({"id": "../../../../dotdot00"}),
        ),
    ];
    for (id, edit) in cases {
        let bytes = with_header(&a_bytes, |h| {
            for (k, v) in edit.as_object().unwrap() {
                h[k] = v.clone();
            }
        });
        plant_session(&a.remote, id, "0123456789abcdef", &bytes);
        let err = pull_session(&b.store, &b.remote, &typed_id(id)).unwrap_err();
        assert!(
            matches!(err, RemoteError::Damaged { .. }),
            "{id}: refused as damaged: {err}"
        );
        assert_eq!(session_files(&b.store), vec![b_file.clone()], "{id}");
        assert_eq!(std::fs::read(&b_file).unwrap(), b_bytes, "{id}: untouched");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
    // The id asked for is checked before anything is fetched.
    let err = requested_session(&b.remote, "../x").unwrap_err();
    assert!(matches!(err, RemoteError::NoSuchSession { .. }), "{err}");
}

/// Item 1, a pull of a session the store has: it merges, and the file is
/// only ever appended to (never replaced), under the id asked for.
#[test]
fn a_pulled_session_gets_a_file_named_by_its_id_and_a_pulled_mark() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let a = side(&url);
    let b = side(&url);
    let ta = tree(&a.store, &[("f.txt", b"f\n")]);
    let (a_file, log) = session_with(&a, Header::new("/a"), &[ta]);
    let id = log.header().id.clone();
    push_session(&a.store, &a.remote, &a_file, Check::Remote).unwrap();
    let r = pull_session(&b.store, &b.remote, &typed_id(&id)).unwrap();
    assert!(r.created);
    assert_eq!(
        r.session_file.file_name(),
        a_file.file_name(),
        "named by the id asked for and the header's time as rewind spells it"
    );
    assert!(b.store.layout().is_pulled(&r.session_file));
    assert!(!a.store.layout().is_pulled(&a_file));
}

/// Item 2: a tree naming `.git` (any case) on the remote is refused when
/// it is read: the pull fails and writes no session file, so no restore
/// can ever write `.git/hooks/post-checkout`.
#[test]
fn a_tree_naming_git_is_refused_by_a_pull() {
    for name in [".git", ".GIT", ".Git"] {
        let remote_dir = tempfile::tempdir().unwrap();
        let url = file_url(remote_dir.path());
        let a = side(&url);
        let b = side(&url);
        // hooks/post-checkout, executable, in a tree under `name`: built
        // by hand, as `put_tree` refuses it.
        let hook = a.store.put(b"#!/bin/sh\ntouch /tmp/pwned\n").unwrap().id;
        let mut hooks = Tree::default();
        hooks.entries.insert(
            "post-checkout".into(),
            TreeEntry::new(EntryKind::Executable, hook, 27),
        );
        let mut git = Tree::default();
        git.entries.insert(
            "hooks".into(),
            TreeEntry::new(EntryKind::Tree, hooks.id(), 0),
        );
        let mut root = Tree::default();
        root.entries
            .insert(name.into(), TreeEntry::new(EntryKind::Tree, git.id(), 0));
        assert!(a.store.put_tree(&root).is_err(), "never stored locally");
        let mut ids = vec![hook];
        for t in [&hooks, &git, &root] {
            ids.push(a.store.put(&t.encode()).unwrap().id);
        }
        a.store.sync().unwrap();
        let records: Vec<_> = ids
            .iter()
            .map(|id| (*id, a.store.read_record(id).unwrap()))
            .collect();
        plant_pack(&a.remote, &records);
        let (file, log) = session_with(&a, Header::new("/a"), &[root.id()]);
        let id = log.header().id.clone();
        plant_session(
            &a.remote,
            &id,
            "0123456789abcdef",
            &std::fs::read(&file).unwrap(),
        );

        let err = pull_session(&b.store, &b.remote, &typed_id(&id)).unwrap_err();
        assert!(err.to_string().contains(name), "{name}: {err}");
        assert!(
            session_files(&b.store).is_empty(),
            "{name}: nothing written"
        );
    }
}

/// Item 5: a session pushed again after a remote gc removed it is whole on
/// the remote again: the push sees its chunks and manifest are gone and
/// sends them; another store pulls it.
#[test]
fn a_push_after_remote_gc_removed_the_session_sends_it_again() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let a = side(&url);
    let t1 = tree(&a.store, &[("f.txt", b"one\n")]);
    let (file, mut log) = session_with(&a, Header::new("/a"), &[t1]);
    let id = log.header().id.clone();
    push_session(&a.store, &a.remote, &file, Check::Remote).unwrap();
    let t2 = tree(&a.store, &[("f.txt", b"two\n")]);
    checkpoint(&mut log, t2);
    push_session(&a.store, &a.remote, &file, Check::Remote).unwrap();
    // What gc does to a session it removes: its manifests, then its chunks.
    std::fs::remove_dir_all(remote_dir.path().join("sessions").join(&id)).unwrap();

    let r = push_session(&a.store, &a.remote, &file, Check::Remote).unwrap();
    assert_eq!((r.chunks_resent, r.manifest_resent), (2, true), "{r:?}");
    let b = side(&url);
    pull_session(&b.store, &b.remote, &typed_id(&id)).unwrap();

    // The background pusher's kind of push checks too once it sends.
    std::fs::remove_dir_all(remote_dir.path().join("sessions").join(&id)).unwrap();
    checkpoint(&mut log, t1);
    let r = push_session(&a.store, &a.remote, &file, Check::WhenSending).unwrap();
    assert_eq!((r.chunks_resent, r.manifest_resent), (2, true), "{r:?}");
    let c = side(&url);
    pull_session(&c.store, &c.remote, &typed_id(&id)).unwrap();
}

/// The remote's packs, each with whether it is marked and what it holds.
fn packs(remote: &Remote) -> Vec<(String, bool, Vec<ObjectId>)> {
    let index = RemoteIndex::load(&remote.backend, &remote.state).unwrap();
    index
        .packs
        .iter()
        .map(|p| {
            let ids = p.entries.iter().map(|e| e.id).collect();
            (p.name.clone(), p.marked.is_some(), ids)
        })
        .collect()
}

/// What a gc's second step does to a marked pack.
fn delete_pack(remote: &Remote, name: &str) {
    for key in [
        keys::pack_index(name),
        keys::pack(name),
        keys::pack_mark(name),
    ] {
        remote.backend.delete(&key).unwrap();
    }
}

/// Item 4: a tree in an unmarked pack whose blob sits only in a marked one.
/// A push of a session holding that tree must not count on the blob: a gc
/// may delete the marked pack before the push's manifest lands. Here the
/// marked pack is deleted right after the push (as that gc would), and the
/// session still pulls.
#[test]
fn a_push_never_counts_on_a_marked_pack_through_a_tree_it_skips() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let mut a = side(&url);
    // One object a pack.
    a.remote = Remote::open(a.store.layout(), Some(&url))
        .unwrap()
        .with_pack_bytes(1);
    let blob_content = b"only in a marked pack\n";
    let t = tree(&a.store, &[("sub/b.txt", blob_content)]);
    let blob = ObjectId::of(blob_content);
    let (first, _log) = session_with(&a, Header::new("/a"), &[t]);
    push_session(&a.store, &a.remote, &first, Check::Remote).unwrap();
    // gc marked the blob's pack (its mark old), not the trees'.
    let (blob_pack, _, _) = packs(&a.remote)
        .into_iter()
        .find(|(_, _, ids)| ids.contains(&blob))
        .unwrap();
    a.remote
        .backend
        .put(
            &keys::pack_mark(&blob_pack),
            b"2020-01-01T00:00:00.000Z".to_vec(),
        )
        .unwrap();

    // A new session holding the same tree.
    let (second, log) = session_with(&a, Header::new("/a"), &[t]);
    let id = log.header().id.clone();
    push_session(&a.store, &a.remote, &second, Check::Remote).unwrap();
    assert!(
        packs(&a.remote)
            .iter()
            .any(|(_, marked, ids)| !marked && ids.contains(&blob)),
        "the blob went up again in an unmarked pack"
    );
    delete_pack(&a.remote, &blob_pack);
    let b = side(&url);
    pull_session(&b.store, &b.remote, &typed_id(&id)).unwrap();
}

/// Item 4, in a loop: two stores push sessions that come back to earlier
/// states (so packs mix live and dead objects), gc removes old sessions,
/// and after every push a gc runs as if it had run between the push's
/// listing and its manifest (the manifest hidden from it), then one with
/// it. After every round, every session on the remote pulls whole.
#[test]
fn gc_beside_pushes_never_loses_a_pushed_session() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let open = |s: &mut Side| {
        s.remote = Remote::open(s.store.layout(), Some(&url))
            .unwrap()
            .with_pack_bytes(300);
    };
    let mut sides = [side(&url), side(&url)];
    for s in sides.iter_mut() {
        open(s);
    }
    let gc = |remote: &Remote, keep: Option<u64>| {
        remote_gc(
            remote,
            &RemoteGcParams {
                keep_last: keep,
                grace: std::time::Duration::ZERO,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for round in 0..100 {
        let s = &sides[round % 2];
        // Contents drawn from a small pool, shared by every directory, so a
        // directory's tree often goes up in a later push (a later pack)
        // than the blob it names.
        let files: Vec<(String, Vec<u8>)> = (0..4)
            .map(|d| {
                let v = next(4);
                (
                    format!("d{d}/f{d}.txt"),
                    format!("version {v}\n").into_bytes(),
                )
            })
            .collect();
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_slice()))
            .collect();
        let t = tree(&s.store, &refs);
        let (file, log) = session_with(s, Header::new("/p"), &[t]);
        let id = log.header().id.clone();
        drop(log);
        push_session(&s.store, &s.remote, &file, Check::Remote).unwrap();
        // A gc that ran just before this push's manifest landed.
        let manifest = remote_dir
            .path()
            .join("sessions")
            .join(&id)
            .join("manifests");
        let hidden = remote_dir.path().join("hidden");
        // (It removes no session: a session's chunks are young then, and
        // with a grace period of 0 they would not be.)
        std::fs::rename(&manifest, &hidden).unwrap();
        gc(&s.remote, None);
        std::fs::rename(&hidden, &manifest).unwrap();
        gc(&s.remote, Some(1 + next(2)));
        for copy in list_sessions(&s.remote).unwrap() {
            let reader = side(&url);
            if let Err(e) = pull_session(&reader.store, &reader.remote, &copy.session_id) {
                panic!("round {round}: session {} lost: {e}", copy.session_id);
            }
        }
    }
}

/// Item 9: gc on a `file://` remote never follows a symbolic link planted
/// in it out of its directory, whatever the names beyond the link.
#[test]
fn remote_gc_never_deletes_through_a_planted_symlink() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let a = side(&url);
    let t = tree(&a.store, &[("f.txt", b"f\n")]);
    let (file, _log) = session_with(&a, Header::new("/a"), &[t]);
    push_session(&a.store, &a.remote, &file, Check::Remote).unwrap();

    let victim = tempfile::tempdir().unwrap();
    let chunk_named = format!("{}.jsonl", "a".repeat(32));
    let pack_named = format!("{}.pack", "b".repeat(32));
    std::fs::write(victim.path().join(&chunk_named), "precious").unwrap();
    std::fs::write(victim.path().join(&pack_named), "precious").unwrap();
    std::fs::write(victim.path().join("w.json"), "precious").unwrap();
    // An old session whose chunks and manifests directories lead outside.
    let evil = remote_dir.path().join("sessions/evil0000");
    std::fs::create_dir_all(&evil).unwrap();
    std::os::unix::fs::symlink(victim.path(), evil.join("chunks")).unwrap();
    std::os::unix::fs::symlink(victim.path(), evil.join("manifests")).unwrap();
    // And a directory of packs that leads outside.
    std::os::unix::fs::symlink(victim.path(), remote_dir.path().join("packs/more")).unwrap();

    let report = remote_gc(
        &a.remote,
        &RemoteGcParams {
            keep_last: Some(0),
            grace: std::time::Duration::ZERO,
            ..Default::default()
        },
    )
    .unwrap();
    for name in [&chunk_named, &pack_named, &"w.json".to_string()] {
        assert_eq!(
            std::fs::read(victim.path().join(name)).unwrap(),
            b"precious",
            "{name}: {report:?}"
        );
    }
    // Writes do not follow a link either.
    std::fs::remove_dir_all(remote_dir.path().join("sessions")).unwrap();
    std::os::unix::fs::symlink(victim.path(), remote_dir.path().join("sessions")).unwrap();
    let err = push_session(&a.store, &a.remote, &file, Check::Remote).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 3);
}

/// Item 6: sizes a manifest claims are checked before anything is
/// allocated or fetched: 2^64 - 1 bytes, and one chunk listed 4,000 times.
#[test]
fn claimed_sizes_are_bounded_before_anything_is_fetched() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let a = side(&url);
    let t = tree(&a.store, &[("f.txt", b"f\n")]);
    let (file, log) = session_with(&a, Header::new("/a"), &[t]);
    let id = log.header().id.clone();
    push_session(&a.store, &a.remote, &file, Check::Remote).unwrap();
    let key = keys::manifest(&typed_id(&id), a.remote.writer());
    let manifest = a.remote.backend.get(&key, u64::MAX).unwrap().unwrap();
    let mut m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    let chunk = m["chunks"][0].clone();
    let huge = [
        serde_json::json!({"bytes": u64::MAX, "chunks": [{"hash": chunk["hash"], "bytes": u64::MAX}]}),
        serde_json::json!({"bytes": u64::MAX, "chunks": [chunk.clone(), {"hash": chunk["hash"], "bytes": u64::MAX}]}),
        serde_json::json!({
            "bytes": chunk["bytes"].as_u64().unwrap() * 4000,
            "chunks": vec![chunk.clone(); 4000],
        }),
    ];
    let b = side(&url);
    for claim in huge {
        for (k, v) in claim.as_object().unwrap() {
            m[k] = v.clone();
        }
        a.remote
            .backend
            .put(&key, serde_json::to_vec(&m).unwrap())
            .unwrap();
        // 4,000 copies of a small chunk are within the bound: read, and
        // then refused as a session it is not.
        match pull_session(&b.store, &b.remote, &typed_id(&id)) {
            Err(RemoteError::Damaged { .. } | RemoteError::Session(_)) => {}
            other => panic!("{claim}: {other:?}"),
        }
        assert!(session_files(&b.store).is_empty());
        remote_gc(&a.remote, &RemoteGcParams::default()).unwrap_err();
    }
}

/// Item 5, the background push: it checks once it has something to send,
/// sends again what a remote gc removed, and `rewind status` can say so.
#[test]
fn the_background_push_sends_again_what_a_remote_gc_removed_and_says_so() {
    let remote_dir = tempfile::tempdir().unwrap();
    let url = file_url(remote_dir.path());
    let a = side(&url);
    let t1 = tree(&a.store, &[("f.txt", b"one\n")]);
    let (file, mut log) = session_with(&a, Header::new("/a"), &[t1]);
    let id = log.header().id.clone();
    let spec = a.remote.spec.clone();
    let pusher = Pusher::start(a.store.layout().root(), spec.clone());
    pusher.stop(std::time::Duration::from_secs(10));
    assert!(last_resent(a.store.layout(), &spec).is_none());
    std::fs::remove_dir_all(remote_dir.path().join("sessions").join(&id)).unwrap();
    checkpoint(&mut log, tree(&a.store, &[("f.txt", b"two\n")]));
    let pusher = Pusher::start(a.store.layout().root(), spec.clone());
    pusher.stop(std::time::Duration::from_secs(10));
    let said = last_resent(a.store.layout(), &spec).expect("recorded for status");
    assert!(
        said.contains(&id) && said.contains("1 chunk(s) and the manifest"),
        "{said}"
    );
    let b = side(&url);
    pull_session(&b.store, &b.remote, &typed_id(&id)).unwrap();
    drop(file);
}
