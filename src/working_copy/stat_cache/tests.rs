//! The stat cache's tests: its round trip through disk, the older versions it still
//! reads, and which entries (racy, revalidated) it keeps.

use super::*;

fn file(n: u8, mtime_ns: i128) -> CachedFile {
    CachedFile {
        stat: FileStat {
            size: n as u64,
            mtime_ns,
            ctime_ns: mtime_ns,
            ino: 7,
            mode: 0o100644,
        },
        entry: TreeEntry::new(EntryKind::File, ObjectId::of(&[n]), n as u64),
    }
}

#[test]
fn round_trips_through_disk() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cache/stat.bin");
    let mut c = StatCache::default();
    c.update("a".into(), file(1, 0), 10_000_000_000);
    c.update("dir/b".into(), file(2, 5), 10_000_000_000);
    c.save(&p).unwrap();
    let back = StatCache::load(&p);
    assert_eq!(back.len(), 2);
    assert_eq!(back.get("dir/b"), Some(&file(2, 5)));
    assert!(!back.is_dirty());
    assert_eq!(back.generation(), None, "never checked against a store");
}

#[test]
fn revalidation_drops_what_the_store_lost_and_keeps_its_generation() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    let mut c = StatCache::default();
    c.update("a".into(), file(1, 0), 10_000_000_000);
    c.update("b".into(), file(2, 0), 10_000_000_000);
    let gone = ObjectId::of(&[2]);
    assert_eq!(c.revalidate(7, |id| *id != gone), 1);
    assert!(c.get("a").is_some() && c.get("b").is_none());
    c.save(&p).unwrap();
    let back = StatCache::load(&p);
    assert_eq!(back.generation(), Some(7));
    assert_eq!(back.len(), 1);
}

#[test]
fn a_version_2_cache_is_read_as_never_checked() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    let mut entries = HashMap::default();
    entries.insert("x".to_string(), file(3, 0));
    let bytes = v4_bytes(&entries, Some(4));
    // Version 2 is version 3 without the generation.
    let mut v2 = b"RWSTAT02".to_vec();
    v2.extend_from_slice(&bytes[16..]);
    std::fs::write(&p, &v2).unwrap();
    let back = StatCache::load(&p);
    assert_eq!(back.get("x"), Some(&file(3, 0)));
    assert_eq!(back.generation(), None);
}

/// Directory listings are saved with the files: a hook process of its
/// own does not list every directory again. A version-3 cache (no
/// listings) still vouches for its files.
#[test]
fn directory_listings_round_trip_and_a_version_3_cache_has_none() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    let mut c = StatCache::default();
    c.update("d/a".into(), file(1, 0), 10_000_000_000);
    let stat = file(9, 3).stat;
    c.dirs().insert("d", stat, 4);
    assert!(c.is_dirty(), "a file entry changed");
    c.save(&p).unwrap();
    let back = StatCache::load(&p);
    assert_eq!(back.dirs().get("d", &stat), Some(4));
    assert_eq!(back.dirs().get("d", &file(9, 4).stat), None, "moved");
    assert!(!back.is_dirty());
    // The same count again changes nothing to save; a few changed
    // listings alone are not worth a save, many are.
    back.dirs().insert("d", stat, 4);
    assert!(!back.is_dirty());
    back.dirs().retain(|d| d != "d");
    assert!(!back.is_dirty());
    for i in 0..LISTINGS_WORTH_SAVING {
        back.dirs().insert(&format!("n{i}"), stat, 1);
    }
    assert!(back.is_dirty());

    let mut entries = HashMap::default();
    entries.insert("x".to_string(), file(3, 0));
    let mut v3 = v4_bytes(&entries, Some(2));
    v3[..8].copy_from_slice(b"RWSTAT03");
    std::fs::write(&p, &v3).unwrap();
    let back = StatCache::load(&p);
    assert_eq!(back.get("x"), Some(&file(3, 0)));
    assert_eq!(back.generation(), Some(2));
    assert_eq!(back.dirs().get("d", &stat), None);
}

