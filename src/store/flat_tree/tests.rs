//! The flat trees' tests: flatten, lookup and entries_under on built trees, build_tree's
//! sharing, grafts and refusals, and (proptest) build/flatten/update agreeing.

use super::*;
use crate::store::diff_trees;
use proptest::prelude::*;

use crate::store::new_test_store as new_store;

pub(in crate::store) fn put_leaf(store: &Store, kind: EntryKind, content: &[u8]) -> TreeEntry {
    let out = store.put(content).unwrap();
    TreeEntry::new(kind, out.id, content.len() as u64)
}

/// Builds a tree from `(path, kind, content)` triples.
pub(in crate::store) fn build(store: &Store, files: &[(&str, EntryKind, &[u8])]) -> ObjectId {
    let map: BTreeMap<String, TreeEntry> = files
        .iter()
        .map(|(p, k, c)| (p.to_string(), put_leaf(store, *k, c)))
        .collect();
    build_tree(store, &map).unwrap()
}

use EntryKind::{Executable, File, Symlink};

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
        let map: BTreeMap<String, TreeEntry> = pair.iter().map(|p| (p.to_string(), leaf)).collect();
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
