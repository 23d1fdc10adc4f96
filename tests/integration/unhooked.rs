//! `rewind run` and `rewind watch`: recording tools that have no hooks.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common;

fn rewind(home: &Path, project: &Path, args: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .env("REWIND_HOME", home)
        .current_dir(project)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn step_snapshots(home: &Path) -> Vec<Value> {
    let projects = home.join("projects");
    let store = std::fs::read_dir(projects)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let session = std::fs::read_dir(store.join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    std::fs::read_to_string(session)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["customType"] == "step-snapshot")
        .map(|e| e["data"].clone())
        .collect()
}

#[test]
fn run_records_a_command_as_one_turn_that_undo_takes_back() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("a.txt"), "a").unwrap();
    let out = rewind(
        home.path(),
        root,
        &["run", "--", "sh", "-c", "echo x > b.txt; rm a.txt; exit 3"],
    );
    assert_eq!(out.status.code(), Some(3), "the command's status");
    assert!(out.stdout.is_empty());
    let snaps = step_snapshots(home.path());
    let kinds: Vec<(&str, u64)> = snaps
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap(),
                d["turnIndex"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(kinds, [("baseline", 0), ("message", 1), ("turn", 1)]);
    assert_eq!(
        snaps[1]["label"],
        "sh -c 'echo x > b.txt; rm a.txt; exit 3'"
    );
    assert_eq!(snaps[2]["diff"]["added"], serde_json::json!(["b.txt"]));
    assert_eq!(snaps[2]["diff"]["deleted"], serde_json::json!(["a.txt"]));
    // `undo` after the command's turn puts back the state before it.
    let out = rewind(home.path(), root, &["undo", "--yes"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a");
    assert!(!root.join("b.txt").exists());
    // A command that cannot start is an error, recorded before it.
    let out = rewind(home.path(), root, &["run", "--", "/no/such/program"]);
    assert!(!out.status.success());
}

#[test]
fn watch_records_a_checkpoint_once_a_burst_of_writes_settles() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().to_path_buf();
    std::fs::write(root.join("seed.txt"), "s").unwrap();
    let watcher = Command::new(common::bin())
        .args(["watch", "--settle-ms", "800", "--for-seconds", "6"])
        .env("REWIND_HOME", home.path())
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    // One burst: many writes 50 ms apart, then quiet.
    for i in 0..6 {
        std::fs::write(root.join(format!("gen{i}.txt")), format!("{i}")).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2000));
    // A second burst.
    std::fs::write(root.join("later.txt"), "l").unwrap();
    let out = watcher.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snaps = step_snapshots(home.path());
    let watch: Vec<&Value> = snaps.iter().filter(|d| d["label"] == "watch").collect();
    assert!(!watch.is_empty() && watch.len() <= 3, "{snaps:?}");
    // The first burst is one checkpoint holding all of it (it settled).
    assert_eq!(
        watch[0]["diff"]["added"].as_array().unwrap().len(),
        6,
        "{snaps:?}"
    );
    let last = watch.last().unwrap();
    assert!(
        last["diff"]["added"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "later.txt"),
        "{snaps:?}"
    );
}

#[test]
fn run_runs_the_command_in_the_project_given_by_cwd() {
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap();
    let out = rewind(
        home.path(),
        elsewhere.path(),
        &[
            "run",
            "--cwd",
            cwd,
            "--",
            "sh",
            "-c",
            "echo made > made.txt",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(project.path().join("made.txt").exists());
    assert!(!elsewhere.path().join("made.txt").exists());
    let snaps = step_snapshots(home.path());
    assert_eq!(
        snaps.last().unwrap()["diff"]["added"],
        serde_json::json!(["made.txt"])
    );
}

/// Turns and sessions named as `rewind log` and `rewind sessions` show
/// them: `diff 1 2` is what turn 1 changed, `restore 2` goes back to the
/// start of turn 2, `--session` takes an id's beginning; a linear session's
/// `log --all` is not indented (issue 39).
#[test]
fn turns_and_sessions_are_named_as_the_log_shows_them() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    for cmd in ["echo b > b.txt", "echo c >> a.txt"] {
        assert!(rewind(home.path(), root, &["run", "--", "sh", "-c", cmd])
            .status
            .success());
    }
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let turn1 = rewind(home.path(), root, &["diff", "1", "2", "--name-only"]);
    assert_eq!(text(&turn1), "A\tb.txt\n", "{}", err(&turn1));
    let since2 = rewind(home.path(), root, &["diff", "2"]);
    assert!(text(&since2).contains("+c\n"), "{}", text(&since2));
    let none = rewind(home.path(), root, &["diff", "7"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(
        err(&none).contains("no turn 7") && err(&none).contains("turns 0 to 2"),
        "{}",
        err(&none)
    );

    let log = rewind(home.path(), root, &["log", "--all"]);
    assert!(
        text(&log).lines().skip(1).all(|l| l.starts_with("* ")),
        "a linear session is not indented:\n{}",
        text(&log)
    );
    let sessions = home.path().join("projects");
    let store = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let file = std::fs::read_dir(store.join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let name = file.file_stem().unwrap().to_str().unwrap().to_string();
    let id = name.split_once('_').unwrap().1;
    let by_id = rewind(home.path(), root, &["log", "--session", &id[..6]]);
    assert_eq!(
        text(&by_id),
        text(&rewind(home.path(), root, &["log"])),
        "{}",
        err(&by_id)
    );
    let unknown = rewind(home.path(), root, &["log", "--session", "zzzz"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        err(&unknown).contains("no session \"zzzz\"") && err(&unknown).contains("--cwd or --store"),
        "{}",
        err(&unknown)
    );

    let restore = rewind(home.path(), root, &["restore", "2", "--yes"]);
    assert!(restore.status.success(), "{}", err(&restore));
    assert!(
        text(&restore).contains("the start of turn 2"),
        "{}",
        text(&restore)
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    assert!(root.join("b.txt").exists(), "turn 1's file stays");
}
