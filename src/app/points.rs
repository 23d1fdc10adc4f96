//! What people type as points of history: an entry id, a tree hash or
//! `@working` (`Point::parse`), and what "the last turn" is, for the CLI and
//! the MCP tools.

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
