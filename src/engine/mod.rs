//! The engine: one open session of one project. It owns the store, the
//! session log and the working-copy state, and implements every method's
//! semantics on top of them. Handlers only translate to and from the wire.

mod entries;
mod error;
mod events;
mod journal;
mod line_diff;
mod open;
mod queries;
mod restore;
mod rollback;
mod snapshot;
mod working;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use error::{EngineError, Result};
pub use events::{EngineEvent, EventSink};
pub use journal::InterruptedRestore;
pub use open::{default_store_dir, rewind_home, EngineConfig};

use crate::repo_path::RepoPath;
use crate::session::{Entry, SessionLog};
use crate::store::{flatten, update_tree, ObjectId, Store, TreeEntry};
use crate::working_copy::{ScanOptions, StatCache};

pub use crate::store::FlatTree;

/// How many flattened trees the engine keeps. They share structure (each
/// derived from the last), so this bounds lookups, not memory.
const FLAT_CACHE_TREES: usize = 16;

pub struct Engine {
    root: PathBuf,
    store: Store,
    log: SessionLog,
    scan_options: ScanOptions,
    stat_cache: StatCache,
    stat_cache_path: PathBuf,
    stat_cache_saved: std::time::Instant,
    staged: BTreeSet<String>,
    /// Directory listings the scans remember (small ignored files).
    dir_listings: crate::working_copy::DirListings,
    /// Flattened trees recently used (tree id -> files), most recent
    /// last, so consecutive snapshots and queries do not re-read every tree
    /// object.
    flat_cache: VecDeque<(ObjectId, FlatTree)>,
    /// Where notifications go (`files_changed`, `progress`).
    events: Option<EventSink>,
    /// The paths the user's git index tracks, kept while `.git/index` is
    /// unchanged (size, mtime, inode), so a scan does not re-parse it.
    git_index: Option<(IndexIdentity, Arc<Vec<String>>)>,
    /// The tree of the last scan and its files: what the watcher's changes
    /// are relative to.
    last_scan: Option<working::LastScan>,
    /// The capture rules outside the tree as of the last full scan.
    rules_seen: Option<working::RulesFingerprint>,
    /// Tells a snapshot which paths changed, so it can skip the walk.
    #[cfg(target_os = "linux")]
    watcher: Option<crate::working_copy::watch::Watcher>,
    fsync: bool,
}

/// Size, mtime (ns) and inode of `.git/index`: git rewrites it by rename,
/// so any change shows here.
type IndexIdentity = (u64, i128, u64);

impl Drop for Engine {
    fn drop(&mut self) {
        // Scans between periodic saves are kept for the next start.
        self.save_stat_cache();
    }
}

/// A point in history a query compares: an entry's checkpoint, a tree
/// named by hash, or the live working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Point {
    Entry(String),
    Tree(ObjectId),
    Working,
}

pub const WORKING: &str = "@working";

