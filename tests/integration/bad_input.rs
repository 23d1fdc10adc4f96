//! Malformed input of every kind: answered with the right error, never a
//! crash, never a change to the session or the project, and stdout carries
//! nothing but JSON lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::{bin, Fixture, Sidecar};

/// Every file under `dir` (symlinks as their target), for before/after checks.
fn disk(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, t.as_os_str().as_encoded_bytes().to_vec());
            } else if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(base, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A running, initialized sidecar and its session file.
fn started(fx: &Fixture) -> (Sidecar, String) {
    fx.write("a.txt", "a");
    let (s, init) = fx.start(json!({}));
    (s, init["sessionFile"].as_str().unwrap().to_string())
}

/// The sidecar still answers a normal request.
fn alive(s: &mut Sidecar) {
    let r = s.ok("get_tree", json!({}));
    assert!(r["leafId"].is_string(), "{r}");
}

fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {v}"))
}

// ------------------------------------------------------------- framing

#[test]
fn an_over_long_line_is_answered_with_invalid_request_and_skipped() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let mut s = Sidecar::spawn(&[
        "--cwd",
        fx.project.path().to_str().unwrap(),
        "--store",
        fx.store.path().to_str().unwrap(),
        "--max-line-bytes",
        "1024",
    ]);
    s.ok("initialize", json!({}));
    // A valid request that is simply too long.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"get_tree","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    );
    s.send_raw(format!("{long}\n").as_bytes());
    let v = s.recv();
    assert_eq!(error_code(&v), -32600, "{v}");
    assert_eq!(
        v["id"],
        Value::Null,
        "the id of a skipped line is unknown: {v}"
    );
    // Much longer than any read buffer.
    let mut huge = vec![b'y'; 300_000];
    huge.push(b'\n');
    s.send_raw(&huge);
    let v = s.recv();
    assert_eq!(error_code(&v), -32600, "{v}");
    alive(&mut s);
    // A request just under the limit is served.
    let fill = 1024 - r#"{"jsonrpc":"2.0","id":5,"method":"get_tree","params":{}}"#.len();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"get_tree","params":{{}}}}{}"#,
        " ".repeat(fill)
    );
    assert_eq!(line.len(), 1024);
    s.send_raw(format!("{line}\n").as_bytes());
    let v = s.recv();
    assert_eq!(v["id"], 5, "{v}");
    assert!(v.get("result").is_some(), "{v}");
    // After a pi command, the over-long line is answered in pi's envelope.
    s.send(&json!({"id": "p1", "type": "stats"}));
    assert_eq!(s.recv()["success"], true);
    s.send_raw(format!("{long}\n").as_bytes());
    let v = s.recv();
    assert_eq!(v["type"], "response", "{v}");
    assert_eq!(v["command"], "parse", "{v}");
    assert_eq!(v["success"], false, "{v}");
    assert!(v.get("id").is_none(), "{v}");
    // An over-long final line without a newline is answered at EOF.
    s.send_raw(long.as_bytes());
    s.close_stdin();
    let rest = s.drain();
    assert_eq!(rest.len(), 1, "{rest:?}");
    let v: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(v["success"], false, "{v}");
    assert!(s.wait().success());
}

#[test]
fn garbage_bytes_invalid_utf8_and_nul_are_parse_errors() {
    let fx = Fixture::new();
    let (mut s, session) = started(&fx);
    let before = std::fs::read(&session).unwrap();
    let inputs: Vec<Vec<u8>> = vec![
        vec![0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0xff],
        b"\x00".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\"}\x00".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\",\"params\":{\"x\":\"\xff\xfe\"}}"
            .to_vec(),
        b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\"}".to_vec(),
        b"{\"jsonrpc\":\"2.0\",".to_vec(),
        b"}{".to_vec(),
    ];
    for input in inputs {
        let mut line = input.clone();
        line.push(b'\n');
        s.send_raw(&line);
        let v = s.recv();
        assert_eq!(
            error_code(&v),
            -32700,
            "{:?} → {v}",
            String::from_utf8_lossy(&input)
        );
        assert_eq!(v["id"], Value::Null, "{v}");
    }
    alive(&mut s);
    assert!(s.finish().success());
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn a_lone_cr_does_not_split_lines() {
    let fx = Fixture::new();
    let (mut s, _) = started(&fx);
    // Two requests separated by \r only: one line, which does not parse.
    s.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\"}\r{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"stats\"}\n",
    );
    let v = s.recv();
    assert_eq!(error_code(&v), -32700, "{v}");
    // A line that is only "\r" is blank: no reply; the next request is answered.
    s.send_raw(b"\r\n");
    let v = s.call("stats", json!({}));
    assert!(v.get("result").is_some(), "{v}");
    // \r inside JSON whitespace is fine.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\r\"id\":3,\"method\":\"stats\"}\n");
    let v = s.recv();
    assert_eq!(v["id"], 3, "{v}");
    assert!(v.get("result").is_some(), "{v}");
    assert!(s.finish().success());
}

