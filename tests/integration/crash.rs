//! SIGKILL at random points of a large restore, then recovery by a new
//! sidecar on the same session file: initialize succeeds and reports what
//! it did, the session file still parses, the disk is exactly one of the two
//! checkpoints, both stay restorable, and no temp file is left behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{json, Value};

use crate::common::{disk_state, session_lines, Fixture, Node, Sidecar};

type Disk = BTreeMap<String, Node>;

const DIRS: usize = 30;
const PER_DIR: usize = 50;

fn path(d: usize, i: usize) -> String {
    format!("d{d:02}/f{i:03}.txt")
}

fn iterations() -> usize {
    std::env::var("REWIND_CRASH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

/// fsync for the sidecars of the main test: off by default, since a
/// SIGKILL loses nothing the kernel already has (the write order is what is
/// tested) and restores without fsync take a fraction of the time;
/// `REWIND_CRASH_FSYNC=1` turns it on.
fn fsync_from_env() -> bool {
    std::env::var("REWIND_CRASH_FSYNC").is_ok_and(|v| v == "1")
}

fn journal_of(session: &Path) -> PathBuf {
    let mut s = session.as_os_str().to_os_string();
    s.push(".journal");
    PathBuf::from(s)
}

fn is_temp(p: &str) -> bool {
    p.rsplit('/').next().unwrap().starts_with(".rewind-tmp-")
}

fn differing(a: &Disk, b: &Disk) -> usize {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).count()
}

/// 1500 files at checkpoint A (the baseline); B rewrites 1450 of them,
/// deletes a directory of 50 and adds one of 50.
struct Project {
    fx: Fixture,
    session: PathBuf,
    a_id: String,
    b_id: String,
    state_a: Disk,
    state_b: Disk,
    /// Kills land within 0..=window_ms of sending the restore.
    window_ms: u64,
    options: Value,
}

fn project(fsync: bool) -> Project {
    let options = json!({"fsync": fsync});
    let fx = Fixture::new();
    for d in 0..DIRS {
        for i in 0..PER_DIR {
            fx.write(&path(d, i), format!("A {d} {i}\n"));
        }
    }
    let (mut s, init) = fx.start(json!({"options": options}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    let a_id = init["baseline"]["entryId"].as_str().unwrap().to_string();
    let state_a = disk_state(&fx.root());
    for d in 0..DIRS - 1 {
        for i in 0..PER_DIR {
            fx.write(&path(d, i), format!("B {d} {i} {}\n", "x".repeat(i % 7)));
        }
    }
    fx.remove(&format!("d{:02}", DIRS - 1));
    for i in 0..PER_DIR {
        fx.write(&format!("new/g{i:03}.txt"), format!("new {i}\n"));
    }
    let b = s.ok("snapshot", json!({}));
    let b_id = b["entryId"].as_str().unwrap().to_string();
    let state_b = disk_state(&fx.root());
    // How long a whole restore takes here (measured, never asserted on):
    // the kills are spread over it, so they land before, inside and after
    // the writes.
    let started = Instant::now();
    let (notes, resp) = s.call_collect(
        "restore_files",
        json!({"targetEntryId": a_id, "onConflict": "overwrite"}),
    );
    let full_ms = started.elapsed().as_millis() as u64;
    assert_eq!(disk_state(&fx.root()), state_a);
    // Progress comes before the response, counting up to the whole job.
    let r = &resp["result"];
    let total = r["restored"].as_array().unwrap().len() + r["deleted"].as_array().unwrap().len();
    let mut last = 0;
    for n in &notes {
        if n["method"] == "progress" {
            let p = &n["params"];
            assert_eq!(p["operation"], "restore", "{n}");
            assert_eq!(p["total"], total, "{n}");
            let done = p["done"].as_u64().unwrap() as usize;
            assert!(done > last && done < total, "{n}");
            last = done;
        }
    }
    s.ok(
        "restore_files",
        json!({"targetEntryId": b_id, "onConflict": "overwrite"}),
    );
    assert_eq!(disk_state(&fx.root()), state_b);
    assert!(s.finish().success());
    let window_ms = (full_ms + full_ms / 4).max(40);
    eprintln!("crash: a full restore takes {full_ms} ms here; kills within 0..={window_ms} ms");
    Project {
        fx,
        session,
        a_id,
        b_id,
        state_a,
        state_b,
        window_ms,
        options,
    }
}

/// When a restore's sidecar is killed: a time after the request was sent,
/// or once it has said it wrote `n` files (its `n`-th progress note, with
/// `REWIND_PROGRESS_MS=0`): then the restore is known to be under way.
#[derive(Clone, Copy, Debug)]
enum Kill {
    AfterMs(u64),
    AtNote(usize),
}

/// What one kill and the recovery after it found.
struct Outcome {
    /// The journal was on disk after the kill.
    journal: bool,
    /// `recovered.interruptedRestore.action`, if reported.
    action: Option<String>,
    /// Temp files in the project after recovery.
    temp_files: Vec<String>,
    /// The recovered disk (temp files left out) is the target.
    at_target: bool,
    /// A first recovery was killed too.
    recovery_killed: bool,
}

impl Project {
    /// Restore from `pre` to `target`, SIGKILL the sidecar at `kill`,
    /// open the session again and check the recovery (temp files aside:
    /// they are returned, and left out of the comparisons). Leaves the disk
    /// at `pre` or `target` (`end_at_target`) and the sidecar closed.
    fn kill_and_recover(
        &self,
        on_b: bool,
        kill: Kill,
        end_at_target: bool,
        kill_recovery_after: Option<u64>,
    ) -> Outcome {
        let fx = &self.fx;
        let session = &self.session;
        let (target_id, target, pre_id, pre) = if on_b {
            (&self.a_id, &self.state_a, &self.b_id, &self.state_b)
        } else {
            (&self.b_id, &self.state_b, &self.a_id, &self.state_a)
        };
        assert_eq!(&disk_state(&fx.root()), pre, "the iteration starts clean");

        let s = Sidecar::spawn_env(
            &[
                "--cwd",
                fx.project.path().to_str().unwrap(),
                "--store",
                fx.store.path().to_str().unwrap(),
            ],
            &[("REWIND_PROGRESS_MS", Path::new("0"))],
        );
        let (mut s, _) = fx.initialize(s, json!({"sessionFile": session, "options": self.options}));
        s.send_request(
            "restore_files",
            json!({"targetEntryId": target_id, "onConflict": "overwrite"}),
        );
        match kill {
            Kill::AfterMs(ms) => std::thread::sleep(Duration::from_millis(ms)),
            Kill::AtNote(n) => {
                let mut seen = 0;
                while seen < n {
                    let line = s.recv_line();
                    if line.contains("\"progress\"") {
                        seen += 1;
                    } else if line.contains("\"id\"") {
                        panic!("the restore answered before {n} progress notes: {line}");
                    }
                }
            }
        }
        s.kill(); // SIGKILL, then wait
        let delay_ms = format!("{kill:?}");
        let journal = journal_of(session).exists();
        // Optionally kill the recovery too: it must be idempotent.
        let recovery_killed = journal && kill_recovery_after.is_some();
        if let (true, Some(ms)) = (journal, kill_recovery_after) {
            let mut r = fx.spawn();
            r.send_request(
                "initialize",
                json!({"cwd": fx.project.path(), "storeDir": fx.store.path(),
                       "sessionFile": session, "options": self.options}),
            );
            std::thread::sleep(Duration::from_millis(ms));
            r.kill();
        }
        // A killed recovery may still have finished (it only writes what the
        // crash left undone): then there is nothing left to report.
        let journal = journal && journal_of(session).exists();

        let (mut s, init) = fx.start(json!({"sessionFile": session, "options": self.options}));
        let recovered = &init["recovered"];
        let interrupted = &recovered["interruptedRestore"];
        let action = interrupted["action"].as_str().map(str::to_string);
        let ctx = format!(
            "kill {delay_ms}, journal {journal}, action {action:?}, unrevert {}, outside {}",
            interrupted["unrevertEntryId"], recovered["outsideEntryId"]
        );
        assert_eq!(init["resumed"], true, "{ctx}");
        let verified = s.ok("verify", json!({}));
        assert_eq!(verified["ok"], true, "{ctx}: {verified}");
        assert!(!journal_of(session).exists(), "{ctx}: journal left behind");
        // Every line of the session file parses.
        let lines = session_lines(session);
        let ids: Vec<&str> = lines.iter().filter_map(|l| l["id"].as_str()).collect();
        let mut pre_tree: Option<String> = None;
        match action.as_deref() {
            None => assert!(!journal, "{ctx}: a journal was found but not reported"),
            Some(a) => {
                assert!(journal, "{ctx}: a recovery without a journal");
                let u = interrupted["unrevertEntryId"].as_str().unwrap();
                match a {
                    "completed" => {
                        let entry = lines
                            .iter()
                            .find(|l| l["id"] == u)
                            .unwrap_or_else(|| panic!("{ctx}: completed {u} not in the session"));
                        assert_eq!(entry["customType"], "unrevert-point", "{ctx}");
                        pre_tree = entry["data"]["preRollbackTreeHash"]
                            .as_str()
                            .map(str::to_string);
                        assert!(pre_tree.is_some(), "{ctx}: {entry}");
                    }
                    "discarded" => {
                        assert!(!ids.contains(&u), "{ctx}: discarded {u} is in the session")
                    }
                    other => panic!("{ctx}: unexpected action {other:?}"),
                }
            }
        }

        let mut now = disk_state(&fx.root());
        let temp_files: Vec<String> = now.keys().filter(|p| is_temp(p)).cloned().collect();
        now.retain(|p, _| !is_temp(p));
        let at_target = &now == target;
        assert!(
            at_target || &now == pre,
            "{ctx}: the disk is neither checkpoint ({} paths differ from the target, {} from the pre-restore state)",
            differing(&now, target),
            differing(&now, pre)
        );
        match action.as_deref() {
            Some("completed") => assert!(at_target, "{ctx}: completed but not at the target"),
            Some("discarded") => assert!(!at_target, "{ctx}: discarded but at the target"),
            _ => {}
        }
        if temp_files.is_empty() {
            // The disk is the recorded state: nothing to record on resume.
            assert!(recovered["outsideEntryId"].is_null(), "{ctx}: {recovered}");
        }

        // Both states are recoverable.
        let pre_params = match &pre_tree {
            Some(h) => json!({"treeHash": h, "onConflict": "overwrite"}),
            None => json!({"targetEntryId": pre_id, "onConflict": "overwrite"}),
        };
        let target_params = json!({"targetEntryId": target_id, "onConflict": "overwrite"});
        let order = if end_at_target {
            [(pre_params, pre), (target_params, target)]
        } else {
            [(target_params, target), (pre_params, pre)]
        };
        for (params, want) in order {
            let r: Value = s.ok("restore_files", params.clone());
            assert_eq!(r["conflicts"], json!([]), "{ctx}: {params}: {r}");
            assert!(
                &disk_state(&fx.root()) == want,
                "{ctx}: restoring {params} did not give exactly its files"
            );
        }
        assert!(s.finish().success());
        Outcome {
            journal,
            action,
            temp_files,
            at_target,
            recovery_killed,
        }
    }
}

#[test]
fn sigkill_during_restores_is_recovered() {
    let p = project(fsync_from_env());
    let mut rng = rand::thread_rng();
    let (mut completed, mut discarded, mut before, mut after) = (0, 0, 0, 0);
    let (mut with_temp, mut recoveries_killed, mut at_note) = (0, 0, 0);
    let mut on_b = true;
    for iter in 0..iterations() {
        // Half the kills in the first 40 ms (while planning), half anywhere
        // in a whole restore.
        // Every fourth kill waits for the restore to say it wrote files, so
        // some kills surely land while files are written; the others are
        // spread over the first 40 ms (while planning) or a whole restore.
        let kill = if iter % 4 == 1 {
            Kill::AtNote(rng.gen_range(1..=20))
        } else if iter % 2 == 0 {
            Kill::AfterMs(rng.gen_range(0..=40))
        } else {
            Kill::AfterMs(rng.gen_range(0..=p.window_ms))
        };
        let end_at_target = iter % 2 == 1;
        // Every fourth kill that leaves a journal also kills the recovery.
        let second = (iter % 4 == 3).then(|| rng.gen_range(0..=p.window_ms / 2));
        let o = p.kill_and_recover(on_b, kill, end_at_target, second);
        if let Kill::AtNote(_) = kill {
            // Killed mid-restore: the journal was there, and the recovery
            // (checked in kill_and_recover) rolled it forward or back.
            assert!(
                o.action.is_some(),
                "{kill:?}: no interrupted restore was recovered"
            );
            at_note += 1;
        }
        match (o.action.as_deref(), o.at_target) {
            (Some("completed"), _) => completed += 1,
            (Some(_), _) => discarded += 1,
            (None, false) => before += 1,
            (None, true) => after += 1,
        }
        if !o.temp_files.is_empty() {
            with_temp += 1;
        }
        if o.recovery_killed {
            recoveries_killed += 1;
        }
        assert_eq!(o.journal, o.action.is_some());
        if end_at_target {
            on_b = !on_b;
        }
    }
    eprintln!(
        "crash: {} kills mid-restore (journal present: {completed} rolled forward, {discarded} \
         discarded), {before} before the restore touched anything, {after} after it finished; \
         {recoveries_killed} recoveries killed too; {with_temp} left temp files (see \
         no_temp_file_survives_a_kill_mid_restore)",
        completed + discarded
    );
    assert!(
        at_note >= 1 && completed + discarded >= at_note,
        "{at_note} kills at a progress note, {} recovered mid-restore",
        completed + discarded
    );
}

#[test]
fn no_temp_file_survives_a_kill_mid_restore() {
    // With fsync (the default) a file spends most of its write as a temp
    // file, so a kill mid-restore almost always leaves one.
    let p = project(true);
    let mut rng = rand::thread_rng();
    let on_b = true;
    // Each kill lands after the restore said it wrote some of its 1,500
    // files: while files are being written, every time.
    for _ in 0..iterations().min(4) {
        let kill = Kill::AtNote(rng.gen_range(1..=200));
        let o = p.kill_and_recover(on_b, kill, false, None);
        assert!(
            o.action.is_some(),
            "{kill:?}: the kill did not land mid-restore (no journal)"
        );
        assert!(
            o.temp_files.is_empty(),
            "{kill:?} (journal {}, action {:?}) left temp files: {:?}",
            o.journal,
            o.action,
            o.temp_files
        );
    }
}

/// Repro (issue 10, found 3): a restore of 200 files interrupted after its journal and
/// unrevert-point were on disk, half of its files written; the user then edited one of the
/// files the restore had not reached yet. Recovery must complete the rest and keep the edit
/// (it holds neither the pre-restore nor the target content), and the resume records it.
#[test]
fn recovery_never_overwrites_an_edit_made_after_the_crash() {
    let fx = Fixture::new();
    let name = |i: usize| format!("d{}/f{i:03}.txt", i % 4);
    for i in 0..200 {
        fx.write(&name(i), format!("A {i}\n"));
    }
    let (mut s, init) = fx.start(json!({}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    let a_id = init["baseline"]["entryId"].as_str().unwrap().to_string();
    for i in 0..200 {
        fx.write(&name(i), format!("B {i}\n"));
    }
    s.ok("snapshot", json!({}));
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": a_id, "onConflict": "overwrite"}),
    );
    let unrevert = r["unrevertEntryId"].as_str().unwrap().to_string();
    assert!(s.finish().success());
    let entry = session_lines(&session)
        .into_iter()
        .find(|l| l["id"] == unrevert.as_str())
        .unwrap();
    // The crash: the journal is back, files 100.. still hold B, file 150 edited since.
    let journal = json!({
        "version": 1,
        "unrevertEntryId": unrevert,
        "preRollbackTreeHash": entry["data"]["preRollbackTreeHash"],
        "workingTreeHash": entry["data"]["workingTreeHash"],
        "writes": (0..200).map(name).collect::<Vec<_>>(),
        "deletes": [],
    });
    std::fs::write(journal_of(&session), journal.to_string()).unwrap();
    for i in 100..200 {
        fx.write(&name(i), format!("B {i}\n"));
    }
    fx.write(&name(150), "the user's edit after the crash\n");

    let (s, init) = fx.start(json!({"sessionFile": session}));
    let interrupted = &init["recovered"]["interruptedRestore"];
    assert_eq!(interrupted["action"], "completed", "{init}");
    assert_eq!(interrupted["kept"], json!([name(150)]), "{init}");
    assert_eq!(
        fx.read(&name(150)).unwrap(),
        b"the user's edit after the crash\n"
    );
    for i in (0..200).filter(|&i| i != 150) {
        assert_eq!(fx.read(&name(i)).unwrap(), format!("A {i}\n").as_bytes());
    }
    // The edit is recorded: the resume's outside snapshot holds it.
    let outside = init["recovered"]["outsideEntryId"].as_str().unwrap();
    let outside = session_lines(&session)
        .into_iter()
        .find(|l| l["id"] == outside)
        .unwrap();
    assert_eq!(outside["data"]["diff"]["modified"], json!([name(150)]));
    assert!(s.finish().success());
}

/// A journal in the store can be edited by anyone who can write there: paths that leave the
/// project are never followed.
#[test]
fn a_tampered_journal_cannot_write_outside_the_project() {
    let fx = Fixture::new();
    fx.write("a.txt", "A\n");
    let (mut s, init) = fx.start(json!({}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    let a_id = init["baseline"]["entryId"].as_str().unwrap().to_string();
    fx.write("a.txt", "B\n");
    s.ok("snapshot", json!({}));
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": a_id, "onConflict": "overwrite"}),
    );
    let unrevert = r["unrevertEntryId"].as_str().unwrap().to_string();
    assert!(s.finish().success());
    let entry = session_lines(&session)
        .into_iter()
        .find(|l| l["id"] == unrevert.as_str())
        .unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let journal = json!({
        "version": 1,
        "unrevertEntryId": unrevert,
        "preRollbackTreeHash": entry["data"]["preRollbackTreeHash"],
        "workingTreeHash": entry["data"]["workingTreeHash"],
        "writes": [victim.display().to_string(), "../victim.txt", "a.txt"],
        "deletes": [victim.display().to_string(), "d/../../victim.txt"],
    });
    std::fs::write(journal_of(&session), journal.to_string()).unwrap();
    let (s, init) = fx.start(json!({"sessionFile": session}));
    assert_eq!(
        init["recovered"]["interruptedRestore"]["action"],
        "completed"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert_eq!(fx.read("a.txt").unwrap(), b"A\n");
    assert!(s.finish().success());
}

/// A revert goes through the same journal as a restore: SIGKILL at random
/// points of a revert that merges every file of a large project, then a new
/// sidecar on the session. The disk is exactly the state before the revert
/// or the merged result, the journal is gone, `verify` passes, and both
/// states stay reachable (undo of a completed revert, the revert again).
#[test]
fn sigkill_during_a_revert_is_recovered_like_a_restore() {
    let fx = Fixture::new();
    let content = |d: usize, i: usize, first: &str, third: &str| {
        format!("{first} {d} {i}\nsecond\n{third} {d} {i}\nfourth\n")
    };
    for d in 0..DIRS {
        for i in 0..PER_DIR {
            fx.write(&path(d, i), content(d, i, "one", "three"));
        }
    }
    let options = json!({"fsync": fsync_from_env()});
    let (mut s, init) = fx.start(json!({"options": options}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    // Turn 1 changes every first line, turn 2 every third line.
    for d in 0..DIRS {
        for i in 0..PER_DIR {
            fx.write(&path(d, i), content(d, i, "ONE", "three"));
        }
    }
    let t1 = s.ok("snapshot", json!({"kind": "turn"}))["entryId"].clone();
    for d in 0..DIRS {
        for i in 0..PER_DIR {
            fx.write(&path(d, i), content(d, i, "ONE", "THREE"));
        }
    }
    s.ok("snapshot", json!({"kind": "turn"}));
    let before = disk_state(&fx.root());
    let started = Instant::now();
    s.ok("revert", json!({"entryId": t1}));
    let full_ms = started.elapsed().as_millis() as u64;
    let reverted = disk_state(&fx.root());
    let expected: Disk = (0..DIRS)
        .flat_map(|d| (0..PER_DIR).map(move |i| (d, i)))
        .map(|(d, i)| (path(d, i), Node::file(content(d, i, "one", "THREE"))))
        .collect();
    assert_eq!(reverted, expected, "the revert itself");
    s.ok("undo", json!({}));
    assert_eq!(disk_state(&fx.root()), before);
    assert!(s.finish().success());
    let window = (full_ms + full_ms / 4).max(40);

    let mut rng = rand::thread_rng();
    for _ in 0..iterations().min(6) {
        let (mut s, _) = fx.start(json!({"sessionFile": session, "options": options}));
        s.send_request("revert", json!({"entryId": t1}));
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..=window)));
        s.kill();
        let (mut s, _) = fx.start(json!({"sessionFile": session, "options": options}));
        assert!(!journal_of(&session).exists(), "journal left behind");
        let verified = s.ok("verify", json!({}));
        assert_eq!(verified["ok"], true, "{verified}");
        let mut now = disk_state(&fx.root());
        now.retain(|p, _| !is_temp(p));
        assert!(
            now == before || now == expected,
            "the disk is neither the state before the revert nor its result ({} / {} paths differ)",
            differing(&now, &before),
            differing(&now, &expected)
        );
        // Back to the state before the revert for the next kill: undo of a
        // completed revert, or nothing to do.
        if now == expected {
            s.ok("undo", json!({}));
        }
        assert_eq!(disk_state(&fx.root()), before);
        assert!(s.finish().success());
    }
}
