//! SIGKILL anywhere: a sidecar is killed at a random moment of a random operation
//! (snapshot, restore, undo, approve, gc, append_entry, label), then the user edits a file,
//! then a new sidecar resumes the session. Each time: the session opens, `verify` is clean
//! and the edit made after the kill is still there. At the end every checkpoint recorded
//! before any kill restores byte-exact. `REWIND_KILLS` sets the number of kills (default
//! 200); the loop also stops after `REWIND_KILLS_SECS` (default 150) seconds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::{json, Value};

use crate::common::{disk_state, Fixture, Node, Sidecar};

type Disk = BTreeMap<String, Node>;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn path(i: usize) -> String {
    format!("d{}/f{i:02}.txt", i % 5)
}

#[test]
fn sigkill_anywhere_loses_nothing() {
    let kills = env_or("REWIND_KILLS", 200);
    let budget = Duration::from_secs(env_or("REWIND_KILLS_SECS", 150));
    let fx = Fixture::new();
    for i in 0..60 {
        fx.write(&path(i), format!("v0 {i}\n"));
    }
    let options = json!({"fsync": false});
    let resume = |session: &Option<PathBuf>| -> (Sidecar, Value) {
        match session {
            Some(s) => fx.start(json!({"sessionFile": s, "options": options})),
            None => fx.start(json!({"options": options})),
        }
    };
    let (s, init) = resume(&None);
    let session = Some(PathBuf::from(init["sessionFile"].as_str().unwrap()));
    let mut recorded: Vec<(String, Disk)> = vec![(
        init["baseline"]["entryId"].as_str().unwrap().to_string(),
        disk_state(&fx.root()),
    )];
    assert!(s.finish().success());

    let mut rng = rand::thread_rng();
    let started = Instant::now();
    let mut edit: Option<(String, String)> = None;
    let mut done = 0u64;
    let (mut recoveries, mut torn) = (0u64, 0u64);
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    while done < kills && started.elapsed() < budget {
        let (mut s, init) = resume(&session);
        assert_eq!(init["resumed"], true, "kill {done}: {init}");
        if init["recovered"].get("interruptedRestore").is_some() {
            recoveries += 1;
        }
        if init["recovered"].get("tornTail").is_some() {
            torn += 1;
        }
        let v = s.ok("verify", json!({}));
        assert_eq!(v["ok"], true, "kill {done}: {v}");
        if let Some((p, content)) = &edit {
            assert_eq!(
                fx.read(p).as_deref(),
                Some(content.as_bytes()),
                "kill {done}: the edit to {p} made after the kill was overwritten ({init})"
            );
        }
        // A checkpoint that completes, to restore at the end.
        for _ in 0..rng.gen_range(1..8) {
            let i = rng.gen_range(0..60);
            fx.write(&path(i), format!("v{done} {i} {}\n", rng.gen::<u32>()));
        }
        if rng.gen_bool(0.1) {
            let _ = std::fs::remove_file(fx.project.path().join(path(rng.gen_range(0..60))));
        }
        let r = s.ok("snapshot", json!({"force": true}));
        recorded.push((
            r["entryId"].as_str().unwrap().to_string(),
            disk_state(&fx.root()),
        ));
        // The operation that gets killed.
        let op = *[
            "snapshot", "restore", "restore", "undo", "approve", "gc", "append", "label",
        ]
        .choose(&mut rng)
        .unwrap();
        *counts.entry(op).or_default() += 1;
        let (target, _) = recorded.choose(&mut rng).unwrap().clone();
        match op {
            "snapshot" => {
                fx.write(&path(rng.gen_range(0..60)), format!("pre-kill {done}\n"));
                s.send_request("snapshot", json!({}))
            }
            "restore" => s.send_request(
                "restore_files",
                json!({"targetEntryId": target, "onConflict": "overwrite"}),
            ),
            "undo" => s.send_request("undo", json!({"onConflict": "overwrite"})),
            "approve" => s.send_request("approve", json!({})),
            "gc" => s.send_request("gc", json!({"keepLast": 1})),
            "append" => s.send_request(
                "append_entry",
                json!({"role": "user", "text": "x".repeat(4000)}),
            ),
            _ => s.send_request(
                "label",
                json!({"targetId": target, "label": format!("l{done}")}),
            ),
        };
        // Most operations here take a few milliseconds: kills land before, inside and
        // after them.
        std::thread::sleep(Duration::from_micros(rng.gen_range(0..10_000)));
        s.kill();
        // The user edits a file after the crash, before anything resumes.
        let p = path(rng.gen_range(0..60));
        let content = format!("edited after kill {done}\n");
        fx.write(&p, &content);
        edit = Some((p, content));
        done += 1;
    }
    eprintln!(
        "kills: {done} in {:.1} s ({counts:?}); {recoveries} interrupted restores and {torn} \
         torn session tails recovered; {} checkpoints recorded",
        started.elapsed().as_secs_f64(),
        recorded.len()
    );
    assert!(
        done >= kills.min(50),
        "only {done} kills in the time budget"
    );

    let (mut s, _) = resume(&session);
    for (entry, disk) in &recorded {
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
    let v = s.ok("verify", json!({}));
    assert_eq!(v["ok"], true, "{v}");
    assert!(s.finish().success());
}
