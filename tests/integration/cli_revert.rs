//! The terminal side of selective rollback: `rewind revert` (by entry id
//! and by turn number), `rewind blame`, `rewind restore -p`.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::common::{bin, Fixture};

fn cli_with_stdin(fx: &Fixture, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .args(["--cwd", fx.project.path().to_str().unwrap()])
        .args(["--store", fx.store.path().to_str().unwrap()])
        .current_dir(fx.project.path())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn cli(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    cli_with_stdin(fx, args, "")
}

/// Three turns on `f.txt` (lines 2, 5 and 8) and a file added by turn 2;
/// the sidecar is stopped afterwards, as a finished agent session is.
fn three_turns() -> (Fixture, Vec<String>) {
    let fx = Fixture::new();
    fx.write("f.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    let (mut s, _) = fx.start(json!({}));
    let mut ids = Vec::new();
    for (t, content) in [
        "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n",
        "1\nTWO\n3\n4\nFIVE\n6\n7\n8\n9\n",
        "1\nTWO\n3\n4\nFIVE\n6\n7\nEIGHT\n9\n",
    ]
    .iter()
    .enumerate()
    {
        fx.write("f.txt", content);
        if t == 1 {
            fx.write("added.txt", "by turn 2\n");
        }
        let r = s.ok(
            "snapshot",
            json!({"kind": "turn", "label": format!("prompt {}", t + 1)}),
        );
        ids.push(r["entryId"].as_str().unwrap().to_string());
    }
    assert!(s.finish().success());
    (fx, ids)
}

#[test]
fn revert_by_turn_number_shows_the_plan_then_writes_with_yes_and_undo_reverts_it() {
    let (fx, _) = three_turns();
    // No terminal, no --yes: the plan only, and a failure saying what to pass.
    let (code, out, err) = cli(&fx, &["revert", "2"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("clean    write  f.txt"), "{out}");
    assert!(out.contains("clean    delete added.txt"), "{out}");
    assert!(out.contains("-FIVE\n+5"), "{out}");
    assert!(
        err.contains("nothing written") && err.contains("pass --yes"),
        "{err}"
    );
    assert_eq!(fx.read("added.txt").unwrap(), b"by turn 2\n");

    let (code, out, err) = cli(&fx, &["revert", "2", "--yes"]);
    assert_eq!(code, 0, "{err}{out}");
    assert!(out.contains("rewind undo"), "{out}");
    assert_eq!(
        fx.read("f.txt").unwrap(),
        b"1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n"
    );
    assert!(fx.read("added.txt").is_none());

    let (code, out, err) = cli(&fx, &["undo", "--yes"]);
    assert_eq!(code, 0, "{err}{out}");
    assert_eq!(
        fx.read("f.txt").unwrap(),
        b"1\nTWO\n3\n4\nFIVE\n6\n7\nEIGHT\n9\n"
    );
    assert_eq!(fx.read("added.txt").unwrap(), b"by turn 2\n");
}

#[test]
fn a_conflicting_revert_is_refused_unless_asked_for_markers() {
    let (fx, ids) = three_turns();
    fx.write("f.txt", "1\nTWO\n3\n4\nFive!\n6\n7\nEIGHT\n9\n");
    let (code, out, err) = cli(&fx, &["revert", &ids[1], "--yes"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("CONFLICT"), "{out}");
    assert!(err.contains("conflict with later changes"), "{err}");
    assert_eq!(
        fx.read("f.txt").unwrap(),
        b"1\nTWO\n3\n4\nFive!\n6\n7\nEIGHT\n9\n"
    );

    let (code, out, err) = cli(
        &fx,
        &["revert", &ids[1], "--on-conflict", "markers", "--yes"],
    );
    assert_eq!(code, 0, "{err}{out}");
    let text = String::from_utf8(fx.read("f.txt").unwrap()).unwrap();
    assert!(
        text.contains("<<<<<<< current\nFive!\n=======\n5\n>>>>>>> before "),
        "{text}"
    );
    assert!(text.contains("EIGHT"), "{text}");
}

#[test]
fn blame_shows_the_turn_and_prompt_of_each_line() {
    let (fx, ids) = three_turns();
    fx.write("f.txt", "1\nTWO\n3\n4\nFIVE\n6\n7\nEIGHT\n9\n10\n");
    let (code, out, err) = cli(&fx, &["blame", "f.txt"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 10, "{out}");
    assert!(
        lines[1].starts_with(&ids[0]) && lines[1].contains("turn   1"),
        "{out}"
    );
    assert!(
        lines[1].contains("prompt 1") && lines[1].ends_with("| TWO"),
        "{out}"
    );
    assert!(
        lines[4].starts_with(&ids[1]) && lines[4].contains("prompt 2"),
        "{out}"
    );
    assert!(
        lines[7].starts_with(&ids[2]) && lines[7].contains("prompt 3"),
        "{out}"
    );
    assert!(lines[0].contains("baseline"), "{out}");
    assert!(lines[9].starts_with("working"), "{out}");

    let (code, out, _) = cli(&fx, &["blame", "f.txt", "--at", &ids[0]]);
    assert_eq!(code, 0);
    assert!(out.lines().nth(4).unwrap().ends_with("| 5"), "{out}");
}

#[test]
fn restore_patch_takes_back_the_hunks_answered_yes() {
    let (fx, ids) = three_turns();
    // Since turn 1: added.txt (asked first: files in path order) and f.txt's
    // lines 5 and 8 (one hunk: they are within two contexts of each other).
    let (code, out, err) = cli_with_stdin(&fx, &["restore", &ids[0], "-p"], "n\ny\n");
    assert_eq!(code, 0, "{err}{out}");
    assert!(out.contains("Take back this hunk (1/1)"), "{out}");
    // added.txt's hunk was answered no, f.txt's yes.
    assert_eq!(fx.read("f.txt").unwrap(), b"1\nTWO\n3\n4\n5\n6\n7\n8\n9\n");
    assert_eq!(fx.read("added.txt").unwrap(), b"by turn 2\n");
    let (code, out, err) = cli(&fx, &["undo", "--yes"]);
    assert_eq!(code, 0, "{err}{out}");
    assert_eq!(
        fx.read("f.txt").unwrap(),
        b"1\nTWO\n3\n4\nFIVE\n6\n7\nEIGHT\n9\n"
    );
}

/// Runs `rewind ARGS` in a pseudo-terminal (Python's standard library:
/// the command asks only when its stdin is a terminal); once its output
/// shows `prompt`, writes `content` to the project's `file` (an agent still
/// at work while the person reads the plan) and answers `y`. Its exit code
/// and everything it printed.
fn answer_after_a_change(
    fx: &Fixture,
    args: &[&str],
    prompt: &str,
    file: &str,
    content: &str,
) -> (i32, String) {
    const DRIVER: &str = r#"
import os, pty, select, sys, time
prompt, path, content = sys.argv[1].encode(), sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[4], sys.argv[4:])
out, answered, deadline = b"", False, time.time() + 60
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if not answered and prompt in out:
        with open(path, "w") as f:
            f.write(content)
        os.write(fd, b"y\n")
        answered = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let project = fx.project.path().to_str().unwrap();
    let out = Command::new("python3")
        .args(["-c", DRIVER, prompt])
        .arg(fx.project.path().join(file))
        .arg(content)
        .arg(bin())
        .args(args)
        .args(["--cwd", project])
        .args(["--store", fx.store.path().to_str().unwrap()])
        .current_dir(fx.project.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// What the person said yes to is what is written, or nothing: a file the
/// revert writes changed while its plan was on screen. The old revert
/// recorded the change and wrote conflict markers into it that no plan
/// had shown; now it writes nothing and shows the plan as it is now.
#[test]
fn a_revert_writes_what_its_plan_showed_or_nothing() {
    let (fx, _) = three_turns();
    let changed = "1\nTWO\n3\n4\nFIVE!\n6\n7\nEIGHT\n9\n";
    let (code, out) = answer_after_a_change(
        &fx,
        &["revert", "2", "--on-conflict", "markers"],
        "Proceed?",
        "f.txt",
        changed,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("clean    write  f.txt"),
        "the plan shown: {out}"
    );
    assert!(out.contains("planned again now"), "{out}");
    assert!(
        out.contains(
            "nothing was written: the files or the session changed since the plan was shown"
        ),
        "{out}"
    );
    assert_eq!(
        fx.read("f.txt").as_deref(),
        Some(changed.as_bytes()),
        "the change made meanwhile is kept"
    );
    assert!(
        fx.project.path().join("added.txt").exists(),
        "nothing deleted"
    );
}

/// The same for a restore, which confirmed this way before the revert did.
#[test]
fn a_restore_writes_what_its_plan_showed_or_nothing() {
    let (fx, ids) = three_turns();
    let changed = "changed while the plan was on screen\n";
    let (code, out) =
        answer_after_a_change(&fx, &["restore", &ids[0]], "Proceed?", "f.txt", changed);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("planned again now"), "{out}");
    assert_eq!(fx.read("f.txt").as_deref(), Some(changed.as_bytes()));
    // Asked again with nothing changing, it is done.
    let (code, out) =
        answer_after_a_change(&fx, &["restore", &ids[0]], "Proceed?", "other.txt", "x\n");
    assert_eq!(
        code, 1,
        "a file written while the plan shows counts too: {out}"
    );
    let (code, out, err) = cli(&fx, &["restore", &ids[0], "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        fx.read("f.txt").as_deref(),
        Some(&b"1\nTWO\n3\n4\n5\n6\n7\n8\n9\n"[..])
    );
}
