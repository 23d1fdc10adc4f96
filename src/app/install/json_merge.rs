//! JSON settings files edited in place: an order-preserving document (the
//! project's `serde_json` sorts object keys, and enabling its
//! `preserve_order` feature would change every other JSON the project
//! prints) and the hook-list merge the three agents share.
//!
//! A file is parsed into [`Json`], edited, and printed back the way the
//! agents and `JSON.stringify(v, null, 2)` print it (two-space indent). A
//! file already in that layout keeps every byte we did not touch; any other
//! layout keeps its keys, order and values but is re-indented.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value whose objects keep their keys in file order (duplicates
/// included; lookups see the last one, as `JSON.parse` does).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn object() -> Json {
        Json::Object(Vec::new())
    }

    pub fn str(s: &str) -> Json {
        Json::String(s.to_owned())
    }

    pub fn num(n: u64) -> Json {
        Json::Number(n.into())
    }

    fn members(&self) -> Option<&Vec<(String, Json)>> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.members()?.iter().rposition(|(k, _)| k == key)
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        let i = self.position(key)?;
        self.members().map(|m| &m[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        let i = self.position(key)?;
        match self {
            Json::Object(m) => Some(&mut m[i].1),
            _ => None,
        }
    }

    /// Set `key` (in place if present, else appended). No-op on a non-object.
    pub fn insert(&mut self, key: &str, value: Json) {
        match self.position(key) {
            Some(i) => {
                if let Json::Object(m) = self {
                    m[i].1 = value;
                }
            }
            None => {
                if let Json::Object(m) = self {
                    m.push((key.to_owned(), value));
                }
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let i = self.position(key)?;
        match self {
            Json::Object(m) => Some(m.remove(i).1),
            _ => None,
        }
    }

    pub fn is_empty_container(&self) -> bool {
        match self {
            Json::Object(m) => m.is_empty(),
            Json::Array(a) => a.is_empty(),
            _ => false,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Parse a settings file's text. Whitespace only counts as `{}`; the top
/// level must be an object.
pub fn parse(text: &str) -> Result<Json, String> {
    if text.trim().is_empty() {
        return Ok(Json::object());
    }
    let v: Json = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    match v {
        Json::Object(_) => Ok(v),
        _ => Err("the top level is not a JSON object".into()),
    }
}

/// Print a document with two-space indentation, with a final newline if
/// `newline`.
pub fn print(v: &Json, newline: bool) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| unreachable!());
    if newline {
        s.push('\n');
    }
    s
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            members.push((k, v));
        }
        Ok(Json::Object(members))
    }
}

/// How one event's hook stood after [`add_hooks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // `Added::Added` reads as the sentence it is
pub enum Added {
    /// A new entry was appended.
    Added,
    /// A rewind hook was there with another binary path; its command was
    /// replaced.
    Updated,
    /// Our exact command was there already.
    Present,
}

/// Register `entry` (one `{"type":"command","command":…}` object whose
/// command is `command`) under `hooks.<event>` for each event, in the
/// shape Claude Code, Codex and Gemini CLI share:
/// `{"hooks":{"<Event>":[{"hooks":[entry]}]}}`. An event that already has a
/// rewind hook (`is_ours`) keeps it, with its command set to `command`.
pub fn add_hooks(
    root: &mut Json,
    events: &[(&str, Json)],
    command: &str,
    is_ours: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Added)>, String> {
    if root.get("hooks").is_none() {
        root.insert("hooks", Json::object());
    }
    let hooks = match root.get_mut("hooks") {
        Some(h @ Json::Object(_)) => h,
        _ => return Err("`hooks` is not an object".into()),
    };
    let mut out = Vec::new();
    for (event, entry) in events {
        if hooks.get(event).is_none() {
            hooks.insert(event, Json::Array(Vec::new()));
        }
        let groups = match hooks.get_mut(event) {
            Some(Json::Array(a)) => a,
            _ => return Err(format!("`hooks.{event}` is not an array")),
        };
        let mut state = None;
        'find: for group in groups.iter_mut() {
            if let Some(Json::Array(list)) = group.get_mut("hooks") {
                for h in list.iter_mut() {
                    let Some(cmd) = h.get("command").and_then(Json::as_str) else {
                        continue;
                    };
                    if !is_ours(cmd) {
                        continue;
                    }
                    if cmd == command {
                        state = Some(Added::Present);
                    } else {
                        h.insert("command", Json::str(command));
                        state = Some(Added::Updated);
                    }
                    break 'find;
                }
            }
        }
        let state = state.unwrap_or_else(|| {
            groups.push(Json::Object(vec![(
                "hooks".into(),
                Json::Array(vec![entry.clone()]),
            )]));
            Added::Added
        });
        out.push((event.to_string(), state));
    }
    Ok(out)
}

/// Remove every hook entry whose command `is_ours`, then the groups,
/// event arrays and `hooks` object that this left empty. Returns the
/// events it removed hooks from.
pub fn remove_hooks(
    root: &mut Json,
    is_ours: impl Fn(&str) -> bool,
) -> Result<Vec<String>, String> {
    let hooks = match root.get_mut("hooks") {
        None => return Ok(Vec::new()),
        Some(Json::Object(m)) => m,
        Some(_) => return Err("`hooks` is not an object".into()),
    };
    let mut removed = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Json::Array(groups) = groups else {
            continue;
        };
        let mut any = false;
        groups.retain_mut(|group| {
            let Some(Json::Array(list)) = group.get_mut("hooks") else {
                return true;
            };
            let n = list.len();
            list.retain(|h| {
                !h.get("command")
                    .and_then(Json::as_str)
                    .is_some_and(&is_ours)
            });
            if list.len() == n {
                return true;
            }
            any = true;
            !list.is_empty()
        });
        if any {
            removed.push(event.clone());
        }
    }
    hooks.retain(|(event, groups)| !(removed.contains(event) && groups.is_empty_container()));
    if !removed.is_empty() && hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(removed)
}
