//! Directory trees and their one canonical byte encoding.
//!
//! # Encoding, versions 1 and 2
//!
//! All integers are little-endian; ids are the 16 raw bytes of [`ObjectId`] (big-endian
//! xxh3-128).
//!
//! ```text
//! header:
//!   0   4   magic "RWTR"
//!   4   1   tree encoding version: 1, or 2 when some file's mode is not ordinary
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
//!   +29+L   2  version 2 only: mode, u16: a file's permission bits (0o777), 0 for the rest
//! nothing after the last entry
//! ```
//!
//! A file's mode is its permission bits as captured (docs/format.md "Trees"). Version 1
//! has no mode field: its files have the ordinary modes, 0o644 for a file and 0o755 for an
//! executable one, so a tree whose files all have them is written as version 1, exactly as
//! before modes were recorded (same bytes, same id), and only a tree holding another mode
//! is written as version 2.
//!
//! A path the scan found but could not capture is an entry of its own (docs/format.md
//! "Trees", docs/architecture.md rule 14): a checkpoint says "present, not captured"
//! rather than leaving the name out, which would read as a deletion.
//!
//! Every field is fixed by the tree's content and nothing else (no timestamps, no owner,
//! no bits beyond 0o777, no ordering freedom, one version for a given set of entries), so
//! an unchanged directory encodes to the same bytes, and therefore the same object, in
//! every snapshot.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::error::StoreError;
use super::object_id::ObjectId;

const MAGIC: &[u8; 4] = b"RWTR";
/// The newest tree encoding this build writes and reads: version 2 carries each entry's
/// mode. A tree whose files all have their ordinary mode is written as version 1
/// ([`TREE_VERSION_ORDINARY`]).
pub const TREE_VERSION: u8 = 2;
/// The tree encoding without modes, written for trees whose files all have their
/// ordinary mode ([`EntryKind::ordinary_mode`]).
pub const TREE_VERSION_ORDINARY: u8 = 1;
const HEADER_LEN: usize = 9;
/// kind + name length + id + size, without the name bytes (version 1).
const ENTRY_FIXED_LEN: usize = 1 + 4 + 16 + 8;
/// The mode field a version 2 entry adds.
const MODE_LEN: usize = 2;
/// The permission bits a tree records: user, group and other's read, write and execute
/// bits. Setuid, setgid and sticky are not recorded (docs/format.md "What a restore does
/// not put back").
pub const PERMISSION_BITS: u16 = 0o777;
/// The bit that makes a file [`EntryKind::Executable`]: its owner may execute it.
const OWNER_EXECUTE: u16 = 0o100;

/// Why a path found in the project is not captured in a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum UncapturedReason {
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

impl UncapturedReason {
    const ALL: [UncapturedReason; 6] = [
        UncapturedReason::TooLarge,
        UncapturedReason::Special,
        UncapturedReason::Unreadable,
        UncapturedReason::PathTooLong,
        UncapturedReason::Unstable,
        UncapturedReason::IgnoredOverCap,
    ];

    pub(crate) fn code(self) -> u8 {
        match self {
            UncapturedReason::TooLarge => 0,
            UncapturedReason::Special => 1,
            UncapturedReason::Unreadable => 2,
            UncapturedReason::PathTooLong => 3,
            UncapturedReason::Unstable => 4,
            UncapturedReason::IgnoredOverCap => 5,
        }
    }

    /// Whether a checkpoint records the path as present but not captured.
    /// Ignored files over the per-directory cap are left out by policy, not
    /// by failure (docs/architecture.md rule 13): naming each of them in
    /// every tree would list every ignored build product, and the parent's
    /// captured ones keep their place under the cap.
    pub fn is_recorded(self) -> bool {
        self != UncapturedReason::IgnoredOverCap
    }

    /// The reason a record names (`None`: one this build does not know).
    pub fn parse(name: &str) -> Option<UncapturedReason> {
        UncapturedReason::ALL
            .into_iter()
            .find(|r| r.as_str() == name)
    }

