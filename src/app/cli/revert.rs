//! The terminal side of selective rollback: `rewind revert` (one turn's
//! changes out, later ones kept), `rewind blame` (the turn behind each line)
//! and `rewind restore -p` (take back chosen hunks). Each asks the engine;
//! none decides anything itself.

use std::io::{BufRead, Write};

use anyhow::{anyhow, bail, Result};
use serde_json::json;

use super::rollback::{leaf_of, print_done};
use super::{ask, print_written, repo_paths};
use crate::app::args::{Location, RevertConflictMode};
use crate::app::plan::revert_plan_text;
use crate::app::points::path_checkpoints;
use crate::app::project::{locate, open_to_confirm};
use crate::app::two_step::{self, Step};
use rewind::engine::api::{
    CheckpointKind, FileBlameParams, FileDiffParams, HunkRef, HunkSelection, Point, RangeParams,
    RestoreFilesParams, RevertOnConflict, RevertParams, RevertStatus,
};
use rewind::engine::Engine;
use rewind::repo_path::RepoPath;
use rewind::session::EntryId;

impl From<RevertConflictMode> for RevertOnConflict {
    fn from(m: RevertConflictMode) -> Self {
        match m {
            RevertConflictMode::Abort => RevertOnConflict::Abort,
            RevertConflictMode::Skip => RevertOnConflict::Skip,
            RevertConflictMode::Markers => RevertOnConflict::Markers,
        }
    }
}

/// An entry id as given, or a turn number: the first and last checkpoint
/// of that turn's changes on the current path.
fn resolve_range(
    view: &Engine,
    arg: &str,
    to: Option<String>,
) -> Result<(EntryId, Option<EntryId>)> {
    let id = EntryId::from_input(arg);
    if view.has_entry(&id) {
        return Ok((id, to.map(EntryId::from_input)));
    }
    let Ok(turn) = arg.parse::<u64>() else {
        bail!("{arg} is neither an entry id of this session nor a turn number (see `rewind log`)");
    };
    if to.is_some() {
        bail!("--to takes an entry id; a turn number names its whole range already");
    }
    let path = path_checkpoints(view)?;
    let of_turn: Vec<_> = path
        .iter()
        // The turn's own changes: its tools' and its end's checkpoints (the
        // prompt's holds what happened before the turn).
        .filter(|c| c.turn_index == turn && c.kind.is_turn() && c.kind != CheckpointKind::Message)
        .collect();
    match (of_turn.first(), of_turn.last()) {
        (Some(first), Some(last)) => Ok((first.entry_id.clone(), Some(last.entry_id.clone()))),
        _ => bail!("turn {turn} has no checkpoint on the current path (see `rewind log`)"),
    }
}

