//! gc through the library: real sessions made by the engine in temporary projects and a
//! temporary store, then `rewind::gc::run` with a small grace period or a fake `now`.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use rewind::engine::api::{
    GcParams, GcResult, LabelParams, SnapshotKind, SnapshotParams, VerifyProblemKind,
};
use rewind::engine::{Engine, EngineConfig};
use rewind::gc::{self, GcError, GcOptions};
use rewind::session::{NewEntry, SessionLog};
use rewind::store::{flatten, EntryKind, ObjectId, Store, Tree, TreeEntry};

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

/// One store shared by sessions of one or more temporary projects.
struct Fx {
    store: tempfile::TempDir,
    projects: Vec<tempfile::TempDir>,
}

impl Fx {
    fn new() -> Fx {
        Fx {
            store: tempfile::tempdir().unwrap(),
            projects: Vec::new(),
        }
    }

    fn store_dir(&self) -> PathBuf {
        self.store.path().join("store")
    }

    fn store(&self) -> Store {
        Store::open(&self.store_dir(), false).unwrap()
    }

    fn new_project(&mut self) -> PathBuf {
        let p = tempfile::tempdir().unwrap();
        let path = p.path().to_path_buf();
        self.projects.push(p);
        path
    }

    fn config(&self, project: &Path, session: Option<PathBuf>) -> EngineConfig {
        EngineConfig {
            cwd: Some(project.to_path_buf()),
            session_file: session,
            store_dir: Some(self.store_dir()),
            ..Default::default()
        }
    }

    fn open(&self, project: &Path) -> Engine {
        Engine::open(self.config(project, None)).unwrap().0
    }

    /// Reopens an existing session (its project comes from its header).
    fn resume(&self, session: &Path) -> (Engine, rewind::engine::api::Opened) {
        Engine::open(EngineConfig {
            session_file: Some(session.to_path_buf()),
            store_dir: Some(self.store_dir()),
            ..Default::default()
        })
        .unwrap()
    }

    /// A closed session of its own project whose history holds a unique, incompressible
    /// blob of `unique` bytes that no later tree (and no stat cache) names: the file is
    /// written, snapshotted, deleted and snapshotted again.
    fn session_with_unique(&mut self, unique: usize) -> (PathBuf, ObjectId) {
        let project = self.new_project();
        write(&project, "common.txt", b"shared by every session\n");
        let mut e = self.open(&project);
        let content = random_bytes(unique);
        write(&project, "unique.bin", &content);
        write(
            &project,
            "src/lib.rs",
            format!("// {}\n", rand::random::<u64>()).as_bytes(),
        );
        snap(&mut e);
        std::fs::remove_file(project.join("unique.bin")).unwrap();
        snap(&mut e);
        (e.session_file().to_path_buf(), ObjectId::of(&content))
    }
}

fn write(project: &Path, rel: &str, content: &[u8]) {
    let p = project.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn random_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|_| rand::random::<u8>()).collect()
}

fn snap(e: &mut Engine) {
    e.snapshot(SnapshotParams {
        force: Some(true),
        ..Default::default()
    })
    .unwrap();
}

fn set_mtime(path: &Path, t: SystemTime) {
    File::open(path).unwrap().set_modified(t).unwrap();
}

fn age(path: &Path, by: Duration) {
    set_mtime(path, SystemTime::now() - by);
}

/// Every tree a session (and its journal) names.
fn trees_of(session: &Path) -> Vec<ObjectId> {
    fn collect(v: &Value, key_is_tree: bool, out: &mut Vec<ObjectId>) {
        match v {
            Value::String(s) if key_is_tree => out.extend(ObjectId::from_hex(s).ok()),
            Value::Array(a) => a.iter().for_each(|x| collect(x, key_is_tree, out)),
            Value::Object(m) => m
                .iter()
                .for_each(|(k, x)| collect(x, k.ends_with("TreeHash"), out)),
            _ => {}
        }
    }
    let log = SessionLog::open_read_only(session).unwrap();
    let mut out = Vec::new();
    for e in log.index().entries() {
        collect(&Value::Object(e.raw.clone()), false, &mut out);
    }
    assert!(!out.is_empty(), "{} names no tree", session.display());
    out
}

/// A stored tree holding one file `f` with `content`: (tree, blob).
fn one_file_tree(store: &Store, content: &[u8]) -> (ObjectId, ObjectId) {
    let blob = store.put(content).unwrap().id;
    let mut tree = Tree::default();
    tree.entries.insert(
        "f".into(),
        TreeEntry::new(EntryKind::File, blob, content.len() as u64),
    );
    (store.put_tree(&tree).unwrap(), blob)
}

