//! How a plan reads before anything is written, for every front end: the
//! lines of a restore, undo or navigation plan (CLI and MCP), a revert plan
//! with its conflicts and diffs, and a restore plan's rows for the page.

use rewind::engine::api::{ConflictReason, RestoreResult, RevertResult, RevertStatus};
use rewind::repo_path::RepoPath;
use serde_json::{json, Value};

/// The checkpoint a plan goes to (or takes out), as a person named it: its
/// id, kind and turn, label and note — on one line, control characters
/// escaped. `None` for an id that is not a checkpoint of the session.
pub fn checkpoint_line(
    view: &rewind::engine::Engine,
    id: &rewind::session::EntryId,
) -> Option<String> {
    let list = view
        .list_checkpoints(rewind::engine::api::ListCheckpointsParams {
            scope: Some(rewind::engine::api::Scope::All),
            query: None,
        })
        .ok()?;
    let c = list.checkpoints.into_iter().find(|c| &c.entry_id == id)?;
    let mut line = format!(
        "checkpoint {} ({}, turn {})",
        c.entry_id, c.kind, c.turn_index
    );
    if let Some(l) = &c.label {
        line.push_str(&format!(" [{}]", rewind::printable::printable(l)));
    }
    if let Some(n) = &c.note {
        line.push_str(&format!(" — {}", rewind::printable::printable(n)));
    }
    Some(line)
}

/// Whether a restore plan changes nothing.
pub fn is_empty(plan: &RestoreResult) -> bool {
    plan.restored.is_empty() && plan.deleted.is_empty()
}

/// Why a conflict keeps a file, as a person reads it.
pub fn conflict_text(reason: ConflictReason) -> &'static str {
    match reason {
        ConflictReason::Dirty => "changed since it was last recorded",
        ConflictReason::InTheWay => "something never captured is in the way",
        ConflictReason::Unwritable => "could not be written",
        ConflictReason::Merge => "later changes overlap",
    }
}

/// A restore, undo or navigation plan for people (the CLI before it asks,
/// the MCP tools before the confirmation): what `what` would write, delete
/// and keep, and why.
pub fn restore_plan_text(what: &str, plan: &RestoreResult) -> String {
    let mut s = if is_empty(plan) && !plan.git_moved {
        format!("{what}: nothing to change.\n")
    } else {
        format!(
            "{what} would write {} file(s) and delete {} file(s):\n",
            plan.restored.len(),
            plan.deleted.len()
        )
    };
    let note = |p: &RepoPath| {
        if plan.dirty.contains(p) {
            "  (changed since the last checkpoint; undo brings it back)"
        } else {
            ""
        }
    };
    for p in &plan.restored {
        s.push_str(&format!("  write   {p}{}\n", note(p)));
    }
    for p in &plan.deleted {
        s.push_str(&format!("  delete  {p}{}\n", note(p)));
    }
    for c in &plan.conflicts {
        s.push_str(&format!(
            "  keep    {} ({})\n",
            c.path,
            conflict_text(c.reason)
        ));
    }
    for u in &plan.not_captured {
        s.push_str(&format!(
            "  keep    {} (the checkpoint did not capture it: {})\n",
            u.path,
            u.reason.as_str()
        ));
    }
    for w in &plan.warnings {
        if is_git_words(w) {
            s.push_str(&format!("  {w}\n"));
        } else {
            s.push_str(&format!("  warning: {w}\n"));
        }
    }
    s
}

/// What git did since, and what `--git` does, read as lines of their own
/// ("git: 2 commits since this checkpoint: ..."), not as warnings.
fn is_git_words(w: &str) -> bool {
    w.starts_with("git: ") || w.starts_with("git (--git): ")
}

/// A restore plan's notes for the page, as the CLI prints them: git's words
/// (`kind: "git"`) and the other warnings (`kind: "warning"`).
pub fn plan_notes(plan: &RestoreResult) -> Vec<Value> {
    plan.warnings
        .iter()
        .map(|w| {
            let kind = if is_git_words(w) { "git" } else { "warning" };
            json!({ "kind": kind, "text": w })
        })
        .collect()
}

/// A restore plan's per-file actions for the page: write, delete or keep.
pub fn plan_files(plan: &RestoreResult) -> Vec<Value> {
    let mut files = Vec::new();
    for p in &plan.restored {
        files.push(json!({ "path": p.as_str(), "action": "write" }));
    }
    for p in &plan.deleted {
        files.push(json!({ "path": p.as_str(), "action": "delete" }));
    }
    // A dirty file that is skipped is in both lists: one row.
    let kept: std::collections::BTreeSet<&RepoPath> = plan
        .skipped
        .iter()
        .chain(&plan.dirty)
        .filter(|p| !plan.restored.contains(p) && !plan.deleted.contains(p))
        .collect();
    for p in kept {
        match plan.not_captured.iter().find(|u| &u.path == p) {
            Some(u) => files.push(json!({
                "path": p.as_str(),
                "action": "keep",
                "reason": format!("not captured by the target: {}", u.reason.as_str()),
            })),
            None => files.push(json!({ "path": p.as_str(), "action": "keep" })),
        }
    }
    files
}

