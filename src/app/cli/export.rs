//! `rewind export`: a session's checkpoints for a pull request or an audit,
//! in order — each with its label, note, kind, time, the files it changed
//! and their line counts — as Markdown or as JSON (docs/protocol.md
//! "Export"). It reads the session as it stands, without a lock, like
//! `rewind log`: a checkpoint being appended meanwhile is in the next export,
//! and the whole document is built before a byte is printed, so a failure
//! prints nothing but the error.

use anyhow::Result;
use rewind::engine::api::{
    CheckpointInfo, FileDiffParams, ListCheckpointsParams, Point, RangeParams, Scope,
};
use rewind::engine::Engine;
use serde::Serialize;

use crate::app::args::{ExportFormat, Location};
use crate::app::project::locate;

/// The version of the JSON document's shape.
const EXPORT_VERSION: u32 = 1;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Export {
    format: &'static str,
    version: u32,
    project_root: String,
    session_file: String,
    /// Only the checkpoints on the path to the leaf (`false`: every branch).
    current_path_only: bool,
    checkpoints: Vec<Checkpoint>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Checkpoint {
    entry_id: String,
    parent_checkpoint_id: Option<String>,
    kind: String,
    turn_index: u64,
    timestamp: String,
    label: Option<String>,
    note: Option<String>,
    tool: Option<String>,
    git_branch: Option<String>,
    on_current_path: bool,
    /// Lines added and removed over its text files.
    additions: u64,
    deletions: u64,
    files: Vec<File>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct File {
    path: String,
    status: String,
    additions: u64,
    deletions: u64,
    /// No line counts: binary, too large to diff, or not captured.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    no_line_counts: bool,
}

/// `rewind export [--format md|json] [--all]`.
pub fn export(at: Location, format: ExportFormat, all: bool) -> Result<()> {
    let mut engine = Engine::open_read_only(locate(&at)?)?;
    let doc = collect(&mut engine, all)?;
    let text = match format {
        ExportFormat::Json => format!("{}\n", serde_json::to_string_pretty(&doc)?),
        ExportFormat::Md => markdown(&doc),
    };
    print!("{text}");
    Ok(())
}

fn collect(engine: &mut Engine, all: bool) -> Result<Export> {
    let list = engine.list_checkpoints(ListCheckpointsParams {
        scope: Some(if all { Scope::All } else { Scope::Path }),
        query: None,
    })?;
    let tree = engine.get_tree()?;
    let parent_of: std::collections::HashMap<_, _> = tree
        .entries
        .iter()
        .map(|e| (e.id.clone(), e.parent_id.clone()))
        .collect();
    let is_checkpoint: std::collections::HashSet<_> = list
        .checkpoints
        .iter()
        .map(|c| c.entry_id.clone())
        .collect();
    let mut out = Vec::with_capacity(list.checkpoints.len());
    for c in &list.checkpoints {
        // The checkpoint above it: what its changes are counted from.
        let mut up = c.parent_id.clone();
        while let Some(p) = up.clone().filter(|p| !is_checkpoint.contains(p)) {
            up = parent_of.get(&p).cloned().flatten();
        }
        let files = files_of(engine, c, up.as_ref())?;
        out.push(Checkpoint {
            entry_id: c.entry_id.to_string(),
            parent_checkpoint_id: up.map(|p| p.to_string()),
            kind: c.kind.to_string(),
            turn_index: c.turn_index,
            timestamp: c.timestamp.clone(),
            label: c.label.clone(),
            note: c.note.clone(),
            tool: c.tool.clone(),
            git_branch: c.git_branch.clone(),
            on_current_path: c.on_current_path,
            additions: files.iter().map(|f| f.additions).sum(),
            deletions: files.iter().map(|f| f.deletions).sum(),
            files,
        });
    }
    Ok(Export {
        format: "rewind-export",
        version: EXPORT_VERSION,
        project_root: engine.project_root().display().to_string(),
        session_file: engine.session_file().display().to_string(),
        current_path_only: !all,
        checkpoints: out,
    })
}

/// The files a checkpoint changed since the one above it, with line counts.
/// The baseline's files are listed without counts: it holds the whole
/// project as found, not a change.
fn files_of(
    engine: &mut Engine,
    c: &CheckpointInfo,
    above: Option<&rewind::session::EntryId>,
) -> Result<Vec<File>> {
    let Some(above) = above else {
        return Ok(Vec::new());
    };
    let (from, to) = (
        Point::Entry(above.clone()),
        Point::Entry(c.entry_id.clone()),
    );
    let changed = engine.get_modified_files(RangeParams {
        from: Some(from.clone()),
        to: Some(to.clone()),
    })?;
    let mut files = Vec::with_capacity(changed.files.len());
    for f in changed.files {
        let d = engine.get_file_diff(FileDiffParams {
            file_path: f.path.clone(),
            from: Some(from.clone()),
            to: Some(to.clone()),
            context_lines: Some(0),
        })?;
        let counted = d.as_ref().filter(|d| !d.is_binary && !d.is_too_large);
        files.push(File {
            path: f.path.to_string(),
            status: status_name(f.status).to_string(),
            additions: counted.map_or(0, |d| d.additions),
            deletions: counted.map_or(0, |d| d.deletions),
            no_line_counts: counted.is_none(),
        });
    }
    Ok(files)
}

/// A file's status as the protocol spells it.
fn status_name(s: rewind::engine::api::FileStatus) -> &'static str {
    use rewind::engine::api::FileStatus::*;
    match s {
        Added => "added",
        Modified => "modified",
        Deleted => "deleted",
        NotCaptured => "notCaptured",
        Recaptured => "recaptured",
    }
}

/// Text from a session (labels, notes, paths) inside Markdown: one line,
/// control characters escaped, and nothing that ends a table cell or starts
/// markup of its own.
fn md(text: &str) -> String {
    rewind::printable::printable(&text.replace(['\n', '\r'], " "))
        .replace('|', "\\|")
        .replace('`', "'")
}

fn markdown(doc: &Export) -> String {
    let mut s = format!(
        "# rewind checkpoints\n\nProject `{}`, session `{}`: {} checkpoint(s){}.\n\n",
        md(&doc.project_root),
        md(&doc.session_file),
        doc.checkpoints.len(),
        if doc.current_path_only {
            " on the current path"
        } else {
            ", every branch"
        }
    );
    s.push_str("| time | checkpoint | kind | turn | label | files | lines |\n");
    s.push_str("|---|---|---|---|---|---|---|\n");
    for c in &doc.checkpoints {
        s.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} | +{} −{} |\n",
            md(&c.timestamp),
            md(&c.entry_id),
            md(&c.kind),
            c.turn_index,
            c.label.as_deref().map(md).unwrap_or_default(),
            c.files.len(),
            c.additions,
            c.deletions
        ));
    }
    for c in doc
        .checkpoints
        .iter()
        .filter(|c| c.note.is_some() || !c.files.is_empty())
    {
        s.push_str(&format!(
            "\n## `{}` {} (turn {}){}\n\n",
            md(&c.entry_id),
            md(&c.kind),
            c.turn_index,
            c.label
                .as_deref()
                .map(|l| format!(": {}", md(l)))
                .unwrap_or_default()
        ));
        if let Some(note) = &c.note {
            for line in note.lines() {
                s.push_str(&format!("> {}\n", rewind::printable::printable(line)));
            }
            if !c.files.is_empty() {
                s.push('\n');
            }
        }
        for f in &c.files {
            let lines = if f.no_line_counts {
                String::new()
            } else {
                format!(" +{} −{}", f.additions, f.deletions)
            };
            s.push_str(&format!("- `{}` {}{lines}\n", md(&f.path), md(&f.status)));
        }
    }
    s
}
