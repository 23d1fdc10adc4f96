//! Pack files: many objects in one file, found through a sorted index
//! (docs/format.md, "Packs").
//!
//! Creating one file per object is what makes a shadow-git checkpoint of a
//! large tree slow (and a loose-object store, too): in a profile of a cold
//! snapshot half the time went to the kernel creating inodes, and in one of a
//! 3-file turn's hook event most of the store's time did. So the small
//! objects of a batch of writes (everything between two
//! [`Store::sync`](super::Store::sync) calls) are appended to a pack, which
//! becomes visible to readers when its index is renamed into place at the
//! end of the batch: two files per batch, whatever its size. Small packs are
//! merged as they accumulate (`pack_set/merge.rs`).
//!
//! ```text
//! objects/pack/<16 hex>.pack   "RWPK" version reserved[3], then records
//! objects/pack/<16 hex>.idx    "RWPI" version reserved[3] count:u32,
//!                              count × (id[16] offset:u64 len:u64), sorted by id,
//!                              xxh3-64 of all the bytes before it: u64
//! ```
//!
//! A record is byte for byte what a loose object file holds (header and
//! payload), so reading, verifying and copying records reuses the object codec.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use super::layout::TEMP_PREFIX;
use super::object_id::ObjectId;

const PACK_MAGIC: &[u8; 4] = b"RWPK";
const INDEX_MAGIC: &[u8; 4] = b"RWPI";
pub(crate) const PACK_VERSION: u8 = 1;
pub(crate) const PACK_HEADER_LEN: u64 = 8;
const INDEX_HEADER_LEN: usize = 12;
const INDEX_ENTRY_LEN: usize = 32;
const INDEX_TRAILER_LEN: usize = 8;

/// Objects whose content is larger than this are always written loose: they
/// are few, their file creation is cheap next to their bytes, and gc can then
/// delete each on its own instead of rewriting a pack around it.
pub(crate) const MAX_PACKED_OBJECT: usize = 1 << 20;

/// A pack that reached this size is closed and the batch goes on in a new
/// one, so gc never has to rewrite a huge file to drop a few objects.
pub(crate) const MAX_PACK_BYTES: u64 = 64 << 20;

/// Where one object sits in a pack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub id: ObjectId,
    /// Offset of the record from the start of the pack file.
    pub offset: u64,
    /// Length of the record: object header plus payload.
    pub len: u64,
}

/// The first bytes of every pack: magic, version, reserved.
pub(crate) fn pack_header() -> [u8; PACK_HEADER_LEN as usize] {
    let mut header = [0u8; PACK_HEADER_LEN as usize];
    header[0..4].copy_from_slice(PACK_MAGIC);
    header[4] = PACK_VERSION;
    header
}

/// `name` is a pack's 16 lowercase hex characters.
pub(crate) fn is_pack_name(name: &str) -> bool {
    name.len() == 16
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(crate) fn pack_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.pack"))
}

pub(crate) fn index_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.idx"))
}

/// `merge.lock`: held by the process merging small packs.
pub(crate) fn merge_lock_path(dir: &Path) -> PathBuf {
    dir.join("merge.lock")
}

/// `.tmp-<name>.idx`: an index being written, before it is published.
pub(crate) fn index_temp_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{TEMP_PREFIX}{name}.idx"))
}

/// The index bytes for `entries`, which it sorts by id and leaves one entry
/// per id (in place: a cold snapshot's pack names ~100k objects, and a copy
/// would show in peak memory).
pub(crate) fn encode_index(sorted: &mut Vec<IndexEntry>) -> Vec<u8> {
    sorted.sort_by_key(|e| e.id);
    // Two threads that put the same new content at once may both append it;
    // the index names the first copy (the other is dead weight until gc).
    sorted.dedup_by_key(|e| e.id);
    let mut out =
        Vec::with_capacity(INDEX_HEADER_LEN + sorted.len() * INDEX_ENTRY_LEN + INDEX_TRAILER_LEN);
    out.extend_from_slice(INDEX_MAGIC);
    out.push(PACK_VERSION);
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
    for e in sorted.iter() {
        out.extend_from_slice(e.id.as_bytes());
        out.extend_from_slice(&e.offset.to_le_bytes());
        out.extend_from_slice(&e.len.to_le_bytes());
    }
    let check = xxh3_64(&out);
    out.extend_from_slice(&check.to_le_bytes());
    out
}

/// Parses an index; `Err` says why it is not one (torn, garbled, wrong
/// version, unsorted, or naming bytes outside a pack of `pack_len` bytes).
pub(crate) fn decode_index(bytes: &[u8], pack_len: u64) -> Result<Vec<IndexEntry>, String> {
    if bytes.len() < INDEX_HEADER_LEN + INDEX_TRAILER_LEN {
        return Err("shorter than an empty index".into());
    }
    let (body, trailer) = bytes.split_at(bytes.len() - INDEX_TRAILER_LEN);
    if xxh3_64(body).to_le_bytes() != trailer {
        return Err("checksum mismatch".into());
    }
    if &body[0..4] != INDEX_MAGIC || body[4] != PACK_VERSION || body[5..8] != [0, 0, 0] {
        return Err("bad header".into());
    }
    let count = u32::from_le_bytes([body[8], body[9], body[10], body[11]]) as usize;
    let entries = &body[INDEX_HEADER_LEN..];
    if entries.len() != count.saturating_mul(INDEX_ENTRY_LEN) {
        return Err(format!(
            "{count} entries do not fit {} bytes",
            entries.len()
        ));
    }
    let mut out: Vec<IndexEntry> = Vec::with_capacity(count);
    for chunk in entries.chunks_exact(INDEX_ENTRY_LEN) {
        let mut id = [0u8; 16];
        id.copy_from_slice(&chunk[0..16]);
        let mut n = [0u8; 8];
        n.copy_from_slice(&chunk[16..24]);
        let offset = u64::from_le_bytes(n);
        n.copy_from_slice(&chunk[24..32]);
        let len = u64::from_le_bytes(n);
        let entry = IndexEntry {
            id: ObjectId::from_bytes(id),
            offset,
            len,
        };
        if out.last().is_some_and(|prev| prev.id >= entry.id) {
            return Err("entries out of order".into());
        }
        let end = offset.checked_add(len);
        if offset < PACK_HEADER_LEN || end.is_none_or(|end| end > pack_len) {
            return Err(format!("record of {} outside the pack", entry.id));
        }
        out.push(entry);
    }
    Ok(out)
}

