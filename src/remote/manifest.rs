//! One store's copy of a session on a remote: the chunks its session file
//! is made of, in order, and a summary for listings. Written after every
//! chunk and pack it depends on (docs/remote.md "Crash consistency").

use serde::{Deserialize, Serialize};

use super::{keys, limits};
use crate::printable::printable;
use crate::session::SessionId;

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
    /// Typed as it is read: a manifest naming no session id does not read.
    pub session_id: SessionId,
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
    /// ([`SessionId`]), its chunks named as rewind names them,
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
                m.session_id,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn body(session: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "format": 1, "sessionId": session, "writer": "0123456789abcdef", "cwd": "/p",
            "updated": "2020-01-01T00:00:00.000Z", "entries": 0, "leaf": null,
            "bytes": 0, "chunks": [],
        }))
        .unwrap()
    }

    #[test]
    fn a_manifest_types_its_session_id_and_writes_it_back_as_read() {
        let key = object_store::path::Path::from("sessions/s-1/manifests/0123456789abcdef.json");
        let m = Manifest::parse(&key, &body("s-1")).unwrap();
        assert_eq!(m.session_id, "s-1");
        let again: serde_json::Value = serde_json::to_value(&m).unwrap();
        assert_eq!(again["sessionId"], "s-1");
        // An id that cannot be typed does not read, whatever its key.
        for bad in ["../s-1", "s.1", ""] {
            assert!(Manifest::parse(&key, &body(bad)).is_err(), "{bad:?}");
        }
    }
}
