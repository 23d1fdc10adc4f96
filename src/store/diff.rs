//! Whole-tree operations: diff, flatten, lookup, and building trees from flat path maps.
//!
//! Paths are relative, '/'-joined sequences of entry names (no leading or trailing '/').

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::StoreError;
use super::object_id::ObjectId;
use super::objects::Store;
use super::tree::{check_name, empty_tree_id, EntryKind, Tree, TreeEntry, UntrackedReason};

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

/// One leaf (non-tree) path whose entry differs between two trees.
/// `old: None` is an addition, `new: None` a deletion, both `Some` a modification (content,
/// size or kind, e.g. a file that became executable or a symlink).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub old: Option<TreeEntry>,
    pub new: Option<TreeEntry>,
}

/// How a path differs between two trees, as people read it. A side that
/// did not capture the path (an uncaptured entry, or a path below an
/// uncaptured directory) never makes it "added" or "deleted"
/// (docs/architecture.md rule 14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeClass {
    Added,
    Modified,
    Deleted,
    /// Present at the new side but not captured there (with why): whether
    /// it changed is unknown.
    NotCaptured(UntrackedReason),
    /// Captured at the new side, present but not captured at the old one
    /// (with why): whether it changed is unknown.
    Recaptured(UntrackedReason),
}

/// The paths one side of a diff (`|c| c.old` or `|c| c.new`) holds as
/// uncaptured, with why: a path below one of them is as uncaptured as it.
/// (Few paths are; they are copied, so the changes stay free to filter.)
pub struct UncapturedPaths(std::collections::HashMap<String, UntrackedReason>);

impl UncapturedPaths {
    pub fn of(changes: &[Change], side: fn(&Change) -> Option<TreeEntry>) -> Self {
        UncapturedPaths(
            changes
                .iter()
                .filter_map(|c| Some((c.path.clone(), side(c)?.not_captured()?)))
                .collect(),
        )
    }

    /// The reason when a directory above `path` is uncaptured.
    pub fn above(&self, path: &str) -> Option<UntrackedReason> {
        if self.0.is_empty() {
            return None;
        }
        crate::repo_path::ancestors(path).find_map(|a| self.0.get(a).copied())
    }

    /// The reason when `path` itself or a directory above it is uncaptured.
    pub fn at(&self, path: &str) -> Option<UntrackedReason> {
        self.above(path).or_else(|| self.0.get(path).copied())
    }
}

/// The class of each change of `changes` (a [`diff_trees`] result), in
/// order.
pub fn classify(changes: &[Change]) -> Vec<ChangeClass> {
    let old_dirs = UncapturedPaths::of(changes, |c| c.old);
    let new_dirs = UncapturedPaths::of(changes, |c| c.new);
    let new_below = |dir: &str| {
        let prefix = format!("{dir}/");
        changes
            .iter()
            .any(|c| c.new.is_some() && c.path.starts_with(&prefix))
    };
    changes
        .iter()
        .map(|c| {
            let (old, new) = (c.old.as_ref(), c.new.as_ref());
            if let Some(r) = new.and_then(TreeEntry::not_captured) {
                return ChangeClass::NotCaptured(r);
            }
            match (old, new) {
                (Some(o), None) => match (new_dirs.above(&c.path), o.not_captured()) {
                    (Some(r), _) => ChangeClass::NotCaptured(r),
                    // An uncaptured directory that is captured now: its
                    // files are the change, not the name going away.
                    (None, Some(r)) if new_below(&c.path) => ChangeClass::Recaptured(r),
                    _ => ChangeClass::Deleted,
                },
                (old, Some(_)) => match old.and_then(TreeEntry::not_captured) {
                    Some(r) => ChangeClass::Recaptured(r),
                    None if old.is_some() => ChangeClass::Modified,
                    None => match old_dirs.above(&c.path) {
                        Some(r) => ChangeClass::Recaptured(r),
                        None => ChangeClass::Added,
                    },
                },
                (None, None) => ChangeClass::Modified,
            }
        })
        .collect()
}

