//! How tool calls answer: engine errors as MCP errors, results as text
//! plus structured content, and the two-step write with its plan token.

use rewind::engine::api::{RestoreResult, RevertResult};
use rewind::engine::{Engine, EngineError};
use rewind::session::EntryId;
use rewind::sidecar::convert::{to_json, ToWire};
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData};
use serde_json::{json, Value};

use super::LOCK_WAIT;
use crate::app::args::Location;
use crate::app::plan::plan_files;
use crate::app::project::{self, Access, FrontError};
use crate::app::two_step::{self, Step};

/// An engine failure as an MCP error: the caller's mistakes (bad ids,
/// paths, arguments) are invalid params (turned into tool errors by
/// `RewindMcp::call`); the rest keep rewind's code.
pub(super) fn mcp_error(err: EngineError) -> ErrorData {
    let code = rewind::sidecar::rpc::codes::code(&err);
    let data = rewind::sidecar::rpc::codes::data(&err);
    let message = err.to_string();
    match code {
        rewind::sidecar::rpc::codes::INVALID_PARAMS | rewind::sidecar::rpc::codes::UNKNOWN_ID => {
            ErrorData::invalid_params(message, data)
        }
        c => ErrorData::new(ErrorCode(c), message, data),
    }
}

/// A shared front-end failure as an MCP error.
pub(super) fn front_error(err: FrontError) -> ErrorData {
    match err {
        FrontError::Locked(m) => {
            ErrorData::new(ErrorCode(rewind::sidecar::rpc::codes::LOCKED), m, None)
        }
        FrontError::Engine(e) => mcp_error(e),
        FrontError::Internal(m) => internal(m),
    }
}

/// The session for one call: `--session`, else the store's newest.
pub(super) fn open(at: &Location, access: Access) -> Result<Engine, ErrorData> {
    project::open(at, access, LOCK_WAIT).map_err(front_error)
}

pub(super) fn internal(message: String) -> ErrorData {
    ErrorData::internal_error(message, None)
}

pub(super) fn to_value<T>(v: &T) -> Result<Value, ErrorData>
where
    T: ToWire + Clone,
    T::Wire: serde::Serialize,
{
    to_json(v).map_err(|e| internal(format!("serializing the result: {e}")))
}

/// Readable text plus the same answer as structured content.
pub(super) fn answer(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// What a two-step write answers with: the plan in words, the files it
/// touches, and what was done.
pub(super) trait Outcome: ToWire<Wire: serde::Serialize> + Clone {
    fn plan_text(&self, what: &str) -> String;
    /// Per-file actions for the structured plan, where the result does not
    /// list them itself.
    fn plan_files(&self) -> Option<Vec<Value>>;
    fn restored(&self) -> usize;
    fn deleted(&self) -> usize;
    fn unrevert_entry_id(&self) -> Option<&EntryId>;
    fn warnings(&self) -> &[String];
}

impl Outcome for RestoreResult {
    fn plan_text(&self, what: &str) -> String {
        crate::app::plan::restore_plan_text(what, self)
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
    fn unrevert_entry_id(&self) -> Option<&EntryId> {
        self.unrevert_entry_id.as_ref()
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
            crate::app::plan::revert_plan_text(self, true)
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
    fn unrevert_entry_id(&self) -> Option<&EntryId> {
        self.unrevert_entry_id.as_ref()
    }
    fn warnings(&self) -> &[String] {
        &[]
    }
}

/// The two steps of a write: `run(engine, true)` plans, `run(engine,
/// false)` executes. Without `token`, or with one that no longer matches
/// the plan and the files on disk, nothing is written and the answer is
/// the (new) plan with its token.
pub(super) fn two_step<T: Outcome>(
    engine: &mut Engine,
    what: &str,
    op: Value,
    token: Option<String>,
    run: impl Fn(&mut Engine, bool) -> Result<T, EngineError>,
) -> Result<CallToolResult, ErrorData> {
    let (plan, fresh, working, stale) = match two_step::two_step(engine, op, token.as_deref(), run)
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
        "workingTreeHash": working.to_hex(),
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

/// An answer that names the checkpoint it goes to, as the terminal does
/// above its plans: its kind and turn, and the label and note a person
/// gave it (what they will recognise it by). After the answer's own text,
/// which says first whether anything was done.
pub(super) fn naming_target(
    mut r: CallToolResult,
    engine: &Engine,
    at: Option<&EntryId>,
) -> CallToolResult {
    if let Some(line) = at.and_then(|id| crate::app::plan::checkpoint_line(engine, id)) {
        r.content
            .push(ContentBlock::text(format!("It goes to {line}.")));
    }
    r
}

/// A confirmed restore or undo answered with the conversation forked at
/// `at` too (docs/agents.md "Restoring the conversation"): the command
/// that continues it, or why there is none. Nothing for a plan.
pub(super) fn with_conversation(
    mut r: CallToolResult,
    engine: &Engine,
    at: Option<&EntryId>,
) -> CallToolResult {
    let executed = r
        .structured_content
        .as_ref()
        .is_some_and(|s| s["executed"] == true);
    let Some(at) = at.filter(|_| executed) else {
        return r;
    };
    use crate::app::conversation::fork::{fork_at, shell_line};
    let (line, value) = match fork_at(engine, at) {
        Ok(f) => (
            format!(
                "This conversation cannot be cut from inside it; to continue from that checkpoint, run in a terminal in {}: {}",
                engine.project_root().display(),
                shell_line(&f.resume_command)
            ),
            json!({
                "agent": f.agent.name(),
                "sessionId": f.session_id,
                "resumeCommand": f.resume_command,
            }),
        ),
        Err(why) => (
            format!("The conversation was not forked: {why}"),
            json!({ "refused": why.0 }),
        ),
    };
    if let Some(Value::Object(o)) = r.structured_content.as_mut() {
        o.insert("conversation".into(), value);
    }
    r.content.push(ContentBlock::text(line));
    r
}
