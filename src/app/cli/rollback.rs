//! Putting files back at the terminal: `rewind restore` and `rewind undo`.
//! Each shows the engine's plan from a read-only view, asks, then writes
//! through the session opened for writing — only while the plan still holds
//! (`app/two_step.rs`), so it writes exactly what it showed. With `--conversation` (or
//! `--conversation-only`) the agent's conversation is forked at the same
//! checkpoint (app/conversation/, docs/agents.md "Restoring the
//! conversation"): prepared and checked from the same view before any file
//! is written, written after the files.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use rewind::engine::api::{
    CheckpointKind, OnConflict, RestoreFilesParams, RestoreResult, UndoParams,
};
use rewind::engine::{Engine, EngineConfig, EngineError};
use rewind::session::EntryId;
use rewind::sidecar::convert::to_json;
use rewind::store::{Layout, ObjectId};
use serde_json::{json, Map, Value};

use super::{ask, print_written, repo_paths};
use crate::app::args::{Confirm, ConflictMode, ConversationOpts, Location};
use crate::app::conversation::fork::{self, agent_title, shell_line, Fork, Prepared, Refused};
use crate::app::plan;
use crate::app::points::{self, before_last_turn, path_checkpoints};
use crate::app::project::{locate, open_to_confirm, project_and_store};
use crate::app::two_step::{self, Step};

/// The exit status of a restore whose conversation part was refused (the
/// files, when asked for, were restored).
pub const CONVERSATION_REFUSED: u8 = 3;

/// The conversation part of a restore was refused: why, in one line.
#[derive(Debug, thiserror::Error)]
#[error("the conversation was not restored: {0}")]
pub struct ConversationRefused(pub String);

impl From<ConflictMode> for OnConflict {
    fn from(m: ConflictMode) -> OnConflict {
        match m {
            ConflictMode::Skip => OnConflict::Skip,
            ConflictMode::Overwrite => OnConflict::Overwrite,
            ConflictMode::Abort => OnConflict::Abort,
        }
    }
}

