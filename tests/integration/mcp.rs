//! `rewind mcp` over stdio, spoken to line by line: the two-step restore
//! (no write without a fresh token) and a session that other processes can
//! record into while the server runs. clients/mcp-test drives the same
//! server with the official Python SDK.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{self, Sidecar};
use serde_json::{json, Value};

pub(crate) struct Mcp {
    server: Sidecar,
    id: u64,
}

impl Mcp {
    pub(crate) fn start(project: &Path, home: &Path) -> Mcp {
        let cwd = project.to_str().expect("utf-8 temp path");
        let server = Sidecar::spawn_command("mcp", &["--cwd", cwd], &[("REWIND_HOME", home)]);
        let mut mcp = Mcp { server, id: 0 };
        let init = mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "rewind-tests", "version": "0"}
            }),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        mcp.server
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        self.server.send(&json!({
            "jsonrpc": "2.0", "id": self.id, "method": method, "params": params
        }));
        loop {
            let v = self.server.recv();
            if v["id"] == json!(self.id) {
                return v;
            }
        }
    }

    /// A tool's result (`result` of tools/call).
    pub(crate) fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(r.get("error").is_none(), "{tool}: {r}");
        r["result"].clone()
    }
}

#[test]
fn restore_writes_only_with_a_token_that_still_matches() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let mut mcp = Mcp::start(root, home.path());

    let tools = mcp.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 10, "{names:?}");

    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    let cp = mcp.call("checkpoint", json!({"label": "two"}));
    assert_eq!(
        cp["structuredContent"]["diff"]["modified"],
        json!(["a.txt"])
    );
    let list = mcp.call("list_checkpoints", json!({}));
    let baseline = list["structuredContent"]["initialEntryId"].clone();

    // The plan writes nothing, and names where it goes as the terminal
    // does: the checkpoint, with what a person called it.
    let label = mcp.call("label", json!({"entryId": baseline, "label": "the start"}));
    assert_eq!(label["isError"], false, "{label}");
    let plan = mcp.call("restore", json!({"target": baseline}));
    let s = &plan["structuredContent"];
    assert_eq!(s["executed"], false);
    let text = plan["content"][1]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "It goes to checkpoint {}",
            baseline.as_str().unwrap()
        )) && text.contains("[the start]"),
        "{text}"
    );
    assert_eq!(s["files"], json!([{"path": "a.txt", "action": "write"}]));
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );

    // A file changes between plan and confirm: the token is stale.
    std::fs::write(root.join("new.txt"), "meanwhile\n").unwrap();
    let stale = mcp.call(
        "restore",
        json!({"target": baseline, "confirmToken": s["confirmToken"]}),
    );
    assert_eq!(stale["isError"], true, "{stale}");
    assert_eq!(stale["structuredContent"]["staleToken"], true);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );
    assert!(root.join("new.txt").exists());

    // Another process records into the session meanwhile: the server holds
    // no lock between calls.
    let out = Command::new(common::bin())
        .args(["run", "--", "true"])
        .env("REWIND_HOME", home.path())
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // That changed the session: the token from before is stale again.
    let token = stale["structuredContent"]["confirmToken"].clone();
    let again = mcp.call(
        "restore",
        json!({"target": baseline, "confirmToken": token}),
    );
    assert_eq!(again["structuredContent"]["executed"], false, "{again}");
    let token = again["structuredContent"]["confirmToken"].clone();
    let done = mcp.call(
        "restore",
        json!({"target": baseline, "confirmToken": token}),
    );
    assert_eq!(done["structuredContent"]["executed"], true, "{done}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );

    // Bad arguments: a tool error, and the server still answers.
    let bad = mcp.call("diff", json!({"path": "../x"}));
    assert_eq!(bad["isError"], true, "{bad}");
    let unknown = mcp.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert!(unknown.get("error").is_some(), "{unknown}");
    let list = mcp.call("list_checkpoints", json!({"limit": 1}));
    assert_eq!(
        list["structuredContent"]["checkpoints"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    mcp.server.close_stdin();
    assert!(mcp.server.wait().success());
}

fn run_turn(root: &Path, home: &Path, script: &str) {
    let out = Command::new(common::bin())
        .args(["run", "--", "sh", "-c", script])
        .env("REWIND_HOME", home)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Confirm a two-step tool's plan with its token; the answer of the write.
pub(crate) fn confirm(mcp: &mut Mcp, tool: &str, mut args: Value, plan: &Value) -> Value {
    assert_eq!(plan["structuredContent"]["executed"], false, "{plan}");
    args["confirmToken"] = plan["structuredContent"]["confirmToken"].clone();
    let done = mcp.call(tool, args);
    assert_eq!(done["structuredContent"]["executed"], true, "{done}");
    done
}

/// `undo` without an entryId is `rewind undo`: after an agent's turn (here
/// `rewind run`), the state before that turn; after a rollback, that
/// rollback undone.
#[test]
fn undo_puts_back_the_state_before_the_last_turn() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let mut mcp = Mcp::start(root, home.path());
    run_turn(root, home.path(), "echo two > a.txt && echo new > b.txt");
    run_turn(root, home.path(), "echo three > a.txt");
    // A turn that changes nothing (as the one in which an agent asks for
    // the undo) is not the one undone.
    run_turn(root, home.path(), "true");

    let plan = mcp.call("undo", json!({}));
    let text = plan["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Undo of turn 2"), "{text}");
    assert_eq!(plan["structuredContent"]["undoesTurn"]["turn"], 2, "{plan}");
    assert_eq!(
        plan["structuredContent"]["files"],
        json!([{"path": "a.txt", "action": "write"}])
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "three\n"
    );
    confirm(&mut mcp, "undo", json!({}), &plan);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );
    assert!(root.join("b.txt").exists());

    // The last thing is a rollback now: undo takes it back.
    let plan = mcp.call("undo", json!({}));
    let text = plan["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("Undo of turn"), "{text}");
    confirm(&mut mcp, "undo", json!({}), &plan);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "three\n"
    );

    // The CLI's undo agrees on "before the last turn" for the same session.
    let out = Command::new(common::bin())
        .args(["undo", "--yes"])
        .env("REWIND_HOME", home.path())
        .current_dir(root)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("before turn"), "{said}");

    mcp.server.close_stdin();
    assert!(mcp.server.wait().success());
}

