//! The engine: one open session of one project. It owns the store, the
//! session log and the [`WorkingCopy`], and implements every method's
//! semantics on top of them: which tree to capture or restore, the journal,
//! the unrevert-point, what is recorded. Front ends only translate to and
//! from their own shapes.
//!
//! This file is the engine's door: every public method is listed once in
//! the `impl Engine` block below, a short delegate to the module that owns
//! it. The modules follow [`api`]'s areas: `open.rs` (open), `record/`
//! (snapshots, host entries, labels, staging), `query/` (read-only
//! questions: changed files, diffs, history, status, blame), `rollback/`
//! (everything that writes the project: the restore core, navigation, undo,
//! approve/reset, revert, hunks, the journal); gc and verify own their own
//! modules outside the engine (`crate::gc`, `crate::verify`).

pub mod api;
mod error;
mod events;
mod open;
mod query;
mod record;
mod rollback;

use std::path::Path;

use api::*;
pub use api::{InterruptedRestore, Point};
pub use error::{EngineError, Result};
pub use events::{EngineEvent, EventSink};
pub use open::{default_store_dir, EngineConfig, ResumeMode, Warm};

use crate::repo_path::RepoPath;
use crate::session::records::Approval;
use crate::session::{Entry, EntryId, SessionLog};
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
    blame_cache: query::blame::BlameCache,
    /// Other sessions of this project let go of by a long-lived process
    /// (see [`Warm`]), handed on when this engine is.
    parked_logs: Vec<crate::session::ParkedLog>,
    fsync: bool,
}

/// The door: every public method of the engine, once.
impl Engine {
    // ---- open (docs/protocol.md "initialize"): engine/open.rs
    /// Open (or start) the session `config` names, locked for writing: the
    /// baseline of a new one, recovery and the `outside` snapshot of a
    /// resumed one.
    pub fn open(config: EngineConfig) -> Result<(Engine, Opened)> {
        Engine::open_with(config, None, &mut None)
    }

    /// [`Engine::open`], taking what `warm` keeps when it serves the same
    /// project and store (see [`Warm`]); on failure `warm` may be left. It
    /// does not describe the session (no [`Opened`]: summing the baseline
    /// would cost what the warmth saves).
    pub fn open_warm(config: EngineConfig, warm: &mut Option<Warm>) -> Result<Engine> {
        Engine::open_quietly(config, warm)
    }

    /// Let go of the session (its lock) and keep the rest warm for the next
    /// open of a session of this project.
    pub fn into_warm(self) -> Warm {
        self.park()
    }

    /// [`Engine::open`], with a sink for the engine's events.
    pub fn open_with_events(
        config: EngineConfig,
        events: Option<EventSink>,
    ) -> Result<(Engine, Opened)> {
        Engine::open_with(config, events, &mut None)
    }

    /// Open an existing session to read it: no lock, nothing appended or
    /// recovered.
    pub fn open_read_only(config: EngineConfig) -> Result<Engine> {
        Engine::open_reading(config)
    }

