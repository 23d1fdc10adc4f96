//! What people type as points of history: an entry id, a tree hash,
//! `@working` (`Point::parse`) or a turn number as `rewind log` shows it
//! (`point`), and what "the last turn" is, for the CLI and the MCP tools.

use rewind::engine::api::{
    CheckpointInfo, CheckpointKind, ListCheckpointsParams, Point, RangeParams, Scope,
};
use rewind::engine::{Engine, EngineError};
use rewind::session::EntryId;

/// A range as people name its ends (entry id, tree hash or `@working`,
/// see `Point::parse`); `to` defaults to the working directory.
pub fn range(from: Option<String>, to: Option<String>) -> RangeParams {
    RangeParams {
        from: from.as_deref().map(Point::parse),
        to: Some(to.as_deref().map_or(Point::Working, Point::parse)),
    }
}

/// A turn number as people type it: a bare number shorter than an entry id
/// (8 hex digits), so no entry id is ever read as a turn.
pub fn turn_number(s: &str) -> Option<u64> {
    (!s.is_empty() && s.len() < 8 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// A point as people type it, a turn number too: turn N is the checkpoint
/// it started from ([`turn_start`]).
pub fn point(view: &Engine, s: &str) -> Result<Point, EngineError> {
    match turn_number(s) {
        Some(turn) => Ok(Point::Entry(turn_start(view, turn)?)),
        None => Ok(Point::parse(s)),
    }
}

/// A range as people name its ends, turn numbers too (see [`point`]).
pub fn range_in(
    view: &Engine,
    from: Option<String>,
    to: Option<String>,
) -> Result<RangeParams, EngineError> {
    Ok(RangeParams {
        from: from.as_deref().map(|s| point(view, s)).transpose()?,
        to: Some(match to.as_deref() {
            Some(s) => point(view, s)?,
            None => Point::Working,
        }),
    })
}

/// The checkpoint turn `turn` started from, on the path to the leaf: its
/// prompt's, else the last one before its first; turn 0 is the baseline.
/// So `diff 1 2` is what turn 1 changed, and `restore 2` undoes turn 2 on.
pub fn turn_start(view: &Engine, turn: u64) -> Result<EntryId, EngineError> {
    let path = path_checkpoints(view)?;
    let first = path.iter().position(|c| {
        c.turn_index == turn
            && (c.kind.is_turn() || (turn == 0 && c.kind == CheckpointKind::Baseline))
    });
    let Some(first) = first else {
        let last = path
            .iter()
            .filter(|c| c.kind.is_turn())
            .map(|c| c.turn_index)
            .max()
            .unwrap_or(0);
        return Err(EngineError::InvalidParams(format!(
            "no turn {turn} on the session's current path (`rewind log` shows turns 0 to {last})"
        )));
    };
    let start = match path[first].kind {
        CheckpointKind::Message | CheckpointKind::Baseline => first,
        _ => first.saturating_sub(1),
    };
    Ok(path[start].entry_id.clone())
}

/// The checkpoints on the path to the leaf, oldest first.
pub fn path_checkpoints(view: &Engine) -> Result<Vec<CheckpointInfo>, EngineError> {
    Ok(view
        .list_checkpoints(ListCheckpointsParams {
            scope: Some(Scope::Path),
            query: None,
        })?
        .checkpoints)
}

/// What "undo" means when an agent's last turn that changed files is newer
/// than the last rollback: the checkpoint that turn started from (its
/// prompt's, else the last one before it), with the turn's number. `None`
/// when a rollback came after it (undo then reverts the rollback). Turns
/// that changed nothing do not count: the turn in which an agent calls the
/// MCP `undo` (or the prompt that confirms it) is such a turn, and undoing
/// it would do nothing. `rewind undo` and the MCP `undo` tool both ask this;
/// neither has a rule of its own.
pub fn before_last_turn(view: &Engine) -> Result<Option<(u64, EntryId)>, EngineError> {
    let path = path_checkpoints(view)?;
    let last_turn = path
        .iter()
        .rposition(|c| c.kind.is_turn() && c.added + c.modified + c.deleted > 0);
    let last_rollback = path.iter().rposition(|c| c.kind.is_rollback());
    let Some(t) = last_turn.filter(|&t| last_rollback.is_none_or(|r| r < t)) else {
        return Ok(None);
    };
    let turn = path[t].turn_index;
    let first = path
        .iter()
        .position(|c| c.turn_index == turn && c.kind.is_turn())
        .unwrap_or(t);
    let start = if path[first].kind == CheckpointKind::Message {
        Some(first)
    } else {
        first.checked_sub(1)
    };
    Ok(start.map(|i| (turn, path[i].entry_id.clone())))
}
