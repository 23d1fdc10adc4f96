//! The git state a checkpoint records (docs/format.md "Git state"): branch
//! and HEAD (read from git's files, as `git.rs` does), the index as a
//! listing stored in rewind's store, and whether the work tree differed from
//! the index. Recording must cost a warm event next to nothing, so:
//!
//! - the index is parsed and its listing stored only when `.git/index`
//!   changed (its size, mtime and inode), and the listing is split into
//!   content-defined chunks, so an index that changed in one place stores
//!   one small chunk and one small tree; an unchanged index stores nothing;
//! - "dirty" is worked out from what the scan already knows — the stat cache
//!   and the checkpoint's tree — against the index's own stat data, as
//!   `git status` does with its index: a file whose size and mtime are the
//!   ones git recorded (and not racily so) is what git staged; only the
//!   others are hashed as git hashes a blob, from the checkpoint's content.
//!   After the first time, only the paths a checkpoint changed, and the
//!   entries a new index changed, are looked at again.
//!
//! What is staged against HEAD is not computed here (that needs HEAD's tree,
//! i.e. git's objects): a plan asks git for it when it needs it
//! (`git_cmd.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use super::git::{self, IndexEntry, NoIndex};
use super::git_index::{FileIdentity, GitIndex};
use super::stat_cache::StatCache;
use crate::store::{EntryKind, FlatTree, ObjectId, Store, StoreError, Tree, TreeEntry};

/// The first entry of a listing's tree: its format and hash.
const FORMAT_NAME: &str = "format";
/// A chunk ends after an entry whose path hashes to 0 modulo this (so about
/// this many entries a chunk), or at [`MAX_CHUNK`] entries.
const CHUNK_MASK: u64 = 63;
const MAX_CHUNK: usize = 1024;
/// The most content a pass hashes to tell whether files git's stat data
/// cannot vouch for are what the index holds; past it, "dirty" is unknown.
const MAX_HASHED_BYTES: u64 = 64 << 20;

/// A tree a working copy answered for before, and the paths (with their new
/// entries) that turn it into the one asked about.
pub type ChangedPaths<'a> = (ObjectId, &'a [(String, Option<TreeEntry>)]);

/// What a checkpoint records of git.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitState {
    pub branch: Option<String>,
    pub head: Option<String>,
    /// Whether a file the index holds differed from it (a change not
    /// staged); `None` when it could not be told.
    pub dirty: Option<bool>,
    /// The index's listing in rewind's store (docs/format.md "Git index
    /// listing"); `None` without an index that parses.
    pub index: Option<ObjectId>,
}

/// One entry of a stored listing: what `git update-index --index-info`
/// takes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedEntry {
    pub path: Vec<u8>,
    pub mode: u32,
    /// Hex.
    pub oid: String,
    pub stage: u8,
}

impl ListedEntry {
    /// The record `git update-index -z --index-info` reads.
    pub fn index_info(&self, out: &mut Vec<u8>) {
        push_record(out, self.mode, self.oid.as_bytes(), self.stage, &self.path);
    }
}

/// The parsed index, kept while `.git/index` is unchanged.
pub(super) struct IndexCache {
    identity: FileIdentity,
    entries: Arc<Vec<IndexEntry>>,
    /// Whether every path is its own project path (UTF-8, nothing
    /// `repo_path::encode_name` changes) and the entries are sorted by it,
    /// as git keeps them: a path is looked up alone only then.
    plain: bool,
    /// The index file's mtime: an entry stamped at or after it may have
    /// changed in the same tick without its stat showing it (git's racy
    /// rule).
    mtime_ns: i128,
    /// The stored listing, at the gc generation it was stored at (a gc
    /// since may have removed it: docs/architecture.md rule 10).
    listing: Option<(ObjectId, u64)>,
    /// The mismatches found for a tree.
    dirty: Option<DirtyTrack>,
}

