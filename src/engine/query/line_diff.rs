//! Line diffs with a bounded cost, for `get_file_diff`, `get_status` and `rewind diff`.
//!
//! Myers' algorithm (what `similar` runs) takes O((N+M)·D) time for N and M lines D edits
//! apart: a 200,000-line file with every other line changed took minutes, and since
//! requests are answered one at a time, every request behind it waited as long. So each
//! diff is planned against a [`DiffBudget`]:
//!
//! 1. Lines common to both ends are set aside (linear).
//! 2. If Myers' estimated work on the rest fits the budget, `similar` diffs the whole file
//!    exactly as before, so ordinary diffs are unchanged.
//! 3. Otherwise the rest is split at lines that occur exactly once on each side, in the
//!    same order on both (the anchors of patience diff), and each stretch between anchors
//!    is diffed by Myers if its own estimate fits, or else shown as replaced wholesale.
//! 4. A wall-clock deadline per request backs the estimates up (they can be wrong, e.g.
//!    for reordered lines): Myers stops searching at it, and every diff after it is shown
//!    replaced wholesale.
//!
//! When step 3 or 4 replaced a stretch wholesale the result is flagged approximate: still a
//! correct patch from old to new, but not a minimal one, so its line counts over-count.
//! (Step 3 alone is not flagged: like `git diff --patience` it can align a few lines
//! differently from a minimal diff, but every stretch is diffed line by line.)
//! The estimates (step 2 and 3) are deterministic, so the same input gets the same diff on
//! any machine unless the deadline is reached.

use std::collections::HashMap;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::udiff::UnifiedHunkHeader;
use similar::{capture_diff_deadline, group_diff_ops, Algorithm, DiffOp, DiffTag};
use similar::{DiffableStr, TextDiff};

/// Estimated work (see [`myers_work`]) one Myers run may take: about a second in a debug
/// build (where `similar`'s generic code is compiled unoptimised) and a few hundredths in
/// a release build.
const RUN_WORK: u64 = 20_000_000;

/// Estimated work all Myers runs of one request may take together (`get_status` diffs
/// every changed file).
const REQUEST_WORK: u64 = 4 * RUN_WORK;

/// Wall-clock time one request's line diffs may take before the rest are coarse.
const REQUEST_TIME: Duration = Duration::from_secs(5);

/// How many snake steps cost as much as one diagonal of Myers' search (see
/// [`myers_work`]); a rough fit to timings of `similar` 2.7 on files of 20,000 to
/// 1,000,000 lines.
const SNAKE_STEPS_PER_DIAGONAL: u64 = 100;

/// Stretches between anchors with at most this many lines (both sides together) are
/// diffed without drawing on the budget (see [`anchored`]).
const SMALL_STRETCH_LINES: usize = 64;

/// What the line diffs of one request may still spend.
#[derive(Debug)]
pub(crate) struct DiffBudget {
    run_work: u64,
    work_left: u64,
    deadline: Instant,
}

impl DiffBudget {
    /// The budget of one request, starting now.
    pub(crate) fn for_request() -> Self {
        Self::new(RUN_WORK, REQUEST_WORK, REQUEST_TIME)
    }

    fn new(run_work: u64, request_work: u64, time: Duration) -> Self {
        let now = Instant::now();
        Self {
            run_work,
            work_left: request_work,
            // An unrepresentable deadline is as good as none; a year is far enough.
            deadline: now
                .checked_add(time)
                .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
                .unwrap_or(now),
        }
    }

    fn out_of_time(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Takes `work` from the budget if one run may spend that much and time is left.
    fn reserve(&mut self, work: u64) -> bool {
        if work > self.run_work || work > self.work_left || self.out_of_time() {
            return false;
        }
        self.work_left -= work;
        true
    }
}

/// A unified diff and its line counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineDiff {
    /// `--- a/<path>` / `+++ b/<path>` headers and hunks; empty when nothing changed.
    pub(crate) text: String,
    pub(crate) additions: u64,
    pub(crate) deletions: u64,
    /// Some changed stretch is shown replaced wholesale (see the module docs), so the
    /// counts are upper bounds.
    pub(crate) approximate: bool,
    /// The hunks of `text`, in order: what a hunk-level restore selects.
    pub(crate) hunks: Vec<Hunk>,
}

