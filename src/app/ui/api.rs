//! The routes of `rewind ui`. The page speaks the protocol: `POST
//! /api/rpc` takes a JSON-RPC request naming a read method of
//! docs/protocol.md (`list_checkpoints`, `get_file_diff`, …) with its own
//! params and answers with its own result, run through the sidecar's
//! method table (`rewind::sidecar::handlers::call`) on the session opened read-only.
//! Writes go through `POST /api/write` in two steps (`two_step::two_step`):
//! without a token the answer is the exact plan and a token; with the
//! token the write runs only if nothing changed since (else 409 and the new
//! plan). The rest is what only the page needs: the sessions to pick from,
//! the server's settings and a stream of changes.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rewind::engine::api::{
    AnnotateParams, CheckpointParams, NavigateTreeParams, RestoreFilesParams, RevertAction,
    RevertParams, RevertResult, TextEdit, UndoParams,
};
use rewind::engine::Engine;
use rewind::session::EntryId;
use rewind::sidecar::convert::{to_json, ToWire};
use rewind::sidecar::handlers::{self, MethodAccess};
use rewind::sidecar::protocol as wire;
use rewind::sidecar::rpc::codes;
use rewind::store::Layout;
use serde::Deserialize;
use serde_json::{json, Value};

use super::guard::Guard;
use super::request::{blocking, parse_body, typed, ApiError, AppState, LOCK_WAIT};
use super::{assets, diff_views, events, Ui};
use crate::app::plan::{plan_files, plan_notes};
use crate::app::project::{self, Access};
use crate::app::two_step::{self, Step};

/// The writes the page may ask for. `checkpoint` (the toolbar's "Create
/// checkpoint") writes only the store and is one step; `label` changes only
/// the texts it is given (`Engine::annotate`).
const WRITES: [&str; 6] = [
    "restore_files",
    "undo",
    "navigate_tree",
    "label",
    "revert",
    "checkpoint",
];

pub fn router(ui: Arc<Ui>, guard: Arc<Guard>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/assets/{*path}", get(asset))
        .route("/api/info", get(info))
        .route("/api/sessions", get(sessions))
        .route("/api/protection", get(protection))
        .route("/api/events", get(live))
        .route("/api/rpc", post(rpc))
        .route("/api/write", post(write))
        .route("/api/patch", post(diff_views::patch))
        .route("/api/notebook", post(diff_views::notebook))
        .route("/favicon.ico", get(favicon))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .with_state((ui, guard))
}

async fn index(State((ui, guard)): AppState) -> Response {
    let page = assets::INDEX
        .replace("__REWIND_TOKEN__", &guard.secret)
        .replace(
            "__REWIND_READ_ONLY__",
            if ui.read_only { "true" } else { "false" },
        );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
}

