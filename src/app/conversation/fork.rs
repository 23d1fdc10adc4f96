//! The fork a conversation restore writes (docs/agents.md "Restoring the
//! conversation"): the conversation before a checkpoint, rebuilt from what
//! the store holds, cut there, under a new session id, where the agent
//! finds it — Claude Code beside the transcript (`claude --resume NEW`),
//! Codex among its rollouts (`codex resume NEW`), Gemini CLI in the store
//! (`gemini --session-file FILE` imports a copy). The original transcript
//! is never changed. Everything is checked before anything is written: a
//! fork the agent could not load is never written, and a refusal writes
//! nothing.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rewind::engine::api::{ConversationAt, ConversationState};
use rewind::engine::Engine;
use rewind::store::Layout;

use super::{claude, codex, gemini, lines, uuid_v4, uuid_v7, MAX_TRANSCRIPT};
use crate::app::hooks::sessions::{put_fork_record, ForkRecord, Sessions};
use crate::app::hooks::Agent;

/// Why the conversation part of a restore was not done, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fork checked and ready to write.
#[derive(Debug)]
pub struct Prepared {
    pub agent: Agent,
    /// The new session's id (Codex: `None` for an empty conversation: a
    /// new session gets its own).
    pub session_id: Option<String>,
    /// Where it goes (`None`: an empty conversation, nothing to write).
    pub file: Option<PathBuf>,
    bytes: Vec<u8>,
    /// The command that continues the conversation, run in the project.
    pub resume_command: Vec<String>,
    /// Whole turns it keeps.
    pub turns_kept: u64,
    record: ForkRecord,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Fork {
    pub agent: Agent,
    pub session_id: Option<String>,
    pub file: Option<PathBuf>,
    pub resume_command: Vec<String>,
    pub turns_kept: u64,
}

/// Prepare the fork of the conversation `at` names, from `view`'s session
/// and store (nothing is written).
pub fn prepare(view: &Engine, at: &ConversationAt, store: &Layout) -> Result<Prepared, Refused> {
    let Some(state) = &at.state else {
        return Err(Refused(format!(
            "checkpoint {} was recorded without the conversation's position (before rewind \
             recorded conversations, or not at an agent's hook)",
            at.checkpoint
        )));
    };
    if let Some(why) = &state.lost {
        return Err(Refused(format!(
            "the conversation cannot be cut at {}: {why}",
            at.from
        )));
    }
    let agent = Agent::from_name(&state.agent)
        .ok_or_else(|| Refused(format!("unknown agent {:?}", state.agent)))?;
    if !agent.has_conversation() {
        return Err(not_supported(agent));
    }
    let record = ForkRecord {
        agent: agent.name().to_string(),
        session_file: view.session_file().to_path_buf(),
        turn: at.turns_kept,
        fork_parent: at.continue_below.to_string(),
    };
    if state.cut == 0 {
        return Ok(empty(agent, at.turns_kept, record));
    }
    if state.size > MAX_TRANSCRIPT {
        return Err(Refused(format!(
            "the recorded conversation is larger than {} MiB",
            MAX_TRANSCRIPT >> 20
        )));
    }
    let cut = usize::try_from(state.cut)
        .ok()
        .filter(|&c| state.cut <= state.size && state.cut <= MAX_TRANSCRIPT && c > 0)
        .ok_or_else(|| {
            Refused(format!(
                "the recorded conversation ends at {}, past what rewind holds",
                state.cut
            ))
        })?;
    let mut bytes = view
        .conversation_bytes(state)
        .map_err(|e| Refused(e.to_string()))?;
    bytes.truncate(cut);
    if agent != Agent::Gemini {
        // The agent keeps its sessions beside this transcript: with it gone,
        // or holding another conversation now, that place is not known to
        // be the agent's.
        check_original(state, &bytes)?;
    }
    let old = state.session_id.as_str();
    if old.len() < 8 {
        return Err(Refused(format!(
            "the session id {old:?} is too short to rewrite"
        )));
    }
    let new = match agent {
        Agent::Codex => uuid_v7(),
        _ => uuid_v4(),
    };
    let bytes = replace_all(&bytes, old.as_bytes(), new.as_bytes());
    let all = lines(&bytes, 0, 0);
    let position = state.position.as_deref();
    let checked = match agent {
        Agent::ClaudeCode => claude::check(&all, &new, position),
        Agent::Codex => codex::check(&all, &new, position),
        Agent::Gemini => gemini::check(&all, &new),
        other => return Err(not_supported(other)),
    };
    checked.map_err(|why| {
        Refused(format!(
            "the conversation rewind recorded is not in a format {} would load ({why})",
            agent_title(agent)
        ))
    })?;
    let (file, resume_command) = match agent {
        Agent::ClaudeCode => {
            let dir = parent(&state.transcript_path)?;
            (
                dir.join(format!("{new}.jsonl")),
                vec!["claude".into(), "--resume".into(), new.clone()],
            )
        }
        Agent::Codex => (
            codex_file(&state.transcript_path, &new)?,
            vec!["codex".into(), "resume".into(), new.clone()],
        ),
        Agent::Gemini => {
            let file = store.hook_forks_dir().join(format!("gemini-{new}.jsonl"));
            let shown = file.display().to_string();
            (file, vec!["gemini".into(), "--session-file".into(), shown])
        }
        other => return Err(not_supported(other)),
    };
    Ok(Prepared {
        agent,
        session_id: Some(new),
        file: Some(file),
        bytes,
        resume_command,
        turns_kept: at.turns_kept,
        record,
    })
}

/// An empty conversation (a checkpoint before the first prompt): a new
/// session, under an id rewind chooses where the agent lets it.
fn empty(agent: Agent, turns_kept: u64, record: ForkRecord) -> Prepared {
    let (session_id, resume_command) = match agent {
        Agent::ClaudeCode => {
            let id = uuid_v4();
            let cmd = vec!["claude".into(), "--session-id".into(), id.clone()];
            (Some(id), cmd)
        }
        Agent::Gemini => {
            let id = uuid_v4();
            let cmd = vec!["gemini".into(), "--session-id".into(), id.clone()];
            (Some(id), cmd)
        }
        Agent::Codex => (None, vec!["codex".into()]),
        // Never reached (`prepare` refuses them first): a new session.
        other => (None, vec![other.name().into()]),
    };
    Prepared {
        agent,
        session_id,
        file: None,
        bytes: Vec::new(),
        resume_command,
        turns_kept,
        record,
    }
}

/// Write a prepared fork and note it for the hooks of the session that
/// continues it (docs/format.md "Layout", `hooks/`).
pub fn write(p: Prepared, store: &Layout) -> Result<Fork, Refused> {
    if let Some(file) = &p.file {
        let dir = file
            .parent()
            .ok_or_else(|| Refused(format!("{} has no directory", file.display())))?;
        if p.agent != Agent::ClaudeCode {
            std::fs::create_dir_all(dir)
                .map_err(|e| Refused(format!("cannot create {}: {e}", dir.display())))?;
        }
        write_new(file, &p.bytes)?;
    }
    let io = |e: crate::app::hooks::HookError| Refused(e.to_string());
    match (&p.file, &p.session_id) {
        (Some(file), _) if p.agent == Agent::Gemini => {
            put_fork_record(file, &p.record).map_err(io)?
        }
        (_, Some(id)) => {
            let sessions = Sessions::lock(store).map_err(io)?;
            sessions
                .put(&p.record.session(id), p.agent, true)
                .map_err(io)?;
        }
        _ => {}
    }
    Ok(Fork {
        agent: p.agent,
        session_id: p.session_id,
        file: p.file,
        resume_command: p.resume_command,
        turns_kept: p.turns_kept,
    })
}

/// Fork the conversation at the checkpoint `id` of `engine`'s session and
/// note it for the hooks: [`prepare`] then [`write`] (MCP's restore and
/// undo, after the files).
pub fn fork_at(engine: &Engine, id: &rewind::session::EntryId) -> Result<Fork, Refused> {
    let at = engine
        .conversation_at(id)
        .map_err(|e| Refused(e.to_string()))?;
    let store = engine.store().layout().clone();
    write(prepare(engine, &at, &store)?, &store)
}

/// A command as a shell line: words with anything but safe characters in
/// single quotes.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let safe = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c));
            if safe {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The agent's name as people read it.
pub fn agent_title(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "Claude Code",
        Agent::Codex => "Codex",
        Agent::Gemini => "Gemini CLI",
        Agent::OpenCode => "OpenCode",
        Agent::Kilo => "Kilo",
        Agent::Qwen => "Qwen Code",
        Agent::Copilot => "Copilot CLI",
        Agent::Droid => "Droid",
        Agent::Cline => "Cline",
    }
}

/// The refusal for an agent whose conversation rewind does not record.
fn not_supported(agent: Agent) -> Refused {
    Refused(format!(
        "rewind does not record {}'s conversation (docs/agents.md): restore the files alone",
        agent_title(agent)
    ))
}

/// The transcript is where rewind found it and still begins with the
/// conversation kept (`kept`).
fn check_original(state: &ConversationState, kept: &[u8]) -> Result<(), Refused> {
    let path = Path::new(&state.transcript_path);
    let gone = || {
        Refused(format!(
            "the transcript {} is gone (deleted or moved): rewind writes no fork where it was",
            path.display()
        ))
    };
    let meta = std::fs::symlink_metadata(path).map_err(|_| gone())?;
    if !meta.is_file() {
        return Err(gone());
    }
    let mut prefix = Vec::with_capacity(kept.len());
    File::open(path)
        .and_then(|f| f.take(kept.len() as u64).read_to_end(&mut prefix))
        .map_err(|e| {
            Refused(format!(
                "the transcript {} cannot be read: {e}",
                path.display()
            ))
        })?;
    if prefix != kept {
        return Err(Refused(format!(
            "the transcript {} no longer holds the conversation rewind recorded (rotated or \
             rewritten): rewind writes no fork beside it",
            path.display()
        )));
    }
    Ok(())
}

fn parent(transcript: &str) -> Result<PathBuf, Refused> {
    Path::new(transcript)
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| Refused(format!("the transcript {transcript} has no directory")))
}

