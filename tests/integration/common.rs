//! Test harness: spawn the real `rewind serve` binary and speak the protocol
//! over its stdin/stdout, on a temporary project and store.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rewind")
}

/// A test (or a part of one) cannot run here: a tool, a permission or an
/// installation is missing. Under CI (`CI=true`, which `.ci/run` sets) that
/// is a failure, so nothing passes there unchecked; elsewhere it says why on
/// stderr and returns, and the caller leaves the check out.
pub fn skip_or_fail(why: &str) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true, and this check cannot run here: {why}");
    }
    eprintln!("skipped: {why}");
}

/// A project directory and a store directory that vanish with the test.
pub struct Fixture {
    pub project: tempfile::TempDir,
    pub store: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            project: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.project.path().canonicalize().unwrap()
    }

    pub fn store_dir(&self) -> PathBuf {
        self.store.path().to_path_buf()
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.project.path().join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.project.path().join(rel)).ok()
    }

    pub fn remove(&self, rel: &str) {
        let p = self.project.path().join(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }

    /// Spawn a sidecar on this fixture (`--cwd` and `--store` set).
    pub fn spawn(&self) -> Sidecar {
        Sidecar::spawn(&[
            "--cwd",
            self.project.path().to_str().unwrap(),
            "--store",
            self.store.path().to_str().unwrap(),
        ])
    }

    /// Session files in `<store>/sessions/`, sorted.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = match std::fs::read_dir(self.store.path().join("sessions")) {
            Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// Spawn and `initialize` with these params merged over cwd/storeDir.
    pub fn start(&self, extra: Value) -> (Sidecar, Value) {
        let s = self.spawn();
        self.initialize(s, extra)
    }

    /// As [`Fixture::start`], with a sidecar that `chmod 000` stops from
    /// reading ([`Sidecar::spawn_without_read_override`]).
    pub fn start_without_read_override(&self, extra: Value) -> (Sidecar, Value) {
        let s = Sidecar::spawn_without_read_override(&[
            "--cwd",
            self.project.path().to_str().unwrap(),
            "--store",
            self.store.path().to_str().unwrap(),
        ]);
        self.initialize(s, extra)
    }

    pub fn initialize(&self, mut s: Sidecar, extra: Value) -> (Sidecar, Value) {
        let mut params = json!({
            "cwd": self.project.path().to_str().unwrap(),
            "storeDir": self.store.path().to_str().unwrap(),
        });
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                p.insert(k.clone(), v.clone());
            }
        }
        let init = s.ok("initialize", params);
        (s, init)
    }
}

pub struct Sidecar {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Sidecar {
    pub fn spawn(args: &[&str]) -> Sidecar {
        Sidecar::spawn_env(args, &[])
    }

    /// Spawn `rewind serve <args>` with extra environment variables.
    pub fn spawn_env(args: &[&str], envs: &[(&str, &Path)]) -> Sidecar {
        Sidecar::spawn_command("serve", args, envs)
    }

    /// Spawn `rewind <command> <args>` (a line-based server on stdio: `serve`,
    /// `mcp`) with extra environment variables.
    pub fn spawn_command(command: &str, args: &[&str], envs: &[(&str, &Path)]) -> Sidecar {
        Sidecar::spawn_from(Command::new(bin()), command, args, envs)
    }

    /// Spawn `rewind serve <args>` without the capabilities that let root
    /// read any file (`setpriv` drops them from the bounding set), so a
    /// `chmod 000` file is unreadable to it also when the tests run as
    /// root, as in CI. As another user it is a plain spawn.
    pub fn spawn_without_read_override(args: &[&str]) -> Sidecar {
        // SAFETY: geteuid has no preconditions.
        let cmd = if unsafe { libc::geteuid() } == 0 {
            let mut c = Command::new("setpriv");
            c.args(["--bounding-set=-dac_override,-dac_read_search", bin()]);
            c
        } else {
            Command::new(bin())
        };
        Sidecar::spawn_from(cmd, "serve", args, &[])
    }

    pub fn spawn_from(
        mut cmd: Command,
        command: &str,
        args: &[&str],
        envs: &[(&str, &Path)],
    ) -> Sidecar {
        cmd.arg(command)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .env("RUST_LOG", "warn");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn rewind");
        let stdin = child.stdin.take();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            // Split on \n only, like pi's strict framing.
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let s = String::from_utf8_lossy(&buf)
                            .trim_end_matches('\n')
                            .to_string();
                        if tx.send(s).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Sidecar {
            child,
            stdin,
            lines: rx,
            next_id: 1,
        }
    }

