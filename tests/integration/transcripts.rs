//! Transcript tests: scripted sessions against the real binary, snapshotted
//! whole with insta.
//!
//! A transcript (`tests/transcripts/<name>.txt`) is a sequence of lines:
//!
//! - `# comment` — copied into the snapshot;
//! - `> write PATH CONTENT` (CONTENT is a JSON string literal), `> write-hex
//!   PATH HEX`, `> rm PATH`, `> mkdir PATH`, `> chmod +x PATH`, `> chmod -x
//!   PATH`, `> symlink TARGET PATH` — file operations on the project;
//! - `> cat PATH` — the file's content (or `<absent>`) into the snapshot;
//! - anything else is a request line sent as-is (JSON-RPC, a pi command, or
//!   deliberately malformed). `${CWD}` and `${STORE}` are the fixture's
//!   paths; `${N.path.to.field}` is a field of the response to the earlier
//!   request whose id is N (JSON-RPC number or pi string).
//!
//! After each request the runner sends a sync request in the envelope of the
//! most recent well-formed request (an unknown method, so nothing changes)
//! and collects every output line up to its reply: so notifications and
//! unanswered lines are seen without sleeping. The sync reply itself is not
//! shown. At the end stdin is closed and the exit status recorded.
//!
//! Everything machine-dependent is redacted: entry and session ids become
//! `<idN>` by first appearance, 32-hex hashes `<hashN>`, timestamps `<time>`,
//! durations `<ms>`, hashing counts `<n>` (they depend on the stat cache's
//! racy window, i.e. on timing), the fixture's paths `<CWD>` / `<STORE>`.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Fixture, Sidecar};

const SYNC_ID: &str = "__transcript_sync__";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Envelope {
    JsonRpc,
    Pi,
}

/// Which envelope a request line sets as "most recent well-formed" (as the
/// protocol defines it), or None when it does not.
fn envelope_of(line: &str) -> Option<Envelope> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Array(items)) if !items.is_empty() => Some(Envelope::JsonRpc),
        Ok(Value::Object(o)) if o.contains_key("jsonrpc") => Some(Envelope::JsonRpc),
        Ok(Value::Object(o)) if o.get("type").is_some_and(Value::is_string) => Some(Envelope::Pi),
        _ => None,
    }
}

