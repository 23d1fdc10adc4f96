//! `rewind mcp`: the engine's checkpoints as Model Context Protocol tools,
//! over stdio (the `rmcp` SDK does the framing). Read-only tools answer
//! from the session as it stands; `restore` and `undo` write only on a
//! second call that carries the `confirmToken` of a plan that still holds.
//! Logs go to stderr; stdout is the protocol's.
//!
//! The session is opened for each call, not held: between calls, hooks
//! (`rewind hook`) can record into the same session, and the next call
//! sees their checkpoints. Read-only tools open it read-only (no lock);
//! writes open it like a hook does (`ResumeMode::Continue`), one call at a
//! time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use rewind::engine::api::{
    AnnotateParams, CheckpointParams, FileBlameParams, FileDiffParams, FileHistoryParams,
    ListCheckpointsParams, Point, RestoreFilesParams, RevertParams, TextEdit, UndoParams,
};
use rewind::engine::Engine;
use rewind::repo_path::RepoPath;
use rewind::session::EntryId;
use rewind::sidecar::convert::FromWire;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, ErrorData, ServerCapabilities, ServerConfig,
};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::app::args::Location;
use crate::app::points::{before_last_turn, range};
use crate::app::project::Access;

/// The longest unified diff `diff` returns by default, in bytes.
mod answer;
mod args;

use answer::*;
use args::*;

const DEFAULT_DIFF_BYTES: usize = 64 * 1024;
/// The most files `changed_files` lists by default.
const DEFAULT_FILE_LIMIT: usize = 500;
/// The most checkpoints `list_checkpoints` lists by default.
const DEFAULT_CHECKPOINT_LIMIT: usize = 50;

/// How long a write waits for a hook or sidecar that holds the session.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Serve MCP on stdin/stdout until the client closes it.
pub fn run(at: Location) -> Result<()> {
    // Resume the newest session (recording edits made since as `outside`)
    // or start one with its baseline; then let go of it until a call. While
    // automatic checkpoints are paused (`rewind pause`) that automatic
    // checkpoint is not taken: the tools answer from the session as it is.
    let (root, store) = crate::app::project::project_and_store(&at)?;
    let at = if let Some(p) = crate::app::settings::paused(&rewind::store::Layout::new(&store)) {
        tracing::info!(root = %root.display(), "rewind mcp: serving; {}", p.describe());
        Location {
            cwd: Some(root),
            store: Some(store),
            session: at.session,
        }
    } else {
        let engine = crate::app::project::open_or_start(&at, false)?;
        tracing::info!(
            session = %engine.session_file().display(),
            root = %engine.project_root().display(),
            "rewind mcp: serving"
        );
        let at = Location {
            cwd: Some(engine.project_root().to_path_buf()),
            store: Some(engine.store().layout().root().to_path_buf()),
            session: at.session,
        };
        drop(engine);
        at
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let server = RewindMcp::new(at);
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .context("MCP initialization")?;
        service.waiting().await.context("MCP session")?;
        Ok(())
    })
}

#[derive(Clone)]
pub struct RewindMcp {
    /// The project root, its store and `--session` (without it, each call
    /// takes the store's newest session).
    at: Arc<Location>,
    /// One engine call at a time.
    turn: Arc<Mutex<()>>,
    tool_router: ToolRouter<Self>,
}

impl RewindMcp {
    pub fn new(at: Location) -> Self {
        RewindMcp {
            at: Arc::new(at),
            turn: Arc::new(Mutex::new(())),
            tool_router: Self::tool_router(),
        }
    }

