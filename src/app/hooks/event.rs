//! One hook event as rewind acts on it ([`HookEvent`], its [`Step`]), and
//! why a payload gives none ([`PayloadError`]): what both payload readers,
//! the agents' hooks (`payload.rs`) and rewind's OpenCode/Kilo plugin
//! (`plugin_payload.rs`), make of what they read. Re-exported from
//! `payload.rs`, where it used to live.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
