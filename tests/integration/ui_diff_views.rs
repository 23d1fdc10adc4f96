//! The page's diff views over plain HTTP (src/app/ui/diff_views.rs): the
//! comparison as a git patch (the same text `rewind diff` prints), one file
//! and one hunk of it, a notebook by cell (a malformed or hostile one is
//! `null`, never an error), bad requests refused; a restore plan's notes; the
//! favicon.

use serde_json::{json, Value};

use crate::common::{run_cli, Fixture};
use crate::ui::{baseline_id, turn, turn_ids, Ui};

/// A baseline and a turn: a.txt edited, b.txt added, gone.txt deleted,
/// c.bin binary, a notebook edited, a broken notebook.
fn project() -> Fixture {
    let fx = Fixture::new();
    fx.write("a.txt", "one\ntwo\n");
    fx.write("gone.txt", "bye\n");
    fx.write("c.bin", [0u8, 1]);
    fx.write("nb.ipynb", notebook("x = 1"));
    fx.write("broken.ipynb", "{\"cells\": [");
    fx.write("deep.ipynb", "[".repeat(200_000));
    turn(
        &fx,
        &format!(
            "printf 'one\\nTWO\\n' > a.txt; printf 'new\\n' > b.txt; rm gone.txt; printf '\\000\\002' > c.bin; \
             printf '%s' '{}' > nb.ipynb; printf '{{\"cells\": [1' > broken.ipynb",
            notebook("x = 2")
        ),
    );
    fx
}

fn notebook(source: &str) -> String {
    json!({"nbformat": 4, "nbformat_minor": 5,
           "metadata": {"language_info": {"name": "python"}},
           "cells": [{"cell_type": "code", "source": source, "metadata": {},
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}]}]})
    .to_string()
}

fn range(ui: &Ui) -> Value {
    let turn = turn_ids(ui).pop().unwrap();
    json!({"fromEntryId": baseline_id(ui), "toEntryId": turn})
}

#[test]
fn the_patch_is_what_rewind_diff_prints_with_each_file_and_hunk_on_its_own() {
    let fx = project();
    let ui = Ui::start(&fx, &[]);
    let r = range(&ui);
    let (status, all) = ui.post("/api/patch", &json!({"params": r}));
    assert_eq!(status, 200, "{all}");
    let (from, to) = (
        r["fromEntryId"].as_str().unwrap(),
        r["toEntryId"].as_str().unwrap(),
    );
    let store = fx.store.path().to_str().unwrap().to_string();
    let cwd = fx.project.path().to_str().unwrap().to_string();
    let (code, cli, err) = run_cli(
        &["diff", from, to, "--cwd", &cwd, "--store", &store],
        fx.project.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        all["patch"],
        json!(cli),
        "the page copies what the CLI prints"
    );
    let file = |path: &str| {
        all["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .cloned()
            .unwrap_or_else(|| panic!("{path} in {all}"))
    };
    assert_eq!(file("c.bin")["content"], "binary");
    assert_eq!(file("gone.txt")["status"], "D");
    assert!(file("gone.txt")["patch"]
        .as_str()
        .unwrap()
        .contains("--- a/gone.txt\n+++ /dev/null\n"));

    // One file: its hunk as a patch of its own and as the text it leaves.
    let (status, one) = ui.post("/api/patch", &json!({"params": r, "files": ["a.txt"]}));
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["files"].as_array().unwrap().len(), 1);
    let hunk = &one["files"][0]["hunks"][0];
    assert_eq!(
        hunk["patch"],
        "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    );
    assert_eq!(hunk["newText"], "one\nTWO\n");
    assert_eq!(one["patch"], one["files"][0]["patch"]);
}

#[test]
fn bad_patch_and_notebook_requests_are_refused() {
    let fx = project();
    let ui = Ui::start(&fx, &[]);
    let r = range(&ui);
    for (path, body) in [
        ("/api/patch", json!({"params": r, "files": ["../outside"]})),
        ("/api/patch", json!({"params": r, "files": "a.txt"})),
        ("/api/patch", json!({"params": 5})),
        ("/api/patch", json!({"params": r, "bogus": true})),
        ("/api/patch", json!({"params": {"fromEntryId": "nope"}})),
        (
            "/api/notebook",
            json!({"params": {"filePath": "/etc/passwd"}}),
        ),
        ("/api/notebook", json!({})),
    ] {
        let (status, v) = ui.post(path, &body);
        assert!((400..500).contains(&status), "{path} {body}: {status} {v}");
        assert!(v["error"]["message"].is_string(), "{v}");
    }
    // Without the secret, nothing is answered.
    let host = ui.host();
    let (status, _, _) = ui.raw(
        "POST",
        "/api/patch",
        &[("Host", &host), ("Content-Type", "application/json")],
        "{}",
    );
    assert_eq!(status, 401);
}

#[test]
fn a_notebook_by_cell_and_a_malformed_one_as_null() {
    let fx = project();
    let ui = Ui::start(&fx, &[]);
    let r = range(&ui);
    let ask = |path: &str| {
        let mut params = r.clone();
        params["filePath"] = json!(path);
        let (status, v) = ui.post("/api/notebook", &json!({ "params": params }));
        assert_eq!(status, 200, "{path}: {v}");
        v["notebook"].clone()
    };
    let nb = ask("nb.ipynb");
    assert_eq!(nb["language"], "python");
    assert_eq!(nb["cells"][0]["status"], "modified");
    assert_eq!(nb["cells"][0]["cellType"], "code");
    assert_eq!(
        nb["cells"][0]["sourceDiff"],
        "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    );
    assert_eq!(nb["cells"][0]["outputs"], "1 output: stream");
    assert_eq!(nb["cells"][0]["outputsChanged"], false);
    // Malformed at either end, nested past the parser's limit, or not a
    // notebook at all: null, and the page shows the text diff.
    for path in ["broken.ipynb", "deep.ipynb", "a.txt", "no-such.ipynb"] {
        assert_eq!(ask(path), Value::Null, "{path}");
    }
}

#[test]
fn a_restore_plan_carries_its_notes_and_the_favicon_is_served() {
    let fx = project();
    let ui = Ui::start(&fx, &[]);
    let base = baseline_id(&ui);
    let (status, plan) = ui.post(
        "/api/write",
        &json!({"method": "restore_files", "params": {"targetEntryId": base}}),
    );
    assert_eq!(status, 200, "{plan}");
    assert!(plan["notes"].is_array(), "{plan}");
    let host = ui.host();
    for path in ["/favicon.ico", "/assets/favicon.svg"] {
        let (status, headers, body) = ui.raw(
            "GET",
            path,
            &[("Host", &host), ("X-Rewind-Token", &ui.secret)],
            "",
        );
        assert_eq!(status, 200, "{path}");
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "content-type" && v == "image/svg+xml"),
            "{path}: {headers:?}"
        );
        assert!(body.starts_with("<svg "), "{path}");
    }
}