/// Every snapshot of the session reads back: every tree flattens and every blob verifies.
fn assert_reads_back(store: &Store, session: &Path) {
    for tree in trees_of(session) {
        let files = flatten(store, &tree)
            .unwrap_or_else(|e| panic!("tree {tree} of {}: {e}", session.display()));
        for (path, entry) in files {
            store
                .get(&entry.id)
                .unwrap_or_else(|e| panic!("{path} in tree {tree} of {}: {e}", session.display()));
        }
    }
}

/// `verify` finds nothing wrong in the whole store.
#[track_caller]
fn assert_verified(store: &Store) {
    let r = rewind::verify::run(store).unwrap();
    assert!(r.ok, "verify: {:?}", r.problems);
    assert!(r.objects > 0);
}

fn run(store: &Store, params: GcParams, grace: Duration, now: SystemTime) -> GcResult {
    gc::run(store, &params, &GcOptions { grace, now }).unwrap()
}

/// gc as if run two hours from now with a one-hour grace period: every object existing now
/// is past the grace period.
fn run_later(store: &Store, params: GcParams) -> GcResult {
    run(store, params, HOUR, SystemTime::now() + 2 * HOUR)
}

fn keep_last(n: u64) -> GcParams {
    GcParams {
        keep_last: Some(n),
        ..Default::default()
    }
}

/// Stores unreferenced blobs; returns their ids and total stored bytes.
fn strays(store: &Store, n: usize) -> (Vec<ObjectId>, u64) {
    let mut ids = Vec::new();
    let mut bytes = 0;
    for i in 0..n {
        let out = store
            .put(format!("stray object {i} {}", rand::random::<u64>()).as_bytes())
            .unwrap();
        ids.push(out.id);
        bytes += out.stored_bytes;
    }
    // A batch's objects go into a pack, published here.
    store.sync().unwrap();
    (ids, bytes)
}

/// Ages every object file and pack of the store.
fn age_all_objects(store: &Store, by: Duration) {
    fn visit(dir: &Path, by: Duration) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(&path, by);
            } else {
                age(&path, by);
            }
        }
    }
    visit(&store.root().join("objects"), by);
}

/// The bytes gc counts: every stored object's record (a loose file, or its
/// record in a pack; pack headers and indexes are the store's usage, not
/// any object's).
fn record_bytes(store: &Store) -> u64 {
    store
        .list_objects()
        .unwrap()
        .iter()
        .map(|o| o.stored_bytes)
        .sum()
}

/// The pack files of the store now.
fn pack_files(store: &Store) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(store.root().join("objects").join("pack")) else {
        return Vec::new();
    };
    dir.flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pack"))
        .collect()
}

fn session_count(store: &Store) -> usize {
    std::fs::read_dir(store.sessions_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "jsonl")
        })
        .count()
}

#[test]
fn collects_unreachable_objects_and_keeps_reachable_ones() {
    let mut fx = Fx::new();
    let (session, unique) = fx.session_with_unique(4096);
    let store = fx.store();
    let (stray_ids, stray_bytes) = strays(&store, 5);
    let before = store.usage().unwrap();
    let before_bytes = record_bytes(&store);

    let r = run_later(&store, GcParams::default());
    assert_eq!(r.objects_before, before.objects);
    assert_eq!(r.bytes_before, before_bytes);
    assert_eq!(r.objects_removed, 5);
    assert_eq!(r.bytes_freed, stray_bytes);
    assert_eq!(r.sessions_pruned, 0);
    assert!(r.budget_met);
    assert!(!r.dry_run);
    assert!(r.pruned_sessions.is_empty());
    for id in stray_ids {
        assert!(!store.contains(&id));
    }
    assert!(store.get(&unique).is_ok(), "history is reachable");
    assert_reads_back(&store, &session);
    assert_eq!(store.usage().unwrap().objects, before.objects - 5);

    // Nothing left to collect.
    let again = run_later(&store, GcParams::default());
    assert_eq!(again.objects_removed, 0);
    assert_eq!(again.bytes_freed, 0);
}

#[test]
fn grace_period_spares_young_unreachable_objects() {
    let mut fx = Fx::new();
    let (session, _) = fx.session_with_unique(100);
    let store = fx.store();
    let (old_stray, _) = strays(&store, 1);

    let r = run(&store, GcParams::default(), HOUR, SystemTime::now());
    assert_eq!(r.objects_removed, 0);

    // Only the stray past the grace period goes; reachable objects just as old stay.
    // (Age is a pack's: the young strays are a batch, so a pack, of their own.)
    age_all_objects(&store, 2 * HOUR);
    let (young_strays, _) = strays(&store, 2);
    let r = run(&store, GcParams::default(), HOUR, SystemTime::now());
    assert_eq!(r.objects_removed, 1);
    assert!(!store.contains(&old_stray[0]));
    assert!(store.contains(&young_strays[0]) && store.contains(&young_strays[1]));
    assert_reads_back(&store, &session);
}

