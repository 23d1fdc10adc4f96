//! What opening a session reports.

use std::path::PathBuf;

use crate::repo_path::RepoPath;
use crate::session::EntryId;
use crate::store::ObjectId;

#[derive(Debug, Clone)]
pub struct BaselineInfo {
    pub entry_id: EntryId,
    pub tree_hash: ObjectId,
    /// Captured regular files and symlinks.
    pub files: u64,
    pub bytes: u64,
}

/// What happened to a session file's unterminated last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TornTail {
    /// It parsed and got its newline.
    Completed,
    /// It did not parse and was cut off.
    Truncated,
}

/// What recovery did with a restore a crash interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryAction {
    /// The unrevert-point was recorded: the restore was finished.
    Completed,
    /// It had not started touching files: the journal was dropped.
    Discarded,
}

#[derive(Debug, Clone)]
pub struct InterruptedRestore {
    pub unrevert_entry_id: EntryId,
    pub action: RecoveryAction,
    pub restored: Vec<RepoPath>,
    pub deleted: Vec<RepoPath>,
    /// Paths that held neither what the restore found nor what it meant
    /// to leave (edited after the crash): left as they are.
    pub kept: Vec<RepoPath>,
}

#[derive(Debug, Default, Clone)]
pub struct Recovered {
    pub torn_tail: Option<TornTail>,
    /// Bytes removed when the torn tail was truncated.
    pub truncated_bytes: Option<u64>,
    /// The entry recording edits made while no sidecar was running.
    pub outside_entry_id: Option<EntryId>,
    pub interrupted_restore: Option<InterruptedRestore>,
}

/// The session an [`crate::engine::Engine`] opened.
#[derive(Debug, Clone)]
pub struct Opened {
    pub session_id: String,
    pub session_file: PathBuf,
    pub store_dir: PathBuf,
    pub project_root: PathBuf,
    pub leaf_id: EntryId,
    pub resumed: bool,
    pub baseline: BaselineInfo,
    pub recovered: Option<Recovered>,
}
