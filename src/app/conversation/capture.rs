//! What a hook records of the agent's conversation with a checkpoint: the
//! bytes appended to the transcript since the last checkpoint of the same
//! agent session (never the whole file again: the store holds the rest),
//! whether the transcript still begins with what the store holds, and where
//! the conversation up to the last message ends (docs/format.md "The
//! conversation at a checkpoint").

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;

use rewind::engine::api::{ConversationCapture, ConversationState};
use xxhash_rust::xxh3::xxh3_64;

use super::{lines, locate, Moment, MAX_TRANSCRIPT};
use crate::app::hooks::agent::Agent;

/// How many bytes before the end of what the store holds are compared with
/// the transcript.
const TAIL: u64 = 64;

/// The conversation to record with a checkpoint of `agent`'s session
/// `session_id`, whose transcript is `transcript`; `prev` is what the last
/// checkpoint of this agent session recorded. `None`: the event names no
/// transcript. A transcript that cannot be followed (gone, rewritten, too
/// large, not in the agent's format) is recorded as lost, with why.
pub fn capture(
    agent: Agent,
    session_id: &str,
    transcript: Option<&str>,
    moment: Moment<'_>,
    prev: Option<ConversationState>,
) -> Option<ConversationCapture> {
    // A relative path would be read from wherever the hook server runs.
    let path = transcript.filter(|p| std::path::Path::new(p).is_absolute())?;
    // Another file (Gemini CLI names a new one on some resumes) starts a
    // chain of its own.
    let prev = prev.filter(|p| p.transcript_path == path);
    let base = prev.unwrap_or_else(|| ConversationState {
        agent: agent.name().to_string(),
        session_id: session_id.to_string(),
        transcript_path: path.to_string(),
        ..Default::default()
    });
    if base.lost.is_some() {
        return Some(unchanged(base));
    }
    match read_appended(agent, moment, &base) {
        Ok(c) => Some(c),
        Err(why) => Some(unchanged(ConversationState {
            lost: Some(why),
            ..base
        })),
    }
}

fn unchanged(state: ConversationState) -> ConversationCapture {
    ConversationCapture {
        state,
        appended: Vec::new(),
    }
}

