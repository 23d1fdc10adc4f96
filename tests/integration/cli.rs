//! The terminal commands: `rewind schema`, `log`, `diff`, `restore`, `undo`, `gc`.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{disk_state, run_cli, run_cli_env, Fixture, Sidecar};

/// The methods of this build's foundation (PROTOCOL.md "Methods").
const FOUNDATION: &[&str] = &[
    "initialize",
    "snapshot",
    "append_entry",
    "label",
    "stage_files",
    "get_tree",
    "list_checkpoints",
    "get_modified_files",
    "get_file_diff",
    "get_file_history",
    "get_status",
    "stats",
    "shutdown",
];

/// Every method PROTOCOL.md names.
const ALL_PROTOCOL_METHODS: &[&str] = &[
    "initialize",
    "snapshot",
    "append_entry",
    "label",
    "stage_files",
    "get_tree",
    "list_checkpoints",
    "get_modified_files",
    "get_file_diff",
    "get_file_history",
    "restore_files",
    "navigate_tree",
    "undo",
    "get_status",
    "approve",
    "reset",
    "gc",
    "verify",
    "stats",
    "shutdown",
];

fn at<'a>(fx: &'a Fixture, args: &[&'a str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.extend([
        "--cwd".to_string(),
        fx.project.path().to_str().unwrap().to_string(),
        "--store".to_string(),
        fx.store.path().to_str().unwrap().to_string(),
    ]);
    v
}

fn cli(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let owned = at(fx, args);
    let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
    run_cli(&refs, fx.project.path())
}

fn schema() -> Value {
    let (code, out, err) = run_cli(&["schema"], Path::new("/"));
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("rewind schema prints JSON")
}

#[test]
fn schema_is_json_and_lists_every_method() {
    let s = schema();
    let methods = s["methods"].as_object().expect("methods object");
    for m in FOUNDATION {
        let spec = methods
            .get(*m)
            .unwrap_or_else(|| panic!("{m} missing from the schema"));
        assert!(spec.get("result").is_some(), "{m}: {spec}");
        assert!(spec.get("params").is_some(), "{m}: {spec}");
    }
    assert_eq!(s["protocolVersion"], 1);
    for code in ["-32700", "-32600", "-32601", "-32602", "1001", "1004"] {
        assert!(s["errors"].get(code).is_some(), "error {code} listed");
    }
}

#[test]
fn schema_and_binary_agree_on_the_methods() {
    let s = schema();
    let listed: Vec<String> = s["methods"].as_object().unwrap().keys().cloned().collect();
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut side, _) = fx.start(json!({}));
    for m in ALL_PROTOCOL_METHODS.iter().filter(|m| **m != "shutdown") {
        // A bogus field: served methods refuse it as invalid params (or
        // ignore it); only an unknown method says -32601.
        let v = side.call(m, json!({"__bogus__": true}));
        let served = v["error"]["code"] != -32601;
        assert_eq!(
            served,
            listed.iter().any(|l| l == m),
            "{m}: served = {served} but listed in the schema = {}",
            !served
        );
    }
    assert!(side.finish().success());
}

/// A session with a few checkpoints: baseline, a labelled turn, a turn with
/// a note, a tool snapshot; then uncommitted work on disk.
struct Project {
    fx: Fixture,
    session: String,
    baseline: String,
    t1: String,
    t2: String,
}

fn project() -> Project {
    let fx = Fixture::new();
    fx.write("keep.txt", "same\n");
    fx.write("edit.txt", "one\ntwo\nthree\n");
    fx.write("old.txt", "old\n");
    let (mut s, init) = fx.start(json!({}));
    fx.write("edit.txt", "one\n2\nthree\n");
    fx.write("new.txt", "new\n");
    let t1 = s.ok("snapshot", json!({"label": "first turn"}));
    s.ok(
        "label",
        json!({"targetId": t1["entryId"], "label": "renamed turn", "note": "a note"}),
    );
    fx.remove("old.txt");
    fx.write("img.bin", [0u8, 159, 146, 150, 1, 2, 3]);
    let t2 = s.ok("snapshot", json!({"kind": "tool"}));
    assert!(s.finish().success());
    // Work not snapshotted yet.
    fx.write("edit.txt", "one\n2\nthree\nfour\n");
    Project {
        session: init["sessionFile"].as_str().unwrap().to_string(),
        baseline: init["baseline"]["entryId"].as_str().unwrap().to_string(),
        t1: t1["entryId"].as_str().unwrap().to_string(),
        t2: t2["entryId"].as_str().unwrap().to_string(),
        fx,
    }
}

