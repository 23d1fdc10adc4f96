//! Wire types of the recording methods: snapshot, append_entry, label,
//! stage_files, get_tree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Untracked;

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
    /// The host's own id for this request: a snapshot sent again with the
    /// id of one this session already recorded returns that checkpoint and
    /// records nothing (a host retrying after a lost answer, a hook event
    /// handed over twice). At most 64 characters, no whitespace.
    pub request_id: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffLists {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub deleted: Vec<String>,
    /// Present but not captured by this checkpoint (their reasons are in
    /// `stats.untracked`): neither added nor deleted. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_captured: Vec<String>,
    /// Captured by this checkpoint, present but not captured by the
    /// parent's: whether they changed is unknown. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recaptured: Vec<String>,
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
