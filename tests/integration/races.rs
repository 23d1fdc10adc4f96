//! Races an agent (or an attacker inside the project) can run against a restore.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::json;

use crate::common::Fixture;

fn listing(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap_or_default())
        })
        .collect()
}

/// Repro (issue 10, found 6): a process swaps `d/` for a symlink to a directory outside the
/// project, back and forth, as fast as it can, during overwrite restores of d's files. With
/// paths checked by `lstat` and then used by name, files outside were deleted, overwritten
/// and littered with temp files. Every write now goes through directory handles opened
/// without following links: nothing outside may change.
const FILES: usize = 600;

#[test]
fn swapping_a_directory_for_an_outside_symlink_during_restores_writes_nothing_outside() {
    let fx = Fixture::new();
    let name = |i: usize| format!("f{i:03}.txt");
    for i in 0..FILES {
        fx.write(&format!("d/{}", name(i)), format!("A {i}\n"));
    }
    let outside = tempfile::tempdir().unwrap();
    for i in 0..FILES {
        // The same content as checkpoint A: a check of the content through the swapped
        // link passes, so only handles keep the write inside.
        std::fs::write(outside.path().join(name(i)), format!("A {i}\n")).unwrap();
    }
    let before = listing(outside.path());
    let (mut s, init) = fx.start(json!({"options": {"fsync": false}}));
    let a = init["baseline"]["entryId"].as_str().unwrap().to_string();
    for i in 0..FILES {
        fx.write(&format!("d/{}", name(i)), format!("B {i}\n"));
    }
    let b = s.ok("snapshot", json!({}))["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    let root = fx.root();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, root) = (stop.clone(), swaps.clone(), root.clone());
        let outside_path = outside.path().to_path_buf();
        std::thread::spawn(move || {
            let dir = rustix::fs::open(
                &root,
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
            // rename(2) exchange is not on every filesystem: the real directory
            // steps aside to `real` (inside the project) while a symlink to the
            // outside takes its name, then everything goes back. A restore may have
            // removed or replaced a name meanwhile: each step just tries.
            while !stop.load(Ordering::SeqCst) {
                if rustix::fs::renameat(&dir, "d", &dir, "real").is_ok() {
                    if rustix::fs::symlinkat(outside_path.as_path(), &dir, "d").is_ok() {
                        swaps.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_micros(100));
                        let _ = rustix::fs::unlinkat(&dir, "d", rustix::fs::AtFlags::empty());
                    }
                    let _ = rustix::fs::renameat(&dir, "real", &dir, "d");
                    std::thread::sleep(std::time::Duration::from_micros(100));
                } else {
                    std::thread::yield_now();
                }
            }
        })
    };
    let mut answered = 0;
    for round in 0..12 {
        let target = if round % 2 == 0 { &a } else { &b };
        let r = s.call(
            "restore_files",
            json!({"targetEntryId": target, "onConflict": "overwrite"}),
        );
        assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
        answered += 1;
    }
    stop.store(true, Ordering::SeqCst);
    swapper.join().unwrap();
    assert!(s.finish().success());
    assert_eq!(answered, 12);
    eprintln!(
        "races: {} swaps during 12 restores",
        swaps.load(Ordering::SeqCst)
    );
    assert!(swaps.load(Ordering::SeqCst) > 100, "the swapper ran");
    assert_eq!(
        listing(outside.path()),
        before,
        "the directory outside the project changed"
    );
}