fn read_appended(
    agent: Agent,
    moment: Moment<'_>,
    base: &ConversationState,
) -> Result<ConversationCapture, String> {
    let file = match File::open(&base.transcript_path) {
        Ok(f) => f,
        // Not written yet (Claude Code writes its transcript after the
        // first prompt's hook): nothing of the conversation so far.
        Err(e) if e.kind() == ErrorKind::NotFound && base.size == 0 => {
            return Ok(unchanged(base.clone()))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err("the transcript was gone (deleted or moved) when this was recorded".into())
        }
        Err(e) => return Err(format!("the transcript could not be read: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("the transcript could not be read: {e}"))?;
    if !meta.is_file() {
        return Err("the transcript is not a file".into());
    }
    let len = meta.len();
    if len < base.size {
        return Err(format!(
            "the transcript was rewritten (it shrank from {} to {len} bytes)",
            base.size
        ));
    }
    if len > MAX_TRANSCRIPT {
        return Err(format!(
            "the transcript is larger than {} MiB",
            MAX_TRANSCRIPT >> 20
        ));
    }
    // What the store holds must still be the transcript's beginning: its
    // last bytes are compared (a rotated or rewritten file differs there).
    let tail_start = base.size.saturating_sub(TAIL);
    let mut before = vec![0u8; (base.size - tail_start) as usize];
    file.read_exact_at(&mut before, tail_start)
        .map_err(|e| format!("the transcript could not be read: {e}"))?;
    if base.size > 0 && base.tail_hash.as_deref() != Some(hash(&before).as_str()) {
        return Err(
            "the transcript was rewritten (it no longer begins with the conversation rewind holds)"
                .into(),
        );
    }
    let mut appended = vec![0u8; (len - base.size) as usize];
    file.read_exact_at(&mut appended, base.size)
        .map_err(|e| format!("the transcript could not be read: {e}"))?;
    // Whole lines only: the agent may be writing the last one.
    let whole = appended
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    appended.truncate(whole);
    if appended.is_empty() {
        return Ok(unchanged(base.clone()));
    }
    let new_lines = lines(&appended, base.size, base.lines);
    let cut = locate(agent, moment, &new_lines)
        .map_err(|why| format!("the transcript is not in a format rewind knows ({why})"))?;
    // The conversation up to this checkpoint is already in the store (at a
    // prompt, what follows the turn end's last message is bookkeeping, as
    // Claude Code's queue operations): nothing is stored now, so the
    // checkpoint pays no sync of its own for it; the next capture reads
    // these bytes again (docs/format.md "The conversation at a checkpoint").
    if cut.as_ref().is_none_or(|c| c.end <= base.size) {
        let mut state = base.clone();
        if let Some(cut) = cut {
            state.cut = cut.end;
            state.position = Some(cut.position);
        }
        return Ok(unchanged(state));
    }
    let mut state = base.clone();
    state.size = base.size + appended.len() as u64;
    state.lines = base.lines + new_lines.len() as u64;
    let mut tail = before;
    tail.extend_from_slice(&appended[appended.len().saturating_sub(TAIL as usize)..]);
    state.tail_hash = Some(hash(&tail[tail.len().saturating_sub(TAIL as usize)..]));
    if let Some(cut) = cut {
        state.cut = cut.end;
        state.position = Some(cut.position);
    }
    Ok(ConversationCapture { state, appended })
}

/// The tail hash a record keeps.
pub fn hash(bytes: &[u8]) -> String {
    format!("{:016x}", xxh3_64(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_line(uuid: &str) -> String {
        format!("{{\"type\":\"assistant\",\"uuid\":\"{uuid}\"}}\n")
    }

    /// Each capture reads what was appended; the state carries the chain on.
    #[test]
    fn a_transcript_is_read_from_where_the_last_checkpoint_left_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let p = path.to_str().unwrap();
        let cap = |prev| capture(Agent::ClaudeCode, "s", Some(p), Moment::TurnEnd, prev).unwrap();
        // Not written yet: an empty conversation, nothing lost.
        let first = cap(None);
        assert_eq!((first.state.size, first.state.lost.clone()), (0, None));
        std::fs::write(
            &path,
            claude_line("a") + "{\"type\":\"user\",\"uuid\":\"b\"",
        )
        .unwrap();
        let second = cap(Some(first.state));
        assert_eq!(
            second.appended,
            claude_line("a").as_bytes(),
            "whole lines only"
        );
        assert_eq!(second.state.position.as_deref(), Some("a"));
        assert_eq!(second.state.cut, second.state.size);
        let text = claude_line("a") + &claude_line("b");
        std::fs::write(&path, &text).unwrap();
        let third = cap(Some(second.state.clone()));
        assert_eq!(third.appended, claude_line("b").as_bytes());
        assert_eq!(
            (third.state.lines, third.state.position.as_deref()),
            (2, Some("b"))
        );
        // Nothing new: the same state, nothing appended.
        let again = cap(Some(third.state.clone()));
        assert!(again.appended.is_empty());
        assert_eq!(again.state, third.state);

        // Bookkeeping after the last message (a prompt's queue operation):
        // nothing to store, the position kept, the bytes read again later.
        let queued = text.clone() + "{\"type\":\"queue-operation\"}\n";
        std::fs::write(&path, &queued).unwrap();
        let prompt = capture(
            Agent::ClaudeCode,
            "s",
            Some(p),
            Moment::Prompt("next"),
            Some(third.state.clone()),
        )
        .unwrap();
        assert!(prompt.appended.is_empty());
        assert_eq!(prompt.state, third.state);
        std::fs::write(&path, queued.clone() + &claude_line("c")).unwrap();
        let after = cap(Some(prompt.state));
        assert_eq!(
            after.appended,
            ("{\"type\":\"queue-operation\"}\n".to_string() + &claude_line("c")).as_bytes()
        );
        assert_eq!(after.state.position.as_deref(), Some("c"));
        std::fs::write(&path, &text).unwrap();

        // Rewritten with other bytes: lost, and it stays lost.
        std::fs::write(
            &path,
            claude_line("x") + &claude_line("y") + &claude_line("z"),
        )
        .unwrap();
        let rewritten = cap(Some(third.state.clone()));
        assert!(rewritten
            .state
            .lost
            .as_deref()
            .unwrap()
            .contains("rewritten"));
        let later = cap(Some(rewritten.state.clone()));
        assert_eq!(later.state.lost, rewritten.state.lost);
        // Shrunk, deleted.
        std::fs::write(&path, "").unwrap();
        assert!(cap(Some(third.state.clone()))
            .state
            .lost
            .unwrap()
            .contains("shrank"));
        std::fs::remove_file(&path).unwrap();
        assert!(cap(Some(third.state.clone()))
            .state
            .lost
            .unwrap()
            .contains("gone"));
        // Not the agent's format.
        std::fs::write(&path, "plain text\n").unwrap();
        let odd = cap(None);
        assert!(odd.state.lost.unwrap().contains("not in a format"));
        // Another path: a chain of its own.
        assert!(capture(Agent::ClaudeCode, "s", None, Moment::Tool, None).is_none());
    }
}
