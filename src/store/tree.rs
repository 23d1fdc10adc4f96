//! Directory trees and their one canonical byte encoding.
//!
//! # Encoding, version 1
//!
//! All integers are little-endian; ids are the 16 raw bytes of [`ObjectId`] (big-endian
//! xxh3-128).
//!
//! ```text
//! header:
//!   0   4   magic "RWTR"
//!   4   1   tree encoding version = 1
//!   5   4   entry count N, u32
//! then N entries, in strictly increasing byte order of their names:
//!   +0  1   kind: 1 = file, 2 = executable file, 3 = symlink, 4 = tree,
//!           0x10 + r = present in the project but not captured, for reason r
//!           (0 too large, 1 special, 2 unreadable, 3 path too long, 4 unstable,
//!           5 ignored over the cap): id all zero, size 0
//!   +1  4   name length L, u32 (L >= 1)
//!   +5  L   name, UTF-8, no '/' and no NUL, not "." or ".."
//!   +5+L   16  object id (file content, link target bytes, or sub-tree object)
//!   +21+L   8  size, u64: content length for files, target length for symlinks, 0 for trees
//! nothing after the last entry
//! ```
//!
//! A path the scan found but could not capture is an entry of its own (docs/format.md
//! "Trees", docs/architecture.md rule 14): a checkpoint says "present, not captured"
//! rather than leaving the name out, which would read as a deletion.
//!
//! Every field is fixed by the tree's content and nothing else (no timestamps, no
//! permissions beyond the executable bit, no ordering freedom), so an unchanged directory
//! encodes to the same bytes, and therefore the same object, in every snapshot.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::error::StoreError;
use super::object_id::ObjectId;

const MAGIC: &[u8; 4] = b"RWTR";
/// Version of the tree encoding written and read by this build.
pub const TREE_VERSION: u8 = 1;
const HEADER_LEN: usize = 9;
/// kind + name length + id + size, without the name bytes.
const ENTRY_FIXED_LEN: usize = 1 + 4 + 16 + 8;

/// Why a path found in the project is not captured in a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum UntrackedReason {
    /// Larger than `maxFileSize`, and not held by the parent checkpoint.
    TooLarge,
    /// A FIFO, socket or device.
    Special,
    /// Could not be read: permissions, an I/O error, a name that is not
    /// UTF-8, or a directory that could not be listed (nothing below it is
    /// captured).
    Unreadable,
    /// Its absolute path is longer than the system allows (PATH_MAX), so it
    /// cannot be opened by name; for a directory, nothing below it is
    /// captured.
    PathTooLong,
    /// Kept changing while it was read (a file rewritten in place), in
    /// every attempt: what was read would be a mix of versions that never
    /// existed as a whole.
    Unstable,
    /// Ignored by git and small enough to be captured, but its directory
    /// holds more such files than `ignoredPerDirectory` (docs/architecture.md
    /// rule 13).
    IgnoredOverCap,
}

impl UntrackedReason {
    const ALL: [UntrackedReason; 6] = [
        UntrackedReason::TooLarge,
        UntrackedReason::Special,
        UntrackedReason::Unreadable,
        UntrackedReason::PathTooLong,
        UntrackedReason::Unstable,
        UntrackedReason::IgnoredOverCap,
    ];

    pub(crate) fn code(self) -> u8 {
        match self {
            UntrackedReason::TooLarge => 0,
            UntrackedReason::Special => 1,
            UntrackedReason::Unreadable => 2,
            UntrackedReason::PathTooLong => 3,
            UntrackedReason::Unstable => 4,
            UntrackedReason::IgnoredOverCap => 5,
        }
    }

    /// Whether a checkpoint records the path as present but not captured.
    /// Ignored files over the per-directory cap are left out by policy, not
    /// by failure (docs/architecture.md rule 13): naming each of them in
    /// every tree would list every ignored build product, and the parent's
    /// captured ones keep their place under the cap.
    pub fn is_recorded(self) -> bool {
        self != UntrackedReason::IgnoredOverCap
    }

