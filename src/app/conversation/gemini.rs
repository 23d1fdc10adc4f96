//! Gemini CLI's session file (`tmp/<project>/chats/session-<time>-<id8>.jsonl`):
//! one JSON object a line — a header (`sessionId`, `projectHash`, …),
//! message records (`id`, `type`, `content`; a later record with a known id
//! replaces it), `{"$set": {…}}` (a `messages` list replaces them all) and
//! `{"$rewindTo": id}`. Nothing of a turn is written before `BeforeAgent`
//! (Gemini CLI 0.61.0), so the conversation at any event is every whole
//! line; the position is the id of the last message.

use serde::Deserialize;
use serde_json::Value;

use super::{not_json, Cut, Line};

#[derive(Deserialize)]
struct Id {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
struct Set {
    #[serde(default)]
    messages: Option<Vec<Id>>,
}

#[derive(Deserialize)]
struct Light {
    #[serde(default)]
    id: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default, rename = "$set")]
    set: Option<Set>,
}

/// The id of the last message a line names, if it names one.
fn message_id(l: Light) -> Option<String> {
    match l {
        Light {
            id: Some(id),
            kind: Some(_),
            ..
        } => Some(id),
        Light {
            set: Some(Set { messages: Some(m) }),
            ..
        } => m.into_iter().next_back().and_then(|m| m.id),
        _ => None,
    }
}

pub fn locate(lines: &[Line<'_>]) -> Result<Option<Cut>, String> {
    let mut position = None;
    for line in lines {
        let l: Light = serde_json::from_slice(line.text).map_err(|_| not_json(line))?;
        if let Some(id) = message_id(l) {
            position = Some(id);
        }
    }
    let Some(last) = lines.last() else {
        return Ok(None);
    };
    Ok(position.map(|position| Cut {
        end: last.end,
        position,
    }))
}

/// The session file an imported session came from: Gemini CLI 0.61.0
/// writes `{"type":"info","content":"Imported session from FILE"}` among
/// the first lines of a session started with `--session-file FILE`.
pub fn imported_from(head: &[Line<'_>]) -> Option<String> {
    head.iter().find_map(|line| {
        let v: Value = serde_json::from_slice(line.text).ok()?;
        if v.get("type").and_then(Value::as_str) != Some("info") {
            return None;
        }
        v.get("content")?
            .as_str()?
            .strip_prefix("Imported session from ")
            .map(str::to_string)
    })
}

/// Check a fork before it is written: every line a JSON object, the first a
/// header with the new session id.
pub fn check(lines: &[Line<'_>], session_id: &str) -> Result<(), String> {
    for line in lines {
        let v: Value = serde_json::from_slice(line.text).map_err(|_| not_json(line))?;
        if !v.is_object() {
            return Err(not_json(line));
        }
        if line.number == 1 && v.get("sessionId").and_then(Value::as_str) != Some(session_id) {
            return Err("its first line is not a session header with the new id".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::lines;
    use super::*;

    #[test]
    fn the_position_is_the_last_message() {
        let t = concat!(
            r#"{"sessionId":"s","projectHash":"h"}"#,
            "\n",
            r#"{"$set":{"messages":[{"id":"m1"},{"id":"m2"}]}}"#,
            "\n",
            r#"{"$set":{"lastUpdated":"x"}}"#,
            "\n",
        );
        let l = lines(t.as_bytes(), 0, 0);
        let cut = locate(&l).unwrap().unwrap();
        assert_eq!((cut.end, cut.position.as_str()), (l[2].end, "m2"));
        let more = r#"{"id":"m3","type":"gemini","content":"x"}"#.to_string() + "\n";
        assert_eq!(
            locate(&lines(more.as_bytes(), 0, 0))
                .unwrap()
                .unwrap()
                .position,
            "m3"
        );
        assert_eq!(locate(&lines(b"{}\n", 0, 0)).unwrap(), None);
        assert!(locate(&lines(b"nope\n", 0, 0)).is_err());
        let head = r#"{"id":"import-1","type":"info","content":"Imported session from /s/f.jsonl"}"#
            .to_string() + "\n";
        assert_eq!(
            imported_from(&lines(head.as_bytes(), 0, 0)).as_deref(),
            Some("/s/f.jsonl")
        );
    }
}
