//! Wire ⇄ engine: params into the engine's requests ([`FromWire`]), its
//! results into wire results ([`ToWire`]). The macros list each type's
//! fields once and build exhaustive struct literals on both sides, so a
//! field added to an engine type or a wire type and not to the other one
//! does not compile (docs/architecture.md, "Layers").
//!
//! What the conversion decides, and nothing else: the textual forms of
//! domain values (a hash's hex, a path's `/`-separated string, an enum's
//! name) and the syntax of what a client sends (a path that is not a clean
//! project path, a hash that is not one). Whether an entry exists, a path
//! stays inside the project or a list may be empty are the engine's rules.

use std::path::PathBuf;

use serde_json::Value;

use super::protocol as wire;
use crate::engine::api;
use crate::engine::{EngineError, EngineEvent};
use crate::repo_path::RepoPath;
use crate::session::EntryId;
use crate::store::ObjectId;

/// An engine value's wire form.
pub trait ToWire {
    type Wire;
    fn to_wire(self) -> Self::Wire;
}

/// A wire value as the engine's; fails on what the engine's types cannot
/// hold (a malformed path or hash).
pub trait FromWire<W>: Sized {
    fn from_wire(wire: W) -> Result<Self, EngineError>;
}

macro_rules! same_on_both_sides {
    ($($t:ty),*) => {$(
        impl ToWire for $t {
            type Wire = $t;
            fn to_wire(self) -> $t {
                self
            }
        }
        impl FromWire<$t> for $t {
            fn from_wire(wire: $t) -> Result<$t, EngineError> {
                Ok(wire)
            }
        }
    )*};
}
same_on_both_sides!(String, bool, u32, u64, usize, f64, Value);

impl<T: ToWire> ToWire for Option<T> {
    type Wire = Option<T::Wire>;
    fn to_wire(self) -> Self::Wire {
        self.map(ToWire::to_wire)
    }
}

impl<T: ToWire> ToWire for Vec<T> {
    type Wire = Vec<T::Wire>;
    fn to_wire(self) -> Self::Wire {
        self.into_iter().map(ToWire::to_wire).collect()
    }
}

impl<W, T: FromWire<W>> FromWire<Option<W>> for Option<T> {
    fn from_wire(wire: Option<W>) -> Result<Self, EngineError> {
        wire.map(T::from_wire).transpose()
    }
}

impl<W, T: FromWire<W>> FromWire<Vec<W>> for Vec<T> {
    fn from_wire(wire: Vec<W>) -> Result<Self, EngineError> {
        wire.into_iter().map(T::from_wire).collect()
    }
}

impl ToWire for ObjectId {
    type Wire = String;
    fn to_wire(self) -> String {
        self.to_hex()
    }
}

/// A hash that does not parse names no tree the store could hold.
impl FromWire<String> for ObjectId {
    fn from_wire(wire: String) -> Result<Self, EngineError> {
        crate::engine::parse_tree_hash(&wire)
    }
}

impl ToWire for EntryId {
    type Wire = String;
    fn to_wire(self) -> String {
        self.into_string()
    }
}

/// Any text: whether it names an entry is the engine's question (unknown
/// entry), and a new entry's id is checked when it is appended.
impl FromWire<String> for EntryId {
    fn from_wire(wire: String) -> Result<Self, EngineError> {
        Ok(EntryId::from_input(wire))
    }
}

impl ToWire for RepoPath {
    type Wire = String;
    fn to_wire(self) -> String {
        self.into_string()
    }
}

impl FromWire<String> for RepoPath {
    fn from_wire(wire: String) -> Result<Self, EngineError> {
        Ok(RepoPath::parse(&wire)?)
    }
}

impl ToWire for PathBuf {
    type Wire = String;
    fn to_wire(self) -> String {
        self.display().to_string()
    }
}

/// Methods without params.
impl FromWire<wire::NoParams> for () {
    fn from_wire(_: wire::NoParams) -> Result<(), EngineError> {
        Ok(())
    }
}

