//! Wire types of the writing methods: restore_files, revert, navigate_tree,
//! undo, approve, reset.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Untracked;

// ------------------------------------------------------------- restore_files

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OnConflict {
    /// Leave dirty files as they are and report them (default).
    #[default]
    Skip,
    /// Write dirty files too (they stay listed in `dirty`).
    Overwrite,
    /// Change nothing and fail with 1002 when there is any conflict.
    Abort,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreFilesParams {
    /// Default: the leaf (discard changes since the last checkpoint).
    pub target_entry_id: Option<String>,
    pub tree_hash: Option<String>,
    /// Only these files (or directories: everything below).
    pub files: Option<Vec<String>>,
    pub preview: Option<bool>,
    pub on_conflict: Option<OnConflict>,
    /// Take back only some hunks of these files: the hunks of `get_file_diff` from the
    /// restore's target to `@working`. Without `files`, only these files are touched.
    pub hunks: Option<Vec<HunkSelection>>,
    /// Also move git's HEAD (`git reset --soft`) and index (`git update-index`) back to
    /// the target checkpoint's, through the user's `git`. Refused (-32602, nothing
    /// written) during a merge, rebase, cherry-pick or revert, on another branch, or when
    /// a recorded commit or staged blob is gone. Default false: `.git` is never written.
    pub git: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HunkSelection {
    pub path: String,
    /// The hunks to take back, as `get_file_diff` numbered and hashed them.
    pub hunks: Vec<HunkRef>,
    /// The `contextLines` the diff was asked with (default 3): it decides how changes
    /// group into hunks.
    pub context_lines: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HunkRef {
    pub index: u32,
    pub hash: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ConflictReason {
    /// Changed on disk since the sidecar last recorded it.
    Dirty,
    /// Never captured (ignored, or reported in a snapshot's `untracked`)
    /// but standing where the target has a file.
    Untracked,
    /// Could not be written or removed (permissions, in use).
    Unwritable,
    /// `revert`: later changes touched what the reverted entry changed.
    Merge,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    pub path: String,
    pub reason: ConflictReason,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreResult {
    pub preview: bool,
    /// Files written (created or overwritten).
    pub restored: Vec<String>,
    /// Files removed.
    pub deleted: Vec<String>,
    pub skipped: Vec<String>,
    /// Paths the target checkpoint held but did not capture, with why: left
    /// as they are (also in `skipped`). Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_captured: Vec<Untracked>,
    pub dirty: Vec<String>,
    pub conflicts: Vec<Conflict>,
    pub unrevert_entry_id: Option<String>,
    pub warnings: Vec<String>,
    /// With `git`: HEAD or the index moved (a preview: would move). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub git_moved: bool,
}

// --------------------------------------------------------------------- revert

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
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

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevertParams {
    /// The checkpoint whose changes (against the checkpoint before it) are taken out.
    pub entry_id: String,
    /// The last checkpoint of a range starting at `entryId` (a descendant of it): the
    /// changes of the whole range are taken out.
    pub to_entry_id: Option<String>,
    /// Only these files (or directories: everything below).
    pub files: Option<Vec<String>>,
    pub preview: Option<bool>,
    pub on_conflict: Option<RevertOnConflict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RevertStatus {
    /// Reverts cleanly (or is already as the revert leaves it).
    Clean,
    /// Later changes overlap the reverted ones.
    Conflict,
    /// Left alone: see `reason`.
    Skip,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictHunk {
    /// The lines as they are now.
    pub current: String,
    /// The lines as the reverted entry left them.
    pub reverted: String,
    /// The lines as they were before the reverted entry.
    pub before: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevertFile {
    pub path: String,
    pub status: RevertStatus,
    /// What the revert does to the file: `write`, `delete` or `none`.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Unified diff from the file now to what the revert writes (with conflict markers
    /// for a conflict); empty when nothing is written or the file is binary.
    pub diff: String,
    pub conflicts: Vec<ConflictHunk>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevertResult {
    pub preview: bool,
    pub files: Vec<RevertFile>,
    /// Files written (created or overwritten).
    pub restored: Vec<String>,
    /// Files removed.
    pub deleted: Vec<String>,
    /// Files that could not be touched at write time (changed under our feet,
    /// unwritable).
    pub failed: Vec<Conflict>,
    pub unrevert_entry_id: Option<String>,
}

// -------------------------------------------------------------- navigate_tree

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NavigateTreeParams {
    pub target_id: String,
    pub skip_files: Option<bool>,
    pub summarize: Option<bool>,
    pub summary: Option<String>,
    pub label: Option<String>,
    pub preview: Option<bool>,
    pub on_conflict: Option<OnConflict>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigateTreeResult {
    /// The last entry of the chain appended below the target; null for a
    /// preview.
    pub new_leaf_id: Option<String>,
    /// The tip of the branch left (its pre-restore snapshot when one was
    /// taken).
    pub old_leaf_id: String,
    pub restore: Option<RestoreResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_entry_id: Option<String>,
}

// ----------------------------------------------------------------------- undo

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndoParams {
    /// An unrevert-point; default the latest on the current path.
    pub entry_id: Option<String>,
    pub on_conflict: Option<OnConflict>,
    pub preview: Option<bool>,
    /// Also put git's HEAD and index back as the undone restore found them (as
    /// `restore_files`' `git`, refused the same way).
    pub git: Option<bool>,
}

// ------------------------------------------------------------ approve / reset

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveParams {
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApproveResult {
    pub approved_entry_id: String,
    pub approved_tree_hash: String,
    /// Step-snapshots taken since the previous approval (or the session
    /// start), the approve snapshot included.
    pub snapshots_approved: u64,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetParams {
    pub on_conflict: Option<OnConflict>,
    pub preview: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResetResult {
    pub reset_to: String,
    pub restore: RestoreResult,
}
