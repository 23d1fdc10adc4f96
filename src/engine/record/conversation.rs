//! An agent's conversation beside its checkpoints (docs/format.md "The
//! conversation at a checkpoint"): the transcript's bytes in the store, one
//! piece per hook that found it grown (a transcript grows by appending, so
//! each piece is what was appended, stored once), chained by trees
//! `{piece, prev}`; and the record's `conversation`, read back.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::api::{ConversationCapture, ConversationState};
use crate::engine::{Engine, EngineError, Result};
use crate::session::records::Conversation;
use crate::store::{EntryKind, Tree, TreeEntry, WriterGuard};

/// The names in a chain tree.
pub(crate) const PIECE: &str = "piece";
pub(crate) const PREV: &str = "prev";

impl From<Conversation> for ConversationState {
    fn from(c: Conversation) -> ConversationState {
        ConversationState {
            agent: c.agent,
            session_id: c.session_id,
            transcript_path: c.transcript_path,
            size: c.size,
            lines: c.lines,
            tail_hash: c.tail_hash,
            cut: c.cut,
            position: c.position,
            transcript_tree: c.transcript_tree_hash,
            lost: c.lost,
        }
    }
}

impl From<ConversationState> for Conversation {
    fn from(c: ConversationState) -> Conversation {
        Conversation {
            agent: c.agent,
            session_id: c.session_id,
            transcript_path: c.transcript_path,
            size: c.size,
            lines: c.lines,
            tail_hash: c.tail_hash,
            cut: c.cut,
            position: c.position,
            transcript_tree_hash: c.transcript_tree,
            lost: c.lost,
            extra: Default::default(),
        }
    }
}

/// Store a capture's appended bytes as the next piece of its chain; the
/// state the record holds, and the writer guard to hold until the record is
/// appended (gc must not take the new objects before). They are made
/// durable with the snapshot's own (docs/architecture.md rule 4).
pub(crate) fn store_capture(
    engine: &Engine,
    c: &ConversationCapture,
) -> Result<(Conversation, Option<WriterGuard>)> {
    let mut state = c.state.clone();
    if !c.appended.is_empty() {
        // Written under the writer guard, as a scan's objects are
        // (docs/architecture.md rule 10); after a gc, what the store
        // remembers having is forgotten first.
        let guard = engine.store.writer_guard()?;
        if guard.stale {
            engine.store.refresh_after_gc(guard.generation)?;
        }
        if let Some(prev) = state.transcript_tree {
            if !engine.store.contains(&prev) {
                // The chain this piece would extend is gone (its session
                // removed by gc): the conversation cannot be rebuilt.
                state.transcript_tree = None;
                state.lost = Some("the conversation rewind stored was removed by gc".into());
                return Ok((state.into(), Some(guard)));
            }
        }
        let piece = engine.store.put(&c.appended)?;
        let mut entries = BTreeMap::new();
        entries.insert(
            PIECE.to_string(),
            TreeEntry::new(EntryKind::File, piece.id, c.appended.len() as u64),
        );
        if let Some(prev) = state.transcript_tree {
            entries.insert(PREV.to_string(), TreeEntry::new(EntryKind::Tree, prev, 0));
        }
        state.transcript_tree = Some(engine.store.put_tree(&Tree { entries })?);
        return Ok((state.into(), Some(guard)));
    }
    Ok((state.into(), None))
}

/// The conversation the latest checkpoint recorded for this agent session,
/// wherever it is in the session's tree. Only lines that name it are
/// decoded, and only their `conversation`.
pub(crate) fn last_conversation(
    engine: &Engine,
    agent: &str,
    session_id: &str,
) -> Option<ConversationState> {
    engine.log.index().entries().iter().rev().find_map(|e| {
        let c = e.raw.get("data")?.get("conversation")?;
        let named = |key: &str, want: &str| c.get(key).and_then(Value::as_str) == Some(want);
        if !named("sessionId", session_id) || !named("agent", agent) {
            return None;
        }
        match serde_json::from_value::<Conversation>(c.clone()) {
            Ok(c) => Some(c.into()),
            Err(err) => {
                tracing::warn!(id = %e.id, %err, "a conversation record cannot be read");
                None
            }
        }
    })
}

/// The transcript's bytes a state holds, `[0, size)`, read from its chain.
/// Bounded by `size`: a chain that holds more, less, or loops is an error.
pub(crate) fn conversation_bytes(engine: &Engine, state: &ConversationState) -> Result<Vec<u8>> {
    let broken = |why: String| {
        EngineError::InvalidParams(format!(
            "the conversation rewind stored for {} is damaged: {why}",
            state.transcript_path
        ))
    };
    let mut pieces = Vec::new();
    let mut total: u64 = 0;
    let mut next = state.transcript_tree;
    while let Some(id) = next {
        let tree = engine.store.get_tree(&id)?;
        let piece = tree
            .entries
            .get(PIECE)
            .filter(|e| e.kind == EntryKind::File)
            .ok_or_else(|| broken(format!("tree {id} has no piece")))?;
        total = total.saturating_add(piece.size);
        if total > state.size {
            return Err(broken(format!(
                "its pieces hold more than {} bytes",
                state.size
            )));
        }
        pieces.push(piece.id);
        next = match tree.entries.get(PREV) {
            Some(e) if e.kind == EntryKind::Tree => Some(e.id),
            Some(_) => return Err(broken(format!("tree {id} has a bad prev"))),
            None => None,
        };
    }
    if total != state.size {
        return Err(broken(format!(
            "its pieces hold {total} bytes, not {}",
            state.size
        )));
    }
    // Sizes a record or a tree states allocate at most this much ahead;
    // the rest grows with the bytes read.
    let mut out = Vec::with_capacity(usize::try_from(total.min(64 << 20)).unwrap_or(0));
    for id in pieces.iter().rev() {
        out.extend_from_slice(&engine.store.get(id)?);
    }
    if out.len() as u64 != state.size {
        return Err(broken(format!(
            "read {} bytes, not {}",
            out.len(),
            state.size
        )));
    }
    Ok(out)
}
