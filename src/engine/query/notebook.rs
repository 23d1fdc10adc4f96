//! Jupyter notebooks (`.ipynb`) diffed by cell: the cells of both ends are
//! aligned by their type and source (a Myers diff over the cells), each
//! changed cell's source is diffed by the bounded line diff (`line_diff.rs`),
//! and outputs are summarised in words ("2 outputs: stream, image/png"),
//! since their JSON (base64 images, HTML) is not for reading. For `rewind
//! diff --cells` and the page; the raw JSON diff stays what `get_file_diff`
//! and the patch carry.
//!
//! A notebook is a file someone else wrote: any end that does not read as
//! one (not UTF-8 JSON, no `cells` array, a source that is not text, nested
//! deeper than serde_json's limit of 128, more than [`MAX_CELLS`] cells, over
//! the size a diff is shown for) makes the answer `None`, and the front end
//! shows the plain text diff instead. Nothing here fails on content.

use std::time::{Duration, Instant};

use serde_json::Value;
use similar::{capture_diff_deadline, Algorithm, DiffOp};

use super::files::{as_text, MAX_DIFF_BYTES};
use super::line_diff::{self, DiffBudget};
use crate::engine::api::{CellDiff, CellStatus, FileDiffParams, NotebookDiff};
use crate::engine::{Engine, Result};
use crate::store::TreeEntry;

/// More cells than this is not read as a notebook (the text diff is shown).
pub(crate) const MAX_CELLS: usize = 10_000;

/// How long aligning the cells may take before the rest is shown replaced.
const ALIGN_TIME: Duration = Duration::from_millis(500);

/// Output kinds named in a summary before "and N more".
const SUMMARY_KINDS: usize = 6;

/// The mime types a rich output is named by, richest first.
const MIME_ORDER: [&str; 9] = [
    "image/png",
    "image/jpeg",
    "image/svg+xml",
    "image/gif",
    "text/html",
    "application/json",
    "text/markdown",
    "text/latex",
    "text/plain",
];

/// A notebook as far as a diff needs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Notebook {
    pub(crate) language: Option<String>,
    pub(crate) cells: Vec<Cell>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub(crate) cell_type: String,
    pub(crate) source: String,
    /// The outputs as stored, less what changes on every run without the
    /// output changing (`execution_count`).
    pub(crate) outputs: Vec<Value>,
}

/// Whether a path names a notebook.
pub(crate) fn is_notebook(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|name| name.len() > 6 && name.to_ascii_lowercase().ends_with(".ipynb"))
}

/// A notebook's text read as a notebook (nbformat 4), or `None`.
pub(crate) fn parse(text: &str) -> Option<Notebook> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let cells = doc.get("cells")?.as_array()?;
    if cells.len() > MAX_CELLS {
        return None;
    }
    let cells = cells.iter().map(parse_cell).collect::<Option<Vec<_>>>()?;
    Some(Notebook {
        language: language(&doc),
        cells,
    })
}

fn parse_cell(cell: &Value) -> Option<Cell> {
    let cell = cell.as_object()?;
    let cell_type = match cell.get("cell_type") {
        None => "code".to_string(),
        Some(t) => word(t.as_str()?, 16)?,
    };
    let source = match cell.get("source") {
        None | Some(Value::Null) => String::new(),
        Some(v) => text_of(v)?,
    };
    let outputs = match cell.get("outputs") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => v
            .as_array()?
            .iter()
            .map(|o| {
                let mut o = o.clone();
                if let Some(map) = o.as_object_mut() {
                    map.remove("execution_count");
                }
                o
            })
            .collect(),
    };
    Some(Cell {
        cell_type,
        source,
        outputs,
    })
}

/// A multiline string as nbformat stores it: one string, or a list of them.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => parts.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// A short name from the notebook (a cell type, a language, a mime type):
/// kept only when it is one plain word, so nothing odd reaches a terminal
/// or a class name.
fn word(s: &str, max: usize) -> Option<String> {
    let ok = !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-_./#".contains(&b));
    ok.then(|| s.to_string())
}

/// The notebook's language, lower case: `metadata.kernelspec.language`, else
/// `metadata.language_info.name`.
fn language(doc: &Value) -> Option<String> {
    let meta = doc.get("metadata")?;
    [
        &meta["kernelspec"]["language"],
        &meta["language_info"]["name"],
    ]
    .into_iter()
    .find_map(|v| v.as_str().and_then(|s| word(s, 32)))
    .map(|s| s.to_ascii_lowercase())
}

/// Outputs in a few words: "2 outputs: stream, image/png".
pub(crate) fn summary(outputs: &[Value]) -> Option<String> {
    if outputs.is_empty() {
        return None;
    }
    let mut kinds: Vec<String> = outputs
        .iter()
        .take(SUMMARY_KINDS)
        .map(output_kind)
        .collect();
    if outputs.len() > SUMMARY_KINDS {
        kinds.push(format!("and {} more", outputs.len() - SUMMARY_KINDS));
    }
    let n = outputs.len();
    Some(format!(
        "{n} output{}: {}",
        if n == 1 { "" } else { "s" },
        kinds.join(", ")
    ))
}

fn output_kind(o: &Value) -> String {
    match o.get("output_type").and_then(Value::as_str) {
        Some("stream") => "stream".to_string(),
        Some("error") => match o
            .get("ename")
            .and_then(Value::as_str)
            .and_then(|e| word(e, 40))
        {
            Some(name) => format!("error {name}"),
            None => "error".to_string(),
        },
        Some("execute_result" | "display_data") => {
            let data = o.get("data").and_then(Value::as_object);
            let richest = data.and_then(|d| {
                MIME_ORDER
                    .iter()
                    .find(|m| d.contains_key(**m))
                    .map(|m| m.to_string())
                    .or_else(|| d.keys().find_map(|k| word(k, 64)))
            });
            richest.unwrap_or_else(|| "empty result".to_string())
        }
        _ => "output".to_string(),
    }
}

