//! What an agent's hook sends on stdin, as the events rewind acts on. The
//! three agents share most field names (`session_id`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, `prompt`,
//! `transcript_path`) but not their event names; this is the one place that
//! knows both.

use serde::Deserialize;
use serde_json::Value;

pub use super::agent::Agent;
pub use super::event::{HookEvent, PayloadError, Step};

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