    /// The reason a record names (`None`: one this build does not know).
    pub fn parse(name: &str) -> Option<UntrackedReason> {
        UntrackedReason::ALL
            .into_iter()
            .find(|r| r.as_str() == name)
    }

    /// The reason's name as the protocol spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            UntrackedReason::TooLarge => "tooLarge",
            UntrackedReason::Special => "special",
            UntrackedReason::Unreadable => "unreadable",
            UntrackedReason::PathTooLong => "pathTooLong",
            UntrackedReason::Unstable => "unstable",
            UntrackedReason::IgnoredOverCap => "ignoredOverCap",
        }
    }
}

/// What a tree entry points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file without the executable bit; `id` is its content.
    File,
    /// A regular file with the executable bit; `id` is its content.
    Executable,
    /// A symbolic link; `id` is the link target's bytes, stored as a blob.
    Symlink,
    /// A sub-directory; `id` is another tree object.
    Tree,
    /// Present in the project when the checkpoint was taken, but not
    /// captured (a file, or a directory nothing below which was captured);
    /// `id` is all zero and `size` 0. A restore leaves such a path alone.
    Uncaptured(UntrackedReason),
}

const UNCAPTURED_BASE: u8 = 0x10;

impl EntryKind {
    pub(crate) fn code(self) -> u8 {
        match self {
            EntryKind::File => 1,
            EntryKind::Executable => 2,
            EntryKind::Symlink => 3,
            EntryKind::Tree => 4,
            EntryKind::Uncaptured(r) => UNCAPTURED_BASE + r.code(),
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<EntryKind> {
        match code {
            1 => Some(EntryKind::File),
            2 => Some(EntryKind::Executable),
            3 => Some(EntryKind::Symlink),
            4 => Some(EntryKind::Tree),
            c => UntrackedReason::ALL
                .into_iter()
                .find(|r| UNCAPTURED_BASE + r.code() == c)
                .map(EntryKind::Uncaptured),
        }
    }

    /// The reason when this names a path that was not captured.
    pub fn uncaptured(self) -> Option<UntrackedReason> {
        match self {
            EntryKind::Uncaptured(r) => Some(r),
            _ => None,
        }
    }
}

/// One name in a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TreeEntry {
    pub kind: EntryKind,
    pub id: ObjectId,
    /// Byte length of the file content or link target; always 0 for `Tree` entries (a
    /// sub-tree's size would change the parent's id for no information the id lacks).
    pub size: u64,
}

impl TreeEntry {
    /// The entry of a path present but not captured.
    pub fn uncaptured(reason: UntrackedReason) -> TreeEntry {
        TreeEntry {
            kind: EntryKind::Uncaptured(reason),
            id: ObjectId::from_bytes([0; 16]),
            size: 0,
        }
    }

    /// The reason this path was not captured, when it was not.
    pub fn not_captured(&self) -> Option<UntrackedReason> {
        self.kind.uncaptured()
    }

    /// Whether it points at an object (content, a link target or a tree).
    pub fn has_object(&self) -> bool {
        self.kind.uncaptured().is_none()
    }
}

/// A directory: entry name (a single path component) to entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    pub entries: BTreeMap<String, TreeEntry>,
}

