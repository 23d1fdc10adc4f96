//! The two wire envelopes (docs/protocol.md "Envelopes"): recognising them in
//! a parsed line and shaping responses and notifications for each.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use jsonrpsee::types::{ErrorObject, ErrorObjectOwned};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub(crate) use super::codes::{
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
};

/// Which envelope a message is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Envelope {
    JsonRpc,
    Pi,
}

/// The envelope of the most recent well-formed request, shared between the server (which
/// sets it) and every `Notifier` (which reads it), because unparseable lines and
/// server-initiated notifications are written in that envelope.
#[derive(Debug, Clone, Default)]
pub(crate) struct EnvelopeMemory(Arc<AtomicU8>);

impl EnvelopeMemory {
    pub(crate) fn get(&self) -> Envelope {
        // Relaxed suffices: a handler reads this after the server set it and then handed
        // the request to the handler (a task spawn), which already orders the two.
        match self.0.load(Ordering::Relaxed) {
            1 => Envelope::Pi,
            _ => Envelope::JsonRpc,
        }
    }

    pub(crate) fn set(&self, envelope: Envelope) {
        let raw = match envelope {
            Envelope::JsonRpc => 0,
            Envelope::Pi => 1,
        };
        self.0.store(raw, Ordering::Relaxed);
    }
}

/// A request id as it is written back: the JSON text of the id the request carried.
///
/// Held as text rather than a `Value` because `Value` stores a number that fits neither
/// `u64` nor `i64` as an `f64`, so `100000000000000000000000000000` would come back as
/// `1e+29` (and `1.50` as `1.5`), which a host matching replies by id cannot correlate.
#[derive(Debug, Clone)]
pub(crate) struct Id(Box<RawValue>);

impl Id {
    pub(crate) fn null() -> Self {
        Self(RawValue::NULL.to_owned())
    }

    /// The id parsed from the line; `exact` is its text in the line when [`ExactIds`]
    /// captured it, which wins over re-encoding `value`.
    fn new(value: &Value, exact: Option<&RawValue>) -> Self {
        if let Some(raw) = exact.and_then(|raw| RawValue::from_string(compact(raw.get())).ok()) {
            return Self(raw);
        }
        // Encoding a `Value` cannot fail (its map keys are strings, its numbers finite);
        // should it ever, null is the id a reply can still carry.
        serde_json::value::to_raw_value(value)
            .map(Self)
            .unwrap_or_else(|_| Self::null())
    }

    /// JSON-RPC allows only these as ids; anything else cannot be echoed in its envelope.
    pub(crate) fn is_number_or_string(&self) -> bool {
        // A `RawValue` holds exactly one JSON value without surrounding whitespace, so its
        // first byte names its kind.
        matches!(
            self.0.get().as_bytes().first(),
            Some(b'"' | b'-' | b'0'..=b'9')
        )
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

/// The text of JSON whitespace-free: output is compact JSON, but a pi id may be an object
/// or array written with spaces. The input is one valid JSON value, in which whitespace
/// outside strings is insignificant and inside strings only a literal space can occur
/// (control characters must be escaped), so tracking strings and escapes suffices.
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

/// The text of the top-level `"id"` members of one line, read only when some id would not
/// survive a round trip through `Value` (see [`Id`]); the common integer and string ids
/// never cost a second parse.
#[derive(Debug, Default)]
pub(crate) enum ExactIds {
    /// Every id round-trips through `Value`.
    #[default]
    NotNeeded,
    /// The line is an object; its `"id"` text.
    Object(Option<Box<RawValue>>),
    /// The line is a batch; each element's `"id"` text, by position.
    Batch(Vec<Option<Box<RawValue>>>),
}

impl ExactIds {
    /// Looks up the ids' text in `line`, which `value` was parsed from.
    pub(crate) fn find(value: &Value, line: &[u8]) -> Self {
        match value {
            Value::Object(object) if object.get("id").is_some_and(|id| !round_trips(id)) => {
                Self::Object(top_level_id(line))
            }
            Value::Array(items)
                if items
                    .iter()
                    .any(|item| item.get("id").is_some_and(|id| !round_trips(id))) =>
            {
                // The line parsed as a `Value`, so it parses again; if it somehow did not,
                // the ids fall back to their `Value` form.
                let elements: Vec<&RawValue> = serde_json::from_slice(line).unwrap_or_default();
                Self::Batch(
                    elements
                        .into_iter()
                        .map(|element| top_level_id(element.get().as_bytes()))
                        .collect(),
                )
            }
            _ => Self::NotNeeded,
        }
    }

    fn object(&self) -> Option<&RawValue> {
        match self {
            Self::Object(id) => id.as_deref(),
            _ => None,
        }
    }

    fn batch_element(&self, index: usize) -> Option<&RawValue> {
        match self {
            Self::Batch(ids) => ids.get(index).and_then(|id| id.as_deref()),
            _ => None,
        }
    }
}

/// Whether serde_json writes `value` back as it was read: integers that fit 64 bits do;
/// a number held as `f64` may not (`1e2` becomes `100.0`, `-0` becomes `-0.0`).
fn round_trips(value: &Value) -> bool {
    match value {
        Value::Number(number) => !number.is_f64(),
        Value::Array(items) => items.iter().all(round_trips),
        Value::Object(object) => object.values().all(round_trips),
        Value::Null | Value::Bool(_) | Value::String(_) => true,
    }
}

/// The text of the object's last top-level `"id"` member (`Value` keeps the last of
/// duplicate keys too); `None` when `json` is not an object or has no id.
fn top_level_id(json: &[u8]) -> Option<Box<RawValue>> {
    struct TopLevelId<'a>(Option<&'a RawValue>);

    impl<'de> Deserialize<'de> for TopLevelId<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct IdVisitor;
            impl<'de> Visitor<'de> for IdVisitor {
                type Value = TopLevelId<'de>;

                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON object")
                }

                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut id = None;
                    // Owned keys: a key spelled with escapes cannot be borrowed.
                    while let Some(key) = map.next_key::<String>()? {
                        if key == "id" {
                            id = Some(map.next_value::<&'de RawValue>()?);
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(TopLevelId(id))
                }
            }
            deserializer.deserialize_map(IdVisitor)
        }
    }

