//! The tree decoder against arbitrary and mutated input: it refuses or decodes to a tree
//! whose encoding is byte-identical (the encoding is canonical), and never panics.

use super::*;
use proptest::prelude::*;

fn some_tree() -> Tree {
    let mut entries = BTreeMap::new();
    for (i, name) in ["a", "b.txt", "dir", "é", "link"].iter().enumerate() {
        let kind = match i % 4 {
            0 => EntryKind::File,
            1 => EntryKind::Executable,
            2 => EntryKind::Tree,
            _ => EntryKind::Symlink,
        };
        let size = if kind == EntryKind::Tree {
            0
        } else {
            i as u64 * 7
        };
        entries.insert(
            name.to_string(),
            TreeEntry::new(kind, ObjectId::of(name.as_bytes()), size),
        );
    }
    Tree { entries }
}

/// Any leaf entry a scan can record: a file with any permission bits (and
/// whatever else `st_mode` carries), a symlink, a sub-tree, an uncaptured path.
fn any_entry() -> impl Strategy<Value = TreeEntry> {
    let id = any::<[u8; 16]>().prop_map(ObjectId::from_bytes);
    prop_oneof![
        (0u32..0o10000, id.clone(), any::<u64>()).prop_map(|(m, id, size)| TreeEntry::file(
            0o100000 | m,
            id,
            size
        )),
        (id.clone(), any::<u64>()).prop_map(|(id, size)| TreeEntry::new(
            EntryKind::Symlink,
            id,
            size
        )),
        id.prop_map(|id| TreeEntry::new(EntryKind::Tree, id, 0)),
        (0..UncapturedReason::ALL.len())
            .prop_map(|i| TreeEntry::uncaptured(UncapturedReason::ALL[i])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every valid tree round-trips through its encoding, which is version 1 exactly
    /// when every mode is its kind's ordinary one.
    #[test]
    fn valid_trees_round_trip(
        entries in proptest::collection::btree_map("[a-zé.]{1,6}", any_entry(), 0..12)
    ) {
        let entries: BTreeMap<String, TreeEntry> = entries
            .into_iter()
            .filter(|(name, _)| check_name(name).is_ok())
            .collect();
        let t = Tree { entries };
        prop_assert!(t.validate().is_ok());
        let bytes = t.encode();
        let ordinary = t.entries.values().all(TreeEntry::has_ordinary_mode);
        prop_assert_eq!(bytes[4], if ordinary { 1 } else { 2 });
        let back = Tree::decode(&bytes);
        prop_assert!(back.is_ok(), "{:?}", back);
        prop_assert_eq!(back.ok(), Some(t));
    }

    #[test]
    fn mutated_v2_encodings_are_refused_or_canonical(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    ) {
        let mut t = some_tree();
        t.entries.insert("key".into(), TreeEntry::file(0o100600, ObjectId::of(b"k"), 1));
        let mut bytes = t.encode();
        for (at, b) in flips {
            let i = at % bytes.len();
            bytes[i] = b;
        }
        if let Ok(t) = Tree::decode(&bytes) {
            prop_assert_eq!(t.encode(), bytes);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        if let Ok(t) = Tree::decode(&bytes) {
            prop_assert_eq!(t.encode(), bytes);
        }
    }

    #[test]
    fn mutated_encodings_are_refused_or_canonical(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in proptest::option::of(any::<usize>()),
    ) {
        let mut bytes = some_tree().encode();
        for (at, b) in flips {
            let i = at % bytes.len();
            bytes[i] = b;
        }
        if let Some(c) = cut {
            bytes.truncate(c % (bytes.len() + 1));
        }
        if let Ok(t) = Tree::decode(&bytes) {
            prop_assert_eq!(t.encode(), bytes);
        }
    }
}