pub fn revert(
    at: Location,
    entry: String,
    to: Option<String>,
    files: Vec<String>,
    on_conflict: RevertConflictMode,
    yes: bool,
) -> Result<()> {
    // The preview from a read-only view: nothing is appended until the
    // person says yes; then the session is opened for writing and the
    // revert done only if it still does what was shown (app/two_step.rs,
    // as restore and undo confirm).
    let config = locate(&at)?;
    let mut view = Engine::open_read_only(config.clone())?;
    let (entry_id, to_entry_id) = resolve_range(&view, &entry, to)?;
    let files = repo_paths(&files)?;
    let on_conflict: RevertOnConflict = on_conflict.into();
    let op = json!({
        "command": "revert",
        "entryId": entry_id.as_str(),
        "toEntryId": to_entry_id.as_ref().map(EntryId::as_str),
        "files": files.as_ref().map(|f| f.iter().map(RepoPath::as_str).collect::<Vec<_>>()),
        "onConflict": format!("{on_conflict:?}"),
    });
    let run = |e: &mut Engine, preview: bool| {
        e.revert(RevertParams {
            entry_id: entry_id.clone(),
            to_entry_id: to_entry_id.clone(),
            files: files.clone(),
            preview: Some(preview),
            on_conflict: Some(on_conflict),
        })
    };
    let shown = two_step::plan(&mut view, &op, &run).map_err(|e| anyhow!("{e}"))?;
    let plan = &shown.plan;
    match &to_entry_id {
        Some(to) if *to != entry_id => println!("Reverting checkpoints {entry_id}..{to}:"),
        _ => println!("Reverting checkpoint {entry_id}:"),
    }
    // What the person named the checkpoints taken out.
    for id in std::iter::once(&entry_id).chain(to_entry_id.as_ref().filter(|t| **t != entry_id)) {
        if let Some(line) = crate::app::plan::checkpoint_line(&view, id) {
            println!("  {line}");
        }
    }
    print!("{}", revert_plan_text(plan, true));
    let conflicts = plan
        .files
        .iter()
        .filter(|f| f.status == RevertStatus::Conflict)
        .count();
    if conflicts > 0 && on_conflict == RevertOnConflict::Abort {
        bail!(
            "{conflicts} file(s) conflict with later changes; nothing written \
             (--on-conflict skip writes the rest, markers writes conflict markers)"
        );
    }
    if plan.restored.is_empty() && plan.deleted.is_empty() {
        println!("Nothing to change.");
        return Ok(());
    }
    println!(
        "This will write {} file(s) and delete {} file(s).",
        plan.restored.len(),
        plan.deleted.len()
    );
    if !yes && !ask("Proceed?")? {
        return Ok(());
    }
    drop(view);
    let mut engine = open_to_confirm(config)?;
    match two_step::two_step(&mut engine, op, Some(&shown.token), run)
        .map_err(|e| anyhow!("{e}"))?
    {
        Step::Done(done) => {
            print_written(
                done.restored.len(),
                done.deleted.len(),
                done.unrevert_entry_id.as_ref(),
                &done.failed,
            );
            Ok(())
        }
        Step::Plan { plan: now, .. } => {
            println!("The revert, planned again now:");
            print!("{}", revert_plan_text(&now, true));
            bail!(
                "nothing was written: the files or the session changed since the plan was shown \
                 (run the command again to see the new plan)"
            )
        }
    }
}

pub fn blame(at: Location, file: String, at_entry: Option<String>) -> Result<()> {
    let mut view = Engine::open_read_only(locate(&at)?)?;
    let at = at_entry
        .as_deref()
        .map(|s| crate::app::points::point(&view, s))
        .transpose()?;
    let r = view.get_file_blame(FileBlameParams {
        path: RepoPath::parse(&file)?,
        at,
    })?;
    let width = r.lines.len().to_string().len();
    for l in &r.lines {
        let who = match &l.entry_id {
            Some(id) => format!("{id:<8} turn {:>3}", l.turn_index),
            None => format!("{:<8} {:>8}", "working", ""),
        };
        let label: String = l
            .label
            .as_deref()
            .unwrap_or(l.kind.as_str())
            .chars()
            .take(24)
            .collect();
        println!("{who} {label:<24} {:>width$}| {}", l.line, l.text);
    }
    if r.is_approximate {
        eprintln!(
            "rewind: some diff was too large to compute exactly: lines of a stretch shown \
             replaced wholesale are attributed to the later checkpoint"
        );
    }
    Ok(())
}

