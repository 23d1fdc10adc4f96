//! The page's two readings of a diff beyond `get_file_diff` (docs/ui.md
//! "The API the page uses"): `POST /api/patch`, the comparison (or some of
//! its files) as a git patch with each hunk as a patch of its own and the
//! text it leaves, for the copy buttons; and `POST /api/notebook`, a
//! notebook by cell. Both are the engine's (`get_patch`,
//! `get_notebook_diff`), the same that `rewind diff` prints; the page only
//! shows and copies them.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use rewind::engine::api::{
    FileDiffParams, NotebookDiff, PatchContent, PatchParams, PatchResult, RangeParams,
};
use rewind::repo_path::RepoPath;
use rewind::sidecar::protocol as wire;
use serde::Deserialize;
use serde_json::{json, Value};

use super::request::{blocking, parse_body, typed, ApiError, AppState, LOCK_WAIT};
use crate::app::project::{self, Access};

/// Files a patch request may name: the page asks for one file or all.
const MAX_FILES: usize = 10_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchRequest {
    /// The range, as `get_modified_files` takes it.
    #[serde(default)]
    params: Value,
    /// Only these files; default every file that differs.
    #[serde(default)]
    files: Option<Vec<String>>,
    #[serde(default)]
    session: Option<String>,
}

/// The comparison as a git patch: `{patch, files: [{path, status, content,
/// patch, hunks: [{patch, newText}], approximate}]}`.
pub(super) async fn patch(State((ui, _)): AppState, body: Bytes) -> Result<Json<Value>, ApiError> {
    let req: PatchRequest = parse_body(&body)?;
    let range: RangeParams = typed::<wire::RangeParams, _>(&object(req.params))?;
    let files = match req.files {
        None => None,
        Some(list) if list.len() > MAX_FILES => {
            return Err(ApiError::bad(format!("at most {MAX_FILES} files")))
        }
        Some(list) => Some(
            list.iter()
                .map(|f| RepoPath::parse(f).map_err(|e| ApiError::bad(format!("{f:?}: {e}"))))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let at = ui.location(req.session.as_deref())?;
    let result = blocking(move || {
        let mut engine = project::open(&at, Access::Read, LOCK_WAIT)?;
        Ok(engine.get_patch(PatchParams {
            from: range.from,
            to: range.to,
            files,
            context_lines: None,
        })?)
    })
    .await?;
    Ok(Json(patch_json(&result)))
}

fn patch_json(p: &PatchResult) -> Value {
    let files: Vec<Value> = p
        .files
        .iter()
        .map(|f| {
            let content = match f.content {
                PatchContent::Text => "text",
                PatchContent::Binary => "binary",
                PatchContent::TooLarge => "tooLarge",
                PatchContent::NotCaptured => "notCaptured",
                PatchContent::PermissionsOnly => "permissionsOnly",
            };
            let hunks: Vec<Value> = f
                .hunks
                .iter()
                .enumerate()
                .map(|(i, h)| json!({ "patch": f.hunk_patch(i), "newText": h.new_text }))
                .collect();
            json!({
                "path": f.path.as_str(),
                "status": f.status.letter(),
                "content": content,
                "patch": f.text(),
                "hunks": hunks,
                "approximate": f.approximate,
            })
        })
        .collect();
    json!({ "patch": p.text(), "files": files })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NotebookRequest {
    /// `get_file_diff`'s params (`filePath` and the range).
    params: Value,
    #[serde(default)]
    session: Option<String>,
}

/// A notebook by cell: `{notebook: {path, language, approximate, cells:
/// [{status, cellType, oldIndex, newIndex, sourceDiff, outputs,
/// outputsChanged}]}}`, or `{notebook: null}` when the file is not one or an
/// end does not parse (the page shows the text diff then).
pub(super) async fn notebook(
    State((ui, _)): AppState,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let req: NotebookRequest = parse_body(&body)?;
    let params: FileDiffParams = typed::<wire::FileDiffParams, _>(&object(req.params))?;
    let at = ui.location(req.session.as_deref())?;
    let result = blocking(move || {
        let mut engine = project::open(&at, Access::Read, LOCK_WAIT)?;
        Ok(engine.get_notebook_diff(params)?)
    })
    .await?;
    Ok(Json(
        json!({ "notebook": result.as_ref().map(notebook_json) }),
    ))
}

fn notebook_json(nb: &NotebookDiff) -> Value {
    let cells: Vec<Value> = nb
        .cells
        .iter()
        .map(|c| {
            json!({
                "status": c.status.as_str(),
                "cellType": c.cell_type,
                "oldIndex": c.old_index,
                "newIndex": c.new_index,
                "sourceDiff": c.source_diff,
                "outputs": c.outputs,
                "outputsChanged": c.outputs_changed,
            })
        })
        .collect();
    json!({
        "path": nb.path.as_str(),
        "language": nb.language,
        "approximate": nb.approximate,
        "cells": cells,
    })
}

/// Absent params are no params.
fn object(v: Value) -> Value {
    if v.is_null() {
        json!({})
    } else {
        v
    }
}
