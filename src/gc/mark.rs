//! The mark phase: the trees each session's records name (and its restore
//! journal's), walked down to every object they reach, plus the blobs the
//! persisted stat caches vouch for — a scan reuses a cache hit's blob without
//! touching the store (docs/architecture.md rule 10).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::Value;

use super::{Blockers, GcError};
use crate::session::records::{collect_tree_hashes, collect_tree_hashes_map};
use crate::session::Entry;
use crate::store::{empty_tree_id, EntryKind, Layout, ObjectId, Store, StoreError};
use crate::working_copy::StatCache;

/// Adds the trees `e` references to `out` (see [`Entry::referenced_trees`]). A rewind
/// record that cannot be read as its type is not taken to reference nothing: every string
/// under a key ending in `TreeHash` anywhere in its line is kept, the rule gc applied to
/// every entry before the records were typed.
pub(crate) fn referenced_trees(e: &Entry, session: &Path, out: &mut Vec<ObjectId>) {
    match e.referenced_trees() {
        Ok(trees) => out.extend(trees),
        Err(err) => {
            tracing::warn!(%err, id = %e.id, path = %session.display(),
                "a rewind record cannot be read; keeping every tree it may name");
            let mut hashes = Vec::new();
            collect_tree_hashes_map(&e.raw, &mut hashes);
            parse_hashes(session, hashes, out);
        }
    }
}

/// Adds the trees the restore journal beside `session` names to `out`;
/// whether there is a readable one (it protects the session: its next open
/// completes the restore).
pub(super) fn journal_trees(session: &Path, out: &mut Vec<ObjectId>) -> Result<bool, GcError> {
    let journal = Layout::session_journal(session);
    match fs::read(&journal) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => {
                let mut hashes = Vec::new();
                collect_tree_hashes(&v, false, &mut hashes);
                parse_hashes(session, hashes, out);
                Ok(true)
            }
            // The engine drops an unreadable journal on open; it keeps nothing alive.
            Err(err) => {
                tracing::warn!(%err, path = %journal.display(), "gc ignores an unreadable restore journal");
                Ok(false)
            }
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(GcError::io("reading restore journal", &journal, e)),
    }
}

/// The tree ids among strings found by key in untyped JSON (a record that does not read,
/// a journal) that `session` names; the others name no tree.
fn parse_hashes(session: &Path, hashes: Vec<String>, out: &mut Vec<ObjectId>) {
    for h in hashes {
        match ObjectId::from_hex(&h) {
            Ok(id) => out.push(id),
            Err(_) => {
                tracing::debug!(path = %session.display(), value = %h, "not a tree hash; ignored");
            }
        }
    }
}

/// `trees`, each once, in order.
pub(super) fn tree_ids(trees: Vec<ObjectId>) -> Vec<ObjectId> {
    let mut seen = HashSet::with_capacity(trees.len());
    trees.into_iter().filter(|id| seen.insert(*id)).collect()
}

/// What a walk reached: every object id, and the trees already walked.
#[derive(Default)]
pub(super) struct Reach {
    pub objects: HashSet<ObjectId>,
    trees: HashSet<ObjectId>,
}

type Children = Rc<[(ObjectId, bool)]>;

/// Walks trees; with `memoize`, remembers each tree's children so per-session walks over
/// shared directories read every tree object once.
pub(super) struct Walker<'a> {
    store: &'a Store,
    pub memoize: bool,
    pub(super) memo: HashMap<ObjectId, Children>,
}

impl<'a> Walker<'a> {
    pub fn new(store: &'a Store) -> Self {
        Walker {
            store,
            memoize: false,
            memo: HashMap::new(),
        }
    }

    pub fn reach_new(
        &mut self,
        roots: &[ObjectId],
        blockers: &mut Blockers,
    ) -> Result<HashSet<ObjectId>, GcError> {
        let mut reach = Reach::default();
        self.reach(roots, &mut reach, blockers)?;
        Ok(reach.objects)
    }

    /// Adds the trees `roots` and everything under them to `reach`.
    pub fn reach(
        &mut self,
        roots: &[ObjectId],
        reach: &mut Reach,
        blockers: &mut Blockers,
    ) -> Result<(), GcError> {
        let mut stack: Vec<ObjectId> = roots.to_vec();
        while let Some(tree) = stack.pop() {
            if !reach.trees.insert(tree) {
                continue;
            }
            reach.objects.insert(tree);
            for &(id, is_tree) in self.children(&tree, blockers)?.iter() {
                if is_tree {
                    stack.push(id);
                } else {
                    reach.objects.insert(id);
                }
            }
        }
        Ok(())
    }

    fn children(&mut self, tree: &ObjectId, blockers: &mut Blockers) -> Result<Children, GcError> {
        if let Some(c) = self.memo.get(tree) {
            return Ok(c.clone());
        }
        // Never needs to be stored (the store treats it as always present).
        if *tree == empty_tree_id() {
            return Ok(Rc::from([]));
        }
        let children: Children = match self.store.get_tree(tree) {
            Ok(t) => t
                .entries
                .values()
                .filter(|e| e.has_object())
                .map(|e| (e.id, e.kind == EntryKind::Tree))
                .collect(),
            Err(StoreError::NotFound { .. }) => {
                tracing::warn!(tree = %tree, "gc: a referenced tree is missing from the store");
                Rc::from([])
            }
            Err(err @ (StoreError::Corrupt { .. } | StoreError::BadTree { .. })) => {
                blockers.add(format!("tree {tree} cannot be read: {err}"));
                Rc::from([])
            }
            Err(err) => return Err(err.into()),
        };
        if self.memoize {
            self.memo.insert(*tree, children.clone());
        }
        Ok(children)
    }
}

/// Blob ids named by the persisted stat caches in `<store>/cache/`.
pub(super) fn stat_cache_blobs(store: &Store) -> Result<HashSet<ObjectId>, GcError> {
    let mut out = HashSet::new();
    for path in stat_cache_paths(store)? {
        out.extend(StatCache::load(&path).object_ids());
    }
    Ok(out)
}

/// Every stat cache file of the store (`cache/stat-*.bin`).
pub(crate) fn stat_cache_paths(store: &Store) -> Result<Vec<PathBuf>, GcError> {
    let dir = store.layout().cache_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(GcError::io("listing stat caches", &dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| GcError::io("listing stat caches", &dir, e))?;
        let path = entry.path();
        let is_cache = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(Layout::is_stat_cache_name);
        if is_cache {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}
