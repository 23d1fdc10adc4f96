//! Fuzzing the sidecar through the real binary: the checked-in corpus
//! (`tests/fuzz/lines.jsonl`, one JSON string per line: the raw line to send), then
//! generated lines — random bytes, random JSON, and random params for every method in both
//! envelopes — each followed by a probe. Every line must be answered without the process
//! dying, stdout must carry only JSON, and the probe must come back. Also mutated session
//! files, opened by `initialize` and `rewind log`: an error or a repair, never a crash.
//!
//! Bounded: `REWIND_FUZZ_CASES` (default 2000) generated lines, seeded by `REWIND_FUZZ_SEED`
//! (default: random, printed so a failure can be replayed).

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Map, Value};

use crate::common::{run_cli, Fixture, Sidecar};

/// Methods fed random params (initialize only from the corpus: a random `cwd` could make
/// it scan the whole machine; shutdown would end the run).
const METHODS: &[&str] = &[
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
    "restore_files",
    "navigate_tree",
    "undo",
    "approve",
    "reset",
    "gc",
    "verify",
    "no_such_method",
];

/// Param names the methods take, so random objects hit real fields.
const KEYS: &[&str] = &[
    "targetEntryId",
    "treeHash",
    "files",
    "paths",
    "preview",
    "onConflict",
    "entryId",
    "parentId",
    "fromId",
    "toId",
    "filePath",
    "label",
    "note",
    "targetId",
    "kind",
    "force",
    "tool",
    "turnIndex",
    "role",
    "text",
    "entryType",
    "customType",
    "data",
    "dryRun",
    "keepLast",
    "maxAgeDays",
    "budgetBytes",
    "skipFiles",
    "summarize",
    "summary",
    "message",
    "limit",
    "query",
    "contextLines",
];

