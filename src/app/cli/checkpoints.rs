//! A person's checkpoints at the terminal: `rewind checkpoint` (one by
//! hand, with a name and a note), `rewind label` (a checkpoint's label and
//! note, changing only what is given), `rewind pause` and `rewind resume`
//! (automatic checkpoints). The rules — the cap, the text limits, what a
//! pause stands down — are the engine's and `settings.rs`'s.

use std::time::Duration;

use anyhow::Result;
use rewind::engine::api::{AnnotateParams, CheckpointParams, CheckpointResult, TextEdit};
use rewind::engine::Engine;
use rewind::printable::printable;
use rewind::session::EntryId;
use rewind::store::Layout;

use crate::app::args::Location;
use crate::app::project::{self, project_and_store, Access};
use crate::app::{settings, unprotected};

/// How long a write waits for a hook that holds the session.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The newest session (or `--session`) opened for a write like a hook's
/// (what changed since its last checkpoint goes into this one, not an
/// `outside` one); a project without a session gets one, with its baseline.
fn open_for_write(at: &Location) -> Result<Engine> {
    match project::open(at, Access::Write, LOCK_WAIT) {
        Ok(engine) => Ok(engine),
        Err(project::FrontError::Internal(_)) if project::session_of(at).is_err() => {
            project::open_or_start(at, false)
        }
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}

/// `rewind checkpoint [NAME] [--note TEXT]`.
pub fn checkpoint(at: Location, name: Option<String>, note: Option<String>) -> Result<()> {
    let (_, store) = project_and_store(&at)?;
    let max_manual = settings::max_manual(&Layout::new(&store))?;
    let mut engine = open_for_write(&at)?;
    let r = engine.checkpoint(CheckpointParams {
        label: name,
        note,
        paths: None,
        max_manual,
    })?;
    print!("{}", captured_text(&r, engine.project_root()));
    Ok(())
}

/// What a person's checkpoint captured, as the CLI and MCP say it.
pub(crate) fn captured_text(r: &CheckpointResult, _root: &std::path::Path) -> String {
    let s = &r.snapshot;
    let id = s.entry_id.as_ref().map_or("(none)", EntryId::as_str);
    let mut out = format!(
        "checkpoint {id} (manual, {} of {} in this session)\n",
        r.manual_count, r.max_manual
    );
    out.push_str(&format!(
        "  captured {} file(s), {} byte(s); since the previous checkpoint: {} added, {} modified, {} deleted\n",
        r.files,
        r.bytes,
        s.diff.added.len(),
        s.diff.modified.len(),
        s.diff.deleted.len()
    ));
    if let Some(g) = &s.git {
        out.push_str(&format!(
            "  git      branch {} at {}\n",
            g.branch.as_deref().map_or("(detached)".into(), printable),
            g.head.as_deref().map_or("(no commit)".into(), printable)
        ));
    }
    for line in unprotected::lines(&s.stats.untracked) {
        out.push_str(&format!("  left out {line}\n"));
    }
    out
}

/// The CLI's text for a label or note: empty means "remove it".
fn edit_of(text: Option<String>) -> TextEdit {
    match text {
        None => TextEdit::Keep,
        Some(t) if t.is_empty() => TextEdit::Clear,
        Some(t) => TextEdit::Set(t),
    }
}

/// `rewind label ENTRY [TEXT] [--note TEXT] [--clear]`.
pub fn label(
    at: Location,
    entry: String,
    text: Option<String>,
    note: Option<String>,
    clear: bool,
) -> Result<()> {
    let (label, note) = if clear {
        (TextEdit::Clear, TextEdit::Clear)
    } else {
        (edit_of(text), edit_of(note))
    };
    if label == TextEdit::Keep && note == TextEdit::Keep {
        anyhow::bail!(
            "nothing to set: give a label (`rewind label ENTRY TEXT`), --note TEXT, or --clear"
        );
    }
    let mut engine =
        project::open(&at, Access::Write, LOCK_WAIT).map_err(|e| anyhow::anyhow!("{e}"))?;
    let r = engine.annotate(AnnotateParams {
        target_id: EntryId::from_input(entry.as_str()),
        label,
        note,
    })?;
    let shown = |t: &Option<String>| {
        t.as_deref()
            .map_or("(none)".into(), |t| format!("{:?}", printable(t)))
    };
    println!(
        "checkpoint {}: label {}, note {}{}",
        printable(&entry),
        shown(&r.label),
        shown(&r.note),
        if r.entry_id.is_none() {
            " (unchanged)"
        } else {
            ""
        }
    );
    Ok(())
}

/// `rewind pause`.
pub fn pause(at: Location) -> Result<()> {
    let (root, store) = project_and_store(&at)?;
    let p = settings::pause(&Layout::new(&store))?;
    println!(
        "{} for {}: hooks, the hook server, `rewind watch` and `rewind mcp` record nothing until `rewind resume`; `rewind checkpoint`, history and restores still work",
        p.describe(),
        root.display()
    );
    Ok(())
}

/// `rewind resume`.
pub fn resume(at: Location) -> Result<()> {
    let (root, store) = project_and_store(&at)?;
    if settings::resume(&Layout::new(&store))? {
        println!(
            "automatic checkpoints resumed for {}: the next agent event records what changed meanwhile",
            root.display()
        );
    } else {
        println!(
            "automatic checkpoints were not paused for {}",
            root.display()
        );
    }
    Ok(())
}
