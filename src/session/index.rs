//! In-memory index of a session's entries: answers tree questions without rescanning the file.

use std::collections::HashMap;

use super::entry::{Entry, CUSTOM_STEP_SNAPSHOT};
use super::error::SessionError;
use super::ids::EntryId;
use super::records::Label;
use crate::store::ObjectId;

/// Entries in file order plus what is derived from them at insert time.
///
/// Everything per entry is kept in vectors parallel to `entries`, addressed by file position,
/// so lookups after `by_id` are plain indexing.
#[derive(Clone, Debug, Default)]
pub struct SessionIndex {
    entries: Vec<Entry>,
    by_id: HashMap<EntryId, usize>,
    parent: Vec<Option<usize>>,
    depth: Vec<usize>,
    children: Vec<Vec<usize>>,
    /// Latest tree-recording entry on root..=i (see `checkpoint_at`).
    checkpoint: Vec<Option<usize>>,
    first_snapshot: Option<usize>,
    /// targetId -> the latest `label` entry naming it.
    labels: HashMap<EntryId, usize>,
    /// customType -> the latest `custom` entry of that type.
    latest_custom: HashMap<String, usize>,
    latest_working_tree: Option<usize>,
    /// path -> positions of the tree-recording entries whose diff names it,
    /// in file order: "which entry first changed this file" without reading
    /// every entry of a long session.
    changed_by: HashMap<String, Vec<usize>>,
    /// Positions of tree-recording entries whose diff is too large to index
    /// path by path (a baseline names every file of the project): their
    /// diffs are read when a query's range includes them.
    bulk_changes: Vec<usize>,
}

/// A diff naming more paths than this is not indexed path by path (the
/// index would cost more memory than the session's few large diffs cost
/// time to read when asked).
const MAX_INDEXED_DIFF: usize = 1024;