    /// Run blocking engine work off the async threads, one call at a time,
    /// on the session opened for `access`.
    async fn with_engine<T: Send + 'static>(
        &self,
        access: Access,
        f: impl FnOnce(&mut Engine) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let at = self.at.clone();
        let turn = self.turn.clone();
        tokio::task::spawn_blocking(move || {
            // The guard protects no data: a panicked call poisons nothing.
            let _turn = turn.lock().unwrap_or_else(|p| p.into_inner());
            let mut engine = open(&at, access)?;
            f(&mut engine)
        })
        .await
        .map_err(|e| internal(format!("engine task failed: {e}")))?
    }

    /// Like `with_engine`, for a tool: the caller's mistakes (bad ids,
    /// paths, arguments) and a session another process holds come back as
    /// a tool error the model can read and act on, as the SDK answers
    /// arguments that do not fit the schema; the server's own failures
    /// stay protocol errors.
    async fn call(
        &self,
        access: Access,
        f: impl FnOnce(&mut Engine) -> Result<CallToolResult, ErrorData> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        // What the tool met — bad arguments, a conflict that aborted a
        // restore, an unknown entry, a locked session, a failed read — is the
        // tool's answer (isError), which the model reads and can act on; a
        // protocol error is for what went wrong with the call itself (MCP's
        // "Error Handling"), here only a failure inside rewind.
        match self.with_engine(access, f).await {
            Err(e) if e.code != ErrorCode::INTERNAL_ERROR => {
                let mut text = if e.code == ErrorCode::INVALID_PARAMS {
                    format!("invalid arguments: {}", e.message)
                } else {
                    e.message.to_string()
                };
                if let Some(data) = &e.data {
                    text.push_str(&format!("\n{data}"));
                }
                let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({ "error": e }));
                Ok(r)
            }
            other => other,
        }
    }
}

#[tool_router]
impl RewindMcp {
    #[tool(
        description = "Record a manual checkpoint of the project's files now, with a label and an optional note. Writes only to rewind's store, never to the project. It takes no turn number, and is recorded even while automatic checkpoints are paused (`rewind pause`); a session keeps at most 50 (a setting), after which `label` an existing checkpoint instead. Returns the new checkpoint's entryId and treeHash, which files changed since the previous checkpoint, the files and bytes it holds and the git branch and HEAD.",
        annotations(
            title = "Create a checkpoint",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn checkpoint(
        &self,
        Parameters(args): Parameters<CheckpointArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Write, move |engine| {
            let paths = FromWire::from_wire(args.paths).map_err(mcp_error)?;
            let max_manual = crate::app::settings::max_manual(engine.store().layout())
                .map_err(|e| internal(format!("{e:#}")))?;
            let r = engine
                .checkpoint(CheckpointParams {
                    label: Some(args.label.clone()),
                    note: args.note,
                    paths,
                    max_manual,
                })
                .map_err(mcp_error)?;
            let s = &r.snapshot;
            let mut text = format!(
                "checkpoint {} \"{}\" (tree {}): {} added, {} modified, {} deleted since the previous checkpoint; it holds {} file(s), {} byte(s); manual checkpoint {} of {} in this session",
                s.entry_id.as_ref().map_or("(none)", EntryId::as_str),
                args.label,
                s.tree_hash,
                s.diff.added.len(),
                s.diff.modified.len(),
                s.diff.deleted.len(),
                r.files,
                r.bytes,
                r.manual_count,
                r.max_manual
            );
            if let Some(g) = &s.git {
                text.push_str(&format!(
                    "; git branch {} at {}",
                    g.branch.as_deref().unwrap_or("(detached)"),
                    g.head.as_deref().unwrap_or("(no commit)")
                ));
            }
            for line in crate::app::unprotected::lines(&s.stats.untracked) {
                text.push_str(&format!("\nleft out: {line}"));
            }
            let mut v = to_value(s)?;
            v["files"] = json!(r.files);
            v["bytes"] = json!(r.bytes);
            v["manualCount"] = json!(r.manual_count);
            v["maxManual"] = json!(r.max_manual);
            Ok(answer(text, v))
        })
        .await
    }

