//! Which conversation a conversation restore cuts at a checkpoint
//! (docs/agents.md "Restoring the conversation"): a conversation is cut
//! between turns, so a checkpoint inside a turn (a tool's) gives the
//! conversation at that turn's prompt, and one that is no agent's (a
//! restore's, a pre-restore snapshot) the conversation of the last agent
//! checkpoint above it.

use crate::engine::api::{CheckpointKind, ConversationAt};
use crate::engine::{kind_of, turn_of, Engine, EngineError, Result};
use crate::session::records::StepSnapshot;
use crate::session::{Entry, EntryId};

/// `Engine::conversation_at` (the door in engine/mod.rs says what it does).
pub(crate) fn conversation_at(engine: &Engine, id: &EntryId) -> Result<ConversationAt> {
    let index = engine.log.index();
    if !index.contains(id) {
        return Err(EngineError::UnknownEntry(id.clone()));
    }
    let cp = index
        .checkpoint_at(id)
        .ok_or_else(|| EngineError::InvalidParams(format!("{id} is above every checkpoint")))?;
    let path = index.path_to_root(&cp.id);
    // The agent's checkpoint the named one belongs to: itself, or the last
    // one above a checkpoint of rewind's own.
    let Some(at) = path.iter().rposition(|e| kind_of(e).is_turn()) else {
        return Ok(without(cp, cp));
    };
    let agent_cp = path[at];
    let Some(conversation) = recorded(agent_cp) else {
        return Ok(without(cp, agent_cp));
    };
    let kind = kind_of(agent_cp);
    let turn = turn_of(agent_cp);
    let (from, turns_kept) = match kind {
        CheckpointKind::Turn => (agent_cp, turn),
        CheckpointKind::Message => (agent_cp, turn.saturating_sub(1)),
        // Inside a turn: its prompt, or the end of the turn before.
        _ => {
            let found = path[..at].iter().rev().find_map(|e| {
                let c = recorded(e)?;
                if c.session_id != conversation.session_id || c.agent != conversation.agent {
                    return None;
                }
                match kind_of(e) {
                    CheckpointKind::Message if turn_of(e) == turn => {
                        Some((*e, turn.saturating_sub(1)))
                    }
                    CheckpointKind::Turn => Some((*e, turn_of(e))),
                    _ => None,
                }
            });
            match found {
                Some(f) => f,
                None => return Ok(without(cp, agent_cp)),
            }
        }
    };
    let continue_below = match kind_of(from) {
        CheckpointKind::Message => index.parent_of(&from.id).unwrap_or(from),
        _ => from,
    };
    Ok(ConversationAt {
        checkpoint: cp.id.clone(),
        kind: kind_of(cp),
        turn_index: turn_of(cp),
        from: from.id.clone(),
        turns_kept,
        continue_below: continue_below.id.clone(),
        state: recorded(from).map(Into::into),
    })
}

/// The record's `conversation`, when it has one.
fn recorded(e: &Entry) -> Option<crate::session::records::Conversation> {
    e.record::<StepSnapshot>()?.conversation.map(|c| *c)
}

/// A checkpoint with no conversation recorded (`from` is the one that was
/// looked at).
fn without(cp: &Entry, from: &Entry) -> ConversationAt {
    ConversationAt {
        checkpoint: cp.id.clone(),
        kind: kind_of(cp),
        turn_index: turn_of(cp),
        from: from.id.clone(),
        turns_kept: 0,
        continue_below: cp.id.clone(),
        state: None,
    }
}