    /// Write raw bytes (a line, or anything) to the sidecar's stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Next output line, parsed (panics after 60 s of silence).
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a line from the sidecar within 60 s");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"))
    }

    /// The raw next output line.
    pub fn recv_line(&mut self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a line from the sidecar within 60 s")
    }

    /// The next raw output line, or `None` once stdout is closed (the
    /// process exited). Panics after 60 s of silence.
    pub fn next_line(&mut self) -> Option<String> {
        match self.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(l) => Some(l),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("no line from the sidecar within 60 s")
            }
        }
    }

    /// Write raw bytes; false when stdin is closed or the process is gone.
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> bool {
        match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(bytes).and_then(|_| stdin.flush()).is_ok(),
            None => false,
        }
    }

    /// Close stdin (EOF) without waiting.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Wait for the process to exit (after `close_stdin` or `shutdown`).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }

    /// Every remaining output line until stdout closes.
    pub fn drain(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(l) = self.next_line() {
            out.push(l);
        }
        out
    }

    /// Send a JSON-RPC request and return the whole response (skipping
    /// notifications, which are returned by `notifications`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut req = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            req["params"] = params;
        }
        self.send(&req);
        loop {
            let v = self.recv();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
            assert!(v.get("method").is_some(), "unexpected line {v}");
        }
    }

    /// Call and expect success; returns `result`.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let v = self.call(method, params);
        assert!(v.get("error").is_none(), "{method} failed: {v}");
        v["result"].clone()
    }

    /// Call and expect an error; returns `error`.
    pub fn err(&mut self, method: &str, params: Value) -> Value {
        let v = self.call(method, params);
        assert!(v.get("error").is_some(), "{method} should fail: {v}");
        v["error"].clone()
    }

    /// Close stdin (EOF) and wait for the exit status.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }

    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `rewind <args>` to completion; (status, stdout, stderr).
pub fn run_cli(args: &[&str], cwd: &Path) -> (i32, String, String) {
    run_cli_env(args, cwd, &[])
}

/// `run_cli` with extra environment variables.
pub fn run_cli_env(args: &[&str], cwd: &Path, envs: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(cwd).env("RUST_LOG", "warn");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// ------------------------------------------------------------------
// Helpers for the rollback suites (rollback, conflicts, rollback_model,
// crash): what is on disk, and calls that keep their notifications.

/// One non-directory entry of a project as it is on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File { bytes: Vec<u8>, exec: bool },
    Link(String),
}

impl Node {
    pub fn file(bytes: impl AsRef<[u8]>) -> Node {
        Node::File {
            bytes: bytes.as_ref().to_vec(),
            exec: false,
        }
    }
}

/// Every file and symlink below `root` (relative `/`-separated paths),
/// without following symlinks; `.git` is left out.
pub fn disk_state(root: &Path) -> std::collections::BTreeMap<String, Node> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                if path != ".git" {
                    stack.push((e.path(), path));
                }
            } else if ft.is_symlink() {
                let t = std::fs::read_link(e.path()).unwrap();
                out.insert(path, Node::Link(t.to_string_lossy().into_owned()));
            } else {
                let m = std::fs::metadata(e.path()).unwrap();
                out.insert(
                    path,
                    Node::File {
                        bytes: std::fs::read(e.path()).unwrap(),
                        exec: m.permissions().mode() & 0o100 != 0,
                    },
                );
            }
        }
    }
    out
}

/// Every directory below `root` (not `root` itself, not `.git`).
pub fn disk_dirs(root: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().unwrap().is_dir() && path != ".git" {
                out.insert(path.clone());
                stack.push((e.path(), path));
            }
        }
    }
    out
}

/// Every line of a session file, parsed (panics on a line that is not JSON).
pub fn session_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

impl Sidecar {
    /// Send a JSON-RPC request; return the notifications written before its
    /// response, and the response.
    pub fn call_collect(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let mut req = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            req["params"] = params;
        }
        self.send(&req);
        let mut notes = Vec::new();
        loop {
            let v = self.recv();
            if v.get("id") == Some(&json!(id)) {
                return (notes, v);
            }
            notes.push(v);
        }
    }

    /// Send a pi-style command (`{"id":..,"type":..,...}`); return the lines
    /// written before its response, and the response.
    pub fn pi_collect(&mut self, command: Value) -> (Vec<Value>, Value) {
        let id = command["id"].clone();
        assert!(!id.is_null(), "pi_collect needs an id");
        self.send(&command);
        let mut notes = Vec::new();
        loop {
            let v = self.recv();
            if v.get("type") == Some(&json!("response")) && v.get("id") == Some(&id) {
                return (notes, v);
            }
            notes.push(v);
        }
    }

    /// Send a JSON-RPC request without waiting for its response.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut req = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            req["params"] = params;
        }
        self.send(&req);
        id
    }
}