#[test]
fn keep_last_prunes_older_sessions_and_their_objects() {
    let mut fx = Fx::new();
    let mut sessions = Vec::new();
    for days in [3, 1, 2] {
        let (path, unique) = fx.session_with_unique(2048);
        age(&path, days * DAY);
        sessions.push((path, unique));
    }
    let store = fx.store();
    let r = run_later(&store, keep_last(1));
    assert_eq!(r.sessions_pruned, 2);
    // Oldest first.
    assert_eq!(
        r.pruned_sessions,
        [&sessions[0].0, &sessions[2].0].map(|p| p.display().to_string())
    );
    assert!(r.objects_removed > 0);
    assert!(!sessions[0].0.exists() && !sessions[2].0.exists());
    assert!(!store.contains(&sessions[0].1) && !store.contains(&sessions[2].1));
    assert!(store.contains(&sessions[1].1));
    assert_reads_back(&store, &sessions[1].0);
    assert_eq!(session_count(&store), 1);
}

#[test]
fn max_age_days_prunes_old_sessions() {
    let mut fx = Fx::new();
    let mut sessions = Vec::new();
    for days in [3, 2, 1] {
        let (path, unique) = fx.session_with_unique(1024);
        age(&path, days * DAY);
        sessions.push((path, unique));
    }
    let store = fx.store();
    let params = GcParams {
        max_age_days: Some(1.5),
        ..Default::default()
    };
    let r = run(
        &store,
        params,
        Duration::ZERO,
        SystemTime::now() + Duration::from_secs(1),
    );
    assert_eq!(r.sessions_pruned, 2);
    assert!(!sessions[0].0.exists() && !sessions[1].0.exists());
    assert!(sessions[2].0.exists());
    assert!(!store.contains(&sessions[0].1) && !store.contains(&sessions[1].1));
    assert_reads_back(&store, &sessions[2].0);

    // keepLast and maxAgeDays together keep the union.
    let mut fx = Fx::new();
    let mut paths = Vec::new();
    for days in [5, 4, 1] {
        let (path, _) = fx.session_with_unique(10);
        age(&path, days * DAY);
        paths.push(path);
    }
    let store = fx.store();
    let params = GcParams {
        keep_last: Some(2),
        max_age_days: Some(2.0),
        ..Default::default()
    };
    let r = run_later(&store, params);
    assert_eq!(r.pruned_sessions, [paths[0].display().to_string()]);

    let bad = GcParams {
        max_age_days: Some(-1.0),
        ..Default::default()
    };
    assert!(matches!(
        gc::run(&store, &bad, &GcOptions::default()),
        Err(GcError::InvalidParams(_))
    ));
}

#[test]
fn budget_prunes_oldest_sessions_until_met() {
    let mut fx = Fx::new();
    let mut sessions = Vec::new();
    for days in [3, 2, 1] {
        let (path, unique) = fx.session_with_unique(64 << 10);
        age(&path, days * DAY);
        sessions.push((path, unique));
    }
    let store = fx.store();
    let total = record_bytes(&store);

    // Just below the current size: dropping the oldest session is enough.
    let params = GcParams {
        budget_bytes: Some(total - 1),
        ..Default::default()
    };
    let r = run_later(&store, params);
    assert_eq!(r.pruned_sessions, [sessions[0].0.display().to_string()]);
    assert!(r.budget_met);
    assert!(r.bytes_freed >= 64 << 10);
    assert!(record_bytes(&store) < total);
    assert!(!store.contains(&sessions[0].1));
    assert_reads_back(&store, &sessions[1].0);
    assert_reads_back(&store, &sessions[2].0);

    // An unreachable budget: everything outside the newest keepLast goes, and budgetMet
    // says it was not enough.
    let params = GcParams {
        budget_bytes: Some(0),
        keep_last: Some(1),
        ..Default::default()
    };
    let r = run_later(&store, params);
    assert_eq!(r.pruned_sessions, [sessions[1].0.display().to_string()]);
    assert!(!r.budget_met);
    assert!(sessions[2].0.exists());
    assert_reads_back(&store, &sessions[2].0);

    // A budget already met prunes nothing.
    let params = GcParams {
        budget_bytes: Some(u64::MAX),
        ..Default::default()
    };
    let r = run_later(&store, params);
    assert_eq!(r.sessions_pruned, 0);
    assert!(r.budget_met);
}

