//! What an agent's hook sends on stdin, as the events rewind acts on. The
//! three agents share most field names (`session_id`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, `prompt`,
//! `transcript_path`) but not their event names; this is the one place that
//! knows both.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

    /// Whether `rewind install AGENT --mcp` registers the MCP server.
    pub fn mcp_installable(self) -> bool {
        !matches!(self, Agent::Copilot | Agent::Droid | Agent::Cline)
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

/// The fields of a hook payload rewind reads; everything else is ignored.
#[derive(Debug, Deserialize)]
struct Raw {
    session_id: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Value,
    prompt: Option<String>,
    transcript_path: Option<String>,
    source: Option<String>,
}

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

/// Parse what the agent wrote on the hook's stdin.
pub fn parse(agent: Agent, input: &[u8]) -> Result<HookEvent, PayloadError> {
    match agent {
        Agent::OpenCode | Agent::Kilo => return super::plugin_payload::parse(input),
        Agent::Cline => return super::cline_payload::parse(input),
        _ => {}
    }
    let raw: Raw = serde_json::from_slice(input)?;
    let name = raw
        .hook_event_name
        .ok_or(PayloadError::Missing("hook_event_name"))?;
    let tool = || raw.tool_name.clone().unwrap_or_default();
    let step = match (agent, name.as_str()) {
        (_, "SessionStart") => Step::SessionStart,
        // Qwen Code 0.24 fires UserPromptSubmit again, with an empty
        // prompt, each time it sends tool results back to the model: the
        // same turn going on, not a new one.
        (Agent::Qwen, "UserPromptSubmit") if raw.prompt.as_deref().unwrap_or("").is_empty() => {
            Step::Other
        }
        (_, "SessionEnd") => Step::SessionEnd,
        (
            Agent::ClaudeCode | Agent::Codex | Agent::Qwen | Agent::Copilot | Agent::Droid,
            "UserPromptSubmit",
        )
        | (Agent::Gemini, "BeforeAgent") => Step::Prompt(raw.prompt.clone().unwrap_or_default()),
        (
            Agent::ClaudeCode | Agent::Codex | Agent::Qwen | Agent::Copilot | Agent::Droid,
            "PreToolUse",
        )
        | (Agent::Gemini, "BeforeTool") => Step::BeforeTool {
            tool: tool(),
            input: raw.tool_input.clone(),
        },
        (
            Agent::ClaudeCode | Agent::Codex | Agent::Qwen | Agent::Copilot | Agent::Droid,
            "PostToolUse",
        )
        | (Agent::ClaudeCode | Agent::Qwen | Agent::Copilot, "PostToolUseFailure")
        | (Agent::Gemini, "AfterTool") => Step::AfterTool {
            tool: tool(),
            input: raw.tool_input.clone(),
        },
        (
            Agent::ClaudeCode | Agent::Codex | Agent::Qwen | Agent::Copilot | Agent::Droid,
            "Stop",
        )
        | (Agent::Gemini, "AfterAgent") => Step::TurnEnd,
        _ => Step::Other,
    };
    Ok(HookEvent {
        session_id: raw.session_id.ok_or(PayloadError::Missing("session_id"))?,
        cwd: raw.cwd.ok_or(PayloadError::Missing("cwd"))?,
        // Only the transcripts rewind can cut are read.
        transcript_path: raw.transcript_path.filter(|_| agent.has_conversation()),
        source: raw.source,
        name,
        step,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(agent: Agent, v: Value) -> HookEvent {
        parse(agent, v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn each_agents_event_names_map_to_the_same_steps() {
        let base = |name: &str| json!({"session_id": "s", "cwd": "/p", "hook_event_name": name});
        for (agent, prompt, before, after, stop) in [
            (
                Agent::ClaudeCode,
                "UserPromptSubmit",
                "PreToolUse",
                "PostToolUse",
                "Stop",
            ),
            (
                Agent::Codex,
                "UserPromptSubmit",
                "PreToolUse",
                "PostToolUse",
                "Stop",
            ),
            (
                Agent::Gemini,
                "BeforeAgent",
                "BeforeTool",
                "AfterTool",
                "AfterAgent",
            ),
        ] {
            let mut p = base(prompt);
            p["prompt"] = json!("fix it");
            assert_eq!(event(agent, p).step, Step::Prompt("fix it".into()));
            let mut b = base(before);
            b["tool_name"] = json!("Bash");
            b["tool_input"] = json!({"command": "ls"});
            assert_eq!(
                event(agent, b).step,
                Step::BeforeTool {
                    tool: "Bash".into(),
                    input: json!({"command": "ls"})
                }
            );
            assert!(matches!(
                event(agent, base(after)).step,
                Step::AfterTool { .. }
            ));
            assert_eq!(event(agent, base(stop)).step, Step::TurnEnd);
            assert_eq!(event(agent, base("SessionStart")).step, Step::SessionStart);
            assert_eq!(event(agent, base("SessionEnd")).step, Step::SessionEnd);
            assert_eq!(event(agent, base("Notification")).step, Step::Other);
        }
        // Claude Code's event after a tool that failed.
        let mut failed = base("PostToolUseFailure");
        failed["tool_name"] = json!("Bash");
        assert!(matches!(
            event(Agent::ClaudeCode, failed).step,
            Step::AfterTool { .. }
        ));
        // Another agent's name for an event is not taken for it.
        assert_eq!(event(Agent::Gemini, base("Stop")).step, Step::Other);
        // Qwen Code: Claude Code's names; its UserPromptSubmit with an
        // empty prompt (tool results going back to the model) is no new
        // turn; no transcript is read.
        let mut prompt = base("UserPromptSubmit");
        prompt["prompt"] = json!("fix it");
        prompt["transcript_path"] = json!("/t.jsonl");
        let e = event(Agent::Qwen, prompt);
        assert_eq!(e.step, Step::Prompt("fix it".into()));
        assert_eq!(e.transcript_path, None);
        let mut again = base("UserPromptSubmit");
        again["prompt"] = json!("");
        assert_eq!(event(Agent::Qwen, again).step, Step::Other);
        assert_eq!(event(Agent::Qwen, base("Stop")).step, Step::TurnEnd);
        assert!(matches!(
            event(Agent::Qwen, base("PostToolUseFailure")).step,
            Step::AfterTool { .. }
        ));
    }

    /// The socket spells an agent as the command line does.
    #[test]
    fn an_agent_crosses_the_socket_by_its_name() {
        for agent in Agent::ALL {
            let wire = serde_json::to_value(agent).unwrap();
            assert_eq!(wire, json!(agent.name()));
            assert_eq!(serde_json::from_value::<Agent>(wire).unwrap(), agent);
        }
    }

    #[test]
    fn malformed_payloads_are_errors_not_panics() {
        assert!(matches!(
            parse(Agent::Codex, b"{"),
            Err(PayloadError::NotJson(_))
        ));
        assert!(matches!(
            parse(Agent::Codex, b"[1]"),
            Err(PayloadError::NotJson(_))
        ));
        let no_session = json!({"cwd": "/p", "hook_event_name": "Stop"}).to_string();
        assert!(matches!(
            parse(Agent::Codex, no_session.as_bytes()),
            Err(PayloadError::Missing("session_id"))
        ));
    }

    #[test]
    fn the_recorded_payloads_of_the_real_agents_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/samples");
        for (agent, file) in [
            (Agent::ClaudeCode, "claude.jsonl"),
            (Agent::Codex, "codex.jsonl"),
            (Agent::Gemini, "gemini.jsonl"),
            // Qwen Code 0.24.4 headless fired no SessionEnd.
            (Agent::Qwen, "qwen.jsonl"),
            // Copilot CLI 1.0.102 under Claude Code's event names (the
            // recorder had its other events too: none fired).
            (Agent::Copilot, "copilot.jsonl"),
            // Droid 0.215.0 `exec`: no prompt event, nothing else either.
            (Agent::Droid, "droid.jsonl"),
            // Cline 3.0.65: a task's start (as the prompt), tools, its end.
            (Agent::Cline, "cline.jsonl"),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let mut steps = std::collections::BTreeSet::new();
            for line in text.lines() {
                let record: Value = serde_json::from_str(line).unwrap();
                let payload = record.get("payload").unwrap_or(&record);
                let e = parse(agent, payload.to_string().as_bytes()).unwrap();
                steps.insert(format!("{:?}", std::mem::discriminant(&e.step)));
            }
            // Start, prompt, before, after, turn end, end, and others.
            // (Qwen Code: no end; Copilot CLI: every event it sent is one
            // rewind acts on.)
            let kinds = match agent {
                Agent::Qwen | Agent::Copilot => 6,
                Agent::Droid => 5,
                Agent::Cline => 4,
                _ => 7,
            };
            assert_eq!(steps.len(), kinds, "{file}");
        }
        // rewind's OpenCode plugin hands on only what it records: start,
        // prompt, before, after, turn end (OpenCode has no session end).
        for (agent, file) in [
            (Agent::OpenCode, "opencode.jsonl"),
            (Agent::Kilo, "kilo.jsonl"),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let mut steps = std::collections::BTreeSet::new();
            for line in text.lines() {
                let record: Value = serde_json::from_str(line).unwrap();
                let e = parse(agent, record["payload"].to_string().as_bytes()).unwrap();
                assert!(e.session_id.starts_with("ses_"), "{line}");
                steps.insert(format!("{:?}", std::mem::discriminant(&e.step)));
            }
            assert_eq!(steps.len(), 5, "{file}");
        }
    }
}
