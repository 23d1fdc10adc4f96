//! `rewind diff` as a patch `git apply` takes (engine/query/patch.rs): the
//! diff between two checkpoints, applied with the real `git apply` to a copy
//! of the older state, gives the newer state byte for byte (added, modified,
//! deleted, a last line without a newline, an executable, a mode change,
//! names with a space, unicode or a quote); a binary file makes `git apply`
//! refuse rather than leave it wrong; notebooks by cell with `--cells`, a
//! malformed one falling back to the text diff.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::{disk_state, run_cli, skip_or_fail, Fixture};

fn cli(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let mut v: Vec<&str> = args.to_vec();
    let (cwd, store) = (
        fx.project.path().to_str().unwrap().to_string(),
        fx.store.path().to_str().unwrap().to_string(),
    );
    v.extend(["--cwd", &cwd, "--store", &store]);
    run_cli(&v, fx.project.path())
}

fn chmod(root: &Path, rel: &str, mode: u32) {
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `git apply` of `patch` in `dir`: its status and stderr.
fn git_apply(dir: &Path, patch: &str) -> (bool, String) {
    let file = dir.parent().unwrap().join("the.patch");
    std::fs::write(&file, patch).unwrap();
    let out = Command::new("git")
        .args(["apply", "--verbose"])
        .arg(&file)
        .current_dir(dir)
        // Outside any repository: git apply works on the directory alone.
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The older state's files (and symlinks), written into a fresh directory.
fn write_tree(dir: &Path, files: &[(&str, &[u8], u32)]) {
    for (rel, bytes, mode) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        chmod(dir, rel, *mode);
    }
    for (link, target) in OLDER_LINKS {
        std::os::unix::fs::symlink(target, dir.join(link)).unwrap();
    }
}

const OLDER_LINKS: &[(&str, &str)] = &[("link", "keep.txt"), ("gone-link", "keep.txt")];

const OLDER: &[(&str, &[u8], u32)] = &[
    ("keep.txt", b"the same\n", 0o644),
    (
        "edit.txt",
        b"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
        0o644,
    ),
    ("gone.txt", b"deleted by the turn\n", 0o644),
    ("tail.txt", b"ends with a newline\n", 0o644),
    ("no-eol.txt", b"first\nlast, no newline", 0o644),
    ("dir/sp ace.txt", b"spaced\n", 0o644),
    ("t\u{e9}st.txt", b"unicode name\n", 0o644),
    ("q\"uote.txt", b"quoted name\n", 0o644),
    ("tool.sh", b"#!/bin/sh\necho tool\n", 0o644),
    ("empty-later.txt", b"emptied\n", 0o644),
    ("crlf.txt", b"windows\r\nlines\r\n", 0o644),
    ("progress.log", b"10%\r50%\r100%\ndone\n", 0o644),
];

#[test]
fn the_diff_between_two_checkpoints_applies_with_git_apply_byte_for_byte() {
    if !git_available() {
        return skip_or_fail("no git on PATH");
    }
    let fx = Fixture::new();
    write_tree(fx.project.path(), OLDER);
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    let root = fx.project.path();
    fx.write(
        "edit.txt",
        "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n",
    );
    fx.remove("gone.txt");
    fx.write("tail.txt", "ends without one now");
    fx.write("no-eol.txt", "first\nlast, with a newline now\n");
    fx.write("dir/sp ace.txt", "spaced, edited\n");
    fx.write("t\u{e9}st.txt", "unicode name, edited\n");
    fx.write("q\"uote.txt", "quoted name, edited\n");
    fx.write("added.txt", "a new file\n");
    fx.write("new dir/n\u{e9}w file.txt", "added under a spaced name\n");
    fx.write("run.sh", "#!/bin/sh\necho run\n");
    chmod(root, "run.sh", 0o755);
    chmod(root, "tool.sh", 0o755);
    fx.write("empty-later.txt", "");
    fx.write("empty-new.txt", "");
    // Symlinks: retargeted, added, deleted, and a file that became one.
    fx.remove("link");
    std::os::unix::fs::symlink("edit.txt", root.join("link")).unwrap();
    std::os::unix::fs::symlink("added.txt", root.join("new-link")).unwrap();
    fx.remove("gone-link");
    fx.remove("keep.txt");
    std::os::unix::fs::symlink("edit.txt", root.join("keep.txt")).unwrap();
    fx.write("crlf.txt", "windows\r\nlines, edited\r\n");
    // A carriage return alone stays inside its line, as git reads it.
    fx.write("progress.log", "10%\r60%\r100%\ndone\r");
    let turn = s.ok("snapshot", json!({"label": "the turn"}));
    let t1 = turn["entryId"].as_str().unwrap().to_string();
    assert!(s.finish().success());

    let (code, patch, err) = cli(&fx, &["diff", &base, &t1]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "", "nothing to say for text files");
    // Carriage returns shown as `\r`: insta would read a CR LF as a LF.
    insta::assert_snapshot!("diff_as_git_patch", patch.replace('\r', "\\r"));

    let work = tempfile::tempdir().unwrap();
    let older = work.path().join("older");
    std::fs::create_dir(&older).unwrap();
    write_tree(&older, OLDER);
    let (ok, err) = git_apply(&older, &patch);
    assert!(ok, "git apply refused the patch: {err}\n{patch}");
    assert_eq!(
        disk_state(&older),
        disk_state(root),
        "the newer state, byte for byte"
    );
    // The exec bits too (disk_state keeps only the owner's).
    let mode = |d: &Path, rel: &str| {
        std::fs::metadata(d.join(rel)).unwrap().permissions().mode() & 0o111 != 0
    };
    assert!(mode(&older, "run.sh") && mode(&older, "tool.sh"));

    // And the other way: from the newer state back to the older.
    let (code, back, err) = cli(&fx, &["diff", &t1, &base]);
    assert_eq!(code, 0, "{err}");
    let (ok, err) = git_apply(&older, &back);
    assert!(ok, "git apply refused the reverse patch: {err}\n{back}");
    let again = work.path().join("again");
    std::fs::create_dir(&again).unwrap();
    write_tree(&again, OLDER);
    assert_eq!(
        disk_state(&older),
        disk_state(&again),
        "the older state again"
    );
}

#[test]
fn a_binary_file_makes_git_apply_refuse_not_leave_it_wrong() {
    if !git_available() {
        return skip_or_fail("no git on PATH");
    }
    let fx = Fixture::new();
    fx.write("text.txt", "a\n");
    fx.write("logo.bin", [0u8, 1, 2, 3]);
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    fx.write("text.txt", "b\n");
    fx.write("logo.bin", [0u8, 9, 9, 9]);
    let t1 = s.ok("snapshot", json!({}))["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.finish().success());
    let (code, patch, err) = cli(&fx, &["diff", &base, &t1]);
    assert_eq!(code, 0, "{err}");
    assert!(
        patch.contains("diff --git a/logo.bin b/logo.bin\nindex ")
            && patch.contains("\nBinary files a/logo.bin and b/logo.bin differ\n"),
        "{patch}"
    );
    assert!(err.contains("logo.bin is binary"), "{err}");
    let work = tempfile::tempdir().unwrap();
    let older = work.path().join("older");
    std::fs::create_dir(&older).unwrap();
    std::fs::write(older.join("text.txt"), "a\n").unwrap();
    std::fs::write(older.join("logo.bin"), [0u8, 1, 2, 3]).unwrap();
    let (ok, err) = git_apply(&older, &patch);
    assert!(
        !ok,
        "git apply cannot apply a binary file it has no data for"
    );
    assert!(err.contains("logo.bin"), "{err}");
    assert_eq!(
        std::fs::read(older.join("text.txt")).unwrap(),
        b"a\n",
        "nothing applied"
    );
}

fn notebook(cells: serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "cells": cells,
    }))
    .unwrap()
        + "\n"
}