impl Tree {
    /// The canonical encoding (see the module docs). `BTreeMap<String, _>` iterates in byte
    /// order of the names, which is exactly the order the format requires.
    ///
    /// Encoding does not validate names; [`Tree::validate`] does, and `Store::put_tree`
    /// calls it, so an invalid tree never reaches the store.
    pub fn encode(&self) -> Vec<u8> {
        let names: usize = self.entries.keys().map(String::len).sum();
        let mut out = Vec::with_capacity(HEADER_LEN + self.entries.len() * ENTRY_FIXED_LEN + names);
        out.extend_from_slice(MAGIC);
        out.push(TREE_VERSION);
        // Saturation only matters for > 4 billion entries, which validate() rejects.
        out.extend_from_slice(&u32_len(self.entries.len()).to_le_bytes());
        for (name, entry) in &self.entries {
            out.push(entry.kind.code());
            out.extend_from_slice(&u32_len(name.len()).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(entry.id.as_bytes());
            out.extend_from_slice(&entry.size.to_le_bytes());
        }
        out
    }

    /// Strict decoding: anything `encode` of a valid tree would not produce is rejected
    /// (unknown magic or version, unsorted or duplicate names, invalid names, unknown kinds,
    /// non-zero size on a tree entry, wrong count, trailing bytes). The returned error has
    /// `id: None`; `Store::get_tree` fills in the object id.
    pub fn decode(bytes: &[u8]) -> Result<Tree, StoreError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(4)? != MAGIC {
            return Err(StoreError::bad_tree("bad magic (not a tree object)"));
        }
        let version = r.take(1)?[0];
        if version != TREE_VERSION {
            return Err(StoreError::bad_tree(format!(
                "unsupported tree encoding version {version} (this build reads {TREE_VERSION})"
            )));
        }
        let count = r.u32()?;
        // Each entry needs at least ENTRY_FIXED_LEN + 1 bytes: bounds the count before we
        // trust it for anything.
        if (count as usize).saturating_mul(ENTRY_FIXED_LEN + 1) > bytes.len() - r.pos {
            return Err(StoreError::bad_tree(format!(
                "entry count {count} exceeds the data"
            )));
        }
        let mut entries = BTreeMap::new();
        let mut prev: Option<&str> = None;
        for _ in 0..count {
            let code = r.take(1)?[0];
            let kind = EntryKind::from_code(code)
                .ok_or_else(|| StoreError::bad_tree(format!("unknown entry kind {code}")))?;
            let name_len = r.u32()? as usize;
            let name = std::str::from_utf8(r.take(name_len)?)
                .map_err(|_| StoreError::bad_tree("entry name is not UTF-8"))?;
            check_name(name)?;
            if let Some(prev) = prev {
                if prev.as_bytes() >= name.as_bytes() {
                    return Err(StoreError::bad_tree(format!(
                        "entry {name:?} is not sorted after {prev:?} (or duplicated)"
                    )));
                }
            }
            prev = Some(name);
            let mut id = [0u8; 16];
            id.copy_from_slice(r.take(16)?);
            let size = r.u64()?;
            if kind == EntryKind::Tree && size != 0 {
                return Err(StoreError::bad_tree(format!(
                    "tree entry {name:?} has size {size}, expected 0"
                )));
            }
            if kind.uncaptured().is_some() && (size != 0 || id != [0; 16]) {
                return Err(StoreError::bad_tree(format!(
                    "uncaptured entry {name:?} has an id or a size"
                )));
            }
            entries.insert(
                name.to_string(),
                TreeEntry {
                    kind,
                    id: ObjectId::from_bytes(id),
                    size,
                },
            );
        }
        if r.pos != bytes.len() {
            return Err(StoreError::bad_tree(format!(
                "{} trailing bytes after the last entry",
                bytes.len() - r.pos
            )));
        }
        Ok(Tree { entries })
    }

    /// `ObjectId::of(&self.encode())`.
    pub fn id(&self) -> ObjectId {
        ObjectId::of(&self.encode())
    }

    /// Checks that this tree encodes to something `decode` accepts: valid names, size 0 on
    /// tree entries, no id or size on uncaptured ones, at most `u32::MAX` entries.
    pub fn validate(&self) -> Result<(), StoreError> {
        if u32::try_from(self.entries.len()).is_err() {
            return Err(StoreError::bad_tree("too many entries"));
        }
        for (name, entry) in &self.entries {
            check_name(name)?;
            if entry.kind == EntryKind::Tree && entry.size != 0 {
                return Err(StoreError::bad_tree(format!(
                    "tree entry {name:?} has size {}, expected 0",
                    entry.size
                )));
            }
            if entry
                .not_captured()
                .map(TreeEntry::uncaptured)
                .is_some_and(|u| u != *entry)
            {
                return Err(StoreError::bad_tree(format!(
                    "uncaptured entry {name:?} has an id or a size"
                )));
            }
        }
        Ok(())
    }
}