/// One hunk of a unified diff: the lines it covers on each side (context included,
/// 0-based, half-open) and its text (the `@@` header and its lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub(crate) old: Range<usize>,
    pub(crate) new: Range<usize>,
    pub(crate) text: String,
}

/// Unified diff of `old` to `new` with `context` lines around each change, within `budget`.
pub(crate) fn unified(
    path: &str,
    old: &str,
    new: &str,
    context: usize,
    budget: &mut DiffBudget,
) -> LineDiff {
    // The same tokens `TextDiff::from_lines` uses: lines keep their terminator, so a last
    // line without one differs from the same text with one.
    let old_lines = old.tokenize_lines();
    let new_lines = new.tokenize_lines();
    unified_lines(path, &old_lines, &new_lines, context, budget, &['\r', '\n'])
}

/// As [`unified`], with lines cut after each `\n` only, as `git apply` and `patch` read
/// a patch: a `\r` that no `\n` follows stays inside its line (where [`unified`] would
/// end a line at it, and the patch's next line would run on from it). For a patch
/// to be applied (engine/query/patch.rs); the hunks may differ from [`unified`]'s only
/// for such files.
pub(crate) fn unified_for_patch(
    path: &str,
    old: &str,
    new: &str,
    context: usize,
    budget: &mut DiffBudget,
) -> LineDiff {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    unified_lines(path, &old_lines, &new_lines, context, budget, &['\n'])
}

/// The unified diff of two texts cut into lines; a line that does not end with one of
/// `ends` is the last, without a newline.
fn unified_lines(
    path: &str,
    old_lines: &[&str],
    new_lines: &[&str],
    context: usize,
    budget: &mut DiffBudget,
    ends: &[char],
) -> LineDiff {
    let (ops, approximate) = diff_ops(old_lines, new_lines, budget);
    let mut additions = 0;
    let mut deletions = 0;
    for op in &ops {
        match op.tag() {
            DiffTag::Equal => {}
            DiffTag::Delete => deletions += op.old_range().len() as u64,
            DiffTag::Insert => additions += op.new_range().len() as u64,
            DiffTag::Replace => {
                deletions += op.old_range().len() as u64;
                additions += op.new_range().len() as u64;
            }
        }
    }
    if additions == 0 && deletions == 0 {
        return LineDiff {
            text: String::new(),
            additions: 0,
            deletions: 0,
            approximate: false,
            hunks: Vec::new(),
        };
    }
    let hunks = hunks(old_lines, new_lines, ops, context, ends);
    let mut text = format!("--- a/{path}\n+++ b/{path}\n");
    for h in &hunks {
        text.push_str(&h.text);
    }
    LineDiff {
        text,
        additions,
        deletions,
        approximate,
        hunks,
    }
}

/// The hash that names a hunk in `get_file_diff` and a hunk-level restore: xxh3-64 of
/// its text, 16 hex digits.
pub(crate) fn hunk_hash(text: &str) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

/// The line diff of `old` to `new` (lines as `tokenize_lines` cuts them) as `similar`
/// ops over both whole sides, within `budget`, and whether it is approximate: for callers
/// that walk the ops themselves (blame). Unlike [`unified`]'s, only the stretch between the
/// common ends is diffed: no caller shows these ops, so they need not align exactly as the
/// whole-file diff does, and a few lines changed in a long file then cost no hashing of
/// every line.
pub(crate) fn line_ops(old: &[&str], new: &[&str], budget: &mut DiffBudget) -> (Vec<DiffOp>, bool) {
    let (prefix, suffix) = common_ends(old, new);
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    let (middle, approximate) = diff_ops(&old[prefix..old_end], &new[prefix..new_end], budget);
    let mut ops = Ops::default();
    ops.equal(0, 0, prefix);
    for op in middle {
        let (o, n) = (op.old_range(), op.new_range());
        ops.replace_or_equal(
            op.tag(),
            prefix + o.start..prefix + o.end,
            prefix + n.start..prefix + n.end,
        );
    }
    ops.equal(old_end, new_end, suffix);
    (ops.0, approximate)
}