#[test]
fn budget_counts_young_unreachable_objects_and_frees_only_exclusive_ones() {
    let mut fx = Fx::new();
    // Two sessions of the same project share its baseline blobs.
    let project = fx.new_project();
    let shared = random_bytes(32 << 10);
    write(&project, "shared.bin", &shared);
    let mut paths = Vec::new();
    for days in [2, 1] {
        let mut e = fx.open(&project);
        if days == 1 {
            // Gone from the project, so no stat cache names it either.
            std::fs::remove_file(project.join("shared.bin")).unwrap();
        }
        snap(&mut e);
        paths.push(e.session_file().to_path_buf());
        drop(e);
        age(paths.last().unwrap(), days * DAY);
    }
    let store = fx.store();
    // now = real now: the young object is inside the grace period, the rest is aged.
    age_all_objects(&store, 2 * HOUR);
    // Young garbage stays after any sweep, so it counts against the budget.
    let young = store.put(&random_bytes(16 << 10)).unwrap();
    store.sync().unwrap();
    let total = record_bytes(&store);
    let params = GcParams {
        budget_bytes: Some(young.stored_bytes),
        ..Default::default()
    };
    let r = run(&store, params, HOUR, SystemTime::now());
    assert_eq!(r.sessions_pruned, 2, "{r:?}");
    assert!(r.budget_met);
    assert_eq!(r.bytes_freed, total - young.stored_bytes);
    assert!(store.contains(&young.id));
    assert!(!store.contains(&ObjectId::of(&shared)));
}

#[test]
fn protected_sessions_are_never_pruned() {
    let mut fx = Fx::new();
    // Held open by a live engine (the caller's own sidecar, say).
    let held_project = fx.new_project();
    write(&held_project, "a.txt", b"held\n");
    let held = fx.open(&held_project);
    let held_path = held.session_file().to_path_buf();

    // A labelled checkpoint.
    let (labelled, labelled_blob) = fx.session_with_unique(100);
    {
        let (mut e, init) = fx.resume(&labelled);
        e.label(LabelParams {
            target_id: init.baseline.entry_id.clone(),
            label: Some("keep me".into()),
            note: None,
        })
        .unwrap();
    }

    // A label set, then cleared: no longer protected.
    let (cleared, _) = fx.session_with_unique(100);
    {
        let (mut e, init) = fx.resume(&cleared);
        for label in [Some("tmp".to_string()), None] {
            e.label(LabelParams {
                target_id: init.baseline.entry_id.clone(),
                label,
                note: None,
            })
            .unwrap();
        }
    }

    // A session whose one change is a snapshot of `kind` with `label`.
    let mut labelled_snapshot = |kind: SnapshotKind, label: &str| {
        let project = fx.new_project();
        write(&project, "x.txt", b"x\n");
        let mut e = fx.open(&project);
        write(&project, "x.txt", b"y\n");
        e.snapshot(SnapshotParams {
            kind: Some(kind),
            label: Some(label.into()),
            ..Default::default()
        })
        .unwrap();
        e.session_file().to_path_buf()
    };
    // A checkpoint asked for by name.
    let snap_labelled = labelled_snapshot(SnapshotKind::Manual, "milestone");
    // A turn's snapshot labelled with its prompt, as hooks and `rewind run`
    // record every turn: a description, not a keep mark (it goes).
    let prompt_labelled = labelled_snapshot(SnapshotKind::Message, "fix the bug");

    // An approval, appended as the engine's approve does.
    let (approved, approved_blob) = fx.session_with_unique(100);
    {
        let (mut log, _) = SessionLog::open(&approved, false).unwrap();
        let tree = *trees_of(&approved).last().unwrap();
        let leaf = log.index().leaf().map(|e| e.id.clone());
        log.append(NewEntry::custom(
            "approval",
            leaf,
            json!({"approvedTreeHash": tree.to_hex(), "message": "ok"}),
        ))
        .unwrap();
    }

    // And an ordinary one that goes.
    let (plain, plain_blob) = fx.session_with_unique(100);

    for p in [
        &held_path,
        &labelled,
        &cleared,
        &snap_labelled,
        &prompt_labelled,
        &approved,
        &plain,
    ] {
        age(p, 30 * DAY);
    }
    let store = fx.store();
    let params = GcParams {
        keep_last: Some(0),
        budget_bytes: Some(0),
        ..Default::default()
    };
    let r = run_later(&store, params);
    let mut pruned = r.pruned_sessions.clone();
    pruned.sort();
    let mut want = vec![
        cleared.display().to_string(),
        prompt_labelled.display().to_string(),
        plain.display().to_string(),
    ];
    want.sort();
    assert_eq!(pruned, want);
    assert!(!r.budget_met);
    for p in [&held_path, &labelled, &snap_labelled, &approved] {
        assert!(p.exists(), "{} was pruned", p.display());
        assert_reads_back(&store, p);
    }
    assert!(store.contains(&labelled_blob) && store.contains(&approved_blob));
    assert!(!store.contains(&plain_blob));
    drop(held);
}

