//! One store's copy of a session on a remote: the chunks its session file
//! is made of, in order, and a summary for listings. Written after every
//! chunk and pack it depends on (docs/remote.md "Crash consistency").

use serde::{Deserialize, Serialize};

use super::{keys, limits};
use crate::printable::printable;

pub const MANIFEST_FORMAT: u32 = 1;

/// A piece of a session file: whole lines, named by the xxh3-128 of its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub hash: String,
    pub bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: u32,
    pub session_id: String,
    /// The store that wrote it (`remote/writer`).
    pub writer: String,
    /// The project directory on the writer's machine.
    pub cwd: String,
    /// When it was written (ISO 8601, UTC).
    pub updated: String,
    /// Entries in this copy, and its leaf.
    pub entries: usize,
    #[serde(default)]
    pub leaf: Option<String>,
    /// The file's length: the sum of the chunks'.
    pub bytes: u64,
    pub chunks: Vec<Chunk>,
}

impl Manifest {
    /// The manifest stored under `key` (`sessions/<id>/manifests/<writer>.json`),
    /// checked as everything from a remote is: its session id and writer
    /// must be the ones its key names and of the id grammar
    /// ([`keys::is_safe_component`]), its chunks named as rewind names them,
    /// their lengths summing to `bytes` within
    /// [`limits::MAX_SESSION_BYTES`]. `Err` says why it is not one.
    pub fn parse(key: &object_store::path::Path, bytes: &[u8]) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if m.format != MANIFEST_FORMAT {
            return Err(format!(
                "format {} (this build reads {MANIFEST_FORMAT})",
                m.format
            ));
        }
        let (session, writer) = keys::parse_manifest_key(key).ok_or("not a manifest's key")?;
        if m.session_id != session || m.writer != writer {
            return Err(format!(
                "it names session {} and writer {}, its key another",
                printable(&m.session_id),
                printable(&m.writer)
            ));
        }
        let mut total = 0u64;
        for c in &m.chunks {
            if !keys::is_hash(&c.hash) {
                return Err(format!("bad chunk name {}", printable(&c.hash)));
            }
            total = total
                .checked_add(c.bytes)
                .ok_or("its chunks' lengths overflow")?;
        }
        if total != m.bytes {
            return Err(format!(
                "its chunks hold {total} bytes, it says {}",
                m.bytes
            ));
        }
        if let Some(reason) = limits::over(total, limits::MAX_SESSION_BYTES) {
            return Err(format!("a session of {reason}"));
        }
        Ok(m)
    }
}