struct DirtyTrack {
    tree: ObjectId,
    /// Indexes into `entries` that differ from the tree.
    mismatched: BTreeSet<usize>,
    /// Entries not looked at yet: those a new index changed or added (the
    /// others keep what was found for them in the index before).
    pending: Vec<usize>,
    unknown: bool,
}

/// Whether `path` is its own project path: UTF-8 without the characters
/// `repo_path::encode_name` escapes (U+F780 to U+F7FF: EF 9E xx, EF 9F xx).
fn is_plain(path: &[u8]) -> bool {
    path.is_ascii()
        || (std::str::from_utf8(path).is_ok()
            && !path
                .windows(2)
                .any(|w| w[0] == 0xef && (w[1] == 0x9e || w[1] == 0x9f)))
}

/// An entry's project path.
fn path_of(e: &IndexEntry) -> std::borrow::Cow<'_, str> {
    crate::repo_path::encode_name(&e.path)
}

/// The same entry in two indexes (whatever git's stat data says, the
/// answer for it against the same file is the same).
fn same_entry(a: &IndexEntry, b: &IndexEntry) -> bool {
    a.path == b.path
        && a.stage == b.stage
        && a.mode == b.mode
        && a.oid == b.oid
        && a.size == b.size
        && a.mtime == b.mtime
        && a.special == b.special
}

/// One `--index-info` record: `<mode octal> SP <oid hex> SP <stage> TAB
/// <path> NUL` (written by hand: a listing is encoded whole each time the
/// index changes).
fn push_record(out: &mut Vec<u8>, mode: u32, oid_hex: &[u8], stage: u8, path: &[u8]) {
    let mut digits = [0u8; 11];
    let mut n = 0;
    let mut m = mode;
    loop {
        digits[n] = b'0' + (m & 7) as u8;
        n += 1;
        m >>= 3;
        if m == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev());
    out.push(b' ');
    out.extend_from_slice(oid_hex);
    out.push(b' ');
    out.push(b'0' + stage.min(9));
    out.push(b'\t');
    out.extend_from_slice(path);
    out.push(0);
}

/// The listing's chunks: each a run of `--index-info` records.
fn chunks(entries: &[IndexEntry]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut n = 0usize;
    let mut oid = Vec::with_capacity(64);
    for e in entries {
        oid.clear();
        push_hex(&mut oid, &e.oid);
        push_record(&mut cur, e.mode, &oid, e.stage, &e.path);
        n += 1;
        if xxhash_rust::xxh3::xxh3_64(&e.path) & CHUNK_MASK == 0 || n >= MAX_CHUNK {
            out.push(std::mem::take(&mut cur));
            n = 0;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0x0f)]);
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    // Only hex digits were pushed.
    String::from_utf8_lossy(&out).into_owned()
}

fn listed(e: &IndexEntry) -> ListedEntry {
    ListedEntry {
        path: e.path.clone(),
        mode: e.mode,
        oid: hex(&e.oid),
        stage: e.stage,
    }
}

fn format_line(hash_len: usize) -> Vec<u8> {
    let hash = if hash_len == 32 { "sha256" } else { "sha1" };
    format!("rewind git index listing 1 {hash}\n").into_bytes()
}

/// Store `entries` as a listing: a tree of `format` and the chunks, named
/// by their position (`000000`, `000001`, ...).
fn store_listing(store: &Store, entries: &[IndexEntry]) -> Result<ObjectId, StoreError> {
    let hash_len = entries.first().map(|e| e.oid.len()).unwrap_or(20);
    let mut tree = Tree::default();
    let format = format_line(hash_len);
    let id = store.put(&format)?.id;
    tree.entries.insert(
        FORMAT_NAME.to_string(),
        TreeEntry::new(EntryKind::File, id, format.len() as u64),
    );
    for (i, chunk) in chunks(entries).iter().enumerate() {
        let id = store.put(chunk)?.id;
        tree.entries.insert(
            format!("{i:06}"),
            TreeEntry::new(EntryKind::File, id, chunk.len() as u64),
        );
    }
    store.put_tree(&tree)
}

/// Why a stored listing could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("git index listing {0} is not one this build reads")]
    Format(ObjectId),
}