#[test]
fn racy_entries_are_not_kept() {
    let mut c = StatCache::default();
    let start = 100_000_000_000;
    c.update("old".into(), file(1, start - 3_000_000_000), start);
    c.update("racy".into(), file(2, start - 1), start);
    c.update("future".into(), file(3, start + 5), start);
    assert!(c.get("old").is_some());
    assert!(c.get("racy").is_none());
    assert!(c.get("future").is_none());
}

/// The window follows the timestamps' precision: a stat with a fraction
/// of a second comes from a filesystem that keeps sub-second time and
/// is trusted 100 ms after it moved; a whole-second one (or one whose
/// ctime is whole: a tool set the mtime) waits two seconds.
#[test]
fn sub_second_timestamps_are_racy_for_a_tenth_of_a_second() {
    let start: i128 = 100_000_000_000;
    let fine = |ago: i128| file(1, start - ago).stat;
    assert!(!fine(500_000_001).is_racy(start), "half a second ago");
    assert!(!fine(100_000_001).is_racy(start));
    assert!(fine(99_999_999).is_racy(start), "within 100 ms");
    assert!(fine(-7).is_racy(start), "in the future");
    let whole = file(1, start - 1_000_000_000).stat;
    assert!(whole.is_racy(start), "a whole second: maybe a coarse clock");
    assert!(!file(1, start - 3_000_000_000).stat.is_racy(start));
    let mut set_by_a_tool = fine(500_000_001);
    set_by_a_tool.mtime_ns = start - 1_000_000_000;
    assert!(set_by_a_tool.is_racy(start));
    let mut changed_since = fine(500_000_001);
    changed_since.ctime_ns = start - 50_000_001;
    assert!(
        changed_since.is_racy(start),
        "the newer of mtime and ctime counts"
    );
}

/// A few changed entries are left to the next process to read again;
/// many, or large files, or a first cache are saved.
#[test]
fn a_few_changed_entries_are_not_worth_a_save() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    let start = 100_000_000_000;
    let old = start - 3_000_000_000;
    let mut c = StatCache::default();
    c.update("a".into(), file(1, old), start);
    assert!(c.is_dirty(), "never saved");
    for i in 0..3_200 {
        c.update(format!("f{i}"), file(1, old), start);
    }
    c.save(&p).unwrap();
    let mut back = StatCache::load(&p);
    // 3,201 entries: a hundredth of them (100) is worth a save.
    for i in 0..99 {
        back.update(format!("f{i}"), file(2, old), start);
    }
    assert!(!back.is_dirty(), "99 changed of 3,201");
    back.retain(|p| p != "f3000");
    assert!(back.is_dirty(), "100 changed, one of them removed");
    back.save(&p).unwrap();
    let mut back = StatCache::load(&p);
    assert_eq!(back.get("f1"), Some(&file(2, old)), "saved");
    let mut big = file(3, old);
    big.stat.size = BYTES_WORTH_SAVING;
    back.update("big".into(), big, start);
    assert!(back.is_dirty(), "a large file is not read again");
    let mut back = StatCache::load(&p);
    back.update("sub/.gitignore".into(), file(4, old), start);
    assert!(back.is_dirty(), "an ignore file is never left unsaved");
}

/// A file edited just now drops its entry, and that alone does not make
/// the cache worth saving: the saved entry holds the old stat, which
/// the file never has again.
#[test]
fn dropping_a_racy_entry_needs_no_save() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    let start = 100_000_000_000;
    let mut c = StatCache::default();
    c.update("a".into(), file(1, start - 3_000_000_000), start);
    c.save(&p).unwrap();
    let mut back = StatCache::load(&p);
    let later = start + 10_000_000_000;
    back.update("a".into(), file(2, later - 1), later);
    assert!(back.get("a").is_none());
    assert!(!back.is_dirty());
}

