use super::discover::{Protection, SessionFile};
use super::*;
use crate::store::{empty_tree_id, EntryKind};

fn session(name: &str, age_days: u64, protection: Option<Protection>) -> SessionFile {
    SessionFile {
        path: PathBuf::from(name),
        removable: true,
        modified: SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 86_400)
            - Duration::from_secs(age_days * 86_400),
        len: 1,
        protection,
        roots: Vec::new(),
    }
}

fn names(sessions: &[SessionFile], idx: &[usize]) -> Vec<String> {
    idx.iter()
        .map(|&i| sessions[i].path.display().to_string())
        .collect()
}

#[test]
fn keep_rules_are_a_union() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 86_400);
    let mut sessions = vec![
        session("d4", 4, None),
        session("d1", 1, None),
        session("d3", 3, Some(Protection::Labelled)),
        session("d2", 2, None),
        session("d5", 5, None),
    ];
    let mut registered = session("reg", 9, None);
    registered.removable = false;
    sessions.push(registered);
    let ranked = newest_first(&sessions);
    assert_eq!(names(&sessions, &ranked), ["d1", "d2", "d3", "d4", "d5"]);

    let prune = |keep: usize, age: Option<Option<Duration>>| {
        names(
            &sessions,
            &retention_prunes(&sessions, &ranked, keep, age, now),
        )
    };
    // Oldest first; protected and registered never.
    assert_eq!(prune(0, None), ["d5", "d4", "d2", "d1"]);
    assert_eq!(prune(2, None), ["d5", "d4"]);
    // The protected d3 counts among the newest 3.
    assert_eq!(prune(3, None), ["d5", "d4"]);
    let days = |d: f64| parse_max_age(Some(d)).unwrap();
    assert_eq!(prune(0, days(2.5)), ["d5", "d4"]);
    assert_eq!(prune(4, days(2.5)), ["d5"]);
    assert_eq!(prune(0, days(0.0)), ["d5", "d4", "d2", "d1"]);
    assert!(prune(0, days(f64::INFINITY)).is_empty());
    assert!(prune(0, days(1e300)).is_empty());

    let pruned = retention_prunes(&sessions, &ranked, 4, None, now);
    assert_eq!(
        names(
            &sessions,
            &budget_candidates(&sessions, &ranked, 1, &pruned)
        ),
        ["d4", "d2"]
    );
}

#[test]
fn max_age_must_be_a_non_negative_number() {
    assert!(parse_max_age(None).unwrap().is_none());
    for bad in [-1.0, f64::NAN, f64::NEG_INFINITY] {
        assert!(matches!(
            parse_max_age(Some(bad)),
            Err(GcError::InvalidParams(_))
        ));
    }
    assert_eq!(
        parse_max_age(Some(1.5)).unwrap(),
        Some(Some(Duration::from_secs(129_600)))
    );
}

#[test]
fn grace_cutoff() {
    let now = SystemTime::now();
    let cutoff = now.checked_sub(Duration::from_secs(60));
    assert!(is_old(now - Duration::from_secs(61), cutoff));
    assert!(!is_old(now - Duration::from_secs(59), cutoff));
    assert!(!is_old(now, None));
}

#[test]
fn walker_reads_each_tree_once_and_survives_missing_and_corrupt_trees() {
    use crate::store::{Tree, TreeEntry};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), false).unwrap();
    let blob = store.put(b"content").unwrap().id;
    let mut sub = Tree::default();
    sub.entries
        .insert("f".into(), TreeEntry::new(EntryKind::File, blob, 7));
    let sub_id = store.put_tree(&sub).unwrap();
    let mut root = Tree::default();
    for name in ["a", "b"] {
        root.entries
            .insert(name.into(), TreeEntry::new(EntryKind::Tree, sub_id, 0));
    }
    let missing = ObjectId::of(b"never stored");
    root.entries
        .insert("gone".into(), TreeEntry::new(EntryKind::Tree, missing, 0));
    let root_id = store.put_tree(&root).unwrap();

    let mut blockers = Blockers::default();
    let mut walker = Walker::new(&store);
    walker.memoize = true;
    let got = walker
        .reach_new(
            &[root_id, ObjectId::of(b"missing root"), empty_tree_id()],
            &mut blockers,
        )
        .unwrap();
    assert!(!blockers.any(), "a missing tree does not block gc");
    for id in [root_id, sub_id, blob] {
        assert!(got.contains(&id));
    }
    assert_eq!(walker.memo.len(), 4);

    // A blob named as a tree cannot be decoded: gc must not delete anything.
    let mut blockers = Blockers::default();
    Walker::new(&store)
        .reach_new(&[blob], &mut blockers)
        .unwrap();
    assert!(blockers.any());
}