    pub fn project_root(&self) -> &Path {
        self.working_copy.root()
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn session_file(&self) -> &Path {
        self.log.path()
    }

    /// How many times this engine has scanned the whole project (the first
    /// snapshot, and whenever the watcher could not vouch for a change).
    pub fn full_scans(&self) -> u64 {
        self.working_copy.scan_counts().full_total()
    }

    /// The session file as read (its records, for tools that measure them:
    /// the benches). Front ends ask the methods above instead.
    pub fn log(&self) -> &SessionLog {
        &self.log
    }

    /// The session's leaf entry, `None` for an empty session.
    pub fn leaf(&self) -> Option<&EntryId> {
        self.log.index().leaf().map(|e| &e.id)
    }

    /// Whether the session has an entry with this id.
    pub fn has_entry(&self, id: &EntryId) -> bool {
        self.log.index().contains(id)
    }

    // ---- record (docs/protocol.md "snapshot", "append_entry", "label", "stage_files", "get_tree"): engine/record/
    /// The `snapshot` method.
    pub fn snapshot(&mut self, p: SnapshotParams) -> Result<SnapshotResult> {
        record::snapshot::snapshot(self, p)
    }

    /// [`Engine::snapshot`] that also records where an agent's conversation
    /// stood (a hook's checkpoint): the capture's appended bytes are stored
    /// as the next piece of the conversation's chain, and the record's
    /// `conversation` names it (docs/format.md "The conversation at a
    /// checkpoint"). Nothing of it is stored when no checkpoint is appended.
    pub fn snapshot_with_conversation(
        &mut self,
        p: SnapshotParams,
        conversation: Option<ConversationCapture>,
    ) -> Result<SnapshotResult> {
        record::snapshot::snapshot_with_conversation(self, p, conversation)
    }

    /// The conversation the latest checkpoint of this agent session
    /// recorded, wherever it is in the session (a hook continues its chain).
    pub fn last_conversation(&self, agent: &str, session_id: &str) -> Option<ConversationState> {
        record::conversation::last_conversation(self, agent, session_id)
    }

    /// The transcript's bytes a recorded conversation holds, read back from
    /// the store.
    pub fn conversation_bytes(&self, state: &ConversationState) -> Result<Vec<u8>> {
        record::conversation::conversation_bytes(self, state)
    }

    /// `append_entry`: a host's own entry (a message, a custom record) at the
    /// leaf, or below `parentId`; idempotent by `entryId`.
    pub fn append_entry(&mut self, p: AppendEntryParams) -> Result<AppendEntryResult> {
        record::entries::append_entry(self, p)
    }

    /// `label`: name an entry (a later label of the same entry wins).
    pub fn label(&mut self, p: LabelParams) -> Result<EntryIdResult> {
        record::entries::label(self, p)
    }

    /// A person's checkpoint (`rewind checkpoint`, MCP's `checkpoint`, the
    /// page's button): a manual snapshot with a label and note, keeping the
    /// turn number above it, refused past `max_manual` per session. Not a
    /// protocol method (the sidecar's `snapshot` is the host's).
    pub fn checkpoint(&mut self, p: CheckpointParams) -> Result<CheckpointResult> {
        record::annotate::checkpoint(self, p)
    }

    /// A person's label and note on a checkpoint, changing only the text
    /// asked for (a `label` entry holding the rest as it was).
    pub fn annotate(&mut self, p: AnnotateParams) -> Result<AnnotateResult> {
        record::annotate::annotate(self, p)
    }

    /// `stage_files`: paths captured from now on even when ignored.
    pub fn stage_files(&mut self, p: StageFilesParams) -> Result<StageFilesResult> {
        record::entries::stage_files(self, p)
    }

    /// `get_tree`: every entry of the session as a tree, and the leaf.
    pub fn get_tree(&self) -> Result<GetTreeResult> {
        record::entries::get_tree(self)
    }

    // ---- query (read-only: nothing appended, the leaf stays): engine/query/
    /// The tree the working directory holds now (scanned, recording
    /// nothing): what `rewind watch` compares to see whether writes have
    /// settled. With the watcher, proportional to what changed.
    pub fn working_tree_hash(&mut self) -> Result<ObjectId> {
        query::files::working_tree_hash(self)
    }

    /// `get_modified_files`: the files that differ between two points, each with
    /// the earliest entry in the range that changed it.
    pub fn get_modified_files(&mut self, p: RangeParams) -> Result<ModifiedFilesResult> {
        query::files::get_modified_files(self, p)
    }

    /// `get_file_diff`: one file between two points: contents, hunks, unified diff.
    pub fn get_file_diff(&mut self, p: FileDiffParams) -> Result<Option<FileDiff>> {
        query::files::get_file_diff(self, p)
    }

    /// A range as a git patch (`git apply` takes it): what `rewind diff`
    /// prints and the page copies. Not a protocol method.
    pub fn get_patch(&mut self, p: PatchParams) -> Result<PatchResult> {
        query::patch::get_patch(self, p)
    }

    /// A notebook (`.ipynb`) between two points, cell by cell; `None` when
    /// the path is not a notebook or an end does not read as one (then the
    /// text diff is the one to show). Not a protocol method.
    pub fn get_notebook_diff(&mut self, p: FileDiffParams) -> Result<Option<NotebookDiff>> {
        query::notebook::get_notebook_diff(self, p)
    }

    /// `get_file_history`: every checkpoint whose diff names one file.
    pub fn get_file_history(&mut self, p: FileHistoryParams) -> Result<FileHistoryResult> {
        query::files::get_file_history(self, p)
    }

    /// `list_checkpoints`: the tree-recording entries, on the path or all.
    pub fn list_checkpoints(&self, p: ListCheckpointsParams) -> Result<ListCheckpointsResult> {
        query::files::list_checkpoints(self, p)
    }

    /// `get_status`: what changed on disk since the last approval.
    pub fn get_status(&mut self) -> Result<StatusResult> {
        query::files::get_status(self)
    }

    /// The paths the checkpoint at `at` found and did not capture, with
    /// why: a restore to it leaves them as they are (rule 14).
    pub fn left_out(&mut self, at: &EntryId) -> Result<Vec<Uncaptured>> {
        query::left_out::left_out(self, at)
    }

    /// `stats`: the store's size and the session's counts.
    pub fn stats(&self) -> Result<StatsResult> {
        query::files::stats(self)
    }

    /// `get_file_blame`: the checkpoint that introduced each line of a file.
    pub fn get_file_blame(&mut self, p: FileBlameParams) -> Result<FileBlameResult> {
        query::blame::get_file_blame(self, p)
    }

    /// What a conversation restore to the checkpoint at `id` cuts: the
    /// conversation recorded with it, or for a checkpoint inside a turn with
    /// that turn's prompt (a conversation is cut between turns), or for one
    /// of rewind's own with the agent's checkpoint above it.
    pub fn conversation_at(&self, id: &EntryId) -> Result<ConversationAt> {
        query::conversation::conversation_at(self, id)
    }

    // ---- rollback (writes the project: plan, snapshot before mutate, journal, unrevert-point, files): engine/rollback/
    /// `restore_files`: put files (or hunks) back as a checkpoint holds them.
    pub fn restore_files(&mut self, p: RestoreFilesParams) -> Result<RestoreResult> {
        rollback::operations::restore_files(self, p)
    }

    /// `navigate_tree`: move the leaf to another entry and the files with it.
    pub fn navigate_tree(&mut self, p: NavigateTreeParams) -> Result<NavigateTreeResult> {
        rollback::operations::navigate_tree(self, p)
    }

    /// `undo`: put back what an unrevert-point replaced.
    pub fn undo(&mut self, p: UndoParams) -> Result<RestoreResult> {
        rollback::operations::undo(self, p)
    }

    /// `approve`: record the disk as approved (what `reset` goes back to).
    pub fn approve(&mut self, p: ApproveParams) -> Result<ApproveResult> {
        rollback::operations::approve(self, p)
    }

    /// `reset`: restore the last approved state.
    pub fn reset(&mut self, p: ResetParams) -> Result<ResetResult> {
        rollback::operations::reset(self, p)
    }

    /// `revert`: take one checkpoint's (or a range's) changes out, keep the
    /// later ones (a three-way merge per file).
    pub fn revert(&mut self, p: RevertParams) -> Result<RevertResult> {
        rollback::revert::revert(self, p)
    }

    // ---- maintenance: crate::gc and crate::verify (they need no engine)
    /// `gc`: prune sessions by the keep rules, delete unreferenced objects.
    pub fn gc(&self, p: GcParams) -> Result<GcResult> {
        Ok(crate::gc::run(
            &self.store,
            &p,
            &crate::gc::GcOptions::default(),
        )?)
    }

    /// `verify`: the whole store, read and hashed.
    pub fn verify(&self) -> Result<VerifyResult> {
        Ok(crate::verify::run(&self.store)?)
    }
}

impl Engine {
    fn emit(&self, event: EngineEvent) {
        if let Some(sink) = &self.events {
            sink(event);
        }
    }

