//! What Cline's CLI (3.0.65) sends its hook files on stdin, as the events of
//! payload.rs. Its payloads are of its own shape (tests/agents/samples/
//! cline.jsonl), named by `hookName`:
//!
//! - `agent_start` (`TaskStart`, each run of a prompt, a resumed task's too)
//!   and `agent_resume` (`TaskResume`): a turn begins. The payload carries no
//!   prompt, so the turn's checkpoint has no label of its own.
//! - `tool_call` (`PreToolUse`, awaited): `tool_call {name, input}`.
//! - `tool_result` (`PostToolUse`, awaited): `tool_result {name, input, …}`.
//! - `agent_end` (`TaskComplete`), `agent_abort` (`TaskCancel`),
//!   `agent_error` (`TaskError`): the turn ended.
//!
//! The session is `sessionContext.rootSessionId` (a task's `taskId` is new
//! at every run), the project `workspaceRoots[0]` (the hook runs there).
//! No transcript is named.

use serde::Deserialize;
use serde_json::Value;

use super::event::{HookEvent, PayloadError, Step};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    hook_name: Option<String>,
    session_context: Option<SessionContext>,
    #[serde(default)]
    workspace_roots: Vec<String>,
    #[serde(rename = "tool_call")]
    tool_call: Option<Tool>,
    #[serde(rename = "tool_result")]
    tool_result: Option<Tool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionContext {
    root_session_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Tool {
    name: Option<String>,
    #[serde(default)]
    input: Value,
}

pub fn parse(input: &[u8]) -> Result<HookEvent, PayloadError> {
    let raw: Raw = serde_json::from_slice(input)?;
    let name = raw.hook_name.ok_or(PayloadError::Missing("hookName"))?;
    let tool = |t: Option<Tool>| {
        let t = t.ok_or(PayloadError::Missing("the tool"))?;
        Ok::<_, PayloadError>((t.name.unwrap_or_default(), t.input))
    };
    let step = match name.as_str() {
        "agent_start" | "agent_resume" => Step::Prompt(String::new()),
        "tool_call" => {
            let (tool, input) = tool(raw.tool_call)?;
            Step::BeforeTool { tool, input }
        }
        "tool_result" => {
            let (tool, input) = tool(raw.tool_result)?;
            Step::AfterTool { tool, input }
        }
        "agent_end" | "agent_abort" | "agent_error" => Step::TurnEnd,
        _ => Step::Other,
    };
    Ok(HookEvent {
        session_id: raw
            .session_context
            .and_then(|c| c.root_session_id)
            .ok_or(PayloadError::Missing("sessionContext.rootSessionId"))?,
        cwd: raw
            .workspace_roots
            .into_iter()
            .next()
            .ok_or(PayloadError::Missing("workspaceRoots"))?,
        transcript_path: None,
        source: None,
        name,
        step,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base(hook: &str) -> Value {
        json!({"hookName": hook, "taskId": "conv_1", "sessionContext": {"rootSessionId": "s1"},
               "workspaceRoots": ["/p"], "workspaceInfo": {"rootPath": "/p"}})
    }

    fn parsed(v: Value) -> Result<HookEvent, PayloadError> {
        parse(v.to_string().as_bytes())
    }

    #[test]
    fn cline_hooks_map_to_the_same_steps() {
        let start = parsed(base("agent_start")).unwrap();
        assert_eq!(start.step, Step::Prompt(String::new()));
        assert_eq!(
            (start.session_id.as_str(), start.cwd.as_str()),
            ("s1", "/p")
        );
        let mut call = base("tool_call");
        call["tool_call"] = json!({"id": "c", "name": "editor", "input": {"path": "/p/a.txt"}});
        assert_eq!(
            parsed(call).unwrap().step,
            Step::BeforeTool {
                tool: "editor".into(),
                input: json!({"path": "/p/a.txt"})
            }
        );
        let mut result = base("tool_result");
        result["tool_result"] = json!({"name": "run_commands", "input": {"commands": ["ls"]}});
        assert!(matches!(
            parsed(result).unwrap().step,
            Step::AfterTool { tool, .. } if tool == "run_commands"
        ));
        for end in ["agent_end", "agent_abort", "agent_error"] {
            assert_eq!(parsed(base(end)).unwrap().step, Step::TurnEnd);
        }
        assert_eq!(parsed(base("session_shutdown")).unwrap().step, Step::Other);
    }

    /// A payload without what rewind needs is an error (logged as a hook's
    /// failure), never a guess.
    #[test]
    fn what_is_missing_is_named() {
        let mut no_session = base("agent_start");
        no_session["sessionContext"] = json!({});
        assert!(matches!(
            parsed(no_session),
            Err(PayloadError::Missing("sessionContext.rootSessionId"))
        ));
        let mut no_root = base("agent_start");
        no_root["workspaceRoots"] = json!([]);
        assert!(matches!(
            parsed(no_root),
            Err(PayloadError::Missing("workspaceRoots"))
        ));
        assert!(matches!(
            parsed(base("tool_call")),
            Err(PayloadError::Missing("the tool"))
        ));
        assert!(matches!(parse(b"[]"), Err(PayloadError::NotJson(_))));
    }
}
