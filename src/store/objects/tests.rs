use std::time::Duration;

use super::*;
use crate::store::tree::{EntryKind, TreeEntry};
use std::collections::HashSet;

use crate::store::new_test_store as new_store;
use crate::store::pack::MAX_PACKED_OBJECT;

fn random_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|_| rand::random::<u8>()).collect()
}

/// Content too large for a pack, so stored as a loose object file: what
/// the tests of loose files (and of stores written before every batch was
/// packed) write.
fn loose_sized(tag: &[u8]) -> Vec<u8> {
    let mut content = tag.repeat(MAX_PACKED_OBJECT / tag.len() + 1);
    content.truncate(MAX_PACKED_OBJECT + 1);
    content
}

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Store>();
}

#[test]
fn open_creates_layout_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a/b/store");
    let store = Store::open(&root, true).unwrap();
    assert_eq!(store.root(), root);
    assert!(root.join("objects").is_dir());
    assert!(store.sessions_dir().is_dir());
    assert_eq!(store.sessions_dir(), root.join("sessions"));
    assert_eq!(fs::read_to_string(root.join("VERSION")).unwrap(), "4\n");
    // Reopening an existing store works and keeps its objects.
    let id = store.put(b"kept").unwrap().id;
    drop(store);
    let store = Store::open(&root, true).unwrap();
    assert_eq!(store.get(&id).unwrap(), b"kept");
    store.sync().unwrap();
}

/// Stores of versions 1 to 3 are read, and upgraded to 4 on open (their
/// trees hold no uncaptured entries or modes they do not know, so they are
/// valid version-4 trees).
#[test]
fn open_upgrades_older_stores() {
    for old in ["1\n", "2\n", "3\n"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let store = Store::open(&root, false).unwrap();
        let id = store.put(b"from before").unwrap().id;
        store.sync().unwrap();
        drop(store);
        fs::write(root.join("VERSION"), old).unwrap();
        let store = Store::open(&root, false).unwrap();
        assert_eq!(store.get(&id).unwrap(), b"from before");
        assert_eq!(fs::read_to_string(root.join("VERSION")).unwrap(), "4\n");
    }
}

#[test]
fn open_refuses_unknown_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("VERSION"), "5\n").unwrap();
    match Store::open(root, false) {
        Err(StoreError::UnsupportedVersion {
            found: 5,
            supported: 4,
        }) => {}
        other => panic!("unexpected {:?}", other.err()),
    }
    // Left untouched.
    assert_eq!(fs::read_to_string(root.join("VERSION")).unwrap(), "5\n");
    assert!(!root.join("objects").exists());
    fs::write(root.join("VERSION"), "garbage").unwrap();
    assert!(matches!(
        Store::open(root, false),
        Err(StoreError::Io { .. })
    ));
}

#[test]
fn blob_round_trips() {
    let (_dir, store) = new_store();
    let compressible = b"let x = 42; // the answer\n".repeat(50_000);
    let random = random_bytes(1 << 20);
    for content in [&b""[..], b"hello\n", &compressible, &random] {
        let out = store.put(content).unwrap();
        assert!(out.written);
        assert_eq!(out.id, ObjectId::of(content));
        let on_disk = store.read_record(&out.id).unwrap().len() as u64;
        assert_eq!(out.stored_bytes, on_disk);
        assert_eq!(store.get(&out.id).unwrap(), content);
        assert!(store.contains(&out.id));
    }
    // Compression kicked in only where it helps.
    let c = store.put(&compressible).unwrap().stored_bytes;
    assert!(c < compressible.len() as u64 / 10);
    let r = store.put(&random).unwrap().stored_bytes;
    assert_eq!(r, random.len() as u64 + HEADER_LEN as u64);
    store.sync().unwrap();
    assert_eq!(store.usage().unwrap().objects, 4);
}

/// A file holding `content`, for `put_file`.
fn file_with(content: &[u8]) -> (tempfile::NamedTempFile, File) {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(content).unwrap();
    let file = File::open(f.path()).unwrap();
    (f, file)
}