/// The id of the tree with no entries.
pub fn empty_tree_id() -> ObjectId {
    static EMPTY: OnceLock<ObjectId> = OnceLock::new();
    *EMPTY.get_or_init(|| Tree::default().id())
}

/// Whether a name is git's own directory, in any case: never project content,
/// never captured, and never in a tree, so never written by a restore
/// whatever tree it reads (docs/architecture.md rule 7). Any case, as git
/// itself refuses such a name in a tree: on a case-insensitive disk `.GIT`
/// is the repository's own directory, and its hooks run code.
pub fn is_git_dir(name: &str) -> bool {
    name.eq_ignore_ascii_case(".git")
}

/// Whether any component of the `/`-joined `path` is [`is_git_dir`].
pub fn names_git_dir(path: &str) -> bool {
    path.split('/').any(is_git_dir)
}

/// A valid entry name: one non-empty path component, not `.`/`..`, no `/` or NUL, not
/// git's directory ([`is_git_dir`]), and short enough for the u32 length field.
/// Checked on every tree read and written, so a tree from a remote or a damaged store
/// naming `.git` is refused before anything acts on it.
pub(crate) fn check_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && !is_git_dir(name)
        && !name.bytes().any(|b| b == b'/' || b == 0)
        && u32::try_from(name.len()).is_ok();
    if ok {
        Ok(())
    } else {
        Err(StoreError::bad_tree(format!("invalid entry name {name:?}")))
    }
}