    /// The tree recorded by the checkpoint at `id` (docs/protocol.md "checkpoint at
    /// an entry"), with the entry that recorded it.
    fn checkpoint_tree(&self, id: &EntryId) -> Result<Option<(&Entry, ObjectId)>> {
        if !self.log.index().contains(id) {
            return Err(EngineError::UnknownEntry(id.clone()));
        }
        match self.log.index().checkpoint_at(id) {
            Some(cp) => Ok(Some((cp, tree_of(cp)?))),
            None => Ok(None),
        }
    }

    /// A parent a host named (it must exist), else the leaf.
    fn parent_or_leaf(&self, parent: Option<EntryId>) -> Result<Option<EntryId>> {
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

    fn leaf_id(&self) -> Option<EntryId> {
        self.log.index().leaf().map(|e| e.id.clone())
    }

    /// The leaf, for the operations that start from it. A session an engine
    /// writes has one (its baseline at least); only an empty session read
    /// as it is has none.
    fn leaf_or_error(&self) -> Result<EntryId> {
        self.leaf_id()
            .ok_or_else(|| EngineError::InvalidParams("the session has no entries".into()))
    }

    fn baseline(&self) -> Option<&Entry> {
        self.log.index().first_snapshot()
    }

    /// The recorded state: the tree the sidecar last observed or wrote.
    fn recorded_tree(&self) -> Option<ObjectId> {
        self.log.index().latest_working_tree()
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
            recorded: self.recorded_tree(),
            store: &self.store,
            trees: &mut self.flat_cache,
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
    e.recorded_tree()
        .ok_or_else(|| EngineError::InvalidParams(format!("entry {} records no tree", e.id)))
}

/// The tree an approval approved. An approval without one (written by hand, or a record
/// that does not read) names no tree: the error an empty hash always gave.
fn approved_tree(a: &Entry) -> Result<ObjectId> {
    a.record::<Approval>()
        .and_then(|a| a.approved_tree_hash)
        .ok_or_else(|| EngineError::UnknownTree(String::new()))
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

/// The kind of a tree-recording entry (its record's, else the entry's
/// custom type or type).
fn kind_of(e: &Entry) -> CheckpointKind {
    CheckpointKind::parse(
        e.record_kind()
            .or(e.custom_type.as_deref())
            .unwrap_or(&e.entry_type),
    )
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
/// snapshot was taken with (or a host's entry carries in its `data`), else
/// for a tool's step what it did ("Edit src/app.py": `query/describe.rs`).
fn label_for(index: &crate::session::SessionIndex, e: &Entry, root: &Path) -> Option<String> {
    index
        .annotation_of(&e.id)
        .and_then(|(l, _)| l)
        .or_else(|| {
            if e.is_rewind_record() {
                e.snapshot_label().map(str::to_string)
            } else {
                e.data()
                    .and_then(|d| d.get("label"))
                    .and_then(|l| l.as_str())
                    .map(str::to_string)
            }
        })
        .or_else(|| query::describe::describe(e, root))
}

/// An entry's note: the latest `label` entry naming it decides (its note, or
/// none), else the note a checkpoint was taken with (`rewind checkpoint
/// --note`).
fn note_for(index: &crate::session::SessionIndex, e: &Entry) -> Option<String> {
    match index.annotation_of(&e.id) {
        Some((_, note)) => note,
        None => e.snapshot_note().map(str::to_string),
    }
}

#[cfg(test)]
mod tests;
