//! What the engine tells its host while it works. Front ends turn these into
//! their own messages (the JSON-RPC server into `files_changed` and
//! `progress` notifications); the engine never spells a method name.

use std::sync::Arc;

use super::api::ChangeReason;
use crate::repo_path::RepoPath;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEvent {
    /// An operation changed the working directory; sent once, before the
    /// operation returns.
    FilesChanged {
        reason: ChangeReason,
        written: Vec<RepoPath>,
        deleted: Vec<RepoPath>,
    },
    /// A long operation's progress, at most every 100 ms: `"restore"`,
    /// `"navigate"`, `"undo"`, `"reset"`, `"revert"` (files written) or `"scan"`
    /// (paths walked; `total` is an estimate, never below `done`).
    Progress {
        operation: String,
        done: u64,
        total: u64,
    },
}

/// Receives the engine's events.
pub type EventSink = Arc<dyn Fn(EngineEvent) + Send + Sync>;
