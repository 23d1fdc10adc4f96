//! One flattened tree kept on disk (`cache/flat-<project hash>.bin`,
//! docs/format.md "Saved flat tree"): the files of the last tree a process
//! without a watcher scanned, so the next one does not walk that tree's
//! objects again — decoding every directory of the parent checkpoint was a
//! fifth of a one-shot hook's time. A tree id names its content, so the
//! file is true for as long as it reads whole (a checksum says so);
//! anything else about it is only a miss.

use std::io::{Read, Write};
use std::path::Path;

use super::{EntryKind, FlatTree, ObjectId, TreeEntry};

/// The format written: the header, an xxh3-64 checksum of the files, the
/// files uncompressed, each with its mode. Every hook process of its own
/// reads it whole, and decompressing it cost more than checking and copying
/// it (20,000 files: 1.5 MB; docs/format.md "Saved flat tree").
const MAGIC: &[u8; 8] = b"RWFLAT03";
/// Version 2: version 3 without the modes. Only builds that wrote trees of
/// encoding version 1 wrote it, whose files all have their ordinary mode.
const MAGIC_V2: &[u8; 8] = b"RWFLAT02";
/// Version 1: version 2's files as one zstd frame with its checksum.
const MAGIC_V1: &[u8; 8] = b"RWFLAT01";
const HEADER: usize = 8 + 16;

/// The tree whose files the file at `path` holds, read from its header.
pub(crate) fn tree_at(path: &Path) -> Option<ObjectId> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; HEADER];
    f.read_exact(&mut head).ok()?;
    let magic = &head[..8];
    if magic != MAGIC && magic != MAGIC_V2 && magic != MAGIC_V1 {
        return None;
    }
    let mut id = [0u8; 16];
    id.copy_from_slice(&head[8..]);
    Some(ObjectId::from_bytes(id))
}

/// The files of `tree`, when the file at `path` holds them whole; a file
/// of another tree is not read past its header.
pub(crate) fn load(path: &Path, tree: &ObjectId) -> Option<FlatTree> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; HEADER];
    f.read_exact(&mut head).ok()?;
    if &head[8..] != tree.as_bytes() {
        return None;
    }
    let mut rest = Vec::new();
    if &head[..8] == MAGIC || &head[..8] == MAGIC_V2 {
        let Some(body) = super::checked::read(&mut f).ok().flatten() else {
            tracing::debug!(path = %path.display(), "ignoring a torn or damaged saved flat tree");
            return None;
        };
        return decode(&body, &head[..8] == MAGIC);
    }
    if &head[..8] != MAGIC_V1 {
        return None;
    }
    f.read_to_end(&mut rest).ok()?;
    let raw = match zstd::stream::decode_all(&rest[..]) {
        Ok(raw) => raw,
        Err(err) => {
            tracing::debug!(%err, path = %path.display(), "ignoring a torn saved flat tree");
            return None;
        }
    };
    decode(&raw, false)
}

/// The entries; `with_modes`: each carries its mode (version 3), else each
/// has its kind's ordinary one.
fn decode(raw: &[u8], with_modes: bool) -> Option<FlatTree> {
    let mut r = raw;
    let mut take = |n: usize| -> Option<&[u8]> {
        if r.len() < n {
            return None;
        }
        let (head, rest) = r.split_at(n);
        r = rest;
        Some(head)
    };
    let count = u64::from_le_bytes(take(8)?.try_into().ok()?);
    let mut files = Vec::with_capacity(count.min(1 << 24) as usize);
    for _ in 0..count {
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        let path = std::str::from_utf8(take(len)?).ok()?.to_string();
        let kind = EntryKind::from_code(take(1)?[0])?;
        let mode = if with_modes {
            u16::from_le_bytes(take(2)?.try_into().ok()?)
        } else {
            kind.ordinary_mode()
        };
        let size = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let id = ObjectId::from_bytes(take(16)?.try_into().ok()?);
        files.push((
            path,
            TreeEntry {
                kind,
                id,
                size,
                mode,
            },
        ));
    }
    Some(files.into_iter().collect())
}