/// The cells of two ends (either may be missing: an added or deleted
/// notebook), in the newer end's order, and whether a source diff was
/// approximate.
pub(crate) fn diff_cells(
    old: Option<&Notebook>,
    new: Option<&Notebook>,
    budget: &mut DiffBudget,
) -> (Vec<CellDiff>, bool) {
    let none: &[Cell] = &[];
    let old = old.map_or(none, |n| &n.cells[..]);
    let new = new.map_or(none, |n| &n.cells[..]);
    let key =
        |c: &Cell| xxhash_rust::xxh3::xxh3_64(format!("{}\0{}", c.cell_type, c.source).as_bytes());
    let old_keys: Vec<u64> = old.iter().map(key).collect();
    let new_keys: Vec<u64> = new.iter().map(key).collect();
    let ops = capture_diff_deadline(
        Algorithm::Myers,
        &old_keys,
        0..old_keys.len(),
        &new_keys,
        0..new_keys.len(),
        Instant::now().checked_add(ALIGN_TIME),
    );
    let mut out = Vec::with_capacity(new.len().max(old.len()));
    let mut approximate = false;
    let mut pair = |o: Option<usize>, n: Option<usize>, out: &mut Vec<CellDiff>| {
        let (oc, nc) = (o.map(|i| &old[i]), n.map(|i| &new[i]));
        let status = match (oc, nc) {
            (None, _) => CellStatus::Added,
            (_, None) => CellStatus::Deleted,
            (Some(a), Some(b)) if a.source == b.source && a.cell_type == b.cell_type => {
                CellStatus::Unchanged
            }
            _ => CellStatus::Modified,
        };
        let source_diff = match status {
            CellStatus::Unchanged => String::new(),
            _ => {
                let d = line_diff::unified(
                    "",
                    oc.map_or("", |c| &c.source),
                    nc.map_or("", |c| &c.source),
                    3,
                    budget,
                );
                approximate |= d.approximate;
                // A cell's last line has no newline in nbformat as a rule:
                // saying so under every cell is noise.
                d.hunks
                    .iter()
                    .flat_map(|h| h.text.split_inclusive('\n'))
                    .filter(|l| *l != "\\ No newline at end of file\n")
                    .collect()
            }
        };
        let shown = nc.or(oc);
        out.push(CellDiff {
            status,
            cell_type: shown.map(|c| c.cell_type.clone()).unwrap_or_default(),
            old_index: o.map(|i| i + 1),
            new_index: n.map(|i| i + 1),
            source_diff,
            outputs: shown.and_then(|c| summary(&c.outputs)),
            outputs_changed: matches!((oc, nc), (Some(a), Some(b)) if a.outputs != b.outputs),
        });
    };
    for op in ops {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    pair(Some(old_index + k), Some(new_index + k), &mut out);
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for k in 0..old_len {
                    pair(Some(old_index + k), None, &mut out);
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for k in 0..new_len {
                    pair(None, Some(new_index + k), &mut out);
                }
            }
            // Cells replaced: each old cell edited into the next new cell
            // of its type (the new cells passed over are added), or deleted.
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                let mut next = 0;
                for k in 0..old_len {
                    let kind = &old[old_index + k].cell_type;
                    let found = (next..new_len).find(|&j| &new[new_index + j].cell_type == kind);
                    match found {
                        Some(j) => {
                            for added in next..j {
                                pair(None, Some(new_index + added), &mut out);
                            }
                            pair(Some(old_index + k), Some(new_index + j), &mut out);
                            next = j + 1;
                        }
                        None => pair(Some(old_index + k), None, &mut out),
                    }
                }
                for added in next..new_len {
                    pair(None, Some(new_index + added), &mut out);
                }
            }
        }
    }
    (out, approximate)
}

/// `Engine::get_notebook_diff` (the door in engine/mod.rs says what it does).
pub(crate) fn get_notebook_diff(
    engine: &mut Engine,
    p: FileDiffParams,
) -> Result<Option<NotebookDiff>> {
    let path = crate::engine::parse_path(engine.working_copy.root(), &p.file_path)?;
    if !is_notebook(path.as_str()) {
        return Ok(None);
    }
    let ((_, from_tree), (_, to_tree)) = engine.range(p.from, p.to)?;
    let old = engine.leaf_at(&from_tree, path.as_str())?;
    let new = engine.leaf_at(&to_tree, path.as_str())?;
    if old.is_none() && new.is_none() {
        return Ok(None);
    }
    // Each end that is there must read as a notebook.
    let read = |e: Option<TreeEntry>| -> Result<Option<Option<Notebook>>> {
        let Some(e) = e else { return Ok(Some(None)) };
        if !e.has_object() || e.size > MAX_DIFF_BYTES {
            return Ok(None);
        }
        let bytes = engine.store.get(&e.id)?;
        Ok(as_text(bytes).and_then(|t| parse(&t)).map(Some))
    };
    let (Some(old_nb), Some(new_nb)) = (read(old)?, read(new)?) else {
        return Ok(None);
    };
    let mut budget = DiffBudget::for_request();
    let (cells, approximate) = diff_cells(old_nb.as_ref(), new_nb.as_ref(), &mut budget);
    let language = new_nb
        .as_ref()
        .and_then(|n| n.language.clone())
        .or_else(|| old_nb.as_ref().and_then(|n| n.language.clone()));
    Ok(Some(NotebookDiff {
        path,
        language,
        cells,
        approximate,
    }))
}

#[cfg(test)]
mod tests;