fn sync_line(env: Envelope) -> String {
    match env {
        Envelope::JsonRpc => {
            format!(r#"{{"jsonrpc":"2.0","id":"{SYNC_ID}","method":"{SYNC_ID}"}}"#)
        }
        Envelope::Pi => format!(r#"{{"id":"{SYNC_ID}","type":"{SYNC_ID}"}}"#),
    }
}

fn is_sync_reply(v: &Value) -> bool {
    v.get("id").and_then(Value::as_str) == Some(SYNC_ID)
}

/// The id a request expects a reply under, as the key `${N...}` uses.
fn id_key(v: &Value) -> Option<String> {
    match v.get("id")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn expected_reply_id(line: &str) -> Option<String> {
    match serde_json::from_str::<Value>(line) {
        Ok(v @ Value::Object(_)) => id_key(&v),
        _ => None,
    }
}

/// Fill `${CWD}`, `${STORE}` and `${N.path}` references.
fn substitute(line: &str, fx: &Fixture, results: &HashMap<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .unwrap_or_else(|| panic!("unterminated ${{ in {line}"))
            + start;
        let reference = &rest[start + 2..end];
        let value = match reference {
            "CWD" => fx.project.path().to_str().unwrap().to_string(),
            "STORE" => fx.store.path().to_str().unwrap().to_string(),
            _ => {
                let mut parts = reference.split('.');
                let id = parts.next().unwrap();
                let mut v = results
                    .get(id)
                    .unwrap_or_else(|| panic!("no response with id {id} before {line}"));
                for p in parts {
                    v = match v {
                        Value::Array(a) => &a[p.parse::<usize>().unwrap()],
                        _ => v
                            .get(p)
                            .unwrap_or_else(|| panic!("${{{reference}}}: no field {p} in {v}")),
                    };
                }
                match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }
            }
        };
        out.push_str(&value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn file_op(fx: &Fixture, op: &str) {
    let root = fx.project.path();
    let (cmd, args) = op.split_once(' ').unwrap_or((op, ""));
    let p = |rel: &str| -> PathBuf { root.join(rel) };
    match cmd {
        "write" => {
            let (path, content) = args.split_once(' ').expect("write PATH CONTENT");
            let content: String = serde_json::from_str(content).expect("CONTENT is a JSON string");
            fx.write(path, content);
        }
        "write-hex" => {
            let (path, hex) = args.split_once(' ').expect("write-hex PATH HEX");
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            fx.write(path, bytes);
        }
        "rm" => fx.remove(args),
        "mkdir" => std::fs::create_dir_all(p(args)).unwrap(),
        "chmod" => {
            let (mode, path) = args.split_once(' ').expect("chmod +x|-x PATH");
            let mut perm = std::fs::metadata(p(path)).unwrap().permissions();
            match mode {
                "+x" => perm.set_mode(perm.mode() | 0o111),
                "-x" => perm.set_mode(perm.mode() & !0o111),
                _ => panic!("chmod {mode}?"),
            }
            std::fs::set_permissions(p(path), perm).unwrap();
        }
        "symlink" => {
            let (target, path) = args.split_once(' ').expect("symlink TARGET PATH");
            let link = p(path);
            if let Some(d) = link.parent() {
                std::fs::create_dir_all(d).unwrap();
            }
            std::os::unix::fs::symlink(target, link).unwrap();
        }
        _ => panic!("unknown file operation: > {op}"),
    }
}

/// Replaces machine-dependent values with stable placeholders.
struct Redactor {
    paths: Vec<(String, &'static str)>,
    ids: HashMap<String, usize>,
    hashes: HashMap<String, usize>,
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && parts.iter().all(|p| is_hex(p))
}

/// `2026-11-21T19:12:00.123Z` (length 24).
fn is_iso(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

impl Redactor {
    fn new(fx: &Fixture) -> Redactor {
        let mut paths = vec![
            (fx.root().to_str().unwrap().to_string(), "<CWD>"),
            (fx.project.path().to_str().unwrap().to_string(), "<CWD>"),
            (
                fx.store
                    .path()
                    .canonicalize()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string(),
                "<STORE>",
            ),
            (fx.store.path().to_str().unwrap().to_string(), "<STORE>"),
        ];
        // Longest first, so a path that contains another is replaced whole.
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        paths.dedup();
        Redactor {
            paths,
            ids: HashMap::new(),
            hashes: HashMap::new(),
        }
    }

    fn id(&mut self, s: &str) -> String {
        let n = self.ids.len() + 1;
        format!("<id{}>", self.ids.entry(s.to_string()).or_insert(n))
    }

    fn hash(&mut self, s: &str) -> String {
        let n = self.hashes.len() + 1;
        format!("<hash{}>", self.hashes.entry(s.to_string()).or_insert(n))
    }

    fn token(&mut self, t: &str) -> String {
        if t.len() == 8 && is_hex(t) || is_uuid(t) {
            self.id(t)
        } else if t.len() == 32 && is_hex(t) {
            self.hash(t)
        } else if is_iso(t) {
            "<time>".to_string()
        } else {
            t.to_string()
        }
    }

    fn string(&mut self, s: &str) -> String {
        let mut s = s.to_string();
        for (p, name) in &self.paths {
            s = s.replace(p.as_str(), name);
        }
        // Session files named <timestamp>_<sessionId>.jsonl by the sidecar.
        if let Some(i) = s.find("<STORE>/sessions/") {
            let start = i + "<STORE>/sessions/".len();
            let end = s[start..]
                .find(".jsonl")
                .map(|e| start + e + ".jsonl".len())
                .unwrap_or(s.len());
            let name = &s[start..end];
            if name.contains('_') && name.ends_with(".jsonl") {
                s.replace_range(start..end, "<session-file>");
            }
        }
        // Token-wise: runs of [0-9A-Za-z:.-] separated by anything else.
        let mut out = String::new();
        let mut tok = String::new();
        for c in s.chars() {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '.') {
                tok.push(c);
            } else {
                out.push_str(&self.token_in_text(&tok));
                tok.clear();
                out.push(c);
            }
        }
        out.push_str(&self.token_in_text(&tok));
        out
    }

    /// A token in free text may carry sentence punctuation around an id.
    fn token_in_text(&mut self, tok: &str) -> String {
        let whole = self.token(tok);
        if whole != tok {
            return whole;
        }
        let punct = ['.', ':', '-'];
        let core = tok.trim_start_matches(punct);
        let lead = &tok[..tok.len() - core.len()];
        let core_end = core.trim_end_matches(punct);
        let tail = &core[core_end.len()..];
        if core_end.is_empty() || core_end.len() == tok.len() {
            return tok.to_string();
        }
        format!("{lead}{}{tail}", self.token(core_end))
    }

    fn value(&mut self, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.string(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::Object(o) => {
                for (k, x) in o.iter_mut() {
                    match k.as_str() {
                        "durationMs" => *x = Value::String("<ms>".into()),
                        // How much the stat cache spared depends on timing
                        // (the racy window); session.rs tests it exactly.
                        "filesHashed" | "bytesHashed" => *x = Value::String("<n>".into()),
                        "serverVersion" => *x = Value::String("<version>".into()),
                        "storeBytes" => *x = Value::String("<bytes>".into()),
                        _ => self.value(x),
                    }
                }
            }
            _ => {}
        }
    }
}

fn run(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let script = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
    let fx = Fixture::new();
    let mut sidecar: Sidecar = fx.spawn();
    let mut red = Redactor::new(&fx);
    let mut results: HashMap<String, Value> = HashMap::new();
    let mut envelope = Envelope::JsonRpc;
    let mut out = String::new();
    let mut alive = true;

    for raw in script.lines() {
        if raw.trim().is_empty() {
            continue;
        }
        if raw.starts_with('#') {
            out.push_str(raw);
            out.push('\n');
            continue;
        }
        if let Some(path) = raw.strip_prefix("> cat ") {
            out.push_str(raw);
            out.push('\n');
            match fx.read(path) {
                Some(bytes) => {
                    for line in String::from_utf8_lossy(&bytes).lines() {
                        out.push_str(&format!("  | {}\n", red.string(line)));
                    }
                }
                None => out.push_str("  <absent>\n"),
            }
            continue;
        }
        if let Some(op) = raw.strip_prefix("> ") {
            file_op(&fx, op);
            out.push_str(raw);
            out.push('\n');
            continue;
        }
        assert!(alive, "request after the sidecar exited: {raw}");
        let line = substitute(raw, &fx, &results);
        out.push_str("→ ");
        out.push_str(raw);
        out.push('\n');
        if let Some(e) = envelope_of(&line) {
            envelope = e;
        }
        let want = expected_reply_id(&line);
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        assert!(sidecar.try_send_raw(&bytes), "stdin closed before {raw}");
        let mut synced = !sidecar.try_send_raw(format!("{}\n", sync_line(envelope)).as_bytes());
        let mut answered = want.is_none();
        while !(synced && answered) {
            let Some(text) = sidecar.next_line() else {
                alive = false;
                break;
            };
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {text:?}"));
            if is_sync_reply(&v) {
                synced = true;
                continue;
            }
            let items: Vec<&Value> = match &v {
                Value::Array(a) => a.iter().collect(),
                one => vec![one],
            };
            for item in items {
                if let Some(id) = id_key(item) {
                    if want.as_deref() == Some(id.as_str()) {
                        answered = true;
                    }
                    results.insert(id, item.clone());
                }
            }
            let mut shown = v.clone();
            red.value(&mut shown);
            out.push_str("← ");
            out.push_str(&serde_json::to_string_pretty(&shown).unwrap());
            out.push('\n');
        }
    }
    sidecar.close_stdin();
    for text in sidecar.drain() {
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {text:?}"));
        if is_sync_reply(&v) {
            continue;
        }
        let mut shown = v;
        red.value(&mut shown);
        out.push_str("← (after EOF) ");
        out.push_str(&serde_json::to_string_pretty(&shown).unwrap());
        out.push('\n');
    }
    let status = sidecar.wait();
    out.push_str(&format!("[exit {}]\n", status.code().unwrap_or(-1)));
    insta::assert_snapshot!(name, out);
}

macro_rules! transcripts {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run(stringify!($name)); })*
        const ALL: &[&str] = &[$(stringify!($name)),*];
    };
}

transcripts!(
    basic,
    pi_envelope,
    host_entries,
    paths_fast_path,
    bad_input,
    file_kinds,
    revert,
);

#[test]
fn every_transcript_file_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".txt")
                .map(str::to_string)
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = ALL.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed);
}
