//! The entries rewind itself writes into a session, one type per kind (docs/format.md
//! "Entry types rewind writes"). They are written and read only through these types: a
//! field is added to a record by adding it here and to the format document.
//!
//! - Custom records (`step-snapshot`, `unrevert-point`, `approval`, `navigation`) are the
//!   `data` object of a `{"type":"custom","customType":..}` line; `label` and
//!   `branch_summary` records are the line's own fields after the leading ones.
//! - Fields a newer writer adds land in `extra` and are written back unchanged.
//! - Reading is lenient where older or hand-written lines may lack a field (a step-snapshot
//!   without `snapshotTreeHash` is not a checkpoint, not an error), and strict about the
//!   fields it finds: a field of the wrong type, or a tree hash that is not 32 lowercase
//!   hex digits (`ObjectId`), makes the whole record unreadable. Its entry then records
//!   nothing for the engine (a hash that does not parse names no tree it could restore),
//!   `rewind verify` reports it (`crate::verify`), and gc falls back to keeping every tree
//!   its line may name (see [`Entry::referenced_trees`]).
//!
//! Lines stay byte-compatible: `serde_json::Map` keeps keys in byte order, so the order
//! fields are declared in here does not reach the file.
//!
//! What an [`Entry`] reads through its record is here too, beside the types it reads:
//! `Entry::record`, `diff`, `is_rewind_record`, `referenced_trees`, and the facts an
//! entry caches when it is parsed (`Facts::of`, which `Entry::from_value` calls).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::entry::{
    Entry, Facts, NewEntry, CUSTOM_APPROVAL, CUSTOM_NAVIGATION, CUSTOM_STEP_SNAPSHOT,
    CUSTOM_UNREVERT_POINT, LEADING_KEYS, TYPE_BRANCH_SUMMARY, TYPE_CUSTOM, TYPE_LABEL,
};
use super::error::SessionError;
use super::ids::EntryId;
use crate::store::ObjectId;

/// One kind of entry rewind writes.
pub trait Record: Serialize + DeserializeOwned {
    /// The line's `type`.
    const TYPE: &'static str;
    /// The line's `customType`; `Some` for records that are a custom entry's `data`.
    const CUSTOM_TYPE: Option<&'static str>;

    /// The trees this record references (gc marks them).
    fn tree_hashes(&self) -> Vec<ObjectId>;

    /// Fields this build does not know, kept as read.
    fn extra(&self) -> &Map<String, Value>;

    /// Whether `e` is an entry of this kind.
    fn is_kind_of(e: &Entry) -> bool {
        e.entry_type == Self::TYPE && e.custom_type.as_deref() == Self::CUSTOM_TYPE
    }

    /// Reads `e` as this record: `None` if it is another kind of entry.
    fn read(e: &Entry) -> Option<Result<Self, serde_json::Error>> {
        if !Self::is_kind_of(e) {
            return None;
        }
        Some(if Self::CUSTOM_TYPE.is_some() {
            match e.data() {
                Some(data) => Self::deserialize(data),
                None => Self::deserialize(Value::Object(Map::new())),
            }
        } else {
            let body: Map<String, Value> = e
                .raw
                .iter()
                .filter(|(k, _)| !LEADING_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Self::deserialize(Value::Object(body))
        })
    }

    /// The entry to append for this record (`id: None` lets the log generate one).
    fn to_new_entry(
        &self,
        id: Option<EntryId>,
        parent_id: Option<EntryId>,
    ) -> Result<NewEntry, SessionError> {
        let encode = |source| SessionError::Encode {
            kind: Self::CUSTOM_TYPE.unwrap_or(Self::TYPE),
            source,
        };
        let Value::Object(body) = serde_json::to_value(self).map_err(encode)? else {
            return Err(encode(serde::ser::Error::custom("not a JSON object")));
        };
        let fields = match Self::CUSTOM_TYPE {
            Some(_) => Map::from_iter([("data".to_owned(), Value::Object(body))]),
            None => body,
        };
        Ok(NewEntry {
            entry_type: Self::TYPE.to_owned(),
            custom_type: Self::CUSTOM_TYPE.map(str::to_owned),
            id,
            parent_id,
            fields,
        })
    }
}

/// Tree hashes of the `Some`s, in order.
fn present<const N: usize>(hashes: [Option<ObjectId>; N]) -> Vec<ObjectId> {
    hashes.into_iter().flatten().collect()
}

/// `data.diff`: sorted paths changed from the checkpoint at the entry's parent.
/// The two lists of paths one side did not capture (docs/format.md "Trees")
/// are written only when they name something, so a record without them reads
/// as it always did, and older records read with both empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    #[serde(default)]
    pub added: Vec<String>,
    #[serde(default)]
    pub deleted: Vec<String>,
    #[serde(default)]
    pub modified: Vec<String>,
    /// Present but not captured by this checkpoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_captured: Vec<String>,
    /// Captured by this checkpoint, present but not captured by the parent's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recaptured: Vec<String>,
}