async fn asset(Path(path): Path<String>) -> Response {
    match assets::get(&path) {
        Some((content_type, bytes)) => {
            ([(header::CONTENT_TYPE, content_type)], bytes).into_response()
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// The icon browsers ask for by this name, when the page's own link is not
/// what they read.
async fn favicon() -> Response {
    asset(Path("favicon.svg".to_string())).await
}

async fn info(State((ui, _)): AppState) -> Result<Json<Value>, ApiError> {
    let default = project::session_of(&ui.at).ok();
    Ok(Json(json!({
        "readOnly": ui.read_only,
        "projectRoot": ui.at.cwd,
        "storeDir": ui.at.store,
        "serverVersion": env!("CARGO_PKG_VERSION"),
        "defaultSession": default
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy()),
    })))
}

/// What the page says about protection (its status banner and the
/// "not protected" list): whether automatic checkpoints are paused, and
/// what the session's latest checkpoint left out, with why and how to
/// include each (`app/unprotected.rs`, as `rewind status` says it).
async fn protection(
    State((ui, _)): AppState,
    Query(q): Query<SessionQuery>,
) -> Result<Json<Value>, ApiError> {
    let at = ui.location(q.session.as_deref())?;
    let layout = Layout::new(ui.at.store.as_deref().unwrap_or(std::path::Path::new(".")));
    let paused = crate::app::settings::paused(&layout);
    let (latest, left_out) = blocking(move || {
        let mut engine = project::open(&at, Access::Read, LOCK_WAIT)?;
        let latest = crate::app::points::path_checkpoints(&engine)?
            .pop()
            .map(|c| c.entry_id);
        let left_out = match &latest {
            Some(id) => engine.left_out(id)?,
            None => Vec::new(),
        };
        Ok::<_, ApiError>((latest, left_out))
    })
    .await?;
    Ok(Json(json!({
        "paused": paused.as_ref().map(|p| json!({ "since": p.since, "text": p.describe() })),
        "latestEntryId": latest.as_ref().map(EntryId::as_str),
        "leftOut": crate::app::unprotected::rows(&left_out),
    })))
}

/// The store's sessions, newest first.
async fn sessions(State((ui, _)): AppState) -> Result<Json<Value>, ApiError> {
    let dir = ui.sessions_dir.clone();
    let list = blocking(move || {
        let listing = std::fs::read_dir(&dir).map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::IO_ERROR,
                format!("reading {}: {e}", dir.display()),
            )
        })?;
        let mut found: Vec<(std::time::SystemTime, Value)> = Vec::new();
        for entry in listing.flatten() {
            let path = entry.path();
            if !Layout::is_session_file(&path) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            let stamp = time::OffsetDateTime::from(modified)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default();
            found.push((
                modified,
                json!({
                    "name": entry.file_name().to_string_lossy(),
                    "bytes": meta.len(),
                    "modified": stamp,
                }),
            ));
        }
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        Ok(found.into_iter().map(|(_, v)| v).collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(json!({ "sessions": list })))
}

#[derive(Deserialize)]
struct SessionQuery {
    session: Option<String>,
}

async fn live(
    State((ui, _)): AppState,
    Query(q): Query<SessionQuery>,
) -> Result<Response, ApiError> {
    ui.location(q.session.as_deref())?;
    Ok(events::stream(ui, q.session).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RpcRequest {
    #[serde(default)]
    jsonrpc: Option<String>,
    #[serde(default)]
    id: Value,
    method: String,
    #[serde(default)]
    params: Value,
    /// Beyond JSON-RPC: the session file (in the store) to answer from.
    #[serde(default)]
    session: Option<String>,
}

/// A read method of the protocol, answered as the sidecar would.
async fn rpc(State((ui, _)): AppState, body: Bytes) -> Response {
    let req: RpcRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(e) => return rpc_error(Value::Null, e),
    };
    if req.jsonrpc.as_deref().is_some_and(|v| v != "2.0") {
        return rpc_error(req.id, ApiError::bad("\"jsonrpc\" must be \"2.0\""));
    }
    let id = req.id.clone();
    match rpc_result(ui, req).await {
        Ok(result) => Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response(),
        Err(e) => rpc_error(id, e),
    }
}

fn rpc_error(id: Value, e: ApiError) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": e.body() });
    (e.status, Json(body)).into_response()
}

async fn rpc_result(ui: Arc<Ui>, req: RpcRequest) -> Result<Value, ApiError> {
    match handlers::access(&req.method) {
        None => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {}", req.method),
            ))
        }
        Some(MethodAccess::Write) => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                codes::INVALID_REQUEST,
                format!(
                    "{} writes: the page sends writes to POST /api/write (plan, then confirm)",
                    req.method
                ),
            ))
        }
        Some(MethodAccess::Read) => {}
    }
    let at = ui.location(req.session.as_deref())?;
    let params = match &req.params {
        Value::Null => None,
        p => Some(p.to_string()),
    };
    blocking(move || {
        let mut engine = project::open(&at, Access::Read, LOCK_WAIT)?;
        match handlers::call(&mut engine, &req.method, params.as_deref()) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(ApiError::from_code(
                e.code(),
                e.message().to_string(),
                e.data().and_then(|d| serde_json::from_str(d.get()).ok()),
            )),
            None => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {}", req.method),
            )),
        }
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteRequest {
    method: String,
    #[serde(default)]
    params: Value,
    /// The token of the plan this write confirms; without it, the answer
    /// is the plan.
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    session: Option<String>,
    /// A restore's `targetEntryId` with the agent's conversation too:
    /// `"files"` (the default), `"both"` or `"only"` (docs/ui.md).
    #[serde(default)]
    conversation: Option<String>,
}