    let parsed: Result<TopLevelId<'_>, serde_json::Error> = serde_json::from_slice(json);
    parsed.ok()?.0.map(ToOwned::to_owned)
}

/// A valid JSON-RPC 2.0 request (or notification, when `id` is `None`).
#[derive(Debug)]
pub(crate) struct JsonRpcRequest {
    pub(crate) id: Option<Id>,
    pub(crate) method: String,
    pub(crate) params: Option<Value>,
}

/// A JSON-RPC object that breaks the spec; answered with -32600.
#[derive(Debug)]
pub(crate) struct InvalidRequest {
    /// The request's id when it had a usable one, so the client can correlate; else null.
    pub(crate) id: Id,
    pub(crate) reason: String,
}

/// A pi-style command: `{"id":"req-1","type":"method", ...params}`.
#[derive(Debug)]
pub(crate) struct PiCommand {
    pub(crate) id: Option<Id>,
    pub(crate) command: String,
    pub(crate) params: Option<Value>,
}

/// What a parsed line turned out to be.
#[derive(Debug)]
pub(crate) enum Incoming {
    JsonRpc(Result<JsonRpcRequest, InvalidRequest>),
    Batch(Vec<Value>),
    EmptyBatch,
    Pi(PiCommand),
    /// Valid JSON that is neither envelope.
    Neither {
        id: Option<Id>,
        reason: String,
    },
}

/// Auto-detects the envelope of one parsed line; `exact` holds the text of ids that
/// `value` cannot reproduce (batch elements take theirs in [`parse_jsonrpc_value`]).
pub(crate) fn classify(value: Value, exact: &ExactIds) -> Incoming {
    match value {
        Value::Array(items) if items.is_empty() => Incoming::EmptyBatch,
        Value::Array(items) => Incoming::Batch(items),
        Value::Object(object) if object.contains_key("jsonrpc") => {
            Incoming::JsonRpc(parse_jsonrpc(object, exact.object()))
        }
        Value::Object(object) if matches!(object.get("type"), Some(Value::String(_))) => {
            Incoming::Pi(parse_pi(object, exact.object()))
        }
        Value::Object(mut object) => Incoming::Neither {
            id: object.remove("id").map(|id| Id::new(&id, exact.object())),
            reason: "expected a JSON-RPC 2.0 request (with \"jsonrpc\") or a command with a \
                     string \"type\""
                .to_owned(),
        },
        other => Incoming::Neither {
            id: None,
            reason: format!("expected a JSON object or array, got {}", json_kind(&other)),
        },
    }
}

/// Validates a JSON-RPC object; also used for batch elements (`Value` that may be anything),
/// `index` being the element's position in the batch.
pub(crate) fn parse_jsonrpc_value(
    value: Value,
    exact: &ExactIds,
    index: usize,
) -> Result<JsonRpcRequest, InvalidRequest> {
    match value {
        Value::Object(object) => parse_jsonrpc(object, exact.batch_element(index)),
        other => Err(InvalidRequest {
            id: Id::null(),
            reason: format!(
                "batch element must be a request object, got {}",
                json_kind(&other)
            ),
        }),
    }
}