/// Reads one record (object header and payload) from an open pack.
pub(crate) fn read_record(file: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "record too long"))?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

/// A pack being written: records are appended; where each one went is the
/// caller's to remember (the pack set's map already holds it, and a second
/// list of a cold snapshot's ~100k records would show in peak memory).
pub(crate) struct PackWriter {
    pub name: String,
    pub path: PathBuf,
    file: File,
    len: u64,
}

impl PackWriter {
    /// Creates `<dir>/<random name>.pack` with its header.
    pub fn create(dir: &Path) -> io::Result<PackWriter> {
        let mut attempts = 0;
        loop {
            let name = format!("{:016x}", rand::random::<u64>());
            let path = pack_path(dir, &name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    if let Err(e) = file.write_all(&pack_header()) {
                        let _ = fs::remove_file(&path);
                        return Err(e);
                    }
                    return Ok(PackWriter {
                        name,
                        path,
                        file,
                        len: PACK_HEADER_LEN,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound && attempts == 0 => {
                    fs::create_dir_all(dir)?;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => {}
                Err(e) => return Err(e),
            }
            attempts += 1;
        }
    }

    /// Appends one record made of `parts`; returns its index entry.
    pub fn append(&mut self, id: ObjectId, parts: &[&[u8]]) -> io::Result<IndexEntry> {
        let offset = self.len;
        let mut len = 0u64;
        for part in parts {
            self.file.write_all(part)?;
            len += part.len() as u64;
        }
        self.len += len;
        Ok(IndexEntry { id, offset, len })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the pack file was deleted while being written (by a gc that
    /// took it for a crashed writer's leftover).
    pub fn is_unlinked(&self) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        Ok(self.file.metadata()?.nlink() == 0)
    }

    /// Flushes the pack file to disk (only needed where there is no syncfs).
    pub fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seed: &[u8], offset: u64, len: u64) -> IndexEntry {
        IndexEntry {
            id: ObjectId::of(seed),
            offset,
            len,
        }
    }

    #[test]
    fn index_round_trips_sorted() {
        let entries = vec![entry(b"a", 8, 20), entry(b"b", 28, 30), entry(b"c", 58, 17)];
        let mut sorted = entries.clone();
        sorted.push(entry(b"b", 75, 30));
        let bytes = encode_index(&mut sorted);
        let back = decode_index(&bytes, 105).unwrap();
        assert_eq!(back, sorted);
        assert_eq!(back.len(), 3, "a duplicate id is indexed once");
        assert!(back.iter().all(|e| entries.contains(e)));
        assert_eq!(decode_index(&encode_index(&mut vec![]), 8).unwrap(), vec![]);
    }

    #[test]
    fn damaged_indexes_are_rejected() {
        let bytes = encode_index(&mut vec![entry(b"a", 8, 20), entry(b"b", 28, 30)]);
        // Any flipped bit or cut fails the checksum (or the length checks).
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(decode_index(&bad, 100).is_err(), "flip at {i}");
        }
        for n in 0..bytes.len() {
            assert!(decode_index(&bytes[..n], 100).is_err(), "cut at {n}");
        }
        // A record past the end of the pack (a pack cut short) is refused.
        assert!(decode_index(&bytes, 57).is_err());
        assert!(decode_index(&bytes, 58).is_ok());
    }

    #[test]
    fn writer_appends_records_readable_by_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PackWriter::create(&dir.path().join("pack")).unwrap();
        assert!(is_pack_name(&w.name));
        let a = w.append(ObjectId::of(b"x"), &[b"head", b"-a"]).unwrap();
        let b = w.append(ObjectId::of(b"y"), &[b"second record"]).unwrap();
        assert_eq!(a.offset, PACK_HEADER_LEN);
        assert_eq!(b.offset, PACK_HEADER_LEN + 6);
        assert_eq!(w.len(), PACK_HEADER_LEN + 6 + 13);
        assert!(!w.is_unlinked().unwrap());
        assert_eq!(
            read_record(&File::open(&w.path).unwrap(), a.offset, a.len).unwrap(),
            b"head-a"
        );
        assert_eq!(
            read_record(&File::open(&w.path).unwrap(), b.offset, b.len).unwrap(),
            b"second record"
        );
        let bytes = fs::read(&w.path).unwrap();
        assert_eq!(&bytes[..5], b"RWPK\x01");
        fs::remove_file(&w.path).unwrap();
        assert!(w.is_unlinked().unwrap());
    }
}

/// The pack index decoder against arbitrary and mutated input: refused, or every entry
/// inside the pack; never a panic.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_index_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            pack_len in 0u64..10_000,
        ) {
            if let Ok(entries) = decode_index(&bytes, pack_len) {
                for e in entries {
                    prop_assert!(e.offset + e.len <= pack_len);
                }
            }
        }
    }
}
