//! An agent's conversation beside the checkpoints: stored as appended
//! pieces, read back whole, found again by its agent session, and which
//! one a checkpoint restores (docs/format.md "The conversation at a
//! checkpoint").

use super::*;
use crate::session::records::StepSnapshot;

fn capture(
    prev: Option<&ConversationState>,
    appended: &str,
    cut_at_end: bool,
) -> ConversationCapture {
    let mut state = prev.cloned().unwrap_or(ConversationState {
        agent: "claude-code".into(),
        session_id: "s1".into(),
        transcript_path: "/t/s1.jsonl".into(),
        ..Default::default()
    });
    state.size += appended.len() as u64;
    state.lines += appended.matches('\n').count() as u64;
    if cut_at_end {
        state.cut = state.size;
        state.position = Some(format!("p{}", state.lines));
    }
    ConversationCapture {
        state,
        appended: appended.as_bytes().to_vec(),
    }
}

fn at(e: &mut Engine, kind: SnapshotKind, turn: u64, c: ConversationCapture) -> EntryId {
    e.snapshot_with_conversation(
        SnapshotParams {
            kind: Some(kind),
            turn_index: Some(turn),
            force: Some(true),
            ..Default::default()
        },
        Some(c),
    )
    .unwrap()
    .entry_id
    .unwrap()
}

#[test]
fn a_conversation_is_stored_piece_by_piece_and_cut_between_turns() {
    let t = T::new();
    t.write("a.txt", "1");
    let (mut e, _) = t.open();
    assert_eq!(e.last_conversation("claude-code", "s1"), None);
    let m1 = at(&mut e, SnapshotKind::Message, 1, capture(None, "", false));
    let last = e.last_conversation("claude-code", "s1").unwrap();
    let tool = at(
        &mut e,
        SnapshotKind::Tool,
        1,
        capture(Some(&last), "u1\na1\n", true),
    );
    let last = e.last_conversation("claude-code", "s1").unwrap();
    let end1 = at(
        &mut e,
        SnapshotKind::Turn,
        1,
        capture(Some(&last), "a2\n", true),
    );
    let last = e.last_conversation("claude-code", "s1").unwrap();
    let m2 = at(
        &mut e,
        SnapshotKind::Message,
        2,
        capture(Some(&last), "q\n", false),
    );
    let last = e.last_conversation("claude-code", "s1").unwrap();
    assert_eq!(e.conversation_bytes(&last).unwrap(), b"u1\na1\na2\nq\n");
    assert_eq!((last.size, last.lines, last.cut), (11, 4, 9));
    // Another agent session is another conversation.
    assert_eq!(e.last_conversation("claude-code", "s2"), None);
    assert_eq!(e.last_conversation("codex", "s1"), None);

    // The prompt of turn 2: turn 1 whole, continued beside turn 2.
    let c = e.conversation_at(&m2).unwrap();
    assert_eq!((c.turns_kept, &c.from, &c.continue_below), (1, &m2, &end1));
    assert_eq!(c.state.unwrap().position.as_deref(), Some("p3"));
    // The end of turn 1: turn 1, continued below it.
    let c = e.conversation_at(&end1).unwrap();
    assert_eq!((c.turns_kept, &c.continue_below), (1, &end1));
    // A tool inside turn 1: the conversation at its prompt, empty.
    let c = e.conversation_at(&tool).unwrap();
    assert_eq!((c.turns_kept, &c.from), (0, &m1));
    assert_eq!(c.state.unwrap().cut, 0);

    // The record keeps the chain from gc: its tree names every piece.
    let entry = e.log().index().get(&m2).unwrap().clone();
    let record = entry.record::<StepSnapshot>().unwrap();
    let head = record.conversation.unwrap().transcript_tree_hash.unwrap();
    assert!(entry.referenced_trees().unwrap().contains(&head));

    // A checkpoint without a conversation (the baseline's kind of record)
    // has none to restore.
    let plain = e
        .snapshot(SnapshotParams {
            kind: Some(SnapshotKind::Turn),
            force: Some(true),
            ..Default::default()
        })
        .unwrap()
        .entry_id
        .unwrap();
    assert!(e.conversation_at(&plain).unwrap().state.is_none());
}

/// A record naming more bytes than its chain holds reads as damaged, not
/// as a short conversation.
#[test]
fn a_chain_that_does_not_hold_its_size_is_an_error() {
    let t = T::new();
    let (mut e, _) = t.open();
    at(&mut e, SnapshotKind::Turn, 1, capture(None, "x\n", true));
    let mut last = e.last_conversation("claude-code", "s1").unwrap();
    last.size += 1;
    assert!(e.conversation_bytes(&last).is_err());
    last.size = 1 << 40;
    assert!(e.conversation_bytes(&last).is_err());
}
