//! Putting files back at the terminal: `rewind restore` and `rewind undo`.
//! Each shows the engine's plan from a read-only view, asks, then writes
//! through the session opened for writing.

use anyhow::{bail, Context, Result};
use rewind::engine::api::{
    CheckpointKind, OnConflict, RestoreFilesParams, RestoreResult, UndoParams,
};
use rewind::engine::Engine;
use rewind::session::EntryId;
use rewind::store::ObjectId;

use super::{ask, print_written, repo_paths};
use crate::app::args::{Confirm, ConflictMode, Location};
use crate::app::plan;
use crate::app::points::{before_last_turn, path_checkpoints};
use crate::app::project::{locate, open_for_writing};

impl From<ConflictMode> for OnConflict {
    fn from(m: ConflictMode) -> OnConflict {
        match m {
            ConflictMode::Skip => OnConflict::Skip,
            ConflictMode::Overwrite => OnConflict::Overwrite,
            ConflictMode::Abort => OnConflict::Abort,
        }
    }
}

/// Show the plan and ask; `false` when nothing should be written.
fn confirmed(what: &str, plan: &RestoreResult, confirm: &Confirm) -> Result<bool> {
    print!("{}", plan::restore_plan_text(what, plan));
    if plan::is_empty(plan) && !plan.git_moved {
        return Ok(false);
    }
    Ok(confirm.yes || ask("Proceed?")?)
}

pub(crate) fn print_done(r: &RestoreResult) {
    print_written(
        r.restored.len(),
        r.deleted.len(),
        r.unrevert_entry_id.as_ref(),
        &r.conflicts,
    );
}

/// [`print_done`], then what the restore found that its plan did not say
/// (what `--git` did to git: moved, or why not).
fn print_done_after(plan: &RestoreResult, r: &RestoreResult) {
    print_done(r);
    for w in r.warnings.iter().filter(|w| !plan.warnings.contains(w)) {
        println!("  {w}");
    }
}

pub fn restore(
    at: Location,
    target: Option<String>,
    files: Vec<String>,
    before_step: Option<usize>,
    git: bool,
    confirm: Confirm,
) -> Result<()> {
    // The preview comes from a read-only view: nothing is appended until the
    // person says yes. With no target, "the last checkpoint" is the leaf as
    // the session stands now (opening it for writing records the edits
    // made since as an `outside` snapshot, which must not become the
    // target).
    let view = Engine::open_read_only(locate(&at)?)?;
    let (target_entry_id, tree_hash) = match before_step {
        Some(step) => {
            let turn = target
                .as_deref()
                .and_then(|t| t.parse::<u64>().ok())
                .context("--before-step needs the turn number as TARGET")?;
            let id = before_step_of(&view, turn, step)?;
            println!("before step {step} of turn {turn}: checkpoint {id}");
            (Some(id), None)
        }
        None => match target {
            Some(t) if t.len() == 32 && t.chars().all(|c| c.is_ascii_hexdigit()) => {
                (None, Some(ObjectId::from_hex(&t)?))
            }
            Some(t) => (Some(EntryId::from_input(t)), None),
            None => (Some(leaf_of(&view)?), None),
        },
    };
    restore_from(at, view, target_entry_id, tree_hash, files, git, confirm)
}

/// `rewind restore` once its target is known: the plan from `view`, then
/// the restore through the session opened for writing.
fn restore_from(
    at: Location,
    mut view: Engine,
    target_entry_id: Option<EntryId>,
    tree_hash: Option<ObjectId>,
    files: Vec<String>,
    git: bool,
    confirm: Confirm,
) -> Result<()> {
    let files = repo_paths(&files)?;
    let params = |preview: bool| RestoreFilesParams {
        target_entry_id: target_entry_id.clone(),
        tree_hash,
        files: files.clone(),
        preview: Some(preview),
        on_conflict: Some(confirm.on_conflict.into()),
        hunks: None,
        git: Some(git),
    };
    let plan = view.restore_files(params(true))?;
    if !confirmed("The restore", &plan, &confirm)? {
        return Ok(());
    }
    drop(view);
    let mut engine = open_for_writing(&at)?;
    print_done_after(&plan, &engine.restore_files(params(false))?);
    Ok(())
}

/// The session's leaf entry as it stands.
pub(crate) fn leaf_of(view: &Engine) -> Result<EntryId> {
    view.leaf()
        .cloned()
        .context("the session has no entries yet: nothing to restore")
}

/// The checkpoint just before the `step`-th tool checkpoint of `turn` (as
/// `rewind log` numbers them).
fn before_step_of(view: &Engine, turn: u64, step: usize) -> Result<EntryId> {
    let path = path_checkpoints(view)?;
    let steps: Vec<usize> = (0..path.len())
        .filter(|&i| path[i].turn_index == turn && path[i].kind == CheckpointKind::Tool)
        .collect();
    let Some(&i) = step.checked_sub(1).and_then(|k| steps.get(k)) else {
        bail!(
            "turn {turn} has {} step(s) on the current path (see `rewind log`)",
            steps.len()
        );
    };
    match i.checked_sub(1) {
        Some(before) => Ok(path[before].entry_id.clone()),
        None => bail!("step {step} of turn {turn} has no checkpoint before it"),
    }
}

pub fn undo(at: Location, entry: Option<String>, git: bool, confirm: Confirm) -> Result<()> {
    // Preview from a read-only view; the named (or latest) unrevert-point is
    // fixed before the session is opened for writing.
    let mut view = Engine::open_read_only(locate(&at)?)?;
    if entry.is_none() {
        if let Some((turn, id)) = before_last_turn(&view)? {
            println!("putting back the state before turn {turn} (checkpoint {id})");
            return restore_from(at, view, Some(id), None, Vec::new(), git, confirm);
        }
    }

    let params = |preview: bool| UndoParams {
        entry_id: entry.clone().map(EntryId::from_input),
        on_conflict: Some(confirm.on_conflict.into()),
        preview: Some(preview),
        git: Some(git),
    };
    let plan = view.undo(params(true))?;
    if !confirmed("Undo", &plan, &confirm)? {
        return Ok(());
    }
    drop(view);
    let mut engine = open_for_writing(&at)?;
    print_done_after(&plan, &engine.undo(params(false))?);
    Ok(())
}
