//! `revert` and `get_file_blame` through the real binary: a 10-turn scripted
//! session whose middle turn is reverted and the revert undone, blame
//! against a hand-built history, and a property test over random histories:
//! reverting turn k yields the history without turn k, byte-exact, or — when
//! later turns touched what turn k changed — a conflict and nothing written.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::{self, disk_state, Fixture, Sidecar};

/// Lines of a model file: `REGIONS` lines that turns edit, each followed by a
/// fixed separator line, so that edits of different regions never touch.
const REGIONS: usize = 5;
const FILES: [&str; 3] = ["a.txt", "b.txt", "c/d.txt"];

type Project = BTreeMap<&'static str, Vec<String>>;

fn render(lines: &[String]) -> Vec<u8> {
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        out.push('\n');
        out.push_str(&format!("-- separator {i} --\n"));
    }
    out.into_bytes()
}

fn base_lines(file: &str) -> Vec<String> {
    (0..REGIONS).map(|r| format!("{file} region {r}")).collect()
}

#[derive(Debug, Clone)]
enum Op {
    Edit(usize, usize),
    Create(usize),
    Delete(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..FILES.len(), 0..REGIONS).prop_map(|(f, r)| Op::Edit(f, r)),
        1 => (0..FILES.len()).prop_map(Op::Create),
        1 => (0..FILES.len()).prop_map(Op::Delete),
    ]
}

/// Apply one turn's ops to a model; `turn` makes every written line unique.
fn apply(project: &mut Project, turn: usize, ops: &[Op]) {
    for op in ops {
        match *op {
            Op::Edit(f, r) => {
                if let Some(lines) = project.get_mut(FILES[f]) {
                    lines[r] = format!("{} region {r} by turn {turn}", FILES[f]);
                }
            }
            Op::Create(f) => {
                project
                    .entry(FILES[f])
                    .or_insert_with(|| base_lines(FILES[f]));
            }
            Op::Delete(f) => {
                project.remove(FILES[f]);
            }
        }
    }
}

fn write_project(fx: &Fixture, project: &Project) {
    for f in FILES {
        match project.get(f) {
            Some(lines) => fx.write(f, render(lines)),
            None => {
                if fx.read(f).is_some() {
                    fx.remove(f);
                }
            }
        }
    }
}

fn disk_files(fx: &Fixture) -> BTreeMap<String, String> {
    disk_state(&fx.root())
        .into_iter()
        .filter_map(|(p, n)| match n {
            common::Node::File { bytes, .. } => {
                Some((p, String::from_utf8_lossy(&bytes).into_owned()))
            }
            _ => None,
        })
        .collect()
}

fn expected_files(project: &Project) -> BTreeMap<String, String> {
    project
        .iter()
        .map(|(p, lines)| {
            (
                p.to_string(),
                String::from_utf8_lossy(&render(lines)).into_owned(),
            )
        })
        .collect()
}

/// Run `turns` through a sidecar, one `turn` snapshot each; returns the
/// sidecar and the entry id of each turn's snapshot (None when the turn
/// changed nothing).
fn record(fx: &Fixture, turns: &[Vec<Op>]) -> (Sidecar, Vec<Option<String>>) {
    let mut project: Project = FILES.iter().map(|f| (*f, base_lines(f))).collect();
    write_project(fx, &project);
    let (mut s, _) = fx.start(json!({}));
    let mut ids = Vec::new();
    for (t, ops) in turns.iter().enumerate() {
        apply(&mut project, t + 1, ops);
        write_project(fx, &project);
        let r = s.ok(
            "snapshot",
            json!({"kind": "turn", "label": format!("turn {}", t + 1)}),
        );
        ids.push(r["entryId"].as_str().map(str::to_string));
    }
    (s, ids)
}

/// Which (file, region) and whole files a turn touches.
fn footprint(ops: &[Op]) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut regions = Vec::new();
    let mut files = Vec::new();
    for op in ops {
        match *op {
            Op::Edit(f, r) => regions.push((f, r)),
            Op::Create(f) | Op::Delete(f) => files.push(f),
        }
    }
    (regions, files)
}

