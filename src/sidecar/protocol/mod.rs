//! Parameter and result types of every method: the wire contract
//! (docs/protocol.md) as Rust types, and nothing else (no logic). `schema/`
//! is generated from these with schemars, and the clients from `schema/`.
//! The engine never sees them: `super::convert` turns them into its
//! requests and its results into them. Field names match the engine's
//! types one for one, which the conversion macros check at compile time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod maintenance;
mod query;
mod record;
mod rollback;

pub use maintenance::*;
pub use query::*;
pub use record::*;
pub use rollback::*;

pub const PROTOCOL_VERSION: u32 = 1;

// ---------------------------------------------------------------- initialize

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializeParams {
    /// Project root (absolute). Default: `--cwd`, else the process cwd.
    pub cwd: Option<String>,
    /// Resume this session file, or create it. Absolute.
    pub session_file: Option<String>,
    /// Store directory (absolute). Default: `$REWIND_HOME/projects/<hash>`.
    pub store_dir: Option<String>,
    pub options: Option<InitializeOptions>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializeOptions {
    /// Bytes; files larger than this are untracked `tooLarge` (default 16 MiB).
    pub max_file_size: Option<u64>,
    /// Extra gitignore-style globs to exclude (even files git tracks).
    pub extra_ignores: Option<Vec<String>>,
    /// Honour .gitignore and .git/info/exclude (default true).
    pub use_gitignore: Option<bool>,
    /// Exclude node_modules, target, .venv, ... (default true).
    pub default_excludes: Option<bool>,
    /// Bytes; files git ignores (outside ignored directories) are captured
    /// up to this size, so deleting `.env` can be undone; 0 captures none
    /// (default 1 MiB).
    pub ignored_max_size: Option<u64>,
    /// At most this many ignored files are captured per directory; the rest
    /// are untracked `ignoredOverCap` (default 32).
    pub ignored_per_directory: Option<u32>,
    /// fsync objects and session appends (default true).
    pub fsync: Option<bool>,
    /// Watch the project for changes (inotify on Linux, FSEvents on macOS,
    /// ReadDirectoryChangesW on Windows) so a snapshot looks
    /// only at what changed since the last scan; it scans everything on
    /// start, after a watcher overflow, or whenever an ignore file, the git
    /// index or `.git/info/exclude` changed (default true).
    pub watch: Option<bool>,
    /// A remote to push the store's sessions to in the background after
    /// each checkpoint (docs/remote.md "Continuous push"): a remote's name
    /// in the store's config or a URL. Default: `REWIND_REMOTE`, else the
    /// store's remote added with `--auto-push`, else none. A remote that
    /// cannot be named or reached never fails a request: it is logged and
    /// `rewind status` shows how far behind it is.
    pub remote: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineInfo {
    pub entry_id: String,
    pub tree_hash: String,
    /// Captured regular files and symlinks.
    pub files: u64,
    pub bytes: u64,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// The session file's last line was unterminated: `"completed"` (it
    /// parsed and got its newline) or `"truncated"` (it did not parse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_tail: Option<String>,
    /// Bytes removed when the torn tail was truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_bytes: Option<u64>,
    /// The entry recording edits made while no sidecar was running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_entry_id: Option<String>,
    /// A restore a crash interrupted, and what recovery did with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_restore: Option<InterruptedRestore>,
}

/// What recovery did, for `initialize`'s `recovered`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterruptedRestore {
    pub unrevert_entry_id: String,
    /// `"completed"`: the restore was finished; `"discarded"`: it had not
    /// started touching files, the journal was dropped.
    pub action: String,
    pub restored: Vec<String>,
    pub deleted: Vec<String>,
    /// Paths that held neither what the restore found nor what it meant
    /// to leave (edited after the crash): left as they are.
    pub kept: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: u32,
    pub server_version: String,
    pub session_id: String,
    pub session_file: String,
    pub store_dir: String,
    pub project_root: String,
    pub leaf_id: String,
    pub resumed: bool,
    pub baseline: BaselineInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<Recovered>,
}
// -------------------------------------------------------------- notifications

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangeReason {
    Restore,
    Navigate,
    Undo,
    Reset,
    Revert,
}

/// Why a path found in the project is not in the checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UntrackedReason {
    /// Larger than `maxFileSize`, and not in the parent checkpoint.
    TooLarge,
    /// A FIFO, socket or device.
    Special,
    /// Could not be read: permissions, an I/O error, a name that is not
    /// UTF-8, or a directory that could not be listed (nothing below it is
    /// captured).
    Unreadable,
    /// Its absolute path is longer than the system allows (PATH_MAX), so it
    /// cannot be opened by name; for a directory, nothing below it is
    /// captured.
    PathTooLong,
    /// Kept changing while it was read (a file rewritten in place), in
    /// every attempt: what was read would be a mix of versions that never
    /// existed as a whole.
    Unstable,
    /// Ignored by git and small enough to be captured, but its directory
    /// holds more such files than `ignoredPerDirectory`.
    IgnoredOverCap,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
pub struct Untracked {
    pub path: String,
    pub reason: UntrackedReason,
}

/// `files_changed`: sent once per operation that changed the working
/// directory, before its response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilesChanged {
    pub reason: ChangeReason,
    pub written: Vec<String>,
    pub deleted: Vec<String>,
}

/// `progress`: at most every 100 ms while a restore, navigation, undo or
/// reset writes files (`done` of `total` files), or while a long scan walks
/// the project (`operation: "scan"`; `total` is an estimate, never below
/// `done`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// `"restore"`, `"navigate"`, `"undo"`, `"reset"` or `"scan"`.
    pub operation: String,
    pub done: u64,
    pub total: u64,
}