    #[tool(
        description = "Set a checkpoint's label and/or note, changing only what is given: a label given keeps the note, a note given keeps the label; \"\" removes one. Writes only to rewind's store. Use it instead of a new checkpoint to name a moment that already has one.",
        annotations(
            title = "Label a checkpoint",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn label(
        &self,
        Parameters(args): Parameters<LabelArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Write, move |engine| {
            let edit = |t: Option<String>| match t {
                None => TextEdit::Keep,
                Some(t) if t.is_empty() => TextEdit::Clear,
                Some(t) => TextEdit::Set(t),
            };
            let (label, note) = (edit(args.label), edit(args.note));
            if label == TextEdit::Keep && note == TextEdit::Keep {
                return Err(ErrorData::invalid_params(
                    "give a label, a note, or both (\"\" removes one)",
                    None,
                ));
            }
            let r = engine
                .annotate(AnnotateParams {
                    target_id: EntryId::from_input(args.entry_id.as_str()),
                    label,
                    note,
                })
                .map_err(mcp_error)?;
            let text = format!(
                "checkpoint {}: label {}, note {}{}",
                args.entry_id,
                r.label
                    .as_deref()
                    .map_or("(none)".into(), |l| format!("{l:?}")),
                r.note
                    .as_deref()
                    .map_or("(none)".into(), |n| format!("{n:?}")),
                if r.entry_id.is_none() {
                    " (unchanged)"
                } else {
                    ""
                }
            );
            Ok(answer(
                text,
                json!({
                    "entryId": args.entry_id,
                    "label": r.label,
                    "note": r.note,
                    "changed": r.entry_id.is_some(),
                }),
            ))
        })
        .await
    }

    #[tool(
        description = "List the session's checkpoints on the current path, oldest first: entryId, turnIndex, kind, label (the prompt or tool for agent turns), timestamp, treeHash and counts of files added/modified/deleted. `query` filters labels and notes; `limit` keeps the last N (default 50). Read-only.",
        annotations(
            title = "List checkpoints",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_checkpoints(
        &self,
        Parameters(args): Parameters<ListArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Read, move |engine| {
            let mut r = engine
                .list_checkpoints(ListCheckpointsParams {
                    scope: None,
                    query: args.query,
                })
                .map_err(mcp_error)?;
            let total = r.checkpoints.len();
            let limit = args.limit.unwrap_or(DEFAULT_CHECKPOINT_LIMIT);
            r.checkpoints.drain(..total.saturating_sub(limit));
            let mut text = format!(
                "{} checkpoint(s){}:\n",
                total,
                if r.checkpoints.len() < total {
                    format!(", the last {} shown", r.checkpoints.len())
                } else {
                    String::new()
                }
            );
            for c in &r.checkpoints {
                text.push_str(&format!(
                    "  turn {:>3}  {}  {:<8} +{} ~{} -{}  {}\n",
                    c.turn_index,
                    c.entry_id,
                    c.kind,
                    c.added,
                    c.modified,
                    c.deleted,
                    c.label.as_deref().unwrap_or("")
                ));
            }
            let mut v = to_value(&r)?;
            v["total"] = json!(total);
            v["truncated"] = json!(r.checkpoints.len() < total);
            Ok(answer(text, v))
        })
        .await
    }

    #[tool(
        description = "Which files differ between two points (entry ids, 32-hex tree hashes or \"@working\"; default: the session's baseline to the files on disk now), each with status added/modified/deleted and the entryId/turnIndex of the first checkpoint in the range that changed it. At most `limit` files (default 500); says how many were cut. Read-only.",
        annotations(
            title = "Changed files",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn changed_files(
        &self,
        Parameters(args): Parameters<RangeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Read, move |engine| {
            let mut r = engine
                .get_modified_files(range(args.from, args.to))
                .map_err(mcp_error)?;
            let total = r.files.len();
            r.files.truncate(args.limit.unwrap_or(DEFAULT_FILE_LIMIT));
            let mut text = format!(
                "{} file(s) changed from tree {} to tree {}:\n",
                total, r.from_tree_hash, r.to_tree_hash
            );
            for f in &r.files {
                text.push_str(&format!("  {} {}\n", f.status.letter(), f.path));
            }
            if r.files.len() < total {
                text.push_str(&format!(
                    "  … {} more not listed (raise `limit`)\n",
                    total - r.files.len()
                ));
            }
            let mut v = to_value(&r)?;
            v["total"] = json!(total);
            v["truncated"] = json!(r.files.len() < total);
            Ok(answer(text, v))
        })
        .await
    }