/// `rewind restore -p`: for each hunk of each file's diff from the target
/// to the working directory, ask whether to take it back (answers from
/// stdin: y, n, a = this and the rest of the file, d = none of the rest of
/// the file, q = stop asking), then restore the chosen hunks.
pub fn restore_patch(at: Location, target: Option<String>, files: Vec<String>) -> Result<()> {
    let config = locate(&at)?;
    let mut view = Engine::open_read_only(config.clone())?;
    let target = match target {
        Some(t) => EntryId::from_input(t),
        None => leaf_of(&view)?,
    };
    let changed = view.get_modified_files(RangeParams {
        from: Some(Point::Entry(target.clone())),
        to: Some(Point::Working),
    })?;
    let wanted = |p: &str| {
        files.is_empty()
            || files
                .iter()
                .any(|f| p == f || p.starts_with(&format!("{}/", f.trim_end_matches('/'))))
    };
    let mut selections = Vec::new();
    let mut whole = Vec::new();
    let stdin = std::io::stdin();
    let mut answers = stdin.lock().lines();
    let mut next_answer = |question: &str| -> Result<String> {
        print!("{question} ");
        std::io::stdout().flush()?;
        Ok(match answers.next() {
            Some(line) => line?.trim().to_string(),
            None => "q".into(),
        })
    };
    'files: for f in changed.files.iter().filter(|f| wanted(f.path.as_str())) {
        let Some(d) = view.get_file_diff(FileDiffParams {
            file_path: f.path.clone(),
            from: Some(Point::Entry(target.clone())),
            to: Some(Point::Working),
            context_lines: None,
        })?
        else {
            continue;
        };
        if d.is_binary || d.is_too_large || d.hunks.is_empty() {
            let what = if d.is_binary { "binary" } else { "too large" };
            println!("{} ({what}): no hunks", d.path);
            match next_answer("Restore the whole file [y,n,q]?")?.as_str() {
                "y" => whole.push(d.path.clone()),
                "q" => break 'files,
                _ => {}
            }
            continue;
        }
        // The hunks' texts, split from the unified diff they came from.
        let texts = split_hunks(&d.unified_diff);
        let mut chosen = Vec::new();
        let mut rest: Option<bool> = None;
        for (h, text) in d.hunks.iter().zip(&texts) {
            let take = match rest {
                Some(all) => all,
                None => {
                    println!("--- {}", d.path);
                    print!("{text}");
                    match next_answer(&format!(
                        "Take back this hunk ({}/{}) [y,n,a,d,q]?",
                        h.index + 1,
                        d.hunks.len()
                    ))?
                    .as_str()
                    {
                        "y" => true,
                        "a" => {
                            rest = Some(true);
                            true
                        }
                        "d" => {
                            rest = Some(false);
                            false
                        }
                        "q" => {
                            if !chosen.is_empty() {
                                selections.push(selection(&d.path, chosen));
                            }
                            break 'files;
                        }
                        _ => false,
                    }
                }
            };
            if take {
                chosen.push(HunkRef {
                    index: h.index,
                    hash: h.hash.clone(),
                });
            }
        }
        if !chosen.is_empty() {
            selections.push(selection(&d.path, chosen));
        }
    }
    if selections.is_empty() && whole.is_empty() {
        println!("Nothing chosen; nothing written.");
        return Ok(());
    }
    // The answers were the confirmation; what is written is what they
    // chose from, or nothing: planned on the view now, written only if the
    // files and the session are still as they were (app/two_step.rs).
    let files = (!whole.is_empty()).then_some(whole);
    let hunks = (!selections.is_empty()).then_some(selections);
    let op = json!({
        "command": "restore -p",
        "targetEntryId": target.as_str(),
        "files": files.as_ref().map(|f| f.iter().map(RepoPath::as_str).collect::<Vec<_>>()),
        "hunks": hunks.as_ref().map(|h| {
            h.iter()
                .map(|s| json!({
                    "path": s.path.as_str(),
                    "hunks": s.hunks.iter().map(|r| json!([r.index, r.hash])).collect::<Vec<_>>(),
                }))
                .collect::<Vec<_>>()
        }),
    });
    let run = |e: &mut Engine, preview: bool| {
        e.restore_files(RestoreFilesParams {
            target_entry_id: Some(target.clone()),
            files: files.clone(),
            hunks: hunks.clone(),
            preview: Some(preview),
            // Changes since the last checkpoint are kept in the
            // pre-restore snapshot.
            on_conflict: Some(rewind::engine::api::OnConflict::Overwrite),
            ..Default::default()
        })
    };
    let shown = two_step::plan(&mut view, &op, &run).map_err(|e| anyhow!("{e}"))?;
    drop(view);
    let mut engine = open_to_confirm(config)?;
    match two_step::two_step(&mut engine, op, Some(&shown.token), run)
        .map_err(|e| anyhow!("{e}"))?
    {
        Step::Done(done) => {
            print_done(&done);
            Ok(())
        }
        Step::Plan { .. } => bail!(
            "nothing was written: the files or the session changed while you chose \
             (run the command again to choose from the hunks as they are now)"
        ),
    }
}

fn selection(path: &RepoPath, hunks: Vec<HunkRef>) -> HunkSelection {
    HunkSelection {
        path: path.clone(),
        hunks,
        context_lines: None,
    }
}

/// The hunks of a unified diff, each with its `@@` header.
fn split_hunks(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if line.starts_with("@@ ") {
            out.push(String::new());
        }
        if let Some(h) = out.last_mut() {
            h.push_str(line);
        }
    }
    out
}