impl Diff {
    /// Every path with the list it is in (`"added"`, `"modified"`,
    /// `"deleted"`, `"notCaptured"` or `"recaptured"`).
    pub fn paths(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("added", &self.added),
            ("modified", &self.modified),
            ("deleted", &self.deleted),
            ("notCaptured", &self.not_captured),
            ("recaptured", &self.recaptured),
        ]
        .into_iter()
        .flat_map(|(key, list)| list.iter().map(move |p| (key, p.as_str())))
    }
}

/// A step-snapshot's `stats`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    #[serde(default)]
    pub files_scanned: u64,
    #[serde(default)]
    pub files_hashed: u64,
    #[serde(default)]
    pub bytes_hashed: u64,
    #[serde(default)]
    pub duration_ms: u64,
    /// Each path the snapshot found but did not capture.
    #[serde(default)]
    pub untracked: Vec<UncapturedPath>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One of a step-snapshot's `stats.untracked`: a path and why it was not
/// captured (`tooLarge`, `special`, `unreadable`, `pathTooLong`, `unstable`,
/// `ignoredOverCap`). The reason stays text, so a newer writer's reason
/// does not make the record unreadable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UncapturedPath {
    pub path: String,
    pub reason: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A step-snapshot's `tool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A step-snapshot's `git` (and an unrevert-point's): the branch and HEAD,
/// either may be null, and whether a file the index holds differed from
/// it (docs/format.md "Git state").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Git {
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub head: Option<String>,
    /// Absent when it could not be told (and in records written before it
    /// was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `custom` / `step-snapshot`: a checkpoint, `snapshotTreeHash`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_tree_hash: Option<ObjectId>,
    /// Absent: the entry is not a checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_tree_hash: Option<ObjectId>,
    #[serde(default)]
    pub diff: Diff,
    #[serde(default)]
    pub turn_index: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A person's note on a checkpoint they asked for (`rewind checkpoint
    /// --note`); a later `label` entry naming the checkpoint replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default)]
    pub stats: Stats,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<Tool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Git>,
    /// The git index at this checkpoint, as a listing in the store
    /// (docs/format.md "Git index listing"). Beside `git` rather than in it,
    /// so a build that does not know it still keeps its tree (an unknown
    /// top-level `…TreeHash` is kept by gc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_index_tree_hash: Option<ObjectId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_paths: Option<Vec<String>>,
    /// The host's id of the request that recorded it (`snapshot`'s
    /// `requestId`): the same request again returns this checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Written by builds that record files' modes (docs/format.md "Trees"):
    /// the tree this record captured (`snapshotTreeHash`) holds each file's permission bits.
    /// Absent: an older build's, whose trees say 0o644 or 0o755 for every
    /// file whatever it had (docs/format.md "What a restore does not put
    /// back").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub modes: bool,
    /// Where the agent's conversation stood (a hook's checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Box<Conversation>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record for StepSnapshot {
    const TYPE: &'static str = TYPE_CUSTOM;
    const CUSTOM_TYPE: Option<&'static str> = Some(CUSTOM_STEP_SNAPSHOT);

    fn tree_hashes(&self) -> Vec<ObjectId> {
        present([
            self.baseline_tree_hash,
            self.snapshot_tree_hash,
            self.conversation
                .as_ref()
                .and_then(|c| c.transcript_tree_hash),
            self.git_index_tree_hash,
        ])
    }

    fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }
}