/// Engine result structs into wire structs of the same name and fields.
macro_rules! to_wire_structs {
    ($($name:ident { $($field:ident),* $(,)? })*) => {$(
        impl ToWire for api::$name {
            type Wire = wire::$name;
            fn to_wire(self) -> wire::$name {
                wire::$name { $($field: self.$field.to_wire(),)* }
            }
        }
    )*};
}

/// Wire param structs into engine request structs of the same name and
/// fields.
macro_rules! from_wire_structs {
    ($($name:ident { $($field:ident),* $(,)? })*) => {$(
        impl FromWire<wire::$name> for api::$name {
            fn from_wire(wire: wire::$name) -> Result<Self, EngineError> {
                Ok(api::$name { $($field: FromWire::from_wire(wire.$field)?,)* })
            }
        }
    )*};
}

/// Enums with the same variants on both sides (exhaustive both ways).
macro_rules! enums_both_ways {
    ($($name:ident { $($variant:ident),* $(,)? })*) => {$(
        impl ToWire for api::$name {
            type Wire = wire::$name;
            fn to_wire(self) -> wire::$name {
                match self { $(api::$name::$variant => wire::$name::$variant,)* }
            }
        }
        impl FromWire<wire::$name> for api::$name {
            fn from_wire(wire: wire::$name) -> Result<Self, EngineError> {
                Ok(match wire { $(wire::$name::$variant => api::$name::$variant,)* })
            }
        }
    )*};
}

enums_both_ways! {
    SnapshotKind { Turn, Message, Tool, Manual }
    HostEntryType { Message, Custom }
    Scope { Path, All }
    FileStatus { Added, Modified, Deleted, NotCaptured, Recaptured }
    ContentEncoding { Utf8, Base64 }
    OnConflict { Skip, Overwrite, Abort }
    RevertOnConflict { Abort, Skip, Markers }
    RevertStatus { Clean, Conflict, Skip }
    ChangeReason { Restore, Navigate, Undo, Reset, Revert }
    VerifyProblemKind { Session, MissingObject, CorruptObject }
}

// ------------------------------------------------------------------ requests

from_wire_structs! {
    SnapshotParams { kind, label, paths, tool, parent_id, turn_index, force, request_id }
    ToolInfo { name, input }
    AppendEntryParams { entry_id, parent_id, entry_type, role, text, custom_type, data }
    LabelParams { target_id, label, note }
    StageFilesParams { paths }
    ListCheckpointsParams { scope, query }
    FileHistoryParams { file_path, scope }
    RestoreFilesParams { target_entry_id, tree_hash, files, preview, on_conflict, hunks, git }
    HunkSelection { path, hunks, context_lines }
    HunkRef { index, hash }
    RevertParams { entry_id, to_entry_id, files, preview, on_conflict }
    NavigateTreeParams { target_id, skip_files, summarize, summary, label, preview, on_conflict }
    UndoParams { entry_id, on_conflict, preview, git }
    ApproveParams { message }
    ResetParams { on_conflict, preview }
    GcParams { dry_run, keep_last, max_age_days, budget_bytes }
}

/// One end of a range: the wire names it by an entry id or a tree hash (in
/// two fields), either of which may be `@working`.
fn point(entry: Option<String>, hash: Option<String>) -> Result<Option<api::Point>, EngineError> {
    Ok(match (entry, hash) {
        (Some(_), Some(_)) => {
            return Err(EngineError::InvalidParams(
                "give an entry id or a tree hash, not both".into(),
            ))
        }
        (Some(s), None) | (None, Some(s)) if s == api::Point::WORKING => Some(api::Point::Working),
        (Some(id), None) => Some(api::Point::Entry(EntryId::from_input(id))),
        (None, Some(h)) => Some(api::Point::Tree(ObjectId::from_wire(h)?)),
        (None, None) => None,
    })
}

impl FromWire<wire::RangeParams> for api::RangeParams {
    fn from_wire(w: wire::RangeParams) -> Result<Self, EngineError> {
        Ok(api::RangeParams {
            from: point(w.from_entry_id, w.from_hash)?,
            to: point(w.to_entry_id, w.to_hash)?,
        })
    }
}