#[test]
fn registered_session_outside_the_store_is_kept_with_its_objects() {
    let mut fx = Fx::new();
    let project = fx.new_project();
    write(&project, "a.txt", b"a\n");
    let outside = tempfile::tempdir().unwrap();
    let session = outside.path().join("elsewhere/session.jsonl");
    let content = random_bytes(4096);
    {
        let (mut e, _) = Engine::open(fx.config(&project, Some(session.clone()))).unwrap();
        write(&project, "b.bin", &content);
        snap(&mut e);
        std::fs::remove_file(project.join("b.bin")).unwrap();
        snap(&mut e);
    }
    age(&session, 100 * DAY);
    let store = fx.store();
    assert!(
        std::fs::read_dir(store.root().join("registry"))
            .unwrap()
            .count()
            >= 1,
        "the engine registers the session"
    );
    let params = GcParams {
        keep_last: Some(0),
        max_age_days: Some(0.0),
        budget_bytes: Some(0),
        ..Default::default()
    };
    let r = run_later(&store, params);
    assert_eq!(r.sessions_pruned, 0);
    assert_eq!(r.objects_removed, 0);
    assert!(session.exists());
    assert!(store.contains(&ObjectId::of(&content)));
    assert_reads_back(&store, &session);
}

#[test]
fn dry_run_removes_nothing_and_reports_what_would_go() {
    let mut fx = Fx::new();
    let mut paths = Vec::new();
    for days in [3, 2, 1] {
        let (path, _) = fx.session_with_unique(1000);
        age(&path, days * DAY);
        paths.push(path);
    }
    let store = fx.store();
    strays(&store, 4);
    let before = store.usage().unwrap();
    let before_bytes = record_bytes(&store);
    let params = |dry| GcParams {
        dry_run: Some(dry),
        keep_last: Some(1),
        ..Default::default()
    };
    let dry = run_later(&store, params(true));
    assert!(dry.dry_run);
    assert_eq!(dry.sessions_pruned, 2);
    assert!(dry.objects_removed > 4);
    assert_eq!(store.usage().unwrap(), before);
    assert!(paths.iter().all(|p| p.exists()));

    let real = run_later(&store, params(false));
    assert!(!real.dry_run);
    assert_eq!(real.pruned_sessions, dry.pruned_sessions);
    assert_eq!(real.objects_removed, dry.objects_removed);
    assert_eq!(real.bytes_freed, dry.bytes_freed);
    assert_eq!(record_bytes(&store), before_bytes - real.bytes_freed);
}

#[test]
fn an_unparseable_session_blocks_object_deletion() {
    let mut fx = Fx::new();
    let (good, _) = fx.session_with_unique(100);
    let (old, old_blob) = fx.session_with_unique(100);
    age(&good, DAY);
    age(&old, 2 * DAY);
    let store = fx.store();
    let (stray_ids, _) = strays(&store, 3);
    let broken = store.sessions_dir().join("broken.jsonl");
    std::fs::write(&broken, "this is not a session\n").unwrap();
    age(&broken, 10 * DAY);

    let params = GcParams {
        keep_last: Some(1),
        budget_bytes: Some(0),
        ..Default::default()
    };
    let r = run_later(&store, params.clone());
    assert_eq!(r.objects_removed, 0);
    assert_eq!(r.bytes_freed, 0);
    // Keep rules still apply, the broken file is protected, the budget prunes nothing.
    assert_eq!(r.pruned_sessions, [old.display().to_string()]);
    assert!(broken.exists());
    assert!(!r.budget_met);
    for id in stray_ids.iter().chain([&old_blob]) {
        assert!(store.contains(id));
    }

    std::fs::remove_file(&broken).unwrap();
    let r = run_later(&store, params);
    assert!(r.objects_removed >= 4);
    assert!(!store.contains(&old_blob));
    assert_reads_back(&store, &good);
}

#[test]
fn a_missing_tree_is_skipped_and_a_journal_keeps_its_trees() {
    let mut fx = Fx::new();
    let (session, _) = fx.session_with_unique(100);
    let store = fx.store();
    {
        let (mut log, _) = SessionLog::open(&session, false).unwrap();
        let leaf = log.index().leaf().map(|e| e.id.clone());
        let missing = ObjectId::of(b"a tree that was never stored");
        log.append(NewEntry::custom(
            "navigation",
            leaf,
            json!({"workingTreeHash": missing.to_hex()}),
        ))
        .unwrap();
    }
    // A tree (and blob) only a restore journal names.
    let (tree_id, blob) = one_file_tree(&store, b"only the journal needs me");
    let mut journal = session.as_os_str().to_os_string();
    journal.push(".journal");
    std::fs::write(
        &journal,
        json!({"version": 1, "unrevertEntryId": "x", "preRollbackTreeHash": tree_id.to_hex(),
               "workingTreeHash": tree_id.to_hex(), "writes": ["f"], "deletes": []})
        .to_string(),
    )
    .unwrap();
    let (stray_ids, _) = strays(&store, 2);
    age(&session, 10 * DAY);

    let r = run_later(&store, keep_last(0));
    assert_eq!(r.objects_removed, 2);
    assert_eq!(r.sessions_pruned, 0, "a session with a journal is kept");
    assert!(!store.contains(&stray_ids[0]));
    assert!(store.contains(&tree_id) && store.contains(&blob));
}