fn cases() -> u32 {
    std::env::var("REWIND_REVERT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Reverting turn k: when no later turn touched k's regions or files, the
    /// disk becomes the history replayed without k (byte-exact); otherwise,
    /// with `abort`, either the revert is refused with a conflict and nothing
    /// is written, or it leaves every file k never touched as it was. Undo
    /// brings the pre-revert disk back either way.
    #[test]
    fn reverting_a_turn_is_the_history_without_it(
        turns in prop::collection::vec(prop::collection::vec(op(), 1..4), 2..7),
        pick in any::<prop::sample::Index>(),
    ) {
        let fx = Fixture::new();
        let (mut s, ids) = record(&fx, &turns);
        let k = pick.index(turns.len());
        let Some(entry) = ids[k].clone() else {
            // The turn changed nothing: there is nothing to revert.
            return Ok(());
        };
        let before = disk_files(&fx);
        let mut without: Project = FILES.iter().map(|f| (*f, base_lines(f))).collect();
        for (t, ops) in turns.iter().enumerate() {
            if t != k {
                apply(&mut without, t + 1, ops);
            }
        }
        let (k_regions, k_files) = footprint(&turns[k]);
        let overlap = turns[k + 1..].iter().any(|later| {
            let (regions, files) = footprint(later);
            regions.iter().any(|r| k_regions.contains(r) || k_files.contains(&r.0))
                || files.iter().any(|f| k_files.contains(f) || k_regions.iter().any(|r| r.0 == *f))
        });
        let v = s.call("revert", json!({"entryId": entry}));
        if let Some(err) = v.get("error") {
            prop_assert!(overlap, "a revert without overlap failed: {err}");
            prop_assert_eq!(err["code"].as_i64(), Some(1002), "{}", err);
            prop_assert_eq!(disk_files(&fx), before, "an aborted revert wrote something");
            return Ok(());
        }
        if overlap {
            // Later turns' ops depend on the state turn k left (an edit of a
            // file turn k deleted does nothing), so "the history without k"
            // is not defined by replay here; what must hold is that files turn
            // k never touched are left as they are.
            let touched: Vec<&str> = k_regions
                .iter()
                .map(|r| FILES[r.0])
                .chain(k_files.iter().map(|f| FILES[*f]))
                .collect();
            let after = disk_files(&fx);
            for f in FILES.iter().filter(|f| !touched.contains(f)) {
                prop_assert_eq!(after.get(*f), before.get(*f), "{} was not turn {}'s", f, k + 1);
            }
        } else {
            prop_assert_eq!(disk_files(&fx), expected_files(&without), "revert of turn {}", k + 1);
        }
        // A revert that changed nothing records nothing to undo.
        if v["result"]["unrevertEntryId"].is_string() {
            s.ok("undo", json!({}));
            prop_assert_eq!(disk_files(&fx), before, "undo of the revert");
        }
    }
}

fn edit(fx: &Fixture, file: &str, n: usize, line: usize, text: &str) {
    let mut lines: Vec<String> = match fx.read(file) {
        Some(b) => String::from_utf8(b)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect(),
        None => (0..n).map(|i| format!("{file} {i}")).collect(),
    };
    lines[line] = text.to_string();
    fx.write(file, lines.join("\n") + "\n");
}

/// The scenario: ten turns each touching their own line (two also a
/// file of their own); turn 5 reverted; turns 6–10 kept; undone.
#[test]
fn reverting_the_middle_turn_of_ten_keeps_the_later_ones_and_can_be_undone() {
    let fx = Fixture::new();
    let lines: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
    fx.write("main.rs", lines.join("\n") + "\n");
    let (mut s, _) = fx.start(json!({}));
    let mut ids = Vec::new();
    for t in 1..=10 {
        edit(
            &fx,
            "main.rs",
            30,
            t * 3 - 1,
            &format!("changed by turn {t}"),
        );
        if t == 5 || t == 8 {
            fx.write(&format!("turn{t}.txt"), format!("new in turn {t}\n"));
        }
        let r = s.ok(
            "snapshot",
            json!({"kind": "turn", "label": format!("turn {t}")}),
        );
        ids.push(r["entryId"].as_str().unwrap().to_string());
    }
    let after_ten = disk_files(&fx);

    let preview = s.ok("revert", json!({"entryId": ids[4], "preview": true}));
    assert_eq!(disk_files(&fx), after_ten, "a preview writes nothing");
    let statuses: Vec<(&str, &str)> = preview["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, vec![("main.rs", "clean"), ("turn5.txt", "clean")]);

    let done = s.ok("revert", json!({"entryId": ids[4]}));
    assert!(done["unrevertEntryId"].is_string(), "{done}");
    let text = String::from_utf8(fx.read("main.rs").unwrap()).unwrap();
    let got: Vec<&str> = text.lines().collect();
    for t in 1..=10 {
        let want = if t == 5 {
            format!("line {}", t * 3 - 1)
        } else {
            format!("changed by turn {t}")
        };
        assert_eq!(got[t * 3 - 1], want, "line of turn {t}");
    }
    assert!(fx.read("turn5.txt").is_none(), "turn 5's new file is gone");
    assert!(fx.read("turn8.txt").is_some(), "turn 8's new file stays");

    s.ok("undo", json!({}));
    assert_eq!(disk_files(&fx), after_ten, "undo of the revert");

    // A range: turns 7 to 9 at once.
    s.ok("revert", json!({"entryId": ids[6], "toEntryId": ids[8]}));
    let text = String::from_utf8(fx.read("main.rs").unwrap()).unwrap();
    let got: Vec<&str> = text.lines().collect();
    for t in 1..=10 {
        let reverted = (7..=9).contains(&t);
        assert_eq!(
            got[t * 3 - 1].starts_with("changed"),
            !reverted,
            "line of turn {t}"
        );
    }
    assert!(fx.read("turn8.txt").is_none());
}

fn blame(s: &mut Sidecar, path: &str, at: Option<&str>) -> Vec<(Option<String>, String)> {
    let mut params = json!({"path": path});
    if let Some(at) = at {
        params["at"] = json!(at);
    }
    let r = s.ok("get_file_blame", params);
    r["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["entryId"].as_str().map(str::to_string),
                l["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Blame against a hand-built history: inserted, changed and deleted lines,
/// a file deleted and brought back by undo, uncommitted lines, `at`.
#[test]
fn blame_names_the_checkpoint_that_wrote_each_line() {
    let fx = Fixture::new();
    fx.write("f.txt", "a\nb\nc\n");
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    let snap = |s: &mut Sidecar, label: &str| -> String {
        s.ok("snapshot", json!({"kind": "turn", "label": label}))["entryId"]
            .as_str()
            .unwrap()
            .to_string()
    };
    fx.write("f.txt", "a\nB\nc\nd\n");
    let t1 = snap(&mut s, "one");
    fx.write("f.txt", "x\na\nB\nd\n");
    let t2 = snap(&mut s, "two");
    let at_t2 = vec![
        (Some(t2.clone()), "x".to_string()),
        (Some(base.clone()), "a".to_string()),
        (Some(t1.clone()), "B".to_string()),
        (Some(t1.clone()), "d".to_string()),
    ];
    assert_eq!(blame(&mut s, "f.txt", None), at_t2);
    // At an earlier entry.
    assert_eq!(
        blame(&mut s, "f.txt", Some(&t1)),
        vec![
            (Some(base.clone()), "a".to_string()),
            (Some(t1.clone()), "B".to_string()),
            (Some(base.clone()), "c".to_string()),
            (Some(t1.clone()), "d".to_string()),
        ]
    );
    // Deleted by turn 3, brought back by undo of a restore: the restored
    // lines keep the turns that wrote them.
    fx.remove("f.txt");
    let _t3 = snap(&mut s, "three");
    s.ok("restore_files", json!({"targetEntryId": t2}));
    assert_eq!(blame(&mut s, "f.txt", None), at_t2);
    // Lines not yet in any checkpoint have no entry.
    fx.write("f.txt", "x\na\nB\nd\nnew\n");
    let mut want = at_t2.clone();
    want.push((None, "new".to_string()));
    assert_eq!(blame(&mut s, "f.txt", None), want);
    // A second request (from the cache) answers the same.
    assert_eq!(blame(&mut s, "f.txt", None), want);

    let err = s.err("get_file_blame", json!({"path": "f.txt", "at": "nope"}));
    assert_eq!(err["code"], json!(1001));
    let err = s.err("get_file_blame", json!({"path": "../etc/passwd"}));
    assert_eq!(err["code"], json!(-32602));
    let missing = s.ok("get_file_blame", json!({"path": "none.txt"}));
    assert_eq!(missing["lines"], json!([]));
}

/// Hunk-level restore of a file changed on both sides of a checkpoint: only
/// the chosen hunks come back; a stale hash is refused with nothing written;
/// undo brings the file back.
#[test]
fn restoring_chosen_hunks_takes_back_only_those() {
    let fx = Fixture::new();
    let lines: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
    fx.write("f.txt", lines.join("\n") + "\n");
    let (mut s, _) = fx.start(json!({}));
    let cp = s.ok("snapshot", json!({"kind": "turn"}))["entryId"].clone();
    let cp = if cp.is_null() {
        s.ok("list_checkpoints", json!({}))["initialEntryId"].clone()
    } else {
        cp
    };
    let mut edited = lines.clone();
    edited[2] = "two".into();
    edited[20] = "twenty".into();
    edited[37] = "thirty-seven".into();
    fx.write("f.txt", edited.join("\n") + "\n");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "f.txt", "fromEntryId": cp, "toEntryId": "@working"}),
    );
    let hunks = d["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 3);
    let pick = |i: usize| json!({"index": i, "hash": hunks[i]["hash"]});
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": cp, "hunks": [{"path": "f.txt", "hunks": [pick(0), pick(2)]}]}),
    );
    assert_eq!(r["restored"], json!(["f.txt"]));
    let mut want = lines.clone();
    want[20] = "twenty".into();
    assert_eq!(
        fx.read("f.txt").unwrap(),
        (want.join("\n") + "\n").into_bytes()
    );

    let before = fx.read("f.txt").unwrap();
    let err = s.err(
        "restore_files",
        json!({"targetEntryId": cp, "hunks": [{"path": "f.txt", "hunks": [pick(2)]}]}),
    );
    assert_eq!(err["code"], json!(1006), "{err}");
    assert_eq!(
        fx.read("f.txt").unwrap(),
        before,
        "a stale selection writes nothing"
    );

    s.ok("undo", json!({}));
    assert_eq!(
        fx.read("f.txt").unwrap(),
        (edited.join("\n") + "\n").into_bytes()
    );
    let v: Value = s.err(
        "restore_files",
        json!({"targetEntryId": cp, "files": ["f.txt"], "hunks": [{"path": "f.txt", "hunks": [pick(0)]}]}),
    );
    assert_eq!(v["code"], json!(-32602));
}
