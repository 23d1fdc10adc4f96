//! `rewind ui` over plain HTTP (a tiny std client, so every header is ours
//! to set): the guard before routing, read-only, the two-step write with a
//! stale plan refused, a byte-exact restore and its undo, and a live
//! sidecar's session (reads work, a write says to go through the sidecar).
//! tests/ui-browser drives the same server in headless Chromium.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::common::{self, Fixture, Sidecar};
use serde_json::{json, Value};

pub(crate) struct Ui {
    child: Child,
    port: u16,
    pub(crate) secret: String,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Ui {
    pub(crate) fn start(fx: &Fixture, extra: &[&str]) -> Ui {
        let mut args = vec![
            "ui",
            "--cwd",
            fx.project.path().to_str().unwrap(),
            "--store",
            fx.store.path().to_str().unwrap(),
            "--no-open",
            "--port",
            "0",
        ];
        args.extend_from_slice(extra);
        let mut child = Command::new(common::bin())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim();
        let rest = url
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("URL: {url:?}"));
        let (port, secret) = rest.split_once("/?token=").unwrap();
        assert_eq!(secret.len(), 64, "{url}");
        Ui {
            child,
            port: port.parse().unwrap(),
            secret: secret.to_string(),
        }
    }

    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// One request; `headers` as given (Host included), the answer's status,
    /// headers (lower-case names) and body.
    pub(crate) fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        s.write_all(req.as_bytes()).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        let text = String::from_utf8_lossy(&out).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line: {text:?}"));
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        (status, headers, body.to_string())
    }

    /// A POST of the page: Host, secret header, JSON.
    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let host = self.host();
        let (status, _, text) = self.raw(
            "POST",
            path,
            &[
                ("Host", &host),
                ("X-Rewind-Token", &self.secret),
                ("Content-Type", "application/json"),
            ],
            &body.to_string(),
        );
        let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        (status, v)
    }

    pub(crate) fn rpc(&self, method: &str, params: Value) -> Value {
        let (status, v) = self.post(
            "/api/rpc",
            &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        );
        assert_eq!(status, 200, "{method}: {v}");
        v["result"].clone()
    }
}