#[test]
fn unicode_line_separators_are_ordinary_characters() {
    let fx = Fixture::new();
    let (mut s, _) = started(&fx);
    let r = s.ok(
        "append_entry",
        json!({"entryId": "u1", "text": "one\u{2028}two\u{2029}three"}),
    );
    assert_eq!(r["entryId"], "u1");
    let v = s.call("label", json!({"targetId": "u1", "label": "a\u{2028}b"}));
    assert!(v.get("result").is_some(), "{v}");
    let t = s.ok("get_tree", json!({}));
    let e = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "u1")
        .unwrap()
        .clone();
    assert_eq!(e["label"], "a\u{2028}b");
    assert!(s.finish().success());
}

#[test]
fn deeply_nested_json_is_refused_without_a_crash() {
    let fx = Fixture::new();
    let (mut s, session) = started(&fx);
    let before = std::fs::read(&session).unwrap();
    let depth = 100_000;
    let arrays = format!("{}{}\n", "[".repeat(depth), "]".repeat(depth));
    s.send_raw(arrays.as_bytes());
    let v = s.recv();
    assert!(v.get("error").is_some(), "{v}");
    let objects = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"append_entry","params":{{"data":{}1{}}}}}"#,
        r#"{"a":"#.repeat(depth),
        "}".repeat(depth)
    );
    s.send_raw(format!("{objects}\n").as_bytes());
    let v = s.recv();
    assert!(v.get("error").is_some(), "{v}");
    // Deep but within serde_json's limit in params: accepted or refused, never a crash.
    let nested = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"append_entry","params":{{"data":{}1{}}}}}"#,
        r#"{"a":"#.repeat(100),
        "}".repeat(100)
    );
    s.send_raw(format!("{nested}\n").as_bytes());
    let v = s.recv();
    assert_eq!(v["id"], 8, "{v}");
    alive(&mut s);
    assert!(s.finish().success());
    // Only the accepted append may have changed the file.
    let after = std::fs::read(&session).unwrap();
    assert!(after.starts_with(&before));
    assert!(after.len() - before.len() < 4096);
}

#[test]
fn empty_batch_and_mixed_batch() {
    let fx = Fixture::new();
    let (mut s, _) = started(&fx);
    s.send_raw(b"[]\n");
    let v = s.recv();
    assert_eq!(error_code(&v), -32600, "{v}");
    assert_eq!(v["id"], Value::Null);
    s.send_raw(
        br#"[{"jsonrpc":"2.0","id":1,"method":"stats"},{"jsonrpc":"2.0","id":2,"method":"label","params":{"targetId":5}},{"jsonrpc":"2.0","id":3,"method":"no_such"},{"jsonrpc":"2.0","method":"get_tree"},{"id":4},"x",{"jsonrpc":"2.0","id":5,"method":"get_file_diff","params":{"filePath":"../x"}}]
"#,
    );
    let v = s.recv();
    let arr = v
        .as_array()
        .unwrap_or_else(|| panic!("a batch reply is an array: {v}"));
    let by_id = |id: Value| arr.iter().find(|r| r["id"] == id).cloned();
    assert!(by_id(json!(1)).unwrap().get("result").is_some());
    assert_eq!(error_code(&by_id(json!(2)).unwrap()), -32602);
    assert_eq!(error_code(&by_id(json!(3)).unwrap()), -32601);
    assert_eq!(error_code(&by_id(json!(4)).unwrap()), -32600);
    assert_eq!(error_code(&by_id(json!(5)).unwrap()), -32602);
    let nulls: Vec<&Value> = arr.iter().filter(|r| r["id"].is_null()).collect();
    assert_eq!(nulls.len(), 1, "only the string element has no id: {v}");
    assert_eq!(error_code(nulls[0]), -32600);
    assert_eq!(arr.len(), 6, "the notification is not answered: {v}");
    alive(&mut s);
    assert!(s.finish().success());
}