/// One step of a write: the plan (and its token), or the write itself
/// when the token still matches.
async fn write(State((ui, _)): AppState, body: Bytes) -> Result<Response, ApiError> {
    if ui.read_only {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            codes::INVALID_REQUEST,
            "this server is read-only (rewind ui --read-only): nothing is written",
        ));
    }
    let req: WriteRequest = parse_body(&body)?;
    if !WRITES.contains(&req.method.as_str()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            codes::INVALID_REQUEST,
            format!(
                "{} is not a write the page makes (it makes {})",
                req.method,
                WRITES.join(", ")
            ),
        ));
    }
    let mut params = match req.params {
        Value::Null => json!({}),
        Value::Object(o) => Value::Object(o),
        _ => return Err(ApiError::bad("params must be an object")),
    };
    // The server says when it is a preview.
    if let Some(o) = params.as_object_mut() {
        o.remove("preview");
    }
    let at = ui.location(req.session.as_deref())?;
    let method = req.method;
    let token = req.token;
    let conversation = match req.conversation.as_deref() {
        None | Some("files") => Conversation::Files,
        Some("both") => Conversation::Both,
        Some("only") => Conversation::Only,
        Some(other) => {
            return Err(ApiError::bad(format!(
                "conversation must be \"files\", \"both\" or \"only\", not {other:?}"
            )))
        }
    };
    let target = params
        .get("targetEntryId")
        .and_then(Value::as_str)
        .map(EntryId::from_input);
    if conversation != Conversation::Files && (method != "restore_files" || target.is_none()) {
        return Err(ApiError::bad(
            "the conversation comes back only with a restore to a checkpoint (targetEntryId)",
        ));
    }
    let _turn = ui.write_turn.lock().await;
    if method == "checkpoint" {
        let body = blocking(move || {
            let mut engine = project::open(&at, Access::Write, LOCK_WAIT)?;
            checkpoint(&mut engine, &params)
        })
        .await?;
        return Ok((StatusCode::OK, Json(body)).into_response());
    }
    let (status, body) = blocking(move || {
        let mut engine = project::open(&at, Access::Write, LOCK_WAIT)?;
        let (status, mut body) = match (conversation, &token) {
            // The conversation alone writes no file: the plan says so, and
            // the confirmation forks it.
            (Conversation::Only, None) => (
                StatusCode::OK,
                json!({ "executed": false, "stale": false, "plan": {}, "files": [],
                        "token": "conversation", "conversationOnly": true }),
            ),
            (Conversation::Only, Some(_)) => {
                (StatusCode::OK, json!({ "executed": true, "result": {} }))
            }
            _ => write_step(&mut engine, &method, params, token.as_deref())?,
        };
        if conversation != Conversation::Files && body["executed"] == true {
            if let Some(target) = &target {
                body["conversation"] = forked(&engine, target);
            }
        }
        Ok::<_, ApiError>((status, body))
    })
    .await?;
    Ok((status, Json(body)).into_response())
}

/// What a restore from the page brings back besides the files.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Conversation {
    Files,
    Both,
    Only,
}

/// The conversation forked at `target`: the command that continues it, or
/// why there is none.
fn forked(engine: &Engine, target: &EntryId) -> Value {
    use crate::app::conversation::fork::{fork_at, shell_line};
    match fork_at(engine, target) {
        Ok(f) => json!({
            "agent": f.agent.name(),
            "sessionId": f.session_id,
            "resumeCommand": f.resume_command,
            "commandLine": shell_line(&f.resume_command),
            "project": engine.project_root().display().to_string(),
        }),
        Err(why) => json!({ "refused": why.0 }),
    }
}

fn write_step(
    engine: &mut Engine,
    method: &str,
    params: Value,
    token: Option<&str>,
) -> Result<(StatusCode, Value), ApiError> {
    let op = json!({ "method": method, "params": params });
    let answer = match method {
        "restore_files" => {
            let p: RestoreFilesParams = typed::<wire::RestoreFilesParams, _>(&params)?;
            let step = two_step::two_step(engine, op, token, |e, preview| {
                e.restore_files(RestoreFilesParams {
                    preview: Some(preview),
                    ..p.clone()
                })
            })?;
            answer_with_notes(step, plan_files, plan_notes)
        }
        "undo" => {
            let p: UndoParams = typed::<wire::UndoParams, _>(&params)?;
            let step = two_step::two_step(engine, op, token, |e, preview| {
                e.undo(UndoParams {
                    preview: Some(preview),
                    ..p.clone()
                })
            })?;
            answer_with_notes(step, plan_files, plan_notes)
        }
        "navigate_tree" => {
            let p: NavigateTreeParams = typed::<wire::NavigateTreeParams, _>(&params)?;
            let step = two_step::two_step(engine, op, token, |e, preview| {
                e.navigate_tree(NavigateTreeParams {
                    preview: Some(preview),
                    ..p.clone()
                })
            })?;
            answer_with_notes(
                step,
                |plan| plan.restore.as_ref().map(plan_files).unwrap_or_default(),
                |plan| plan.restore.as_ref().map(plan_notes).unwrap_or_default(),
            )
        }
        "revert" => {
            let p: RevertParams = typed::<wire::RevertParams, _>(&params)?;
            let step = two_step::two_step(engine, op, token, |e, preview| {
                e.revert(RevertParams {
                    preview: Some(preview),
                    ..p.clone()
                })
            })?;
            answer(step, revert_files)
        }
        "label" => {
            let p = annotation(&params)?;
            let step = two_step::two_step(engine, op.clone(), token, |e, preview| {
                if preview {
                    Ok(op.clone())
                } else {
                    e.annotate(p.clone()).map(|r| {
                        json!({
                            "entryId": r.entry_id.as_ref().map(EntryId::as_str),
                            "label": r.label,
                            "note": r.note,
                        })
                    })
                }
            })?;
            answer(step, |_| Vec::new())
        }
        other => {
            return Err(ApiError::bad(format!(
                "{other} is not a write the page makes"
            )));
        }
    };
    Ok(answer)
}

