//! Flat trees: a tree as a map of full path -> leaf entry, read from the
//! store ([`flatten`], [`lookup`], [`entries_under`]) and written back to it
//! as directory trees ([`build_tree`], [`update_tree`]), reading and writing
//! only the directories they need. Comparing two trees is `diff.rs`'s.
//!
//! Paths are relative, '/'-joined sequences of entry names (no leading or trailing '/').

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::StoreError;
use super::object_id::ObjectId;
use super::objects::Store;
use super::tree::{check_name, empty_tree_id, EntryKind, Tree, TreeEntry};

/// The entries of `files` at `prefix` or below it (all of them for the
/// empty prefix), found by range instead of a scan: "a/b" and "a/b/..." but
/// not "a/b-c" or "a/bc".
pub fn entries_under<'a>(
    files: &'a FlatTree,
    prefix: &str,
) -> impl Iterator<Item = (&'a String, &'a TreeEntry)> + 'a {
    use std::ops::Bound;
    let (exact, below) = if prefix.is_empty() {
        (None, files.range::<_, String>(..))
    } else {
        // Below "a/b" is the range ["a/b/", "a/b0"): '0' follows '/'.
        let range = (
            Bound::Included(format!("{prefix}/")),
            Bound::Excluded(format!("{prefix}0")),
        );
        (files.get_key_value(prefix), files.range(range))
    };
    exact.into_iter().chain(below)
}

/// Every leaf of a tree keyed by full path: a persistent map, so a copy
/// costs nothing and a copy with a few paths changed costs only those paths
/// (the engine keeps one per recent tree and derives the next from it).
pub type FlatTree = imbl::OrdMap<String, TreeEntry>;

/// Every non-tree entry under `root`, keyed by full path.
pub fn flatten(store: &Store, root: &ObjectId) -> Result<FlatTree, StoreError> {
    let mut out = FlatTree::new();
    flatten_into(store, "", root, &mut |path, entry| {
        out.insert(path, entry);
    })?;
    Ok(out)
}

/// The entry at `path` under `root`, walking one component at a time (only the trees on
/// the way are read). `None` if a component is absent or a non-final component is not a
/// directory. Directories are returned as `Tree` entries; the empty path names `root`
/// itself (a `Tree` entry with size 0). Malformed paths (leading, trailing or doubled '/',
/// "." or "..") name nothing and give `None`.
pub fn lookup(store: &Store, root: &ObjectId, path: &str) -> Result<Option<TreeEntry>, StoreError> {
    let mut current = TreeEntry::new(EntryKind::Tree, *root, 0);
    if path.is_empty() {
        return Ok(Some(current));
    }
    for name in path.split('/') {
        if check_name(name).is_err() || current.kind != EntryKind::Tree {
            return Ok(None);
        }
        let tree = store.get_tree(&current.id)?;
        match tree.entries.get(name) {
            Some(entry) => current = *entry,
            None => return Ok(None),
        }
    }
    Ok(Some(current))
}

/// Builds and stores every directory tree for a flat map of full path -> entry, bottom-up,
/// and returns the root tree's id. An empty map gives the empty tree (also stored).
///
/// Entries are normally leaves (file, executable, symlink). A `Tree` entry is taken as an
/// already-stored sub-tree and grafted as is, which lets a snapshot reuse an unchanged
/// directory without flattening it; its object is not checked here.
///
/// Fails with `BadTree { id: None }` for an invalid path (empty, leading/trailing/doubled
/// '/', "." or "..", NUL) or for a path that is both a leaf and a directory ("a" and "a/b").
pub fn build_tree<'a>(
    store: &Store,
    files: impl IntoIterator<Item = (&'a String, &'a TreeEntry)>,
) -> Result<ObjectId, StoreError> {
    let mut root = Node::default();
    for (path, entry) in files {
        root.insert(path, *entry)?;
    }
    root.store(store)
}

/// Apply `changes` (full path → new leaf entry, or `None` to remove it) to
/// the tree `root`, reading and writing only the directories on the changed
/// paths. The result is the tree [`build_tree`] makes of the changed file
/// map: directories left empty disappear, a file may replace a directory and
/// a directory a file.
pub fn update_tree(
    store: &Store,
    root: &ObjectId,
    changes: &BTreeMap<String, Option<TreeEntry>>,
) -> Result<ObjectId, StoreError> {
    if changes.is_empty() {
        return Ok(*root);
    }
    let list: Vec<(&str, Option<TreeEntry>)> =
        changes.iter().map(|(p, e)| (p.as_str(), *e)).collect();
    match update_node(store, Some(load(store, root)?), list)? {
        Some(id) => Ok(id),
        None => store.put_tree(&Tree::default()),
    }
}

