//! One line of a session file: the header and the entries after it. What an entry
//! reads through its typed record (`record`, `diff`, `referenced_trees`, the facts
//! it caches when parsed) is `records.rs`'s, beside the record types.

use serde_json::{Map, Value};
use std::path::PathBuf;

use super::error::SessionError;
use super::ids::{new_session_id, now_iso, EntryId};
use crate::store::ObjectId;

/// The session format version rewind reads and writes (pi's v3).
pub const SESSION_VERSION: u32 = 3;

pub const TYPE_SESSION: &str = "session";
pub const TYPE_CUSTOM: &str = "custom";
pub const TYPE_MESSAGE: &str = "message";
pub const TYPE_LABEL: &str = "label";
pub const TYPE_BRANCH_SUMMARY: &str = "branch_summary";

pub const CUSTOM_STEP_SNAPSHOT: &str = "step-snapshot";
pub const CUSTOM_UNREVERT_POINT: &str = "unrevert-point";
pub const CUSTOM_APPROVAL: &str = "approval";
pub const CUSTOM_NAVIGATION: &str = "navigation";

/// The fields every entry line starts with, in the order rewind writes them. Other fields
/// follow in map order. `serde_json::Map` is a BTreeMap in this build (no `preserve_order`),
/// so lines are assembled by hand to keep this order readable and stable.
pub(super) const LEADING_KEYS: [&str; 5] = ["type", "customType", "id", "parentId", "timestamp"];
const HEADER_KEYS: [&str; 5] = ["type", "version", "id", "timestamp", "cwd"];

/// An entry as read from, or appended to, the session file.
///
/// `raw` is the whole line and is what `to_line` writes; the typed fields are copies of its
/// members, so fields rewind does not know (and entry types it does not know) survive.
/// rewind's own records are read from `raw` through the types in `session::records`.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub entry_type: String,
    /// `customType`, for `custom` entries only.
    pub custom_type: Option<String>,
    pub timestamp: String,
    pub raw: Map<String, Value>,
    /// What every query needs from a tree-recording entry, read once from its record so
    /// that a checkpoint lookup does not parse the record's (possibly huge) diff again.
    facts: Facts,
}

/// See [`Entry::facts`](Entry).
///
/// Read from the entry's record by `Facts::of`, which is `records.rs`'s (it
/// reads the typed records).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Facts {
    pub(super) recorded_tree: Option<ObjectId>,
    pub(super) working_tree: Option<ObjectId>,
    pub(super) turn_index: u64,
    /// A step-snapshot's or an unrevert-point's `kind`.
    pub(super) kind: Option<String>,
    /// A step-snapshot's `label`.
    pub(super) label: Option<String>,
    /// A step-snapshot's `note`.
    pub(super) note: Option<String>,
    /// A step-snapshot's `tool.name`.
    pub(super) tool: Option<String>,
}

impl Entry {
    /// `raw["data"]`.
    pub fn data(&self) -> Option<&Value> {
        self.raw.get("data")
    }

    fn is_custom(&self, custom_type: &str) -> bool {
        self.entry_type == TYPE_CUSTOM && self.custom_type.as_deref() == Some(custom_type)
    }

    /// A step-snapshot or an unrevert-point: the entries that record a checkpoint.
    pub fn is_tree_recording(&self) -> bool {
        self.is_custom(CUSTOM_STEP_SNAPSHOT) || self.is_custom(CUSTOM_UNREVERT_POINT)
    }

    /// The checkpoint this entry records: a step-snapshot's `snapshotTreeHash`, an
    /// unrevert-point's `workingTreeHash` (the tree the restore left on disk).
    pub fn recorded_tree(&self) -> Option<ObjectId> {
        self.facts.recorded_tree
    }

    /// A tree-recording entry's `turnIndex` (0 for other entries).
    pub fn turn_index(&self) -> u64 {
        self.facts.turn_index
    }

