//! Which rewind session an agent session records into. Every hook event is
//! a new process, an agent resumes its sessions (`--resume`, `exec
//! resume`) and Claude Code fires SessionStart for every `-p` run, so the
//! mapping lives in the store (`hooks/sessions/`, docs/format.md "Layout"),
//! and hooks take turns: one lock per store, held for the whole event.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::payload::Agent;
use super::HookError;
use rewind::store::Layout;

/// How long a hook waits for another hook of the same store (parallel
/// tool calls) before it gives up; agents give hooks 60 s.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// One agent session's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    pub agent: String,
    pub agent_session_id: String,
    /// The rewind session file it records into.
    pub session_file: PathBuf,
    /// The turn its last prompt started (0 before the first prompt).
    pub turn: u64,
    /// The id of the last event recorded (events a hook delivered twice
    /// are recorded once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event: Option<String>,
    /// A conversation restore's fork not yet recorded into: its first
    /// checkpoint goes below this entry (where the conversation was cut),
    /// a branch of the session (docs/agents.md "Restoring the conversation").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_parent: Option<String>,
}

/// What a conversation restore leaves for the hooks of the agent session
/// that continues it: the rewind session, the turns the conversation
/// holds, and the entry its first checkpoint goes below.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkRecord {
    pub agent: String,
    pub session_file: PathBuf,
    pub turn: u64,
    pub fork_parent: String,
}

impl ForkRecord {
    /// The agent session's record for the session `id` that continues it.
    pub fn session(&self, id: &str) -> AgentSession {
        AgentSession {
            agent: self.agent.clone(),
            agent_session_id: id.to_string(),
            session_file: self.session_file.clone(),
            turn: self.turn,
            last_event: None,
            fork_parent: Some(self.fork_parent.clone()),
        }
    }
}

/// The store's agent sessions, locked for one hook event.
pub struct Sessions {
    dir: PathBuf,
    _lock: File,
}

impl Sessions {
    /// Wait (up to [`LOCK_WAIT`]) until no other hook of this store runs.
    pub fn lock(layout: &Layout) -> Result<Sessions, HookError> {
        let dir = layout.hook_sessions_dir();
        std::fs::create_dir_all(&dir).map_err(|e| HookError::io("create", &dir, e))?;
        let path = dir.join(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| HookError::io("open", &path, e))?;
        let taken = rewind::lock_wait::within(LOCK_WAIT, Duration::from_millis(10), || match file
            .try_lock()
        {
            Ok(()) => Ok(Some(())),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(HookError::io("lock", &path, e)),
        })?;
        if taken.is_none() {
            return Err(HookError::Busy(LOCK_WAIT.as_secs()));
        }
        Ok(Sessions { dir, _lock: file })
    }

    fn path(&self, agent: Agent, id: &str) -> PathBuf {
        self.dir.join(format!(
            "{}-{:016x}.json",
            agent.name(),
            xxh3_64(id.as_bytes())
        ))
    }

    pub fn get(&self, agent: Agent, id: &str) -> Result<Option<AgentSession>, HookError> {
        let path = self.path(agent, id);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let s: AgentSession =
                    serde_json::from_slice(&bytes).map_err(|source| HookError::BadRecord {
                        path: path.clone(),
                        source,
                    })?;
                // A hash collision names another session: not ours.
                Ok((s.agent_session_id == id).then_some(s))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(HookError::io("read", &path, e)),
        }
    }

    /// Write an agent session's record (synced to disk when `durable`).
    pub fn put(
        &self,
        session: &AgentSession,
        agent: Agent,
        durable: bool,
    ) -> Result<(), HookError> {
        let path = self.path(agent, &session.agent_session_id);
        let temp = temp_of(&path);
        let bytes = serde_json::to_vec(session).map_err(|source| HookError::BadRecord {
            path: path.clone(),
            source,
        })?;
        rewind::durability::atomic_write(&path, &temp, durable, |f| f.write_all(&bytes))
            .map_err(|e| HookError::io("write", &path, e))
    }
}

/// The record beside a fork file an agent imports (`hooks/forks/`, Gemini
/// CLI's `--session-file`): `<fork>.json` beside `<fork>.jsonl`.
pub fn fork_record_path(fork_file: &Path) -> PathBuf {
    fork_file.with_extension("json")
}

/// Write the record of a fork file an agent imports.
pub fn put_fork_record(fork_file: &Path, record: &ForkRecord) -> Result<(), HookError> {
    let path = fork_record_path(fork_file);
    let bytes = serde_json::to_vec(record).map_err(|source| HookError::BadRecord {
        path: path.clone(),
        source,
    })?;
    rewind::durability::atomic_write(&path, &temp_of(&path), true, |f| f.write_all(&bytes))
        .map_err(|e| HookError::io("write", &path, e))
}

/// The record of the fork file `imported` names, when it is one of this
/// store's (`forks`: `Layout::hook_forks_dir`).
pub fn imported_fork(forks: &Path, imported: &Path) -> Option<ForkRecord> {
    let dir = imported.parent()?.canonicalize().ok()?;
    if dir != forks.canonicalize().ok()? || imported.extension()? != "jsonl" {
        return None;
    }
    let bytes = std::fs::read(fork_record_path(imported)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn temp_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".tmp");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_again_and_hooks_take_turns() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let s = Sessions::lock(&layout).unwrap();
        assert_eq!(s.get(Agent::Codex, "abc").unwrap(), None);
        let rec = AgentSession {
            agent: "codex".into(),
            agent_session_id: "abc".into(),
            session_file: dir.path().join("sessions/x.jsonl"),
            turn: 2,
            last_event: Some("e1".into()),
            fork_parent: None,
        };
        s.put(&rec, Agent::Codex, true).unwrap();
        assert_eq!(s.get(Agent::Codex, "abc").unwrap(), Some(rec));
        // Another agent's session of the same id is another session.
        assert_eq!(s.get(Agent::Gemini, "abc").unwrap(), None);
        // While held, a second hook waits.
        let (tx, rx) = std::sync::mpsc::channel();
        let layout2 = layout.clone();
        let waiter = std::thread::spawn(move || {
            let _s = Sessions::lock(&layout2).unwrap();
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        drop(s);
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_ok());
        waiter.join().unwrap();
    }
}
