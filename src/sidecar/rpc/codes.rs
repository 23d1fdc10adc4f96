//! The error-code table: every JSON-RPC error code rewind answers with, and
//! which engine failure maps to which (docs/protocol.md "Error codes"). The
//! engine reports failures as values; only the edge knows their numbers.

use serde_json::{json, Value};

use crate::engine::EngineError;
use crate::session::SessionError;
use crate::store::StoreError;
use crate::working_copy::ScanError;

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;
pub const INTERNAL_ERROR: i32 = -32603;
pub const UNKNOWN_ID: i32 = 1001;
pub const CONFLICTS: i32 = 1002;
pub const CORRUPT: i32 = 1003;
pub const LOCKED: i32 = 1004;
pub const IO_ERROR: i32 = 1005;
pub const STALE: i32 = 1006;

/// The protocol error code of an engine failure (docs/protocol.md "Error
/// codes").
pub fn code(err: &EngineError) -> i32 {
    match err {
        EngineError::InvalidParams(_) | EngineError::BadPath(_) | EngineError::GitRefused(_) => {
            INVALID_PARAMS
        }
        EngineError::UnknownEntry(_) | EngineError::UnknownTree(_) | EngineError::NothingToUndo => {
            UNKNOWN_ID
        }
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
        EngineError::StaleHunk { .. } => STALE,
        EngineError::Gc(crate::gc::GcError::InvalidParams(_)) => INVALID_PARAMS,
        EngineError::Gc(_) => IO_ERROR,
    }
}

/// Structured details for an engine failure's `data`.
pub fn data(err: &EngineError) -> Option<Value> {
    match err {
        EngineError::BadPath(e) => Some(json!({ "path": e.path })),
        EngineError::UnknownEntry(id) => Some(json!({ "id": id })),
        EngineError::UnknownTree(h) => Some(json!({ "treeHash": h })),
        EngineError::Store(StoreError::Corrupt { id })
        | EngineError::Store(StoreError::NotFound { id }) => Some(json!({ "object": id.to_hex() })),
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
        EngineError::Conflicts(c) => {
            Some(json!({ "conflicts": crate::sidecar::convert::conflicts(c) }))
        }
        EngineError::StaleHunk { path, index } => Some(json!({ "path": path, "index": index })),
        _ => None,
    }
}