    /// A tree-recording entry's `kind` (`"baseline"`, `"turn"`, ..., or the operation of
    /// an unrevert-point).
    pub fn record_kind(&self) -> Option<&str> {
        self.facts.kind.as_deref()
    }

    /// The `label` a step-snapshot was taken with.
    pub fn snapshot_label(&self) -> Option<&str> {
        self.facts.label.as_deref()
    }

    /// The `note` a step-snapshot was taken with.
    pub fn snapshot_note(&self) -> Option<&str> {
        self.facts.note.as_deref()
    }

    /// The name of the tool a `tool` step-snapshot was taken around.
    pub fn snapshot_tool(&self) -> Option<&str> {
        self.facts.tool.as_deref()
    }

    /// The recorded state (the working tree the sidecar last observed or wrote) as of this
    /// entry, if the entry carries it: a step-snapshot's `snapshotTreeHash`, otherwise the
    /// `data.workingTreeHash` of the sidecar's own entries (unrevert-points, approvals,
    /// navigation markers). A host's entry cannot set it: its `data` is the host's.
    pub fn working_tree(&self) -> Option<ObjectId> {
        self.facts.working_tree
    }

    /// Compact JSON of `raw`, no trailing newline.
    pub fn to_line(&self) -> String {
        write_object(&self.raw, &LEADING_KEYS)
    }

    /// Reads an entry from a parsed line: an object with string `type`, `id` and `timestamp`,
    /// and a `parentId` that is a string, null or absent.
    pub fn from_value(v: Value) -> Result<Entry, SessionError> {
        let Value::Object(raw) = v else {
            return Err(malformed("not a JSON object"));
        };
        let entry_type = required_str(&raw, "type")?;
        let id = EntryId::from_input(required_str(&raw, "id")?);
        let timestamp = required_str(&raw, "timestamp")?;
        let parent_id = match raw.get("parentId") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(EntryId::from_input(p.as_str())),
            Some(_) => return Err(malformed("\"parentId\" is neither a string nor null")),
        };
        let custom_type = if entry_type == TYPE_CUSTOM {
            raw.get("customType")
                .and_then(Value::as_str)
                .map(str::to_owned)
        } else {
            None
        };
        let mut e = Entry {
            id,
            parent_id,
            entry_type,
            custom_type,
            timestamp,
            raw,
            facts: Facts::default(),
        };
        e.facts = Facts::of(&e);
        Ok(e)
    }
}

/// An entry to append. `SessionLog::append` fills in `id` (when None), `timestamp`, and
/// writes `parentId` as given (None is null: the caller picks the default parent).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewEntry {
    pub entry_type: String,
    pub custom_type: Option<String>,
    /// The host's id, else a generated 8-hex one.
    pub id: Option<EntryId>,
    pub parent_id: Option<EntryId>,
    /// Extra top-level fields (`data`, `targetId`, `label`, `role`, ...). Keys that name the
    /// fields above (`type`, `customType`, `id`, `parentId`, `timestamp`) are ignored:
    /// the typed fields own them, and a line must not carry a key twice.
    pub fields: Map<String, Value>,
}

impl NewEntry {
    /// A `custom` entry with `customType` and `data`.
    pub fn custom(custom_type: &str, parent_id: Option<EntryId>, data: Value) -> NewEntry {
        let mut fields = Map::new();
        fields.insert("data".to_owned(), data);
        NewEntry {
            entry_type: TYPE_CUSTOM.to_owned(),
            custom_type: Some(custom_type.to_owned()),
            id: None,
            parent_id,
            fields,
        }
    }

    /// Builds the entry's line as an object, with `id` and `timestamp` decided.
    pub(crate) fn into_raw(self, id: &EntryId, timestamp: &str) -> Map<String, Value> {
        let mut raw = Map::new();
        raw.insert("type".to_owned(), Value::String(self.entry_type));
        if let Some(ct) = self.custom_type {
            raw.insert("customType".to_owned(), Value::String(ct));
        }
        raw.insert("id".to_owned(), Value::String(id.as_str().to_owned()));
        raw.insert(
            "parentId".to_owned(),
            self.parent_id
                .map_or(Value::Null, |p| Value::String(p.into_string())),
        );
        raw.insert("timestamp".to_owned(), Value::String(timestamp.to_owned()));
        for (k, v) in self.fields {
            if !LEADING_KEYS.contains(&k.as_str()) {
                raw.insert(k, v);
            }
        }
        raw
    }
}

