//! Putting files back at the terminal: `rewind restore` and `rewind undo`.
//! Each shows the engine's plan from a read-only view, asks, then writes
//! through the session opened for writing — only while the plan still holds
//! (`app/two_step.rs`), so it writes exactly what it showed.

use anyhow::{anyhow, bail, Context, Result};
use rewind::engine::api::{
    CheckpointKind, OnConflict, RestoreFilesParams, RestoreResult, UndoParams,
};
use rewind::engine::{Engine, EngineConfig, EngineError, ResumeMode};
use rewind::session::EntryId;
use rewind::store::ObjectId;
use serde_json::{json, Value};

use super::{ask, print_written, repo_paths};
use crate::app::args::{Confirm, ConflictMode, Location};
use crate::app::plan;
use crate::app::points::{before_last_turn, path_checkpoints};
use crate::app::project::locate;
use crate::app::two_step::{self, Step};

impl From<ConflictMode> for OnConflict {
    fn from(m: ConflictMode) -> OnConflict {
        match m {
            ConflictMode::Skip => OnConflict::Skip,
            ConflictMode::Overwrite => OnConflict::Overwrite,
            ConflictMode::Abort => OnConflict::Abort,
        }
    }
}

/// Show the plan and ask; `false` when nothing should be written. Under
/// `--on-conflict abort` a plan with conflicts is refused before asking.
fn confirmed(what: &str, plan: &RestoreResult, confirm: &Confirm) -> Result<bool> {
    print!("{}", plan::restore_plan_text(what, plan));
    if matches!(confirm.on_conflict, ConflictMode::Abort) && !plan.conflicts.is_empty() {
        bail!(
            "nothing was written: {} file(s) conflict and --on-conflict abort was given",
            plan.conflicts.len()
        );
    }
    if plan::is_empty(plan) {
        return Ok(false);
    }
    Ok(confirm.yes || ask("Proceed?")?)
}

/// A restore or undo in two steps: `run` plans on `view` (read-only, nothing
/// appended while the person decides), the person confirms, then the session
/// `config` names is opened for writing and `run` writes — only if it would
/// still do exactly what was shown (the plan, the files on disk and the
/// session's leaf unchanged: `app/two_step.rs`, as MCP and the page confirm).
fn plan_then_write(
    config: EngineConfig,
    mut view: Engine,
    what: &str,
    op: Value,
    confirm: &Confirm,
    run: impl Fn(&mut Engine, bool) -> Result<RestoreResult, EngineError>,
) -> Result<()> {
    let shown = two_step::plan(&mut view, &op, &run).map_err(|e| anyhow!("{e}"))?;
    if !confirmed(what, &shown.plan, confirm)? {
        return Ok(());
    }
    drop(view);
    let mut engine = open_to_write(config)?;
    match two_step::two_step(&mut engine, op, Some(&shown.token), &run)
        .map_err(|e| anyhow!("{e}"))?
    {
        Step::Done(done) => {
            print_done(&done);
            Ok(())
        }
        Step::Plan { plan: now, .. } => {
            print!(
                "{}",
                plan::restore_plan_text(&format!("{what}, planned again now,"), &now)
            );
            bail!(
                "nothing was written: the files or the session changed since the plan was shown \
                 (run the command again to see the new plan)"
            )
        }
    }
}

/// The session `config` names, locked for the confirmed write. Opened as
/// MCP's and the page's writes are (`ResumeMode::Continue`): the edits made
/// since its last entry are not recorded as an `outside` snapshot first,
/// which would make them the recorded state and change the plan (files the
/// plan keeps as changed since would no longer be); the restore's
/// pre-restore snapshot records them before any file is touched
/// (docs/architecture.md rule 1).
fn open_to_write(mut config: EngineConfig) -> Result<Engine> {
    config.resume = ResumeMode::Continue;
    match Engine::open(config) {
        Ok((engine, _)) => Ok(engine),
        Err(e) if e.is_locked() => bail!(
            "{e}: a sidecar is running on this session; ask it (restore_files / undo) or stop it first"
        ),
        Err(e) => Err(e.into()),
    }
}

pub(crate) fn print_done(r: &RestoreResult) {
    print_written(
        r.restored.len(),
        r.deleted.len(),
        r.unrevert_entry_id.as_ref(),
        &r.conflicts,
    );
}

pub fn restore(
    at: Location,
    target: Option<String>,
    files: Vec<String>,
    before_step: Option<usize>,
    confirm: Confirm,
) -> Result<()> {
    // The preview comes from a read-only view: nothing is appended until the
    // person says yes. With no target, "the last checkpoint" is the leaf as
    // the session stands now.
    let config = locate(&at)?;
    let view = Engine::open_read_only(config.clone())?;
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
    restore_from(config, view, target_entry_id, tree_hash, files, confirm)
}

/// `rewind restore` once its target is known: the plan from `view`, then
/// the restore through the session opened for writing.
fn restore_from(
    config: EngineConfig,
    view: Engine,
    target_entry_id: Option<EntryId>,
    tree_hash: Option<ObjectId>,
    files: Vec<String>,
    confirm: Confirm,
) -> Result<()> {
    let files = repo_paths(&files)?;
    let on_conflict: OnConflict = confirm.on_conflict.into();
    let op = json!({
        "command": "restore",
        "targetEntryId": target_entry_id.as_ref().map(EntryId::as_str),
        "treeHash": tree_hash.map(|t| t.to_hex()),
        "files": files.as_ref().map(|f| f.iter().map(|p| p.as_str()).collect::<Vec<_>>()),
        "onConflict": format!("{on_conflict:?}"),
    });
    plan_then_write(
        config,
        view,
        "The restore",
        op,
        &confirm,
        move |e, preview| {
            e.restore_files(RestoreFilesParams {
                target_entry_id: target_entry_id.clone(),
                tree_hash,
                files: files.clone(),
                preview: Some(preview),
                on_conflict: Some(on_conflict),
                hunks: None,
            })
        },
    )
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

pub fn undo(at: Location, entry: Option<String>, confirm: Confirm) -> Result<()> {
    // Preview from a read-only view; the named (or latest) unrevert-point is
    // fixed before the session is opened for writing.
    let config = locate(&at)?;
    let view = Engine::open_read_only(config.clone())?;
    if entry.is_none() {
        if let Some((turn, id)) = before_last_turn(&view)? {
            println!("putting back the state before turn {turn} (checkpoint {id})");
            return restore_from(config, view, Some(id), None, Vec::new(), confirm);
        }
    }
    let entry_id = entry.map(EntryId::from_input);
    let on_conflict: OnConflict = confirm.on_conflict.into();
    let op = json!({
        "command": "undo",
        "entryId": entry_id.as_ref().map(EntryId::as_str),
        "onConflict": format!("{on_conflict:?}"),
    });
    plan_then_write(config, view, "Undo", op, &confirm, move |e, preview| {
        e.undo(UndoParams {
            entry_id: entry_id.clone(),
            on_conflict: Some(on_conflict),
            preview: Some(preview),
        })
    })
}
