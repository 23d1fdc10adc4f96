//! The engine's error type: every failure with the context a person needs
//! (which path, which entry), and the stable protocol code it maps to.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::repo_path::PathError;
use crate::session::SessionError;
use crate::store::StoreError;
use crate::working_copy::ScanError;

pub const INVALID_PARAMS: i32 = -32602;
pub const UNKNOWN_ID: i32 = 1001;
pub const CONFLICTS: i32 = 1002;
pub const CORRUPT: i32 = 1003;
pub const LOCKED: i32 = 1004;
pub const IO_ERROR: i32 = 1005;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    InvalidParams(String),
    #[error(transparent)]
    BadPath(#[from] PathError),
    #[error("unknown entry id {0:?}")]
    UnknownEntry(String),
    #[error("unknown tree hash {0:?}")]
    UnknownTree(String),
    #[error("nothing to undo: no unrevert-point on the current path")]
    NothingToUndo,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Scan(#[from] ScanError),
    #[error("gc failed: {0}")]
    Gc(#[from] crate::gc::GcError),
    #[error("restore aborted: {} conflicting file(s)", .0.len())]
    Conflicts(Vec<crate::protocol::Conflict>),
    #[error("{context} {}: {source}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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

    /// The protocol error code (PROTOCOL.md "Error codes").
    pub fn code(&self) -> i32 {
        match self {
            EngineError::InvalidParams(_) | EngineError::BadPath(_) => INVALID_PARAMS,
            EngineError::UnknownEntry(_)
            | EngineError::UnknownTree(_)
            | EngineError::NothingToUndo => UNKNOWN_ID,
            EngineError::Store(StoreError::Corrupt { .. }) => CORRUPT,
            // A tree the caller named that is not in the store is an unknown
            // id; a missing object the store itself references is corruption.
            EngineError::Store(StoreError::NotFound { .. }) => CORRUPT,
            EngineError::Store(StoreError::BadTree { .. }) => CORRUPT,
            EngineError::Store(StoreError::BadId(_)) => INVALID_PARAMS,
            EngineError::Store(_) => IO_ERROR,
            EngineError::Session(SessionError::Locked { .. }) => LOCKED,
            EngineError::Session(SessionError::UnknownParent { .. }) => UNKNOWN_ID,
            EngineError::Session(SessionError::BadId { .. })
            | EngineError::Session(SessionError::DuplicateId { .. }) => INVALID_PARAMS,
            EngineError::Session(_) => IO_ERROR,
            EngineError::Scan(ScanError::BadPattern { .. }) => INVALID_PARAMS,
            EngineError::Scan(ScanError::Store { source, .. }) => match source {
                StoreError::Corrupt { .. } => CORRUPT,
                _ => IO_ERROR,
            },
            EngineError::Scan(_) => IO_ERROR,
            EngineError::Io { .. } => IO_ERROR,
            EngineError::Conflicts(_) => CONFLICTS,
            EngineError::Gc(crate::gc::GcError::InvalidParams(_)) => INVALID_PARAMS,
            EngineError::Gc(_) => IO_ERROR,
        }
    }

    /// Structured details for the error's `data`.
    pub fn data(&self) -> Option<Value> {
        match self {
            EngineError::BadPath(e) => Some(json!({ "path": e.path })),
            EngineError::UnknownEntry(id) => Some(json!({ "id": id })),
            EngineError::UnknownTree(h) => Some(json!({ "treeHash": h })),
            EngineError::Store(StoreError::Corrupt { id })
            | EngineError::Store(StoreError::NotFound { id }) => {
                Some(json!({ "object": id.to_hex() }))
            }
            EngineError::Store(StoreError::Io { path, .. }) => {
                Some(json!({ "path": path.display().to_string() }))
            }
            EngineError::Session(SessionError::Locked { path }) => {
                Some(json!({ "path": path.display().to_string() }))
            }
            EngineError::Session(SessionError::Io { path, .. })
            | EngineError::Session(SessionError::Malformed { path, .. })
            | EngineError::Session(SessionError::NotASession { path })
            | EngineError::Session(SessionError::UnsupportedVersion { path, .. }) => {
                Some(json!({ "path": path.display().to_string() }))
            }
            EngineError::Store(StoreError::BadTree { id: Some(id), .. }) => {
                Some(json!({ "object": id.to_hex() }))
            }
            EngineError::Scan(ScanError::Store { path, source }) => match source {
                StoreError::Corrupt { id } => Some(json!({ "object": id.to_hex(), "path": path })),
                _ => Some(json!({ "path": path })),
            },
            EngineError::Io { path, .. } => Some(json!({ "path": path.display().to_string() })),
            EngineError::Conflicts(c) => Some(json!({ "conflicts": c })),
            _ => None,
        }
    }
}