fn u32_len(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Bounds-checked cursor: every short read is a `BadTree`, never a panic.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| StoreError::bad_tree("truncated"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, StoreError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, StoreError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(kind: EntryKind, content: &[u8]) -> TreeEntry {
        TreeEntry {
            kind,
            id: ObjectId::of(content),
            size: content.len() as u64,
        }
    }

    /// The tree whose id is pinned below: "a.txt" (b"hello\n"), executable "run.sh",
    /// symlink "link" -> "a.txt", and "src/" holding "main.rs".
    fn sample_tree() -> (Tree, Tree) {
        let mut src = Tree::default();
        src.entries
            .insert("main.rs".into(), leaf(EntryKind::File, b"fn main() {}\n"));
        let mut root = Tree::default();
        root.entries
            .insert("a.txt".into(), leaf(EntryKind::File, b"hello\n"));
        root.entries.insert(
            "run.sh".into(),
            leaf(EntryKind::Executable, b"#!/bin/sh\necho hi\n"),
        );
        root.entries
            .insert("link".into(), leaf(EntryKind::Symlink, b"a.txt"));
        root.entries.insert(
            "src".into(),
            TreeEntry {
                kind: EntryKind::Tree,
                id: src.id(),
                size: 0,
            },
        );
        (root, src)
    }

    /// Pins the encoding. If this fails, the tree format changed: every existing store's
    /// trees would get new ids. Bump TREE_VERSION and the store version instead of
    /// updating these constants. (Cross-checked against an independent Python
    /// implementation of the documented encoding using the `xxhash` package.)
    #[test]
    fn pinned_tree_ids() {
        let (root, src) = sample_tree();
        assert_eq!(empty_tree_id().to_hex(), "51fd0135fcfcf45e6225cd976f0b2cb5");
        assert_eq!(src.id().to_hex(), "b55eb02b486f847f08bac54ccefd3ffc");
        assert_eq!(root.id().to_hex(), "c91c28119db9750dcd318699ff5ebac6");
    }

    #[test]
    fn encoding_layout() {
        let mut t = Tree::default();
        t.entries.insert(
            "ab".into(),
            TreeEntry {
                kind: EntryKind::Executable,
                id: ObjectId::from_bytes([0x11; 16]),
                size: 0x0102,
            },
        );
        let mut expected = b"RWTR\x01\x01\x00\x00\x00".to_vec();
        expected.extend_from_slice(b"\x02\x02\x00\x00\x00ab");
        expected.extend_from_slice(&[0x11; 16]);
        expected.extend_from_slice(&[0x02, 0x01, 0, 0, 0, 0, 0, 0]);
        assert_eq!(t.encode(), expected);
        assert_eq!(Tree::default().encode(), b"RWTR\x01\x00\x00\x00\x00");
    }

    #[test]
    fn round_trip_and_sort_order() {
        let (root, _) = sample_tree();
        let mut t = root.clone();
        // Byte order: "B" < "a" < "a.txt" < "a0" < "é".
        for name in ["é", "a0", "B", "a"] {
            t.entries
                .insert(name.into(), leaf(EntryKind::File, name.as_bytes()));
        }
        let bytes = t.encode();
        assert_eq!(Tree::decode(&bytes).unwrap(), t);
        assert_eq!(t.id(), ObjectId::of(&bytes));
    }

    /// An uncaptured entry is one kind byte per reason, id zero, size 0; trees
    /// without one encode exactly as before (pinned_tree_ids), so old stores
    /// keep their ids.
    #[test]
    fn uncaptured_entries_round_trip_and_are_strict() {
        let mut t = Tree::default();
        for (i, r) in UntrackedReason::ALL.into_iter().enumerate() {
            t.entries.insert(format!("f{i}"), TreeEntry::uncaptured(r));
        }
        let bytes = t.encode();
        assert_eq!(bytes[9], 0x10, "too large is kind 0x10");
        let back = Tree::decode(&bytes).unwrap();
        assert_eq!(back, t);
        assert_eq!(
            back.entries["f4"].not_captured(),
            Some(UntrackedReason::Unstable)
        );
        assert!(!back.entries["f4"].has_object());
        // An id or a size on an uncaptured entry is refused, both ways.
        let err = Tree::decode(&encode_raw(&[(0x12, b"x", 0)])).unwrap_err();
        assert!(err.to_string().contains("uncaptured"), "{err}");
        let mut bad = Tree::default();
        bad.entries.insert(
            "x".into(),
            TreeEntry {
                size: 1,
                ..TreeEntry::uncaptured(UntrackedReason::Unreadable)
            },
        );
        assert!(bad.validate().is_err());
        assert!(Tree::decode(&encode_raw(&[(0x16, b"x", 0)])).is_err());
    }

    fn encode_raw(entries: &[(u8, &[u8], u64)]) -> Vec<u8> {
        let mut out = b"RWTR\x01".to_vec();
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for (kind, name, size) in entries {
            out.push(*kind);
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(&[0xab; 16]);
            out.extend_from_slice(&size.to_le_bytes());
        }
        out
    }

    #[test]
    fn decode_accepts_raw_valid() {
        let t = Tree::decode(&encode_raw(&[(1, b"a", 3), (4, b"b", 0)])).unwrap();
        assert_eq!(t.entries.len(), 2);
        assert_eq!(t.entries["b"].kind, EntryKind::Tree);
    }

    #[test]
    fn decode_rejects_bad_trees() {
        let good = encode_raw(&[(1, b"a", 3), (1, b"b", 3)]);
        let mut bad_cases: Vec<(&str, Vec<u8>)> = vec![
            ("empty", vec![]),
            ("bad magic", {
                let mut b = good.clone();
                b[0] = b'X';
                b
            }),
            ("future version", {
                let mut b = good.clone();
                b[4] = 2;
                b
            }),
            ("count too high", {
                let mut b = good.clone();
                b[5] = 3;
                b
            }),
            ("count absurd", {
                let mut b = good.clone();
                b[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
                b
            }),
            ("count too low (trailing bytes)", {
                let mut b = good.clone();
                b[5] = 1;
                b
            }),
            ("trailing byte", {
                let mut b = good.clone();
                b.push(0);
                b
            }),
            ("truncated", good[..good.len() - 1].to_vec()),
            ("unsorted", encode_raw(&[(1, b"b", 3), (1, b"a", 3)])),
            ("duplicate", encode_raw(&[(1, b"a", 3), (1, b"a", 3)])),
            ("unknown kind", encode_raw(&[(9, b"a", 3)])),
            ("kind zero", encode_raw(&[(0, b"a", 3)])),
            ("empty name", encode_raw(&[(1, b"", 3)])),
            ("dot", encode_raw(&[(1, b".", 3)])),
            ("dotdot", encode_raw(&[(1, b"..", 3)])),
            ("slash", encode_raw(&[(1, b"a/b", 3)])),
            ("nul", encode_raw(&[(1, b"a\0", 3)])),
            ("not utf-8", encode_raw(&[(1, b"\xff", 3)])),
            ("tree with size", encode_raw(&[(4, b"d", 7)])),
            // git's own directory, in any case, as a tree or a file: a tree
            // from a remote must not get a restore into `.git/hooks`.
            (".git", encode_raw(&[(4, b".git", 0)])),
            (".GiT", encode_raw(&[(4, b".GiT", 0)])),
            (".git file", encode_raw(&[(1, b".git", 3)])),
        ];
        // A name length pointing past the end.
        let mut long = encode_raw(&[(1, b"a", 3)]);
        long[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
        bad_cases.push(("name length absurd", long));
        for (what, bytes) in bad_cases {
            assert!(
                matches!(
                    Tree::decode(&bytes),
                    Err(StoreError::BadTree { id: None, .. })
                ),
                "{what} was accepted"
            );
        }
    }

    #[test]
    fn validate_rejects_what_decode_would() {
        let mut t = Tree::default();
        t.entries.insert("a/b".into(), leaf(EntryKind::File, b"x"));
        assert!(t.validate().is_err());
        let mut t = Tree::default();
        t.entries.insert(
            "d".into(),
            TreeEntry {
                kind: EntryKind::Tree,
                id: empty_tree_id(),
                size: 1,
            },
        );
        assert!(t.validate().is_err());
        assert!(sample_tree().0.validate().is_ok());
    }
}

/// The tree decoder against arbitrary and mutated input: it refuses or decodes to a tree
/// whose encoding is byte-identical (the encoding is canonical), and never panics.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn some_tree() -> Tree {
        let mut entries = BTreeMap::new();
        for (i, name) in ["a", "b.txt", "dir", "é", "link"].iter().enumerate() {
            let kind = match i % 4 {
                0 => EntryKind::File,
                1 => EntryKind::Executable,
                2 => EntryKind::Tree,
                _ => EntryKind::Symlink,
            };
            entries.insert(
                name.to_string(),
                TreeEntry {
                    kind,
                    id: ObjectId::of(name.as_bytes()),
                    size: if kind == EntryKind::Tree {
                        0
                    } else {
                        i as u64 * 7
                    },
                },
            );
        }
        Tree { entries }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(t) = Tree::decode(&bytes) {
                prop_assert_eq!(t.encode(), bytes);
            }
        }

        #[test]
        fn mutated_encodings_are_refused_or_canonical(
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
            cut in proptest::option::of(any::<usize>()),
        ) {
            let mut bytes = some_tree().encode();
            for (at, b) in flips {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            if let Some(c) = cut {
                bytes.truncate(c % (bytes.len() + 1));
            }
            if let Ok(t) = Tree::decode(&bytes) {
                prop_assert_eq!(t.encode(), bytes);
            }
        }
    }
}