#[test]
fn blobs_the_stat_cache_vouches_for_survive_pruning() {
    let mut fx = Fx::new();
    let project = fx.new_project();
    let content = random_bytes(2048);
    write(&project, "big.bin", &content);
    write(&project, "small.txt", b"small\n");
    // Older than the racy window (two seconds for whole-second
    // timestamps; the ctime counts too, which nothing can set back), so
    // the scan caches them.
    std::thread::sleep(Duration::from_millis(2_100));
    let first = {
        let e = fx.open(&project);
        e.session_file().to_path_buf()
    };
    age(&first, 2 * DAY);
    let store = fx.store();
    let r = run_later(&store, keep_last(0));
    assert_eq!(r.pruned_sessions, [first.display().to_string()]);
    assert!(
        store.contains(&ObjectId::of(&content)),
        "the stat cache still names the blob"
    );
    // A new session on the project takes its baseline from cache hits, without putting
    // the blobs again: they must be there.
    let second = {
        let e = fx.open(&project);
        e.session_file().to_path_buf()
    };
    assert_reads_back(&store, &second);
}

#[test]
fn a_concurrent_writer_loses_nothing() {
    let mut fx = Fx::new();
    let project = fx.new_project();
    for i in 0..20 {
        write(
            &project,
            &format!("dir{}/f{i}.txt", i % 4),
            format!("file {i}\n").as_bytes(),
        );
    }
    // Session A: some history, held open (idle) for the whole test.
    let mut a = fx.open(&project);
    for round in 0..3 {
        write(
            &project,
            "dir0/f0.txt",
            format!("round {round}\n").as_bytes(),
        );
        snap(&mut a);
    }
    let a_path = a.session_file().to_path_buf();
    let store = fx.store();
    // Plenty of old garbage, so sweeps take a while and overlap the writer.
    let (stray_ids, _) = strays(&store, 1500);
    assert!(
        store.list_objects().unwrap().iter().any(|o| o.packed),
        "most strays are packed: the sweep rewrites or deletes packs"
    );
    age_all_objects(&store, 2 * HOUR);

    let done = Arc::new(AtomicBool::new(false));
    let (release, released) = std::sync::mpsc::channel::<()>();
    let writer = {
        let config = fx.config(&project, None);
        let project = project.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let (mut b, _) = Engine::open(config).unwrap();
            for i in 0..25 {
                write(
                    &project,
                    &format!("new/b{i}.txt"),
                    format!("b {i} {}\n", rand::random::<u64>()).as_bytes(),
                );
                write(&project, "dir1/f1.txt", format!("edit {i}\n").as_bytes());
                snap(&mut b);
            }
            done.store(true, Ordering::SeqCst);
            // Stay open (protected) until gc is done pruning.
            let _ = released.recv();
            b.session_file().to_path_buf()
        })
    };
    // keepLast 0: only the locks keep both sessions.
    let params = keep_last(0);
    let mut removed = 0;
    let mut runs = 0;
    while !done.load(Ordering::SeqCst) || runs == 0 {
        let r = run(&store, params.clone(), HOUR, SystemTime::now());
        assert_eq!(r.sessions_pruned, 0);
        removed += r.objects_removed;
        runs += 1;
    }
    release.send(()).unwrap();
    let b_path = writer.join().unwrap();
    removed += run(&store, GcParams::default(), HOUR, SystemTime::now()).objects_removed;
    assert_eq!(removed, 1500, "exactly the old garbage, over {runs} runs");
    for id in &stray_ids {
        assert!(!store.contains(id));
    }
    drop(a);
    assert_reads_back(&store, &a_path);
    assert_reads_back(&store, &b_path);
    let seen: HashSet<PathBuf> = [a_path, b_path].into_iter().collect();
    assert_eq!(seen.len(), 2);
    assert_verified(&store);
}