#[test]
fn log_shows_checkpoints_with_labels() {
    let p = project();
    let (code, out, err) = cli(&p.fx, &["log"]);
    assert_eq!(code, 0, "{err}");
    for id in [&p.baseline, &p.t1, &p.t2] {
        assert!(out.contains(id.as_str()), "{id} in:\n{out}");
    }
    assert!(out.contains("renamed turn"), "{out}");
    assert!(out.contains("a note"), "{out}");
    assert!(out.contains("baseline"), "{out}");
    assert!(out.contains("tool"), "{out}");
    // Oldest first.
    let pos = |id: &str| out.find(id).unwrap();
    assert!(
        pos(&p.baseline) < pos(&p.t1) && pos(&p.t1) < pos(&p.t2),
        "{out}"
    );
    // --session names the file explicitly; same output.
    let (code, out2, err) = cli(&p.fx, &["log", "--session", &p.session]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, out2);
}

#[test]
fn log_all_shows_other_branches() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    fx.write("a.txt", "b");
    let first = s.ok("snapshot", json!({}))["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    fx.write("a.txt", "c");
    let side = s.ok(
        "snapshot",
        json!({"parentId": base, "label": "side branch"}),
    )["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.finish().success());
    let (code, out, err) = cli(&fx, &["log"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&side), "{out}");
    assert!(
        !out.contains(&first),
        "only the current path by default:\n{out}"
    );
    let (code, out, err) = cli(&fx, &["log", "--all"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&side) && out.contains(&first), "{out}");
    assert!(out.contains("side branch"), "{out}");
    // Indented only at the real branch: the path to the leaf stays flat,
    // the branch it left is one level in.
    let line = |id: &str| out.lines().find(|l| l.contains(id)).unwrap().to_string();
    assert!(line(&base).starts_with("* "), "{out}");
    assert!(line(&side).starts_with("* "), "{out}");
    assert!(line(&first).starts_with("    "), "{out}");
}

#[test]
fn diff_defaults_to_baseline_against_the_working_directory() {
    let p = project();
    let (code, out, err) = cli(&p.fx, &["diff"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("--- a/edit.txt\n+++ b/edit.txt\n"), "{out}");
    assert!(out.contains("-two\n+2\n"), "{out}");
    assert!(
        out.contains("+four\n"),
        "includes work not snapshotted:\n{out}"
    );
    // Added and deleted files as git writes them, so that `git apply`
    // creates and deletes them.
    assert!(
        out.contains("new file mode 100644\n--- /dev/null\n+++ b/new.txt\n"),
        "{out}"
    );
    assert!(
        out.contains("deleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n"),
        "{out}"
    );
    assert!(
        out.contains("img.bin"),
        "binary files are mentioned:\n{out}"
    );
    assert!(!out.contains("keep.txt"), "{out}");
}

#[test]
fn diff_name_only() {
    let p = project();
    let (code, out, err) = cli(&p.fx, &["diff", "--name-only"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        vec!["M\tedit.txt", "A\timg.bin", "A\tnew.txt", "D\told.txt"],
        "{out}"
    );
}

#[test]
fn diff_between_two_entry_ids() {
    let p = project();
    let (code, out, err) = cli(&p.fx, &["diff", "--name-only", &p.t1, &p.t2]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec!["A\timg.bin", "D\told.txt"],
        "{out}"
    );
    let (code, out, err) = cli(&p.fx, &["diff", &p.baseline, &p.t1]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("-two\n+2\n"), "{out}");
    assert!(
        !out.contains("+four"),
        "the working directory is not involved:\n{out}"
    );
    // An unknown id is an error, not an empty diff.
    let (code, _, err) = cli(&p.fx, &["diff", "ffff0000", &p.t1]);
    assert_ne!(code, 0);
    assert!(err.contains("ffff0000"), "{err}");
}

#[test]
fn log_and_diff_read_a_session_a_sidecar_holds() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    fx.write("a.txt", "b\n");
    let snap = s.ok("snapshot", json!({"label": "held"}));
    let before = std::fs::read(&session).unwrap();
    let (code, out, err) = cli(&fx, &["log"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(snap["entryId"].as_str().unwrap()), "{out}");
    assert!(out.contains("held"), "{out}");
    fx.write("a.txt", "c\n");
    let (code, out, err) = cli(&fx, &["diff", "--session", &session]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("-a\n+c\n"), "{out}");
    assert_eq!(
        std::fs::read(&session).unwrap(),
        before,
        "read-only: nothing appended"
    );
    // The sidecar is undisturbed and still holds its lock.
    let r = s.ok("snapshot", json!({}));
    assert!(r["entryId"].is_string(), "{r}");
    let mut other = fx.spawn();
    let e = other.err(
        "initialize",
        json!({
            "cwd": fx.project.path().to_str().unwrap(),
            "storeDir": fx.store.path().to_str().unwrap(),
            "sessionFile": session,
        }),
    );
    assert_eq!(e["code"], 1004);
    drop(other);
    assert!(s.finish().success());
}

#[test]
fn log_without_a_session_is_a_helpful_error() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    for args in [&["log"][..], &["diff"][..]] {
        let (code, out, err) = cli(&fx, args);
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains("no session"), "{args:?}: {err}");
        assert!(
            err.contains("rewind serve") || err.contains("--session"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // A --session that does not exist.
    let missing = fx.store.path().join("nope.jsonl");
    let (code, _, err) = cli(&fx, &["log", "--session", missing.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("nope.jsonl"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn log_finds_the_store_through_rewind_home() {
    let fx = Fixture::new();
    let home = tempfile::tempdir().unwrap();
    fx.write("a.txt", "a");
    let mut s = Sidecar::spawn_env(
        &["--cwd", fx.project.path().to_str().unwrap()],
        &[("REWIND_HOME", home.path())],
    );
    let init = s.ok("initialize", json!({}));
    assert!(
        init["storeDir"]
            .as_str()
            .unwrap()
            .starts_with(home.path().to_str().unwrap()),
        "{init}"
    );
    assert!(s.finish().success());
    let (code, out, err) =
        run_cli_env(&["log"], fx.project.path(), &[("REWIND_HOME", home.path())]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(init["baseline"]["entryId"].as_str().unwrap()),
        "{out}"
    );
}

#[test]
fn restore_shows_the_plan_and_writes_only_when_told() {
    let p = project();
    let fx = &p.fx;
    let before = std::fs::read(&p.session).unwrap();
    // No terminal and no --yes: the plan is shown, nothing is written or
    // appended, and the command fails saying what to pass (a script must
    // not read success).
    let (code, out, err) = cli(fx, &["restore", p.baseline.as_str()]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("write   edit.txt"), "{out}");
    assert!(out.contains("delete  new.txt"), "{out}");
    assert!(
        err.contains("nothing written") && err.contains("pass --yes"),
        "{err}"
    );
    assert_eq!(std::fs::read(&p.session).unwrap(), before);
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\nfour\n");

    let (code, out, err) = cli(fx, &["restore", p.baseline.as_str(), "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rewind undo"), "{out}");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\ntwo\nthree\n");
    assert_eq!(fx.read("old.txt").unwrap(), b"old\n");
    assert_eq!(fx.read("new.txt"), None);

    // undo brings back everything, the unsnapshotted edit included.
    let (code, out, err) = cli(fx, &["undo", "--yes"]);
    assert_eq!(code, 0, "{err}{out}");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\nfour\n");
    assert_eq!(fx.read("new.txt").unwrap(), b"new\n");
}

#[test]
fn restore_without_a_target_discards_changes_since_the_last_checkpoint() {
    let p = project();
    let fx = &p.fx;
    fx.write("stray.txt", "agent junk\n");
    let (code, out, err) = cli(fx, &["restore", "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("write   edit.txt"), "{out}");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\n");
    assert_eq!(fx.read("stray.txt"), None);
    // Only the named files, with --file.
    fx.write("edit.txt", "again\n");
    fx.write("stray.txt", "again\n");
    let (code, _, err) = cli(
        fx,
        &["restore", p.t2.as_str(), "--file", "edit.txt", "--yes"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\n");
    assert_eq!(fx.read("stray.txt").unwrap(), b"again\n");
}

/// `--on-conflict skip` keeps, byte for byte, the files its plan says it
/// keeps: here one edited outside the agent after the last checkpoint. (The
/// write used to open the session with an `outside` snapshot first, after
/// which the file no longer counted as changed and was overwritten.)
#[test]
fn restore_on_conflict_skip_keeps_what_its_plan_keeps() {
    let p = project();
    let fx = &p.fx;
    let args = [
        "restore",
        "--on-conflict",
        "skip",
        "--yes",
        p.baseline.as_str(),
    ];
    let (code, out, err) = cli(fx, &args);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("keep    edit.txt (changed since it was last recorded)"),
        "{out}"
    );
    assert!(!out.contains("write   edit.txt"), "{out}");
    assert!(out.contains("kept    edit.txt"), "{out}");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\nfour\n");
    // The rest of the plan is carried out.
    assert_eq!(fx.read("old.txt").unwrap(), b"old\n");
    assert_eq!(fx.read("new.txt"), None);
    assert_eq!(fx.read("img.bin"), None);
}

/// `--on-conflict abort` with a conflict in the plan writes nothing — no
/// file, no session line — and fails with a line that says so.
#[test]
fn restore_on_conflict_abort_writes_nothing_and_fails() {
    let p = project();
    let fx = &p.fx;
    let disk = disk_state(&fx.root());
    let session = std::fs::read(&p.session).unwrap();
    let args = [
        "restore",
        "--on-conflict",
        "abort",
        "--yes",
        p.baseline.as_str(),
    ];
    let (code, out, err) = cli(fx, &args);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("keep    edit.txt"), "{out}");
    assert!(
        err.contains("nothing was written: 1 file(s) conflict and --on-conflict abort was given"),
        "{err}"
    );
    assert_eq!(disk_state(&fx.root()), disk);
    assert_eq!(std::fs::read(&p.session).unwrap(), session);
}

/// `rewind undo --on-conflict skip` keeps what its plan keeps too.
#[test]
fn undo_on_conflict_skip_keeps_what_its_plan_keeps() {
    let p = project();
    let fx = &p.fx;
    let (code, _, err) = cli(fx, &["restore", "--yes", p.baseline.as_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fx.read("old.txt").unwrap(), b"old\n");
    // Edited by hand after the restore, which undo would delete.
    fx.write("old.txt", "edited by hand\n");
    let (code, out, err) = cli(fx, &["undo", "--on-conflict", "skip", "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("keep    old.txt"), "{out}");
    assert_eq!(fx.read("old.txt").unwrap(), b"edited by hand\n");
    // The rest of the restore is undone.
    assert_eq!(fx.read("new.txt").unwrap(), b"new\n");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\nfour\n");
}

fn chmod(fx: &Fixture, rel: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        fx.project.path().join(rel),
        std::fs::Permissions::from_mode(mode),
    )
    .unwrap();
}

fn mode(fx: &Fixture, rel: &str) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(fx.project.path().join(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// Permission bits come back as captured (0600, 0640, 0755, 0700), whatever
/// the umask, through snapshot → change → restore; a chmod alone is a change.
#[test]
fn restore_puts_back_the_permission_bits() {
    let fx = Fixture::new();
    let modes = [
        ("key", 0o600),
        ("shared.cfg", 0o640),
        ("run.sh", 0o755),
        ("private.sh", 0o700),
        ("plain.txt", 0o644),
    ];
    for (rel, m) in modes {
        fx.write(rel, format!("{rel}\n"));
        chmod(&fx, rel, m);
    }
    // Old enough that the stat cache keeps them (past the racy window).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();

    // A chmod alone, and a chmod with an edit, a deletion.
    chmod(&fx, "key", 0o644);
    chmod(&fx, "shared.cfg", 0o604);
    fx.write("run.sh", "changed\n");
    chmod(&fx, "run.sh", 0o700);
    fx.remove("private.sh");
    let turn = s.ok("snapshot", json!({}));
    let modified: Vec<&str> = turn["diff"]["modified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(modified, ["key", "run.sh", "shared.cfg"], "{turn}");
    assert!(s.finish().success());
    // A chmod the session has not recorded yet is a change too.
    chmod(&fx, "plain.txt", 0o600);
    let (code, out, err) = cli(&fx, &["diff", "--name-only"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("M\tplain.txt"), "{out}");
    assert!(out.contains("M\tkey"), "{out}");
    // A git patch holds only git's modes (644, 755): a chmod git does not
    // record is said on stderr, one it records is git's two lines.
    let (code, out, err) = cli(&fx, &["diff"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("a/key"), "{out}");
    assert!(err.contains("only key's permission bits changed"), "{err}");
    assert!(
        out.contains("diff --git a/run.sh b/run.sh\n--- a/run.sh\n"),
        "{out}"
    );

    let (code, out, err) = cli(&fx, &["restore", "--yes", base.as_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("write   key"), "{out}");
    for (rel, m) in modes {
        assert_eq!(mode(&fx, rel), m, "{rel}: {:o}", mode(&fx, rel));
        assert_eq!(fx.read(rel).unwrap(), format!("{rel}\n").as_bytes());
    }
    // And undo puts back the modes the restore replaced.
    let (code, _, err) = cli(&fx, &["undo", "--yes"]);
    assert_eq!(code, 0, "{err}");
    for (rel, m) in [
        ("key", 0o644),
        ("shared.cfg", 0o604),
        ("run.sh", 0o700),
        ("plain.txt", 0o600),
    ] {
        assert_eq!(mode(&fx, rel), m, "{rel}: {:o}", mode(&fx, rel));
    }
    assert_eq!(fx.read("private.sh"), None);
}

/// A checkpoint an older build recorded (its record without `modes`) says
/// 0644 for every file: a restore to it leaves a file's mode as it is on
/// disk rather than open a private file to everyone, and a mode the
/// recorded state could not know is no edit (docs/format.md "What a restore
/// does not put back").
#[test]
fn a_checkpoint_from_before_modes_leaves_modes_alone() {
    let fx = Fixture::new();
    fx.write("key", "secret\n");
    fx.write("notes.txt", "one\n");
    chmod(&fx, "key", 0o644);
    chmod(&fx, "notes.txt", 0o644);
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    fx.write("key", "rotated\n");
    s.ok("snapshot", json!({}));
    assert!(s.finish().success());
    // As an older build wrote it.
    let text = std::fs::read_to_string(&session).unwrap();
    assert_eq!(text.matches(",\"modes\":true").count(), 2, "{text}");
    std::fs::write(&session, text.replace(",\"modes\":true", "")).unwrap();

    // The key made private since, unchanged otherwise: the last checkpoint
    // has nothing to put back.
    chmod(&fx, "key", 0o600);
    let (code, out, err) = cli(&fx, &["restore", "--on-conflict", "skip", "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing to change"), "{out}");
    assert!(!out.contains("key"), "{out}");
    assert_eq!(mode(&fx, "key"), 0o600);
    // Back to the baseline: the key's content (not "changed since": only
    // its mode differs from what the older record says), and its mode kept.
    let args = ["restore", "--on-conflict", "skip", "--yes", base.as_str()];
    let (code, out, err) = cli(&fx, &args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("write   key\n"), "{out}");
    assert_eq!(fx.read("key").unwrap(), b"secret\n");
    assert_eq!(mode(&fx, "key"), 0o600);
    // A file the restore writes over keeps its mode too.
    fx.write("notes.txt", "three\n");
    chmod(&fx, "notes.txt", 0o640);
    let (code, _, err) = cli(&fx, &["restore", "--yes", base.as_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fx.read("notes.txt").unwrap(), b"one\n");
    assert_eq!(mode(&fx, "notes.txt"), 0o640);
}

#[test]
fn restore_refuses_while_a_sidecar_holds_the_session() {
    let p = project();
    let fx = &p.fx;
    let mut s = Sidecar::spawn(&[
        "--cwd",
        fx.project.path().to_str().unwrap(),
        "--store",
        fx.store.path().to_str().unwrap(),
        "--session",
        &p.session,
    ]);
    s.ok("get_tree", json!(null));
    let (code, _, err) = cli(
        fx,
        &["restore", p.t1.as_str(), "--yes", "--session", &p.session],
    );
    assert_ne!(code, 0);
    assert!(err.contains("sidecar is running"), "{err}");
    assert_eq!(fx.read("edit.txt").unwrap(), b"one\n2\nthree\nfour\n");
}

#[test]
fn gc_dry_run_and_keep_rules() {
    let p = project();
    let fx = &p.fx;
    let (code, out, err) = cli(fx, &["gc", "--dry-run", "--keep-last", "0"]);
    assert_eq!(code, 0, "{err}");
    // The only session holds a labelled checkpoint: protected.
    assert!(out.contains("0 session(s) pruned"), "{out}");
    assert!(Path::new(&p.session).exists());
    let (code, out, err) = cli(fx, &["gc"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Freed"), "{out}");
}

#[test]
fn verify_exits_0_on_a_sound_store_and_1_naming_what_is_wrong() {
    let p = project();
    let fx = &p.fx;
    let (code, out, err) = cli(fx, &["verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no problems"), "{out}");
    // Remove the pack indexes: their objects are no longer in the store.
    let packs = fx.store.path().join("objects").join("pack");
    for index in std::fs::read_dir(&packs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "idx"))
    {
        std::fs::remove_file(&index).unwrap();
    }
    let (code, out, _) = cli(fx, &["verify"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("MissingObject"), "{out}");
    // A checkpoint whose tree hash is not one: named by entry and record type.
    let mut text = std::fs::read_to_string(&p.session).unwrap();
    text.push_str(
        r#"{"type":"custom","customType":"step-snapshot","id":"badhash1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","data":{"snapshotTreeHash":"zz"}}"#,
    );
    text.push('\n');
    std::fs::write(&p.session, text).unwrap();
    let (code, out, _) = cli(fx, &["verify"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("entry badhash1: its step-snapshot record cannot be read"),
        "{out}"
    );
}