impl FromWire<wire::FileDiffParams> for api::FileDiffParams {
    fn from_wire(w: wire::FileDiffParams) -> Result<Self, EngineError> {
        Ok(api::FileDiffParams {
            file_path: RepoPath::from_wire(w.file_path)?,
            from: point(w.from_entry_id, w.from_hash)?,
            to: point(w.to_entry_id, w.to_hash)?,
            context_lines: w.context_lines,
        })
    }
}

/// `at` is an entry id or `@working`.
impl FromWire<wire::FileBlameParams> for api::FileBlameParams {
    fn from_wire(w: wire::FileBlameParams) -> Result<Self, EngineError> {
        Ok(api::FileBlameParams {
            path: RepoPath::from_wire(w.path)?,
            at: point(w.at, None)?,
        })
    }
}

// The domain says "uncaptured" (present, not captured) and "in the way"
// (never captured, standing where a restore writes); the wire keeps the
// protocol's `untracked` for both.

impl ToWire for api::UncapturedReason {
    type Wire = wire::UntrackedReason;
    fn to_wire(self) -> wire::UntrackedReason {
        use api::UncapturedReason as A;
        use wire::UntrackedReason as W;
        match self {
            A::TooLarge => W::TooLarge,
            A::Special => W::Special,
            A::Unreadable => W::Unreadable,
            A::PathTooLong => W::PathTooLong,
            A::Unstable => W::Unstable,
            A::IgnoredOverCap => W::IgnoredOverCap,
        }
    }
}

impl FromWire<wire::UntrackedReason> for api::UncapturedReason {
    fn from_wire(w: wire::UntrackedReason) -> Result<Self, EngineError> {
        use api::UncapturedReason as A;
        use wire::UntrackedReason as W;
        Ok(match w {
            W::TooLarge => A::TooLarge,
            W::Special => A::Special,
            W::Unreadable => A::Unreadable,
            W::PathTooLong => A::PathTooLong,
            W::Unstable => A::Unstable,
            W::IgnoredOverCap => A::IgnoredOverCap,
        })
    }
}

impl ToWire for api::Uncaptured {
    type Wire = wire::Untracked;
    fn to_wire(self) -> wire::Untracked {
        wire::Untracked {
            path: self.path.to_wire(),
            reason: self.reason.to_wire(),
        }
    }
}

impl ToWire for api::ConflictReason {
    type Wire = wire::ConflictReason;
    fn to_wire(self) -> wire::ConflictReason {
        use api::ConflictReason as A;
        use wire::ConflictReason as W;
        match self {
            A::Dirty => W::Dirty,
            A::InTheWay => W::Untracked,
            A::Unwritable => W::Unwritable,
            A::Merge => W::Merge,
        }
    }
}

impl FromWire<wire::ConflictReason> for api::ConflictReason {
    fn from_wire(w: wire::ConflictReason) -> Result<Self, EngineError> {
        use api::ConflictReason as A;
        use wire::ConflictReason as W;
        Ok(match w {
            W::Dirty => A::Dirty,
            W::Untracked => A::InTheWay,
            W::Unwritable => A::Unwritable,
            W::Merge => A::Merge,
        })
    }
}

// ------------------------------------------------------------------- results