fn seed() -> u64 {
    std::env::var("REWIND_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rand::random)
}

fn cases() -> usize {
    std::env::var("REWIND_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn arb_string(rng: &mut StdRng) -> String {
    let pool = [
        "a.txt",
        "src/lib.rs",
        "../x",
        "/etc/passwd",
        "@working",
        "",
        ".",
        ".git/HEAD",
        "a//b",
        "a\u{0}b",
        "\u{2028}",
        "é/ü",
        "overwrite",
        "skip",
        "abort",
        "turn",
        "manual",
        "ffffffffffffffffffffffffffffffff",
        "user",
        "assistant",
    ];
    if rng.gen_bool(0.7) {
        pool.choose(rng).unwrap().to_string()
    } else {
        let n = rng.gen_range(0..40);
        (0..n).map(|_| rng.gen_range('\u{20}'..'\u{7ff}')).collect()
    }
}

fn arb_json(rng: &mut StdRng, depth: u32) -> Value {
    match rng.gen_range(0..if depth > 3 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => json!(rng.gen_bool(0.5)),
        2 => match rng.gen_range(0..4) {
            0 => json!(rng.gen::<i64>()),
            1 => json!(rng.gen_range(-3..1000)),
            2 => json!(rng.gen::<f64>() * 1e6),
            _ => json!(u64::MAX),
        },
        3 | 4 => json!(arb_string(rng)),
        5 => Value::Array(
            (0..rng.gen_range(0..4))
                .map(|_| arb_json(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.gen_range(0..5) {
                let k = if rng.gen_bool(0.85) {
                    KEYS.choose(rng).unwrap().to_string()
                } else {
                    arb_string(rng)
                };
                m.insert(k, arb_json(rng, depth + 1));
            }
            Value::Object(m)
        }
    }
}

/// One generated line (without its newline).
fn arb_line(rng: &mut StdRng, n: usize) -> Vec<u8> {
    match rng.gen_range(0..10) {
        // Random bytes: invalid UTF-8, NULs, lone CRs; never a newline (that would be two).
        0 => (0..rng.gen_range(0..300))
            .map(|_| rng.gen::<u8>())
            .map(|b| if b == b'\n' { b' ' } else { b })
            .collect(),
        // Random JSON of any shape.
        1 => arb_json(rng, 0).to_string().into_bytes(),
        // A valid line cut short or with a byte flipped.
        2 => {
            let mut l = json!({"jsonrpc": "2.0", "id": n, "method": "stats"})
                .to_string()
                .into_bytes();
            let at = rng.gen_range(0..l.len());
            if rng.gen_bool(0.5) {
                l.truncate(at);
            } else {
                l[at] ^= 1 << rng.gen_range(0..7);
                if l[at] == b'\n' {
                    l[at] = b' ';
                }
            }
            l
        }
        // pi envelope with random fields.
        3 | 4 => {
            let mut m = match arb_json(rng, 1) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            m.insert("type".into(), json!(METHODS.choose(rng).unwrap()));
            m.insert("id".into(), json!(format!("req-{n}")));
            Value::Object(m).to_string().into_bytes()
        }
        // JSON-RPC with random params for a real method.
        _ => {
            let mut req =
                json!({"jsonrpc": "2.0", "id": n, "method": METHODS.choose(rng).unwrap()});
            if rng.gen_bool(0.9) {
                req["params"] = match rng.gen_range(0..4) {
                    0 => arb_json(rng, 1),
                    _ => {
                        let mut m = Map::new();
                        for _ in 0..rng.gen_range(1..5) {
                            m.insert(KEYS.choose(rng).unwrap().to_string(), arb_json(rng, 2));
                        }
                        Value::Object(m)
                    }
                };
            }
            req.to_string().into_bytes()
        }
    }
}

/// Send one line, then a probe; read until the probe's answer. Every line read is JSON.
fn send_and_probe(s: &mut Sidecar, line: &[u8], n: usize) {
    let mut bytes = line.to_vec();
    bytes.push(b'\n');
    s.send_raw(&bytes);
    let probe = format!("probe-{n}");
    s.send(&json!({"jsonrpc": "2.0", "id": probe, "method": "stats"}));
    loop {
        let Some(out) = s.next_line() else {
            panic!(
                "the sidecar exited after line {n}: {:?}",
                String::from_utf8_lossy(line)
            );
        };
        let v: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {out:?} after {line:?}"));
        if v["id"] == json!(probe) {
            assert!(
                v.get("result").is_some(),
                "probe failed after line {n}: {v}"
            );
            break;
        }
    }
}

fn started(fx: &Fixture) -> Sidecar {
    for i in 0..10 {
        fx.write(&format!("src/f{i}.txt"), format!("file {i}\n"));
    }
    fx.write("a.txt", "a\n");
    let (mut s, _) = fx.start(json!({"options": {"fsync": false}}));
    s.ok("snapshot", json!({}));
    s
}

#[test]
fn the_corpus_and_generated_lines_are_all_answered() {
    let seed = seed();
    eprintln!("fuzz: seed {seed} (REWIND_FUZZ_SEED={seed} replays this run)");
    let fx = Fixture::new();
    let mut s = started(&fx);
    let corpus = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fuzz/lines.jsonl"
    ))
    .unwrap();
    let mut n = 0;
    for raw in corpus.lines() {
        let line: String = serde_json::from_str(raw).unwrap();
        send_and_probe(&mut s, line.as_bytes(), n);
        n += 1;
    }
    let from_corpus = n;
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..cases() {
        let line = arb_line(&mut rng, n);
        send_and_probe(&mut s, &line, n);
        n += 1;
    }
    eprintln!(
        "fuzz: {from_corpus} corpus lines and {} generated lines answered",
        n - from_corpus
    );
    assert!(s.finish().success());
}

#[test]
fn mutated_session_files_are_repaired_or_refused_never_a_crash() {
    let seed = seed();
    eprintln!("fuzz: seed {seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let fx = Fixture::new();
    let mut s = started(&fx);
    fx.write("a.txt", "b\n");
    s.ok("snapshot", json!({"label": "two"}));
    let session = s.ok("stats", json!({}));
    drop(session);
    assert!(s.finish().success());
    let file = fx.session_files().into_iter().next().unwrap();
    let good = std::fs::read(&file).unwrap();
    let rounds = (cases() / 8).max(20);
    let (mut opened, mut refused) = (0, 0);
    for round in 0..rounds {
        let mut bad = good.clone();
        match rng.gen_range(0..4) {
            0 => bad.truncate(rng.gen_range(0..bad.len())),
            1 => {
                for _ in 0..rng.gen_range(1..8) {
                    let at = rng.gen_range(0..bad.len());
                    bad[at] = rng.gen();
                }
            }
            2 => {
                let at = rng.gen_range(0..bad.len());
                let junk = arb_line(&mut rng, round);
                bad.splice(at..at, junk.into_iter().chain([b'\n']));
            }
            _ => bad.extend(arb_json(&mut rng, 0).to_string().into_bytes()),
        }
        std::fs::write(&file, &bad).unwrap();
        let mut side = fx.spawn();
        let v = side.call(
            "initialize",
            json!({"cwd": fx.project.path(), "storeDir": fx.store.path(), "sessionFile": file,
                   "options": {"fsync": false}}),
        );
        if v.get("result").is_some() {
            opened += 1;
            side.ok("verify", json!({}));
        } else {
            assert!(v["error"]["message"].is_string(), "{v}");
            refused += 1;
        }
        assert!(side.finish().success(), "round {round}");
        let (code, out, err) = run_cli(
            &[
                "log",
                "--session",
                file.to_str().unwrap(),
                "--store",
                fx.store.path().to_str().unwrap(),
            ],
            fx.project.path(),
        );
        assert!(
            code == 0 || code == 1,
            "rewind log crashed ({code}): {out}{err}"
        );
        std::fs::write(&file, &good).unwrap();
    }
    eprintln!(
        "fuzz: {rounds} mutated session files: {opened} opened (repaired), {refused} refused"
    );
}