/// A step-snapshot's `conversation` (docs/format.md "The conversation at a checkpoint"):
/// which agent conversation a hook recorded the checkpoint for, where its transcript
/// is, how much of it rewind holds and where a conversation restore cuts it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    /// `claude-code`, `codex` or `gemini`.
    pub agent: String,
    /// The agent's session id.
    pub session_id: String,
    /// The transcript the hook read.
    pub transcript_path: String,
    /// How many bytes of the transcript rewind holds (whole lines): `[0, size)`.
    #[serde(default)]
    pub size: u64,
    /// How many lines those bytes are.
    #[serde(default)]
    pub lines: u64,
    /// xxh3-64 (16 hex digits) of the last (at most 64) bytes before `size`: the next
    /// hook checks the transcript still begins with what rewind holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_hash: Option<String>,
    /// The conversation up to the last message the hook saw is `[0, cut)` (before a
    /// prompt: without the prompt).
    #[serde(default)]
    pub cut: u64,
    /// The agent's own name for that place: Claude Code the `uuid` of the last line
    /// kept, Codex the number of rollout lines kept, Gemini CLI the id of the last
    /// message kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// The stored transcript, `[0, size)`: a chain of trees, each with the bytes one hook
    /// found appended (`piece`) and the tree before it (`prev`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_tree_hash: Option<ObjectId>,
    /// Why the conversation cannot be cut here: the transcript was gone, rewritten or
    /// of a format rewind does not know when a hook read it (kept by later checkpoints
    /// of the same conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `custom` / `unrevert-point`: what a restore changed, `workingTreeHash` the checkpoint
/// it leaves and `preRollbackTreeHash` what `undo` restores.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnrevertPoint {
    /// `"restore"`, `"navigate"`, `"undo"`, `"reset"` or `"revert"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_rollback_tree_hash: Option<ObjectId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_tree_hash: Option<ObjectId>,
    /// Written as null when the restore had no target entry.
    #[serde(default)]
    pub rolled_back_to_leaf: Option<EntryId>,
    #[serde(default)]
    pub restored_files: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_tree_hash: Option<ObjectId>,
    #[serde(default)]
    pub diff: Diff,
    #[serde(default)]
    pub turn_index: u64,
    /// Navigation only: the tip of the branch left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_leaf_id: Option<EntryId>,
    /// Navigation only: the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<EntryId>,
    /// Undo only: the unrevert-point undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_entry_id: Option<EntryId>,
    /// Revert only: the first checkpoint whose changes were taken out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverted_entry_id: Option<EntryId>,
    /// Revert only: the last checkpoint of the range taken out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverted_to_entry_id: Option<EntryId>,
    /// Written by builds that record files' modes (docs/format.md "Trees"):
    /// `preRollbackTreeHash` and `workingTreeHash` hold each file's
    /// permission bits (`targetTreeHash` is the target's, which may be
    /// older). Absent: an older build's, whose trees say 0o644 or 0o755 for
    /// every file whatever it had.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub modes: bool,
    /// Git as the restore found it (in a git repository): what `undo` with
    /// `git` puts back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_rollback_git: Option<Git>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_rollback_git_index_tree_hash: Option<ObjectId>,
    /// A restore with `git` only: git as the restore leaves it (HEAD and the
    /// index moved to the target's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Git>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_index_tree_hash: Option<ObjectId>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record for UnrevertPoint {
    const TYPE: &'static str = TYPE_CUSTOM;
    const CUSTOM_TYPE: Option<&'static str> = Some(CUSTOM_UNREVERT_POINT);

    fn tree_hashes(&self) -> Vec<ObjectId> {
        present([
            self.pre_rollback_tree_hash,
            self.target_tree_hash,
            self.working_tree_hash,
            self.pre_rollback_git_index_tree_hash,
            self.git_index_tree_hash,
        ])
    }

    fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }
}

/// `custom` / `approval`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_tree_hash: Option<ObjectId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_tree_hash: Option<ObjectId>,
    #[serde(default)]
    pub snapshots_approved: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Written by builds that record files' modes (docs/format.md "Trees"):
    /// its trees hold each file's permission bits. Absent: an older
    /// build's, whose trees say 0o644 or 0o755 for every file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub modes: bool,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record for Approval {
    const TYPE: &'static str = TYPE_CUSTOM;
    const CUSTOM_TYPE: Option<&'static str> = Some(CUSTOM_APPROVAL);

    fn tree_hashes(&self) -> Vec<ObjectId> {
        present([self.approved_tree_hash, self.working_tree_hash])
    }

    fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }
}

