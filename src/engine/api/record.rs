//! Requests and results of the methods that record: snapshots, host
//! entries, labels and the staged set (and the tree view of the session).

use serde_json::Value;

use crate::repo_path::RepoPath;
use crate::session::EntryId;
use crate::store::ObjectId;
pub use crate::store::UncapturedReason;
pub use crate::working_copy::Uncaptured;

// ------------------------------------------------------------------ snapshot

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotKind {
    #[default]
    Turn,
    Message,
    Tool,
    Manual,
}

impl SnapshotKind {
    /// The `kind` a step-snapshot of this kind records (docs/format.md).
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotKind::Turn => "turn",
            SnapshotKind::Message => "message",
            SnapshotKind::Tool => "tool",
            SnapshotKind::Manual => "manual",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ToolInfo {
    pub name: String,
    pub input: Option<Value>,
}

#[derive(Debug, Default, Clone)]
pub struct SnapshotParams {
    pub kind: Option<SnapshotKind>,
    pub label: Option<String>,
    /// Only these may have changed: re-check just them (files, missing
    /// files, or directories re-checked recursively).
    pub paths: Option<Vec<RepoPath>>,
    pub tool: Option<ToolInfo>,
    /// Default: the leaf.
    pub parent_id: Option<EntryId>,
    pub turn_index: Option<u64>,
    pub force: Option<bool>,
    /// The host's own id for this request: a snapshot sent again with the
    /// id of one this session already recorded returns that checkpoint and
    /// records nothing (a host retrying after a lost answer, a hook event
    /// handed over twice). At most 64 characters, no whitespace.
    pub request_id: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DiffLists {
    pub added: Vec<RepoPath>,
    pub modified: Vec<RepoPath>,
    pub deleted: Vec<RepoPath>,
    /// Present but not captured by this checkpoint (their reasons are in
    /// `stats.untracked`): neither added nor deleted.
    pub not_captured: Vec<RepoPath>,
    /// Captured by this checkpoint, present but not captured by the
    /// parent's: whether they changed is unknown.
    pub recaptured: Vec<RepoPath>,
}

#[derive(Debug, Default, Clone)]
pub struct SnapshotStats {
    pub files_scanned: u64,
    pub files_hashed: u64,
    pub bytes_hashed: u64,
    pub duration_ms: u64,
    pub untracked: Vec<Uncaptured>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitInfo {
    pub branch: Option<String>,
    pub head: Option<String>,
}

#[derive(Debug, Clone)]
pub struct SnapshotResult {
    /// The new step-snapshot, or None when nothing changed.
    pub entry_id: Option<EntryId>,
    pub tree_hash: ObjectId,
    pub changed: bool,
    pub diff: DiffLists,
    pub turn_index: u64,
    pub stats: SnapshotStats,
    pub git: Option<GitInfo>,
}

// -------------------------------------------------------------- append_entry

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum HostEntryType {
    #[default]
    Message,
    Custom,
}

#[derive(Debug, Default, Clone)]
pub struct AppendEntryParams {
    /// The host's own id for the entry (non-empty, no whitespace, ≤ 64 chars).
    pub entry_id: Option<EntryId>,
    pub parent_id: Option<EntryId>,
    pub entry_type: Option<HostEntryType>,
    pub role: Option<String>,
    pub text: Option<String>,
    pub custom_type: Option<String>,
    pub data: Option<Value>,
}

#[derive(Debug, Clone)]
pub struct AppendEntryResult {
    pub entry_id: EntryId,
    pub existed: bool,
}

// --------------------------------------------------------------------- label

#[derive(Debug, Clone)]
pub struct LabelParams {
    pub target_id: EntryId,
    /// The label; None clears it.
    pub label: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct EntryIdResult {
    pub entry_id: EntryId,
}

// ------------------------------------------------ annotate and checkpoint
// A person's side of checkpoints (docs/architecture.md "Annotations"): not
// protocol methods; the CLI, MCP and the page call them.

/// What an annotation does to one of its two texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TextEdit {
    /// Leave it as it is.
    #[default]
    Keep,
    Set(String),
    Clear,
}

#[derive(Debug, Clone)]
pub struct AnnotateParams {
    /// A checkpoint (a step-snapshot or an unrevert-point).
    pub target_id: EntryId,
    pub label: TextEdit,
    pub note: TextEdit,
}

#[derive(Debug, Clone)]
pub struct AnnotateResult {
    /// The `label` entry appended; `None` when the annotation was already
    /// so (nothing appended).
    pub entry_id: Option<EntryId>,
    /// The checkpoint's label and note as they read now.
    pub label: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct CheckpointParams {
    pub label: Option<String>,
    pub note: Option<String>,
    /// Only these may have changed (as `SnapshotParams::paths`).
    pub paths: Option<Vec<RepoPath>>,
    /// The most manual checkpoints a session holds (the store's setting;
    /// `None`: [`DEFAULT_MAX_MANUAL`]).
    pub max_manual: Option<u64>,
}

/// How many manual checkpoints a session holds unless the store's settings
/// say otherwise.
pub const DEFAULT_MAX_MANUAL: u64 = 50;

/// The longest label or note, in bytes.
pub const MAX_ANNOTATION_BYTES: usize = 4096;

#[derive(Debug, Clone)]
pub struct CheckpointResult {
    pub snapshot: SnapshotResult,
    /// The files and bytes the checkpoint holds (captured ones).
    pub files: u64,
    pub bytes: u64,
    /// Manual checkpoints in the session now, this one included, and the
    /// most it may hold.
    pub manual_count: u64,
    pub max_manual: u64,
}

// --------------------------------------------------------------- stage_files

#[derive(Debug, Clone)]
pub struct StageFilesParams {
    pub paths: Vec<RepoPath>,
}

#[derive(Debug, Clone)]
pub struct StageFilesResult {
    pub staged: Vec<RepoPath>,
}

// ------------------------------------------------------------------ get_tree

#[derive(Debug, Clone)]
pub struct TreeEntryInfo {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub entry_type: String,
    pub custom_type: Option<String>,
    pub label: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone)]
pub struct GetTreeResult {
    pub entries: Vec<TreeEntryInfo>,
    /// `None` only for a session without entries (read as it is).
    pub leaf_id: Option<EntryId>,
}

// ------------------------------------------------------------ conversation

/// Where an agent's conversation stood at a checkpoint, as a hook recorded
/// it (docs/format.md "The conversation at a checkpoint"; the record's
/// `conversation`, field for field).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConversationState {
    /// `claude-code`, `codex` or `gemini`.
    pub agent: String,
    pub session_id: String,
    pub transcript_path: String,
    /// The bytes of the transcript rewind holds: `[0, size)`, whole lines.
    pub size: u64,
    pub lines: u64,
    /// xxh3-64 (16 hex digits) of the last (at most 64) bytes before `size`.
    pub tail_hash: Option<String>,
    /// The conversation up to the last message is `[0, cut)`.
    pub cut: u64,
    /// The agent's own name for `cut` (a message uuid, a line number, a
    /// message id).
    pub position: Option<String>,
    /// The stored transcript (a chain of appended pieces), `None` while
    /// `size` is 0.
    pub transcript_tree: Option<ObjectId>,
    /// Why the conversation cannot be cut here.
    pub lost: Option<String>,
}

/// A conversation to record with a snapshot: its state, and the bytes a
/// hook found appended to the transcript since the stored chain
/// (`state.transcript_tree`, which they extend; `state.size` counts them).
#[derive(Debug, Default, Clone)]
pub struct ConversationCapture {
    pub state: ConversationState,
    pub appended: Vec<u8>,
}

/// The conversation a conversation restore to a checkpoint cuts.
#[derive(Debug, Clone)]
pub struct ConversationAt {
    /// The checkpoint the restore names.
    pub checkpoint: EntryId,
    /// Its kind and turn.
    pub kind: crate::engine::api::CheckpointKind,
    pub turn_index: u64,
    /// The checkpoint whose conversation is cut: the one named, or for a
    /// checkpoint inside a turn (a tool's) that turn's prompt (a
    /// conversation is cut between turns).
    pub from: EntryId,
    /// Whole turns the conversation keeps.
    pub turns_kept: u64,
    /// Where the checkpoints of a session that continues the conversation
    /// go: below the entry before the prompt it was cut at (a branch beside
    /// that turn), or below the turn's end.
    pub continue_below: EntryId,
    /// `None`: the checkpoint was recorded without a conversation (before
    /// rewind recorded them, or not by an agent's hook).
    pub state: Option<ConversationState>,
}