    /// The reason's name as the protocol spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            UncapturedReason::TooLarge => "tooLarge",
            UncapturedReason::Special => "special",
            UncapturedReason::Unreadable => "unreadable",
            UncapturedReason::PathTooLong => "pathTooLong",
            UncapturedReason::Unstable => "unstable",
            UncapturedReason::IgnoredOverCap => "ignoredOverCap",
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
    Uncaptured(UncapturedReason),
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
            c => UncapturedReason::ALL
                .into_iter()
                .find(|r| UNCAPTURED_BASE + r.code() == c)
                .map(EntryKind::Uncaptured),
        }
    }

    /// The mode a tree of version 1 gives an entry of this kind: 0o644 for a file, 0o755
    /// for an executable file, 0 for the rest (which have no mode).
    pub fn ordinary_mode(self) -> u16 {
        match self {
            EntryKind::File => 0o644,
            EntryKind::Executable => 0o755,
            _ => 0,
        }
    }

    /// Whether entries of this kind have a mode (regular files).
    pub fn has_mode(self) -> bool {
        matches!(self, EntryKind::File | EntryKind::Executable)
    }

    /// The reason when this names a path that was not captured.
    pub fn uncaptured(self) -> Option<UncapturedReason> {
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
    /// A file's permission bits as captured ([`PERMISSION_BITS`]): `Executable` exactly
    /// when the owner's execute bit (0o100) is set. 0 for symlinks, trees and uncaptured
    /// paths. [`TreeEntry::new`] gives the kind's ordinary mode.
    pub mode: u16,
}

impl TreeEntry {
    /// An entry with its kind's ordinary mode (0o644 for a file, 0o755 for an executable
    /// file, none for the rest).
    pub fn new(kind: EntryKind, id: ObjectId, size: u64) -> TreeEntry {
        TreeEntry {
            kind,
            id,
            size,
            mode: kind.ordinary_mode(),
        }
    }

    /// A regular file with the permission bits of `st_mode` (the rest of it — type,
    /// setuid, setgid, sticky — is not recorded): executable when its owner may execute
    /// it.
    pub fn file(st_mode: u32, id: ObjectId, size: u64) -> TreeEntry {
        // Masked to 0o777 first, so the cast keeps every bit.
        let mode = (st_mode & u32::from(PERMISSION_BITS)) as u16;
        let kind = if mode & OWNER_EXECUTE != 0 {
            EntryKind::Executable
        } else {
            EntryKind::File
        };
        TreeEntry {
            kind,
            id,
            size,
            mode,
        }
    }

    /// The entry of a path present but not captured.
    pub fn uncaptured(reason: UncapturedReason) -> TreeEntry {
        TreeEntry::new(
            EntryKind::Uncaptured(reason),
            ObjectId::from_bytes([0; 16]),
            0,
        )
    }

    /// Whether its mode is its kind's ordinary one, which a tree of version 1 implies.
    pub fn has_ordinary_mode(&self) -> bool {
        self.mode == self.kind.ordinary_mode()
    }

