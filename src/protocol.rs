//! Parameter and result types of every method: the wire contract of
//! PROTOCOL.md as Rust types, and nothing else (no logic). `schema/` is
//! generated from these with schemars, and the clients from `schema/`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::working_copy::{Untracked, UntrackedReason};

pub const PROTOCOL_VERSION: u32 = 1;

// ---------------------------------------------------------------- initialize

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializeParams {
    /// Project root (absolute). Default: `--cwd`, else the process cwd.
    pub cwd: Option<String>,
    /// Resume this session file, or create it. Absolute.
    pub session_file: Option<String>,
    /// Store directory (absolute). Default: `$REWIND_HOME/projects/<hash>`.
    pub store_dir: Option<String>,
    pub options: Option<InitializeOptions>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializeOptions {
    /// Bytes; files larger than this are untracked `tooLarge` (default 16 MiB).
    pub max_file_size: Option<u64>,
    /// Extra gitignore-style globs to exclude (even files git tracks).
    pub extra_ignores: Option<Vec<String>>,
    /// Honour .gitignore and .git/info/exclude (default true).
    pub use_gitignore: Option<bool>,
    /// Exclude node_modules, target, .venv, ... (default true).
    pub default_excludes: Option<bool>,
    /// Bytes; files git ignores (outside ignored directories) are captured
    /// up to this size, so deleting `.env` can be undone; 0 captures none
    /// (default 1 MiB).
    pub ignored_max_size: Option<u64>,
    /// At most this many ignored files are captured per directory; the rest
    /// are untracked `ignoredOverCap` (default 32).
    pub ignored_per_directory: Option<u32>,
    /// fsync objects and session appends (default true).
    pub fsync: Option<bool>,
    /// Watch the project for changes (inotify on Linux, FSEvents on macOS,
    /// ReadDirectoryChangesW on Windows) so a snapshot looks
    /// only at what changed since the last scan; it scans everything on
    /// start, after a watcher overflow, or whenever an ignore file, the git
    /// index or `.git/info/exclude` changed (default true).
    pub watch: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineInfo {
    pub entry_id: String,
    pub tree_hash: String,
    /// Captured regular files and symlinks.
    pub files: u64,
    pub bytes: u64,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// The session file's last line was unterminated: `"completed"` (it
    /// parsed and got its newline) or `"truncated"` (it did not parse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_tail: Option<String>,
    /// Bytes removed when the torn tail was truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_bytes: Option<u64>,
    /// The entry recording edits made while no sidecar was running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_entry_id: Option<String>,
    /// A restore a crash interrupted, and what recovery did with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_restore: Option<crate::engine::InterruptedRestore>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: u32,
    pub server_version: String,
    pub session_id: String,
    pub session_file: String,
    pub store_dir: String,
    pub project_root: String,
    pub leaf_id: String,
    pub resumed: bool,
    pub baseline: BaselineInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<Recovered>,
}

/// The name serde gives a unit variant (its enum's `rename_all`), for where
/// one is kept as a string, like the `kind` of a session entry: the derive
/// stays the only spelling. Empty for a value that is not a unit variant
/// (never the case for the enums it is used with; a test pins them).
pub(crate) fn serde_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        _ => String::new(),
    }
}

