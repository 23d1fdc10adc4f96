//! Wire types of the read methods: list_checkpoints, get_modified_files,
//! get_file_diff, get_file_history, get_file_blame, get_status, stats.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::UntrackedReason;

// ---------------------------------------------------------- list_checkpoints

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    #[default]
    Path,
    All,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListCheckpointsParams {
    pub scope: Option<Scope>,
    /// Case-insensitive substring searched in labels and notes.
    pub query: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInfo {
    pub entry_id: String,
    pub parent_id: Option<String>,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The tool a `tool` checkpoint was taken around (`snapshot`'s
    /// `tool.name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The git branch the project was on when the checkpoint was taken
    /// (absent outside a git repository, on a detached HEAD, or when the
    /// checkpoint did not record it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    pub timestamp: String,
    pub tree_hash: String,
    pub turn_index: u64,
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    /// Paths present but not captured by this checkpoint; absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_captured: u64,
    pub on_current_path: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListCheckpointsResult {
    pub checkpoints: Vec<CheckpointInfo>,
    pub initial_entry_id: String,
}

// -------------------------------------------------------- get_modified_files

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RangeParams {
    /// Entry id or "@working". Default: the baseline.
    pub from_entry_id: Option<String>,
    /// Entry id or "@working". Default: the leaf.
    pub to_entry_id: Option<String>,
    pub from_hash: Option<String>,
    pub to_hash: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    /// Present at the later end but not captured there (`reason` says why):
    /// whether it changed is unknown, and a restore to that end leaves it
    /// alone.
    NotCaptured,
    /// Captured at the later end, present but not captured at the earlier
    /// one (`reason` says why): whether it changed is unknown.
    Recaptured,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModifiedFile {
    pub path: String,
    pub status: FileStatus,
    /// Why one end did not capture it (`notCaptured`, `recaptured`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<UntrackedReason>,
    /// Turn of the earliest tree-recording entry in the range that changed
    /// the file; null when no recorded entry did (e.g. `@working` changes).
    pub turn_index: Option<u64>,
    pub entry_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModifiedFilesResult {
    pub files: Vec<ModifiedFile>,
    pub from_tree_hash: String,
    pub to_tree_hash: String,
}

// ------------------------------------------------------------- get_file_diff

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileDiffParams {
    pub file_path: String,
    pub from_entry_id: Option<String>,
    pub to_entry_id: Option<String>,
    pub from_hash: Option<String>,
    pub to_hash: Option<String>,
    pub context_lines: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ContentEncoding {
    Utf8,
    Base64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    pub path: String,
    pub old_content: Option<String>,
    pub new_content: Option<String>,
    pub old_hash: Option<String>,
    pub new_hash: Option<String>,
    pub unified_diff: String,
    pub additions: u64,
    pub deletions: u64,
    pub is_binary: bool,
    pub is_too_large: bool,
    /// The line diff ran out of its work or time budget, so some changed stretch is shown
    /// as removed and re-added whole: `unifiedDiff` is still a correct patch, but not a
    /// minimal one, and `additions`/`deletions` over-count.
    pub is_approximate: bool,
    /// The old end held the path but did not capture it: there is no old
    /// content, and no diff.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_not_captured: Option<UntrackedReason>,
    /// The new end held the path but did not capture it: there is no new
    /// content, and no diff.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_not_captured: Option<UntrackedReason>,
    pub encoding: ContentEncoding,
    /// The hunks of `unifiedDiff`, in order (empty for binary and too-large files): what a
    /// hunk-level `restore_files` selects, by `index` and `hash`.
    pub hunks: Vec<DiffHunk>,
}

/// One hunk of a unified diff; starts and counts as its `@@` header gives them (1-based;
/// an empty side names the line before it).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffHunk {
    pub index: u32,
    pub old_start: u64,
    pub old_lines: u64,
    pub new_start: u64,
    pub new_lines: u64,
    /// Hash of the hunk's text (header and lines), so that a selection made on a diff
    /// that is no longer current is refused rather than misapplied.
    pub hash: String,
}

// ---------------------------------------------------------- get_file_history

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileHistoryParams {
    pub file_path: String,
    pub scope: Option<Scope>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileVersion {
    pub entry_id: String,
    pub turn_index: u64,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub timestamp: String,
    pub status: FileStatus,
    /// Why this entry's checkpoint (`notCaptured`) or its parent's
    /// (`recaptured`) did not capture the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<UntrackedReason>,
    /// Content hash after this entry; null when deleted or not captured.
    pub hash: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileHistoryResult {
    pub path: String,
    pub versions: Vec<FileVersion>,
}

// ---------------------------------------------------------------- get_status

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusFile {
    pub path: String,
    pub status: FileStatus,
    /// Why one end did not capture it (`notCaptured`, `recaptured`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<UntrackedReason>,
    pub additions: u64,
    pub deletions: u64,
    pub diff: Option<String>,
    pub base_content: Option<String>,
    pub is_binary: bool,
    pub is_too_large: bool,
    /// As in `get_file_diff`: `diff`, `additions` and `deletions` are not minimal.
    pub is_approximate: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusResult {
    pub has_unapproved: bool,
    pub approved_entry_id: Option<String>,
    pub last_approved_at: Option<String>,
    pub changed_files: Vec<StatusFile>,
}

// --------------------------------------------------------- stats / shutdown

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatsResult {
    pub store_bytes: u64,
    pub objects: u64,
    pub sessions: u64,
    pub snapshots: u64,
    pub project_root: String,
    pub store_dir: String,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
pub struct EmptyResult {}

// ------------------------------------------------------------- get_file_blame

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileBlameParams {
    pub path: String,
    /// An entry id, or `@working` (the default).
    pub at: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlameLine {
    /// 1-based.
    pub line: u64,
    /// The checkpoint that introduced the line; null for a line not yet in any
    /// checkpoint (`at: "@working"`).
    pub entry_id: Option<String>,
    pub turn_index: u64,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub timestamp: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileBlameResult {
    pub path: String,
    pub lines: Vec<BlameLine>,
    /// Some line diff ran out of its budget: lines of a stretch shown as replaced
    /// wholesale are attributed to the later checkpoint.
    pub is_approximate: bool,
}