/// A `label` write's params: `targetId`, and `label` and `note` each
/// absent (kept as it is), null or "" (removed), or the new text. The page
/// sends only what the person changed, so editing a note never touches the
/// label (issue 38: it used to save `"label": null` and lose both).
fn annotation(params: &Value) -> Result<AnnotateParams, ApiError> {
    let target = params
        .get("targetId")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad("label needs a targetId (a checkpoint's entry id)"))?;
    let edit = |key: &str| match params.get(key) {
        None => Ok(TextEdit::Keep),
        Some(Value::Null) => Ok(TextEdit::Clear),
        Some(Value::String(t)) if t.is_empty() => Ok(TextEdit::Clear),
        Some(Value::String(t)) => Ok(TextEdit::Set(t.clone())),
        Some(_) => Err(ApiError::bad(format!("{key} must be a string or null"))),
    };
    Ok(AnnotateParams {
        target_id: EntryId::from_input(target),
        label: edit("label")?,
        note: edit("note")?,
    })
}

/// The toolbar's "Create checkpoint": `{label?, note?}`, recorded at once
/// (it writes only the store), answered with what it captured.
fn checkpoint(engine: &mut Engine, params: &Value) -> Result<Value, ApiError> {
    let text = |key: &str| match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(t)) if t.trim().is_empty() => Ok(None),
        Some(Value::String(t)) => Ok(Some(t.clone())),
        Some(_) => Err(ApiError::bad(format!("{key} must be a string"))),
    };
    let max_manual = crate::app::settings::max_manual(engine.store().layout()).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            format!("{e:#}"),
        )
    })?;
    let r = engine.checkpoint(CheckpointParams {
        label: text("label")?,
        note: text("note")?,
        paths: None,
        max_manual,
    })?;
    let mut result = to_json(&r.snapshot).unwrap_or_default();
    result["files"] = json!(r.files);
    result["bytes"] = json!(r.bytes);
    result["manualCount"] = json!(r.manual_count);
    result["maxManual"] = json!(r.max_manual);
    result["leftOut"] = json!(crate::app::unprotected::rows(&r.snapshot.stats.untracked));
    Ok(json!({ "executed": true, "result": result }))
}

/// A revert plan's per-file actions (`write`, `delete`, or `keep` for a
/// file it leaves alone), with the file's merge status and why.
fn revert_files(plan: &RevertResult) -> Vec<Value> {
    plan.files
        .iter()
        .map(|f| {
            let action = match f.action {
                RevertAction::Write | RevertAction::Delete => f.action.as_str(),
                RevertAction::None => "keep",
            };
            let mut v =
                json!({ "path": f.path.as_str(), "action": action, "status": f.status.to_wire() });
            if let Some(r) = &f.reason {
                v["reason"] = json!(r);
            }
            v
        })
        .collect()
}

/// A step's answer: what was done, or the plan with its per-file actions
/// and token (409 when the token given was stale).
fn answer<T: ToWire<Wire: serde::Serialize> + Clone>(
    step: Step<T>,
    files: impl Fn(&T) -> Vec<Value>,
) -> (StatusCode, Value) {
    match step {
        Step::Done(done) => (
            StatusCode::OK,
            json!({ "executed": true, "result": to_json(&done).unwrap_or_default() }),
        ),
        Step::Plan {
            plan,
            token,
            working_tree,
            stale,
        } => {
            let mut body = json!({
                "executed": false,
                "stale": stale,
                "plan": to_json(&plan).unwrap_or_default(),
                "files": files(&plan),
                "token": token,
                "workingTreeHash": working_tree.to_hex(),
            });
            if stale {
                body["error"] = json!({
                    "code": codes::CONFLICTS,
                    "message": "NOT executed: the files or the session changed since the preview (or the arguments differ). Nothing was written; this is the current plan.",
                });
                (StatusCode::CONFLICT, body)
            } else {
                (StatusCode::OK, body)
            }
        }
    }
}

/// [`answer`], with the plan's notes (`plan_notes`: git's words, warnings)
/// beside its files, so the page shows what the CLI prints.
fn answer_with_notes<T: ToWire<Wire: serde::Serialize> + Clone>(
    step: Step<T>,
    files: impl Fn(&T) -> Vec<Value>,
    notes: impl Fn(&T) -> Vec<Value>,
) -> (StatusCode, Value) {
    let notes = match &step {
        Step::Plan { plan, .. } => Some(notes(plan)),
        Step::Done(_) => None,
    };
    let (status, mut body) = answer(step, files);
    if let Some(notes) = notes {
        body["notes"] = json!(notes);
    }
    (status, body)
}
