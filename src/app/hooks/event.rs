//! One hook event as rewind acts on it ([`HookEvent`], its [`Step`]), and
//! why a payload gives none ([`PayloadError`]): what both payload readers,
//! the agents' hooks (`payload.rs`) and rewind's OpenCode/Kilo plugin
//! (`plugin_payload.rs`), make of what they read. Re-exported from
//! `payload.rs`, where it used to live. And one event handed over to be
//! recorded ([`Delivery`]), with the project it is for ([`project_dir`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::Agent;

/// One hook event, as rewind sees it: parsed once, where the hook reads
/// it, and handed to the hook server as it is (docs/architecture.md
/// "Hooks").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookEvent {
    /// The event's name as the agent spells it (for logs).
    pub name: String,
    pub session_id: String,
    /// The agent's working directory: the project.
    pub cwd: String,
    /// Where the agent writes the session's conversation.
    pub transcript_path: Option<String>,
    /// `SessionStart`'s `source` (`startup`, `resume`, …).
    pub source: Option<String>,
    pub step: Step,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    SessionStart,
    /// The user sent a prompt: a turn begins.
    Prompt(String),
    BeforeTool {
        tool: String,
        input: Value,
    },
    AfterTool {
        tool: String,
        input: Value,
    },
    /// The agent finished its turn.
    TurnEnd,
    SessionEnd,
    /// An event rewind does not act on.
    Other,
}

#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("the hook payload is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("the hook payload has no {0}")]
    Missing(&'static str),
}

/// One event to record, as a hook process hands it over.
pub struct Delivery<'a> {
    pub agent: Agent,
    /// The payload, parsed where the hook read it (the only parse).
    pub event: &'a HookEvent,
    /// The project as the hook process found it (its environment names it:
    /// [`project_dir`]); `None`: find it here.
    pub project: Option<PathBuf>,
    /// The hook process's own id for this event: an event delivered twice
    /// (to a server that answered too late, then by the hook alone) is
    /// recorded once.
    pub event_id: Option<String>,
    /// The store to record in: the hook server's own (`rewind server run
    /// --store`); `None`: the project's default store.
    pub store: Option<PathBuf>,
}

impl<'a> Delivery<'a> {
    /// An event handled by the hook process itself.
    pub fn one_shot(agent: Agent, event: &'a HookEvent) -> Delivery<'a> {
        Delivery {
            agent,
            event,
            project: None,
            event_id: None,
            store: None,
        }
    }
}

/// The project: the directory the agent was started in, which Claude Code
/// and Gemini CLI pass to hooks (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`)
/// and which stays the same when a shell tool `cd`s elsewhere; else the
/// payload's `cwd` (Codex passes no such variable; OpenCode's plugin puts
/// its project `directory` there).
pub fn project_dir(agent: Agent, event: &HookEvent) -> PathBuf {
    let var = match agent {
        Agent::ClaudeCode => Some("CLAUDE_PROJECT_DIR"),
        Agent::Gemini => Some("GEMINI_PROJECT_DIR"),
        Agent::Qwen => Some("QWEN_PROJECT_DIR"),
        Agent::Copilot => Some("COPILOT_PROJECT_DIR"),
        Agent::Droid => Some("FACTORY_PROJECT_DIR"),
        // Cline's payload names its workspace root, where the hook runs.
        Agent::Codex | Agent::OpenCode | Agent::Kilo | Agent::Cline => None,
    };
    var.and_then(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(&event.cwd))
}