// ------------------------------------------------------- wrong params

#[test]
fn wrong_param_types_for_each_method_are_invalid_params() {
    let fx = Fixture::new();
    let (mut s, session) = started(&fx);
    let before_session = std::fs::read(&session).unwrap();
    let before_disk = disk(fx.project.path());
    let cases: Vec<(&str, Value)> = vec![
        ("initialize", json!({"cwd": 5})),
        ("initialize", json!({"options": {"maxFileSize": "big"}})),
        ("initialize", json!({"options": {"extraIgnores": "*.log"}})),
        ("initialize", json!({"options": {"bogus": true}})),
        ("initialize", json!({"cwd": "relative/dir"})),
        ("initialize", json!({"sessionFile": "relative.jsonl"})),
        ("initialize", json!({"storeDir": "relative-store"})),
        ("initialize", json!({"cwd": "/definitely/not/a/dir"})),
        ("snapshot", json!({"kind": "sometimes"})),
        ("snapshot", json!({"paths": [1]})),
        ("snapshot", json!({"force": "yes"})),
        ("snapshot", json!({"turnIndex": -1})),
        ("snapshot", json!({"tool": {"input": {}}})),
        ("snapshot", json!({"label": ["x"]})),
        ("snapshot", json!([1, 2])),
        ("append_entry", json!({"entryId": 5})),
        ("append_entry", json!({"entryType": "weird"})),
        ("append_entry", json!({"text": {"a": 1}})),
        ("label", json!({"targetId": 5, "label": "x"})),
        ("label", json!({"targetId": "x", "label": 5})),
        ("stage_files", json!({"paths": "a.txt"})),
        ("stage_files", json!({"paths": [null]})),
        ("get_tree", json!({"x": 1})),
        ("list_checkpoints", json!({"scope": 1})),
        ("list_checkpoints", json!({"query": 1})),
        ("get_modified_files", json!({"fromEntryId": 1})),
        ("get_modified_files", json!({"toHash": false})),
        (
            "get_file_diff",
            json!({"filePath": "a.txt", "contextLines": -1}),
        ),
        ("get_file_diff", json!({"filePath": null})),
        (
            "get_file_diff",
            json!({"filePath": "a.txt", "fromEntryId": "@working", "fromHash": "@working"}),
        ),
        (
            "get_file_history",
            json!({"filePath": "a.txt", "scope": "x"}),
        ),
        ("get_status", json!({"x": 1})),
        ("stats", json!({"x": 1})),
    ];
    for (method, params) in cases {
        let v = s.call(method, params.clone());
        assert_eq!(error_code(&v), -32602, "{method} {params} → {v}");
    }
    alive(&mut s);
    assert!(s.finish().success());
    assert_eq!(std::fs::read(&session).unwrap(), before_session);
    assert_eq!(disk(fx.project.path()), before_disk);
}