/// `verify` reports, and repairs nothing: a missing blob, a damaged object and a session
/// file that does not parse.
#[test]
fn verify_reports_missing_and_damaged_objects_and_bad_sessions() {
    let mut fx = Fx::new();
    // A blob too large for a pack, so a file of its own.
    let (session, unique) = fx.session_with_unique((1 << 20) + 1);
    let store = fx.store();
    assert_verified(&store);
    // A damaged object: flip a byte of the unique blob's file.
    let path = store.object_path(&unique);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let r = rewind::verify::run(&store).unwrap();
    assert!(!r.ok);
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].subject, unique.to_hex());
    assert_eq!(r.problems[0].kind, VerifyProblemKind::CorruptObject);
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing repaired");
    // Missing.
    std::fs::remove_file(&path).unwrap();
    let r = rewind::verify::run(&store).unwrap();
    assert_eq!(r.problems[0].kind, VerifyProblemKind::MissingObject);
    assert!(
        r.problems[0]
            .detail
            .contains(&session.display().to_string()),
        "{:?}",
        r.problems
    );
    // A session that does not parse.
    std::fs::write(&session, "not json\n").unwrap();
    let r = rewind::verify::run(&store).unwrap();
    assert!(r
        .problems
        .iter()
        .any(|p| p.kind == VerifyProblemKind::Session));
}

/// Repro (issue 10, found 1): a file changed and seen only by a `@working` query leaves its
/// blob unreferenced by any session but vouched for by the live engine's stat cache; a gc
/// (here from another "process": its own Store) deleted it, and the next snapshot answered
/// ok while naming the deleted blob. Every later checkpoint must read back, also after a
/// restart.
#[test]
fn a_gc_from_outside_cannot_delete_what_a_live_engines_stat_cache_vouches_for() {
    let mut fx = Fx::new();
    let project = fx.new_project();
    write(&project, "f.txt", b"v0\n");
    age(&project.join("f.txt"), DAY);
    let mut e = fx.open(&project);
    write(&project, "f.txt", b"v1, seen only by a query\n");
    // Not racy: the scan caches it.
    age(&project.join("f.txt"), Duration::from_secs(60));
    e.get_status().unwrap();
    let store = fx.store();
    age_all_objects(&store, 2 * HOUR);
    let r = run(&store, GcParams::default(), HOUR, SystemTime::now());
    assert!(
        r.objects_removed > 0,
        "the unreferenced blob was old garbage"
    );
    e.snapshot(SnapshotParams::default()).unwrap();
    let session = e.session_file().to_path_buf();
    assert_reads_back(&store, &session);
    // After a restart the saved cache must not vouch for the deleted blob either.
    drop(e);
    let (mut e, _) = fx.resume(&session);
    write(&project, "g.txt", b"another file\n");
    e.snapshot(SnapshotParams::default()).unwrap();
    assert_reads_back(&store, &session);
    assert_verified(&store);
}

/// The same through the engine's own `gc` method (the sidecar's), then snapshots on the
/// same engine and after a restart.
#[test]
fn the_engines_own_gc_does_not_break_its_later_snapshots() {
    let mut fx = Fx::new();
    let project = fx.new_project();
    write(&project, "f.txt", b"v0\n");
    age(&project.join("f.txt"), DAY);
    let mut e = fx.open(&project);
    write(&project, "f.txt", b"v1, seen only by a query\n");
    age(&project.join("f.txt"), Duration::from_secs(60));
    e.get_status().unwrap();
    age_all_objects(&fx.store(), 2 * HOUR);
    let r = e.gc(GcParams::default()).unwrap();
    assert!(r.objects_removed > 0);
    e.snapshot(SnapshotParams::default()).unwrap();
    write(&project, "h.txt", b"later\n");
    e.snapshot(SnapshotParams::default()).unwrap();
    let session = e.session_file().to_path_buf();
    let store = fx.store();
    assert_reads_back(&store, &session);
    drop(e);
    let (mut e, _) = fx.resume(&session);
    write(&project, "h.txt", b"later still\n");
    e.snapshot(SnapshotParams::default()).unwrap();
    assert_reads_back(&store, &session);
    assert_verified(&store);
}

/// Repro (issue 10, found 2): a live engine loaded a pack's index at open; gc deleted the
/// pack (its only session pruned); the engine then stored the same contents, deduplicated
/// them against the vanished pack and recorded a checkpoint that restored nothing.
#[test]
fn a_pack_deleted_under_a_live_engine_is_written_again() {
    let mut fx = Fx::new();
    let a = fx.new_project();
    let contents: Vec<Vec<u8>> = (0..100)
        .map(|i| format!("file {i} {}\n", rand::random::<u64>()).into_bytes())
        .collect();
    for (i, c) in contents.iter().enumerate() {
        write(&a, &format!("f{i}.txt"), c);
    }
    let a_session = {
        let e = fx.open(&a);
        e.session_file().to_path_buf()
    };
    let store = fx.store();
    assert!(
        store.list_objects().unwrap().iter().any(|o| o.packed),
        "project A's baseline is packed"
    );
    age(&a_session, DAY);
    // A's baseline pack: the largest (the other holds the empty tree).
    let pack_of_a = pack_files(&store)
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .unwrap();
    let b = fx.new_project();
    let mut e = fx.open(&b);
    // Aged after B's baseline, which re-used (and so made young) A's pack
    // for the files every project shares.
    age_all_objects(&store, 2 * HOUR);
    let r = run(&store, keep_last(1), HOUR, SystemTime::now());
    assert_eq!(r.pruned_sessions, [a_session.display().to_string()]);
    // The pack B's engine loaded at open is gone: deleted, or rewritten
    // under another name without A's garbage (blobs A's stat cache still
    // names stay, which is gc keeping what a cache vouches for).
    assert!(!pack_of_a.exists(), "{} is gone", pack_of_a.display());
    for (i, c) in contents.iter().enumerate() {
        write(&b, &format!("f{i}.txt"), c);
    }
    e.snapshot(SnapshotParams::default()).unwrap();
    assert_reads_back(&store, e.session_file());
    assert_verified(&store);
}