/// A revert plan for people: each file's outcome and reason, the
/// conflicting lines, then (with `with_diffs`) the diffs. Also the MCP
/// `revert` tool's text.
pub(crate) fn revert_plan_text(r: &RevertResult, with_diffs: bool) -> String {
    let mut out = String::new();
    for f in &r.files {
        let status = match f.status {
            RevertStatus::Clean => "clean",
            RevertStatus::Conflict => "CONFLICT",
            RevertStatus::Skip => "skip",
        };
        let reason = f
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {status:<8} {:<6} {}{reason}\n",
            f.action.as_str(),
            f.path
        ));
        for c in &f.conflicts {
            out.push_str("    now:\n");
            push_indented(&mut out, &c.current, "      | ");
            out.push_str("    before the reverted change:\n");
            push_indented(&mut out, &c.before, "      | ");
        }
    }
    if with_diffs {
        for f in r.files.iter().filter(|f| !f.diff.is_empty()) {
            out.push_str(&f.diff);
        }
    }
    out
}

fn push_indented(out: &mut String, text: &str, prefix: &str) {
    for line in text.lines() {
        out.push_str(prefix);
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dirty file a restore skips is listed once, as kept (it was listed twice).
    #[test]
    fn a_skipped_dirty_file_is_one_kept_row() {
        let p = |s: &str| RepoPath::parse(s).unwrap();
        let plan = RestoreResult {
            restored: vec![p("a.txt")],
            skipped: vec![p("b.txt")],
            dirty: vec![p("b.txt")],
            ..Default::default()
        };
        assert_eq!(
            plan_files(&plan),
            vec![
                json!({"path": "a.txt", "action": "write"}),
                json!({"path": "b.txt", "action": "keep"}),
            ]
        );
    }

    /// A restore plan reads the same in the CLI and the MCP tools: writes,
    /// deletions, kept files with why (a conflict, not captured by the
    /// target), warnings.
    #[test]
    fn a_restore_plan_says_what_it_keeps_and_why() {
        use rewind::engine::api::{Conflict, Uncaptured, UncapturedReason};
        let p = |s: &str| RepoPath::parse(s).unwrap();
        let plan = RestoreResult {
            restored: vec![p("a.txt")],
            deleted: vec![p("gone.txt")],
            dirty: vec![p("a.txt")],
            conflicts: vec![Conflict {
                path: p("b.txt"),
                reason: ConflictReason::InTheWay,
            }],
            not_captured: vec![Uncaptured {
                path: p("db.sqlite"),
                reason: UncapturedReason::Unstable,
            }],
            warnings: vec!["git HEAD moved".into()],
            ..Default::default()
        };
        assert_eq!(
            restore_plan_text("The restore", &plan),
            "The restore would write 1 file(s) and delete 1 file(s):\n\
             \x20 write   a.txt  (changed since the last checkpoint; undo brings it back)\n\
             \x20 delete  gone.txt\n\
             \x20 keep    b.txt (something never captured is in the way)\n\
             \x20 keep    db.sqlite (the checkpoint did not capture it: unstable)\n\
             \x20 warning: git HEAD moved\n"
        );
        assert_eq!(
            restore_plan_text("Undo", &RestoreResult::default()),
            "Undo: nothing to change.\n"
        );
    }

    /// What git did since reads as lines of their own, and a plan that
    /// only moves git (`--git`) is not "nothing to change".
    #[test]
    fn git_lines_read_as_lines_and_a_git_move_is_a_change() {
        let plan = RestoreResult {
            warnings: vec![
                "git: 2 commits since this checkpoint: 'cleanup', 'wip'".into(),
                "git (--git): HEAD moves to 1a2b3c4".into(),
            ],
            git_moved: true,
            ..Default::default()
        };
        assert_eq!(
            restore_plan_text("The restore", &plan),
            "The restore would write 0 file(s) and delete 0 file(s):\n\
             \x20 git: 2 commits since this checkpoint: 'cleanup', 'wip'\n\
             \x20 git (--git): HEAD moves to 1a2b3c4\n"
        );
        // The page gets the same lines, each marked as the CLI reads it.
        let plan = RestoreResult {
            warnings: vec![
                "git: branch 'main' then, 'feature' now".into(),
                "something else".into(),
            ],
            ..Default::default()
        };
        assert_eq!(
            plan_notes(&plan),
            vec![
                json!({"kind": "git", "text": "git: branch 'main' then, 'feature' now"}),
                json!({"kind": "warning", "text": "something else"}),
            ]
        );
    }
}
