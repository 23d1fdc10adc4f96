//! The one error type of the object store.

use std::path::PathBuf;

use super::object_id::ObjectId;

/// Everything that can go wrong in the object store.
///
/// `NotFound` and `Corrupt` name the object so the engine can report it to the client
/// (protocol error 1001 / 1003); `Io` names the file so the client learns which path failed
/// (protocol error 1005).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No object file exists for this id.
    #[error("object {id} not found")]
    NotFound { id: ObjectId },
    /// The object file exists but does not decode to content whose hash is `id`
    /// (truncated, garbled header, bad compression stream, or wrong content).
    #[error("object {id} is corrupt (hash mismatch)")]
    Corrupt { id: ObjectId },
    /// A string that is not 32 lowercase hex characters was given as an object id.
    #[error("invalid object id {0:?}")]
    BadId(String),
    /// The store's `VERSION` file names a format this build cannot read.
    #[error("unsupported store format version {found} (this build reads {supported})")]
    UnsupportedVersion { found: u32, supported: u32 },
    /// Bytes that do not follow the canonical tree encoding, or a tree that cannot be
    /// encoded canonically (bad entry name, conflicting paths). `id` is the object the
    /// bytes came from, when known.
    #[error("malformed tree object {}: {reason}", display_opt_id(.id))]
    BadTree {
        id: Option<ObjectId>,
        reason: String,
    },
    /// A filesystem operation failed; `context` says what the store was doing.
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// Wraps an I/O error with what the store was doing and the path involved.
    pub(crate) fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        StoreError::Io {
            context,
            path: path.into(),
            source,
        }
    }

    /// A tree-format violation, without an object id (the caller attaches it when known).
    pub(crate) fn bad_tree(reason: impl Into<String>) -> Self {
        StoreError::BadTree {
            id: None,
            reason: reason.into(),
        }
    }
}

impl From<super::object_id::BadObjectId> for StoreError {
    fn from(bad: super::object_id::BadObjectId) -> StoreError {
        StoreError::BadId(bad.0)
    }
}

fn display_opt_id(id: &Option<ObjectId>) -> String {
    match id {
        Some(id) => id.to_hex(),
        // A tree that was never stored (being encoded or built) has no id yet.
        None => "(unsaved)".to_string(),
    }
}