/// `rewind run` one command in the fixture's project (one turn).
pub(crate) fn turn(fx: &Fixture, script: &str) {
    let out = Command::new(common::bin())
        .args([
            "run",
            "--cwd",
            fx.project.path().to_str().unwrap(),
            "--store",
            fx.store.path().to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A project with a baseline and two turns.
fn scripted() -> Fixture {
    let fx = Fixture::new();
    fx.write("a.txt", "one\n");
    fx.write("keep.txt", "kept\n");
    turn(
        &fx,
        "printf 'one\\ntwo\\n' > a.txt; printf 'new\\n' > b.txt",
    );
    turn(
        &fx,
        "printf 'three\\n' > a.txt; rm b.txt; printf '\\000\\001' > c.bin",
    );
    fx
}

pub(crate) fn baseline_id(ui: &Ui) -> String {
    let list = ui.rpc("list_checkpoints", json!({"scope": "all"}));
    list["initialEntryId"].as_str().unwrap().to_string()
}

pub(crate) fn turn_ids(ui: &Ui) -> Vec<String> {
    let list = ui.rpc("list_checkpoints", json!({"scope": "all"}));
    list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "turn")
        .map(|c| c["entryId"].as_str().unwrap().to_string())
        .collect()
}

/// A baseline and three turns, each changing its own line of notes.txt
/// (far enough apart to merge); the second also adds mid.txt.
fn three_turns() -> Fixture {
    let fx = Fixture::new();
    fx.write("notes.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    turn(&fx, "sed -i 's/^2$/two/' notes.txt");
    turn(
        &fx,
        "sed -i 's/^5$/five/' notes.txt; printf 'added by turn 2\\n' > mid.txt",
    );
    turn(&fx, "sed -i 's/^8$/eight/' notes.txt");
    fx
}

fn state(root: &Path) -> std::collections::BTreeMap<String, common::Node> {
    common::disk_state(root)
}

#[test]
fn every_request_needs_our_host_origin_and_secret_before_routing() {
    let fx = scripted();
    let ui = Ui::start(&fx, &[]);
    let host = ui.host();
    let with_token = format!("/?token={}", ui.secret);

    let (s, _, _) = ui.raw("GET", "/", &[("Host", &host)], "");
    assert_eq!(s, 401, "no secret");
    let (s, _, _) = ui.raw("GET", "/no/such/path", &[("Host", &host)], "");
    assert_eq!(s, 401, "no secret, even for a path that does not exist");
    let (s, _, _) = ui.raw(
        "GET",
        &format!("/no/such/path?token={}", ui.secret),
        &[("Host", &format!("evil.example:{}", ui.port))],
        "",
    );
    assert_eq!(s, 403, "a foreign Host is refused before routing");
    let (s, _, _) = ui.raw("GET", &with_token, &[], "");
    assert_eq!(s, 403, "no Host at all");
    let (s, _, _) = ui.raw(
        "GET",
        &with_token,
        &[("Host", &host), ("Origin", "http://evil.example")],
        "",
    );
    assert_eq!(s, 403, "a foreign Origin");
    let (s, _, _) = ui.raw(
        "GET",
        &format!("/?token={}x", ui.secret),
        &[("Host", &host)],
        "",
    );
    assert_eq!(s, 401, "a wrong secret");

    // The first load: the page, a cookie, a strict CSP.
    let (s, headers, body) = ui.raw("GET", &with_token, &[("Host", &host)], "");
    assert_eq!(s, 200);
    assert!(body.contains("<title>rewind</title>"));
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert!(header("content-security-policy").starts_with("default-src 'self'"));
    let cookie = header("set-cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let (s, _, _) = ui.raw(
        "GET",
        "/api/sessions",
        &[
            ("Host", &format!("localhost:{}", ui.port)),
            ("Cookie", &pair),
        ],
        "",
    );
    assert_eq!(s, 200, "the cookie stands for the secret");
    // A POST needs the secret in its header: the cookie alone is what a
    // cross-site form would send.
    let (s, _, _) = ui.raw(
        "POST",
        "/api/write",
        &[
            ("Host", &host),
            ("Cookie", &pair),
            ("Content-Type", "application/json"),
        ],
        r#"{"method":"undo","params":{}}"#,
    );
    assert_eq!(s, 403);
    let (s, _, _) = ui.raw(
        "POST",
        "/api/write",
        &[
            ("Host", &host),
            ("X-Rewind-Token", &ui.secret),
            ("Origin", &format!("http://127.0.0.1:{}", ui.port + 1)),
            ("Content-Type", "application/json"),
        ],
        r#"{"method":"undo","params":{}}"#,
    );
    assert_eq!(s, 403, "another local origin");
    // Writes never go through /api/rpc.
    let (s, v) = ui.post(
        "/api/rpc",
        &json!({"jsonrpc": "2.0", "id": 1, "method": "restore_files", "params": {}}),
    );
    assert_eq!(s, 403, "{v}");
}

#[test]
fn reads_answer_in_the_protocol_types() {
    let fx = scripted();
    let ui = Ui::start(&fx, &[]);
    let list = ui.rpc("list_checkpoints", json!({"scope": "all"}));
    let cps = list["checkpoints"].as_array().unwrap();
    assert!(cps.iter().any(|c| c["kind"] == "baseline"));
    assert_eq!(cps.iter().filter(|c| c["kind"] == "turn").count(), 2);
    let files = ui.rpc(
        "get_modified_files",
        json!({"fromEntryId": list["initialEntryId"], "toEntryId": "@working"}),
    );
    let paths: Vec<&str> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.txt", "c.bin"]);
    let diff = ui.rpc(
        "get_file_diff",
        json!({"filePath": "a.txt", "fromEntryId": list["initialEntryId"], "toEntryId": "@working"}),
    );
    assert_eq!(
        diff["unifiedDiff"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+three\n"
    );
    let bin = ui.rpc(
        "get_file_diff",
        json!({"filePath": "c.bin", "fromEntryId": list["initialEntryId"], "toEntryId": "@working"}),
    );
    assert_eq!(bin["isBinary"], true);
    let history = ui.rpc("get_file_history", json!({"filePath": "a.txt"}));
    assert_eq!(history["versions"].as_array().unwrap().len(), 3);
    // An unknown id is the protocol's error, with an HTTP status.
    let (s, v) = ui.post(
        "/api/rpc",
        &json!({"jsonrpc": "2.0", "id": 7, "method": "get_file_diff", "params": {"filePath": "a.txt", "fromEntryId": "nope"}}),
    );
    assert_eq!(s, 404, "{v}");
    assert_eq!(v["id"], 7);
    assert_eq!(v["error"]["code"], 1001);
    let (s, v) = ui.post(
        "/api/rpc",
        &json!({"jsonrpc": "2.0", "id": 8, "method": "no_such_method"}),
    );
    assert_eq!(s, 404, "{v}");
    assert_eq!(v["error"]["code"], -32601);
}

#[test]
fn read_only_refuses_every_write() {
    let fx = scripted();
    let ui = Ui::start(&fx, &["--read-only"]);
    let before = state(fx.project.path());
    let base = baseline_id(&ui);
    let (s, v) = ui.post(
        "/api/write",
        &json!({"method": "restore_files", "params": {"targetEntryId": base}}),
    );
    assert_eq!(s, 403, "{v}");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("read-only"));
    let (s, _) = ui.post("/api/write", &json!({"method": "undo", "params": {}}));
    assert_eq!(s, 403);
    let turn1 = turn_ids(&ui)[0].clone();
    let (s, v) = ui.post(
        "/api/write",
        &json!({"method": "revert", "params": {"entryId": turn1}}),
    );
    assert_eq!(s, 403, "{v}");
    assert_eq!(state(fx.project.path()), before);
    // Reads still work.
    ui.rpc("get_tree", Value::Null);
}

#[test]
fn restore_is_planned_then_confirmed_byte_exact_and_undone() {
    let fx = scripted();
    let ui = Ui::start(&fx, &[]);
    let base = baseline_id(&ui);
    let before = state(fx.project.path());
    let op = json!({"method": "restore_files", "params": {"targetEntryId": base}});

    // The plan writes nothing.
    let (s, plan) = ui.post("/api/write", &op);
    assert_eq!(s, 200, "{plan}");
    assert_eq!(plan["executed"], false);
    assert_eq!(
        plan["files"],
        json!([{"path": "a.txt", "action": "write"}, {"path": "c.bin", "action": "delete"}])
    );
    assert_eq!(state(fx.project.path()), before);

    // A token for a state that changed since is refused, and nothing is
    // written.
    fx.write("keep.txt", "changed after the preview\n");
    let mut stale = op.clone();
    stale["token"] = plan["token"].clone();
    let (s, again) = ui.post("/api/write", &stale);
    assert_eq!(s, 409, "{again}");
    assert_eq!(again["stale"], true);
    assert_ne!(again["token"], plan["token"]);
    assert_eq!(fx.read("a.txt").unwrap(), b"three\n");
    // A made-up token too.
    let mut wrong = op.clone();
    wrong["token"] = json!("0".repeat(32));
    let (s, _) = ui.post("/api/write", &wrong);
    assert_eq!(s, 409);
    fx.write("keep.txt", "kept\n");

    // Plan again, confirm: the baseline, byte for byte.
    let (_, plan) = ui.post("/api/write", &op);
    let mut confirm = op.clone();
    confirm["token"] = plan["token"].clone();
    let before = state(fx.project.path());
    let (s, done) = ui.post("/api/write", &confirm);
    assert_eq!(s, 200, "{done}");
    assert_eq!(done["executed"], true);
    assert!(done["result"]["unrevertEntryId"].is_string(), "{done}");
    let mut baseline = std::collections::BTreeMap::new();
    baseline.insert("a.txt".to_string(), common::Node::file("one\n"));
    baseline.insert("keep.txt".to_string(), common::Node::file("kept\n"));
    assert_eq!(state(fx.project.path()), baseline);

    // Undo, planned and confirmed, puts back the state before the restore.
    let undo = json!({"method": "undo", "params": {}});
    let (s, plan) = ui.post("/api/write", &undo);
    assert_eq!(s, 200, "{plan}");
    assert_eq!(plan["executed"], false);
    let mut confirm = undo.clone();
    confirm["token"] = plan["token"].clone();
    let (s, done) = ui.post("/api/write", &confirm);
    assert_eq!(s, 200, "{done}");
    assert_eq!(state(fx.project.path()), before);
    assert_eq!(fx.read("c.bin").unwrap(), b"\x00\x01");
}

#[test]
fn beside_a_live_sidecar_reads_work_and_writes_say_to_use_it() {
    let fx = scripted();
    // The sidecar resumes nothing: it starts the newest session and holds
    // its lock.
    let mut sidecar = Sidecar::spawn(&[
        "--cwd",
        fx.project.path().to_str().unwrap(),
        "--store",
        fx.store.path().to_str().unwrap(),
    ]);
    sidecar.ok("initialize", json!({}));
    let ui = Ui::start(&fx, &[]);
    ui.rpc("list_checkpoints", json!({}));
    let (s, v) = ui.post(
        "/api/write",
        &json!({"method": "restore_files", "params": {}}),
    );
    assert_eq!(s, 423, "{v}");
    assert_eq!(v["error"]["code"], 1004);
    assert!(
        v["error"]["message"].as_str().unwrap().contains("sidecar"),
        "{v}"
    );
    drop(sidecar);
}

#[test]
fn blame_names_each_lines_turn_through_rpc() {
    let fx = three_turns();
    let ui = Ui::start(&fx, &[]);
    let turns = turn_ids(&ui);
    let blame = ui.rpc("get_file_blame", json!({"path": "notes.txt"}));
    let lines = blame["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 9, "{blame}");
    let of = |n: usize| &lines[n - 1];
    assert_eq!(of(2)["text"], "two");
    assert_eq!(of(2)["entryId"], turns[0].as_str());
    assert_eq!(of(5)["entryId"], turns[1].as_str());
    assert_eq!(of(8)["entryId"], turns[2].as_str());
    assert_eq!(of(1)["kind"], "baseline");
    assert!(of(2)["turnIndex"].as_u64() < of(5)["turnIndex"].as_u64());
    // At an earlier checkpoint, the later turns' lines are not there yet.
    let at = ui.rpc(
        "get_file_blame",
        json!({"path": "notes.txt", "at": turns[0]}),
    );
    assert_eq!(at["lines"][4]["text"], "5");
}

#[test]
fn revert_is_planned_then_confirmed_byte_exact_and_undone() {
    let fx = three_turns();
    let ui = Ui::start(&fx, &[]);
    let turns = turn_ids(&ui);
    let before = state(fx.project.path());
    let op = json!({"method": "revert", "params": {"entryId": turns[1], "onConflict": "abort"}});

    // The plan writes nothing and says what each file gets.
    let (s, plan) = ui.post("/api/write", &op);
    assert_eq!(s, 200, "{plan}");
    assert_eq!(plan["executed"], false);
    assert_eq!(
        plan["files"],
        json!([
            {"path": "mid.txt", "action": "delete", "status": "clean"},
            {"path": "notes.txt", "action": "write", "status": "clean"},
        ])
    );
    let notes = plan["plan"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "notes.txt")
        .unwrap()
        .clone();
    assert!(
        notes["diff"].as_str().unwrap().contains("-five\n+5\n"),
        "{notes}"
    );
    assert_eq!(state(fx.project.path()), before);

    // Stale: a file changed since the plan; other arguments (onConflict)
    // are another plan; a made-up token. Nothing is written.
    fx.write("other.txt", "written after the preview\n");
    let mut stale = op.clone();
    stale["token"] = plan["token"].clone();
    let (s, again) = ui.post("/api/write", &stale);
    assert_eq!(s, 409, "{again}");
    assert_eq!(again["stale"], true);
    std::fs::remove_file(fx.project.path().join("other.txt")).unwrap();
    let mut other = stale.clone();
    other["params"]["onConflict"] = json!("markers");
    let (s, _) = ui.post("/api/write", &other);
    assert_eq!(s, 409, "the token covers onConflict");
    let mut wrong = op.clone();
    wrong["token"] = json!("0".repeat(32));
    let (s, _) = ui.post("/api/write", &wrong);
    assert_eq!(s, 409);
    assert_eq!(state(fx.project.path()), before);

    // Confirm: turn 2's change is gone, turns 1 and 3 kept, byte for byte.
    let (s, done) = ui.post("/api/write", &stale);
    assert_eq!(s, 200, "{done}");
    assert_eq!(done["executed"], true);
    assert!(done["result"]["unrevertEntryId"].is_string(), "{done}");
    let mut expected = std::collections::BTreeMap::new();
    expected.insert(
        "notes.txt".to_string(),
        common::Node::file("1\ntwo\n3\n4\n5\n6\n7\neight\n9\n"),
    );
    assert_eq!(state(fx.project.path()), expected);

    // Undo, planned and confirmed, puts turn 2's change back.
    let undo = json!({"method": "undo", "params": {}});
    let (s, plan) = ui.post("/api/write", &undo);
    assert_eq!(s, 200, "{plan}");
    let mut confirm = undo.clone();
    confirm["token"] = plan["token"].clone();
    let (s, done) = ui.post("/api/write", &confirm);
    assert_eq!(s, 200, "{done}");
    assert_eq!(state(fx.project.path()), before);
}

#[test]
fn a_conflicting_revert_is_refused_with_abort_and_skip_keeps_the_file() {
    let fx = three_turns();
    let ui = Ui::start(&fx, &[]);
    let turns = turn_ids(&ui);
    // An edit of turn 2's line after it.
    fx.write("notes.txt", "1\ntwo\n3\n4\nFIVE!\n6\n7\neight\n9\n");
    let before = state(fx.project.path());
    let op = json!({"method": "revert", "params": {"entryId": turns[1]}});
    let (s, plan) = ui.post("/api/write", &op);
    assert_eq!(s, 200, "{plan}");
    let notes = plan["plan"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "notes.txt")
        .unwrap()
        .clone();
    assert_eq!(notes["status"], "conflict", "{notes}");
    assert_eq!(notes["conflicts"][0]["current"], "FIVE!\n", "{notes}");
    assert_eq!(notes["conflicts"][0]["before"], "5\n", "{notes}");
    let mut confirm = op.clone();
    confirm["token"] = plan["token"].clone();
    let (s, v) = ui.post("/api/write", &confirm);
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["code"], 1002, "{v}");
    assert_eq!(state(fx.project.path()), before);

    let op = json!({"method": "revert", "params": {"entryId": turns[1], "onConflict": "skip"}});
    let (_, plan) = ui.post("/api/write", &op);
    let mut confirm = op.clone();
    confirm["token"] = plan["token"].clone();
    let (s, done) = ui.post("/api/write", &confirm);
    assert_eq!(s, 200, "{done}");
    assert!(!fx.project.path().join("mid.txt").exists());
    assert_eq!(
        fx.read("notes.txt").unwrap(),
        b"1\ntwo\n3\n4\nFIVE!\n6\n7\neight\n9\n"
    );
}

/// `rewind ui` hands the browser opener a private file, never the secret on
/// its command line (which every user can read); an opener that fails is
/// said in one line with what to do.
#[test]
fn the_opener_never_sees_the_secret_and_a_missing_browser_is_said() {
    use std::os::unix::fs::PermissionsExt;
    let fx = scripted();
    let bin_dir = tempfile::tempdir().unwrap();
    let args_log = bin_dir.path().join("args");
    // A stand-in for xdg-open that notes what it was given, then fails as
    // it does on a machine without a browser.
    let opener = bin_dir.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\ncat \"$1\" >> '{}'\nstat -c %a \"$1\" >> '{}'\nexit 3\n",
            args_log.display(),
            args_log.display(),
            args_log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    let mut child = Command::new(common::bin())
        .args([
            "ui",
            "--cwd",
            fx.project.path().to_str().unwrap(),
            "--store",
            fx.store.path().to_str().unwrap(),
            "--port",
            "0",
        ])
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let secret = url.trim().rsplit_once("token=").unwrap().1.to_owned();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !said.contains("no browser could be opened") && std::time::Instant::now() < deadline {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        said.contains("--no-open") && said.contains("ssh -L"),
        "{said}"
    );
    let logged = std::fs::read_to_string(&args_log).unwrap();
    let mut lines = logged.lines();
    let arg = lines.next().unwrap();
    assert!(!arg.contains(&secret), "the opener's argument: {arg}");
    assert!(
        logged.contains(&secret),
        "the page it opens leads to the URL: {logged}"
    );
    assert_eq!(logged.lines().last(), Some("600"), "{logged}");
}

/// The restore dialog's "conversation only" writes no file, "files and
/// conversation" the files; the conversation part answers with the command
/// that continues it, or (here, turns `rewind run` recorded, with no agent
/// conversation) why there is none. Only a restore to a checkpoint takes it.
#[test]
fn a_restore_takes_the_conversation_too_or_alone() {
    let fx = three_turns();
    let ui = Ui::start(&fx, &[]);
    let base = baseline_id(&ui);
    let before = state(fx.project.path());
    let confirmed = |conversation: &str| {
        let op = json!({"method": "restore_files", "params": {"targetEntryId": base},
                        "conversation": conversation});
        let (s, plan) = ui.post("/api/write", &op);
        assert_eq!(s, 200, "{plan}");
        assert_eq!(plan["executed"], false);
        let mut confirm = op.clone();
        confirm["token"] = plan["token"].clone();
        let (s, done) = ui.post("/api/write", &confirm);
        assert_eq!(s, 200, "{done}");
        assert_eq!(done["executed"], true, "{done}");
        (plan, done)
    };
    let (plan, done) = confirmed("only");
    assert_eq!(plan["conversationOnly"], true, "{plan}");
    assert_eq!(plan["files"], json!([]));
    assert!(
        done["conversation"]["refused"]
            .as_str()
            .is_some_and(|r| r.contains("without the conversation's position")),
        "{done}"
    );
    assert_eq!(state(fx.project.path()), before, "no file written");
    let (_, done) = confirmed("both");
    assert!(done["conversation"]["refused"].is_string(), "{done}");
    assert_ne!(state(fx.project.path()), before, "the files restored");
    let (s, bad) = ui.post(
        "/api/write",
        &json!({"method": "undo", "params": {}, "conversation": "both"}),
    );
    assert_eq!(s, 400, "{bad}");
}
