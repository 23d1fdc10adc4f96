//! Requests and results of the read methods: checkpoints, changed files,
//! diffs, file history and blame, status and stats. Paths in results are
//! the recorded tree paths (`/`-separated, relative to the project root);
//! a point in a range is an entry id, `@working`, or a tree hash.

use std::path::PathBuf;

use crate::repo_path::RepoPath;
use crate::store::ObjectId;

// ---------------------------------------------------------- list_checkpoints

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    #[default]
    Path,
    All,
}

#[derive(Debug, Default, Clone)]
pub struct ListCheckpointsParams {
    pub scope: Option<Scope>,
    /// Case-insensitive substring searched in labels and notes.
    pub query: Option<String>,
}

#[derive(Debug, Clone)]
pub struct CheckpointInfo {
    pub entry_id: String,
    pub parent_id: Option<String>,
    pub kind: String,
    pub label: Option<String>,
    pub note: Option<String>,
    /// The tool a `tool` checkpoint was taken around (`snapshot`'s
    /// `tool.name`).
    pub tool: Option<String>,
    /// The git branch the project was on when the checkpoint was taken
    /// (absent outside a git repository, on a detached HEAD, or when the
    /// checkpoint did not record it).
    pub git_branch: Option<String>,
    pub timestamp: String,
    pub tree_hash: ObjectId,
    pub turn_index: u64,
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    pub on_current_path: bool,
}

#[derive(Debug, Clone)]
pub struct ListCheckpointsResult {
    pub checkpoints: Vec<CheckpointInfo>,
    pub initial_entry_id: String,
}

// -------------------------------------------------------- get_modified_files

#[derive(Debug, Default, Clone)]
pub struct RangeParams {
    /// Entry id or "@working". Default: the baseline.
    pub from_entry_id: Option<String>,
    /// Entry id or "@working". Default: the leaf.
    pub to_entry_id: Option<String>,
    pub from_hash: Option<String>,
    pub to_hash: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
}

#[derive(Debug, Clone)]
pub struct ModifiedFile {
    pub path: RepoPath,
    pub status: FileStatus,
    /// Turn of the earliest tree-recording entry in the range that changed
    /// the file; null when no recorded entry did (e.g. `@working` changes).
    pub turn_index: Option<u64>,
    pub entry_id: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ModifiedFilesResult {
    pub files: Vec<ModifiedFile>,
    pub from_tree_hash: ObjectId,
    pub to_tree_hash: ObjectId,
}

// ------------------------------------------------------------- get_file_diff

#[derive(Debug, Clone)]
pub struct FileDiffParams {
    pub file_path: RepoPath,
    pub from_entry_id: Option<String>,
    pub to_entry_id: Option<String>,
    pub from_hash: Option<String>,
    pub to_hash: Option<String>,
    pub context_lines: Option<usize>,
}

impl FileDiffParams {
    /// The diff of `file_path` from the baseline to the leaf.
    pub fn new(file_path: RepoPath) -> Self {
        FileDiffParams {
            file_path,
            from_entry_id: None,
            to_entry_id: None,
            from_hash: None,
            to_hash: None,
            context_lines: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentEncoding {
    Utf8,
    Base64,
}

#[derive(Debug, Clone)]
pub struct FileDiff {
    pub path: RepoPath,
    pub old_content: Option<String>,
    pub new_content: Option<String>,
    pub old_hash: Option<ObjectId>,
    pub new_hash: Option<ObjectId>,
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
#[derive(Debug, Clone)]
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

#[derive(Debug, Clone)]
pub struct FileHistoryParams {
    pub file_path: RepoPath,
    pub scope: Option<Scope>,
}

#[derive(Debug, Clone)]
pub struct FileVersion {
    pub entry_id: String,
    pub turn_index: u64,
    pub kind: String,
    pub label: Option<String>,
    pub timestamp: String,
    pub status: FileStatus,
    /// Content hash after this entry; null when deleted.
    pub hash: Option<ObjectId>,
}

#[derive(Debug, Clone)]
pub struct FileHistoryResult {
    pub path: RepoPath,
    pub versions: Vec<FileVersion>,
}

// ---------------------------------------------------------------- get_status

#[derive(Debug, Clone)]
pub struct StatusFile {
    pub path: RepoPath,
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

#[derive(Debug, Clone)]
pub struct StatusResult {
    pub has_unapproved: bool,
    pub approved_entry_id: Option<String>,
    pub last_approved_at: Option<String>,
    pub changed_files: Vec<StatusFile>,
}

// --------------------------------------------------------------------- stats

#[derive(Debug, Clone)]
pub struct StatsResult {
    pub store_bytes: u64,
    pub objects: u64,
    pub sessions: u64,
    pub snapshots: u64,
    pub project_root: PathBuf,
    pub store_dir: PathBuf,
}

// ------------------------------------------------------------- get_file_blame

#[derive(Debug, Clone)]
pub struct FileBlameParams {
    pub path: RepoPath,
    /// An entry id, or `@working` (the default).
    pub at: Option<String>,
}

#[derive(Debug, Clone)]
pub struct BlameLine {
    /// 1-based.
    pub line: u64,
    /// The checkpoint that introduced the line; null for a line not yet in any
    /// checkpoint (`at: "@working"`).
    pub entry_id: Option<String>,
    pub turn_index: u64,
    pub kind: String,
    pub label: Option<String>,
    pub timestamp: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct FileBlameResult {
    pub path: RepoPath,
    pub lines: Vec<BlameLine>,
    /// Some line diff ran out of its budget: lines of a stretch shown as replaced
    /// wholesale are attributed to the later checkpoint.
    pub is_approximate: bool,
}
