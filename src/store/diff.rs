//! Comparing two trees: which leaf paths differ ([`diff_trees`], reading
//! only the directories whose ids differ) and how people read each
//! difference ([`classify`]: added, modified, deleted, not captured,
//! captured again). Reading and building trees as path maps is `flat_tree.rs`'s.
//!
//! Paths are relative, '/'-joined sequences of entry names (no leading or trailing '/').

use super::error::StoreError;
use super::flat_tree::{flatten_into, join, load};
use super::object_id::ObjectId;
use super::objects::Store;
use super::tree::{empty_tree_id, EntryKind, Tree, TreeEntry, UncapturedReason};

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
    NotCaptured(UncapturedReason),
    /// Captured at the new side, present but not captured at the old one
    /// (with why): whether it changed is unknown.
    Recaptured(UncapturedReason),
}

/// The paths one side of a diff (`|c| c.old` or `|c| c.new`) holds as
/// uncaptured, with why: a path below one of them is as uncaptured as it.
/// (Few paths are; they are copied, so the changes stay free to filter.)
pub struct UncapturedPaths(std::collections::HashMap<String, UncapturedReason>);

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
    pub fn above(&self, path: &str) -> Option<UncapturedReason> {
        if self.0.is_empty() {
            return None;
        }
        crate::repo_path::ancestors(path).find_map(|a| self.0.get(a).copied())
    }

    /// The reason when `path` itself or a directory above it is uncaptured.
    pub fn at(&self, path: &str) -> Option<UncapturedReason> {
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

#[cfg(test)]
mod tests;
