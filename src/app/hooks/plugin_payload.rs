//! What rewind's OpenCode plugin (install/opencode_plugin.js, also Kilo's)
//! hands to `rewind hook`: OpenCode's own hook arguments, unchanged but for
//! the session id of a subagent (its root's), under the hook's name:
//!
//! - `chat.message`: `input {sessionID, …}`, `output {parts: [{type: "text", text}, …]}`
//! - `tool.execute.before`: `input {tool, sessionID, callID}`, `output {args}`
//! - `tool.execute.after`: `input {tool, sessionID, callID, args}` (the plugin adds `args`)
//! - `session.created`, `session.idle`: `event {type, properties}`
//!
//! plus `directory`, the plugin's project directory (OpenCode's `--dir` or
//! `$PWD`): hooks carry no cwd of their own. Mapped here onto the events of
//! payload.rs, so everything after is the same as for the other agents.

use serde::Deserialize;
use serde_json::Value;

use super::event::{HookEvent, PayloadError, Step};

#[derive(Debug, Deserialize)]
struct Raw {
    hook_event_name: Option<String>,
    directory: Option<String>,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    output: Value,
    #[serde(default)]
    event: Value,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The prompt of a `chat.message`: its text parts, in order (parts the
/// agent made up itself, `synthetic`, left out).
fn prompt(output: &Value) -> String {
    let parts = output.get("parts").and_then(Value::as_array);
    let texts: Vec<&str> = parts
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter(|p| p.get("synthetic").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

pub fn parse(input: &[u8]) -> Result<HookEvent, PayloadError> {
    let raw: Raw = serde_json::from_slice(input)?;
    let name = raw
        .hook_event_name
        .ok_or(PayloadError::Missing("hook_event_name"))?;
    let props = raw.event.get("properties").unwrap_or(&Value::Null);
    let tool = || text(&raw.input, "tool").unwrap_or_default();
    let (session, step) = match name.as_str() {
        "chat.message" => (
            text(&raw.input, "sessionID"),
            Step::Prompt(prompt(&raw.output)),
        ),
        "tool.execute.before" => (
            text(&raw.input, "sessionID"),
            Step::BeforeTool {
                tool: tool(),
                input: raw.output.get("args").cloned().unwrap_or(Value::Null),
            },
        ),
        "tool.execute.after" => (
            text(&raw.input, "sessionID"),
            Step::AfterTool {
                tool: tool(),
                input: raw.input.get("args").cloned().unwrap_or(Value::Null),
            },
        ),
        "session.created" => (
            props.get("info").and_then(|i| text(i, "id")),
            Step::SessionStart,
        ),
        "session.idle" => (text(props, "sessionID"), Step::TurnEnd),
        _ => (
            text(&raw.input, "sessionID").or_else(|| text(props, "sessionID")),
            Step::Other,
        ),
    };
    Ok(HookEvent {
        session_id: session.ok_or(PayloadError::Missing("session id"))?,
        cwd: raw.directory.ok_or(PayloadError::Missing("directory"))?,
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

    fn step(v: Value) -> Step {
        parse(v.to_string().as_bytes()).unwrap().step
    }

    #[test]
    fn opencode_hooks_map_to_the_same_steps() {
        let base = json!({"directory": "/p", "worktree": "/"});
        let with = |name: &str, extra: Value| {
            let mut v = base.clone();
            v["hook_event_name"] = json!(name);
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            v
        };
        let e = parse(
            with(
                "chat.message",
                json!({"input": {"sessionID": "ses_1"}, "output": {"parts": [
                    {"type": "text", "text": "fix it"},
                    {"type": "file", "url": "x"},
                    {"type": "text", "text": "made up", "synthetic": true},
                ]}}),
            )
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(e.step, Step::Prompt("fix it".into()));
        assert_eq!((e.session_id.as_str(), e.cwd.as_str()), ("ses_1", "/p"));
        assert_eq!(
            step(with(
                "tool.execute.before",
                json!({"input": {"tool": "bash", "sessionID": "s", "callID": "c"},
                       "output": {"args": {"command": "ls"}}})
            )),
            Step::BeforeTool {
                tool: "bash".into(),
                input: json!({"command": "ls"})
            }
        );
        assert_eq!(
            step(with(
                "tool.execute.after",
                json!({"input": {"tool": "write", "sessionID": "s", "args": {"filePath": "/p/a"}}})
            )),
            Step::AfterTool {
                tool: "write".into(),
                input: json!({"filePath": "/p/a"})
            }
        );
        assert_eq!(
            step(with(
                "session.created",
                json!({"event": {"type": "session.created", "properties": {"info": {"id": "s"}}}})
            )),
            Step::SessionStart
        );
        assert_eq!(
            step(with(
                "session.idle",
                json!({"event": {"type": "session.idle", "properties": {"sessionID": "s"}}})
            )),
            Step::TurnEnd
        );
        assert_eq!(
            step(with("file.edited", json!({"input": {"sessionID": "s"}}))),
            Step::Other
        );
    }

    #[test]
    fn malformed_plugin_payloads_are_errors() {
        assert!(matches!(parse(b"nope"), Err(PayloadError::NotJson(_))));
        let no_dir = json!({"hook_event_name": "session.idle",
            "event": {"properties": {"sessionID": "s"}}});
        assert!(matches!(
            parse(no_dir.to_string().as_bytes()),
            Err(PayloadError::Missing("directory"))
        ));
        let no_session = json!({"hook_event_name": "tool.execute.before", "directory": "/p"});
        assert!(matches!(
            parse(no_session.to_string().as_bytes()),
            Err(PayloadError::Missing("session id"))
        ));
    }
}
