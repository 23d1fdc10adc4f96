//! The two wire envelopes (PROTOCOL.md "Two envelopes on one stream"): recognising them in
//! a parsed line and shaping responses and notifications for each.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use jsonrpsee::types::{ErrorObject, ErrorObjectOwned};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const METHOD_NOT_FOUND: i32 = -32601;
pub(crate) const INVALID_PARAMS: i32 = -32602;
pub(crate) const INTERNAL_ERROR: i32 = -32603;

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

/// A valid JSON-RPC 2.0 request (or notification, when `id` is `None`).
#[derive(Debug)]
pub(crate) struct JsonRpcRequest {
    pub(crate) id: Option<Value>,
    pub(crate) method: String,
    pub(crate) params: Option<Value>,
}

/// A JSON-RPC object that breaks the spec; answered with -32600.
#[derive(Debug)]
pub(crate) struct InvalidRequest {
    /// The request's id when it had a usable one, so the client can correlate; else null.
    pub(crate) id: Value,
    pub(crate) reason: String,
}

/// A pi-style command: `{"id":"req-1","type":"method", ...params}`.
#[derive(Debug)]
pub(crate) struct PiCommand {
    pub(crate) id: Option<Value>,
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
        id: Option<Value>,
        reason: String,
    },
}

/// Auto-detects the envelope of one parsed line.
pub(crate) fn classify(value: Value) -> Incoming {
    match value {
        Value::Array(items) if items.is_empty() => Incoming::EmptyBatch,
        Value::Array(items) => Incoming::Batch(items),
        Value::Object(object) if object.contains_key("jsonrpc") => {
            Incoming::JsonRpc(parse_jsonrpc(object))
        }
        Value::Object(object) if matches!(object.get("type"), Some(Value::String(_))) => {
            Incoming::Pi(parse_pi(object))
        }
        Value::Object(mut object) => Incoming::Neither {
            id: object.remove("id"),
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

/// Validates a JSON-RPC object; also used for batch elements (`Value` that may be anything).
pub(crate) fn parse_jsonrpc_value(value: Value) -> Result<JsonRpcRequest, InvalidRequest> {
    match value {
        Value::Object(object) => parse_jsonrpc(object),
        other => Err(InvalidRequest {
            id: Value::Null,
            reason: format!(
                "batch element must be a request object, got {}",
                json_kind(&other)
            ),
        }),
    }
}

fn parse_jsonrpc(mut object: Map<String, Value>) -> Result<JsonRpcRequest, InvalidRequest> {
    let id = object.remove("id");
    let valid_id = match &id {
        None => true,
        Some(id) => matches!(id, Value::Number(_) | Value::String(_) | Value::Null),
    };
    // Echo the id in the error when it is usable, so the client can correlate.
    let error_id = match (&id, valid_id) {
        (Some(id), true) => id.clone(),
        _ => Value::Null,
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

fn parse_pi(mut object: Map<String, Value>) -> PiCommand {
    let id = object.remove("id");
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
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObjectOwned>,
}

impl JsonRpcResponse {
    pub(crate) fn new(id: Value, outcome: Result<Value, ErrorObjectOwned>) -> Self {
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
    id: Option<Value>,
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
        id: Option<Value>,
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
    pub(crate) fn parse_failure(id: Option<Value>, code: i32, detail: &str) -> Self {
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
