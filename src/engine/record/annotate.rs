//! A person's side of checkpoints, the rules every front end (the CLI, MCP,
//! the page) shares: a checkpoint asked for by hand (`checkpoint`: no turn
//! number of its own, at most so many per session) and annotations that
//! change only what was asked (`annotate`: a label edited keeps its note,
//! and a note edited keeps its label). Both refuse, before anything is
//! written, a label or note over [`MAX_ANNOTATION_BYTES`] or with control
//! characters (docs/architecture.md "A person's checkpoints").

use crate::engine::api::{
    AnnotateParams, AnnotateResult, CheckpointKind, CheckpointParams, CheckpointResult,
    LabelParams, TextEdit, DEFAULT_MAX_MANUAL, MAX_ANNOTATION_BYTES,
};
use crate::engine::{label_for, note_for, turn_of, Engine, EngineError, Result};
use crate::session::EntryId;
use crate::store::EntryKind;

use super::snapshot::SnapshotSpec;

/// A label or note as a person may set it: not empty, at most
/// [`MAX_ANNOTATION_BYTES`], no control characters (a note may hold line
/// breaks and tabs; a label is one line).
pub(crate) fn check_text(what: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(EngineError::InvalidParams(format!(
            "the {what} is empty (to remove one, clear it)"
        )));
    }
    if text.len() > MAX_ANNOTATION_BYTES {
        return Err(EngineError::InvalidParams(format!(
            "the {what} is {} bytes long; at most {MAX_ANNOTATION_BYTES} are kept (put the rest in a file)",
            text.len()
        )));
    }
    let allowed = |c: char| what == "note" && (c == '\n' || c == '\t');
    // Bidirectional overrides reorder what a terminal or page shows after
    // them: refused with the control characters.
    let acts =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if let Some(c) = text.chars().find(|&c| acts(c) && !allowed(c)) {
        return Err(EngineError::InvalidParams(format!(
            "the {what} holds a control character ({:?}){}",
            c,
            if what == "label" {
                "; a label is one line of text (a note may span lines)"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

fn check_edit(what: &str, edit: &TextEdit) -> Result<()> {
    match edit {
        TextEdit::Set(text) => check_text(what, text),
        TextEdit::Keep | TextEdit::Clear => Ok(()),
    }
}

/// The checkpoint `id` names, refused when it is not one.
fn checkpoint_entry<'a>(engine: &'a Engine, id: &EntryId) -> Result<&'a crate::session::Entry> {
    let entry = engine
        .log
        .index()
        .get(id)
        .ok_or_else(|| EngineError::UnknownEntry(id.clone()))?;
    if !entry.is_tree_recording() {
        return Err(EngineError::InvalidParams(format!(
            "entry {id} is not a checkpoint (it is a {} entry); name one `rewind log` lists",
            entry.custom_type.as_deref().unwrap_or(&entry.entry_type)
        )));
    }
    Ok(entry)
}

/// `Engine::annotate` (the door in engine/mod.rs says what it does).
pub(crate) fn annotate(engine: &mut Engine, p: AnnotateParams) -> Result<AnnotateResult> {
    check_edit("label", &p.label)?;
    check_edit("note", &p.note)?;
    let root = engine.working_copy.root().to_path_buf();
    let entry = checkpoint_entry(engine, &p.target_id)?;
    let index = engine.log.index();
    // What a `label` entry said last (the label it set, not the one a
    // checkpoint was taken with, which stays beneath it), and the note in
    // force.
    let written = index.annotation_of(&entry.id);
    let label_now = written.clone().and_then(|(l, _)| l);
    let note_now = note_for(index, entry);
    let label = match p.label {
        TextEdit::Keep => label_now,
        TextEdit::Set(s) => Some(s),
        TextEdit::Clear => None,
    };
    let note = match p.note {
        TextEdit::Keep => note_now,
        TextEdit::Set(s) => Some(s),
        TextEdit::Clear => None,
    };
    let unchanged = match &written {
        Some((l, n)) => *l == label && *n == note,
        None => label.is_none() && note.as_deref() == entry.snapshot_note(),
    };
    let entry_id = if unchanged {
        None
    } else {
        let r = super::entries::label(
            engine,
            LabelParams {
                target_id: p.target_id.clone(),
                label,
                note,
            },
        )?;
        Some(r.entry_id)
    };
    let index = engine.log.index();
    let entry = checkpoint_entry(engine, &p.target_id)?;
    Ok(AnnotateResult {
        entry_id,
        label: label_for(index, entry, &root),
        note: note_for(index, entry),
    })
}

/// How many manual checkpoints the session holds, on every branch.
fn manual_count(engine: &Engine) -> u64 {
    engine
        .log
        .index()
        .entries()
        .iter()
        .filter(|e| e.is_tree_recording() && e.record_kind() == Some("manual"))
        .count() as u64
}

/// `Engine::checkpoint` (the door in engine/mod.rs says what it does).
pub(crate) fn checkpoint(engine: &mut Engine, p: CheckpointParams) -> Result<CheckpointResult> {
    if let Some(label) = &p.label {
        check_text("label", label)?;
    }
    if let Some(note) = &p.note {
        check_text("note", note)?;
    }
    let max_manual = p.max_manual.unwrap_or(DEFAULT_MAX_MANUAL);
    let count = manual_count(engine);
    if count >= max_manual {
        return Err(EngineError::InvalidParams(format!(
            "this session already holds {count} manual checkpoints, the most it keeps ({max_manual}); \
             label an existing checkpoint instead (`rewind label ENTRY NAME`, MCP's `label`, or \
             the page's label form), or raise `max_manual_per_session` under [checkpoints] in the \
             store's config.toml"
        )));
    }
    let scope = match p.paths {
        Some(paths) => Some(crate::engine::parse_paths(
            engine.working_copy.root(),
            &paths,
        )?),
        None => None,
    };
    let parent = engine.leaf_id();
    // A person's checkpoint marks a moment inside the agent's turn, not a
    // turn of its own: it keeps the turn number of the checkpoint above it,
    // so the agent's next turn is numbered as if it were not there.
    let turn = match &parent {
        Some(id) => engine.checkpoint_tree(id)?.map(|(e, _)| turn_of(e)),
        None => None,
    };
    let snapshot = engine.record_snapshot(SnapshotSpec {
        kind: CheckpointKind::Manual,
        label: p.label,
        note: p.note,
        scope,
        tool: None,
        parent,
        turn_index: Some(turn.unwrap_or(0)),
        force: true,
        request_id: None,
        conversation: None,
    })?;
    let flat = engine.flat(Some(snapshot.tree_hash))?;
    let (mut files, mut bytes) = (0u64, 0u64);
    for (_, e) in flat.iter() {
        if matches!(e.kind, EntryKind::File | EntryKind::Executable) {
            files += 1;
            bytes += e.size;
        }
    }
    Ok(CheckpointResult {
        snapshot,
        files,
        bytes,
        manual_count: count + 1,
        max_manual,
    })
}
