//! Claude Code's transcript (`projects/<cwd>/<session id>.jsonl`): one JSON
//! object a line; the conversation is the lines that carry a `uuid` (user,
//! assistant, attachment and system lines, chained by `parentUuid`), among
//! bookkeeping lines without one (`queue-operation`, `last-prompt`, …). At
//! `UserPromptSubmit` the prompt's `queue-operation` lines are written and
//! its `user` line is not (Claude Code 2.1.331): the conversation before the
//! prompt ends with the last line that has a `uuid`.

use serde::Deserialize;
use serde_json::Value;

use super::{not_json, Cut, Line, Moment};

#[derive(Deserialize)]
struct Light {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    uuid: Option<String>,
}

fn light(line: &Line<'_>) -> Result<Light, String> {
    serde_json::from_slice(line.text).map_err(|_| not_json(line))
}

pub fn locate(moment: Moment<'_>, lines: &[Line<'_>]) -> Result<Option<Cut>, String> {
    let parsed: Vec<Light> = lines.iter().map(light).collect::<Result<_, _>>()?;
    let mut messages = lines
        .iter()
        .zip(&parsed)
        .rev()
        .filter_map(|(l, p)| Some((l, p.uuid.as_deref()?, p.kind.as_deref())));
    let mut last = messages.next();
    if let (Moment::Prompt(prompt), Some((line, _, Some("user")))) = (moment, last) {
        // Should a version write the prompt's own line before the hook, the
        // conversation before the prompt ends above it.
        if is_prompt_line(line, prompt) {
            last = messages.next();
        }
    }
    Ok(last.map(|(line, uuid, _)| Cut {
        end: line.end,
        position: uuid.to_string(),
    }))
}

/// Whether a `user` line is the prompt itself.
fn is_prompt_line(line: &Line<'_>, prompt: &str) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(line.text) else {
        return false;
    };
    match v.pointer("/message/content") {
        Some(Value::String(s)) => s == prompt,
        Some(Value::Array(parts)) => parts
            .iter()
            .any(|p| p.get("text").and_then(Value::as_str) == Some(prompt)),
        _ => false,
    }
}

/// Check a fork before it is written: every line a JSON object, every
/// `sessionId` the new one, and the last line with a `uuid` the position.
pub fn check(lines: &[Line<'_>], session_id: &str, position: Option<&str>) -> Result<(), String> {
    let mut last_uuid = None;
    for line in lines {
        let v: Value = serde_json::from_slice(line.text).map_err(|_| not_json(line))?;
        let Value::Object(o) = &v else {
            return Err(not_json(line));
        };
        if let Some(id) = o.get("sessionId") {
            if id.as_str() != Some(session_id) {
                return Err(format!("line {} names another session", line.number));
            }
        }
        if let Some(u) = o.get("uuid").and_then(Value::as_str) {
            last_uuid = Some(u.to_string());
        }
    }
    if last_uuid.as_deref() != position {
        return Err(format!(
            "it does not end with message {}",
            position.unwrap_or("(none)")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::lines;
    use super::*;

    #[test]
    fn the_conversation_before_a_prompt_ends_with_the_last_message() {
        let t = concat!(
            r#"{"type":"user","uuid":"u1","message":{"content":"one"}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a1"}"#,
            "\n",
            r#"{"type":"last-prompt"}"#,
            "\n",
            r#"{"type":"queue-operation","operation":"enqueue","content":"two"}"#,
            "\n",
        );
        let l = lines(t.as_bytes(), 0, 0);
        let cut = locate(Moment::Prompt("two"), &l).unwrap().unwrap();
        assert_eq!(cut.position, "a1");
        assert_eq!(cut.end, l[1].end);
        // The prompt's own line, if it is there already, is not kept.
        let t2 = format!(
            "{t}{}\n",
            r#"{"type":"user","uuid":"u2","message":{"content":"two"}}"#
        );
        let l2 = lines(t2.as_bytes(), 0, 0);
        assert_eq!(
            locate(Moment::Prompt("two"), &l2)
                .unwrap()
                .unwrap()
                .position,
            "a1"
        );
        assert_eq!(
            locate(Moment::TurnEnd, &l2).unwrap().unwrap().position,
            "u2"
        );
        // Nothing with a uuid: no message.
        let l3 = lines(b"{\"type\":\"mode\"}\n", 0, 0);
        assert_eq!(locate(Moment::Tool, &l3).unwrap(), None);
        // Not JSON: not a Claude Code transcript.
        let bad = lines(b"hello\n", 0, 3);
        assert_eq!(
            locate(Moment::Tool, &bad).unwrap_err(),
            "line 4 is not a JSON object"
        );
    }
}