#[test]
fn missing_required_params_are_invalid_params() {
    let fx = Fixture::new();
    let (mut s, session) = started(&fx);
    let before = std::fs::read(&session).unwrap();
    let cases: Vec<(&str, Value)> = vec![
        ("label", Value::Null),
        ("label", json!({})),
        ("label", json!({"label": "x"})),
        ("stage_files", Value::Null),
        ("stage_files", json!({})),
        ("get_file_diff", Value::Null),
        ("get_file_diff", json!({"toEntryId": "@working"})),
        ("get_file_history", Value::Null),
        ("get_file_history", json!({})),
        ("snapshot", json!({"tool": {}})),
    ];
    for (method, params) in cases {
        let v = s.call(method, params.clone());
        assert_eq!(error_code(&v), -32602, "{method} {params} → {v}");
    }
    alive(&mut s);
    assert!(s.finish().success());
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn the_same_errors_in_the_pi_envelope() {
    let fx = Fixture::new();
    let (mut s, _) = started(&fx);
    for (cmd, id, code) in [
        (json!({"id": "a", "type": "get_file_diff"}), "a", -32602),
        (
            json!({"id": "b", "type": "snapshot", "kind": 1}),
            "b",
            -32602,
        ),
        (
            json!({"id": "c", "type": "get_file_diff", "filePath": "/etc/passwd"}),
            "c",
            -32602,
        ),
        (json!({"id": "d", "type": "nope"}), "d", -32601),
        (
            json!({"id": "e", "type": "get_modified_files", "toEntryId": "abcdabcd"}),
            "e",
            1001,
        ),
    ] {
        s.send(&cmd);
        let v = s.recv();
        assert_eq!(v["id"], id, "{v}");
        assert_eq!(v["type"], "response", "{v}");
        assert_eq!(v["success"], false, "{v}");
        assert!(v["error"].is_string(), "{v}");
        assert!(v.get("data").is_none(), "{v}");
        assert_eq!(v["code"], code, "{cmd} → {v}");
    }
    assert!(s.finish().success());
}

// ----------------------------------------------------------- bad paths

/// Bad paths on `method` (built by `mk`) are refused with -32602, and
/// neither the session file nor the disk changes.
fn refuses_bad_paths(method: &str, mk: impl Fn(&str) -> Value) {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x"), "outside").unwrap();
    fx.write("inside/real.txt", "r");
    std::os::unix::fs::symlink(outside.path(), fx.project.path().join("out")).unwrap();
    std::os::unix::fs::symlink("inside", fx.project.path().join("alias")).unwrap();
    let (mut s, init) = fx.start(json!({}));
    let session = init["sessionFile"].as_str().unwrap().to_string();
    fx.write("inside/real.txt", "changed since the last snapshot");
    let before_session = std::fs::read(&session).unwrap();
    let before_disk = disk(fx.project.path());
    let before_outside = disk(outside.path());
    for bad in [
        "..",
        "../x",
        "a/../../x",
        "inside/../../x",
        "/etc/passwd",
        "/",
        "",
        "./a.txt",
        "a//b",
        "out/x",
        "out/sub/new.txt",
    ] {
        let v = s.call(method, mk(bad));
        assert_eq!(error_code(&v), -32602, "{method} {bad:?} → {v}");
    }
    assert_eq!(
        std::fs::read(&session).unwrap(),
        before_session,
        "{method}: nothing appended"
    );
    assert_eq!(
        disk(fx.project.path()),
        before_disk,
        "{method}: disk untouched"
    );
    assert_eq!(
        disk(outside.path()),
        before_outside,
        "{method}: outside untouched"
    );
    let v = s.call(method, mk("alias/real.txt"));
    if method == "stage_files" {
        // Staging below any symlink is refused, also one that stays inside: a tree cannot
        // hold a file below a link (issue 10, found 8).
        assert_eq!(error_code(&v), -32602, "{method} alias/real.txt → {v}");
    } else {
        // Elsewhere a symlinked parent that stays inside is fine.
        assert!(v.get("result").is_some(), "{method} alias/real.txt → {v}");
    }
    assert!(s.finish().success());
}

#[test]
fn bad_paths_in_snapshot_paths() {
    refuses_bad_paths("snapshot", |p| json!({"paths": ["inside/real.txt", p]}));
}

#[test]
fn bad_paths_in_stage_files() {
    refuses_bad_paths("stage_files", |p| json!({"paths": ["inside/real.txt", p]}));
}

#[test]
fn bad_paths_in_get_file_diff() {
    refuses_bad_paths(
        "get_file_diff",
        |p| json!({"filePath": p, "toEntryId": "@working"}),
    );
}

#[test]
fn bad_paths_in_get_file_history() {
    refuses_bad_paths("get_file_history", |p| json!({"filePath": p}));
}

#[test]
fn bad_paths_in_get_file_history_lexical() {
    // The lexical checks (the symlinked-parent case is the ignored test above).
    let fx = Fixture::new();
    let (mut s, session) = started(&fx);
    let before = std::fs::read(&session).unwrap();
    for bad in [
        "..",
        "../x",
        "a/../../x",
        "/etc/passwd",
        "",
        "./a.txt",
        "a//b",
    ] {
        let v = s.call("get_file_history", json!({"filePath": bad}));
        assert_eq!(error_code(&v), -32602, "{bad:?} → {v}");
    }
    assert!(s.finish().success());
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn a_staging_call_with_one_bad_path_stages_nothing() {
    let fx = Fixture::new();
    let (mut s, _) = started(&fx);
    // In an ignored directory: only staging would capture it.
    fx.write(".gitignore", "out/\n");
    fx.write("out/x.out", "x");
    let v = s.call("stage_files", json!({"paths": ["out/x.out", "../y"]}));
    assert_eq!(error_code(&v), -32602, "{v}");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(
        r["diff"]["added"],
        json!([".gitignore"]),
        "x.out was not staged: {r}"
    );
    assert!(s.finish().success());
}

// ------------------------------------------------------------------- ids

/// Hostile ids come back as written, digit for digit, in both envelopes and in errors.
/// Compared as text: parsing the reply would round exactly the numbers at stake.
#[test]
fn ids_are_echoed_exactly_as_received() {
    let fx = Fixture::new();
    let (mut s, _) = started(&fx);
    for id in [
        "100000000000000000000000000000",
        "-1",
        "1.5",
        "1e2",
        "-0",
        "\"str\"",
        "null",
    ] {
        s.send_raw(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"get_tree\"}}\n").as_bytes(),
        );
        let line = s.recv_line();
        assert!(
            line.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{")),
            "{line}"
        );
        s.send_raw(format!("{{\"id\":{id},\"type\":\"get_tree\"}}\n").as_bytes());
        let line = s.recv_line();
        assert!(
            line.starts_with(&format!(
                "{{\"id\":{id},\"type\":\"response\",\"command\":\"get_tree\",\"success\":true,"
            )),
            "{line}"
        );
        s.send_raw(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"get_file_diff\",\"params\":{{\"filePath\":\"../x\"}}}}\n")
                .as_bytes(),
        );
        let line = s.recv_line();
        assert!(
            line.starts_with(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-32602,"
            )),
            "{line}"
        );
    }
    alive(&mut s);
    assert!(s.finish().success());
}

