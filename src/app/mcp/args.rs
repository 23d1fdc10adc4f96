//! The tools' arguments: what an MCP client sends, with the JSON schema
//! rmcp advertises for each tool.

use rewind::sidecar::protocol as wire;
use rmcp::schemars;
use serde::Deserialize;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointArgs {
    /// What the checkpoint is for (shown by list_checkpoints; one line, at
    /// most 4096 bytes).
    pub label: String,
    /// A longer note: why, what to check before going back (at most 4096
    /// bytes).
    #[serde(default)]
    pub note: Option<String>,
    /// Only rescan these files or directories (relative to the project
    /// root); default: the whole project.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListArgs {
    /// Case-insensitive substring searched in labels and notes.
    #[serde(default)]
    pub query: Option<String>,
    /// Return only the last N checkpoints (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RangeArgs {
    /// Start: an entry id, a 32-hex tree hash or "@working" (default: the
    /// session's baseline).
    #[serde(default)]
    pub from: Option<String>,
    /// End: an entry id, a 32-hex tree hash or "@working" (default:
    /// "@working", the files on disk now).
    #[serde(default)]
    pub to: Option<String>,
    /// List at most this many files (default 500).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffArgs {
    /// The file, relative to the project root.
    pub path: String,
    /// Start: an entry id, a 32-hex tree hash or "@working" (default: the
    /// session's baseline).
    #[serde(default)]
    pub from: Option<String>,
    /// End: an entry id, a 32-hex tree hash or "@working" (default:
    /// "@working").
    #[serde(default)]
    pub to: Option<String>,
    /// Lines of context around each change (default 3).
    #[serde(default)]
    pub context_lines: Option<usize>,
    /// Cut the unified diff after this many bytes (default 65536).
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryArgs {
    /// The file, relative to the project root.
    pub path: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreArgs {
    /// The checkpoint to go back to: an entry id (from list_checkpoints or
    /// file_history) or a 32-hex tree hash.
    pub target: String,
    /// Only these files or directories (relative to the project root);
    /// default: every file.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Files changed on disk since rewind last recorded them: "skip"
    /// (default: keep them as they are and list them), "overwrite" (write
    /// them too; the pre-restore checkpoint keeps what they held) or
    /// "abort" (write nothing if there is any).
    #[serde(default)]
    pub on_conflict: Option<wire::OnConflict>,
    /// The token the first call returned with the plan. Without it nothing
    /// is written: the answer is the plan and a token.
    #[serde(default)]
    pub confirm_token: Option<String>,
    /// Once the files are written, also fork the agent's conversation at
    /// that checkpoint and answer with the command that continues it (the
    /// running conversation cannot be cut from inside it). Default: true
    /// without `files`.
    #[serde(default)]
    pub conversation: Option<bool>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlameArgs {
    /// The file, relative to the project root.
    pub path: String,
    /// An entry id: the file as that checkpoint has it (default: on disk now).
    #[serde(default)]
    pub at: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevertArgs {
    /// The checkpoint whose changes are taken out (an entryId from
    /// list_checkpoints, file_history or blame).
    pub entry_id: String,
    /// The last checkpoint of a range starting at entryId: the whole
    /// range's changes are taken out.
    #[serde(default)]
    pub to_entry_id: Option<String>,
    /// Only these files or directories (relative to the project root).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// "abort" (default: nothing written if a file conflicts), "skip"
    /// (write the files that merge cleanly) or "markers" (write conflicts
    /// with git-style conflict markers).
    #[serde(default)]
    pub on_conflict: Option<wire::RevertOnConflict>,
    /// The token the first call returned with the plan. Without it nothing
    /// is written: the answer is the plan and a token.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelArgs {
    /// The checkpoint (an entryId from list_checkpoints).
    pub entry_id: String,
    /// Its new label (one line, at most 4096 bytes); "" removes it;
    /// absent keeps it.
    #[serde(default)]
    pub label: Option<String>,
    /// Its new note (at most 4096 bytes); "" removes it; absent keeps it.
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndoArgs {
    /// The unrevert-point to undo. Default: when an agent's turn is newer
    /// than the last restore or undo, the state before that turn (as
    /// `rewind undo` does); else the newest unrevert-point on the current
    /// path (the last restore or undo).
    #[serde(default)]
    pub entry_id: Option<String>,
    /// Files changed on disk since rewind last recorded them: "skip"
    /// (default: keep them as they are and list them), "overwrite" (write
    /// them too; the pre-restore checkpoint keeps what they held) or
    /// "abort" (write nothing if there is any).
    #[serde(default)]
    pub on_conflict: Option<wire::OnConflict>,
    /// The token the first call returned with the plan. Without it nothing
    /// is written: the answer is the plan and a token.
    #[serde(default)]
    pub confirm_token: Option<String>,
    /// Once the files are written, also fork the agent's conversation as it
    /// was at the state put back and answer with the command that continues
    /// it (the running conversation cannot be cut from inside it). Default:
    /// true.
    #[serde(default)]
    pub conversation: Option<bool>,
}