#[test]
fn a_rewind_record_that_cannot_be_read_keeps_the_trees_it_names() {
    let mut fx = Fx::new();
    let (session, _) = fx.session_with_unique(100);
    let store = fx.store();
    // A tree (and blob) only a malformed step-snapshot names: its turnIndex is not a
    // number, so it does not read as a record, and gc must not take it as naming nothing.
    let (tree_id, blob) = one_file_tree(&store, b"only the broken record needs me");
    {
        let (mut log, _) = SessionLog::open(&session, false).unwrap();
        let leaf = log.index().leaf().map(|e| e.id.clone());
        log.append(NewEntry::custom(
            "step-snapshot",
            leaf,
            json!({"snapshotTreeHash": tree_id.to_hex(), "turnIndex": "three"}),
        ))
        .unwrap();
    }
    let (stray_ids, _) = strays(&store, 1);
    age_all_objects(&store, 10 * DAY);

    let r = run_later(&store, keep_last(1));
    assert_eq!(r.objects_removed, 1);
    assert!(!store.contains(&stray_ids[0]));
    assert!(store.contains(&tree_id) && store.contains(&blob));
    // Every object is there; the one problem verify reports is the record itself.
    let r = rewind::verify::run(&store).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].kind, VerifyProblemKind::Session);
    assert!(
        r.problems[0]
            .detail
            .contains(r#"invalid type: string "three""#),
        "{:?}",
        r.problems
    );
}

/// A record rewind wrote that no longer reads — here a step-snapshot whose tree hash is not
/// one — records nothing for the engine, so its checkpoint is gone from every list; verify
/// must say so, naming the session, the entry, the record type and why.
#[test]
fn verify_names_every_rewind_record_it_cannot_read() {
    let mut fx = Fx::new();
    let (session, _) = fx.session_with_unique(100);
    let store = fx.store();
    assert_verified(&store);
    let leaf = {
        let (log, _) = SessionLog::open(&session, false).unwrap();
        log.index().leaf().unwrap().id.clone()
    };
    // Written by hand, as a damaged or foreign line would be: one bad hash, one bad label
    // target type, and a host's custom entry with the same bad hash (not rewind's: fine).
    let lines = [
        format!(
            r#"{{"type":"custom","customType":"step-snapshot","id":"badhash1","parentId":"{leaf}","timestamp":"2026-01-01T00:00:00.000Z","data":{{"snapshotTreeHash":"zz","turnIndex":1}}}}"#
        ),
        r#"{"type":"label","id":"badlabel","parentId":"badhash1","timestamp":"2026-01-01T00:00:01.000Z","label":"x","targetId":7}"#.to_string(),
        r#"{"type":"custom","customType":"host-note","id":"hostnote","parentId":"badlabel","timestamp":"2026-01-01T00:00:02.000Z","data":{"snapshotTreeHash":"zz"}}"#.to_string(),
    ];
    let mut text = std::fs::read_to_string(&session).unwrap();
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&session, &text).unwrap();

    let r = rewind::verify::run(&store).unwrap();
    assert!(!r.ok);
    let who = session.display().to_string();
    let details: Vec<&str> = r
        .problems
        .iter()
        .inspect(|p| {
            assert_eq!(p.kind, VerifyProblemKind::Session, "{p:?}");
            assert_eq!(p.subject, who, "{p:?}");
        })
        .map(|p| p.detail.as_str())
        .collect();
    assert_eq!(details.len(), 2, "{details:?}");
    let snapshot = details.iter().find(|d| d.contains("badhash1")).unwrap();
    assert!(snapshot.contains("step-snapshot"), "{snapshot}");
    assert!(snapshot.contains(r#"invalid object id "zz""#), "{snapshot}");
    let label = details.iter().find(|d| d.contains("badlabel")).unwrap();
    assert!(label.contains("label record"), "{label}");
    assert!(
        !details.iter().any(|d| d.contains("hostnote")),
        "{details:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&session).unwrap(),
        text,
        "nothing repaired"
    );
}