    #[tool(
        description = "The unified diff of one file between two points (entry ids, 32-hex tree hashes or \"@working\"; default: the session's baseline to the file on disk now), with additions/deletions counts and oldHash/newHash. The diff is cut after `maxBytes` (default 65536) and the answer says how much was cut; binary and very large files are reported, not diffed. Read-only.",
        annotations(title = "Diff a file", read_only_hint = true, open_world_hint = false)
    )]
    async fn diff(
        &self,
        Parameters(args): Parameters<DiffArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Read, move |engine| {
            let r = range(args.from, args.to);
            let d = engine
                .get_file_diff(FileDiffParams {
                    file_path: RepoPath::from_wire(args.path.clone()).map_err(mcp_error)?,
                    from: r.from,
                    to: r.to,
                    context_lines: Some(args.context_lines.unwrap_or(3)),
                })
                .map_err(mcp_error)?;
            let Some(mut d) = d else {
                return Ok(answer(
                    format!("{}: no difference between the two points", args.path),
                    json!({ "path": args.path, "changed": false }),
                ));
            };
            let changed = d.old_hash != d.new_hash;
            let max = args.max_bytes.unwrap_or(DEFAULT_DIFF_BYTES);
            let full = d.unified_diff.len();
            let truncated = full > max;
            if truncated {
                let mut cut = max;
                while !d.unified_diff.is_char_boundary(cut) {
                    cut -= 1;
                }
                d.unified_diff.truncate(cut);
            }
            // The diff is the answer; whole contents would repeat it.
            d.old_content = None;
            d.new_content = None;
            let mut text = if changed {
                String::new()
            } else {
                format!("{}: the same at both points\n", d.path)
            };
            text.push_str(&format!(
                "{}: +{} -{}{}{}\n",
                d.path,
                d.additions,
                d.deletions,
                if d.is_binary { " (binary)" } else { "" },
                if d.is_too_large {
                    " (too large to diff)"
                } else {
                    ""
                }
            ));
            text.push_str(&d.unified_diff);
            if truncated {
                text.push_str(&format!(
                    "\n[diff cut: {} of {} bytes shown; raise maxBytes for more]",
                    d.unified_diff.len(),
                    full
                ));
            }
            let mut v = to_value(&d)?;
            if let Some(o) = v.as_object_mut() {
                o.remove("oldContent");
                o.remove("newContent");
                o.insert("changed".into(), json!(changed));
                o.insert("truncated".into(), json!(truncated));
                o.insert("unifiedDiffBytes".into(), json!(full));
            }
            Ok(answer(text, v))
        })
        .await
    }

    #[tool(
        description = "Every recorded version of one file on the current path, oldest first: the entryId, turnIndex, kind, label and timestamp of the checkpoint that made it, its status (added/modified/deleted) and content hash. Use an entryId from here as the `target` of `restore` (with `files`) to bring back a good version. Read-only.",
        annotations(title = "File history", read_only_hint = true, open_world_hint = false)
    )]
    async fn file_history(
        &self,
        Parameters(args): Parameters<HistoryArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Read, move |engine| {
            let r = engine
                .get_file_history(FileHistoryParams {
                    file_path: RepoPath::from_wire(args.path).map_err(mcp_error)?,
                    scope: None,
                })
                .map_err(mcp_error)?;
            let mut text = format!("{}: {} version(s)\n", r.path, r.versions.len());
            for v in &r.versions {
                text.push_str(&format!(
                    "  turn {:>3}  {}  {:?}  {}  {}\n",
                    v.turn_index,
                    v.entry_id,
                    v.status,
                    v.timestamp,
                    v.label.as_deref().unwrap_or("")
                ));
            }
            Ok(answer(text, to_value(&r)?))
        })
        .await
    }

    #[tool(
        description = "Put the project's files (or only `files`) back as they were at a checkpoint. TWO STEPS: called without confirmToken it writes nothing and returns the exact plan (per file: write, delete or keep; conflicts) and a confirmToken. Call again with the same arguments and that token to execute; if anything changed on disk or in the session since the plan, nothing is written and the new plan comes back with a new token. Files changed since rewind last recorded them are kept, not overwritten, unless onConflict says \"overwrite\" (or \"abort\": write nothing then). Before writing, the current state is checkpointed, so `undo` can put it back. Once it is done (without `files`), the agent's conversation is forked at that checkpoint too: the answer's `conversation.resumeCommand` continues it in a new session (this running conversation cannot be cut from inside it); `conversation: false` skips that.",
        annotations(
            title = "Restore files (plan, then confirm)",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn restore(
        &self,
        Parameters(args): Parameters<RestoreArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Write, move |engine| {
            let (target_entry_id, tree_hash) = match Point::parse(&args.target) {
                Point::Tree(t) => (None, Some(t)),
                _ => (Some(EntryId::from_input(args.target.as_str())), None),
            };
            let op = json!({
                "tool": "restore",
                "target": args.target,
                "files": args.files,
                "onConflict": args.on_conflict,
            });
            let files: Option<Vec<RepoPath>> =
                FromWire::from_wire(args.files).map_err(mcp_error)?;
            let on_conflict = FromWire::from_wire(args.on_conflict).map_err(mcp_error)?;
            let target = target_entry_id.clone();
            let conversation = args
                .conversation
                .unwrap_or(files.is_none())
                .then(|| target_entry_id.clone())
                .flatten();
            let r = two_step(
                engine,
                "restore",
                op,
                args.confirm_token,
                move |e, preview| {
                    e.restore_files(RestoreFilesParams {
                        target_entry_id: target_entry_id.clone(),
                        tree_hash,
                        files: files.clone(),
                        preview: Some(preview),
                        on_conflict,
                        hunks: None,
                        git: None,
                    })
                },
            )?;
            let r = naming_target(r, engine, target.as_ref());
            Ok(with_conversation(r, engine, conversation.as_ref()))
        })
        .await
    }

    #[tool(
        description = "Undo, as `rewind undo` does: when an agent's turn is newer than the last restore or undo, put the files back as they were before that turn; otherwise revert the last restore or undo (or the unrevert-point `entryId`), putting back the files as they were just before it. TWO STEPS like `restore`: without confirmToken it writes nothing and returns the plan and a confirmToken; with the token it executes only if nothing changed since the plan, else it returns the new plan and token. Once it is done, the agent's conversation is forked as it was at the state put back: the answer's `conversation.resumeCommand` continues it in a new session (this running conversation cannot be cut from inside it); `conversation: false` skips that.",
        annotations(
            title = "Undo the last turn or restore (plan, then confirm)",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn undo(
        &self,
        Parameters(args): Parameters<UndoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Write, move |engine| {
            let on_conflict = FromWire::from_wire(args.on_conflict).map_err(mcp_error)?;
            // What `rewind undo` does: after an agent's turn, the state
            // before it; after a rollback, that rollback undone.
            let before_turn = match args.entry_id {
                None => before_last_turn(engine).map_err(mcp_error)?,
                Some(_) => None,
            };
            let op = json!({
                "tool": "undo",
                "entryId": args.entry_id,
                "onConflict": args.on_conflict,
                "beforeTurn": before_turn.as_ref().map(|(turn, id)| json!({ "turn": turn, "entryId": id.as_str() })),
            });
            let conversation = args.conversation.unwrap_or(true);
            if let Some((turn, id)) = before_turn {
                let what = format!("Undo of turn {turn} (back to checkpoint {id}, where it started)");
                let undoes = json!({ "turn": turn, "entryId": id.as_str() });
                let at = conversation.then(|| id.clone());
                let mut r = two_step(engine, &what, op, args.confirm_token, move |e, preview| {
                    e.restore_files(RestoreFilesParams {
                        target_entry_id: Some(id.clone()),
                        tree_hash: None,
                        files: None,
                        preview: Some(preview),
                        on_conflict,
                        hunks: None,
                        git: None,
                    })
                })?;
                // Clients that show the model only the structured content
                // (Claude Code) see which turn this undoes there too.
                if let Some(Value::Object(o)) = r.structured_content.as_mut() {
                    o.insert("undoesTurn".into(), undoes);
                }
                return Ok(with_conversation(r, engine, at.as_ref()));
            }
            let entry_id = args.entry_id.map(EntryId::from_input);
            // Undoing a rollback brings back the state before it: the
            // conversation of the agent's checkpoint above it.
            let at = match (&entry_id, conversation) {
                (_, false) => None,
                (Some(id), true) => Some(id.clone()),
                (None, true) => crate::app::points::path_checkpoints(engine)
                    .map_err(mcp_error)?
                    .into_iter()
                    .rev()
                    .find(|c| c.kind.is_rollback())
                    .map(|c| c.entry_id),
            };
            let r = two_step(engine, "undo", op, args.confirm_token, move |e, preview| {
                e.undo(UndoParams {
                    entry_id: entry_id.clone(),
                    on_conflict,
                    preview: Some(preview),
                    git: None,
                })
            })?;
            Ok(with_conversation(r, engine, at.as_ref()))
        })
        .await
    }

    #[tool(
        description = "Which checkpoint wrote each line of a file: per line its entryId, turnIndex, kind, label (the prompt, for an agent's turn) and text; lines not yet in any checkpoint have entryId null. Use it to find the turn that introduced a change, then `revert` that entryId. Read-only.",
        annotations(
            title = "Blame by turn",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn blame(
        &self,
        Parameters(args): Parameters<BlameArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Read, move |engine| {
            let r = engine
                .get_file_blame(FileBlameParams {
                    path: RepoPath::from_wire(args.path).map_err(mcp_error)?,
                    at: args.at.as_deref().map(Point::parse),
                })
                .map_err(mcp_error)?;
            let mut text = format!("{}: {} line(s)\n", r.path, r.lines.len());
            for l in &r.lines {
                let who = match &l.entry_id {
                    Some(id) => format!("{id} turn {:>3}", l.turn_index),
                    None => "not checkpointed yet".to_string(),
                };
                text.push_str(&format!("{who} {:>5}| {}\n", l.line, l.text));
            }
            Ok(answer(text, to_value(&r)?))
        })
        .await
    }

    #[tool(
        description = "Take the changes one checkpoint made (or a range of checkpoints, with toEntryId) out of the project's files while keeping every later change: a three-way merge per file, like `git revert` for an agent's turn. TWO STEPS like `restore`: without confirmToken it writes nothing and returns the plan (per file: clean, conflict with the conflicting lines, or skip with a reason, and the diff it would apply) and a confirmToken; call again with the same arguments and the token to execute. With onConflict \"abort\" (default) nothing is written if any file conflicts. The current state is checkpointed first, so `undo` puts it back.",
        annotations(
            title = "Revert one turn, keep later ones (plan, then confirm)",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn revert(
        &self,
        Parameters(args): Parameters<RevertArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(Access::Write, move |engine| {
            let op = json!({
                "tool": "revert",
                "entryId": args.entry_id,
                "toEntryId": args.to_entry_id,
                "files": args.files,
                "onConflict": args.on_conflict,
            });
            let entry_id = EntryId::from_input(args.entry_id);
            let to_entry_id = args.to_entry_id.map(EntryId::from_input);
            let files: Option<Vec<RepoPath>> =
                FromWire::from_wire(args.files).map_err(mcp_error)?;
            let on_conflict = FromWire::from_wire(args.on_conflict).map_err(mcp_error)?;
            two_step(
                engine,
                "revert",
                op,
                args.confirm_token,
                move |e, preview| {
                    e.revert(RevertParams {
                        entry_id: entry_id.clone(),
                        to_entry_id: to_entry_id.clone(),
                        files: files.clone(),
                        preview: Some(preview),
                        on_conflict,
                    })
                },
            )
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RewindMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "rewind: checkpoints of this project's files. Read-only tools: list_checkpoints, changed_files, diff, file_history. `checkpoint` records a checkpoint and `label` names or annotates one (both write only rewind's store). `restore`, `undo` and `revert` change files in two steps: the first call returns the plan and a confirmToken, writing nothing; only a second call with that token, while the plan still holds, writes.",
        )
    }
}