// ------------------------------------------------------------------ snapshot

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SnapshotKind {
    #[default]
    Turn,
    Message,
    Tool,
    Manual,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotParams {
    pub kind: Option<SnapshotKind>,
    pub label: Option<String>,
    /// Only these may have changed: re-check just them (files, missing
    /// files, or directories re-checked recursively).
    pub paths: Option<Vec<String>>,
    pub tool: Option<ToolInfo>,
    /// Default: the leaf.
    pub parent_id: Option<String>,
    pub turn_index: Option<u64>,
    pub force: Option<bool>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffLists {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub deleted: Vec<String>,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotStats {
    pub files_scanned: u64,
    pub files_hashed: u64,
    pub bytes_hashed: u64,
    pub duration_ms: u64,
    pub untracked: Vec<Untracked>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitInfo {
    pub branch: Option<String>,
    pub head: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotResult {
    /// The new step-snapshot, or null when nothing changed.
    pub entry_id: Option<String>,
    pub tree_hash: String,
    pub changed: bool,
    pub diff: DiffLists,
    pub turn_index: u64,
    pub stats: SnapshotStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<GitInfo>,
}

// -------------------------------------------------------------- append_entry

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HostEntryType {
    #[default]
    Message,
    Custom,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppendEntryParams {
    /// The host's own id for the entry (non-empty, no whitespace, ≤ 64 chars).
    pub entry_id: Option<String>,
    pub parent_id: Option<String>,
    pub entry_type: Option<HostEntryType>,
    pub role: Option<String>,
    pub text: Option<String>,
    pub custom_type: Option<String>,
    pub data: Option<Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppendEntryResult {
    pub entry_id: String,
    pub existed: bool,
}

// --------------------------------------------------------------------- label

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelParams {
    pub target_id: String,
    /// The label; null clears it. Required (send null to clear).
    #[serde(deserialize_with = "Option::deserialize")]
    #[schemars(required)]
    pub label: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryIdResult {
    pub entry_id: String,
}

// --------------------------------------------------------------- stage_files

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageFilesParams {
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageFilesResult {
    pub staged: Vec<String>,
}

// ------------------------------------------------------------------ get_tree

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NoParams {}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeEntryInfo {
    pub id: String,
    pub parent_id: Option<String>,
    #[serde(rename = "type")]
    pub entry_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetTreeResult {
    pub entries: Vec<TreeEntryInfo>,
    pub leaf_id: String,
}

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
    pub on_current_path: bool,
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
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModifiedFile {
    pub path: String,
    pub status: FileStatus,
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
    /// Content hash after this entry; null when deleted.
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
    pub dirty: Vec<String>,
    pub conflicts: Vec<Conflict>,
    pub unrevert_entry_id: Option<String>,
    pub warnings: Vec<String>,
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

// ------------------------------------------------------------------------- gc

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GcParams {
    pub dry_run: Option<bool>,
    /// Keep the newest N sessions (plus protected ones).
    pub keep_last: Option<u64>,
    /// Keep sessions younger than this many days (plus protected ones).
    pub max_age_days: Option<f64>,
    /// Remove the oldest unprotected sessions while the store is larger.
    pub budget_bytes: Option<u64>,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GcResult {
    pub objects_before: u64,
    pub objects_removed: u64,
    pub bytes_before: u64,
    pub bytes_freed: u64,
    pub sessions_pruned: u64,
    pub budget_met: bool,
    pub dry_run: bool,
    /// Session files removed (or, in a dry run, that would be).
    pub pruned_sessions: Vec<String>,
}

// --------------------------------------------------------------------- verify

/// What `verify` found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum VerifyProblemKind {
    /// A session file that does not parse.
    Session,
    /// An object a session, a journal or a stat cache names is not stored.
    MissingObject,
    /// A stored object that does not decode to content with its id (or a
    /// tree that does not decode as a tree).
    CorruptObject,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyProblem {
    pub kind: VerifyProblemKind,
    /// The object id or the file the problem is about.
    pub subject: String,
    /// Who needs it (a session file, a stat cache, a tree) and the error.
    pub detail: String,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyResult {
    /// No problem found.
    pub ok: bool,
    pub sessions: u64,
    pub stat_caches: u64,
    /// Distinct objects read and hashed (reachable ones and every other one stored).
    pub objects: u64,
    pub problems: Vec<VerifyProblem>,
}

// -------------------------------------------------------------- notifications

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangeReason {
    Restore,
    Navigate,
    Undo,
    Reset,
    Revert,
}

/// `files_changed`: sent once per operation that changed the working
/// directory, before its response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilesChanged {
    pub reason: ChangeReason,
    pub written: Vec<String>,
    pub deleted: Vec<String>,
}

/// `progress`: at most every 100 ms while a restore, navigation, undo or
/// reset writes files (`done` of `total` files), or while a long scan walks
/// the project (`operation: "scan"`; `total` is an estimate, never below
/// `done`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// `"restore"`, `"navigate"`, `"undo"`, `"reset"` or `"scan"`.
    pub operation: String,
    pub done: u64,
    pub total: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// These names are written into session files (a snapshot's and an
    /// unrevert-point's `kind`): they must not change.
    #[test]
    fn serde_names_are_the_recorded_kinds() {
        let kinds = [
            SnapshotKind::Turn,
            SnapshotKind::Message,
            SnapshotKind::Tool,
            SnapshotKind::Manual,
        ];
        let names: Vec<String> = kinds.iter().map(serde_name).collect();
        assert_eq!(names, ["turn", "message", "tool", "manual"]);
        let reasons = [
            ChangeReason::Restore,
            ChangeReason::Navigate,
            ChangeReason::Undo,
            ChangeReason::Reset,
        ];
        let names: Vec<String> = reasons.iter().map(serde_name).collect();
        assert_eq!(names, ["restore", "navigate", "undo", "reset"]);
    }
}
