//! `verify` (the method and `rewind verify`): reads the whole store and says what is wrong,
//! never repairing anything (docs/reliability.md).
//!
//! - every session file the store knows (`sessions/*.jsonl` and registered ones) parses,
//!   and every record rewind wrote in it reads as its type: one that does not records
//!   nothing for the engine (docs/architecture.md "Glossary": checkpoint), so a checkpoint
//!   would be gone from every list without a word;
//! - every tree its entries and its restore journal name, every tree below those and every
//!   blob they hold is stored and hashes to its id;
//! - every object a stat cache vouches for is stored and hashes right;
//! - every other stored object (loose or packed) decodes and hashes right.
//!
//! It holds the store's writer guard, so no gc deletes objects while it reads (a deletion
//! in the middle would look like a missing object).

use std::collections::HashSet;

use serde_json::Value;

use crate::gc::{self, GcError};
use crate::session::records::{collect_tree_hashes, AnyRecord};
use crate::session::SessionLog;
use crate::store::{EntryKind, Layout, ObjectId, Store, StoreError};
use crate::working_copy::StatCache;

/// What `verify` found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum VerifyProblemKind {
    /// A session file that does not parse, or a record rewind wrote in one that does
    /// not read as its type (a field of the wrong type, a tree hash that is not one).
    Session,
    /// An object a session, a journal or a stat cache names is not stored.
    MissingObject,
    /// A stored object that does not decode to content with its id (or a
    /// tree that does not decode as a tree).
    CorruptObject,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct VerifyProblem {
    pub kind: VerifyProblemKind,
    /// The object id or the file the problem is about.
    pub subject: String,
    /// Who needs it (a session file, a stat cache, a tree) and the error.
    pub detail: String,
}

#[derive(Debug, Default, Clone)]
pub struct VerifyResult {
    /// No problem found.
    pub ok: bool,
    pub sessions: u64,
    pub stat_caches: u64,
    /// Distinct objects read and hashed (reachable ones and every other one stored).
    pub objects: u64,
    pub problems: Vec<VerifyProblem>,
}

/// Checks everything (see the module docs).
pub fn run(store: &Store) -> Result<VerifyResult, GcError> {
    let _no_gc = store.writer_guard()?;
    let mut v = Verifier {
        store,
        checked: HashSet::new(),
        result: VerifyResult::default(),
    };
    for (path, _) in gc::session_paths(store)? {
        v.result.sessions += 1;
        let who = path.display().to_string();
        let mut trees = Vec::new();
        match SessionLog::open_read_only(&path) {
            Ok(log) => {
                for e in log.index().entries() {
                    if let Some(Err(err)) = AnyRecord::read(e) {
                        let kind = e.custom_type.as_deref().unwrap_or(&e.entry_type);
                        v.problem(
                            VerifyProblemKind::Session,
                            who.clone(),
                            format!("entry {}: its {kind} record cannot be read: {err}", e.id),
                        );
                    }
                    // An unreadable record's trees are still checked: gc keeps them.
                    gc::referenced_trees(e, &path, &mut trees);
                }
            }
            Err(err) => v.problem(VerifyProblemKind::Session, who.clone(), err.to_string()),
        }
        if let Ok(bytes) = std::fs::read(Layout::session_journal(&path)) {
            if let Ok(j) = serde_json::from_slice::<Value>(&bytes) {
                let mut hashes = Vec::new();
                collect_tree_hashes(&j, false, &mut hashes);
                trees.extend(hashes.iter().filter_map(|h| ObjectId::from_hex(h).ok()));
            }
        }
        for id in trees {
            v.tree(id, &who);
        }
    }
    for path in gc::stat_cache_paths(store)? {
        v.result.stat_caches += 1;
        let who = format!("stat cache {}", path.display());
        for id in StatCache::load(&path).object_ids() {
            v.blob(id, &who);
        }
    }
    for o in store.list_objects()? {
        v.blob(o.id, "the store");
    }
    v.result.objects = v.checked.len() as u64;
    v.result.problems.sort();
    v.result.ok = v.result.problems.is_empty();
    Ok(v.result)
}

struct Verifier<'a> {
    store: &'a Store,
    checked: HashSet<ObjectId>,
    result: VerifyResult,
}

impl Verifier<'_> {
    fn problem(&mut self, kind: VerifyProblemKind, subject: String, detail: String) {
        tracing::warn!(?kind, %subject, %detail, "verify found a problem");
        self.result.problems.push(VerifyProblem {
            kind,
            subject,
            detail,
        });
    }

    fn failed(&mut self, id: ObjectId, who: &str, err: StoreError) {
        let kind = match err {
            StoreError::NotFound { .. } => VerifyProblemKind::MissingObject,
            _ => VerifyProblemKind::CorruptObject,
        };
        self.problem(kind, id.to_hex(), format!("needed by {who}: {err}"));
    }

    /// Reads and hashes one object (once).
    fn blob(&mut self, id: ObjectId, who: &str) {
        if !self.checked.insert(id) {
            return;
        }
        if let Err(err) = self.store.get(&id) {
            self.failed(id, who, err);
        }
    }

    /// A tree, everything below it, and every blob it holds (each once).
    fn tree(&mut self, root: ObjectId, who: &str) {
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if !self.checked.insert(id) {
                continue;
            }
            match self.store.get_tree(&id) {
                Ok(tree) => {
                    for e in tree.entries.values() {
                        if e.kind == EntryKind::Tree {
                            stack.push(e.id);
                        } else if e.has_object() {
                            let owner = format!("tree {} of {who}", id.to_hex());
                            self.blob(e.id, &owner);
                        }
                    }
                }
                Err(err) => self.failed(id, who, err),
            }
        }
    }
}
