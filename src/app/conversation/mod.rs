//! An agent's conversation beside rewind's checkpoints (docs/agents.md
//! "Restoring the conversation"): what a hook reads of the agent's
//! transcript at each checkpoint (`capture.rs`: only what was appended since
//! the last one), and the fork a conversation restore writes from what the
//! store holds (`fork.rs`). What differs between agents — where the
//! conversation before a checkpoint ends, how a copy is named and resumed —
//! is in `claude.rs`, `codex.rs` and `gemini.rs`. Shared by the CLI (`rewind
//! restore --conversation`), the hooks and MCP; a transcript is untrusted
//! input: reads are bounded, and nothing here panics on what it holds.

pub mod capture;
mod claude;
mod codex;
pub mod fork;
mod gemini;

use crate::app::hooks::agent::Agent;

/// The largest transcript rewind keeps (and the most a hook reads at once).
pub const MAX_TRANSCRIPT: u64 = 256 << 20;

/// The hook event a checkpoint is taken at, as the conversation sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment<'a> {
    /// A prompt, before the agent wrote anything of its turn: the
    /// conversation before it (the prompt's text, to tell its own line).
    Prompt(&'a str),
    /// A tool call inside a turn.
    Tool,
    /// The agent's turn ended.
    TurnEnd,
}

/// Where the conversation up to the last message ends: `[0, end)`, and the
/// agent's name for that place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub end: u64,
    pub position: String,
}

/// One whole line of a transcript.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// Where it starts in the transcript.
    pub start: u64,
    /// Just past its newline.
    pub end: u64,
    /// Its number, 1 for the transcript's first.
    pub number: u64,
    /// Without the newline.
    pub text: &'a [u8],
}

/// The whole lines of `bytes`, which start at offset `base` after
/// `base_lines` lines (a trailing part without a newline is not a line).
pub fn lines(bytes: &[u8], base: u64, base_lines: u64) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            out.push(Line {
                start: base + start as u64,
                end: base + i as u64 + 1,
                number: base_lines + out.len() as u64 + 1,
                text: &bytes[start..i],
            });
            start = i + 1;
        }
    }
    out
}

/// Where the conversation up to the last message in `lines` ends at
/// `moment` (`None`: no message among them); `Err`: a line is not in the
/// agent's format (why, in a few words).
pub fn locate(agent: Agent, moment: Moment<'_>, lines: &[Line<'_>]) -> Result<Option<Cut>, String> {
    match agent {
        Agent::ClaudeCode => claude::locate(moment, lines),
        Agent::Codex => codex::locate(moment, lines),
        Agent::Gemini => gemini::locate(lines),
        // Their hooks name no transcript (payload.rs): never asked.
        other => Err(format!(
            "{} has no conversation rewind can cut",
            other.name()
        )),
    }
}

/// The file a session was imported from (Gemini CLI's `--session-file`),
/// as the first lines of its transcript say: at most 64 KiB are read.
pub fn imported_from(transcript: &str) -> Option<std::path::PathBuf> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(transcript)
        .ok()?
        .take(64 << 10)
        .read_to_end(&mut head)
        .ok()?;
    let first = lines(&head, 0, 0);
    gemini::imported_from(&first[..first.len().min(4)]).map(Into::into)
}

/// A line that is not a JSON object, in the words a refusal uses.
fn not_json(line: &Line<'_>) -> String {
    format!("line {} is not a JSON object", line.number)
}

/// A new random UUID (version 4), as the agents spell session ids.
pub fn uuid_v4() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    spell_uuid(&b)
}

/// A new UUID of version 7 (milliseconds since the epoch first), as Codex
/// names its threads.
pub fn uuid_v7() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mut b: [u8; 16] = rand::random();
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    b[6] = (b[6] & 0x0f) | 0x70;
    b[8] = (b[8] & 0x3f) | 0x80;
    spell_uuid(&b)
}

fn spell_uuid(b: &[u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_whole_lines_with_their_offsets() {
        let l = lines(b"ab\ncd\nef", 10, 4);
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].start, l[0].end, l[0].number, l[0].text),
            (10, 13, 5, &b"ab"[..])
        );
        assert_eq!(
            (l[1].start, l[1].end, l[1].number, l[1].text),
            (13, 16, 6, &b"cd"[..])
        );
    }

    #[test]
    fn uuids_have_their_version() {
        let v4 = uuid_v4();
        let v7 = uuid_v7();
        assert_eq!(v4.len(), 36);
        assert_eq!(&v4[14..15], "4");
        assert_eq!(&v7[14..15], "7");
        assert_ne!(uuid_v4(), v4);
    }
}