/// Where Codex finds a rollout of thread `id`: `sessions/YYYY/MM/DD/` of the
/// Codex home the transcript is in, named as Codex names them (UTC).
fn codex_file(transcript: &str, id: &str) -> Result<PathBuf, Refused> {
    let sessions = Path::new(transcript)
        .ancestors()
        .nth(4)
        .filter(|p| p.file_name().is_some_and(|n| n == "sessions"))
        .ok_or_else(|| {
            Refused(format!(
                "the rollout {transcript} is not in a Codex home's sessions/YYYY/MM/DD/"
            ))
        })?;
    let now = time::OffsetDateTime::now_utc();
    let day = format!(
        "{:04}/{:02}/{:02}",
        now.year(),
        u8::from(now.month()),
        now.day()
    );
    let name = format!(
        "rollout-{:04}-{:02}-{:02}T{:02}-{:02}-{:02}-{id}.jsonl",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    );
    Ok(sessions.join(day).join(name))
}

/// Every `from` in `bytes` replaced by `to`.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Write `bytes` to `file`, which must not exist: a temp file beside it,
/// synced, linked to its name (never replacing anything), then read back.
fn write_new(file: &Path, bytes: &[u8]) -> Result<(), Refused> {
    let fail = |e: std::io::Error| Refused(format!("cannot write {}: {e}", file.display()));
    let temp = file.with_extension(format!("jsonl.tmp-{}", std::process::id()));
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::hard_link(&temp, file)
    })();
    let _ = std::fs::remove_file(&temp);
    written.map_err(fail)?;
    let back = std::fs::read(file).map_err(fail)?;
    if back != bytes {
        let _ = std::fs::remove_file(file);
        return Err(Refused(format!(
            "{} did not read back as written",
            file.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_as_shell_lines() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shell_line(&w(&["claude", "--resume", "a-1"])),
            "claude --resume a-1"
        );
        assert_eq!(
            shell_line(&w(&["gemini", "/a b/it's"])),
            r"gemini '/a b/it'\''s'"
        );
    }

    #[test]
    fn ids_are_replaced_everywhere() {
        assert_eq!(replace_all(b"a-id-b-id", b"id", b"XY"), b"a-XY-b-XY");
        assert_eq!(replace_all(b"", b"id", b"XY"), b"");
    }

    #[test]
    fn a_codex_fork_goes_into_its_home() {
        let f = codex_file("/h/.codex/sessions/2026/01/02/rollout-x-old.jsonl", "new").unwrap();
        assert!(f.starts_with("/h/.codex/sessions"), "{f:?}");
        assert!(f.to_str().unwrap().ends_with("-new.jsonl"));
        assert!(codex_file("/tmp/rollout.jsonl", "n").is_err());
    }
}