/// The entries of the listing `id`, in the index's order.
pub fn read_listing(store: &Store, id: &ObjectId) -> Result<Vec<ListedEntry>, ListingError> {
    let tree = store.get_tree(id)?;
    let bad = || ListingError::Format(*id);
    let format = tree.entries.get(FORMAT_NAME).ok_or_else(bad)?;
    let format = store.get(&format.id)?;
    if !format.starts_with(b"rewind git index listing 1 ") {
        return Err(bad());
    }
    let mut out = Vec::new();
    for (name, e) in &tree.entries {
        if name == FORMAT_NAME {
            continue;
        }
        if e.kind != EntryKind::File || !name.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let bytes = store.get(&e.id)?;
        for rec in bytes.split(|&c| c == 0).filter(|r| !r.is_empty()) {
            out.push(parse_record(rec).ok_or_else(bad)?);
        }
    }
    Ok(out)
}

/// `<mode octal> SP <oid hex> SP <stage> TAB <path>`.
fn parse_record(rec: &[u8]) -> Option<ListedEntry> {
    let tab = rec.iter().position(|&c| c == b'\t')?;
    let head = std::str::from_utf8(&rec[..tab]).ok()?;
    let mut parts = head.split(' ');
    let mode = u32::from_str_radix(parts.next()?, 8).ok()?;
    let oid = parts.next()?;
    let stage: u8 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !git::is_object_name(oid) || stage > 3 {
        return None;
    }
    Some(ListedEntry {
        path: rec[tab + 1..].to_vec(),
        mode,
        oid: oid.to_string(),
        stage,
    })
}

/// The index as it is now, read and parsed once for both of its uses.
pub struct IndexNow {
    /// Its entries, as a listing holds them.
    pub entries: Vec<ListedEntry>,
    /// The paths it marks skip-worktree, which a listing does not keep.
    pub skip_worktree: BTreeSet<Vec<u8>>,
}

/// The index as it is now (`None`: no index that parses).
pub fn index_now(root: &Path) -> Option<IndexNow> {
    let dir = git::git_dir(root)?;
    let bytes = git::read_index(&dir)?;
    let entries = git::parse_index_entries(&bytes).ok()?;
    Some(IndexNow {
        skip_worktree: entries
            .iter()
            .filter(|e| e.skip_worktree)
            .map(|e| e.path.clone())
            .collect(),
        entries: entries.iter().map(listed).collect(),
    })
}

/// What git's blob id of `content` is, as raw bytes (SHA-1 or SHA-256 by
/// the length of the ids the index uses).
fn blob_id(content: &[u8], hash_len: usize) -> Vec<u8> {
    let algorithm = if hash_len == 32 {
        &ring::digest::SHA256
    } else {
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY
    };
    let mut ctx = ring::digest::Context::new(algorithm);
    ctx.update(format!("blob {}\0", content.len()).as_bytes());
    ctx.update(content);
    ctx.finish().as_ref().to_vec()
}

/// The index mode of a tree entry's kind (`None`: not a file).
fn mode_of(kind: EntryKind) -> Option<u32> {
    match kind {
        EntryKind::File => Some(0o100644),
        EntryKind::Executable => Some(0o100755),
        EntryKind::Symlink => Some(0o120000),
        _ => None,
    }
}

/// Looks at index entries against a tree: the stat cache vouches where it
/// can, content is hashed (to a budget) where it cannot.
struct Checker<'a> {
    store: &'a Store,
    stat_cache: &'a StatCache,
    index_mtime_ns: i128,
    hashed: u64,
    unknown: bool,
}

