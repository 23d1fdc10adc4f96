//! The tree diff's tests: additions, modifications, deletions and kind changes, a file
//! and a directory swapping places, unchanged sub-trees never read, and classify.

use super::super::flat_tree::tests::{build, put_leaf};
use super::*;
use crate::store::new_test_store as new_store;
use crate::store::{build_tree, flatten, lookup};
use std::collections::BTreeMap;

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
    use UncapturedReason::{Unreadable, Unstable};
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