/// How many lines the two sides share at their start, and then at their end.
fn common_ends(old: &[&str], new: &[&str]) -> (usize, usize) {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (prefix, suffix)
}

/// The diff as `similar` ops over the whole of both sides, and whether it is approximate.
fn diff_ops(old: &[&str], new: &[&str], budget: &mut DiffBudget) -> (Vec<DiffOp>, bool) {
    let (prefix, suffix) = common_ends(old, new);
    let old_mid = prefix..old.len() - suffix;
    let new_mid = prefix..new.len() - suffix;
    if budget.out_of_time() {
        return coarse(old, new, old_mid, new_mid);
    }
    // A pure insertion or deletion is linear work for Myers too.
    let counts = (!old_mid.is_empty() && !new_mid.is_empty())
        .then(|| LineCounts::of(&old[old_mid.clone()], &new[new_mid.clone()]));
    let work = counts.as_ref().map_or(0, |c| {
        myers_work(old_mid.len(), new_mid.len(), c.min_edits())
    });
    if budget.reserve(work) {
        // The whole file, not just the middle, so that the result is exactly what it was
        // before there was a budget (`similar` compacts edits across the common ends).
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .newline_terminated(true)
            .deadline(budget.deadline)
            .diff_slices(old, new);
        return (diff.ops().to_vec(), budget.out_of_time());
    }
    match counts {
        Some(counts) if !budget.out_of_time() => {
            let anchors = counts.anchors(&old[old_mid.clone()]);
            if anchors.is_empty() {
                // The one stretch is the whole middle, already too expensive.
                coarse(old, new, old_mid, new_mid)
            } else {
                anchored(old, new, old_mid, new_mid, &anchors, budget)
            }
        }
        _ => coarse(old, new, old_mid, new_mid),
    }
}

/// The common ends as equal and the middle replaced wholesale.
fn coarse(
    old: &[&str],
    new: &[&str],
    old_mid: Range<usize>,
    new_mid: Range<usize>,
) -> (Vec<DiffOp>, bool) {
    let mut ops = Ops::default();
    ops.equal(0, 0, old_mid.start);
    // Replacing all of one empty side is exactly what a minimal diff does.
    let approximate = !old_mid.is_empty() && !new_mid.is_empty();
    ops.replace(old_mid.clone(), new_mid.clone());
    ops.equal(old_mid.end, new_mid.end, old.len() - old_mid.end);
    debug_assert_eq!(new.len() - new_mid.end, old.len() - old_mid.end);
    (ops.0, approximate)
}