impl Checker<'_> {
    /// Whether entry `e` (at project path `path`) differs from `file`, the
    /// tree's entry there.
    fn differs(&mut self, e: &IndexEntry, path: &str, file: Option<&TreeEntry>) -> bool {
        if e.stage != 0 {
            // Unmerged.
            return true;
        }
        if e.special || !e.is_file() {
            // Skip-worktree and intent-to-add entries, gitlinks, sparse
            // directories: not looked at.
            return false;
        }
        let Some(file) = file else {
            // Deleted in the work tree.
            return true;
        };
        let Some(mode) = mode_of(file.kind) else {
            // Not captured (or a directory now): what is there is not
            // known to differ.
            return matches!(file.kind, EntryKind::Tree);
        };
        let git_mode = if e.mode & 0o170000 == 0o120000 {
            0o120000
        } else if e.mode & 0o111 != 0 {
            0o100755
        } else {
            0o100644
        };
        if mode != git_mode {
            return true;
        }
        // Git's own quick check: the size and mtime it recorded, older than
        // the index file itself (else the file may have changed in the same
        // tick).
        let entry_mtime = e.mtime.0 as i128 * 1_000_000_000 + e.mtime.1 as i128;
        if let Some(c) = self.stat_cache.get(path) {
            let same_mtime = c.stat.mtime_ns == entry_mtime
                || (e.mtime.1 == 0
                    && c.stat.mtime_ns.div_euclid(1_000_000_000) == e.mtime.0 as i128);
            if c.entry.id == file.id
                && c.stat.size as u32 == e.size
                && same_mtime
                && entry_mtime < self.index_mtime_ns
            {
                return false;
            }
        }
        if self.hashed + file.size > MAX_HASHED_BYTES {
            self.unknown = true;
            return false;
        }
        self.hashed += file.size;
        match self.store.get(&file.id) {
            Ok(content) => blob_id(&content, e.oid.len())[..] != e.oid[..],
            Err(_) => {
                self.unknown = true;
                false
            }
        }
    }
}

impl IndexCache {
    /// The index as it is now, from `cache` when `.git/index` did not
    /// change; `None` when there is no index that parses. Its entries come
    /// from `index`, the parse the working copy's scans share.
    pub(super) fn refresh(
        cache: Option<IndexCache>,
        git_dir: &Path,
        index: &mut GitIndex,
    ) -> Option<IndexCache> {
        let id = super::git_index::index_identity(git_dir)?;
        if let Some(c) = &cache {
            if c.identity == id {
                return cache;
            }
        }
        // Said every time a checkpoint finds it so (only the reading and
        // parsing are not repeated until the index changes).
        let entries = match index.entries(git_dir, id) {
            Ok(e) => e,
            Err(NoIndex::Unreadable) => return None,
            Err(NoIndex::TooLarge) => {
                tracing::warn!("{}", git::TOO_LARGE);
                return None;
            }
            Err(NoIndex::Unparsable(why)) => {
                tracing::warn!(%why, "could not parse the git index; no git index recorded");
                return None;
            }
        };
        let plain = entries.windows(2).all(|w| w[0].path <= w[1].path)
            && entries.iter().all(|e| is_plain(&e.path));
        let dirty = match &cache {
            Some(old) if plain && old.plain => old
                .dirty
                .as_ref()
                .map(|t| carry_over(t, &old.entries, &entries)),
            _ => None,
        };
        Some(IndexCache {
            identity: id,
            entries,
            plain,
            mtime_ns: id.1,
            listing: None,
            dirty,
        })
    }

    /// The stored listing (stored now when it is not yet, or a gc ran
    /// since).
    pub(super) fn listing(&mut self, store: &Store) -> Result<ObjectId, StoreError> {
        let generation = store.validated_generation();
        if let Some((id, at)) = self.listing {
            if at == generation {
                return Ok(id);
            }
        }
        let id = store_listing(store, &self.entries)?;
        self.listing = Some((id, generation));
        Ok(id)
    }

