//! Flattened trees recently used (tree id → its files), so consecutive
//! snapshots and queries do not re-read every tree object. Trees derived
//! one from another share structure ([`FlatTree`] is a persistent map), so
//! the cache bounds lookups, not memory.

use std::collections::{BTreeMap, VecDeque};

use super::{flatten, update_tree, FlatTree, ObjectId, Store, StoreError, TreeEntry};

/// How many flattened trees are kept.
const FLAT_CACHE_TREES: usize = 16;

/// The most recently used trees' files, most recent last.
#[derive(Default)]
pub struct FlatCache {
    trees: VecDeque<(ObjectId, FlatTree)>,
    /// A tree's files kept on disk by the last process without a watcher
    /// (`saved_flat.rs`), read instead of the tree's objects when asked
    /// for that tree.
    saved: Option<std::path::PathBuf>,
}

impl FlatCache {
    /// A cache that also looks in the saved flat tree at `path`.
    pub fn with_saved(path: std::path::PathBuf) -> FlatCache {
        FlatCache {
            saved: Some(path),
            ..FlatCache::default()
        }
    }

    /// The files of `tree` (none for `None`). A copy is O(1).
    pub fn files(&mut self, store: &Store, tree: Option<ObjectId>) -> Result<FlatTree, StoreError> {
        let Some(tree) = tree else {
            return Ok(FlatTree::new());
        };
        if let Some(f) = self.cached(&tree) {
            return Ok(f);
        }
        // The saved files stand for the tree only while the store holds it,
        // as walking its objects would have required.
        if let Some(path) = &self.saved {
            if let Some(flat) = store
                .contains(&tree)
                .then(|| super::saved_flat::load(path, &tree))
                .flatten()
            {
                self.remember(tree, flat.clone());
                return Ok(flat);
            }
        }
        let flat = flatten(store, &tree)?;
        self.remember(tree, flat.clone());
        Ok(flat)
    }

    /// The cached files of `tree`, if any (made the most recent).
    pub fn cached(&mut self, tree: &ObjectId) -> Option<FlatTree> {
        let at = self.trees.iter().position(|(t, _)| t == tree)?;
        let hit = self.trees.remove(at)?;
        let flat = hit.1.clone();
        self.trees.push_back(hit);
        Some(flat)
    }

    /// `base` (with its files) changed by `changes` (path → new entry, or
    /// `None` for a deletion): the new tree, written by rewriting only the
    /// directories on the changed paths, and its files derived from the
    /// base's without copying them. Remembered for the next lookup.
    pub fn derive(
        &mut self,
        store: &Store,
        base: ObjectId,
        mut files: FlatTree,
        changes: &BTreeMap<String, Option<TreeEntry>>,
    ) -> Result<(ObjectId, FlatTree), StoreError> {
        if changes.is_empty() {
            return Ok((base, files));
        }
        let tree = update_tree(store, &base, changes)?;
        for (path, entry) in changes {
            match entry {
                Some(e) => files.insert(path.clone(), *e),
                None => files.remove(path),
            };
        }
        self.remember(tree, files.clone());
        Ok((tree, files))
    }

    pub fn remember(&mut self, tree: ObjectId, flat: FlatTree) {
        self.trees.retain(|(t, _)| *t != tree);
        if self.trees.len() >= FLAT_CACHE_TREES {
            self.trees.pop_front();
        }
        self.trees.push_back((tree, flat));
    }

    /// Forget every tree (gc may have deleted their objects:
    /// docs/architecture.md rule 10).
    pub fn clear(&mut self) {
        self.trees.clear();
    }
}