/// `custom` / `navigation`: a `navigate_tree` that appended nothing else.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Navigation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_leaf_id: Option<EntryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<EntryId>,
    /// Written only as `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_files: Option<bool>,
    /// Not written by this build; read as the recorded state when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_tree_hash: Option<ObjectId>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record for Navigation {
    const TYPE: &'static str = TYPE_CUSTOM;
    const CUSTOM_TYPE: Option<&'static str> = Some(CUSTOM_NAVIGATION);

    fn tree_hashes(&self) -> Vec<ObjectId> {
        present([self.working_tree_hash])
    }

    fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }
}

/// A `label` entry: sets (or with a null `label`, clears) the label of `targetId`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Label {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<EntryId>,
    /// Always written, null to clear.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record for Label {
    const TYPE: &'static str = TYPE_LABEL;
    const CUSTOM_TYPE: Option<&'static str> = None;

    fn tree_hashes(&self) -> Vec<ObjectId> {
        Vec::new()
    }

    fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }
}

/// A `branch_summary` entry (pi's), for the branch a navigation left.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_id: Option<EntryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Written only as `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_files: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<BranchDetails>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A branch summary's `details`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_leaf_id: Option<EntryId>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record for BranchSummary {
    const TYPE: &'static str = TYPE_BRANCH_SUMMARY;
    const CUSTOM_TYPE: Option<&'static str> = None;

    fn tree_hashes(&self) -> Vec<ObjectId> {
        Vec::new()
    }

    fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }
}

fn is_tree_hash_key(key: &str) -> bool {
    let key = key.as_bytes();
    key.len() >= 8 && key[key.len() - 8..].eq_ignore_ascii_case(b"treehash")
}

/// Every string under a key ending in `TreeHash` (any case), at any depth: the rule gc
/// used before the records were typed, still applied to what a record does not know and
/// to a record that cannot be read (docs/format.md "Garbage collection").
pub fn collect_tree_hashes_map(map: &Map<String, Value>, out: &mut Vec<String>) {
    for (k, v) in map {
        collect_tree_hashes(v, is_tree_hash_key(k), out);
    }
}

/// [`collect_tree_hashes_map`] of any value; `under_tree_key` when `v` is under such a key.
pub fn collect_tree_hashes(v: &Value, under_tree_key: bool, out: &mut Vec<String>) {
    match v {
        Value::String(s) if under_tree_key => out.push(s.clone()),
        Value::Array(items) => {
            for item in items {
                collect_tree_hashes(item, under_tree_key, out);
            }
        }
        Value::Object(map) => collect_tree_hashes_map(map, out),
        _ => {}
    }
}

/// Every record kind rewind writes, for readers that take any of them.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyRecord {
    StepSnapshot(StepSnapshot),
    UnrevertPoint(UnrevertPoint),
    Approval(Approval),
    Navigation(Navigation),
    Label(Label),
    BranchSummary(BranchSummary),
}

impl AnyRecord {
    /// Reads `e` as whichever record it is: `None` for entries that are not rewind's
    /// (pi's messages, hosts' custom entries, unknown types).
    pub fn read(e: &Entry) -> Option<Result<AnyRecord, serde_json::Error>> {
        fn as_any<R: Record>(
            e: &Entry,
            wrap: fn(R) -> AnyRecord,
        ) -> Option<Result<AnyRecord, serde_json::Error>> {
            R::read(e).map(|r| r.map(wrap))
        }
        as_any(e, AnyRecord::StepSnapshot)
            .or_else(|| as_any(e, AnyRecord::UnrevertPoint))
            .or_else(|| as_any(e, AnyRecord::Approval))
            .or_else(|| as_any(e, AnyRecord::Navigation))
            .or_else(|| as_any(e, AnyRecord::Label))
            .or_else(|| as_any(e, AnyRecord::BranchSummary))
    }

    /// Whether `e` is of one of the kinds (without reading it).
    pub fn is_any_kind_of(e: &Entry) -> bool {
        StepSnapshot::is_kind_of(e)
            || UnrevertPoint::is_kind_of(e)
            || Approval::is_kind_of(e)
            || Navigation::is_kind_of(e)
            || Label::is_kind_of(e)
            || BranchSummary::is_kind_of(e)
    }