#[test]
fn garbage_file_is_an_empty_cache() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    std::fs::write(&p, b"RWSTAT01\xff\xff\xff\xff\xff\xff\xff\x7f").unwrap();
    assert!(StatCache::load(&p).is_empty());
    std::fs::write(&p, b"nonsense").unwrap();
    assert!(StatCache::load(&p).is_empty());
    // A version-2 cache cut short is no cache either.
    let mut c = StatCache::default();
    c.update("a".into(), file(1, 0), 10_000_000_000);
    c.save(&p).unwrap();
    let good = std::fs::read(&p).unwrap();
    std::fs::write(&p, &good[..good.len() - 3]).unwrap();
    assert!(StatCache::load(&p).is_empty());
}

#[test]
fn a_version_1_cache_is_still_read() {
    let f = file(9, 42);
    let mut v1 = b"RWSTAT01".to_vec();
    v1.extend_from_slice(&1u64.to_le_bytes());
    v1.extend_from_slice(&5u32.to_le_bytes());
    v1.extend_from_slice(b"src/x");
    v1.extend_from_slice(&f.stat.size.to_le_bytes());
    v1.extend_from_slice(&f.stat.mtime_ns.to_le_bytes());
    v1.extend_from_slice(&f.stat.ctime_ns.to_le_bytes());
    v1.extend_from_slice(&f.stat.ino.to_le_bytes());
    v1.extend_from_slice(&f.stat.mode.to_le_bytes());
    v1.push(0);
    v1.extend_from_slice(&f.entry.size.to_le_bytes());
    v1.extend_from_slice(f.entry.id.to_hex().as_bytes());
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    std::fs::write(&p, &v1).unwrap();
    let back = StatCache::load(&p);
    assert_eq!(back.get("src/x"), Some(&f));
}

/// A version-4 file: the header, then the body as one zstd frame.
fn v4_bytes(entries: &HashMap<String, CachedFile>, generation: Option<u64>) -> Vec<u8> {
    let mut v4 = MAGIC_V4.to_vec();
    v4.extend_from_slice(&generation.unwrap_or(u64::MAX).to_le_bytes());
    let body = encode_body(entries, &HashMap::default());
    v4.extend_from_slice(&zstd::encode_all(&body[..], 1).unwrap());
    v4
}

/// The cache is saved uncompressed (a hook reads it whole every time)
/// and read only whole and as written: a damaged or torn one vouches
/// for nothing. A version-4 cache still vouches for its files.
#[test]
fn the_saved_cache_is_read_only_as_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("stat.bin");
    let mut c = StatCache::default();
    for i in 0..2000u32 {
        let path = format!("packages/app/src/components/module_{i}.tsx");
        c.update(path, file((i % 200) as u8, 1_000_000 * i as i128), 1 << 62);
    }
    c.save(&p).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(&bytes[..8], b"RWSTAT05");
    let back = StatCache::load(&p);
    assert_eq!(back.len(), 2000);
    let seventh = "packages/app/src/components/module_7.tsx";
    assert_eq!(back.get(seventh), Some(&file(7, 7_000_000)));

    // One byte of an id flipped: the checksum says no.
    let mut damaged = bytes.clone();
    let at = damaged.len() - 100;
    damaged[at] ^= 1;
    std::fs::write(&p, &damaged).unwrap();
    assert_eq!(StatCache::load(&p).len(), 0);
    std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
    assert_eq!(StatCache::load(&p).len(), 0, "torn");

    std::fs::write(&p, v4_bytes(&c.entries, Some(3))).unwrap();
    let mut back = StatCache::load(&p);
    assert_eq!(back.len(), 2000);
    assert_eq!(back.generation(), Some(3));
    assert_eq!(back.get(seventh), Some(&file(7, 7_000_000)));
    assert!(back.is_dirty(), "an older version is saved again");
    back.save(&p).unwrap();
    assert_eq!(&std::fs::read(&p).unwrap()[..8], b"RWSTAT05");
}
