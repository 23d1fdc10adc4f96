//! Requests and results of the read methods: checkpoints, changed files,
//! diffs, file history and blame, status and stats. The two ends of a
//! range are [`Point`]s.

use std::path::PathBuf;

use super::{ChangeReason, SnapshotKind};
use crate::repo_path::RepoPath;
use crate::session::EntryId;
use crate::store::{ObjectId, UncapturedReason};

// ---------------------------------------------------------- list_checkpoints

/// What made a tree-recording entry (the `kind` its record stores,
/// docs/format.md "step-snapshot" and "unrevert-point"): the one place its
/// spellings live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointKind {
    /// The project as rewind found it at the session's start.
    Baseline,
    /// An agent's turn ended.
    Turn,
    /// A prompt started a turn.
    Message,
    /// Around a tool call.
    Tool,
    /// Asked for by a person or a host.
    Manual,
    /// Changes made while no rewind process recorded the session.
    Outside,
    /// The disk just before a restore replaced it (snapshot before mutate).
    PreRestore,
    /// What a restore that could not write every file left.
    PostRestore,
    /// The disk as approved.
    Approve,
    /// An unrevert-point, by the operation that wrote it.
    Rollback(ChangeReason),
    /// Not a checkpoint: the working directory (blame's lines no checkpoint
    /// holds yet).
    Working,
    /// A kind this build does not know (a host's entry, a newer writer).
    Other(String),
}

impl CheckpointKind {
    /// The kind as the session records it.
    pub fn as_str(&self) -> &str {
        match self {
            CheckpointKind::Baseline => "baseline",
            CheckpointKind::Turn => SnapshotKind::Turn.as_str(),
            CheckpointKind::Message => SnapshotKind::Message.as_str(),
            CheckpointKind::Tool => SnapshotKind::Tool.as_str(),
            CheckpointKind::Manual => SnapshotKind::Manual.as_str(),
            CheckpointKind::Outside => "outside",
            CheckpointKind::PreRestore => "pre-restore",
            CheckpointKind::PostRestore => "post-restore",
            CheckpointKind::Approve => "approve",
            CheckpointKind::Rollback(op) => op.as_str(),
            CheckpointKind::Working => "working",
            CheckpointKind::Other(s) => s,
        }
    }

    /// The kind a record spells.
    pub fn parse(s: &str) -> CheckpointKind {
        use ChangeReason::*;
        let known = [
            CheckpointKind::Baseline,
            CheckpointKind::Turn,
            CheckpointKind::Message,
            CheckpointKind::Tool,
            CheckpointKind::Manual,
            CheckpointKind::Outside,
            CheckpointKind::PreRestore,
            CheckpointKind::PostRestore,
            CheckpointKind::Approve,
            CheckpointKind::Rollback(Restore),
            CheckpointKind::Rollback(Navigate),
            CheckpointKind::Rollback(Undo),
            CheckpointKind::Rollback(Reset),
            CheckpointKind::Rollback(Revert),
        ];
        known
            .into_iter()
            .find(|k| k.as_str() == s)
            .unwrap_or_else(|| CheckpointKind::Other(s.to_string()))
    }

    /// Recorded by an agent's turn (its prompt, its tools, its end).
    pub fn is_turn(&self) -> bool {
        matches!(
            self,
            CheckpointKind::Message | CheckpointKind::Tool | CheckpointKind::Turn
        )
    }

    /// An unrevert-point (`undo` reverts it).
    pub fn is_rollback(&self) -> bool {
        matches!(self, CheckpointKind::Rollback(_))
    }
}

impl From<SnapshotKind> for CheckpointKind {
    fn from(k: SnapshotKind) -> Self {
        match k {
            SnapshotKind::Turn => CheckpointKind::Turn,
            SnapshotKind::Message => CheckpointKind::Message,
            SnapshotKind::Tool => CheckpointKind::Tool,
            SnapshotKind::Manual => CheckpointKind::Manual,
        }
    }
}

impl std::fmt::Display for CheckpointKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    pub entry_id: EntryId,
    pub parent_id: Option<EntryId>,
    pub kind: CheckpointKind,
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
    /// Paths present but not captured by this checkpoint.
    pub not_captured: u64,
    pub on_current_path: bool,
}

#[derive(Debug, Clone)]
pub struct ListCheckpointsResult {
    pub checkpoints: Vec<CheckpointInfo>,
    /// The baseline; `None` only for a session without one (read as it is).
    pub initial_entry_id: Option<EntryId>,
}

// -------------------------------------------------------- get_modified_files

/// A point in history a query compares: an entry's checkpoint, a tree
/// named by hash, or the live working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Point {
    Entry(EntryId),
    Tree(ObjectId),
    Working,
}