to_wire_structs! {
    BaselineInfo { entry_id, tree_hash, files, bytes }
    Recovered { torn_tail, truncated_bytes, outside_entry_id, interrupted_restore }
    InterruptedRestore { unrevert_entry_id, action, restored, deleted, kept }
    SnapshotResult { entry_id, tree_hash, changed, diff, turn_index, stats, git }
    DiffLists { added, modified, deleted, not_captured, recaptured }
    SnapshotStats { files_scanned, files_hashed, bytes_hashed, duration_ms, untracked }
    GitInfo { branch, head }
    AppendEntryResult { entry_id, existed }
    EntryIdResult { entry_id }
    StageFilesResult { staged }
    TreeEntryInfo { id, parent_id, entry_type, custom_type, label, timestamp }
    CheckpointInfo {
        entry_id, parent_id, kind, label, note, tool, git_branch, timestamp, tree_hash,
        turn_index, added, modified, deleted, not_captured, on_current_path,
    }
    ModifiedFilesResult { files, from_tree_hash, to_tree_hash }
    ModifiedFile { path, status, reason, turn_index, entry_id }
    FileDiff {
        path, old_content, new_content, old_hash, new_hash, unified_diff, additions, deletions,
        is_binary, is_too_large, is_approximate, old_not_captured, new_not_captured, encoding,
        hunks,
    }
    DiffHunk { index, old_start, old_lines, new_start, new_lines, hash }
    FileHistoryResult { path, versions }
    FileVersion { entry_id, turn_index, kind, label, timestamp, status, reason, hash }
    StatusResult { has_unapproved, approved_entry_id, last_approved_at, changed_files }
    StatusFile {
        path, status, reason, additions, deletions, diff, base_content, is_binary,
        is_too_large, is_approximate,
    }
    StatsResult { store_bytes, objects, sessions, snapshots, project_root, store_dir }
    FileBlameResult { path, lines, is_approximate }
    BlameLine { line, entry_id, turn_index, kind, label, timestamp, text }
    RestoreResult {
        preview, restored, deleted, skipped, not_captured, dirty, conflicts, unrevert_entry_id,
        warnings, git_moved,
    }
    Conflict { path, reason }
    RevertResult { preview, files, restored, deleted, failed, unrevert_entry_id }
    RevertFile { path, status, action, reason, diff, conflicts }
    ConflictHunk { current, reverted, before }
    NavigateTreeResult { new_leaf_id, old_leaf_id, restore, summary_entry_id }
    ApproveResult { approved_entry_id, approved_tree_hash, snapshots_approved }
    ResetResult { reset_to, restore }
    GcResult {
        objects_before, objects_removed, bytes_before, bytes_freed, sessions_pruned, budget_met,
        dry_run, pruned_sessions,
    }
    VerifyResult { ok, sessions, stat_caches, objects, problems }
    VerifyProblem { kind, subject, detail }
}

/// The wire has no null for "no entry": a session without entries (or
/// without a baseline) reports its leaf (or baseline) as `""`.
fn entry_or_empty(id: Option<EntryId>) -> String {
    id.map(EntryId::into_string).unwrap_or_default()
}

impl ToWire for api::GetTreeResult {
    type Wire = wire::GetTreeResult;
    fn to_wire(self) -> wire::GetTreeResult {
        let api::GetTreeResult { entries, leaf_id } = self;
        wire::GetTreeResult {
            entries: entries.to_wire(),
            leaf_id: entry_or_empty(leaf_id),
        }
    }
}

impl ToWire for api::ListCheckpointsResult {
    type Wire = wire::ListCheckpointsResult;
    fn to_wire(self) -> wire::ListCheckpointsResult {
        let api::ListCheckpointsResult {
            checkpoints,
            initial_entry_id,
        } = self;
        wire::ListCheckpointsResult {
            checkpoints: checkpoints.to_wire(),
            initial_entry_id: entry_or_empty(initial_entry_id),
        }
    }
}

impl ToWire for api::CheckpointKind {
    type Wire = String;
    fn to_wire(self) -> String {
        self.as_str().to_string()
    }
}

impl ToWire for api::TornTail {
    type Wire = String;
    fn to_wire(self) -> String {
        match self {
            api::TornTail::Completed => "completed",
            api::TornTail::Truncated => "truncated",
        }
        .into()
    }
}

impl ToWire for api::RecoveryAction {
    type Wire = String;
    fn to_wire(self) -> String {
        match self {
            api::RecoveryAction::Completed => "completed",
            api::RecoveryAction::Discarded => "discarded",
        }
        .into()
    }
}

impl ToWire for api::RevertAction {
    type Wire = String;
    fn to_wire(self) -> String {
        self.as_str().into()
    }
}

/// `initialize`'s result: the opened session plus what only the wire has
/// (the protocol and server versions).
impl ToWire for api::Opened {
    type Wire = wire::InitializeResult;
    fn to_wire(self) -> wire::InitializeResult {
        wire::InitializeResult {
            protocol_version: wire::PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            session_id: self.session_id,
            session_file: self.session_file.to_wire(),
            store_dir: self.store_dir.to_wire(),
            project_root: self.project_root.to_wire(),
            leaf_id: self.leaf_id.to_wire(),
            resumed: self.resumed,
            baseline: self.baseline.to_wire(),
            recovered: self.recovered.to_wire(),
        }
    }
}