    /// Why this entry's mode cannot be encoded, if it cannot: bits beyond 0o777, a kind
    /// that disagrees with the owner's execute bit, a mode on something not a file.
    fn mode_error(&self) -> Option<&'static str> {
        if !self.kind.has_mode() {
            return (self.mode != 0).then_some("has a mode but is not a file");
        }
        if self.mode & !PERMISSION_BITS != 0 {
            return Some("has mode bits beyond 0o777");
        }
        let executable = self.mode & OWNER_EXECUTE != 0;
        if executable != (self.kind == EntryKind::Executable) {
            return Some("has a kind that disagrees with its owner's execute bit");
        }
        None
    }

    /// The reason this path was not captured, when it was not.
    pub fn not_captured(&self) -> Option<UncapturedReason> {
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
    ///
    /// Version 1 when every entry has its kind's ordinary mode (the bytes, and so the id,
    /// of every tree written before modes were recorded), else version 2.
    pub fn encode(&self) -> Vec<u8> {
        let with_modes = !self.entries.values().all(TreeEntry::has_ordinary_mode);
        let entry_len = ENTRY_FIXED_LEN + if with_modes { MODE_LEN } else { 0 };
        let names: usize = self.entries.keys().map(String::len).sum();
        let mut out = Vec::with_capacity(HEADER_LEN + self.entries.len() * entry_len + names);
        out.extend_from_slice(MAGIC);
        out.push(if with_modes {
            TREE_VERSION
        } else {
            TREE_VERSION_ORDINARY
        });
        // Saturation only matters for > 4 billion entries, which validate() rejects.
        out.extend_from_slice(&u32_len(self.entries.len()).to_le_bytes());
        for (name, entry) in &self.entries {
            out.push(entry.kind.code());
            out.extend_from_slice(&u32_len(name.len()).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(entry.id.as_bytes());
            out.extend_from_slice(&entry.size.to_le_bytes());
            if with_modes {
                out.extend_from_slice(&entry.mode.to_le_bytes());
            }
        }
        out
    }

    /// Strict decoding: anything `encode` of a valid tree would not produce is rejected
    /// (unknown magic or version, unsorted or duplicate names, invalid names, unknown kinds,
    /// non-zero size on a tree entry, wrong count, trailing bytes; in version 2, a mode
    /// beyond 0o777, a mode on a non-file, a kind that disagrees with the owner's execute
    /// bit, or modes that are all ordinary, which version 1 encodes). The returned error
    /// has `id: None`; `Store::get_tree` fills in the object id.
    pub fn decode(bytes: &[u8]) -> Result<Tree, StoreError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(4)? != MAGIC {
            return Err(StoreError::bad_tree("bad magic (not a tree object)"));
        }
        let version = r.take(1)?[0];
        let with_modes = match version {
            TREE_VERSION_ORDINARY => false,
            TREE_VERSION => true,
            _ => {
                return Err(StoreError::bad_tree(format!(
                    "unsupported tree encoding version {version} \
                     (this build reads {TREE_VERSION_ORDINARY} and {TREE_VERSION})"
                )))
            }
        };
        let entry_len = ENTRY_FIXED_LEN + if with_modes { MODE_LEN } else { 0 };
        let count = r.u32()?;
        // Each entry needs at least entry_len + 1 bytes: bounds the count before we
        // trust it for anything.
        if (count as usize).saturating_mul(entry_len + 1) > bytes.len() - r.pos {
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
            let mode = if with_modes {
                r.u16()?
            } else {
                kind.ordinary_mode()
            };
            let entry = TreeEntry {
                kind,
                id: ObjectId::from_bytes(id),
                size,
                mode,
            };
            if let Some(why) = entry.mode_error() {
                return Err(StoreError::bad_tree(format!(
                    "entry {name:?} {why} (mode {mode:o})"
                )));
            }
            entries.insert(name.to_string(), entry);
        }
        if r.pos != bytes.len() {
            return Err(StoreError::bad_tree(format!(
                "{} trailing bytes after the last entry",
                bytes.len() - r.pos
            )));
        }
        if with_modes && entries.values().all(TreeEntry::has_ordinary_mode) {
            return Err(StoreError::bad_tree(
                "a version 2 tree whose modes are all ordinary (version 1 encodes it)",
            ));
        }
        Ok(Tree { entries })
    }

    /// `ObjectId::of(&self.encode())`.
    pub fn id(&self) -> ObjectId {
        ObjectId::of(&self.encode())
    }

    /// Checks that this tree encodes to something `decode` accepts: valid names, size 0 on
    /// tree entries, no id or size on uncaptured ones, modes a file can have (0o777 at
    /// most, `Executable` exactly with the owner's execute bit, none on the rest), at most
    /// `u32::MAX` entries.
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
            if let Some(why) = entry.mode_error() {
                return Err(StoreError::bad_tree(format!(
                    "entry {name:?} {why} (mode {:o})",
                    entry.mode
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

    fn u16(&mut self) -> Result<u16, StoreError> {
        let mut b = [0u8; 2];
        b.copy_from_slice(self.take(2)?);
        Ok(u16::from_le_bytes(b))
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
mod tests;

#[cfg(test)]
mod fuzz;
