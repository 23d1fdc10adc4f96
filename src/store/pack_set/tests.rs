use std::time::Duration;

use super::super::pack::{LOOSE_PER_BATCH, MAX_PACKED_OBJECT};
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
fn a_large_batch_is_packed_and_published_at_sync() {
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
    assert_eq!(
        listed.len(),
        LOOSE_PER_BATCH + 1,
        "only loose ones before sync"
    );
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
    assert_eq!(
        listed.iter().filter(|o| o.packed).count(),
        100 - LOOSE_PER_BATCH
    );
    // Large objects stay loose even past the loose allowance.
    assert!(store.object_path(&big_id).is_file());
    assert_eq!(pack_files(&store, "pack").len(), 1);
    // The next batch starts loose again.
    let next = store.put(b"a later small object").unwrap().id;
    assert!(store.object_path(&next).is_file());
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
    // Incompressible, the largest packed size: the 33rd to 96th object
    // fill the first pack past MAX_PACK_BYTES, the rest go to a second.
    let objects: Vec<Vec<u8>> = (0..LOOSE_PER_BATCH + 66)
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
    assert_eq!(packed.iter().filter(|o| o.packed).count(), 66);
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
    let objects: Vec<Vec<u8>> = (0..LOOSE_PER_BATCH + 66)
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
    for id in &ids[LOOSE_PER_BATCH..] {
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
    assert!(!store.contains(&ids[49]));
    assert!(store.put(&objects[49]).unwrap().written, "written again");
    assert_eq!(
        store.remove_stale_temps(Duration::from_secs(3600)).unwrap(),
        0
    );
    let orphan = pack_files(&store, "pack").remove(0);
    age(&orphan, Duration::from_secs(7200));
    assert_eq!(
        store.remove_stale_temps(Duration::from_secs(3600)).unwrap(),
        1
    );
    assert!(!orphan.exists());
    store.sync().unwrap();
    assert_eq!(
        store.get(&ids[0]).unwrap(),
        objects[0],
        "loose ones survived"
    );
    assert_eq!(store.get(&ids[49]).unwrap(), objects[49]);
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
    for id in all_dead.iter().skip(LOOSE_PER_BATCH) {
        assert!(!left.contains(id));
        assert!(!fresh.contains(id));
    }
    assert!(drop_ids.iter().filter(|id| left.contains(*id)).count() <= LOOSE_PER_BATCH);
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
    assert_eq!(fs::read_to_string(root.join("VERSION")).unwrap(), "3\n");
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
