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
use rewind::engine::{Engine, EngineError};
use rewind::protocol::{
    FileBlameParams, FileDiffParams, FileHistoryParams, ListCheckpointsParams, RangeParams,
    RestoreFilesParams, RestoreResult, RevertOnConflict, RevertParams, RevertResult, SnapshotKind,
    SnapshotParams, UndoParams,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, ErrorData, ServerCapabilities, ServerConfig,
};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::frontend::{self, plan_files, point, Access, FrontError, Step};
use crate::Location;

/// The longest unified diff `diff` returns by default, in bytes.
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
    // or start one with its baseline; then let go of it until a call.
    let engine = crate::cli_unhooked::open_or_start(&at, false)?;
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

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointArgs {
    /// What the checkpoint is for (shown by list_checkpoints).
    pub label: String,
    /// Only rescan these files or directories (relative to the project
    /// root); default: the whole project.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListArgs {
    /// Case-insensitive substring searched in labels and notes.
    #[serde(default)]
    pub query: Option<String>,
    /// Return only the last N checkpoints (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RangeArgs {
    /// Start: an entry id, a 32-hex tree hash or "@working" (default: the
    /// session's baseline).
    #[serde(default)]
    pub from: Option<String>,
    /// End: an entry id, a 32-hex tree hash or "@working" (default:
    /// "@working", the files on disk now).
    #[serde(default)]
    pub to: Option<String>,
    /// List at most this many files (default 500).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffArgs {
    /// The file, relative to the project root.
    pub path: String,
    /// Start: an entry id, a 32-hex tree hash or "@working" (default: the
    /// session's baseline).
    #[serde(default)]
    pub from: Option<String>,
    /// End: an entry id, a 32-hex tree hash or "@working" (default:
    /// "@working").
    #[serde(default)]
    pub to: Option<String>,
    /// Lines of context around each change (default 3).
    #[serde(default)]
    pub context_lines: Option<usize>,
    /// Cut the unified diff after this many bytes (default 65536).
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryArgs {
    /// The file, relative to the project root.
    pub path: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreArgs {
    /// The checkpoint to go back to: an entry id (from list_checkpoints or
    /// file_history) or a 32-hex tree hash.
    pub target: String,
    /// Only these files or directories (relative to the project root);
    /// default: every file.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// The token the first call returned with the plan. Without it nothing
    /// is written: the answer is the plan and a token.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlameArgs {
    /// The file, relative to the project root.
    pub path: String,
    /// An entry id: the file as that checkpoint has it (default: on disk now).
    #[serde(default)]
    pub at: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevertArgs {
    /// The checkpoint whose changes are taken out (an entryId from
    /// list_checkpoints, file_history or blame).
    pub entry_id: String,
    /// The last checkpoint of a range starting at entryId: the whole
    /// range's changes are taken out.
    #[serde(default)]
    pub to_entry_id: Option<String>,
    /// Only these files or directories (relative to the project root).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// "abort" (default: nothing written if a file conflicts), "skip"
    /// (write the files that merge cleanly) or "markers" (write conflicts
    /// with git-style conflict markers).
    #[serde(default)]
    pub on_conflict: Option<RevertOnConflict>,
    /// The token the first call returned with the plan. Without it nothing
    /// is written: the answer is the plan and a token.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndoArgs {
    /// The unrevert-point to undo (default: the newest on the current
    /// path, i.e. the last restore or undo).
    #[serde(default)]
    pub entry_id: Option<String>,
    /// The token the first call returned with the plan. Without it nothing
    /// is written: the answer is the plan and a token.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

/// An engine failure as an MCP error: the caller's mistakes (bad ids,
/// paths, arguments) are invalid params (turned into tool errors by
/// `RewindMcp::call`); the rest keep rewind's code.
fn mcp_error(err: EngineError) -> ErrorData {
    let code = rewind::rpc::codes::code(&err);
    let data = rewind::rpc::codes::data(&err);
    let message = err.to_string();
    match code {
        rewind::rpc::codes::INVALID_PARAMS | rewind::rpc::codes::UNKNOWN_ID => {
            ErrorData::invalid_params(message, data)
        }
        c => ErrorData::new(ErrorCode(c), message, data),
    }
}

/// A shared front-end failure as an MCP error.
fn front_error(err: FrontError) -> ErrorData {
    match err {
        FrontError::Locked(m) => ErrorData::new(ErrorCode(rewind::rpc::codes::LOCKED), m, None),
        FrontError::Engine(e) => mcp_error(e),
        FrontError::Internal(m) => internal(m),
    }
}

/// The session for one call: `--session`, else the store's newest.
fn open(at: &Location, access: Access) -> Result<Engine, ErrorData> {
    frontend::open(at, access, LOCK_WAIT).map_err(front_error)
}

fn internal(message: String) -> ErrorData {
    ErrorData::internal_error(message, None)
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ErrorData> {
    serde_json::to_value(v).map_err(|e| internal(format!("serializing the result: {e}")))
}

/// Readable text plus the same answer as structured content.
fn answer(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

fn range(from: Option<String>, to: Option<String>) -> RangeParams {
    let (from_entry_id, from_hash) = point(from);
    let (to_entry_id, to_hash) = match to {
        None => (Some("@working".to_string()), None),
        t => point(t),
    };
    RangeParams {
        from_entry_id,
        to_entry_id,
        from_hash,
        to_hash,
    }
}

/// What a two-step write answers with: the plan in words, the files it
/// touches, and what was done.
trait Outcome: serde::Serialize {
    fn plan_text(&self, what: &str) -> String;
    /// Per-file actions for the structured plan, where the result does not
    /// list them itself.
    fn plan_files(&self) -> Option<Vec<Value>>;
    fn restored(&self) -> usize;
    fn deleted(&self) -> usize;
    fn unrevert_entry_id(&self) -> Option<&str>;
    fn warnings(&self) -> &[String];
}

impl Outcome for RestoreResult {
    fn plan_text(&self, what: &str) -> String {
        restore_plan_text(what, self)
    }
    fn plan_files(&self) -> Option<Vec<Value>> {
        Some(plan_files(self))
    }
    fn restored(&self) -> usize {
        self.restored.len()
    }
    fn deleted(&self) -> usize {
        self.deleted.len()
    }
    fn unrevert_entry_id(&self) -> Option<&str> {
        self.unrevert_entry_id.as_deref()
    }
    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl Outcome for RevertResult {
    fn plan_text(&self, what: &str) -> String {
        format!(
            "{what} would write {} file(s) and delete {}:\n{}",
            self.restored.len(),
            self.deleted.len(),
            crate::cli_revert::revert_plan_text(self, true)
        )
    }
    fn plan_files(&self) -> Option<Vec<Value>> {
        None
    }
    fn restored(&self) -> usize {
        self.restored.len()
    }
    fn deleted(&self) -> usize {
        self.deleted.len()
    }
    fn unrevert_entry_id(&self) -> Option<&str> {
        self.unrevert_entry_id.as_deref()
    }
    fn warnings(&self) -> &[String] {
        &[]
    }
}

fn restore_plan_text(what: &str, plan: &RestoreResult) -> String {
    let mut s = String::new();
    if plan.restored.is_empty() && plan.deleted.is_empty() {
        s.push_str(&format!("{what}: nothing to change.\n"));
    } else {
        s.push_str(&format!(
            "{what} would write {} file(s) and delete {}:\n",
            plan.restored.len(),
            plan.deleted.len()
        ));
    }
    for p in &plan.restored {
        s.push_str(&format!("  write   {p}\n"));
    }
    for p in &plan.deleted {
        s.push_str(&format!("  delete  {p}\n"));
    }
    for p in plan.skipped.iter().chain(&plan.dirty) {
        if !plan.restored.contains(p) && !plan.deleted.contains(p) {
            s.push_str(&format!(
                "  keep    {p} (changed since it was last recorded)\n"
            ));
        }
    }
    for c in &plan.conflicts {
        s.push_str(&format!("  conflict {} ({:?})\n", c.path, c.reason));
    }
    for w in &plan.warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    s
}

/// The two steps of a write: `run(engine, true)` plans, `run(engine,
/// false)` executes. Without `token`, or with one that no longer matches
/// the plan and the files on disk, nothing is written and the answer is
/// the (new) plan with its token.
fn two_step<T: Outcome>(
    engine: &mut Engine,
    what: &str,
    op: Value,
    token: Option<String>,
    run: impl Fn(&mut Engine, bool) -> Result<T, EngineError>,
) -> Result<CallToolResult, ErrorData> {
    let (plan, fresh, working, stale) = match frontend::two_step(engine, op, token.as_deref(), run)
        .map_err(front_error)?
    {
        Step::Done(done) => {
            let mut text = format!(
                "{what} done: wrote {} file(s), deleted {}.",
                done.restored(),
                done.deleted()
            );
            if let Some(u) = done.unrevert_entry_id() {
                text.push_str(&format!(
                        " The state before it is kept (unrevert-point {u}); the `undo` tool puts it back."
                    ));
            }
            for w in done.warnings() {
                text.push_str(&format!("\nwarning: {w}"));
            }
            let structured = json!({
                "executed": true,
                "result": to_value(&done)?,
            });
            return Ok(answer(text, structured));
        }
        Step::Plan {
            plan,
            token,
            working_tree,
            stale,
        } => (plan, token, working_tree, stale),
    };
    let mut text = String::new();
    if stale {
        text.push_str(
            "NOT executed: the confirmToken does not match (the files or the session changed since that plan was made, or it was for other arguments). Nothing was written. This is the current plan:\n",
        );
    }
    text.push_str(&plan.plan_text(what));
    text.push_str(&format!(
        "To execute exactly this plan, call again with the same arguments and confirmToken \"{fresh}\"."
    ));
    let mut structured = json!({
        "executed": false,
        "staleToken": stale,
        "plan": to_value(&plan)?,
        "confirmToken": fresh,
        "workingTreeHash": working,
    });
    if let Some(files) = plan.plan_files() {
        structured["files"] = json!(files);
    }
    let mut r = answer(text, structured);
    if stale {
        r.is_error = Some(true);
    }
    Ok(r)
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
        match self.with_engine(access, f).await {
            Err(e)
                if e.code == ErrorCode::INVALID_PARAMS
                    || e.code == ErrorCode(rewind::rpc::codes::LOCKED) =>
            {
                let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
                    "invalid arguments: {}",
                    e.message
                ))]);
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
        description = "Record a manual checkpoint of the project's files now, with a label. Writes only to rewind's store, never to the project. Returns the new checkpoint's entryId and treeHash and which files changed since the previous checkpoint.",
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
            let r = engine
                .snapshot(SnapshotParams {
                    kind: Some(SnapshotKind::Manual),
                    label: Some(args.label.clone()),
                    paths: args.paths,
                    force: Some(true),
                    ..Default::default()
                })
                .map_err(mcp_error)?;
            let text = format!(
                "checkpoint {} \"{}\" (tree {}): {} added, {} modified, {} deleted since the previous checkpoint",
                r.entry_id.as_deref().unwrap_or("(none)"),
                args.label,
                r.tree_hash,
                r.diff.added.len(),
                r.diff.modified.len(),
                r.diff.deleted.len()
            );
            Ok(answer(text, to_value(&r)?))
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
                let s = match f.status {
                    rewind::protocol::FileStatus::Added => "A",
                    rewind::protocol::FileStatus::Modified => "M",
                    rewind::protocol::FileStatus::Deleted => "D",
                };
                text.push_str(&format!("  {s} {}\n", f.path));
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
                    file_path: args.path.clone(),
                    from_entry_id: r.from_entry_id,
                    to_entry_id: r.to_entry_id,
                    from_hash: r.from_hash,
                    to_hash: r.to_hash,
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
                    file_path: args.path,
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
        description = "Put the project's files (or only `files`) back as they were at a checkpoint. TWO STEPS: called without confirmToken it writes nothing and returns the exact plan (per file: write, delete or keep; conflicts) and a confirmToken. Call again with the same arguments and that token to execute; if anything changed on disk or in the session since the plan, nothing is written and the new plan comes back with a new token. Files changed since rewind last recorded them are kept, not overwritten. Before writing, the current state is checkpointed, so `undo` can put it back.",
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
            let (target_entry_id, tree_hash) = point(Some(args.target.clone()));
            let op = json!({ "tool": "restore", "target": args.target, "files": args.files });
            let files = args.files;
            two_step(
                engine,
                "restore",
                op,
                args.confirm_token,
                move |e, preview| {
                    e.restore_files(RestoreFilesParams {
                        target_entry_id: target_entry_id.clone(),
                        tree_hash: tree_hash.clone(),
                        files: files.clone(),
                        preview: Some(preview),
                        on_conflict: None,
                        hunks: None,
                    })
                },
            )
        })
        .await
    }

    #[tool(
        description = "Revert the last restore or undo (or the unrevert-point `entryId`): put back the files as they were just before it. TWO STEPS like `restore`: without confirmToken it writes nothing and returns the plan and a confirmToken; with the token it executes only if nothing changed since the plan, else it returns the new plan and token.",
        annotations(
            title = "Undo the last restore (plan, then confirm)",
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
            let op = json!({ "tool": "undo", "entryId": args.entry_id });
            let entry_id = args.entry_id;
            two_step(engine, "undo", op, args.confirm_token, move |e, preview| {
                e.undo(UndoParams {
                    entry_id: entry_id.clone(),
                    on_conflict: None,
                    preview: Some(preview),
                })
            })
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
                    path: args.path,
                    at: args.at,
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
            let entry_id = args.entry_id;
            let to_entry_id = args.to_entry_id;
            let files = args.files;
            let on_conflict = args.on_conflict;
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
            "rewind: checkpoints of this project's files. Read-only tools: list_checkpoints, changed_files, diff, file_history. `checkpoint` records a checkpoint (writes only rewind's store). `restore` and `undo` change files in two steps: the first call returns the plan and a confirmToken, writing nothing; only a second call with that token, while the plan still holds, writes.",
        )
    }
}
