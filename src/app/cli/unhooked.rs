//! For agents and tools without hooks (Cursor, Copilot, Aider, an IDE, a
//! code generator): `rewind run -- CMD` records one command as one turn,
//! `rewind watch` records a checkpoint each time a burst of writes settles.
//! Both resume the project's newest session, or start one. `watch` stands
//! down while automatic checkpoints are paused (`rewind pause`).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rewind::engine::api::{SnapshotKind, SnapshotParams};
use rewind::engine::Engine;
use rewind::session::EntryId;

use crate::app::args::Location;
use crate::app::project::open_or_start;

/// A checkpoint of `kind`, recorded changed or not; `new_turn` starts the
/// next turn, else it belongs to the current one.
fn snapshot(
    engine: &mut Engine,
    kind: SnapshotKind,
    label: String,
    new_turn: bool,
) -> Result<Option<EntryId>> {
    let turn = engine
        .list_checkpoints(Default::default())?
        .checkpoints
        .last()
        .map_or(0, |c| c.turn_index);
    let r = engine.snapshot(SnapshotParams {
        kind: Some(kind),
        label: Some(label),
        force: Some(true),
        turn_index: Some(turn + u64::from(new_turn)),
        ..Default::default()
    })?;
    Ok(r.entry_id)
}

/// `rewind run -- CMD ARGS…`: a checkpoint before (labelled with the
/// command), the command with this terminal, a checkpoint after; exits with
/// the command's status.
pub fn run(at: Location, command: Vec<String>) -> Result<i32> {
    let Some((program, args)) = command.split_first() else {
        bail!("nothing to run: rewind run -- CMD [ARGS…]");
    };
    let label = shell_words(&command);
    let mut engine = open_or_start(&at, false)?;
    snapshot(&mut engine, SnapshotKind::Message, label.clone(), true)?;
    // The session stays locked while the command runs: nothing else
    // records into it meanwhile.
    // In the project (`--cwd`), whatever directory rewind was started in.
    let status = std::process::Command::new(program)
        .args(args)
        .current_dir(engine.project_root())
        .status()
        .with_context(|| format!("running {program}"))?;
    let code = status.code().unwrap_or(1);
    let after = snapshot(
        &mut engine,
        SnapshotKind::Turn,
        format!("{label} (exit {code})"),
        false,
    )?;
    eprintln!(
        "rewind: recorded `{label}` as one turn (checkpoint {}); `rewind undo` puts back the state before it",
        after.as_ref().map_or("", EntryId::as_str)
    );
    Ok(code)
}

fn shell_words(command: &[String]) -> String {
    command
        .iter()
        .map(|w| {
            if w.is_empty()
                || w.chars()
                    .any(|c| c.is_whitespace() || "'\"$`\\".contains(c))
            {
                format!("'{}'", w.replace('\'', r"'\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `rewind watch`: a checkpoint each time the project has changed and then
/// stayed the same for `settle`; runs until interrupted (or for `limit`).
pub fn watch(at: Location, settle: Duration, limit: Option<Duration>) -> Result<()> {
    let started = Instant::now();
    let (_, store) = crate::app::project::project_and_store(&at)?;
    let layout = rewind::store::Layout::new(&store);
    let paused = || crate::app::settings::paused(&layout);
    // Paused (`rewind pause`): not even the session is opened (a resume
    // would record what changed as `outside`) until it is resumed.
    if let Some(p) = paused() {
        eprintln!("rewind: {}; waiting for `rewind resume`", p.describe());
        while paused().is_some() {
            if limit.is_some_and(|l| started.elapsed() >= l) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    let mut engine = open_or_start(&at, true)?;
    let mut said_paused = false;
    let poll = (settle / 4).clamp(Duration::from_millis(50), Duration::from_millis(500));
    let mut recorded = engine.working_tree_hash()?;
    // The tree last seen, and since when it has not moved.
    let mut seen = (recorded, Instant::now());
    eprintln!(
        "rewind: watching {} (a checkpoint once writes settle for {} ms; Ctrl-C stops)",
        engine.project_root().display(),
        settle.as_millis()
    );
    loop {
        if limit.is_some_and(|l| started.elapsed() >= l) {
            return Ok(());
        }
        std::thread::sleep(poll);
        let now = engine.working_tree_hash()?;
        if now != seen.0 {
            seen = (now, Instant::now());
            continue;
        }
        if now != recorded && seen.1.elapsed() >= settle {
            // Paused meanwhile: the change waits for the resume.
            if let Some(p) = paused() {
                if !said_paused {
                    eprintln!("rewind: {}; not recording", p.describe());
                    said_paused = true;
                }
                continue;
            }
            said_paused = false;
            let id = snapshot(&mut engine, SnapshotKind::Turn, "watch".into(), true)?;
            eprintln!(
                "rewind: checkpoint {}",
                id.as_ref().map_or("", EntryId::as_str)
            );
            recorded = now;
        }
    }
}