/// Differences between two trees (`None` = the empty tree), sorted by path (byte order).
///
/// Sub-trees with equal ids are skipped without being read, so the cost is proportional to
/// the changed directories, not the size of the trees. A file replaced by a directory (or
/// the reverse) shows as the deletion of the old leaves plus the addition of the new ones;
/// `Tree` entries themselves are never reported.
pub fn diff_trees(
    store: &Store,
    old: Option<&ObjectId>,
    new: Option<&ObjectId>,
) -> Result<Vec<Change>, StoreError> {
    let mut out = Vec::new();
    let old = old.copied().unwrap_or_else(empty_tree_id);
    let new = new.copied().unwrap_or_else(empty_tree_id);
    if old != new {
        let old_tree = load(store, &old)?;
        let new_tree = load(store, &new)?;
        diff_into(store, "", &old_tree, &new_tree, &mut out)?;
    }
    // Recursion visits names in tree order ("a" and its children before "a.txt"), but
    // callers want plain path order ("a.txt" < "a/b" because '.' < '/').
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
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

fn load(store: &Store, id: &ObjectId) -> Result<Arc<Tree>, StoreError> {
    // The empty tree needs no read: diffing against "nothing" must work even in a store
    // that never stored it.
    if *id == empty_tree_id() {
        Ok(Arc::default())
    } else {
        store.get_tree(id)
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

fn diff_into(
    store: &Store,
    prefix: &str,
    old: &Tree,
    new: &Tree,
    out: &mut Vec<Change>,
) -> Result<(), StoreError> {
    let mut olds = old.entries.iter().peekable();
    let mut news = new.entries.iter().peekable();
    // Merge-join of two name-sorted maps.
    loop {
        let (o, n) = match (olds.peek(), news.peek()) {
            (None, None) => return Ok(()),
            (Some(&(on, _)), Some(&(nn, _))) => match on.cmp(nn) {
                std::cmp::Ordering::Less => (olds.next(), None),
                std::cmp::Ordering::Greater => (None, news.next()),
                std::cmp::Ordering::Equal => (olds.next(), news.next()),
            },
            (Some(_), None) => (olds.next(), None),
            (None, Some(_)) => (None, news.next()),
        };
        let name = o.or(n).map(|(name, _)| name.as_str()).unwrap_or_default();
        let path = join(prefix, name);
        let o = o.map(|(_, e)| *e);
        let n = n.map(|(_, e)| *e);
        if o == n {
            // Identical entry; for a sub-tree this is where unchanged directories are
            // skipped without reading them.
            continue;
        }
        match (o, n) {
            (Some(o), Some(n)) if o.kind == EntryKind::Tree && n.kind == EntryKind::Tree => {
                let old_sub = load(store, &o.id)?;
                let new_sub = load(store, &n.id)?;
                diff_into(store, &path, &old_sub, &new_sub, out)?;
            }
            _ => {
                // At most one side is a tree here: its leaves appear or disappear wholesale,
                // and a leaf on the other side is a plain addition/deletion/modification.
                let mut old_leaf = None;
                let mut new_leaf = None;
                match o {
                    Some(e) if e.kind == EntryKind::Tree => {
                        flatten_into(store, &path, &e.id, &mut |p, entry| {
                            out.push(Change {
                                path: p,
                                old: Some(entry),
                                new: None,
                            })
                        })?;
                    }
                    other => old_leaf = other,
                }
                match n {
                    Some(e) if e.kind == EntryKind::Tree => {
                        flatten_into(store, &path, &e.id, &mut |p, entry| {
                            out.push(Change {
                                path: p,
                                old: None,
                                new: Some(entry),
                            })
                        })?;
                    }
                    other => new_leaf = other,
                }
                if old_leaf.is_some() || new_leaf.is_some() {
                    out.push(Change {
                        path,
                        old: old_leaf,
                        new: new_leaf,
                    });
                }
            }
        }
    }
}

fn flatten_into(
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::store::new_test_store as new_store;

    fn put_leaf(store: &Store, kind: EntryKind, content: &[u8]) -> TreeEntry {
        let out = store.put(content).unwrap();
        TreeEntry::new(kind, out.id, content.len() as u64)
    }

    /// Builds a tree from `(path, kind, content)` triples.
    fn build(store: &Store, files: &[(&str, EntryKind, &[u8])]) -> ObjectId {
        let map: BTreeMap<String, TreeEntry> = files
            .iter()
            .map(|(p, k, c)| (p.to_string(), put_leaf(store, *k, c)))
            .collect();
        build_tree(store, &map).unwrap()
    }

    fn summary(changes: &[Change]) -> Vec<(String, &'static str)> {
        changes
            .iter()
            .map(|c| {
                let what = match (&c.old, &c.new) {
                    (None, Some(_)) => "added",
                    (Some(_), None) => "deleted",
                    (Some(_), Some(_)) => "modified",
                    (None, None) => "nothing?",
                };
                (c.path.clone(), what)
            })
            .collect()
    }

    fn s(items: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        items.iter().map(|(p, w)| (p.to_string(), *w)).collect()
    }

    use EntryKind::{Executable, File, Symlink};

    /// A file or directory that one side could not capture is never added
    /// or deleted: not captured at the new side, captured again at the new
    /// side, or (gone from the disk after an uncaptured moment) deleted.
    #[test]
    fn classify_never_calls_an_uncaptured_path_added_or_deleted() {
        use UntrackedReason::{Unreadable, Unstable};
        let (_dir, store) = new_store();
        let mut old: BTreeMap<String, TreeEntry> = BTreeMap::new();
        let mut new: BTreeMap<String, TreeEntry> = BTreeMap::new();
        let f = |c: &[u8]| put_leaf(&store, File, c);
        // Captured, then unstable; unstable, then captured; unstable, then gone.
        old.insert("db".into(), f(b"v1"));
        new.insert("db".into(), TreeEntry::uncaptured(Unstable));
        old.insert("log".into(), TreeEntry::uncaptured(Unstable));
        new.insert("log".into(), f(b"v2"));
        old.insert("tmp".into(), TreeEntry::uncaptured(Unstable));
        // A directory that could not be listed, then could again.
        old.insert("d/a".into(), f(b"a"));
        new.insert("d".into(), TreeEntry::uncaptured(Unreadable));
        old.insert("e".into(), TreeEntry::uncaptured(Unreadable));
        new.insert("e/b".into(), f(b"b"));
        // Plain changes beside them.
        old.insert("gone".into(), f(b"g"));
        new.insert("fresh".into(), f(b"n"));
        let (o, n) = (
            build_tree(&store, &old).unwrap(),
            build_tree(&store, &new).unwrap(),
        );
        let changes = diff_trees(&store, Some(&o), Some(&n)).unwrap();
        let got: Vec<(&str, ChangeClass)> = changes
            .iter()
            .map(|c| c.path.as_str())
            .zip(classify(&changes))
            .collect();
        assert_eq!(
            got,
            [
                ("d", ChangeClass::NotCaptured(Unreadable)),
                ("d/a", ChangeClass::NotCaptured(Unreadable)),
                ("db", ChangeClass::NotCaptured(Unstable)),
                ("e", ChangeClass::Recaptured(Unreadable)),
                ("e/b", ChangeClass::Recaptured(Unreadable)),
                ("fresh", ChangeClass::Added),
                ("gone", ChangeClass::Deleted),
                ("log", ChangeClass::Recaptured(Unstable)),
                ("tmp", ChangeClass::Deleted),
            ]
        );
    }

    #[test]
    fn diff_add_modify_delete_and_kind_changes() {
        let (_dir, store) = new_store();
        let old = build(
            &store,
            &[
                ("keep.txt", File, b"same"),
                ("edit.txt", File, b"v1"),
                ("gone.txt", File, b"bye"),
                ("script", File, b"#!/bin/sh"),
                ("ln", File, b"target"),
                ("dir/a.txt", File, b"a"),
            ],
        );
        let new = build(
            &store,
            &[
                ("keep.txt", File, b"same"),
                ("edit.txt", File, b"v2"),
                ("new.txt", File, b"hi"),
                ("script", Executable, b"#!/bin/sh"),
                ("ln", Symlink, b"target"),
                ("dir/a.txt", File, b"a"),
                ("dir/b.txt", File, b"b"),
            ],
        );
        let changes = diff_trees(&store, Some(&old), Some(&new)).unwrap();
        assert_eq!(
            summary(&changes),
            s(&[
                ("dir/b.txt", "added"),
                ("edit.txt", "modified"),
                ("gone.txt", "deleted"),
                ("ln", "modified"),
                ("new.txt", "added"),
                ("script", "modified"),
            ])
        );
        let script = changes.iter().find(|c| c.path == "script").unwrap();
        assert_eq!(script.old.unwrap().kind, File);
        assert_eq!(script.new.unwrap().kind, Executable);
        assert_eq!(script.old.unwrap().id, script.new.unwrap().id);
        // Reverse diff swaps old and new.
        let back = diff_trees(&store, Some(&new), Some(&old)).unwrap();
        assert_eq!(back.len(), changes.len());
        for (f, b) in changes.iter().zip(&back) {
            assert_eq!(
                (f.path.as_str(), f.old, f.new),
                (b.path.as_str(), b.new, b.old)
            );
        }
        assert!(diff_trees(&store, Some(&old), Some(&old))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn diff_against_nothing() {
        let (_dir, store) = new_store();
        let t = build(&store, &[("a", File, b"1"), ("d/e/f", File, b"2")]);
        let added = diff_trees(&store, None, Some(&t)).unwrap();
        assert_eq!(summary(&added), s(&[("a", "added"), ("d/e/f", "added")]));
        let deleted = diff_trees(&store, Some(&t), None).unwrap();
        assert_eq!(
            summary(&deleted),
            s(&[("a", "deleted"), ("d/e/f", "deleted")])
        );
        assert!(diff_trees(&store, None, None).unwrap().is_empty());
        let empty = empty_tree_id();
        assert!(diff_trees(&store, Some(&empty), None).unwrap().is_empty());
    }

    #[test]
    fn diff_file_dir_swap() {
        let (_dir, store) = new_store();
        let file = build(&store, &[("a", File, b"was a file"), ("a.txt", File, b"x")]);
        let dir = build(
            &store,
            &[
                ("a/b", File, b"now"),
                ("a/c/d", File, b"a dir"),
                ("a.txt", File, b"x"),
            ],
        );
        let changes = diff_trees(&store, Some(&file), Some(&dir)).unwrap();
        assert_eq!(
            summary(&changes),
            s(&[("a", "deleted"), ("a/b", "added"), ("a/c/d", "added")])
        );
        let changes = diff_trees(&store, Some(&dir), Some(&file)).unwrap();
        assert_eq!(
            summary(&changes),
            s(&[("a", "added"), ("a/b", "deleted"), ("a/c/d", "deleted")])
        );
        // Sorted by path bytes, not tree order: "a.txt" < "a/b".
        let t1 = build(&store, &[("a/b", File, b"1"), ("a.txt", File, b"1")]);
        let t2 = build(&store, &[("a/b", File, b"2"), ("a.txt", File, b"2")]);
        let paths: Vec<_> = diff_trees(&store, Some(&t1), Some(&t2))
            .unwrap()
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(paths, ["a.txt", "a/b"]);
    }

    #[test]
    fn diff_does_not_descend_into_unchanged_subtrees() {
        let (_dir, store) = new_store();
        let old = build(
            &store,
            &[
                ("big/x/1", File, b"1"),
                ("big/y/2", File, b"2"),
                ("top", File, b"v1"),
            ],
        );
        let new = build(
            &store,
            &[
                ("big/x/1", File, b"1"),
                ("big/y/2", File, b"2"),
                ("top", File, b"v2"),
            ],
        );
        let big = lookup(&store, &old, "big").unwrap().unwrap();
        assert_eq!(big.kind, EntryKind::Tree);
        assert_eq!(lookup(&store, &new, "big").unwrap().unwrap().id, big.id);
        // Remove the shared subtree (gc's way, from its pack): any attempt to
        // read it would now fail with NotFound.
        store.sync().unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        let (removed, _) = store
            .prune_packs(&|id| *id != big.id, Some(later), false)
            .unwrap();
        assert_eq!(removed, 1);
        assert!(matches!(
            flatten(&store, &old),
            Err(StoreError::NotFound { .. })
        ));
        let changes = diff_trees(&store, Some(&old), Some(&new)).unwrap();
        assert_eq!(summary(&changes), s(&[("top", "modified")]));
    }

    #[test]
    fn entries_under_takes_the_path_and_its_descendants_only() {
        let leaf = TreeEntry::new(EntryKind::File, ObjectId::of(b""), 0);
        let files: FlatTree = ["a", "a-b", "a.txt", "a/b", "a/b/c", "a0", "ab", "b"]
            .iter()
            .map(|p| (p.to_string(), leaf))
            .collect();
        let under = |prefix: &str| -> Vec<&str> {
            entries_under(&files, prefix)
                .map(|(p, _)| p.as_str())
                .collect()
        };
        assert_eq!(under("a"), ["a", "a/b", "a/b/c"]);
        assert_eq!(under("a/b"), ["a/b", "a/b/c"]);
        assert_eq!(under("a/b/c"), ["a/b/c"]);
        assert_eq!(under("ab"), ["ab"]);
        assert_eq!(under("c"), Vec::<&str>::new());
        assert_eq!(under("").len(), files.len());
    }

    #[test]
    fn flatten_and_lookup() {
        let (_dir, store) = new_store();
        let root = build(
            &store,
            &[
                ("README", File, b"readme"),
                ("src/main.rs", File, b"fn main() {}"),
                ("src/bin/tool.rs", Executable, b"tool"),
                ("link", Symlink, b"src/main.rs"),
            ],
        );
        let flat = flatten(&store, &root).unwrap();
        let paths: Vec<_> = flat.keys().map(String::as_str).collect();
        assert_eq!(paths, ["README", "link", "src/bin/tool.rs", "src/main.rs"]);
        assert_eq!(flat["src/bin/tool.rs"].kind, Executable);
        assert_eq!(store.get(&flat["link"].id).unwrap(), b"src/main.rs");

        assert_eq!(
            lookup(&store, &root, "src/main.rs").unwrap(),
            Some(flat["src/main.rs"])
        );
        assert_eq!(
            lookup(&store, &root, "src/bin").unwrap().unwrap().kind,
            EntryKind::Tree
        );
        let whole = lookup(&store, &root, "").unwrap().unwrap();
        assert_eq!((whole.kind, whole.id), (EntryKind::Tree, root));
        for absent in [
            "nope",
            "src/nope.rs",
            "README/x",      // through a file
            "link/x",        // through a symlink
            "src/main.rs/x", // through a file, deeper
            "/README",
            "src/",
            "src//main.rs",
            "./README",
            "src/../README",
        ] {
            assert_eq!(lookup(&store, &root, absent).unwrap(), None, "{absent}");
        }
        // The empty tree is known without reading it, so it works even before it is stored.
        assert!(!store.contains(&empty_tree_id()));
        assert!(flatten(&store, &empty_tree_id()).unwrap().is_empty());
        let empty = build_tree(&store, &BTreeMap::new()).unwrap();
        assert_eq!(empty, empty_tree_id());
        assert!(store.contains(&empty));
        assert_eq!(*store.get_tree(&empty).unwrap(), Tree::default());
    }

    #[test]
    fn build_tree_shares_unchanged_directories() {
        let (_dir, store) = new_store();
        let a = build(&store, &[("lib/x.rs", File, b"x"), ("main.rs", File, b"1")]);
        let b = build(&store, &[("lib/x.rs", File, b"x"), ("main.rs", File, b"2")]);
        assert_ne!(a, b);
        let lib_a = lookup(&store, &a, "lib").unwrap().unwrap();
        let lib_b = lookup(&store, &b, "lib").unwrap().unwrap();
        assert_eq!(lib_a, lib_b);
        // Insertion order is irrelevant: the map is sorted, the tree canonical.
        let again = build(&store, &[("main.rs", File, b"1"), ("lib/x.rs", File, b"x")]);
        assert_eq!(again, a);
    }

    #[test]
    fn build_tree_grafts_tree_entries() {
        let (_dir, store) = new_store();
        let sub = build(&store, &[("x", File, b"x"), ("y/z", File, b"z")]);
        let mut map = BTreeMap::new();
        map.insert(
            "vendor/lib".to_string(),
            TreeEntry::new(EntryKind::Tree, sub, 0),
        );
        map.insert("a".to_string(), put_leaf(&store, File, b"a"));
        let root = build_tree(&store, &map).unwrap();
        let flat: Vec<_> = flatten(&store, &root).unwrap().keys().cloned().collect();
        assert_eq!(flat, ["a", "vendor/lib/x", "vendor/lib/y/z"]);
    }

    #[test]
    fn build_tree_rejects_bad_paths_and_conflicts() {
        let (_dir, store) = new_store();
        let leaf = put_leaf(&store, File, b"x");
        for bad in ["", "/a", "a/", "a//b", ".", "a/./b", "a/../b", "..", "a\0b"] {
            let map = BTreeMap::from([(bad.to_string(), leaf)]);
            assert!(
                matches!(
                    build_tree(&store, &map),
                    Err(StoreError::BadTree { id: None, .. })
                ),
                "{bad:?} accepted"
            );
        }
        for pair in [["a", "a/b"], ["a/b", "a/b/c"]] {
            let map: BTreeMap<String, TreeEntry> =
                pair.iter().map(|p| (p.to_string(), leaf)).collect();
            assert!(
                matches!(build_tree(&store, &map), Err(StoreError::BadTree { .. })),
                "{pair:?} accepted"
            );
        }
    }

    /// Path components drawn from a small alphabet so that directories are shared and
    /// "a" / "a.b" / "a/..." orderings come up often.
    fn path_strategy() -> impl Strategy<Value = String> {
        let component = prop::sample::select(vec!["a", "b", "a.b", "c-d", "é", "Z"]);
        prop::collection::vec(component, 1..5).prop_map(|parts| parts.join("/"))
    }

    fn kind_strategy() -> impl Strategy<Value = EntryKind> {
        prop::sample::select(vec![File, Executable, Symlink])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn built_trees_flatten_to_their_input(
            raw in prop::collection::btree_map(
                path_strategy(),
                (kind_strategy(), prop::collection::vec(any::<u8>(), 0..200)),
                0..40,
            )
        ) {
            // Drop paths that are also directories of other paths ("a" and "a/b"): a
            // working directory cannot contain both.
            let files: BTreeMap<String, (EntryKind, Vec<u8>)> = raw
                .iter()
                .filter(|(p, _)| !raw.keys().any(|q| q.starts_with(&format!("{p}/"))))
                .map(|(p, v)| (p.clone(), v.clone()))
                .collect();
            let (_dir, store) = new_store();
            let entries: BTreeMap<String, TreeEntry> = files
                .iter()
                .map(|(p, (k, c))| (p.clone(), put_leaf(&store, *k, c)))
                .collect();
            let root = build_tree(&store, &entries).unwrap();
            let flat: BTreeMap<_, _> = flatten(&store, &root).unwrap().into_iter().collect();
            prop_assert_eq!(&flat, &entries);
            for (path, (kind, content)) in &files {
                let entry = lookup(&store, &root, path).unwrap().unwrap();
                prop_assert_eq!(entry.kind, *kind);
                prop_assert_eq!(&store.get(&entry.id).unwrap(), content);
            }
            // Diff against nothing adds exactly these paths, in path order.
            let added: Vec<String> = diff_trees(&store, None, Some(&root))
                .unwrap()
                .into_iter()
                .map(|c| c.path)
                .collect();
            let expected: Vec<String> = files.keys().cloned().collect();
            prop_assert_eq!(added, expected);
        }

        #[test]
        fn updating_a_tree_equals_building_the_changed_map(
            before in prop::collection::btree_map(path_strategy(), kind_strategy(), 0..30),
            after in prop::collection::btree_map(path_strategy(), kind_strategy(), 0..30),
        ) {
            // Keep only maps a working directory can hold (no path is also a
            // directory of another).
            let clean = |m: &BTreeMap<String, EntryKind>| -> BTreeMap<String, EntryKind> {
                m.iter()
                    .filter(|(p, _)| !m.keys().any(|q| q.starts_with(&format!("{p}/"))))
                    .map(|(p, k)| (p.clone(), *k))
                    .collect()
            };
            let (_dir, store) = new_store();
            let to_entries = |m: &BTreeMap<String, EntryKind>| -> BTreeMap<String, TreeEntry> {
                m.iter()
                    .map(|(p, k)| (p.clone(), put_leaf(&store, *k, p.as_bytes())))
                    .collect()
            };
            let a = to_entries(&clean(&before));
            let b = to_entries(&clean(&after));
            let root_a = build_tree(&store, &a).unwrap();
            let mut changes: BTreeMap<String, Option<TreeEntry>> = BTreeMap::new();
            for p in a.keys().chain(b.keys()) {
                if a.get(p) != b.get(p) {
                    changes.insert(p.clone(), b.get(p).copied());
                }
            }
            let updated = update_tree(&store, &root_a, &changes).unwrap();
            prop_assert_eq!(updated, build_tree(&store, &b).unwrap());
        }
    }
}
