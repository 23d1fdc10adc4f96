//! A full disk, for real: a small tmpfs the test mounts (as root; otherwise the test says
//! why it skips, or fails under CI=true) holds the project and the store. While it is full, what needs space fails
//! with 1005 and a message naming the cause, and nothing stored is damaged; once space is
//! freed, the same session works again and every checkpoint restores byte-exact.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::common::{disk_state, run_cli, skip_or_fail, Fixture};

struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn small_fs(dir: &Path) -> Option<Mount> {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| Mount(dir.to_path_buf()))
}

/// Fills the filesystem holding `dir` to the last byte; returns the filler's path.
fn fill(dir: &Path) -> PathBuf {
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0xa5u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    for _ in 0..64 {
        let _ = f.write_all(&[0u8; 512]);
    }
    filler
}

#[test]
fn a_full_disk_fails_cleanly_and_work_resumes_once_space_is_freed() {
    let base = tempfile::tempdir().unwrap();
    let Some(_mount) = small_fs(base.path()) else {
        skip_or_fail("cannot mount a small tmpfs here (needs root and mount rights)");
        return;
    };
    let fx = Fixture {
        project: tempfile::tempdir_in(base.path()).unwrap(),
        store: tempfile::tempdir_in(base.path()).unwrap(),
    };
    for i in 0..20 {
        fx.write(&format!("src/f{i}.txt"), format!("base {i}\n"));
    }
    let (mut s, init) = fx.start(json!({}));
    let session = PathBuf::from(init["sessionFile"].as_str().unwrap());
    let mut recorded = vec![(
        init["baseline"]["entryId"].as_str().unwrap().to_string(),
        disk_state(&fx.root()),
    )];
    fx.write("src/f1.txt", "turn 1\n");
    let r = s.ok("snapshot", json!({}));
    recorded.push((
        r["entryId"].as_str().unwrap().to_string(),
        disk_state(&fx.root()),
    ));
    // Incompressible new content, then no space left at all.
    let noise: Vec<u8> = (0..300_000).map(|_| rand::random::<u8>()).collect();
    fx.write("big.bin", &noise);
    let session_before = std::fs::read(&session).unwrap();
    let filler = fill(base.path());

    let e = s.err("snapshot", json!({}));
    assert_eq!(e["code"], 1005, "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("No space left"), "{msg}");
    let e = s.err(
        "append_entry",
        json!({"role": "user", "text": "x".repeat(100_000)}),
    );
    assert_eq!(e["code"], 1005, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("No space left"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&session).unwrap(),
        session_before,
        "a failed append left nothing in the session file"
    );
    // Reading needs no space.
    let v = s.ok("verify", json!({}));
    assert_eq!(v["ok"], true, "{v}");
    let (code, out, err) = run_cli(
        &["verify", "--store", fx.store.path().to_str().unwrap()],
        Path::new("/"),
    );
    assert_eq!(code, 0, "{out}{err}");

    // Space again: the same sidecar carries on.
    std::fs::remove_file(filler).unwrap();
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["big.bin"]), "{r}");
    recorded.push((
        r["entryId"].as_str().unwrap().to_string(),
        disk_state(&fx.root()),
    ));
    for (entry, disk) in &recorded {
        let r = s.ok(
            "restore_files",
            json!({"targetEntryId": entry, "onConflict": "overwrite"}),
        );
        assert_eq!(r["conflicts"], json!([]), "{r}");
        assert!(&disk_state(&fx.root()) == disk, "{entry} not byte-exact");
    }
    let v = s.ok("verify", json!({}));
    assert_eq!(v["ok"], true, "{v}");
    assert!(s.finish().success());
}
