//! A hostile `file://` remote against the real binary (docs/remote.md
//! "What a remote can and cannot do to you"): what reaches the terminal,
//! which directory is the project, which session is this machine's, and
//! sizes a remote claims, under a memory limit. The library's side (file
//! names, `.git` in trees, gc beside pushes, symlinks) is in
//! src/remote/hostile_tests.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{bin, Sidecar};
use crate::remote::{seed, session_id, Machine};

/// A machine whose seeded project recorded a turn and pushed it to a new
/// `file://` remote; the remote's directory, its URL and the session's id.
fn pushed() -> (Machine, tempfile::TempDir, String, String) {
    let remote = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote.path().display());
    let (a, id) = Machine::with_env(vec![]).pushed_to(&url);
    (a, remote, url, id)
}

fn only_file(dir: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

fn manifest_of(remote: &Path, id: &str) -> PathBuf {
    only_file(&remote.join("sessions").join(id).join("manifests"))
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// Item 7: escape sequences in a manifest's fields never reach the
/// terminal raw; a manifest whose key is not of the id grammar is not listed.
#[test]
fn sessions_on_a_remote_are_listed_without_escape_sequences() {
    let (a, remote, url, id) = pushed();
    edit_json(&manifest_of(remote.path(), &id), |m| {
        m["cwd"] = json!("/home/\u{1b}]0;owned\u{7}\u{1b}[2J/project");
        m["updated"] = json!("\u{1b}[8m2026-01-01");
        m["leaf"] = json!("\u{9b}31m");
    });
    let odd = remote.path().join("sessions/\u{1b}[2Jx/manifests");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::copy(manifest_of(remote.path(), &id), odd.join("w.json")).unwrap();
    let (code, out, err) = a.rewind(&["sessions", "--remote", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&id), "{out}");
    for c in [out.as_str(), err.as_str()] {
        assert!(
            !c.contains('\u{1b}') && !c.contains('\u{9b}') && !c.contains('\u{7}'),
            "{c:?}"
        );
    }
    assert!(out.contains("\\u{1b}]0;owned"), "shown escaped: {out}");
    assert_eq!(out.lines().count(), 1, "{out}");
}

/// Items 3 and 8: a pulled session is not this machine's default, and
/// resuming it does not make its header's directory the project.
#[test]
fn a_pulled_session_chooses_neither_the_project_nor_the_default_session() {
    let (a, _remote, url, id) = pushed();
    let b = Machine::with_env(vec![]);
    std::fs::write(b.project().join("mine.txt"), "mine\n").unwrap();
    b.turn("echo more >> mine.txt", None);
    let own = b.session_files().remove(0);
    b.ok(&["pull", "--remote", &url, &id]);
    let pulled = b
        .session_files()
        .into_iter()
        .find(|f| session_id(f) == id)
        .unwrap();
    // Its mtime is the newest; it is still not taken as this project's.
    let status = b.ok(&["status"]);
    assert!(status.contains(&own.display().to_string()), "{status}");
    assert!(!status.contains(&id), "{status}");
    let listed = b.ok(&["sessions"]);
    let line = listed.lines().find(|l| l.contains(&id)).unwrap();
    assert!(line.ends_with("pulled"), "{listed}");
    // A restore with no target plans on this machine's own session.
    b.ok(&["restore", "--yes"]);
    assert_eq!(
        std::fs::read_to_string(b.project().join("mine.txt")).unwrap(),
        "mine\nmore\n"
    );

    // `rewind serve --session PULLED` without --cwd: the project is the
    // process's directory, not the one A's header names (which exists here).
    let mut cmd = Command::new(bin());
    cmd.current_dir(b.project())
        .env("REWIND_HOME", b.project().parent().unwrap().join("home"));
    let pulled_arg = pulled.display().to_string();
    let mut side = Sidecar::spawn_from(cmd, "serve", &["--session", &pulled_arg], &[]);
    let init = side.ok("initialize", json!({}));
    let root = init["projectRoot"].as_str().unwrap().to_owned();
    assert_eq!(
        Path::new(&root),
        b.project().canonicalize().unwrap(),
        "{init}"
    );
    side.ok("shutdown", json!({}));
    side.wait();
    assert_ne!(a.project().canonicalize().unwrap(), Path::new(&root));
}

/// `sh -c 'ulimit -v KIB; exec rewind ARGS'` in `m`'s project: the
/// exit code and stderr. A remote's claims must never size an allocation,
/// so nothing here may abort (134) or be killed.
fn rewind_limited(m: &Machine, args: &[&str]) -> (i32, String) {
    // 2 GiB of address space: far more than any command here needs, far
    // less than what the remote below claims.
    let mut script = String::from("ulimit -v 2097152; exec \"$0\"");
    for i in 0..args.len() {
        script.push_str(&format!(" \"${}\"", i + 1));
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(bin())
        .args(args)
        .current_dir(m.project())
        .env("REWIND_HOME", m.project().parent().unwrap().join("home"))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Item 6: a pack of 6 GiB, an index of 4 GiB, a manifest claiming 2^64 - 1
/// bytes, a chunk listed 4,000 times: pull, push and gc each refuse in one
/// line under a 2 GiB memory limit; none aborts.
#[test]
fn sizes_a_remote_claims_are_bounded_under_a_memory_limit() {
    let (a, remote, url, id) = pushed();
    let packs = remote.path().join("packs");
    let grow = |ext: &str, len: u64| {
        for e in std::fs::read_dir(&packs).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == ext) {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(e.path())
                    .unwrap();
                f.set_len(len).unwrap(); // sparse: nothing is written
            }
        }
    };
    let fresh = || {
        let m = Machine::with_env(vec![]);
        seed(&m);
        m
    };
    // Exit 1 with the error's one line last (a warning may say before it
    // what was left out, and why).
    let expect_refusal = |m: &Machine, args: &[&str], what: &str| {
        let (code, err) = rewind_limited(m, args);
        assert_eq!(code, 1, "{what}: exit {code}: {err}");
        let last = err.trim().lines().last().unwrap_or_default().to_owned();
        assert!(last.starts_with("rewind: "), "{what}: {err}");
        last
    };

    // A 6 GiB pack.
    grow("pack", 6 << 30);
    let err = expect_refusal(&fresh(), &["pull", "--remote", &url, &id], "pack");
    assert!(err.contains("refused"), "{err}");
    // A 4 GiB index: left out, so its objects are not on the remote.
    grow("idx", 4 << 30);
    let err = expect_refusal(&fresh(), &["pull", "--remote", &url, &id], "index");
    assert!(err.contains("not on the remote"), "{err}");
    // A push beside it reads no index whole either, and a gc stops.
    let c = fresh();
    c.turn("true", None);
    c.ok(&["remote", "add", "origin", &url]);
    let (code, err) = rewind_limited(&c, &["push"]);
    assert_eq!(code, 0, "push: {err}");
    let (code, err) = rewind_limited(&c, &["gc", "--remote", "origin", "--dry-run"]);
    assert!(code == 0 || code == 1, "gc: exit {code}: {err}");

    // A manifest claiming 2^64 - 1 bytes.
    let manifest = manifest_of(remote.path(), &id);
    let original = std::fs::read(&manifest).unwrap();
    edit_json(&manifest, |m| {
        m["bytes"] = json!(u64::MAX);
        m["chunks"][0]["bytes"] = json!(u64::MAX);
    });
    expect_refusal(&fresh(), &["pull", "--remote", &url, &id], "2^64-1");
    let (code, err) = rewind_limited(&c, &["gc", "--remote", "origin", "--dry-run"]);
    assert_eq!(code, 1, "gc: {err}");

    // A 1 MiB chunk listed 4,000 times: 4 GB claimed.
    let big = vec![b'x'; 1 << 20];
    let hash = rewind::store::ObjectId::of(&big).to_hex();
    let chunks = remote.path().join("sessions").join(&id).join("chunks");
    std::fs::write(chunks.join(format!("{hash}.jsonl")), &big).unwrap();
    std::fs::write(&manifest, &original).unwrap();
    edit_json(&manifest, |m| {
        m["bytes"] = json!(4000u64 << 20);
        m["chunks"] = json!(vec![json!({"hash": hash, "bytes": 1u64 << 20}); 4000]);
    });
    expect_refusal(&fresh(), &["pull", "--remote", &url, &id], "4000 chunks");
    drop(a);
}

/// Issue 39 item 5: a remote is tracked by its URL — used by URL, then
/// named, nothing is sent again and `status` shows it up to date under its
/// name; a pulled session is not counted as "not pushed"; the pull names
/// the session by id and says which project a restore writes into.
#[test]
fn a_remote_is_known_by_its_url_and_a_pulled_log_is_not_behind() {
    let remote = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote.path().display());
    let a = Machine::with_env(vec![]);
    a.turn("echo more >> x.txt", None);
    let first = a.ok(&["push", "--remote", &url]);
    assert!(first.contains(&format!("pushed to {url}")), "{first}");
    let id = session_id(&a.session_files()[0]);
    a.ok(&["remote", "add", "origin", &url]);
    let again = a.ok(&["push"]);
    assert!(again.contains("origin is up to date"), "{again}");
    let status = a.ok(&["status"]);
    assert!(
        status.contains(&format!("remote   origin {url}: up to date")),
        "{status}"
    );
    assert!(!status.contains("url-"), "{status}");

    let b = Machine::with_env(vec![]);
    let pulled = b.ok(&["pull", "--remote", &url, &id]);
    assert!(
        pulled.contains(&format!("`rewind log --session {id}`"))
            && pulled.contains(&b.project().canonicalize().unwrap().display().to_string()),
        "{pulled}"
    );
    b.ok(&["remote", "add", "origin", &url]);
    let status = b.ok(&["status"]);
    assert!(
        status.contains(&format!("remote   origin {url}: up to date")),
        "{status}"
    );
    // The session is found by its id's beginning.
    let log = b.ok(&["log", "--session", &id[..8]]);
    assert!(log.contains(&id), "{log}");
    // A restore opens the session three times; the other-directory warning
    // is said once.
    let (code, _, err) = b.rewind(&["restore", "--session", &id, "-y"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.matches("this session was recorded in").count(),
        1,
        "{err}"
    );
}