/// An engine event as the notification the protocol names for it: its
/// method and params.
pub fn notification(event: EngineEvent) -> (&'static str, Result<Value, serde_json::Error>) {
    match event {
        EngineEvent::FilesChanged {
            reason,
            written,
            deleted,
        } => (
            "files_changed",
            serde_json::to_value(wire::FilesChanged {
                reason: reason.to_wire(),
                written: written.to_wire(),
                deleted: deleted.to_wire(),
            }),
        ),
        EngineEvent::Progress {
            operation,
            done,
            total,
        } => (
            "progress",
            serde_json::to_value(wire::Progress {
                operation,
                done,
                total,
            }),
        ),
    }
}

/// An engine result as the JSON the protocol gives it (for the front ends
/// that answer in JSON without the JSON-RPC server: MCP, the UI).
pub fn to_json<T>(value: &T) -> Result<Value, serde_json::Error>
where
    T: ToWire + Clone,
    T::Wire: serde::Serialize,
{
    serde_json::to_value(value.clone().to_wire())
}

/// The conflicts an aborted restore reports in its error's `data`.
pub fn conflicts(list: &[api::Conflict]) -> Vec<wire::Conflict> {
    list.iter().cloned().map(ToWire::to_wire).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_with_a_bad_path_or_hash_are_refused_at_the_edge() {
        let bad_path = wire::StageFilesParams {
            paths: vec!["ok.txt".into(), "../outside".into()],
        };
        let r = api::StageFilesParams::from_wire(bad_path);
        assert!(matches!(r, Err(EngineError::BadPath(_))), "{r:?}");
        let bad_hash = wire::RestoreFilesParams {
            tree_hash: Some("not-a-hash".into()),
            ..Default::default()
        };
        let r = api::RestoreFilesParams::from_wire(bad_hash);
        assert!(
            matches!(&r, Err(EngineError::UnknownTree(h)) if h == "not-a-hash"),
            "{r:?}"
        );
    }

    #[test]
    fn a_range_end_is_one_point() {
        let both = wire::RangeParams {
            from_entry_id: Some("e1".into()),
            from_hash: Some("0123456789abcdef0123456789abcdef".into()),
            ..Default::default()
        };
        let r = api::RangeParams::from_wire(both);
        assert!(matches!(r, Err(EngineError::InvalidParams(_))), "{r:?}");
        let r = api::RangeParams::from_wire(wire::RangeParams {
            from_entry_id: Some("e1".into()),
            to_hash: Some("@working".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.from, Some(api::Point::Entry(EntryId::from_input("e1"))));
        assert_eq!(r.to, Some(api::Point::Working));
        // An entry id is an entry id even when it looks like a hash.
        let hex = "0123456789abcdef0123456789abcdef";
        let r = api::RangeParams::from_wire(wire::RangeParams {
            to_entry_id: Some(hex.into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.to, Some(api::Point::Entry(EntryId::from_input(hex))));
    }

    #[test]
    fn results_keep_their_wire_spelling() {
        let id = ObjectId::from_hex("0123456789abcdef0123456789abcdef").unwrap();
        let r = api::ApproveResult {
            approved_entry_id: EntryId::from_input("e1"),
            approved_tree_hash: id,
            snapshots_approved: 2,
        };
        assert_eq!(
            serde_json::to_value(r.to_wire()).unwrap(),
            serde_json::json!({
                "approvedEntryId": "e1",
                "approvedTreeHash": "0123456789abcdef0123456789abcdef",
                "snapshotsApproved": 2,
            })
        );
        let f = api::RevertFile {
            path: RepoPath::parse("a.txt").unwrap(),
            status: api::RevertStatus::Skip,
            action: api::RevertAction::None,
            reason: None,
            diff: String::new(),
            conflicts: Vec::new(),
        };
        let v = serde_json::to_value(f.to_wire()).unwrap();
        assert_eq!(v["action"], "none");
        assert_eq!(v["status"], "skip");
    }
}