    /// Whether the work tree `tree` (its files `files`) differs from the
    /// index. `changed`: when `tree` is `base` changed at these paths, and
    /// the answer for `base` is known, only they are looked at again.
    pub(super) fn dirty(
        &mut self,
        store: &Store,
        stat_cache: &StatCache,
        tree: ObjectId,
        files: &mut dyn FnMut() -> Option<FlatTree>,
        changed: Option<ChangedPaths<'_>>,
    ) -> Option<bool> {
        let mut checker = Checker {
            store,
            stat_cache,
            index_mtime_ns: self.mtime_ns,
            hashed: 0,
            unknown: false,
        };
        let entries = self.entries.clone();
        // Only a change from file to file can be looked at alone: a path
        // that became a directory or was not captured changes what the
        // paths below it hold.
        let incremental = changed.filter(|(_, changes)| {
            self.plain
                && changes
                    .iter()
                    .all(|(_, new)| new.as_ref().is_none_or(|e| mode_of(e.kind).is_some()))
        });
        let track = match (self.dirty.take(), incremental) {
            (Some(mut track), Some((base, changes))) if track.tree == base && !track.unknown => {
                for (path, new) in changes {
                    let from = entries.partition_point(|e| e.path.as_slice() < path.as_bytes());
                    for (i, e) in entries.iter().enumerate().skip(from) {
                        if e.path != path.as_bytes() {
                            break;
                        }
                        if checker.differs(e, path, new.as_ref()) {
                            track.mismatched.insert(i);
                        } else {
                            track.mismatched.remove(&i);
                        }
                    }
                }
                let pending = std::mem::take(&mut track.pending);
                if !pending.is_empty() {
                    let files = files()?;
                    for i in pending {
                        let path = path_of(&entries[i]);
                        if checker.differs(&entries[i], &path, files.get(&*path)) {
                            track.mismatched.insert(i);
                        } else {
                            track.mismatched.remove(&i);
                        }
                    }
                }
                track.tree = tree;
                track.unknown = checker.unknown;
                track
            }
            _ => {
                let files = files()?;
                let mut mismatched = BTreeSet::new();
                for (i, e) in entries.iter().enumerate() {
                    let path = path_of(e);
                    if checker.differs(e, &path, files.get(&*path)) {
                        mismatched.insert(i);
                    }
                }
                DirtyTrack {
                    tree,
                    mismatched,
                    pending: Vec::new(),
                    unknown: checker.unknown,
                }
            }
        };
        let answer = (!track.unknown).then_some(!track.mismatched.is_empty());
        self.dirty = Some(track);
        answer
    }
}

/// What `track` found for the entries of `old`, for those of `new`: the
/// same entries keep their answer, the others are pending. Both sorted by
/// path (then stage, as git keeps them).
fn carry_over(track: &DirtyTrack, old: &[IndexEntry], new: &[IndexEntry]) -> DirtyTrack {
    let mut mismatched = BTreeSet::new();
    let mut pending = Vec::new();
    let mut j = 0usize;
    for (i, e) in new.iter().enumerate() {
        while j < old.len() && (old[j].path.as_slice(), old[j].stage) < (e.path.as_slice(), e.stage)
        {
            j += 1;
        }
        match old.get(j) {
            Some(o) if same_entry(o, e) && track.pending.binary_search(&j).is_err() => {
                if track.mismatched.contains(&j) {
                    mismatched.insert(i);
                }
            }
            _ => pending.push(i),
        }
    }
    DirtyTrack {
        tree: track.tree,
        mismatched,
        pending,
        unknown: track.unknown,
    }
}