fn parse_jsonrpc(
    mut object: Map<String, Value>,
    exact_id: Option<&RawValue>,
) -> Result<JsonRpcRequest, InvalidRequest> {
    let id = object.remove("id");
    let valid_id = match &id {
        None => true,
        Some(id) => matches!(id, Value::Number(_) | Value::String(_) | Value::Null),
    };
    let id = id.map(|id| Id::new(&id, exact_id));
    // Echo the id in the error when it is usable, so the client can correlate.
    let error_id = match (&id, valid_id) {
        (Some(id), true) => id.clone(),
        _ => Id::null(),
    };
    let invalid = |reason: String| InvalidRequest {
        id: error_id.clone(),
        reason,
    };
    match object.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        _ => return Err(invalid("\"jsonrpc\" must be \"2.0\"".to_owned())),
    }
    if !valid_id {
        return Err(invalid(
            "\"id\" must be a number, a string or null".to_owned(),
        ));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(other) => {
            return Err(invalid(format!(
                "\"method\" must be a string, got {}",
                json_kind(&other)
            )))
        }
        None => return Err(invalid("missing \"method\"".to_owned())),
    };
    let params = match object.remove("params") {
        // `null` is read as "no params": lenient towards clients that always send the key.
        None | Some(Value::Null) => None,
        Some(params @ (Value::Object(_) | Value::Array(_))) => Some(params),
        Some(other) => {
            return Err(invalid(format!(
                "\"params\" must be an object or an array, got {}",
                json_kind(&other)
            )))
        }
    };
    Ok(JsonRpcRequest { id, method, params })
}

fn parse_pi(mut object: Map<String, Value>, exact_id: Option<&RawValue>) -> PiCommand {
    let id = object.remove("id").map(|id| Id::new(&id, exact_id));
    let command = match object.remove("type") {
        Some(Value::String(command)) => command,
        // `classify` only routes objects with a string `type` here.
        _ => String::new(),
    };
    let params = if object.is_empty() {
        None
    } else {
        Some(Value::Object(object))
    };
    PiCommand {
        id,
        command,
        params,
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Makes jsonrpsee's parameter errors say what is wrong in the message itself: its
/// `Params::parse` yields message "Invalid params" with the serde detail only in `data`,
/// and pi responses carry only the message.
pub(crate) fn explain(error: ErrorObjectOwned) -> ErrorObjectOwned {
    if error.code() != INVALID_PARAMS || error.message() != "Invalid params" {
        return error;
    }
    let detail = error
        .data()
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
    match detail {
        Some(detail) => ErrorObject::owned(
            error.code(),
            format!("Invalid params: {detail}"),
            error.data().map(ToOwned::to_owned),
        ),
        None => error,
    }
}

pub(crate) fn error(code: i32, message: impl Into<String>) -> ErrorObjectOwned {
    ErrorObject::owned::<()>(code, message, None)
}

/// `{"jsonrpc":"2.0","id":..,"result":..}` or `{..,"error":{code,message,data?}}`.
#[derive(Debug, Serialize)]
pub(crate) struct JsonRpcResponse {
    jsonrpc: &'static str,
    id: Id,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObjectOwned>,
}

impl JsonRpcResponse {
    pub(crate) fn new(id: Id, outcome: Result<Value, ErrorObjectOwned>) -> Self {
        let (result, error) = match outcome {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        Self {
            jsonrpc: "2.0",
            id,
            result,
            error,
        }
    }
}

/// `{"id":..,"type":"response","command":..,"success":..,"data"|"error"+"code"(+"errorData")}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PiResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Id>,
    #[serde(rename = "type")]
    kind: &'static str,
    command: String,
    success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_data: Option<Box<RawValue>>,
}

impl PiResponse {
    pub(crate) fn new(
        id: Option<Id>,
        command: String,
        outcome: Result<Value, ErrorObjectOwned>,
    ) -> Self {
        let mut response = Self {
            id,
            kind: "response",
            command,
            success: outcome.is_ok(),
            data: None,
            error: None,
            code: None,
            error_data: None,
        };
        match outcome {
            // `data` is written even when null, so a successful reply always has it.
            Ok(data) => response.data = Some(data),
            Err(error) => {
                response.error = Some(error.message().to_owned());
                response.code = Some(error.code());
                response.error_data = error.data().map(ToOwned::to_owned);
            }
        }
        response
    }

    /// The reply to a line that is not a usable command: pi answers those as the
    /// pseudo-command "parse".
    pub(crate) fn parse_failure(id: Option<Id>, code: i32, detail: &str) -> Self {
        Self::new(
            id,
            "parse".to_owned(),
            Err(error(code, format!("Failed to parse command: {detail}"))),
        )
    }
}

/// A server-initiated notification in the given envelope.
pub(crate) fn notification(envelope: Envelope, method: &str, params: Value) -> Value {
    match envelope {
        Envelope::JsonRpc => {
            let mut message = Map::new();
            message.insert("jsonrpc".to_owned(), Value::from("2.0"));
            message.insert("method".to_owned(), Value::from(method));
            // JSON-RPC params must be structured; null means "none".
            if !params.is_null() {
                message.insert("params".to_owned(), params);
            }
            Value::Object(message)
        }
        Envelope::Pi => {
            let mut message = match params {
                Value::Object(fields) => fields,
                Value::Null => Map::new(),
                // pi notifications are flat objects; anything else is nested under `data`.
                other => {
                    let mut fields = Map::new();
                    fields.insert("data".to_owned(), other);
                    fields
                }
            };
            // Inserted last so that a `type` field in params can never rename the event.
            message.insert("type".to_owned(), Value::from(method));
            Value::Object(message)
        }
    }
}
