//! The agents whose hooks rewind is wired into: their names on the command
//! line, in the store and on the hook server's socket, their commands, and
//! what rewind offers each (the MCP server, the conversation restore).
//! Re-exported from `payload.rs` and `hooks`, where it used to live.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An agent whose hooks rewind is wired into (`rewind install`). On the
/// hook server's socket by the same name as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    #[value(name = "claude-code")]
    #[serde(rename = "claude-code")]
    ClaudeCode,
    Codex,
    Gemini,
    /// OpenCode: a plugin (`.opencode/plugins/rewind.js`) hands its events
    /// to `rewind hook` (plugin_payload.rs).
    #[value(name = "opencode")]
    OpenCode,
    /// Kilo's CLI, built on OpenCode: the same plugin, in `.kilo/`.
    Kilo,
    /// Qwen Code (a Gemini CLI fork with Claude Code's hook events).
    #[value(name = "qwen-code")]
    #[serde(rename = "qwen-code")]
    Qwen,
    /// GitHub Copilot CLI, its hooks registered under Claude Code's event
    /// names (it then sends Claude-shaped payloads).
    Copilot,
    /// Factory's Droid (Claude Code's hook events, `.factory/hooks.json`).
    Droid,
    /// Cline's CLI: a hook file per event in `.clinerules/hooks/`, payloads
    /// of its own shape (cline_payload.rs).
    Cline,
}

impl Agent {
    pub const ALL: [Agent; 9] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::OpenCode,
        Agent::Kilo,
        Agent::Qwen,
        Agent::Copilot,
        Agent::Droid,
        Agent::Cline,
    ];

    /// The agent a name on the command line or in the store names.
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The name on the command line and in the store.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Kilo => "kilo",
            Agent::Qwen => "qwen-code",
            Agent::Copilot => "copilot",
            Agent::Droid => "droid",
            Agent::Cline => "cline",
        }
    }

    /// The agent's command, as `rewind install all` looks for it on PATH.
    pub fn command(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Kilo => "kilo",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
            Agent::Droid => "droid",
            Agent::Cline => "cline",
        }
    }

    /// Whether rewind can cut this agent's conversation at a checkpoint
    /// (docs/agents.md "Restoring the conversation"); the others' transcripts
    /// are not read.
    pub fn has_conversation(self) -> bool {
        matches!(self, Agent::ClaudeCode | Agent::Codex | Agent::Gemini)
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