/// The middle split at `anchors` (positions in the middles, increasing on both sides):
/// each stretch between them is diffed by Myers when its estimate fits, else replaced.
fn anchored(
    old: &[&str],
    new: &[&str],
    old_mid: Range<usize>,
    new_mid: Range<usize>,
    anchors: &[(usize, usize)],
    budget: &mut DiffBudget,
) -> (Vec<DiffOp>, bool) {
    let mut ops = Ops::default();
    let mut approximate = false;
    ops.equal(0, 0, old_mid.start);
    let (mut old_at, mut new_at) = (old_mid.start, new_mid.start);
    let ends = anchors
        .iter()
        .map(|&(i, j)| (old_mid.start + i, new_mid.start + j, true))
        .chain(std::iter::once((old_mid.end, new_mid.end, false)));
    for (old_end, new_end, is_anchor) in ends {
        let (old_gap, new_gap) = (old_at..old_end, new_at..new_end);
        if old_gap.is_empty() || new_gap.is_empty() {
            ops.replace(old_gap, new_gap);
        } else if budget.out_of_time() {
            ops.replace(old_gap, new_gap);
            approximate = true;
        } else {
            // Short stretches are diffed whatever is left of the budget: together they
            // cost at most SMALL_STRETCH_LINES times the file's length.
            let affordable = old_gap.len() + new_gap.len() <= SMALL_STRETCH_LINES || {
                let counts = LineCounts::of(&old[old_gap.clone()], &new[new_gap.clone()]);
                budget.reserve(myers_work(old_gap.len(), new_gap.len(), counts.min_edits()))
            };
            if affordable {
                let gap_ops = capture_diff_deadline(
                    Algorithm::Myers,
                    old,
                    old_gap,
                    new,
                    new_gap,
                    Some(budget.deadline),
                );
                for op in gap_ops {
                    ops.push(op);
                }
                approximate |= budget.out_of_time();
            } else {
                ops.replace(old_gap, new_gap);
                approximate = true;
            }
        }
        if is_anchor {
            ops.equal(old_end, new_end, 1);
        }
        (old_at, new_at) = (old_end + 1, new_end + 1);
    }
    ops.equal(old_mid.end, new_mid.end, old.len() - old_mid.end);
    (ops.0, approximate)
}

/// Estimated work of Myers' algorithm on `n` and `m` lines at least `min_edits` apart: it
/// searches about D² diagonals for D edits, and along the way follows runs of equal lines
/// ("snakes") over up to all N + M lines for each of about D of them.
///
/// `min_edits` is a lower bound of D, so this can underestimate (lines moved or reordered
/// cost edits the bound does not see); the request's deadline covers that.
fn myers_work(n: usize, m: usize, min_edits: u64) -> u64 {
    let lines = (n as u64).saturating_add(m as u64);
    min_edits
        .saturating_mul(min_edits)
        .saturating_add(min_edits.saturating_mul(lines) / SNAKE_STEPS_PER_DIAGONAL)
}

/// How often each line occurs on each side, and where its last occurrence is.
struct LineCounts<'a> {
    lines: HashMap<&'a str, Count>,
}

#[derive(Default)]
struct Count {
    old: usize,
    new: usize,
    new_at: usize,
}

impl<'a> LineCounts<'a> {
    fn of(old: &[&'a str], new: &[&'a str]) -> Self {
        // The default hasher: file contents are not ours to trust, and a hash that can be
        // flooded would make this quadratic again.
        let mut lines: HashMap<&'a str, Count> = HashMap::new();
        for &line in old {
            lines.entry(line).or_default().old += 1;
        }
        for (at, &line) in new.iter().enumerate() {
            let count = lines.entry(line).or_default();
            count.new += 1;
            count.new_at = at;
        }
        Self { lines }
    }

    /// A lower bound of the lines any diff must delete or insert: a line that occurs k
    /// times more often on one side than the other is deleted or inserted at least k times.
    fn min_edits(&self) -> u64 {
        self.lines
            .values()
            .map(|c| c.old.abs_diff(c.new) as u64)
            .fold(0, u64::saturating_add)
    }

    /// Positions `(in old, in new)` of the lines that occur exactly once on each side, as
    /// many as keep the same order on both (a longest increasing subsequence).
    fn anchors(&self, old: &[&str]) -> Vec<(usize, usize)> {
        let unique: Vec<(usize, usize)> = old
            .iter()
            .enumerate()
            .filter_map(|(at, line)| {
                let count = self.lines.get(*line)?;
                (count.old == 1 && count.new == 1).then_some((at, count.new_at))
            })
            .collect();
        longest_increasing(&unique)
    }
}