impl Engine {
    pub fn project_root(&self) -> &Path {
        &self.root
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn session_file(&self) -> &Path {
        self.log.path()
    }

    pub fn log(&self) -> &SessionLog {
        &self.log
    }

    fn emit(&self, event: EngineEvent) {
        if let Some(sink) = &self.events {
            sink(event);
        }
    }

    /// The tree recorded by the checkpoint at `id` (PROTOCOL "checkpoint at
    /// an entry"), with the entry that recorded it.
    fn checkpoint_tree(&self, id: &str) -> Result<Option<(&Entry, ObjectId)>> {
        if !self.log.index().contains(id) {
            return Err(EngineError::UnknownEntry(id.to_string()));
        }
        match self.log.index().checkpoint_at(id) {
            Some(cp) => Ok(Some((cp, tree_of(cp)?))),
            None => Ok(None),
        }
    }

    /// [`git::tracked_paths`], cached by the index file's identity.
    fn tracked_paths(&mut self) -> Arc<Vec<String>> {
        use std::os::unix::fs::MetadataExt;
        let key = crate::working_copy::git::git_dir(&self.root)
            .and_then(|d| std::fs::metadata(d.join("index")).ok())
            .map(|m| {
                (
                    m.size(),
                    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
                    m.ino(),
                )
            });
        let Some(key) = key else {
            self.git_index = None;
            return Arc::new(Vec::new());
        };
        if let Some((k, paths)) = &self.git_index {
            if *k == key {
                return paths.clone();
            }
        }
        let paths = Arc::new(crate::working_copy::git::tracked_paths(&self.root));
        self.git_index = Some((key, paths.clone()));
        paths
    }

    /// A parent a host named (it must exist), else the leaf.
    fn parent_or_leaf(&self, parent: Option<String>) -> Result<Option<String>> {
        match parent {
            Some(id) if !self.log.index().contains(&id) => Err(EngineError::UnknownEntry(id)),
            Some(id) => Ok(Some(id)),
            None => Ok(self.leaf_id()),
        }
    }

    /// The tree of the checkpoint at the leaf (None before the baseline).
    fn leaf_checkpoint_tree(&self) -> Result<Option<ObjectId>> {
        match self.leaf_id() {
            Some(id) => Ok(self.checkpoint_tree(&id)?.map(|(_, t)| t)),
            None => Ok(None),
        }
    }

    fn leaf_id(&self) -> Option<String> {
        self.log.index().leaf().map(|e| e.id.clone())
    }

    fn baseline(&self) -> Option<&Entry> {
        self.log.index().first_snapshot()
    }

    /// The recorded state: the tree the sidecar last observed or wrote.
    fn recorded_tree(&self) -> Result<Option<ObjectId>> {
        match self.log.index().latest_working_tree() {
            Some(h) => Ok(Some(parse_tree_hash(h)?)),
            None => Ok(None),
        }
    }

    /// The files of `tree` (none for `None`). A copy is O(1).
    fn flat(&mut self, tree: Option<ObjectId>) -> Result<FlatTree> {
        let Some(tree) = tree else {
            return Ok(FlatTree::new());
        };
        if let Some(f) = self.cached_flat(&tree) {
            return Ok(f);
        }
        let flat = flatten(&self.store, &tree)?;
        self.remember_flat(tree, flat.clone());
        Ok(flat)
    }

    /// The cached files of `tree`, if any (made the most recent).
    fn cached_flat(&mut self, tree: &ObjectId) -> Option<FlatTree> {
        let at = self.flat_cache.iter().position(|(t, _)| t == tree)?;
        let hit = self.flat_cache.remove(at)?;
        let flat = hit.1.clone();
        self.flat_cache.push_back(hit);
        Some(flat)
    }

    /// `base` (with its files) changed by `changes` (path → new entry, or
    /// `None` for a deletion): the new tree, written by rewriting only the
    /// directories on the changed paths, and its files derived from the
    /// base's without copying them. Remembered for the next lookup.
    fn derive_tree(
        &mut self,
        base: ObjectId,
        mut files: FlatTree,
        changes: &BTreeMap<String, Option<TreeEntry>>,
    ) -> Result<(ObjectId, FlatTree)> {
        if changes.is_empty() {
            return Ok((base, files));
        }
        let tree = update_tree(&self.store, &base, changes)?;
        for (path, entry) in changes {
            match entry {
                Some(e) => files.insert(path.clone(), *e),
                None => files.remove(path),
            };
        }
        self.remember_flat(tree, files.clone());
        Ok((tree, files))
    }

    fn remember_flat(&mut self, tree: ObjectId, flat: FlatTree) {
        self.flat_cache.retain(|(t, _)| *t != tree);
        if self.flat_cache.len() >= FLAT_CACHE_TREES {
            self.flat_cache.pop_front();
        }
        self.flat_cache.push_back((tree, flat));
    }
}

/// The tree a tree-recording entry recorded.
fn tree_of(e: &Entry) -> Result<ObjectId> {
    let h = e
        .recorded_tree()
        .ok_or_else(|| EngineError::InvalidParams(format!("entry {} records no tree", e.id)))?;
    parse_tree_hash(h)
}

fn parse_tree_hash(h: &str) -> Result<ObjectId> {
    ObjectId::from_hex(h).map_err(|_| EngineError::UnknownTree(h.to_string()))
}

/// A path a host names, validated at the edge (docs/architecture.md rule 7):
/// a clean project path, below no parent that resolves outside `root`.
fn parse_path(root: &Path, raw: &str) -> Result<RepoPath> {
    let path = RepoPath::parse(raw)?;
    path.check_parents_inside(root)?;
    Ok(path)
}

/// Every path of a host's list, as [`parse_path`]; the first bad one is
/// the error.
fn parse_paths(root: &Path, raw: &[String]) -> Result<Vec<RepoPath>> {
    raw.iter().map(|p| parse_path(root, p)).collect()
}

/// Turn index of a tree-recording entry (unrevert-points carry the turn of
/// the latest step-snapshot above them).
fn turn_of(e: &Entry) -> u64 {
    e.turn_index()
}

/// The kind of a tree-recording entry ("baseline", "turn", ..., or the
/// operation of an unrevert-point).
fn kind_of(e: &Entry) -> String {
    e.record_kind().map(str::to_string).unwrap_or_else(|| {
        e.custom_type
            .clone()
            .unwrap_or_else(|| e.entry_type.clone())
    })
}

/// The paths an entry's recorded diff names, with their status.
fn diff_of(e: &Entry) -> Vec<(String, crate::protocol::FileStatus)> {
    use crate::protocol::FileStatus;
    let Some(diff) = e.diff() else {
        return Vec::new();
    };
    let with = |paths: Vec<String>, status: FileStatus| paths.into_iter().map(move |p| (p, status));
    with(diff.added, FileStatus::Added)
        .chain(with(diff.modified, FileStatus::Modified))
        .chain(with(diff.deleted, FileStatus::Deleted))
        .collect()
}

/// An entry's label: the latest `label` entry naming it, else the label a
/// snapshot was taken with (or a host's entry carries in its `data`).
fn label_for(index: &crate::session::SessionIndex, e: &Entry) -> Option<String> {
    index.label_of(&e.id).map(|(l, _)| l).or_else(|| {
        if e.is_rewind_record() {
            e.snapshot_label().map(str::to_string)
        } else {
            e.data()
                .and_then(|d| d.get("label"))
                .and_then(|l| l.as_str())
                .map(str::to_string)
        }
    })
}

#[cfg(test)]
mod tests;