/// `restore` and `undo` take the CLI's `onConflict`: a file changed on disk
/// since rewind recorded it is kept ("skip", the default), written
/// ("overwrite") or stops the write ("abort").
#[test]
fn restore_takes_on_conflict() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.join("b.txt"), "one\n").unwrap();
    let mut mcp = Mcp::start(root, home.path());
    let list = mcp.call("list_checkpoints", json!({}));
    let baseline = list["structuredContent"]["initialEntryId"].clone();
    run_turn(root, home.path(), "echo two > a.txt && echo two > b.txt");
    // Changed behind rewind's back.
    std::fs::write(root.join("b.txt"), "mine\n").unwrap();

    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
    let restore = |mode: &str| json!({"target": baseline, "onConflict": mode});

    // abort: the plan shows the conflict; confirmed, nothing is written.
    let plan = mcp.call("restore", restore("abort"));
    assert_eq!(
        plan["structuredContent"]["plan"]["conflicts"],
        json!([{"path": "b.txt", "reason": "dirty"}])
    );
    let mut args = restore("abort");
    args["confirmToken"] = plan["structuredContent"]["confirmToken"].clone();
    // The model gets a tool error it can read (MCP: errors a tool meets go
    // in its result), naming the conflict; not a protocol error.
    let r = mcp.request("tools/call", json!({"name": "restore", "arguments": args}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let error = &r["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], 1002, "{r}");
    assert_eq!(error["data"]["conflicts"][0]["path"], "b.txt", "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("restore aborted") && text.contains("b.txt"),
        "{text}"
    );
    assert_eq!(
        (read("a.txt"), read("b.txt")),
        ("two\n".into(), "mine\n".into())
    );

    // skip (the default): b.txt is kept.
    let plan = mcp.call("restore", restore("skip"));
    assert_eq!(
        plan["structuredContent"]["files"],
        json!([{"path": "a.txt", "action": "write"}, {"path": "b.txt", "action": "keep"}])
    );
    confirm(&mut mcp, "restore", restore("skip"), &plan);
    assert_eq!(
        (read("a.txt"), read("b.txt")),
        ("one\n".into(), "mine\n".into())
    );
    let plan = mcp.call("undo", json!({}));
    confirm(&mut mcp, "undo", json!({}), &plan);
    assert_eq!(read("a.txt"), "two\n");

    // overwrite: b.txt too; undo brings "mine" back.
    let plan = mcp.call("restore", restore("overwrite"));
    assert_eq!(
        plan["structuredContent"]["files"],
        json!([{"path": "a.txt", "action": "write"}, {"path": "b.txt", "action": "write"}])
    );
    confirm(&mut mcp, "restore", restore("overwrite"), &plan);
    assert_eq!(
        (read("a.txt"), read("b.txt")),
        ("one\n".into(), "one\n".into())
    );
    let plan = mcp.call("undo", json!({"onConflict": "overwrite"}));
    confirm(&mut mcp, "undo", json!({"onConflict": "overwrite"}), &plan);
    assert_eq!(
        (read("a.txt"), read("b.txt")),
        ("two\n".into(), "mine\n".into())
    );

    // Not a mode: the schema refuses it.
    let bad = mcp.request(
        "tools/call",
        json!({"name": "restore", "arguments": restore("markers")}),
    );
    assert!(
        bad.get("error").is_some() || bad["result"]["isError"] == true,
        "{bad}"
    );
    mcp.server.close_stdin();
    assert!(mcp.server.wait().success());
}