impl Point {
    /// The text that names the working directory.
    pub const WORKING: &'static str = "@working";

    /// A point as people type it: `@working`, a 32-digit tree hash, or
    /// else an entry id.
    pub fn parse(s: &str) -> Point {
        if s == Point::WORKING {
            Point::Working
        } else if let Some(id) = (s.len() == 32)
            .then(|| ObjectId::from_hex(s).ok())
            .flatten()
        {
            Point::Tree(id)
        } else {
            Point::Entry(EntryId::from_input(s))
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct RangeParams {
    /// Default: the baseline.
    pub from: Option<Point>,
    /// Default: the leaf.
    pub to: Option<Point>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    /// Present at the later end but not captured there (the reason says
    /// why): whether it changed is unknown, and a restore to that end
    /// leaves it alone.
    NotCaptured,
    /// Captured at the later end, present but not captured at the earlier
    /// one: whether it changed is unknown.
    Recaptured,
}

impl FileStatus {
    /// git's one-letter status (`A`, `M`, `D`), for listings people read;
    /// `?` for not captured and `C` for captured again.
    pub fn letter(self) -> &'static str {
        match self {
            FileStatus::Added => "A",
            FileStatus::Modified => "M",
            FileStatus::Deleted => "D",
            FileStatus::NotCaptured => "?",
            FileStatus::Recaptured => "C",
        }
    }

    /// The status of a classified change, with the reason a side did not
    /// capture it.
    pub fn of(class: crate::store::ChangeClass) -> (FileStatus, Option<UncapturedReason>) {
        use crate::store::ChangeClass;
        match class {
            ChangeClass::Added => (FileStatus::Added, None),
            ChangeClass::Modified => (FileStatus::Modified, None),
            ChangeClass::Deleted => (FileStatus::Deleted, None),
            ChangeClass::NotCaptured(r) => (FileStatus::NotCaptured, Some(r)),
            ChangeClass::Recaptured(r) => (FileStatus::Recaptured, Some(r)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ModifiedFile {
    pub path: RepoPath,
    pub status: FileStatus,
    /// Why one end did not capture it (`notCaptured`, `recaptured`).
    pub reason: Option<UncapturedReason>,
    /// Turn of the earliest tree-recording entry in the range that changed
    /// the file; null when no recorded entry did (e.g. `@working` changes).
    pub turn_index: Option<u64>,
    pub entry_id: Option<EntryId>,
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
    /// Default: the baseline.
    pub from: Option<Point>,
    /// Default: the leaf.
    pub to: Option<Point>,
    pub context_lines: Option<usize>,
}

impl FileDiffParams {
    /// The diff of `file_path` from the baseline to the leaf.
    pub fn new(file_path: RepoPath) -> Self {
        FileDiffParams {
            file_path,
            from: None,
            to: None,
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
    /// The old end held the path but did not capture it (no content).
    pub old_not_captured: Option<UncapturedReason>,
    /// The new end held the path but did not capture it (no content).
    pub new_not_captured: Option<UncapturedReason>,
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
    pub entry_id: EntryId,
    pub turn_index: u64,
    pub kind: CheckpointKind,
    pub label: Option<String>,
    pub timestamp: String,
    pub status: FileStatus,
    /// Why this entry's checkpoint or its parent's did not capture it
    /// (`notCaptured`, `recaptured`).
    pub reason: Option<UncapturedReason>,
    /// Content hash after this entry; null when deleted or not captured.
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
    /// Why one end did not capture it (`notCaptured`, `recaptured`).
    pub reason: Option<UncapturedReason>,
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
    pub approved_entry_id: Option<EntryId>,
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
    /// An entry's checkpoint, or the working directory (the default); a
    /// tree hash has no history to blame.
    pub at: Option<Point>,
}

#[derive(Debug, Clone)]
pub struct BlameLine {
    /// 1-based.
    pub line: u64,
    /// The checkpoint that introduced the line; null for a line not yet in any
    /// checkpoint (`at: "@working"`).
    pub entry_id: Option<EntryId>,
    pub turn_index: u64,
    pub kind: CheckpointKind,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_as_people_type_them() {
        let h = "0123456789abcdef0123456789abcdef";
        let id = ObjectId::from_hex(h).unwrap();
        assert_eq!(Point::parse(h), Point::Tree(id));
        assert_eq!(Point::parse("@working"), Point::Working);
        assert_eq!(Point::parse("e1"), Point::Entry(EntryId::from_input("e1")));
        // 32 characters that are not a hash name an entry.
        let not_hex = "0123456789abcdef0123456789abcdeg";
        assert_eq!(
            Point::parse(not_hex),
            Point::Entry(EntryId::from_input(not_hex))
        );
    }
}