/// One directory of [`update_tree`]: `None` when it ends up empty.
fn update_node(
    store: &Store,
    tree: Option<Arc<Tree>>,
    changes: Vec<(&str, Option<TreeEntry>)>,
) -> Result<Option<ObjectId>, StoreError> {
    let mut tree = tree.map(Arc::unwrap_or_clone).unwrap_or_default();
    let mut inserts: Vec<(&str, TreeEntry)> = Vec::new();
    let mut nested: BTreeMap<&str, Vec<(&str, Option<TreeEntry>)>> = BTreeMap::new();
    for (path, entry) in changes {
        match path.split_once('/') {
            Some((head, rest)) => nested.entry(head).or_default().push((rest, entry)),
            // Removals first, then the subdirectories, then the new entries:
            // a file replacing a directory (or the reverse) needs exactly
            // that order.
            None => match entry {
                None => {
                    tree.entries.remove(path);
                }
                Some(e) => inserts.push((path, e)),
            },
        }
    }
    for (head, sub) in nested {
        let child = match tree.entries.get(head) {
            Some(e) if e.kind == EntryKind::Tree => Some(load(store, &e.id)?),
            _ => None,
        };
        match update_node(store, child, sub)? {
            Some(id) => {
                tree.entries
                    .insert(head.to_string(), TreeEntry::new(EntryKind::Tree, id, 0));
            }
            None => {
                if tree
                    .entries
                    .get(head)
                    .is_some_and(|e| e.kind == EntryKind::Tree)
                {
                    tree.entries.remove(head);
                }
            }
        }
    }
    for (name, e) in inserts {
        tree.entries.insert(name.to_string(), e);
    }
    if tree.entries.is_empty() {
        return Ok(None);
    }
    Ok(Some(store.put_tree(&tree)?))
}

pub(super) fn load(store: &Store, id: &ObjectId) -> Result<Arc<Tree>, StoreError> {
    // The empty tree needs no read: diffing against "nothing" must work even in a store
    // that never stored it.
    if *id == empty_tree_id() {
        Ok(Arc::default())
    } else {
        store.get_tree(id)
    }
}

pub(super) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

pub(super) fn flatten_into(
    store: &Store,
    prefix: &str,
    id: &ObjectId,
    emit: &mut dyn FnMut(String, TreeEntry),
) -> Result<(), StoreError> {
    let tree = load(store, id)?;
    for (name, entry) in &tree.entries {
        let path = join(prefix, name);
        if entry.kind == EntryKind::Tree {
            flatten_into(store, &path, &entry.id, emit)?;
        } else {
            emit(path, *entry);
        }
    }
    Ok(())
}

/// Directory under construction in `build_tree`.
#[derive(Default)]
struct Node {
    children: BTreeMap<String, Child>,
}

enum Child {
    Entry(TreeEntry),
    Dir(Node),
}

impl Node {
    fn insert(&mut self, path: &str, entry: TreeEntry) -> Result<(), StoreError> {
        let bad_path = || StoreError::bad_tree(format!("invalid path {path:?}"));
        let conflict = || {
            StoreError::bad_tree(format!(
                "path {path:?} conflicts with another entry (both a file and a directory)"
            ))
        };
        let mut components = path.split('/').peekable();
        let mut node = self;
        while let Some(name) = components.next() {
            check_name(name).map_err(|_| bad_path())?;
            if components.peek().is_none() {
                // Keys of a BTreeMap are unique, so the only possible clash is with a
                // directory created for a longer path.
                if node
                    .children
                    .insert(name.to_string(), Child::Entry(entry))
                    .is_some()
                {
                    return Err(conflict());
                }
                return Ok(());
            }
            let child = node
                .children
                .entry(name.to_string())
                .or_insert_with(|| Child::Dir(Node::default()));
            node = match child {
                Child::Dir(dir) => dir,
                Child::Entry(_) => return Err(conflict()),
            };
        }
        // `split` yields at least one component, so the loop always returns.
        Err(bad_path())
    }

    fn store(&self, store: &Store) -> Result<ObjectId, StoreError> {
        let mut tree = Tree::default();
        for (name, child) in &self.children {
            let entry = match child {
                Child::Entry(entry) => *entry,
                Child::Dir(dir) => TreeEntry::new(EntryKind::Tree, dir.store(store)?, 0),
            };
            tree.entries.insert(name.clone(), entry);
        }
        store.put_tree(&tree)
    }
}

#[cfg(test)]
pub(super) mod tests;