/// The entries as version 3 (`with_modes`) or 2 lays them out.
fn encode(files: &FlatTree, with_modes: bool) -> Vec<u8> {
    let mut raw = Vec::with_capacity(files.len() * 64 + 8);
    raw.extend_from_slice(&(files.len() as u64).to_le_bytes());
    for (p, e) in files.iter() {
        raw.extend_from_slice(&(p.len() as u32).to_le_bytes());
        raw.extend_from_slice(p.as_bytes());
        raw.push(e.kind.code());
        if with_modes {
            raw.extend_from_slice(&e.mode.to_le_bytes());
        }
        raw.extend_from_slice(&e.size.to_le_bytes());
        raw.extend_from_slice(e.id.as_bytes());
    }
    raw
}

/// Keep `files`, the files of `tree`, at `path` (temp file + rename; not
/// synced: a lost one only means walking the tree's objects).
pub(crate) fn save(path: &Path, tree: &ObjectId, files: &FlatTree) -> std::io::Result<()> {
    let raw = encode(files, true);
    let temp = super::Layout::stat_cache_temp(path);
    crate::durability::atomic_write(path, &temp, false, |f| {
        f.write_all(MAGIC)?;
        f.write_all(tree.as_bytes())?;
        super::checked::write(f, &raw)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::UncapturedReason;

    fn sample() -> FlatTree {
        [
            (
                "a.txt",
                TreeEntry::new(EntryKind::File, ObjectId::of(b"a"), 1),
            ),
            (
                "bin/run",
                TreeEntry::new(EntryKind::Executable, ObjectId::of(b"#!"), 2),
            ),
            (
                "link",
                TreeEntry::new(EntryKind::Symlink, ObjectId::of(b"a.txt"), 5),
            ),
            (
                "locked",
                TreeEntry::uncaptured(UncapturedReason::Unreadable),
            ),
        ]
        .into_iter()
        .map(|(p, e)| (p.to_string(), e))
        .collect()
    }

    #[test]
    fn a_saved_flat_tree_reads_back_only_for_its_own_tree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("flat-x.bin");
        let tree = ObjectId::of(b"tree");
        save(&path, &tree, &sample()).expect("save");
        assert_eq!(tree_at(&path), Some(tree));
        assert_eq!(load(&path, &tree), Some(sample()));
        assert_eq!(load(&path, &ObjectId::of(b"another")), None);
    }

    #[test]
    fn a_torn_or_altered_file_is_a_miss() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("flat-x.bin");
        let tree = ObjectId::of(b"tree");
        save(&path, &tree, &sample()).expect("save");
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..bytes.len() - 3]).expect("write");
        assert_eq!(load(&path, &tree), None);
        let mut altered = bytes.clone();
        let last = altered.len() - 6;
        altered[last] ^= 0xff;
        std::fs::write(&path, &altered).expect("write");
        assert_eq!(load(&path, &tree), None);
    }

    /// Modes other than the ordinary ones come back as saved.
    #[test]
    fn modes_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("flat-x.bin");
        let tree = ObjectId::of(b"tree");
        let mut files = sample();
        files.insert(
            "secret".into(),
            TreeEntry::file(0o100600, ObjectId::of(b"k"), 1),
        );
        files.insert(
            "private.sh".into(),
            TreeEntry::file(0o100700, ObjectId::of(b"#"), 1),
        );
        save(&path, &tree, &files).expect("save");
        let back = load(&path, &tree).expect("load");
        assert_eq!(back, files);
        assert_eq!(back["secret"].mode, 0o600);
        assert_eq!(back["private.sh"].kind, EntryKind::Executable);
    }

    /// Files older builds saved (version 2, and version 1 as one zstd
    /// frame) still hold, with the ordinary modes their trees imply.
    #[test]
    fn version_1_and_2_files_still_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("flat-x.bin");
        let tree = ObjectId::of(b"tree");
        let body = encode(&sample(), false);
        let mut v2 = MAGIC_V2.to_vec();
        v2.extend_from_slice(tree.as_bytes());
        super::super::checked::write(&mut v2, &body).expect("checksum");
        std::fs::write(&path, &v2).expect("write");
        assert_eq!(tree_at(&path), Some(tree));
        assert_eq!(load(&path, &tree), Some(sample()));

        let mut v1 = MAGIC_V1.to_vec();
        v1.extend_from_slice(tree.as_bytes());
        let mut z = zstd::stream::write::Encoder::new(Vec::new(), 1).expect("encoder");
        z.include_checksum(true).expect("checksum");
        z.write_all(&body).expect("compress");
        v1.extend_from_slice(&z.finish().expect("finish"));
        std::fs::write(&path, &v1).expect("write");
        assert_eq!(tree_at(&path), Some(tree));
        assert_eq!(load(&path, &tree), Some(sample()));
    }
}