/// Entries of `from` and `to` that differ, by path and stage: what
/// `git update-index --index-info` needs to turn an index holding `from`
/// into one holding `to` (mode 0 removes a path).
pub fn index_changes(from: &[ListedEntry], to: &[ListedEntry]) -> Vec<ListedEntry> {
    let key = |e: &ListedEntry| (e.path.clone(), e.stage);
    let from_map: BTreeMap<(Vec<u8>, u8), &ListedEntry> =
        from.iter().map(|e| (key(e), e)).collect();
    let to_map: BTreeMap<(Vec<u8>, u8), &ListedEntry> = to.iter().map(|e| (key(e), e)).collect();
    let mut out = Vec::new();
    for (k, e) in &from_map {
        if !to_map.contains_key(k) {
            out.push(ListedEntry {
                path: e.path.clone(),
                mode: 0,
                oid: "0".repeat(e.oid.len()),
                stage: e.stage,
            });
        }
    }
    for (k, e) in &to_map {
        if from_map
            .get(k)
            .is_none_or(|f| f.mode != e.mode || f.oid != e.oid)
        {
            out.push((*e).clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, oid: u8) -> IndexEntry {
        IndexEntry {
            path: path.as_bytes().to_vec(),
            mode: 0o100644,
            oid: git::Oid::new(&[oid; 20]),
            stage: 0,
            size: 1,
            mtime: (1, 0),
            special: false,
            skip_worktree: false,
        }
    }

    #[test]
    fn a_listing_reads_back_as_stored_and_shares_unchanged_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), false).unwrap();
        let mut entries: Vec<IndexEntry> = (0..2000)
            .map(|i| entry(&format!("dir{}/f{i:05}", i % 7), (i % 251) as u8))
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let id = store_listing(&store, &entries).unwrap();
        let back = read_listing(&store, &id).unwrap();
        assert_eq!(back, entries.iter().map(listed).collect::<Vec<_>>());
        // One entry changed: one chunk differs, the others are the same objects.
        let before = store.get_tree(&id).unwrap();
        entries[1000].oid = git::Oid::new(&[0xee; 20]);
        let id2 = store_listing(&store, &entries).unwrap();
        let after = store.get_tree(&id2).unwrap();
        let differ = before
            .entries
            .iter()
            .filter(|(name, e)| after.entries.get(*name) != Some(e))
            .count();
        assert!(before.entries.len() > 10, "{}", before.entries.len());
        assert_eq!(differ, 1);
    }

    /// A new index keeps what was found for the entries it did not change,
    /// under their new positions; changed and added ones are looked at again.
    #[test]
    fn a_new_index_carries_the_answers_of_unchanged_entries() {
        let old = vec![entry("a", 1), entry("b", 2), entry("c", 3), entry("d", 4)];
        let track = DirtyTrack {
            tree: ObjectId::of(b"t"),
            mismatched: BTreeSet::from([1, 3]),
            pending: vec![2],
            unknown: false,
        };
        // "a" removed, "b" kept (mismatched), "bb" added, "c" kept but was
        // pending, "d" staged anew.
        let new = vec![entry("b", 2), entry("bb", 9), entry("c", 3), entry("d", 5)];
        let carried = carry_over(&track, &old, &new);
        assert_eq!(carried.mismatched, BTreeSet::from([0]));
        assert_eq!(carried.pending, vec![1, 2, 3]);
        assert_eq!(carried.tree, track.tree);
    }

    #[test]
    fn index_changes_set_and_remove() {
        let l = |p: &str, o: char| ListedEntry {
            path: p.as_bytes().to_vec(),
            mode: 0o100644,
            oid: o.to_string().repeat(40),
            stage: 0,
        };
        let from = vec![l("a", '1'), l("b", '2'), l("c", '3')];
        let to = vec![l("a", '1'), l("b", '4'), l("d", '5')];
        let mut out = Vec::new();
        for e in index_changes(&from, &to) {
            e.index_info(&mut out);
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "0 {} 0\tc\0100644 {} 0\tb\0100644 {} 0\td\0",
                "0".repeat(40),
                "4".repeat(40),
                "5".repeat(40)
            )
        );
    }

    #[test]
    fn records_that_are_not_ours_do_not_parse() {
        assert!(parse_record(b"100644 zz 0\tp").is_none());
        assert!(parse_record(b"100644 --option------------------------------ 0\tp").is_none());
        assert!(parse_record(b"no tab").is_none());
        let oid = "a".repeat(40);
        assert!(parse_record(format!("100644 {oid} 9\tp").as_bytes()).is_none());
        assert!(parse_record(format!("100644 {oid} 0\tp").as_bytes()).is_some());
    }

    #[test]
    fn blob_ids_are_gits() {
        // `printf hello | git hash-object --stdin`
        assert_eq!(
            hex(&blob_id(b"hello", 20)),
            "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"
        );
    }
}