#[test]
fn notebooks_by_cell_with_cells_and_as_raw_json_by_default() {
    let fx = Fixture::new();
    let older = notebook(json!([
        {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["x = 1\n", "print(x)"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]},
        {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": "plot()", "outputs": []},
    ]));
    let newer = notebook(json!([
        {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "source": ["x = 2\n", "print(x)"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["2\n"]},
                     {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]}, "metadata": {}}]},
        {"cell_type": "markdown", "metadata": {}, "source": "A new note."},
        {"cell_type": "code", "metadata": {}, "execution_count": 4, "source": "plot()", "outputs": []},
    ]));
    fx.write("analysis.ipynb", &older);
    fx.write("broken.ipynb", "{\"cells\": [\n");
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    fx.write("analysis.ipynb", &newer);
    fx.write("broken.ipynb", "{\"cells\": [\n  oops\n");
    let t1 = s.ok("snapshot", json!({}))["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.finish().success());

    let (code, out, err) = cli(&fx, &["diff", "--cells", &base, &t1]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("notebook_by_cell", out);
    assert!(
        out.contains("notebook analysis.ipynb (python): 2 of 4 cell(s) changed\n"),
        "{out}"
    );
    assert!(out.contains("-x = 1\n+x = 2\n"), "{out}");
    assert!(
        out.contains("  outputs: 2 outputs: stream, image/png (changed)\n"),
        "{out}"
    );
    // The malformed one: its plain text diff, no error.
    assert!(
        out.contains("diff --git a/broken.ipynb b/broken.ipynb\n"),
        "{out}"
    );
    assert!(out.contains("+  oops\n"), "{out}");

    // Without --cells: the raw JSON's patch, which git apply takes.
    let (code, raw, err) = cli(&fx, &["diff", &base, &t1]);
    assert_eq!(code, 0, "{err}");
    assert!(
        raw.contains("diff --git a/analysis.ipynb b/analysis.ipynb\n"),
        "{raw}"
    );
    assert!(raw.contains("\"image/png\""), "{raw}");
    if git_available() {
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join("older");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("analysis.ipynb"), &older).unwrap();
        std::fs::write(dir.join("broken.ipynb"), "{\"cells\": [\n").unwrap();
        let (ok, err) = git_apply(&dir, &raw);
        assert!(ok, "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.join("analysis.ipynb")).unwrap(),
            newer
        );
    } else {
        skip_or_fail("no git on PATH");
    }
}
