//! The engine's error type: every failure with the context a person needs
//! (which path, which entry). The wire's error codes are the edge's
//! business (`rpc::codes`).

use std::path::PathBuf;

use crate::repo_path::PathError;
use crate::session::{EntryId, SessionError};
use crate::store::StoreError;
use crate::working_copy::{ScanError, WorkingCopyError};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    InvalidParams(String),
    #[error(transparent)]
    BadPath(#[from] PathError),
    #[error("unknown entry id {0:?}")]
    UnknownEntry(EntryId),
    #[error("unknown tree hash {0:?}")]
    UnknownTree(String),
    #[error("nothing to undo: no unrevert-point on the current path")]
    NothingToUndo,
    /// `git` was asked for and cannot be done whole: the line says what to
    /// do instead (nothing was written).
    #[error("{0}")]
    GitRefused(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Scan(#[from] ScanError),
    #[error("gc failed: {0}")]
    Gc(#[from] crate::gc::GcError),
    #[error("hunk {index} of {path} is not the one get_file_diff gave: the file changed since (diff it again)")]
    StaleHunk { path: String, index: u32 },
    #[error("restore aborted: {} conflicting file(s)", .0.len())]
    Conflicts(Vec<super::api::Conflict>),
    #[error("{context} {}: {source}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<WorkingCopyError> for EngineError {
    fn from(e: WorkingCopyError) -> Self {
        match e {
            WorkingCopyError::Store(e) => EngineError::Store(e),
            WorkingCopyError::Scan(e) => EngineError::Scan(e),
        }
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

impl EngineError {
    pub fn io(context: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EngineError::Io {
            context,
            path: path.into(),
            source,
        }
    }

    /// Another process holds the session file.
    pub fn is_locked(&self) -> bool {
        matches!(self, EngineError::Session(SessionError::Locked { .. }))
    }
}
