//! gc against live writers, through the real binary: two sidecars on two projects of one
//! store keep changing and snapshotting their trees (with contents that dedup against
//! objects gc is deleting) while `rewind gc --grace-seconds 0` runs in a loop. Afterwards
//! every checkpoint of both restores byte-exact and `rewind verify` is clean.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::json;

use crate::common::{disk_state, run_cli, Fixture, Node, Sidecar};

type Disk = BTreeMap<String, Node>;

/// A project, its sidecar, and the checkpoints it recorded with the disk each one saw.
type Side<'a> = (&'a Fixture, Sidecar, Vec<(String, Disk)>);

/// Contents drawn from a small pool, so snapshots keep deduplicating against objects a
/// closed session left behind and gc deletes.
fn pool(i: usize) -> String {
    format!("pooled content {i}\n{}", "x".repeat(i * 37))
}

fn fill(fx: &Fixture, rng: &mut impl Rng, files: usize) {
    for f in 0..files {
        if rng.gen_bool(0.3) {
            fx.write(&format!("d{}/f{f}.txt", f % 3), pool(rng.gen_range(0..60)));
        }
    }
    // Past 32 new objects in a batch they go into a pack: some rounds write many.
    if rng.gen_bool(0.2) {
        for k in 0..40 {
            fx.write(
                &format!("bulk/b{k}.txt"),
                format!("bulk {k} {}\n", rng.gen_range(0..4)),
            );
        }
    }
}

#[test]
fn two_sidecars_and_gc_in_a_loop_lose_nothing() {
    let a = Fixture::new();
    let store = a.store_dir();
    let b = Fixture {
        project: tempfile::tempdir().unwrap(),
        store: tempfile::tempdir().unwrap(),
    };
    // A closed session whose objects are all garbage once it is pruned.
    let old = Fixture {
        project: tempfile::tempdir().unwrap(),
        store: tempfile::tempdir().unwrap(),
    };
    for i in 0..60 {
        old.write(&format!("p{i}.txt"), pool(i));
    }
    let start = |fx: &Fixture| -> Sidecar {
        let mut s = fx.spawn();
        s.ok(
            "initialize",
            json!({"cwd": fx.project.path(), "storeDir": store, "options": {"fsync": false}}),
        );
        s
    };
    let s = start(&old);
    assert!(s.finish().success());

    let stop = Arc::new(AtomicBool::new(false));
    let runs = Arc::new(AtomicU64::new(0));
    let gc = {
        let (stop, runs, store) = (stop.clone(), runs.clone(), store.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let (code, out, err) = run_cli(
                    &[
                        "gc",
                        "--store",
                        store.to_str().unwrap(),
                        "--keep-last",
                        "0",
                        "--grace-seconds",
                        "0",
                    ],
                    std::path::Path::new("/"),
                );
                assert_eq!(code, 0, "gc failed: {out}{err}");
                runs.fetch_add(1, Ordering::SeqCst);
            }
        })
    };

    let mut rng = rand::thread_rng();
    let mut sides: Vec<Side> = vec![(&a, start(&a), Vec::new()), (&b, start(&b), Vec::new())];
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut rounds = 0;
    while Instant::now() < deadline || rounds < 20 {
        for (fx, s, seen) in sides.iter_mut() {
            fill(fx, &mut rng, 30);
            if rng.gen_bool(0.3) {
                // Seen only by a query: its blobs are referenced by no session.
                s.ok("get_status", json!({}));
                fill(fx, &mut rng, 30);
            }
            let r = s.ok("snapshot", json!({"force": true}));
            seen.push((
                r["entryId"].as_str().unwrap().to_string(),
                disk_state(&fx.root()),
            ));
        }
        rounds += 1;
    }
    stop.store(true, Ordering::SeqCst);
    gc.join().unwrap();
    let runs = runs.load(Ordering::SeqCst);
    eprintln!("concurrency: {rounds} rounds per sidecar beside {runs} gc runs");
    assert!(runs >= 3, "gc ran {runs} times");

    for (fx, mut s, seen) in sides {
        for (entry, disk) in &seen {
            let r = s.ok(
                "restore_files",
                json!({"targetEntryId": entry, "onConflict": "overwrite"}),
            );
            assert_eq!(r["conflicts"], json!([]), "{entry}: {r}");
            assert!(
                &disk_state(&fx.root()) == disk,
                "checkpoint {entry} did not restore byte-exact"
            );
        }
        assert!(s.finish().success());
    }
    let (code, out, err) = run_cli(
        &["verify", "--store", store.to_str().unwrap()],
        std::path::Path::new("/"),
    );
    assert_eq!(code, 0, "verify: {out}{err}");
}