#[test]
fn streamed_put_writes_what_the_in_memory_put_writes() {
    let text = b"fn main() { println!(\"streamed\"); }\n".repeat(100_000);
    let block_aligned = b"0123456789abcdef".repeat(3 << 16);
    let random = random_bytes(STREAM_MIN + 12_345);
    let mut mixed = random_bytes(STREAM_MIN);
    mixed.extend_from_slice(&text);
    let small = b"a small file\n".repeat(100);
    for content in [&text, &block_aligned, &random, &mixed, &small] {
        let (_d1, memory) = new_store();
        let (_d2, streamed) = new_store();
        let expected = memory.put(content).unwrap();
        let (_tmp, file) = file_with(content);
        let out = match streamed.put_file(&file, content.len() as u64).unwrap() {
            FilePut::Stored(out) => out,
            other => panic!("{other:?}"),
        };
        assert_eq!(out, expected, "len {}", content.len());
        let a = memory.read_record(&out.id).unwrap();
        let b = streamed.read_record(&out.id).unwrap();
        assert!(a == b, "stored records differ for len {}", content.len());
        assert_eq!(streamed.get(&out.id).unwrap(), *content);
        // Again: the first pass finds it, nothing is written.
        match streamed.put_file(&file, content.len() as u64).unwrap() {
            FilePut::Stored(again) => assert!(!again.written),
            other => panic!("{other:?}"),
        }
    }
    // Compression only where it pays, as for in-memory puts.
    let (_d, store) = new_store();
    let (_tmp, file) = file_with(&random);
    let FilePut::Stored(out) = store.put_file(&file, random.len() as u64).unwrap() else {
        panic!("not stored");
    };
    assert_eq!(out.stored_bytes, random.len() as u64 + HEADER_LEN as u64);
    let (_tmp, file) = file_with(&text);
    let FilePut::Stored(out) = store.put_file(&file, text.len() as u64).unwrap() else {
        panic!("not stored");
    };
    assert!(out.stored_bytes < text.len() as u64 / 10);
}

#[test]
fn a_file_that_is_not_what_was_announced_is_changed_and_not_stored() {
    let (_d, store) = new_store();
    for content in [b"short file".repeat(10), b"long file\n".repeat(200_000)] {
        let (_tmp, file) = file_with(&content);
        let n = content.len() as u64;
        for announced in [n - 1, n + 1] {
            assert!(matches!(
                store.put_file(&file, announced).unwrap(),
                FilePut::Changed
            ));
        }
    }
    // A pass that does not hash to the id the first pass found (the
    // file changed in between) leaves nothing behind.
    let content = b"second pass\n".repeat(200_000);
    let wrong = ObjectId::of(b"what the first pass read");
    let path = store.object_path(&wrong);
    let mut buf = Vec::new();
    let out = store.write_streamed(
        &wrong,
        &path,
        Source::Bytes(&content),
        content.len() as u64,
        &mut buf,
    );
    assert!(matches!(out, Err(StreamFail::Changed)));
    assert!(!path.exists());
    assert_eq!(store.usage().unwrap().objects, 0);
    assert_eq!(store.remove_stale_temps(Duration::ZERO).unwrap(), 0);
}

#[test]
fn object_path_fans_out_by_first_byte() {
    let (_dir, store) = new_store();
    let id = ObjectId::of(b"x");
    let hex = id.to_hex();
    assert_eq!(
        store.object_path(&id),
        store.root().join("objects").join(&hex[..2]).join(&hex[2..])
    );
}

#[test]
fn dedup() {
    let (_dir, store) = new_store();
    let first = store.put(b"same content").unwrap();
    assert!(first.written);
    let second = store.put(b"same content").unwrap();
    assert!(!second.written);
    assert_eq!(second.id, first.id);
    assert_eq!(second.stored_bytes, first.stored_bytes);
    // A fresh Store (no in-memory set) finds it on disk once published.
    store.sync().unwrap();
    let again = Store::open(store.root(), false).unwrap();
    let third = again.put_with_id(first.id, b"same content").unwrap();
    assert!(!third.written);
    assert_eq!(third.stored_bytes, first.stored_bytes);
    assert_eq!(store.usage().unwrap().objects, 1);
}

#[test]
fn missing_object_is_not_found() {
    let (_dir, store) = new_store();
    let id = ObjectId::of(b"never stored");
    assert!(matches!(store.get(&id), Err(StoreError::NotFound { id: i }) if i == id));
    assert!(!store.contains(&id));
}

