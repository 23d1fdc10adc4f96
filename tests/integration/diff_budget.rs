//! Line diffs have a bounded cost: a huge rewrite is answered within seconds, and when the
//! diff had to be coarsened to stay within its budget the result says so (`isApproximate`).
//! Before the budget, Myers' O((N+M)·D) search on these files ran for minutes, and every
//! request queued behind it waited too.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::Fixture;

const LINES: usize = 200_000;

/// Generous: the budget's own wall-clock limit is 5 s per request, and this also covers a
/// debug build on a loaded machine reading and hashing some 3 MB.
const BOUND: Duration = Duration::from_secs(30);

/// The time limit a request's line diffs get (`REQUEST_TIME` in the engine).
const TIME_LIMIT: Duration = Duration::from_secs(5);

/// 200,000 distinct lines, every other one then rewritten: every unchanged line occurs once
/// on each side, so the diff can be anchored on them and stays exact.
fn distinct(changed: bool) -> String {
    (0..LINES)
        .map(|i| {
            if changed && i % 2 == 1 {
                format!("changed {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect()
}

/// 200,000 lines of only two kinds, every other one then rewritten: nothing occurs once,
/// so there is nothing to anchor on, and Myers' search would be quadratic.
fn repetitive(changed: bool) -> String {
    (0..LINES)
        .map(|i| match (i % 2, changed) {
            (0, _) => "a\n",
            (_, false) => "b\n",
            (_, true) => "c\n",
        })
        .collect()
}

fn timed(f: impl FnOnce() -> Value) -> (Value, Duration) {
    let started = Instant::now();
    let v = f();
    (v, started.elapsed())
}

#[test]
fn a_200k_line_file_with_every_other_line_changed_diffs_in_bounded_time() {
    let fx = Fixture::new();
    fx.write("distinct.txt", distinct(false));
    fx.write("repetitive.txt", repetitive(false));
    let (mut s, _) = fx.start(json!({}));
    fx.write("distinct.txt", distinct(true));
    fx.write("repetitive.txt", repetitive(true));

    let (d, took) = timed(|| {
        s.ok(
            "get_file_diff",
            json!({"filePath": "distinct.txt", "toEntryId": "@working"}),
        )
    });
    assert!(took < BOUND, "get_file_diff took {took:?}");
    assert_eq!(d["isTooLarge"], false);
    if d["isApproximate"] == true {
        // Only the wall-clock limit may coarsen this one (a very slow machine).
        assert!(took >= TIME_LIMIT, "approximate after only {took:?}");
        assert!(
            d["additions"].as_u64() >= Some(100_000),
            "{}",
            d["additions"]
        );
    } else {
        assert_eq!(d["isApproximate"], false);
        assert_eq!(
            (d["additions"].as_u64(), d["deletions"].as_u64()),
            (Some(100_000), Some(100_000))
        );
        assert!(d["unifiedDiff"]
            .as_str()
            .is_some_and(|u| u.contains("\n-line 1\n+changed 1\n")));
    }

    let (d, took) = timed(|| {
        s.ok(
            "get_file_diff",
            json!({"filePath": "repetitive.txt", "toEntryId": "@working"}),
        )
    });
    assert!(took < BOUND, "get_file_diff took {took:?}");
    // Over budget whatever the machine's speed: shown as one replaced block, and said so.
    assert_eq!(d["isApproximate"], true, "{}", d["additions"]);
    // "a" is the common first line; everything after it is replaced.
    assert_eq!(d["additions"].as_u64(), Some(LINES as u64 - 1));
    assert_eq!(d["deletions"].as_u64(), Some(LINES as u64 - 1));
    let unified = d["unifiedDiff"].as_str().unwrap_or_default();
    assert!(
        unified.starts_with(
            "--- a/repetitive.txt\n+++ b/repetitive.txt\n@@ -1,200000 +1,200000 @@\n a\n-b\n-a\n"
        ),
        "{}",
        &unified[..unified.len().min(200)]
    );

    // get_status diffs both files against the baseline within one request's budget.
    let (st, took) = timed(|| s.ok("get_status", json!({})));
    assert!(took < BOUND, "get_status took {took:?}");
    let files = st["changedFiles"].as_array().cloned().unwrap_or_default();
    let by_path = |p: &str| files.iter().find(|f| f["path"] == p).cloned();
    let repetitive = by_path("repetitive.txt").expect("repetitive.txt in get_status");
    assert_eq!(repetitive["isApproximate"], true);
    assert_eq!(repetitive["additions"].as_u64(), Some(LINES as u64 - 1));
    let distinct = by_path("distinct.txt").expect("distinct.txt in get_status");
    assert!(
        distinct["isApproximate"].is_boolean(),
        "{}",
        distinct["isApproximate"]
    );
    if distinct["isApproximate"] == false {
        assert_eq!(distinct["additions"].as_u64(), Some(100_000));
    }

    // A small edit next to them is still exact.
    fx.write("small.txt", "one\ntwo\nthree\n");
    let snap = s.ok("snapshot", json!({}));
    fx.write("small.txt", "one\n2\nthree\n");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "small.txt", "fromEntryId": snap["entryId"], "toEntryId": "@working"}),
    );
    assert_eq!(d["isApproximate"], false);
    assert_eq!(
        d["unifiedDiff"],
        "--- a/small.txt\n+++ b/small.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    );
    assert!(s.finish().success());
}