impl SessionIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `e` as the new last entry (the leaf). Its id must be new and its parent, if any,
    /// already present: in a session file parents precede their children, which is also what
    /// makes cycles impossible.
    pub fn insert(&mut self, e: Entry) -> Result<(), SessionError> {
        if self.by_id.contains_key(&e.id) {
            return Err(SessionError::DuplicateId { id: e.id });
        }
        let parent = match &e.parent_id {
            None => None,
            Some(p) => match self.by_id.get(p) {
                Some(&pi) => Some(pi),
                None => return Err(SessionError::UnknownParent { id: p.clone() }),
            },
        };
        let i = self.entries.len();

        // An entry that claims to record a tree but names none cannot serve as a checkpoint,
        // so it is passed over rather than handed to callers as a checkpoint without a tree.
        let records_tree = e.is_tree_recording() && e.recorded_tree().is_some();
        let checkpoint = if records_tree {
            Some(i)
        } else {
            parent.and_then(|p| self.checkpoint[p])
        };
        if self.first_snapshot.is_none()
            && records_tree
            && e.custom_type.as_deref() == Some(CUSTOM_STEP_SNAPSHOT)
        {
            self.first_snapshot = Some(i);
        }
        if let Some(target) = e.record::<Label>().and_then(|l| l.target_id) {
            self.labels.insert(target, i);
        }
        if let Some(ct) = &e.custom_type {
            self.latest_custom.insert(ct.clone(), i);
        }
        if e.working_tree().is_some() {
            self.latest_working_tree = Some(i);
        }
        let diff = if records_tree { e.diff() } else { None };
        if diff
            .as_ref()
            .is_some_and(|d| d.paths().nth(MAX_INDEXED_DIFF).is_some())
        {
            self.bulk_changes.push(i);
        } else if let Some(diff) = &diff {
            for (_, path) in diff.paths() {
                match self.changed_by.get_mut(path) {
                    Some(list) => list.push(i),
                    None => {
                        self.changed_by.insert(path.to_owned(), vec![i]);
                    }
                }
            }
        }

        self.by_id.insert(e.id.clone(), i);
        self.parent.push(parent);
        self.depth.push(parent.map_or(0, |p| self.depth[p] + 1));
        self.children.push(Vec::new());
        if let Some(p) = parent {
            self.children[p].push(i);
        }
        self.checkpoint.push(checkpoint);
        self.entries.push(e);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, id: &EntryId) -> Option<&Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    pub fn contains(&self, id: &EntryId) -> bool {
        self.by_id.contains_key(id)
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The last entry inserted, wherever its parentId put it (pi's leaf rule).
    pub fn leaf(&self) -> Option<&Entry> {
        self.entries.last()
    }

    /// The entry at a position in file order.
    pub fn at(&self, position: usize) -> Option<&Entry> {
        self.entries.get(position)
    }

    /// Whether the entry at `position` records a checkpoint (a tree).
    pub fn records_tree(&self, position: usize) -> bool {
        self.checkpoint.get(position) == Some(&Some(position))
    }

    /// Positions (file order) of the tree-recording entries whose diff
    /// names `path`, except those in [`SessionIndex::bulk_changes`].
    pub fn changes_to(&self, path: &str) -> &[usize] {
        self.changed_by.get(path).map_or(&[], Vec::as_slice)
    }

    /// Positions (file order) of the tree-recording entries whose diffs are
    /// too large for [`SessionIndex::changes_to`]: read their diffs.
    pub fn bulk_changes(&self) -> &[usize] {
        &self.bulk_changes
    }

    /// Positions on the path from the root to `id`, root first; empty if
    /// `id` is unknown.
    pub fn path_positions(&self, id: &EntryId) -> Vec<usize> {
        let mut path = Vec::new();
        let mut cur = self.by_id.get(id).copied();
        while let Some(i) = cur {
            path.push(i);
            cur = self.parent[i];
        }
        path.reverse();
        path
    }

    /// The entry's parent, if it has one.
    pub fn parent_of(&self, id: &EntryId) -> Option<&Entry> {
        let i = *self.by_id.get(id)?;
        self.parent[i].map(|p| &self.entries[p])
    }

    /// Direct children of `id`, in file order.
    pub fn children(&self, id: &EntryId) -> Vec<&Entry> {
        match self.by_id.get(id) {
            Some(&i) => self.children[i].iter().map(|&c| &self.entries[c]).collect(),
            None => Vec::new(),
        }
    }

    /// Root first, ending with the entry itself; empty if `id` is unknown.
    pub fn path_to_root(&self, id: &EntryId) -> Vec<&Entry> {
        self.path_positions(id)
            .into_iter()
            .map(|i| &self.entries[i])
            .collect()
    }

    /// Whether `ancestor` is on the path from the root to `of`, inclusive.
    pub fn is_ancestor(&self, ancestor: &EntryId, of: &EntryId) -> bool {
        let (Some(&a), Some(&o)) = (self.by_id.get(ancestor), self.by_id.get(of)) else {
            return false;
        };
        // Climb only as far as the ancestor's depth: any deeper entry cannot be it.
        let mut cur = o;
        while self.depth[cur] > self.depth[a] {
            match self.parent[cur] {
                Some(p) => cur = p,
                None => return false,
            }
        }
        cur == a
    }

    /// The checkpoint at `id`: the latest tree-recording entry (with a recorded tree) on the
    /// path from the root to `id`, inclusive.
    pub fn checkpoint_at(&self, id: &EntryId) -> Option<&Entry> {
        let i = *self.by_id.get(id)?;
        self.checkpoint[i].map(|c| &self.entries[c])
    }

    /// The first step-snapshot (with a tree) in file order: the session's baseline.
    pub fn first_snapshot(&self) -> Option<&Entry> {
        self.first_snapshot.map(|i| &self.entries[i])
    }

    /// The label and note set on `id` by the latest `label` entry targeting it; None when
    /// there is none or the latest one cleared it (`label` null or absent).
    pub fn label_of(&self, id: &EntryId) -> Option<(String, Option<String>)> {
        let l: Label = self.entries[*self.labels.get(id)?].record()?;
        Some((l.label?, l.note))
    }

    /// The label and note of the latest `label` entry targeting `id`, as it
    /// wrote them (either may be null: a cleared label keeps its note); None
    /// when no `label` entry names `id`. A person's note survives a label
    /// left unset (docs/protocol.md "label").
    pub fn annotation_of(&self, id: &EntryId) -> Option<(Option<String>, Option<String>)> {
        let l: Label = self.entries[*self.labels.get(id)?].record()?;
        Some((l.label, l.note))
    }

    /// The latest `custom` entry of `custom_type` in file order, wherever it is in the tree.
    pub fn latest_of_custom_type(&self, custom_type: &str) -> Option<&Entry> {
        self.latest_custom
            .get(custom_type)
            .map(|&i| &self.entries[i])
    }

    /// The recorded state: `working_tree()` of the last entry in file order that has one.
    pub fn latest_working_tree(&self) -> Option<ObjectId> {
        self.entries[self.latest_working_tree?].working_tree()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn id(s: &str) -> EntryId {
        EntryId::from_input(s)
    }

    pub(crate) fn mk(v: Value) -> Entry {
        Entry::from_value(v).unwrap()
    }

    /// A tree id named after `name`, for lines that need a well-formed hash.
    fn tree(name: &str) -> ObjectId {
        ObjectId::of(name.as_bytes())
    }

    fn snap(id: &str, parent: Option<&str>, t: &str) -> Entry {
        mk(
            json!({"type":"custom","customType":"step-snapshot","id":id,"parentId":parent,
            "timestamp":"t","data":{"snapshotTreeHash":tree(t).to_hex()}}),
        )
    }
    fn unrevert(id: &str, parent: Option<&str>, t: &str) -> Entry {
        mk(
            json!({"type":"custom","customType":"unrevert-point","id":id,"parentId":parent,
            "timestamp":"t","data":{"preRollbackTreeHash":tree("zzz").to_hex(),
            "workingTreeHash":tree(t).to_hex()}}),
        )
    }
    fn msg(id: &str, parent: Option<&str>) -> Entry {
        mk(json!({"type":"message","id":id,"parentId":parent,"timestamp":"t","role":"user"}))
    }
    fn label(id: &str, parent: Option<&str>, target: &str, l: Value, note: Option<&str>) -> Entry {
        let mut v = json!({"type":"label","id":id,"parentId":parent,"timestamp":"t",
            "targetId":target,"label":l});
        if let Some(n) = note {
            v["note"] = json!(n);
        }
        mk(v)
    }

    #[test]
    fn changes_to_lists_the_tree_recording_entries_naming_a_path_in_file_order() {
        let mut ix = SessionIndex::new();
        let with_diff = |id: &str, parent: Option<&str>, ty: &str, diff: Value| {
            mk(
                json!({"type":"custom","customType":ty,"id":id,"parentId":parent,
                "timestamp":"t","data":{"snapshotTreeHash":tree("t").to_hex(),
                "workingTreeHash":tree("t").to_hex(),"diff":diff}}),
            )
        };
        for e in [
            with_diff("b", None, "step-snapshot", json!({"added":["a","x"]})),
            with_diff("s1", Some("b"), "step-snapshot", json!({"modified":["a"]})),
            // A host's custom entry with a diff-shaped payload is not a checkpoint.
            with_diff("h", Some("s1"), "host-thing", json!({"modified":["a"]})),
            with_diff(
                "u",
                Some("h"),
                "unrevert-point",
                json!({"deleted":["a"],"added":["y"]}),
            ),
        ] {
            ix.insert(e).unwrap();
        }
        assert_eq!(ix.changes_to("a"), [0, 1, 3]);
        assert_eq!(ix.changes_to("y"), [3]);
        assert!(ix.changes_to("nope").is_empty());
        assert!(ix.records_tree(0) && ix.records_tree(3) && !ix.records_tree(2));
        assert_eq!(ix.path_positions(&id("u")), [0, 1, 2, 3]);
        assert_eq!(ix.at(1).unwrap().id, "s1");
    }

    fn cp<'a>(ix: &'a SessionIndex, of: &str) -> Option<&'a str> {
        ix.checkpoint_at(&id(of)).map(|e| e.id.as_str())
    }

    /// base ─ m1 ─ s1 ─ m2 ─ l1(label on s1)
    ///          └─ m3 ─ u1(unrevert) ─ m4
    ///   └ nav (navigation marker carrying workingTreeHash, child of base)
    fn sample() -> SessionIndex {
        let mut ix = SessionIndex::new();
        for e in [
            snap("base", None, "t0"),
            msg("m1", Some("base")),
            snap("s1", Some("m1"), "t1"),
            msg("m2", Some("s1")),
            label("l1", Some("m2"), "s1", json!("first"), None),
            msg("m3", Some("m1")),
            unrevert("u1", Some("m3"), "t0b"),
            msg("m4", Some("u1")),
            mk(
                json!({"type":"custom","customType":"navigation","id":"nav","parentId":"base",
                "timestamp":"t","data":{"workingTreeHash":tree("t0").to_hex()}}),
            ),
        ] {
            ix.insert(e).unwrap();
        }
        ix
    }

    #[test]
    fn checkpoint_at_across_branches() {
        let ix = sample();
        assert_eq!(cp(&ix, "base"), Some("base"));
        assert_eq!(cp(&ix, "m1"), Some("base"));
        assert_eq!(cp(&ix, "s1"), Some("s1"));
        assert_eq!(cp(&ix, "m2"), Some("s1"));
        assert_eq!(cp(&ix, "l1"), Some("s1"));
        // The other branch from m1 never saw s1.
        assert_eq!(cp(&ix, "m3"), Some("base"));
        assert_eq!(cp(&ix, "u1"), Some("u1"));
        assert_eq!(
            ix.checkpoint_at(&id("u1")).unwrap().recorded_tree(),
            Some(tree("t0b"))
        );
        assert_eq!(cp(&ix, "m4"), Some("u1"));
        assert_eq!(cp(&ix, "nav"), Some("base"));
        assert_eq!(cp(&ix, "nope"), None);
        assert_eq!(ix.first_snapshot().unwrap().id, "base");
        assert_eq!(ix.leaf().unwrap().id, "nav");
    }

    #[test]
    fn entries_before_any_snapshot_have_no_checkpoint() {
        let mut ix = SessionIndex::new();
        assert!(ix.is_empty());
        assert!(ix.leaf().is_none() && ix.first_snapshot().is_none());
        ix.insert(msg("m", None)).unwrap();
        // A step-snapshot without a tree hash is not a checkpoint.
        ix.insert(mk(
            json!({"type":"custom","customType":"step-snapshot","id":"bad",
            "parentId":"m","timestamp":"t","data":{}}),
        ))
        .unwrap();
        assert_eq!(cp(&ix, "m"), None);
        assert_eq!(cp(&ix, "bad"), None);
        assert!(ix.first_snapshot().is_none());
        ix.insert(snap("s", Some("bad"), "t")).unwrap();
        assert_eq!(ix.first_snapshot().unwrap().id, "s");
        assert_eq!(ix.len(), 3);
    }

    #[test]
    fn tree_queries() {
        let ix = sample();
        let ids = |v: Vec<&Entry>| v.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(ix.path_to_root(&id("m4"))),
            ["base", "m1", "m3", "u1", "m4"]
        );
        assert_eq!(ids(ix.path_to_root(&id("base"))), ["base"]);
        assert!(ix.path_to_root(&id("nope")).is_empty());
        assert_eq!(ids(ix.children(&id("m1"))), ["s1", "m3"]);
        assert_eq!(ids(ix.children(&id("base"))), ["m1", "nav"]);
        assert!(ix.children(&id("m4")).is_empty());
        assert!(ix.children(&id("nope")).is_empty());
        assert_eq!(ix.parent_of(&id("s1")).unwrap().id, "m1");
        assert!(ix.parent_of(&id("base")).is_none());

        assert!(ix.is_ancestor(&id("base"), &id("m4")));
        assert!(ix.is_ancestor(&id("m4"), &id("m4")));
        assert!(ix.is_ancestor(&id("m1"), &id("l1")));
        assert!(!ix.is_ancestor(&id("s1"), &id("m4")));
        assert!(!ix.is_ancestor(&id("m4"), &id("m1")));
        assert!(!ix.is_ancestor(&id("nav"), &id("m1")));
        assert!(!ix.is_ancestor(&id("nope"), &id("m1")));
        assert!(!ix.is_ancestor(&id("m1"), &id("nope")));

        assert!(ix.contains(&id("u1")));
        assert_eq!(ix.get(&id("u1")).unwrap().entry_type, "custom");
        assert_eq!(ix.entries().len(), 9);
        assert_eq!(ix.entries()[3].id, "m2");
    }

    #[test]
    fn insert_rejects_duplicates_and_unknown_parents() {
        let mut ix = sample();
        let err = ix.insert(msg("m1", Some("base"))).unwrap_err();
        assert!(matches!(err, SessionError::DuplicateId { id } if id == "m1"));
        let err = ix.insert(msg("new", Some("ghost"))).unwrap_err();
        assert!(matches!(err, SessionError::UnknownParent { id } if id == "ghost"));
        // Its own id does not count as a known parent.
        let err = ix.insert(msg("self", Some("self"))).unwrap_err();
        assert!(matches!(err, SessionError::UnknownParent { .. }));
        assert_eq!(ix.len(), 9);
        assert_eq!(ix.leaf().unwrap().id, "nav");
    }

    #[test]
    fn labels_set_clear_and_note() {
        let mut ix = sample();
        assert_eq!(ix.label_of(&id("s1")), Some(("first".into(), None)));
        assert_eq!(ix.label_of(&id("m1")), None);
        ix.insert(label(
            "l2",
            Some("nav"),
            "s1",
            json!("renamed"),
            Some("why"),
        ))
        .unwrap();
        assert_eq!(
            ix.label_of(&id("s1")),
            Some(("renamed".into(), Some("why".into())))
        );
        ix.insert(label("l3", Some("l2"), "s1", Value::Null, None))
            .unwrap();
        assert_eq!(ix.label_of(&id("s1")), None);
        assert_eq!(ix.annotation_of(&id("s1")), Some((None, None)));
        assert_eq!(ix.annotation_of(&id("m1")), None);
        ix.insert(label("l4", Some("l3"), "s1", json!("again"), None))
            .unwrap();
        // The latest label entry wins as a whole: its missing note clears the old one.
        assert_eq!(ix.label_of(&id("s1")), Some(("again".into(), None)));
        // A label entry records no tree: it inherits its parent's checkpoint.
        assert_eq!(cp(&ix, "l4"), Some("base"));
    }

    #[test]
    fn latest_custom_and_working_tree() {
        let mut ix = sample();
        assert_eq!(ix.latest_working_tree(), Some(tree("t0")));
        assert!(ix.latest_of_custom_type("approval").is_none());
        assert_eq!(ix.latest_of_custom_type("step-snapshot").unwrap().id, "s1");
        ix.insert(mk(
            json!({"type":"custom","customType":"approval","id":"a1","parentId":"m2",
            "timestamp":"t","data":{"approvedTreeHash":tree("t1").to_hex()}}),
        ))
        .unwrap();
        ix.insert(msg("m5", Some("a1"))).unwrap();
        ix.insert(mk(
            json!({"type":"custom","customType":"approval","id":"a2","parentId":"m4",
            "timestamp":"t","data":{"approvedTreeHash":tree("t0b").to_hex()}}),
        ))
        .unwrap();
        assert_eq!(ix.latest_of_custom_type("approval").unwrap().id, "a2");
        // Messages and approvals carry no working tree; the last carrier still counts.
        assert_eq!(ix.latest_working_tree(), Some(tree("t0")));
        ix.insert(snap("s2", Some("m5"), "t2")).unwrap();
        assert_eq!(ix.latest_working_tree(), Some(tree("t2")));
        ix.insert(unrevert("u2", Some("s2"), "t3")).unwrap();
        assert_eq!(ix.latest_working_tree(), Some(tree("t3")));
    }

    /// Kinds of entries for the random tree: 0 step-snapshot, 1 unrevert-point,
    /// 2 message, 3 label, 4 broken step-snapshot (no tree), 5 unknown type.
    fn build(spec: &[(Option<prop::sample::Index>, u8)]) -> SessionIndex {
        let mut ix = SessionIndex::new();
        for (n, (parent, kind)) in spec.iter().enumerate() {
            let id = format!("e{n}");
            let parent = match parent {
                Some(p) if n > 0 => Some(format!("e{}", p.index(n))),
                _ => None,
            };
            let p = parent.as_deref();
            let e = match kind {
                0 => snap(&id, p, &format!("tree{n}")),
                1 => unrevert(&id, p, &format!("tree{n}")),
                2 => msg(&id, p),
                3 => label(&id, p, "e0", json!("l"), None),
                4 => mk(json!({"type":"custom","customType":"step-snapshot","id":id,
                    "parentId":p,"timestamp":"t","data":{"diff":{}}})),
                _ => mk(
                    json!({"type":"mystery","id":id,"parentId":p,"timestamp":"t",
                    "data":{"snapshotTreeHash":"not-a-checkpoint"}}),
                ),
            };
            ix.insert(e).unwrap();
        }
        ix
    }

    /// The definition, walked naively over parentIds in the raw entries.
    fn naive_checkpoint(ix: &SessionIndex, id: &str) -> Option<String> {
        let mut cur = Some(id.to_owned());
        while let Some(c) = cur {
            let e = ix.entries().iter().find(|e| e.id == *c)?;
            let ct = e.raw.get("customType").and_then(Value::as_str);
            let data = e.raw.get("data");
            let tree = match (e.entry_type.as_str(), ct) {
                ("custom", Some("step-snapshot")) => data.and_then(|d| d.get("snapshotTreeHash")),
                ("custom", Some("unrevert-point")) => data.and_then(|d| d.get("workingTreeHash")),
                _ => None,
            };
            if tree.is_some() {
                return Some(c);
            }
            cur = e
                .raw
                .get("parentId")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        None
    }

    proptest! {
        #[test]
        fn checkpoint_at_matches_naive_walk(
            spec in prop::collection::vec((prop::option::weighted(0.9, any::<prop::sample::Index>()), 0u8..6), 1..60)
        ) {
            let ix = build(&spec);
            for e in ix.entries() {
                prop_assert_eq!(cp(&ix, e.id.as_str()).map(str::to_owned), naive_checkpoint(&ix, e.id.as_str()));
                // path_to_root agrees with is_ancestor.
                let path = ix.path_to_root(&e.id);
                for a in ix.entries() {
                    prop_assert_eq!(ix.is_ancestor(&a.id, &e.id), path.iter().any(|p| p.id == a.id));
                }
            }
        }
    }
}