fn assert_corrupt(store: &Store, id: &ObjectId) {
    match store.get(id) {
        Err(StoreError::Corrupt { id: i }) => assert_eq!(i, *id),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn corruption_is_detected() {
    let (_dir, store) = new_store();
    // Loose files here; pack_set's tests damage packed records.
    let incompressible = random_bytes(MAX_PACKED_OBJECT + 1);
    let compressible = loose_sized(b"abcdefghij");
    for content in [&incompressible, &compressible] {
        let id = store.put(content).unwrap().id;
        let path = store.object_path(&id);
        let good = fs::read(&path).unwrap();
        // Flip one bit at a time in every region: header, payload start, payload end.
        for pos in [0, 5, 9, HEADER_LEN, HEADER_LEN + 3, good.len() - 1] {
            let mut bad = good.clone();
            bad[pos] ^= 0x01;
            fs::write(&path, &bad).unwrap();
            assert_corrupt(&store, &id);
        }
        for len in [0, 3, HEADER_LEN, good.len() - 1] {
            fs::write(&path, &good[..len]).unwrap();
            assert_corrupt(&store, &id);
        }
        let mut longer = good.clone();
        longer.push(0);
        fs::write(&path, &longer).unwrap();
        assert_corrupt(&store, &id);
        // Another object's (valid) file under this name: wrong content.
        let other = store.put(&loose_sized(b"something else")).unwrap().id;
        fs::copy(store.object_path(&other), &path).unwrap();
        assert_corrupt(&store, &id);
    }
}

/// A store opened before another process wrote a loose object into a new
/// fan-out directory does not look there (it saves an `open` per put of a
/// young store): it stores the content once more, and both read back.
#[test]
fn a_loose_object_in_a_fan_out_directory_new_since_open_is_stored_again() {
    let (_dir, early) = new_store();
    let late = Store::open(early.root(), false).unwrap();
    let content = loose_sized(b"written by another process");
    let first = late.put(&content).unwrap();
    assert!(first.written);
    let again = early.put(&content).unwrap();
    assert!(
        again.written,
        "not looked for: its fan-out directory is new"
    );
    assert_eq!(again.id, first.id);
    assert_eq!(early.get(&first.id).unwrap(), content);
    // A store opened now sees the directory, and finds the copy.
    let now = Store::open(early.root(), false).unwrap();
    assert!(!now.put(&content).unwrap().written);
}

#[test]
fn put_repairs_damaged_object_file() {
    let (_dir, store) = new_store();
    let precious = loose_sized(b"precious");
    let id = store.put(&precious).unwrap().id;
    let path = store.object_path(&id);
    fs::write(&path, b"").unwrap();
    // A new process (no in-memory knowledge) re-puts the content: the damaged file
    // is rewritten rather than trusted.
    let store = Store::open(store.root(), false).unwrap();
    assert!(store.put(&precious).unwrap().written);
    assert_eq!(store.get(&id).unwrap(), precious);
}

#[test]
fn dedup_hit_refreshes_mtime() {
    let (_dir, store) = new_store();
    let old = loose_sized(b"old object");
    let id = store.put(&old).unwrap().id;
    let path = store.object_path(&id);
    let long_ago = SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    File::open(&path).unwrap().set_modified(long_ago).unwrap();
    let store = Store::open(store.root(), false).unwrap();
    assert!(!store.put(&old).unwrap().written);
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    assert!(mtime > long_ago + Duration::from_secs(24 * 3600));
}

#[test]
fn remove_forgets_and_put_rewrites() {
    let (_dir, store) = new_store();
    let content = loose_sized(b"gc me");
    let id = store.put(&content).unwrap().id;
    assert!(store.remove(&id).unwrap());
    assert!(!store.remove(&id).unwrap());
    assert!(!store.contains(&id));
    assert!(store.put(&content).unwrap().written);
    assert_eq!(store.get(&id).unwrap(), content);
}

#[test]
fn usage_and_listing_skip_temps_and_strays() {
    let (_dir, store) = new_store();
    let a = store.put(&loose_sized(b"one")).unwrap();
    let b = store.put(&loose_sized(b"two")).unwrap();
    let fan = store.object_path(&a.id).parent().unwrap().to_path_buf();
    let temp = fan.join(".tmp-0123456789abcdef");
    fs::write(&temp, b"partial").unwrap();
    fs::write(fan.join("README"), b"stray").unwrap();
    fs::create_dir_all(store.root().join("objects/zz")).unwrap();
    let usage = store.usage().unwrap();
    assert_eq!(usage.objects, 2);
    assert_eq!(usage.bytes, a.stored_bytes + b.stored_bytes);
    let mut ids: Vec<_> = store.list_objects().unwrap().iter().map(|o| o.id).collect();
    ids.sort();
    let mut expected = vec![a.id, b.id];
    expected.sort();
    assert_eq!(ids, expected);
    // Young temp files are spared (a live writer may own them), old ones removed.
    assert_eq!(
        store.remove_stale_temps(Duration::from_secs(3600)).unwrap(),
        0
    );
    assert_eq!(store.remove_stale_temps(Duration::ZERO).unwrap(), 1);
    assert!(!temp.exists());
}

#[test]
fn trees_round_trip_through_store() {
    let (_dir, store) = new_store();
    let file = store.put(b"content").unwrap();
    let mut tree = Tree::default();
    tree.entries
        .insert("f".into(), TreeEntry::new(EntryKind::File, file.id, 7));
    let id = store.put_tree(&tree).unwrap();
    assert_eq!(id, tree.id());
    assert_eq!(*store.get_tree(&id).unwrap(), tree);
    // A blob is not a tree: BadTree naming the object.
    assert!(
        matches!(store.get_tree(&file.id), Err(StoreError::BadTree { id: Some(i), .. }) if i == file.id)
    );
    // Invalid trees never reach the store.
    let mut bad = Tree::default();
    bad.entries.insert("a/b".into(), tree.entries["f"]);
    assert!(matches!(
        store.put_tree(&bad),
        Err(StoreError::BadTree { id: None, .. })
    ));
    assert!(!store.contains(&bad.id()));
}

#[test]
fn concurrent_puts_and_gets() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), true).unwrap();
    let shared: Vec<Vec<u8>> = (0..20)
        .map(|i| format!("shared {i}\n").repeat(50).into_bytes())
        .collect();
    let threads = 8;
    let per_thread = 50;
    let results: Vec<Vec<(ObjectId, Vec<u8>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let store = &store;
                let shared = &shared;
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..per_thread {
                        // Every thread writes every shared object, racing the others.
                        let content = &shared[i % shared.len()];
                        let out = store.put(content).unwrap();
                        assert_eq!(store.get(&out.id).unwrap(), *content);
                        let unique = format!("thread {t} object {i}").into_bytes();
                        let out = store.put(&unique).unwrap();
                        assert!(out.written);
                        mine.push((out.id, unique));
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (id, content) in results.iter().flatten() {
        assert_eq!(store.get(id).unwrap(), *content);
    }
    for content in &shared {
        assert_eq!(store.get(&ObjectId::of(content)).unwrap(), *content);
    }
    // No temp files left behind by the races (the open pack is not stale).
    assert_eq!(store.remove_stale_temps(Duration::ZERO).unwrap(), 0);
    store.sync().unwrap();
    // Racing puts of one content may each store a copy (loose or packed);
    // every id is there at least once.
    let ids: HashSet<ObjectId> = store.list_objects().unwrap().iter().map(|o| o.id).collect();
    assert_eq!(ids.len(), shared.len() + threads * per_thread);
    assert!(store.usage().unwrap().objects >= ids.len() as u64);
    // Everything is readable from a new process too.
    let again = Store::open(store.root(), false).unwrap();
    for (id, content) in results.iter().flatten() {
        assert_eq!(again.get(id).unwrap(), *content);
    }
}

#[test]
fn concurrent_writers_of_same_object_across_stores() {
    // Separate Store instances (like separate processes) share no in-memory set, so
    // they really race on temp files and renames (of a loose object: each
    // would write a pack of its own).
    let dir = tempfile::tempdir().unwrap();
    let content = random_bytes(MAX_PACKED_OBJECT + 1);
    std::thread::scope(|s| {
        for _ in 0..8 {
            let content = &content;
            let root = dir.path();
            s.spawn(move || {
                let store = Store::open(root, false).unwrap();
                let out = store.put(content).unwrap();
                assert_eq!(store.get(&out.id).unwrap(), *content);
            });
        }
    });
    let store = Store::open(dir.path(), false).unwrap();
    assert_eq!(store.usage().unwrap().objects, 1);
    assert_eq!(store.remove_stale_temps(Duration::ZERO).unwrap(), 0);
}