/// Show the plan (on stderr when stdout is JSON) and ask; `false` when
/// nothing should be written.
fn confirmed(what: &str, plan: &RestoreResult, confirm: &Confirm, json: bool) -> Result<bool> {
    let text = plan::restore_plan_text(what, plan);
    if json {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    if matches!(confirm.on_conflict, ConflictMode::Abort) && !plan.conflicts.is_empty() {
        bail!(
            "nothing was written: {} file(s) conflict and --on-conflict abort was given",
            plan.conflicts.len()
        );
    }
    if plan::is_empty(plan) && !plan.git_moved {
        return Ok(false);
    }
    Ok(confirm.yes || ask("Proceed?")?)
}

/// What a two-step write came to.
enum Outcome {
    /// The plan writes nothing.
    NothingToDo,
    /// The person said no (or could not be asked).
    Declined,
    Done(RestoreResult),
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
    json: bool,
    run: impl Fn(&mut Engine, bool) -> Result<RestoreResult, EngineError>,
) -> Result<Outcome> {
    let shown = two_step::plan(&mut view, &op, &run).map_err(|e| anyhow!("{e}"))?;
    let empty = plan::is_empty(&shown.plan) && !shown.plan.git_moved;
    if !confirmed(what, &shown.plan, confirm, json)? {
        return Ok(if empty {
            Outcome::NothingToDo
        } else {
            Outcome::Declined
        });
    }
    drop(view);
    let mut engine = open_to_confirm(config)?;
    match two_step::two_step(&mut engine, op, Some(&shown.token), &run)
        .map_err(|e| anyhow!("{e}"))?
    {
        Step::Done(done) => {
            if !json {
                print_done_after(&shown.plan, &done);
            }
            Ok(Outcome::Done(done))
        }
        Step::Plan { plan: now, .. } => {
            let text = plan::restore_plan_text(&format!("{what}, planned again now,"), &now);
            if json {
                eprint!("{text}");
            } else {
                print!("{text}");
            }
            bail!(
                "nothing was written: the files or the session changed since the plan was shown \
                 (run the command again to see the new plan)"
            )
        }
    }
}

/// [`print_done`], then what the restore found that its plan did not say
/// (what `--git` did to git: moved, or why not).
fn print_done_after(plan: &RestoreResult, r: &RestoreResult) {
    print_done(r);
    for w in r.warnings.iter().filter(|w| !plan.warnings.contains(w)) {
        println!("  {w}");
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

/// Refuse what cannot be asked together, before anything is read.
fn check_opts(confirm: &Confirm, conv: &ConversationOpts) -> Result<()> {
    if conv.launch && !conv.wanted() {
        bail!("--launch continues a conversation: pass --conversation or --conversation-only");
    }
    if conv.launch && conv.json {
        bail!("--launch and --json exclude each other");
    }
    if conv.json && !confirm.yes && !conv.conversation_only {
        bail!("--json does not ask: pass --yes to write the files");
    }
    Ok(())
}

pub fn restore(
    at: Location,
    target: Option<String>,
    files: Vec<String>,
    before_step: Option<usize>,
    git: bool,
    confirm: Confirm,
    conv: ConversationOpts,
) -> Result<()> {
    check_opts(&confirm, &conv)?;
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
            say(
                &conv,
                &format!("before step {step} of turn {turn}: checkpoint {id}"),
            );
            (Some(id), None)
        }
        None => match target {
            Some(t) if t.len() == 32 && t.chars().all(|c| c.is_ascii_hexdigit()) => {
                (None, Some(ObjectId::from_hex(&t)?))
            }
            Some(t) => match points::turn_number(&t) {
                Some(turn) => {
                    let id = points::turn_start(&view, turn)?;
                    say(&conv, &format!("the start of turn {turn}: checkpoint {id}"));
                    (Some(id), None)
                }
                None => (Some(EntryId::from_input(t)), None),
            },
            None => (Some(leaf_of(&view)?), None),
        },
    };
    let fork = match (&target_entry_id, conv.wanted()) {
        (Some(id), true) => Some(prepare(&view, id, &at)?),
        (None, true) => bail!("a tree hash names no conversation: give a checkpoint's entry id"),
        (_, false) => None,
    };
    restore_from(
        at,
        config,
        view,
        target_entry_id,
        tree_hash,
        files,
        git,
        confirm,
        conv,
        fork,
    )
}

/// A line for the person (on stderr when stdout is JSON).
fn say(conv: &ConversationOpts, line: &str) {
    if conv.json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// The fork of the conversation at `id`, checked (nothing written):
/// `Err` inside for a refusal, which leaves the files' part as it is.
fn prepare(
    view: &Engine,
    id: &EntryId,
    at: &Location,
) -> Result<std::result::Result<Prepared, Refused>> {
    let conversation = view.conversation_at(id)?;
    let (_, store) = project_and_store(at)?;
    Ok(fork::prepare(view, &conversation, &Layout::new(&store)))
}

/// `rewind restore` once its target is known: the plan from `view`, then
/// the restore through the session opened for writing, then the
/// conversation's fork (`fork`, prepared from the same view).
#[allow(clippy::too_many_arguments)]
fn restore_from(
    at: Location,
    config: EngineConfig,
    view: Engine,
    target_entry_id: Option<EntryId>,
    tree_hash: Option<ObjectId>,
    files: Vec<String>,
    git: bool,
    confirm: Confirm,
    conv: ConversationOpts,
    fork: Option<std::result::Result<Prepared, Refused>>,
) -> Result<()> {
    if let Some(line) = target_entry_id
        .as_ref()
        .and_then(|id| plan::checkpoint_line(&view, id))
    {
        say(&conv, &format!("to {line}"));
    }
    let files = match conv.conversation_only {
        true => None,
        false => {
            let files = repo_paths(&files)?;
            let on_conflict: OnConflict = confirm.on_conflict.into();
            let op = json!({
                "command": "restore",
                "targetEntryId": target_entry_id.as_ref().map(EntryId::as_str),
                "treeHash": tree_hash.map(|t| t.to_hex()),
                "files": files.as_ref().map(|f| f.iter().map(|p| p.as_str()).collect::<Vec<_>>()),
                "onConflict": format!("{on_conflict:?}"),
                "git": git,
            });
            let run = move |e: &mut Engine, preview: bool| {
                e.restore_files(RestoreFilesParams {
                    target_entry_id: target_entry_id.clone(),
                    tree_hash,
                    files: files.clone(),
                    preview: Some(preview),
                    on_conflict: Some(on_conflict),
                    hunks: None,
                    git: Some(git),
                })
            };
            Some(FilesPart {
                what: "The restore",
                op,
                run,
            })
        }
    };
    files_then_conversation(&at, config, view, files, &confirm, &conv, fork)
}

/// The files' part of a restore or undo: what the plan is called, the
/// operation its confirmation token binds, and what plans (`true`: preview)
/// and writes it.
struct FilesPart<R> {
    what: &'static str,
    op: Value,
    run: R,
}

/// The files' part in two steps ([`plan_then_write`]; `None`: the
/// conversation alone was asked for), then the conversation's fork. A
/// declined plan writes nothing at all, the conversation neither.
fn files_then_conversation<R>(
    at: &Location,
    config: EngineConfig,
    view: Engine,
    files: Option<FilesPart<R>>,
    confirm: &Confirm,
    conv: &ConversationOpts,
    fork: Option<std::result::Result<Prepared, Refused>>,
) -> Result<()>
where
    R: Fn(&mut Engine, bool) -> Result<RestoreResult, EngineError>,
{
    let restored = match files {
        None => {
            drop(view);
            None
        }
        Some(f) => match plan_then_write(config, view, f.what, f.op, confirm, conv.json, f.run)? {
            Outcome::Declined => return Ok(()),
            Outcome::NothingToDo => None,
            Outcome::Done(done) => Some(done),
        },
    };
    finish(fork, restored, at, conv)
}

/// Write the conversation's fork (when asked for) and say how to continue
/// it; the JSON answer; `--launch`.
fn finish(
    fork: Option<std::result::Result<Prepared, Refused>>,
    restored: Option<RestoreResult>,
    at: &Location,
    conv: &ConversationOpts,
) -> Result<()> {
    let (root, store) = project_and_store(at)?;
    let written = fork.map(|p| p.and_then(|p| fork::write(p, &Layout::new(&store))));
    if conv.json {
        let mut out = Map::new();
        if let Some(c) = &written {
            out.insert(
                "conversation".into(),
                match c {
                    Ok(f) => json!({
                        "agent": f.agent.name(),
                        "sessionId": f.session_id,
                        "resumeCommand": f.resume_command,
                    }),
                    Err(r) => json!({ "refused": r.0 }),
                },
            );
        }
        if let Some(r) = &restored {
            out.insert("restore".into(), to_json(r)?);
        }
        println!("{}", Value::Object(out));
    } else if let Some(Ok(f)) = &written {
        print_fork(f, &root);
    }
    match written {
        Some(Err(r)) => Err(ConversationRefused(r.0).into()),
        Some(Ok(f)) if conv.launch => launch(&f, &root),
        _ => Ok(()),
    }
}

/// What a fork holds, and the one command that continues it.
fn print_fork(f: &Fork, root: &Path) {
    let what = match f.turns_kept {
        0 => "an empty conversation".to_string(),
        1 => "the conversation's turn 1".to_string(),
        n => format!("the conversation's turns 1-{n}"),
    };
    let how = match &f.file {
        Some(_) => format!("a new {} session holds {what}", agent_title(f.agent)),
        None => format!("{what}: a new {} session", agent_title(f.agent)),
    };
    println!(
        "Conversation: {how} (the original is unchanged). Continue it in {}:",
        root.display()
    );
    println!("  {}", shell_line(&f.resume_command));
}

/// Run the command that continues the conversation, in the project, in
/// place of this process.
fn launch(f: &Fork, root: &Path) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let Some((program, args)) = f.resume_command.split_first() else {
        bail!("no command to run");
    };
    let err = std::process::Command::new(program)
        .args(args)
        .current_dir(root)
        .exec();
    Err(err).with_context(|| format!("running {program}"))
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

pub fn undo(
    at: Location,
    entry: Option<String>,
    git: bool,
    confirm: Confirm,
    conv: ConversationOpts,
) -> Result<()> {
    check_opts(&confirm, &conv)?;
    // Preview from a read-only view; the named (or latest) unrevert-point is
    // fixed before the session is opened for writing.
    let config = locate(&at)?;
    let view = Engine::open_read_only(config.clone())?;
    if entry.is_none() {
        if let Some((turn, id)) = before_last_turn(&view)? {
            say(
                &conv,
                &format!("putting back the state before turn {turn} (checkpoint {id})"),
            );
            let fork = match conv.wanted() {
                true => Some(prepare(&view, &id, &at)?),
                false => None,
            };
            return restore_from(
                at,
                config,
                view,
                Some(id),
                None,
                Vec::new(),
                git,
                confirm,
                conv,
                fork,
            );
        }
    }
    let entry = entry.map(EntryId::from_input);
    // Undoing a restore brings back the state before it: the conversation
    // of the agent's checkpoint above the unrevert-point.
    let fork = match conv.wanted() {
        true => {
            let unrevert = match &entry {
                Some(id) => id.clone(),
                None => path_checkpoints(&view)?
                    .into_iter()
                    .rev()
                    .find(|c| c.kind.is_rollback())
                    .map(|c| c.entry_id)
                    .context("nothing to undo")?,
            };
            Some(prepare(&view, &unrevert, &at)?)
        }
        false => None,
    };
    let files = match conv.conversation_only {
        true => None,
        false => {
            let on_conflict: OnConflict = confirm.on_conflict.into();
            let op = json!({
                "command": "undo",
                "entryId": entry.as_ref().map(EntryId::as_str),
                "onConflict": format!("{on_conflict:?}"),
                "git": git,
            });
            let run = move |e: &mut Engine, preview: bool| {
                e.undo(UndoParams {
                    entry_id: entry.clone(),
                    on_conflict: Some(on_conflict),
                    preview: Some(preview),
                    git: Some(git),
                })
            };
            Some(FilesPart {
                what: "Undo",
                op,
                run,
            })
        }
    };
    files_then_conversation(&at, config, view, files, &confirm, &conv, fork)
}