/// Line 1 of a session file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub id: String,
    pub timestamp: String,
    pub cwd: String,
}

impl Header {
    /// A fresh v3 header: new session id, now.
    pub fn new(cwd: &str) -> Header {
        Header {
            version: SESSION_VERSION,
            id: new_session_id(),
            timestamp: now_iso(),
            cwd: cwd.to_owned(),
        }
    }

    /// `{"type":"session","version":3,"id":..,"timestamp":..,"cwd":..}`, no newline.
    pub fn to_line(&self) -> String {
        let mut m = Map::new();
        m.insert("type".to_owned(), Value::from(TYPE_SESSION));
        m.insert("version".to_owned(), Value::from(self.version));
        m.insert("id".to_owned(), Value::from(self.id.as_str()));
        m.insert("timestamp".to_owned(), Value::from(self.timestamp.as_str()));
        m.insert("cwd".to_owned(), Value::from(self.cwd.as_str()));
        write_object(&m, &HEADER_KEYS)
    }
}

/// Compact JSON of `m` with `leading` keys first (those present), the rest in map order.
fn write_object(m: &Map<String, Value>, leading: &[&str]) -> String {
    let mut out = String::with_capacity(128);
    out.push('{');
    let mut push = |k: &str, v: &Value| {
        if out.len() > 1 {
            out.push(',');
        }
        // Value's Display is compact JSON and cannot fail, unlike serde_json::to_string.
        out.push_str(&Value::from(k).to_string());
        out.push(':');
        out.push_str(&v.to_string());
    };
    for k in leading {
        if let Some(v) = m.get(*k) {
            push(k, v);
        }
    }
    for (k, v) in m {
        if !leading.contains(&k.as_str()) {
            push(k, v);
        }
    }
    out.push('}');
    out
}

fn malformed(reason: &str) -> SessionError {
    SessionError::Malformed {
        path: PathBuf::new(),
        line: 0,
        reason: reason.to_owned(),
    }
}