// ----------------------------------------------------------- line endings

#[test]
fn crlf_line_endings_are_accepted() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let mut s = fx.spawn();
    let init = format!(
        "{}\r\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "cwd": fx.project.path().to_str().unwrap(),
            "storeDir": fx.store.path().to_str().unwrap(),
        }})
    );
    s.send_raw(init.as_bytes());
    let v = s.recv();
    assert_eq!(v["id"], 1);
    assert!(v.get("result").is_some(), "{v}");
    s.send_raw(b"{\"id\":\"p\",\"type\":\"stats\"}\r\n");
    let v = s.recv();
    assert_eq!(v["success"], true, "{v}");
    // The label keeps no stray \r.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"append_entry\",\"params\":{\"entryId\":\"crlf\"}}\r\n");
    let v = s.recv();
    assert_eq!(v["result"]["entryId"], "crlf", "{v}");
    assert!(s.finish().success());
}

#[test]
fn a_final_line_without_newline_is_processed_at_eof() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let (mut s, _) = fx.start(json!({}));
    fx.write("a.txt", "b");
    s.send_raw(br#"{"jsonrpc":"2.0","id":"last","method":"snapshot"}"#);
    s.close_stdin();
    let rest = s.drain();
    assert_eq!(rest.len(), 1, "{rest:?}");
    let v: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(v["id"], "last");
    assert_eq!(v["result"]["diff"]["modified"], json!(["a.txt"]), "{v}");
    assert!(s.wait().success());
}

// ------------------------------------------------------------ stdout purity

#[test]
fn stdout_carries_only_json_lines_while_stderr_logs() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let mut input = Vec::new();
    input.extend_from_slice(
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "cwd": fx.project.path().to_str().unwrap(),
                "storeDir": fx.store.path().to_str().unwrap(),
            }})
        )
        .as_bytes(),
    );
    for line in [
        &b"garbage"[..],
        b"\xff\xfe",
        b"[]",
        b"[1,2]",
        b"{}",
        b"{\"type\":\"nope\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"snapshot\",\"params\":{\"paths\":[\"../x\"]}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"snapshot\"}",
        b"{\"id\":\"x\",\"type\":\"get_file_diff\",\"filePath\":\"a.txt\",\"toEntryId\":\"@working\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"get_status\"}",
        b"not json",
    ] {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    let mut child = Command::new(bin())
        .args(["serve", "--cwd"])
        .arg(fx.project.path())
        .arg("--store")
        .arg(fx.store.path())
        .env("RUST_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&input).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(out.stdout.ends_with(b"\n"));
    let text = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let lines: Vec<&str> = text.split('\n').filter(|l| !l.is_empty()).collect();
    for l in &lines {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"));
        assert!(v.is_object() || v.is_array(), "{l}");
        // Compact: re-serializing gives the same length.
        assert_eq!(
            serde_json::to_string(&v).unwrap().len(),
            l.len(),
            "compact JSON: {l}"
        );
    }
    assert_eq!(lines.len(), 12, "one reply per line: {text}");
    assert!(!out.stderr.is_empty(), "trace logs go to stderr");
}
