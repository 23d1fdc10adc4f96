//! What every route of the page shares (`api.rs`' and `diff_views.rs`'):
//! the router's state, a failed request ([`ApiError`]: its HTTP status and
//! JSON-RPC style error, from an engine or front-end error), the session a
//! request names ([`Ui::location`]), how long a write waits for the
//! session's lock, engine work run off the async threads ([`blocking`]),
//! and a request's body and a write's params read ([`parse_body`],
//! [`typed`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rewind::engine::EngineError;
use rewind::sidecar::convert::FromWire;
use rewind::sidecar::rpc::codes;
use rewind::store::Layout;
use serde_json::{json, Value};

use super::guard::Guard;
use super::Ui;
use crate::app::args::Location;
use crate::app::project::FrontError;

/// How long a write waits for a hook that holds the session; a live
/// sidecar holds it for good, and the page says so.
pub(super) const LOCK_WAIT: Duration = Duration::from_secs(3);

pub(super) type AppState = State<(Arc<Ui>, Arc<Guard>)>;

/// A failed request: its HTTP status and a JSON-RPC style error object.
pub struct ApiError {
    pub(super) status: StatusCode,
    code: i32,
    message: String,
    data: Option<Value>,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, code: i32, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(super) fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, codes::INVALID_PARAMS, message)
    }

    /// A protocol error code's HTTP status.
    pub(super) fn from_code(code: i32, message: String, data: Option<Value>) -> ApiError {
        let status = match code {
            codes::INVALID_PARAMS | codes::INVALID_REQUEST | codes::PARSE_ERROR => {
                StatusCode::BAD_REQUEST
            }
            codes::METHOD_NOT_FOUND | codes::UNKNOWN_ID => StatusCode::NOT_FOUND,
            codes::CONFLICTS => StatusCode::CONFLICT,
            codes::LOCKED => StatusCode::LOCKED,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            code,
            message,
            data,
        }
    }

    pub(super) fn body(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(d) = &self.data {
            error["data"] = d.clone();
        }
        error
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let data = serde_json::to_value(codes::data(&e))
            .ok()
            .filter(|v| !v.is_null());
        ApiError::from_code(codes::code(&e), e.to_string(), data)
    }
}

impl From<FrontError> for ApiError {
    fn from(e: FrontError) -> ApiError {
        match e {
            FrontError::Locked(m) => ApiError::new(StatusCode::LOCKED, codes::LOCKED, m),
            FrontError::Engine(e) => e.into(),
            FrontError::Internal(m) => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, codes::INTERNAL_ERROR, m)
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.body() });
        (self.status, Json(body)).into_response()
    }
}

impl Ui {
    /// The location of the session the page names (a file name in the
    /// store's sessions directory), else the default one.
    pub fn location(&self, session: Option<&str>) -> Result<Location, ApiError> {
        let Some(name) = session.filter(|s| !s.is_empty()) else {
            return Ok(self.at.clone());
        };
        let plain = !name.contains(['/', '\\']) && name != "." && name != "..";
        let path = self.sessions_dir.join(name);
        if !plain || !Layout::is_session_file(&path) || !path.is_file() {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                codes::UNKNOWN_ID,
                format!("no session {name:?} in this store"),
            ));
        }
        Ok(Location {
            session: Some(path),
            ..self.at.clone()
        })
    }
}

/// Run blocking engine work off the async threads.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            format!("engine task failed: {e}"),
        )
    })?
}

pub(super) fn parse_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, codes::PARSE_ERROR, format!("{e}")))
}

/// A write's params as the engine takes them: parsed as the protocol's
/// wire type `W`, then converted (bad paths and hashes refused there).
pub(super) fn typed<W, T>(params: &Value) -> Result<T, ApiError>
where
    W: serde::de::DeserializeOwned,
    T: FromWire<W>,
{
    let wire: W = serde_json::from_value(params.clone())
        .map_err(|e| ApiError::bad(format!("invalid params: {e}")))?;
    Ok(T::from_wire(wire)?)
}
