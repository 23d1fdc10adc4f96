//! Codex's rollout (`sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`):
//! one JSON object a line, each with a `type` (`session_meta`,
//! `response_item`, `event_msg`, `turn_context`, …). A turn begins with an
//! `event_msg` whose payload is `task_started`, written (with the turn's
//! `turn_context`) before `UserPromptSubmit` (Codex 0.169.0): the
//! conversation before a prompt is the lines above that one. The position
//! is a line number: the lines kept.

use serde::Deserialize;
use serde_json::Value;

use super::{not_json, Cut, Line, Moment};

#[derive(Deserialize)]
struct Payload {
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct Light {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    payload: Option<Payload>,
}

fn light(line: &Line<'_>) -> Result<Light, String> {
    serde_json::from_slice(line.text)
        .map_err(|_| format!("line {} is not a rollout item", line.number))
}

fn is_turn_start(l: &Light) -> bool {
    l.kind == "event_msg"
        && l.payload.as_ref().and_then(|p| p.kind.as_deref()) == Some("task_started")
}

pub fn locate(moment: Moment<'_>, lines: &[Line<'_>]) -> Result<Option<Cut>, String> {
    let parsed: Vec<Light> = lines.iter().map(light).collect::<Result<_, _>>()?;
    let Some(last) = lines.last() else {
        return Ok(None);
    };
    if let Moment::Prompt(_) = moment {
        if let Some(i) = parsed.iter().rposition(is_turn_start) {
            let line = &lines[i];
            return Ok(Some(Cut {
                end: line.start,
                position: (line.number - 1).to_string(),
            }));
        }
    }
    Ok(Some(Cut {
        end: last.end,
        position: last.number.to_string(),
    }))
}

/// Check a fork before it is written: every line a rollout item, the first
/// the session's `session_meta` with the new id, and as many lines as the
/// position says.
pub fn check(lines: &[Line<'_>], thread_id: &str, position: Option<&str>) -> Result<(), String> {
    for line in lines {
        let v: Value = serde_json::from_slice(line.text).map_err(|_| not_json(line))?;
        if v.get("type").and_then(Value::as_str).is_none() {
            return Err(format!("line {} is not a rollout item", line.number));
        }
        if line.number == 1
            && (v.get("type").and_then(Value::as_str) != Some("session_meta")
                || v.pointer("/payload/id").and_then(Value::as_str) != Some(thread_id))
        {
            return Err("its first line is not the session's meta with the new id".into());
        }
    }
    if let Some(p) = position {
        if p != lines.len().to_string() {
            return Err(format!("it has {} lines, not {p}", lines.len()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::lines;
    use super::*;

    #[test]
    fn the_conversation_before_a_prompt_ends_above_its_task_started() {
        let t = concat!(
            r#"{"type":"response_item","payload":{"type":"message"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"task_complete"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"task_started"}}"#,
            "\n",
            r#"{"type":"turn_context","payload":{}}"#,
            "\n",
        );
        let l = lines(t.as_bytes(), 100, 10);
        let cut = locate(Moment::Prompt("p"), &l).unwrap().unwrap();
        assert_eq!(cut.end, l[2].start);
        assert_eq!(cut.position, "12");
        let end = locate(Moment::TurnEnd, &l).unwrap().unwrap();
        assert_eq!((end.end, end.position.as_str()), (l[3].end, "14"));
        assert!(locate(Moment::Tool, &lines(b"{\"no\":1}\n", 0, 0)).is_err());
    }
}
