use proptest::prelude::*;

use super::*;

/// A budget that never runs out of time, so results do not depend on the machine.
fn budget(run_work: u64, request_work: u64) -> DiffBudget {
    DiffBudget::new(run_work, request_work, Duration::from_secs(3600))
}

fn plenty() -> DiffBudget {
    budget(u64::MAX, u64::MAX)
}

/// What the diff was before budgets: `similar`'s own unified diff and counts.
fn reference(path: &str, old: &str, new: &str, context: usize) -> LineDiff {
    let diff = TextDiff::from_lines(old, new);
    let (mut additions, mut deletions) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => additions += 1,
            similar::ChangeTag::Delete => deletions += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let text = if additions + deletions == 0 {
        String::new()
    } else {
        diff.unified_diff()
            .context_radius(context)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string()
    };
    let hunks = hunks_of_text(&text);
    LineDiff {
        text,
        additions,
        deletions,
        approximate: false,
        hunks,
    }
}

/// The hunks of a unified diff's text, ranges read off the `@@` headers.
fn hunks_of_text(text: &str) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for line in text.split_inclusive('\n').skip(2) {
        if let Some(header) = line.strip_prefix("@@ -") {
            let mut sides = header.split(' ').take(2).map(|side| {
                let side = side.trim_start_matches(['-', '+']);
                let (start, len) = match side.split_once(',') {
                    Some((s, l)) => (s.parse::<usize>().unwrap(), l.parse::<usize>().unwrap()),
                    None => (side.parse::<usize>().unwrap(), 1),
                };
                let start = if len == 0 { start } else { start - 1 };
                start..start + len
            });
            let old = sides.next().unwrap();
            let new = sides.next().unwrap();
            out.push(Hunk {
                old,
                new,
                text: String::new(),
            });
        }
        out.last_mut()
            .expect("a hunk header first")
            .text
            .push_str(line);
    }
    out
}

/// Applies a unified diff produced here to `old`: proves a (coarse) diff is a
/// correct patch. Panics on anything malformed.
fn apply(old: &str, diff: &str) -> String {
    let old_lines = old.tokenize_lines();
    let mut out = String::new();
    let mut at = 0;
    let mut lines = diff.split_inclusive('\n').skip(2).peekable();
    while let Some(header) = lines.next() {
        let start: usize = header
            .trim_start_matches("@@ -")
            .split([',', ' '])
            .next()
            .and_then(|n| n.parse().ok())
            .expect("hunk header");
        // An empty old range names the line before it.
        let start = if header.starts_with(&format!("@@ -{start},0 ")) {
            start
        } else {
            start - 1
        };
        for line in &old_lines[at..start] {
            out.push_str(line);
        }
        at = start;
        while let Some(line) = lines.next_if(|l| !l.starts_with("@@ ")) {
            let (sign, text) = line.split_at(1);
            let text = match lines.next_if(|l| l.starts_with("\\ No newline")) {
                Some(_) => text.strip_suffix('\n').expect("line ends"),
                None => text,
            };
            match sign {
                " " => {
                    assert_eq!(old_lines[at], text, "context line");
                    out.push_str(text);
                    at += 1;
                }
                "-" => {
                    assert_eq!(old_lines[at], text, "removed line");
                    at += 1;
                }
                "+" => out.push_str(text),
                _ => panic!("bad diff line {line:?}"),
            }
        }
    }
    for line in &old_lines[at..] {
        out.push_str(line);
    }
    out
}

