//! The engine: one open session of one project. It owns the store, the
//! session log and the [`WorkingCopy`], and implements every method's
//! semantics on top of them: which tree to capture or restore, the journal,
//! the unrevert-point, what is recorded. Handlers only translate to and
//! from the wire.

pub mod api;
mod blame;
mod entries;
mod error;
mod events;
mod hunks;
mod journal;
mod line_diff;
mod merge;
mod open;
mod queries;
mod restore;
mod revert;
mod rollback;
mod snapshot;

use std::path::Path;

pub use api::{InterruptedRestore, Point};
pub use error::{EngineError, Result};
pub use events::{EngineEvent, EventSink};
pub use open::{default_store_dir, EngineConfig, ResumeMode};

use crate::repo_path::RepoPath;
use crate::session::{Entry, SessionLog};
use crate::store::{FlatCache, ObjectId, Store};
use crate::working_copy::{ScanContext, WorkingCopy, WorkingState};

pub use crate::store::FlatTree;

pub struct Engine {
    store: Store,
    log: SessionLog,
    /// The project on disk: root, stat cache, git index, last scan,
    /// watcher, staged set.
    working_copy: WorkingCopy,
    /// Flattened trees recently used, so consecutive snapshots and queries
    /// do not re-read every tree object.
    flat_cache: FlatCache,
    /// Where notifications go (`files_changed`, `progress`).
    events: Option<EventSink>,
    /// Line origins of files blamed before, by file.
    blame_cache: blame::BlameCache,
    fsync: bool,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Scans between periodic saves are kept for the next start.
        self.working_copy.save_stat_cache();
    }
}

impl Engine {
    pub fn project_root(&self) -> &Path {
        self.working_copy.root()
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

    /// The tree recorded by the checkpoint at `id` (docs/protocol.md "checkpoint at
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

    /// Scan the working directory into a stored tree
    /// ([`WorkingCopy::scan`]): `scope` names the only paths a host says may
    /// have changed, `prior` is the parent checkpoint's files. Long scans
    /// report `progress` events.
    fn scan_working(
        &mut self,
        scope: Option<&[RepoPath]>,
        prior: &FlatTree,
    ) -> Result<WorkingState> {
        let events = self.events.clone();
        let report = move |done: u64, total: u64| {
            if let Some(sink) = &events {
                sink(EngineEvent::Progress {
                    operation: "scan".into(),
                    done,
                    total,
                });
            }
        };
        let ctx = ScanContext {
            store: &self.store,
            trees: &mut self.flat_cache,
            recorded: self.log.index().latest_working_tree(),
            progress: Some(&report),
        };
        Ok(self.working_copy.scan(ctx, scope, prior)?)
    }

    /// The files of `tree` (none for `None`). A copy is O(1).
    fn flat(&mut self, tree: Option<ObjectId>) -> Result<FlatTree> {
        Ok(self.flat_cache.files(&self.store, tree)?)
    }
}

/// The tree a tree-recording entry recorded.
fn tree_of(e: &Entry) -> Result<ObjectId> {
    let h = e
        .recorded_tree()
        .ok_or_else(|| EngineError::InvalidParams(format!("entry {} records no tree", e.id)))?;
    parse_tree_hash(h)
}

/// A tree hash a host names; one that does not parse names no tree.
pub(crate) fn parse_tree_hash(h: &str) -> Result<ObjectId> {
    ObjectId::from_hex(h).map_err(|_| EngineError::UnknownTree(h.to_string()))
}

/// A path a host names, checked against the disk (docs/architecture.md
/// rule 7): below no parent that resolves outside `root`. Its syntax (a
/// clean project path) is [`RepoPath`]'s own.
fn parse_path(root: &Path, path: &RepoPath) -> Result<RepoPath> {
    path.check_parents_inside(root)?;
    Ok(path.clone())
}

/// Every path of a host's list, as [`parse_path`]; the first bad one is
/// the error.
fn parse_paths(root: &Path, paths: &[RepoPath]) -> Result<Vec<RepoPath>> {
    paths.iter().map(|p| parse_path(root, p)).collect()
}

/// A path a stored tree or the plan built from one names, as results
/// report it.
fn result_path(path: &str) -> RepoPath {
    RepoPath::from_walk(path.to_string())
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
fn diff_of(e: &Entry) -> Vec<(String, api::FileStatus)> {
    use api::FileStatus;
    let Some(diff) = e.diff() else {
        return Vec::new();
    };
    let with = |paths: Vec<String>, status: FileStatus| paths.into_iter().map(move |p| (p, status));
    with(diff.added, FileStatus::Added)
        .chain(with(diff.modified, FileStatus::Modified))
        .chain(with(diff.deleted, FileStatus::Deleted))
        .chain(with(diff.not_captured, FileStatus::NotCaptured))
        .chain(with(diff.recaptured, FileStatus::Recaptured))
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
