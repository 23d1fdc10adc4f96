use std::time::Duration;

use super::super::pack::MAX_PACKED_OBJECT;
use super::super::Store;
use super::*;

use crate::store::new_test_store as new_store;

fn contents(n: usize, tag: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{tag} object {i}\n").repeat(20).into_bytes())
        .collect()
}

fn pack_files(store: &Store, ext: &str) -> Vec<PathBuf> {
    let dir = store.layout().pack_dir();
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.extension().is_some_and(|x| x == ext));
    out
}

fn age(path: &Path, by: Duration) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - by).unwrap();
}

#[test]
fn every_batch_is_packed_and_published_at_sync() {
    let (_dir, store) = new_store();
    let objects = contents(100, "batch");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    let big = vec![7u8; MAX_PACKED_OBJECT + 1];
    let big_id = store.put(&big).unwrap().id;
    // Readable in this process before the batch ends.
    for (id, c) in ids.iter().zip(&objects) {
        assert_eq!(store.get(id).unwrap(), *c);
    }
    let listed = store.list_objects().unwrap();
    assert_eq!(listed.len(), 1, "only the loose one before sync");
    // Another process sees unpublished objects as missing...
    let other = Store::open(store.root(), false).unwrap();
    assert!(matches!(
        other.get(&ids[99]),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(pack_files(&store, "idx").len(), 0);
    store.sync().unwrap();
    // ... and finds them once published, without reopening.
    assert_eq!(other.get(&ids[99]).unwrap(), objects[99]);
    assert!(other.contains(&ids[50]));
    let listed = store.list_objects().unwrap();
    assert_eq!(listed.len(), 101);
    assert_eq!(listed.iter().filter(|o| o.packed).count(), 100);
    // Large objects stay loose.
    assert!(store.object_path(&big_id).is_file());
    assert_eq!(pack_files(&store, "pack").len(), 1);
    // A batch of one object is a pack of its own, not a loose file.
    let next = store.put(b"a later small object").unwrap().id;
    assert!(!store.object_path(&next).exists());
    store.sync().unwrap();
    assert_eq!(pack_files(&store, "idx").len(), 2);
    let fresh = Store::open(store.root(), false).unwrap();
    for (id, c) in ids.iter().zip(&objects) {
        assert_eq!(fresh.get(id).unwrap(), *c);
        assert!(!fresh.put(c).unwrap().written, "dedup against the pack");
    }
    assert!(fresh.usage().unwrap().bytes > 0);
}

#[test]
fn a_batch_past_the_pack_size_limit_fills_several_packs() {
    use rand::RngCore;
    let (_dir, store) = new_store();
    let mut rng = rand::thread_rng();
    // Incompressible, the largest packed size: the first 64 objects fill
    // the first pack to MAX_PACK_BYTES, the rest go to a second.
    let objects: Vec<Vec<u8>> = (0..98)
        .map(|_| {
            let mut b = vec![0u8; MAX_PACKED_OBJECT];
            rng.fill_bytes(&mut b);
            b
        })
        .collect();
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    store.sync().unwrap();
    assert_eq!(pack_files(&store, "idx").len(), 2);
    let fresh = Store::open(store.root(), false).unwrap();
    let packed = fresh.list_objects().unwrap();
    assert_eq!(packed.iter().filter(|o| o.packed).count(), 98);
    for (id, c) in ids.iter().zip(&objects) {
        assert!(fresh.get(id).unwrap() == *c);
    }
}

#[test]
fn packs_that_could_not_be_published_wait_for_the_next_sync() {
    use rand::RngCore;
    let (_dir, store) = new_store();
    let mut rng = rand::thread_rng();
    // Two packs in one batch, as in the test above.
    let objects: Vec<Vec<u8>> = (0..98)
        .map(|_| {
            let mut b = vec![0u8; MAX_PACKED_OBJECT];
            rng.fill_bytes(&mut b);
            b
        })
        .collect();
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    // A directory where the full (first) pack's index must go: its
    // rename fails, and the second pack must not be lost with it.
    let mut packs = pack_files(&store, "pack");
    packs.sort_by_key(|p| std::cmp::Reverse(fs::metadata(p).unwrap().len()));
    let blocker = packs[0].with_extension("idx");
    fs::create_dir(&blocker).unwrap();
    assert!(store.sync().is_err());
    assert_eq!(pack_files(&store, "idx").len(), 1, "only the blocker");
    assert!(store.get(&ids[97]).is_ok(), "still readable here");
    fs::remove_dir(&blocker).unwrap();
    store.sync().unwrap();
    assert_eq!(pack_files(&store, "idx").len(), 2);
    let fresh = Store::open(store.root(), false).unwrap();
    for (id, c) in ids.iter().zip(&objects) {
        assert!(fresh.get(id).unwrap() == *c);
    }
}

#[test]
fn damaged_packs_are_reported_never_returned() {
    let (_dir, store) = new_store();
    let objects = contents(60, "damage");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    store.sync().unwrap();
    let pack = pack_files(&store, "pack").remove(0);
    let good = fs::read(&pack).unwrap();
    // A flipped byte inside the last record: that object is corrupt.
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 3] ^= 0x20;
    fs::write(&pack, &bad).unwrap();
    let fresh = Store::open(store.root(), false).unwrap();
    let corrupt = ids
        .iter()
        .filter(|id| matches!(fresh.get(id), Err(StoreError::Corrupt { .. })))
        .count();
    assert_eq!(corrupt, 1);
    // A pack cut short: its index no longer fits, so its objects are
    // missing (reported), not garbage handed out.
    fs::write(&pack, &good[..good.len() / 2]).unwrap();
    let fresh = Store::open(store.root(), false).unwrap();
    for id in &ids {
        assert!(matches!(fresh.get(id), Err(StoreError::NotFound { .. })));
    }
    // A garbled index likewise.
    fs::write(&pack, &good).unwrap();
    let idx = pack_files(&store, "idx").remove(0);
    let mut index = fs::read(&idx).unwrap();
    index[20] ^= 1;
    fs::write(&idx, &index).unwrap();
    let fresh = Store::open(store.root(), false).unwrap();
    assert!(matches!(
        fresh.get(&ids[59]),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn a_crashed_writers_pack_is_never_trusted_and_swept_when_old() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let store = Store::open(&root, false).unwrap();
    let objects = contents(50, "crash");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    // The process dies before its batch ends: no index is written.
    std::mem::forget(store);
    let store = Store::open(&root, false).unwrap();
    // Named before this process starts a pack of its own (which it must
    // never take for a crashed writer's: see below).
    let orphan = pack_files(&store, "pack").remove(0);
    assert!(!store.contains(&ids[49]));
    assert!(store.put(&objects[49]).unwrap().written, "written again");
    assert_eq!(pack_files(&store, "pack").len(), 2);
    assert_eq!(
        store.remove_stale_temps(Duration::from_secs(3600)).unwrap(),
        0
    );
    // This process's own pack, unpublished and just as old, is not swept.
    for p in pack_files(&store, "pack") {
        age(&p, Duration::from_secs(7200));
    }
    assert_eq!(
        store.remove_stale_temps(Duration::from_secs(3600)).unwrap(),
        1
    );
    assert!(!orphan.exists());
    store.sync().unwrap();
    assert_eq!(store.get(&ids[49]).unwrap(), objects[49]);
    assert!(!store.contains(&ids[0]), "the crashed batch is gone whole");
}

#[test]
fn gc_rewrites_packs_without_garbage_and_deletes_dead_ones() {
    let (_dir, store) = new_store();
    let keep = contents(80, "keep");
    let drop = contents(80, "drop");
    let mut keep_ids = HashSet::new();
    let mut drop_ids = HashSet::new();
    for (k, d) in keep.iter().zip(&drop) {
        keep_ids.insert(store.put(k).unwrap().id);
        drop_ids.insert(store.put(d).unwrap().id);
    }
    store.sync().unwrap();
    // A second pack holding nothing live.
    let all_dead: Vec<ObjectId> = contents(80, "dead")
        .iter()
        .map(|c| store.put(c).unwrap().id)
        .collect();
    store.sync().unwrap();
    let live = |id: &ObjectId| keep_ids.contains(id);
    let cutoff = Some(SystemTime::now() - Duration::from_secs(3600));
    // Young packs are spared.
    assert_eq!(store.prune_packs(&live, cutoff, false).unwrap(), (0, 0));
    for p in pack_files(&store, "pack") {
        age(&p, Duration::from_secs(7200));
    }
    let packed_dead = store
        .list_objects()
        .unwrap()
        .iter()
        .filter(|o| o.packed && !live(&o.id))
        .count() as u64;
    let (dry, dry_bytes) = store.prune_packs(&live, cutoff, true).unwrap();
    assert_eq!(dry, packed_dead);
    assert_eq!(
        pack_files(&store, "pack").len(),
        2,
        "a dry run changes nothing"
    );
    let (removed, freed) = store.prune_packs(&live, cutoff, false).unwrap();
    assert_eq!((removed, freed), (dry, dry_bytes));
    assert_eq!(
        pack_files(&store, "pack").len(),
        1,
        "one rewritten, one deleted"
    );
    for id in &keep_ids {
        assert!(store.get(id).is_ok());
    }
    // A process that loaded the old packs finds the rewritten ones.
    let fresh = Store::open(store.root(), false).unwrap();
    for (id, c) in keep.iter().map(|c| (ObjectId::of(c), c)) {
        assert_eq!(fresh.get(&id).unwrap(), *c);
    }
    let left: HashSet<ObjectId> = fresh.list_objects().unwrap().iter().map(|o| o.id).collect();
    for id in &all_dead {
        assert!(!left.contains(id));
        assert!(!fresh.contains(id));
    }
    assert!(drop_ids.iter().all(|id| !left.contains(id)));
}

#[test]
fn readers_follow_a_pack_rewritten_by_another_process() {
    let (_dir, store) = new_store();
    let objects = contents(60, "moved");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    store.sync().unwrap();
    let reader = Store::open(store.root(), false).unwrap();
    assert_eq!(reader.get(&ids[59]).unwrap(), objects[59]);
    for p in pack_files(&store, "pack") {
        age(&p, Duration::from_secs(7200));
    }
    let doomed = ids[58];
    let cutoff = Some(SystemTime::now() - Duration::from_secs(3600));
    store
        .prune_packs(&|id| *id != doomed, cutoff, false)
        .unwrap();
    // `reader` still points into the deleted pack: it reloads and finds
    // the new one.
    assert_eq!(reader.get(&ids[59]).unwrap(), objects[59]);
    assert!(matches!(
        reader.get(&doomed),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn a_dedup_hit_keeps_the_pack_young() {
    let (_dir, store) = new_store();
    let objects = contents(40, "young");
    for c in &objects {
        store.put(c).unwrap();
    }
    store.sync().unwrap();
    let pack = pack_files(&store, "pack").remove(0);
    age(&pack, Duration::from_secs(30 * 24 * 3600));
    let fresh = Store::open(store.root(), false).unwrap();
    assert!(!fresh.put(&objects[39]).unwrap().written);
    let mtime = fs::metadata(&pack).unwrap().modified().unwrap();
    assert!(mtime > SystemTime::now() - Duration::from_secs(3600));
}

#[test]
fn a_version_1_store_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("VERSION"), "1\n").unwrap();
    let store = Store::open(root, true).unwrap();
    assert_eq!(fs::read_to_string(root.join("VERSION")).unwrap(), "4\n");
    let id = store.put(b"after the upgrade").unwrap().id;
    assert_eq!(store.get(&id).unwrap(), b"after the upgrade");
}

#[test]
fn with_fsync_a_batch_is_published_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store"), true).unwrap();
    let objects = contents(70, "durable");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    store.sync().unwrap();
    assert_eq!(pack_files(&store, "idx").len(), 1);
    let fresh = Store::open(store.root(), true).unwrap();
    assert_eq!(fresh.get(&ids[69]).unwrap(), objects[69]);
}

/// `n` batches of a few objects each, synced one by one (a turn's worth).
fn small_batches(store: &Store, n: usize, tag: &str) -> Vec<(ObjectId, Vec<u8>)> {
    let mut out = Vec::new();
    for b in 0..n {
        for c in contents(3, &format!("{tag} batch {b}")) {
            out.push((store.put(&c).unwrap().id, c));
        }
        store.sync().unwrap();
    }
    out
}

#[test]
fn small_packs_are_merged_into_one_as_they_accumulate() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store"), true).unwrap();
    let reader = Store::open(store.root(), false).unwrap();
    let first = small_batches(&store, MERGE_AT - 1, "early");
    assert_eq!(pack_files(&store, "idx").len(), MERGE_AT - 1);
    // `reader` loads the small packs, which the merge then deletes.
    for (id, c) in &first {
        assert_eq!(reader.get(id).unwrap(), *c);
    }
    let more = small_batches(&store, 1, "merging");
    assert_eq!(pack_files(&store, "idx").len(), 1, "merged at {MERGE_AT}");
    assert_eq!(pack_files(&store, "pack").len(), 1);
    let all: Vec<_> = first.iter().chain(&more).collect();
    // Nothing lost, here, in a reader that knew the deleted packs, and in a
    // new process; and each object is stored once.
    for (id, c) in &all {
        assert_eq!(store.get(id).unwrap(), *c);
        assert_eq!(reader.get(id).unwrap(), *c);
    }
    let fresh = Store::open(store.root(), false).unwrap();
    for (id, c) in &all {
        assert_eq!(fresh.get(id).unwrap(), *c);
        assert!(
            !fresh.put(c).unwrap().written,
            "dedup against the merged pack"
        );
    }
    assert_eq!(fresh.list_objects().unwrap().len(), all.len());
    // The merged pack is small too: it is merged again with the next ones.
    small_batches(&store, MERGE_AT - 1, "later");
    assert_eq!(pack_files(&store, "idx").len(), 1);
    assert_eq!(store.remove_stale_temps(Duration::ZERO).unwrap(), 0);
}

#[test]
fn large_packs_are_never_merged() {
    use rand::RngCore;
    let (_dir, store) = new_store();
    // A baseline-sized pack (incompressible content, past SMALL_PACK_BYTES).
    let mut rng = rand::thread_rng();
    for _ in 0..2 {
        let mut b = vec![0u8; MAX_PACKED_OBJECT];
        rng.fill_bytes(&mut b);
        store.put(&b).unwrap();
    }
    store.sync().unwrap();
    let big_pack = pack_files(&store, "pack").remove(0);
    assert!(fs::metadata(&big_pack).unwrap().len() >= SMALL_PACK_BYTES);
    small_batches(&store, MERGE_AT, "small");
    assert_eq!(
        pack_files(&store, "pack").len(),
        2,
        "the large pack and the merged one"
    );
    assert!(big_pack.exists());
}

#[test]
fn no_merge_while_gc_runs() {
    let (_dir, store) = new_store();
    let gc = store.deletion_guard().unwrap();
    let objects = small_batches(&store, MERGE_AT + 2, "gc");
    assert_eq!(pack_files(&store, "idx").len(), MERGE_AT + 2);
    drop(gc);
    small_batches(&store, 1, "after");
    assert_eq!(pack_files(&store, "idx").len(), 1);
    for (id, c) in &objects {
        assert_eq!(store.get(id).unwrap(), *c);
    }
}

/// A copy of `pack` (and its index) under another name, as a merge or gc's
/// rewrite publishes before deleting the original; returns the copy's pack.
fn publish_copy_of(pack: &Path) -> PathBuf {
    let copy = pack.with_file_name("00000000000000aa.pack");
    fs::copy(pack, &copy).unwrap();
    fs::copy(pack.with_extension("idx"), copy.with_extension("idx")).unwrap();
    copy
}

fn delete_pack(pack: &Path) {
    fs::remove_file(pack.with_extension("idx")).unwrap();
    fs::remove_file(pack).unwrap();
}

/// Repro (a merge under a running sidecar, session 16): a reader that
/// loaded the copy of a pack while the original was still there, and
/// then saw the original deleted, lost every object of it ("object not
/// found" in a snapshot).
#[test]
fn a_reader_keeps_the_objects_of_a_pack_deleted_after_its_copy_appeared() {
    let (_dir, store) = new_store();
    let objects = contents(5, "copied");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    store.sync().unwrap();
    let reader = Store::open(store.root(), false).unwrap();
    assert_eq!(reader.get(&ids[0]).unwrap(), objects[0]);
    let pack = pack_files(&store, "pack").remove(0);
    publish_copy_of(&pack);
    // A lookup that misses reloads: the reader now knows both.
    assert!(!reader.contains(&ObjectId::of(b"never stored")));
    delete_pack(&pack);
    for (id, c) in ids.iter().zip(&objects) {
        assert_eq!(reader.get(id).unwrap(), *c);
    }
}

/// The other way round: the reader now maps the objects to the copy (the
/// newest), and it is the copy that goes; they are found in the original.
#[test]
fn a_reader_finds_the_objects_of_a_deleted_copy_in_the_original() {
    let (_dir, store) = new_store();
    let objects = contents(5, "twice");
    let ids: Vec<ObjectId> = objects.iter().map(|c| store.put(c).unwrap().id).collect();
    store.sync().unwrap();
    let reader = Store::open(store.root(), false).unwrap();
    let pack = pack_files(&store, "pack").remove(0);
    let copy = publish_copy_of(&pack);
    assert!(!reader.contains(&ObjectId::of(b"never stored")));
    delete_pack(&copy);
    for (id, c) in ids.iter().zip(&objects) {
        assert_eq!(reader.get(id).unwrap(), *c);
    }
}