fn numbered(n: usize, changed_every: usize) -> String {
    (0..n)
        .map(|i| {
            if changed_every > 0 && i % changed_every == changed_every - 1 {
                format!("changed {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect()
}

#[test]
fn unified_has_git_style_headers_and_counts() {
    let d = unified(
        "src/x.txt",
        "one\ntwo\n",
        "one\nthree\nfour\n",
        3,
        &mut plenty(),
    );
    assert!(
        d.text.starts_with("--- a/src/x.txt\n+++ b/src/x.txt\n"),
        "{}",
        d.text
    );
    assert_eq!((d.additions, d.deletions, d.approximate), (2, 1, false));
    let same = unified("x", "same\n", "same\n", 3, &mut plenty());
    assert_eq!(
        (same.text.as_str(), same.additions, same.deletions),
        ("", 0, 0)
    );
}

#[test]
fn ordinary_diffs_are_what_similar_gives() {
    let cases = [
        ("one\ntwo\n", "one\nthree\nfour\n"),
        ("same\n", "same\n"),
        ("", "new\n"),
        ("old\n", ""),
        ("a\nb", "a\nb\n"),
        ("a\nb\n", "a\nc"),
        ("a\r\nb\r\n", "a\nb\r\n"),
        ("a\n", "a\na\n"),
        ("x\ny\nx\ny\n", "y\nx\ny\nx\n"),
    ];
    for (old, new) in cases {
        for context in [0, 1, 3, usize::MAX] {
            let got = unified("f", old, new, context, &mut plenty());
            let context = context.min(8);
            assert_eq!(got, reference("f", old, new, context), "{old:?} -> {new:?}");
        }
    }
    let (old, new) = (numbered(300, 0), numbered(300, 17));
    assert_eq!(
        unified("src/x.txt", &old, &new, 3, &mut DiffBudget::for_request()),
        reference("src/x.txt", &old, &new, 3)
    );
}

#[test]
fn over_the_run_budget_a_diff_is_anchored_on_unique_lines_and_stays_exact() {
    let (old, new) = (numbered(2_000, 0), numbered(2_000, 2));
    // 2,000 edits: 4,000,000 for the diagonals alone, over a budget of 1,000,000.
    let mut b = budget(1_000_000, 10_000_000);
    let got = unified("f", &old, &new, 3, &mut b);
    assert!(!got.approximate);
    assert_eq!((got.additions, got.deletions), (1_000, 1_000));
    assert_eq!(got, reference("f", &old, &new, 3));
    // The one-line stretches between anchors cost the budget nothing.
    assert_eq!(b.work_left, 10_000_000);
}

#[test]
fn with_nothing_to_anchor_on_an_expensive_diff_is_one_replaced_block_flagged() {
    let old = "top\n".to_owned() + &"a\nb\n".repeat(1_000) + "bottom\n";
    let new = "top\n".to_owned() + &"a\nc\n".repeat(1_000) + "bottom\n";
    let got = unified("f", &old, &new, 3, &mut budget(1_000_000, 10_000_000));
    assert!(got.approximate);
    // Everything between the common "top", "a" and "bottom".
    assert_eq!((got.additions, got.deletions), (1_999, 1_999));
    assert!(
        got.text
            .starts_with("--- a/f\n+++ b/f\n@@ -1,2002 +1,2002 @@\n top\n a\n-b\n-a\n"),
        "{}",
        &got.text[..80]
    );
    assert!(got.text.ends_with("+a\n+c\n bottom\n"));
    assert_eq!(apply(&old, &got.text), new);
    // The same diff within budget is minimal and not flagged.
    let exact = unified("f", &old, &new, 3, &mut plenty());
    assert!(!exact.approximate);
    assert_eq!((exact.additions, exact.deletions), (1_000, 1_000));
}

#[test]
fn a_stretch_between_anchors_over_budget_is_replaced_and_the_rest_stays_exact() {
    // Unique lines around a repetitive block that was rewritten.
    let old = numbered(50, 0) + &"x\ny\n".repeat(500) + &numbered(50, 0).replace("line", "tail");
    let new = numbered(50, 25) + &"x\nz\n".repeat(500) + &numbered(50, 0).replace("line", "tail");
    let got = unified("f", &old, &new, 3, &mut budget(100_000, 1_000_000));
    assert!(got.approximate);
    // "line 24" became "changed 24" between anchors "line 23" (common start) and
    // "line 25": exact. After the last anchor, "line 48", the stretch of "line 49"
    // and the block (1,001 lines a side, 1,002 edits) is over budget: replaced.
    assert!(got
        .text
        .contains("\n line 23\n-line 24\n+changed 24\n line 25\n"));
    assert_eq!((got.additions, got.deletions), (1 + 1_001, 1 + 1_001));
    assert_eq!(apply(&old, &got.text), new);
}

#[test]
fn the_request_budget_is_shared_by_all_files() {
    // Nothing occurs once on each side, so there is nothing to anchor on either.
    let old = "a\nb\n".repeat(10);
    let new = "a\nc\n".repeat(10);
    // After the common "a": 19 lines a side, 20 edits: 400 + 20 * 38 / 100.
    let work = myers_work(19, 19, 20);
    assert_eq!(work, 407);
    let mut b = budget(1_000, 2 * work + 1);
    for _ in 0..2 {
        let got = unified("f", &old, &new, 3, &mut b);
        assert_eq!(got, reference("f", &old, &new, 3));
    }
    assert_eq!(b.work_left, 1);
    // The third file finds the budget spent.
    let got = unified("f", &old, &new, 3, &mut b);
    assert!(got.approximate);
    assert_eq!((got.additions, got.deletions), (19, 19));
    assert_eq!(apply(&old, &got.text), new);
}

#[test]
fn out_of_time_everything_is_coarse() {
    let (old, new) = (numbered(100, 0), numbered(100, 10));
    let mut b = DiffBudget::new(u64::MAX, u64::MAX, Duration::ZERO);
    let got = unified("f", &old, &new, 3, &mut b);
    assert!(got.approximate);
    // From the first changed line (9) to the last (99).
    assert_eq!((got.additions, got.deletions), (91, 91));
    assert_eq!(apply(&old, &got.text), new);
    // A pure insertion is minimal even when coarse.
    let got = unified("f", "a\n", "a\nb\n", 3, &mut b);
    assert!(!got.approximate);
    assert_eq!(got.text, "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n a\n+b\n");
}

#[test]
fn min_edits_is_a_lower_bound_and_work_grows_with_it() {
    let counts = |old: &[&'static str], new: &[&'static str]| LineCounts::of(old, new).min_edits();
    assert_eq!(counts(&["a", "b"], &["b", "a"]), 0, "a move is not seen");
    assert_eq!(counts(&["a", "b", "a"], &["a", "c"]), 3);
    assert_eq!(counts(&["x"; 10], &["y"; 10]), 20);
    assert!(myers_work(10, 10, 2) < myers_work(10, 10, 3));
    assert!(myers_work(10, 10, 2) < myers_work(1_000, 1_000, 2));
    assert_eq!(myers_work(usize::MAX, usize::MAX, u64::MAX), u64::MAX);
}

#[test]
fn anchors_are_unique_lines_in_the_same_order_on_both_sides() {
    let old = ["a", "u", "b", "v", "w", "dup", "dup"];
    let new = ["w", "u", "v", "a", "b", "dup"];
    let counts = LineCounts::of(&old, &new);
    // a, u, b, v, w are unique on both sides; the longest run in order is u, v (or
    // u, b or a, b): two of them.
    let anchors = counts.anchors(&old);
    assert_eq!(anchors.len(), 2, "{anchors:?}");
    assert!(anchors
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    for (i, j) in anchors {
        assert_eq!(old[i], new[j]);
    }
    assert_eq!(
        longest_increasing(&[(0, 5), (1, 1), (2, 2), (3, 0), (4, 3)]),
        vec![(1, 1), (2, 2), (4, 3)]
    );
    assert!(longest_increasing(&[]).is_empty());
}

fn text() -> impl Strategy<Value = String> {
    // Few distinct lines, so that there are repeats, moves and missing newlines.
    proptest::collection::vec(
        prop_oneof![
            Just("a\n"),
            Just("b\n"),
            Just("c\n"),
            Just("d"),
            Just("e\r\n")
        ],
        0..40,
    )
    .prop_map(|lines| lines.concat())
}

proptest! {
    /// `line_ops` covers both whole sides in order, and its equal runs
    /// pair equal lines. (An empty side of an op may name a position out
    /// of order: `similar` 2.7 compacts ops that way, harmlessly, so only
    /// non-empty ranges are checked for order.)
    #[test]
    fn line_ops_cover_both_sides(old in text(), new in text()) {
        let (old_lines, new_lines) = (old.tokenize_lines(), new.tokenize_lines());
        let (ops, _) = line_ops(&old_lines, &new_lines, &mut plenty());
        let (mut o, mut n) = (0, 0);
        for op in &ops {
            let (or, nr) = (op.old_range(), op.new_range());
            if !or.is_empty() {
                prop_assert_eq!(or.start, o);
                o = or.end;
            }
            if !nr.is_empty() {
                prop_assert_eq!(nr.start, n);
                n = nr.end;
            }
            if op.tag() == DiffTag::Equal {
                prop_assert_eq!(&old_lines[or], &new_lines[nr]);
            }
        }
        prop_assert_eq!((o, n), (old_lines.len(), new_lines.len()));
    }

    #[test]
    fn within_budget_the_diff_is_similars(old in text(), new in text(), context in 0usize..5) {
        prop_assert_eq!(
            unified("p", &old, &new, context, &mut plenty()),
            reference("p", &old, &new, context)
        );
    }

    #[test]
    fn on_any_budget_the_diff_is_a_correct_patch(
        old in text(),
        new in text(),
        run_work in 0u64..200,
    ) {
        let got = unified("p", &old, &new, 2, &mut budget(run_work, 2 * run_work));
        let exact = reference("p", &old, &new, 2);
        prop_assert_eq!(apply(&old, &got.text), new);
        prop_assert!(got.additions >= exact.additions && got.deletions >= exact.deletions);
    }
}