    pub fn tree_hashes(&self) -> Vec<ObjectId> {
        match self {
            AnyRecord::StepSnapshot(r) => r.tree_hashes(),
            AnyRecord::UnrevertPoint(r) => r.tree_hashes(),
            AnyRecord::Approval(r) => r.tree_hashes(),
            AnyRecord::Navigation(r) => r.tree_hashes(),
            AnyRecord::Label(r) => r.tree_hashes(),
            AnyRecord::BranchSummary(r) => r.tree_hashes(),
        }
    }

    pub fn extra(&self) -> &Map<String, Value> {
        match self {
            AnyRecord::StepSnapshot(r) => r.extra(),
            AnyRecord::UnrevertPoint(r) => r.extra(),
            AnyRecord::Approval(r) => r.extra(),
            AnyRecord::Navigation(r) => r.extra(),
            AnyRecord::Label(r) => r.extra(),
            AnyRecord::BranchSummary(r) => r.extra(),
        }
    }
}

impl Facts {
    /// From the entry's record; an entry that is not rewind's, or whose record cannot be
    /// read, records nothing. An unreadable record is not dropped in silence: it is logged
    /// here, and `rewind verify` lists it (`crate::verify`), since a checkpoint whose
    /// record does not read is a checkpoint the engine no longer offers.
    pub(super) fn of(e: &Entry) -> Facts {
        fn ok<R: Record>(e: &Entry) -> Option<R> {
            match R::read(e)? {
                Ok(r) => Some(r),
                Err(err) => {
                    tracing::warn!(id = %e.id, kind = R::CUSTOM_TYPE.unwrap_or(R::TYPE), %err,
                        "a rewind record cannot be read; it records nothing (`rewind verify` lists it)");
                    None
                }
            }
        }
        if let Some(s) = ok::<StepSnapshot>(e) {
            Facts {
                working_tree: s.snapshot_tree_hash,
                recorded_tree: s.snapshot_tree_hash,
                turn_index: s.turn_index,
                kind: s.kind,
                label: s.label,
                note: s.note,
                tool: s.tool.map(|t| t.name),
            }
        } else if let Some(u) = ok::<UnrevertPoint>(e) {
            Facts {
                working_tree: u.working_tree_hash,
                recorded_tree: u.working_tree_hash,
                turn_index: u.turn_index,
                kind: u.kind,
                label: None,
                note: None,
                tool: None,
            }
        } else if let Some(a) = ok::<Approval>(e) {
            Facts {
                working_tree: a.working_tree_hash,
                ..Facts::default()
            }
        } else if let Some(n) = ok::<Navigation>(e) {
            Facts {
                working_tree: n.working_tree_hash,
                ..Facts::default()
            }
        } else {
            Facts::default()
        }
    }
}

/// What an entry reads through its record: the typed records are this
/// file's, so reading them from an [`Entry`] is too.
impl Entry {
    /// This entry as record `R`, if it is one and reads (see `session::records`).
    pub fn record<R: Record>(&self) -> Option<R> {
        R::read(self)?.ok()
    }

    /// Whether this is one of the entries rewind writes (whether or not it reads).
    pub fn is_rewind_record(&self) -> bool {
        AnyRecord::is_any_kind_of(self)
    }

    /// A tree-recording entry's `diff`: what changed relative to the checkpoint at its
    /// parent. Read from the record on every call.
    pub fn diff(&self) -> Option<Diff> {
        if let Some(s) = self.record::<StepSnapshot>() {
            Some(s.diff)
        } else {
            self.record::<UnrevertPoint>().map(|u| u.diff)
        }
    }

    /// The trees this entry references, for gc's mark phase: those of its record (plus, so
    /// that an older gc keeps what a newer writer references, any tree hash under a field
    /// the record does not know whose name ends in `TreeHash`; a string there that is not
    /// a tree hash names no tree). Entries that are not rewind's reference none. An `Err`
    /// is a rewind record that cannot be read: the caller must not take it as referencing
    /// nothing.
    pub fn referenced_trees(&self) -> Result<Vec<ObjectId>, serde_json::Error> {
        let Some(record) = AnyRecord::read(self) else {
            return Ok(Vec::new());
        };
        let record = record?;
        let mut out = record.tree_hashes();
        let mut unknown = Vec::new();
        collect_tree_hashes_map(record.extra(), &mut unknown);
        out.extend(unknown.iter().filter_map(|h| ObjectId::from_hex(h).ok()));
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
