//! Requests and results of the methods that write the project: restore
//! (whole files or hunks), revert, navigate, undo, approve and reset.

use crate::repo_path::RepoPath;
use crate::session::EntryId;
use crate::store::ObjectId;
use crate::working_copy::Uncaptured;

// ------------------------------------------------------------- restore_files

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Leave dirty files as they are and report them (default).
    #[default]
    Skip,
    /// Write dirty files too (they stay listed in `dirty`).
    Overwrite,
    /// Change nothing and fail with 1002 when there is any conflict.
    Abort,
}

#[derive(Debug, Default, Clone)]
pub struct RestoreFilesParams {
    /// Default: the leaf (discard changes since the last checkpoint).
    pub target_entry_id: Option<EntryId>,
    pub tree_hash: Option<ObjectId>,
    /// Only these files (or directories: everything below).
    pub files: Option<Vec<RepoPath>>,
    pub preview: Option<bool>,
    pub on_conflict: Option<OnConflict>,
    /// Take back only some hunks of these files: the hunks of `get_file_diff` from the
    /// restore's target to `@working`. Without `files`, only these files are touched.
    pub hunks: Option<Vec<HunkSelection>>,
    /// Also move git's HEAD and index back to the target checkpoint's, through the
    /// user's `git` (docs/architecture.md rule 6); refused when that cannot be done whole.
    pub git: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct HunkSelection {
    pub path: RepoPath,
    /// The hunks to take back, as `get_file_diff` numbered and hashed them.
    pub hunks: Vec<HunkRef>,
    /// The `contextLines` the diff was asked with (default 3): it decides how changes
    /// group into hunks.
    pub context_lines: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct HunkRef {
    pub index: u32,
    pub hash: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConflictReason {
    /// Changed on disk since the sidecar last recorded it.
    Dirty,
    /// In the way: never captured (ignored, or reported in a snapshot's
    /// `untracked`) but standing where the target has a file. On the wire
    /// `untracked`.
    InTheWay,
    /// Could not be written or removed (permissions, in use).
    Unwritable,
    /// `revert`: later changes touched what the reverted entry changed.
    Merge,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Conflict {
    pub path: RepoPath,
    pub reason: ConflictReason,
}

#[derive(Debug, Default, Clone)]
pub struct RestoreResult {
    pub preview: bool,
    /// Files written (created or overwritten).
    pub restored: Vec<RepoPath>,
    /// Files removed.
    pub deleted: Vec<RepoPath>,
    pub skipped: Vec<RepoPath>,
    /// Paths the target checkpoint held but did not capture, with why: left
    /// as they are (also in `skipped`).
    pub not_captured: Vec<Uncaptured>,
    pub dirty: Vec<RepoPath>,
    pub conflicts: Vec<Conflict>,
    pub unrevert_entry_id: Option<EntryId>,
    pub warnings: Vec<String>,
    /// With `git`: HEAD or the index moved (a preview: would move).
    pub git_moved: bool,
}

// --------------------------------------------------------------------- revert

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RevertOnConflict {
    /// Write nothing if any file conflicts.
    #[default]
    Abort,
    /// Write the files that merge cleanly; leave the others as they are.
    Skip,
    /// Write the clean files, and conflicting text files with conflict markers (as git
    /// does).
    Markers,
}

#[derive(Debug, Clone)]
pub struct RevertParams {
    /// The checkpoint whose changes (against the checkpoint before it) are taken out.
    pub entry_id: EntryId,
    /// The last checkpoint of a range starting at `entryId` (a descendant of it): the
    /// changes of the whole range are taken out.
    pub to_entry_id: Option<EntryId>,
    /// Only these files (or directories: everything below).
    pub files: Option<Vec<RepoPath>>,
    pub preview: Option<bool>,
    pub on_conflict: Option<RevertOnConflict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevertStatus {
    /// Reverts cleanly (or is already as the revert leaves it).
    Clean,
    /// Later changes overlap the reverted ones.
    Conflict,
    /// Left alone: see `reason`.
    Skip,
}

#[derive(Debug, Clone)]
pub struct ConflictHunk {
    /// The lines as they are now.
    pub current: String,
    /// The lines as the reverted entry left them.
    pub reverted: String,
    /// The lines as they were before the reverted entry.
    pub before: String,
}

/// What a revert does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevertAction {
    Write,
    Delete,
    None,
}

impl RevertAction {
    pub fn as_str(self) -> &'static str {
        match self {
            RevertAction::Write => "write",
            RevertAction::Delete => "delete",
            RevertAction::None => "none",
        }
    }
}

#[derive(Debug, Clone)]
pub struct RevertFile {
    pub path: RepoPath,
    pub status: RevertStatus,
    pub action: RevertAction,
    pub reason: Option<String>,
    /// Unified diff from the file now to what the revert writes (with conflict markers
    /// for a conflict); empty when nothing is written or the file is binary.
    pub diff: String,
    pub conflicts: Vec<ConflictHunk>,
}

#[derive(Debug, Clone)]
pub struct RevertResult {
    pub preview: bool,
    pub files: Vec<RevertFile>,
    /// Files written (created or overwritten).
    pub restored: Vec<RepoPath>,
    /// Files removed.
    pub deleted: Vec<RepoPath>,
    /// Files that could not be touched at write time (changed under our feet,
    /// unwritable).
    pub failed: Vec<Conflict>,
    pub unrevert_entry_id: Option<EntryId>,
}

// -------------------------------------------------------------- navigate_tree

#[derive(Debug, Clone)]
pub struct NavigateTreeParams {
    pub target_id: EntryId,
    pub skip_files: Option<bool>,
    pub summarize: Option<bool>,
    pub summary: Option<String>,
    pub label: Option<String>,
    pub preview: Option<bool>,
    pub on_conflict: Option<OnConflict>,
}

#[derive(Debug, Clone)]
pub struct NavigateTreeResult {
    /// The last entry of the chain appended below the target; null for a
    /// preview.
    pub new_leaf_id: Option<EntryId>,
    /// The tip of the branch left (its pre-restore snapshot when one was
    /// taken).
    pub old_leaf_id: EntryId,
    pub restore: Option<RestoreResult>,
    pub summary_entry_id: Option<EntryId>,
}

// ----------------------------------------------------------------------- undo

#[derive(Debug, Default, Clone)]
pub struct UndoParams {
    /// An unrevert-point; default the latest on the current path.
    pub entry_id: Option<EntryId>,
    pub on_conflict: Option<OnConflict>,
    pub preview: Option<bool>,
    /// Also put git's HEAD and index back as the undone restore found them.
    pub git: Option<bool>,
}

// ------------------------------------------------------------ approve / reset

#[derive(Debug, Default, Clone)]
pub struct ApproveParams {
    pub message: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ApproveResult {
    pub approved_entry_id: EntryId,
    pub approved_tree_hash: ObjectId,
    /// Step-snapshots taken since the previous approval (or the session
    /// start), the approve snapshot included.
    pub snapshots_approved: u64,
}

#[derive(Debug, Default, Clone)]
pub struct ResetParams {
    pub on_conflict: Option<OnConflict>,
    pub preview: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct ResetResult {
    /// The tree reset to: the last approval's, else the baseline's.
    pub reset_to: ObjectId,
    pub restore: RestoreResult,
}

// ------------------------------------------------------------------ reasons

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeReason {
    Restore,
    Navigate,
    Undo,
    Reset,
    Revert,
}

impl ChangeReason {
    /// The `kind` an unrevert-point of this operation records
    /// (docs/format.md), and the `operation` of its `progress` events.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeReason::Restore => "restore",
            ChangeReason::Navigate => "navigate",
            ChangeReason::Undo => "undo",
            ChangeReason::Reset => "reset",
            ChangeReason::Revert => "revert",
        }
    }
}