fn required_str(raw: &Map<String, Value>, key: &str) -> Result<String, SessionError> {
    match raw.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(malformed(&format!("\"{key}\" is not a string"))),
        None => Err(malformed(&format!("missing \"{key}\""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Entry {
        Entry::from_value(v).unwrap()
    }

    /// A tree id named after `name`, for lines that need a well-formed hash.
    fn tree(name: &str) -> ObjectId {
        ObjectId::of(name.as_bytes())
    }

    #[test]
    fn from_value_reads_required_fields() {
        let e = entry(
            json!({"type":"custom","customType":"step-snapshot","id":"a1b2c3d4",
            "parentId":null,"timestamp":"2026-11-21T19:12:00.123Z","data":{"snapshotTreeHash":tree("t1").to_hex()}}),
        );
        assert_eq!(e.id, "a1b2c3d4");
        assert_eq!(e.parent_id, None);
        assert_eq!(e.entry_type, "custom");
        assert_eq!(e.custom_type.as_deref(), Some("step-snapshot"));
        assert_eq!(e.timestamp, "2026-11-21T19:12:00.123Z");
        assert!(e.is_tree_recording());
        assert_eq!(e.recorded_tree(), Some(tree("t1")));
        assert_eq!(e.working_tree(), Some(tree("t1")));

        // parentId may be absent.
        let e = entry(json!({"type":"x","id":"i","timestamp":"t"}));
        assert_eq!(e.parent_id, None);
        let e = entry(json!({"type":"x","id":"i","timestamp":"t","parentId":"p"}));
        assert_eq!(e.parent_id, Some(EntryId::from_input("p")));
    }

    #[test]
    fn from_value_rejects_bad_shapes() {
        for bad in [
            json!([1]),
            json!("s"),
            json!({"id":"i","timestamp":"t"}),
            json!({"type":1,"id":"i","timestamp":"t"}),
            json!({"type":"x","timestamp":"t"}),
            json!({"type":"x","id":5,"timestamp":"t"}),
            json!({"type":"x","id":"i"}),
            json!({"type":"x","id":"i","timestamp":"t","parentId":3}),
        ] {
            let err = Entry::from_value(bad.clone()).unwrap_err();
            assert!(
                matches!(err, SessionError::Malformed { line: 0, .. }),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn recorded_and_working_trees() {
        let up = entry(
            json!({"type":"custom","customType":"unrevert-point","id":"u","timestamp":"t",
            "data":{"preRollbackTreeHash":tree("pre").to_hex(),"workingTreeHash":tree("w").to_hex()}}),
        );
        assert!(up.is_tree_recording());
        assert_eq!(up.recorded_tree(), Some(tree("w")));
        assert_eq!(up.working_tree(), Some(tree("w")));

        let nav = entry(
            json!({"type":"custom","customType":"navigation","id":"n","timestamp":"t",
            "data":{"workingTreeHash":tree("w2").to_hex()}}),
        );
        assert!(!nav.is_tree_recording());
        assert_eq!(nav.recorded_tree(), None);
        assert_eq!(nav.working_tree(), Some(tree("w2")));

        let msg = entry(json!({"type":"message","id":"m","timestamp":"t","role":"user"}));
        assert_eq!(msg.data(), None);
        assert_eq!(msg.working_tree(), None);

        // customType only counts on custom entries.
        let odd = entry(
            json!({"type":"message","customType":"step-snapshot","id":"m",
            "timestamp":"t","data":{"snapshotTreeHash":tree("x").to_hex()}}),
        );
        assert_eq!(odd.custom_type, None);
        assert!(!odd.is_tree_recording());
    }

    #[test]
    fn to_line_puts_known_keys_first_and_keeps_the_rest() {
        let e = entry(
            json!({"zeta":1,"data":{"b":1,"a":[1,"x\ny"]},"timestamp":"t",
            "parentId":null,"id":"i","customType":"c","type":"custom","alpha":"\u{2028}"}),
        );
        let line = e.to_line();
        assert!(
            line.starts_with(
                r#"{"type":"custom","customType":"c","id":"i","parentId":null,"timestamp":"t","#
            ),
            "{line}"
        );
        assert!(!line.contains('\n'));
        let back: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, Value::Object(e.raw.clone()));
        assert_eq!(entry(back), e);
    }

    #[test]
    fn new_entry_reserved_keys_do_not_override() {
        let mut n = NewEntry::custom(
            "approval",
            Some(EntryId::from_input("p")),
            json!({"approvedTreeHash":tree("h").to_hex()}),
        );
        n.fields.insert("id".into(), json!("evil"));
        n.fields.insert("type".into(), json!("evil"));
        n.fields.insert("message".into(), json!("ok"));
        let raw = n.into_raw(&EntryId::from_input("abcd0123"), "ts");
        let e = Entry::from_value(Value::Object(raw)).unwrap();
        assert_eq!(e.id, "abcd0123");
        assert_eq!(e.entry_type, "custom");
        assert_eq!(e.parent_id, Some(EntryId::from_input("p")));
        assert_eq!(e.raw["message"], json!("ok"));
    }

    #[test]
    fn header_line() {
        let h = Header {
            version: 3,
            id: "s1".into(),
            timestamp: "2026-11-21T19:12:00.123Z".into(),
            cwd: "/abs/project".into(),
        };
        assert_eq!(
            h.to_line(),
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-11-21T19:12:00.123Z","cwd":"/abs/project"}"#
        );
        let fresh = Header::new("/p");
        assert_eq!(fresh.version, 3);
        assert_eq!(fresh.cwd, "/p");
    }
}