/// The longest subsequence of `pairs` (increasing in `.0`) that also increases in `.1`,
/// by patience sorting: O(n log n).
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // tails[k]: index in `pairs` of the smallest `.1` ending an increasing run of k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = Vec::with_capacity(pairs.len());
    for (index, &(_, new_at)) in pairs.iter().enumerate() {
        let length = tails.partition_point(|&t| pairs[t].1 < new_at);
        previous.push(length.checked_sub(1).map(|k| tails[k]));
        if length == tails.len() {
            tails.push(index);
        } else {
            tails[length] = index;
        }
    }
    let mut run = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(index) = at {
        run.push(pairs[index]);
        at = previous[index];
    }
    run.reverse();
    run
}

/// Ops in order, adjacent equal runs merged so that hunks split where `similar`'s would.
#[derive(Default)]
struct Ops(Vec<DiffOp>);

impl Ops {
    fn equal(&mut self, old_index: usize, new_index: usize, len: usize) {
        self.push(DiffOp::Equal {
            old_index,
            new_index,
            len,
        });
    }

    /// Deletes `old`, inserts `new`; either may be empty.
    fn replace(&mut self, old: Range<usize>, new: Range<usize>) {
        let op = match (old.is_empty(), new.is_empty()) {
            (true, true) => return,
            (false, true) => DiffOp::Delete {
                old_index: old.start,
                old_len: old.len(),
                new_index: new.start,
            },
            (true, false) => DiffOp::Insert {
                old_index: old.start,
                new_index: new.start,
                new_len: new.len(),
            },
            (false, false) => DiffOp::Replace {
                old_index: old.start,
                old_len: old.len(),
                new_index: new.start,
                new_len: new.len(),
            },
        };
        self.push(op);
    }

    /// An op of `tag` over these ranges (an equal run, or a replace of one
    /// side by the other, either possibly empty).
    fn replace_or_equal(&mut self, tag: DiffTag, old: Range<usize>, new: Range<usize>) {
        if tag == DiffTag::Equal {
            self.equal(old.start, new.start, old.len());
        } else {
            self.replace(old, new);
        }
    }

    fn push(&mut self, op: DiffOp) {
        if op.old_range().is_empty() && op.new_range().is_empty() {
            return;
        }
        if let (Some(DiffOp::Equal { old_index, len, .. }), DiffOp::Equal { len: more, .. }) =
            (self.0.last_mut(), op)
        {
            if *old_index + *len == op.old_range().start {
                *len += more;
                return;
            }
        }
        self.0.push(op);
    }
}

/// Groups ops into hunks rendered as `similar`'s `UnifiedDiff` does for a
/// `TextDiff::from_lines` (a unit test holds the two to the same output).
fn hunks(old: &[&str], new: &[&str], ops: Vec<DiffOp>, context: usize, ends: &[char]) -> Vec<Hunk> {
    // More context than the longer side changes nothing, and `group_diff_ops` doubles it.
    let context = context.min(old.len().max(new.len()));
    let mut out = Vec::new();
    for group in group_diff_ops(ops, context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        // As the `@@` header computes them (a range never runs backwards).
        let span = |start: usize, end: usize| start..end.max(start);
        let old_range = span(first.old_range().start, last.old_range().end);
        let new_range = span(first.new_range().start, last.new_range().end);
        let mut text = format!("{}\n", UnifiedHunkHeader::new(&group));
        for op in &group {
            let removed = old.get(op.old_range()).unwrap_or_default();
            let added = new.get(op.new_range()).unwrap_or_default();
            match op.tag() {
                DiffTag::Equal => push_lines(&mut text, ' ', removed, ends),
                DiffTag::Delete => push_lines(&mut text, '-', removed, ends),
                DiffTag::Insert => push_lines(&mut text, '+', added, ends),
                DiffTag::Replace => {
                    push_lines(&mut text, '-', removed, ends);
                    push_lines(&mut text, '+', added, ends);
                }
            }
        }
        out.push(Hunk {
            old: old_range,
            new: new_range,
            text,
        });
    }
    out
}

fn push_lines(out: &mut String, sign: char, lines: &[&str], ends: &[char]) {
    for line in lines {
        out.push(sign);
        out.push_str(line);
        if !line.ends_with(ends) {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

#[cfg(test)]
mod tests;
