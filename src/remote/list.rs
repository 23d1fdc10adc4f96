//! `rewind sessions --remote`: every session any store pushed, with each
//! copy's summary (its manifest).

use super::error::RemoteError;
use super::manifest::Manifest;
use super::{keys, limits, Remote};
use crate::printable::printable;
use crate::session::{canonical_iso, SessionId};

/// One copy of a session on the remote.
#[derive(Clone, Debug)]
pub struct RemoteCopy {
    pub session_id: SessionId,
    pub writer: String,
    pub cwd: String,
    pub updated: String,
    pub entries: usize,
    pub leaf: Option<String>,
    pub bytes: u64,
    /// This store wrote it.
    pub ours: bool,
}

/// Every manifest under `sessions/`, newest first. One that does not read
/// is logged and left out of the listing (a pull of its session says why).
pub fn list_sessions(remote: &Remote) -> Result<Vec<RemoteCopy>, RemoteError> {
    let mut out = Vec::new();
    for listed in remote.backend.list(&keys::sessions_dir())? {
        if keys::parse_manifest_key(&listed.key).is_none() {
            // Chunks are listed too; a key that is neither is not rewind's
            // (a junk or hostile name): left out of the listing, and said so.
            if keys::parse_chunk_key(&listed.key).is_none() {
                tracing::warn!(key = %printable(listed.key.as_ref()), "a key under sessions/ that is not rewind's is left out");
            }
            continue;
        }
        let bytes = match remote.backend.get(&listed.key, limits::MAX_MANIFEST_BYTES) {
            Ok(Some(b)) => b,
            Ok(None) => continue,
            Err(RemoteError::Refused { reason, .. }) => {
                tracing::warn!(key = %listed.key, %reason, "a manifest on the remote is refused");
                continue;
            }
            Err(e) => return Err(e),
        };
        // Its session id and writer are those of its key, of the id
        // grammar; the rest is shown only through `printable`.
        match Manifest::parse(&listed.key, &bytes) {
            Ok(m) => out.push(RemoteCopy {
                ours: m.writer == remote.writer,
                session_id: m.session_id,
                writer: m.writer,
                cwd: printable(&m.cwd).into_owned(),
                updated: canonical_iso(&m.updated).unwrap_or_else(|| "?".into()),
                entries: m.entries,
                leaf: m.leaf.map(|l| printable(&l).into_owned()),
                bytes: m.bytes,
            }),
            Err(err) => {
                tracing::warn!(key = %listed.key, %err, "a manifest on the remote does not read")
            }
        }
    }
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.writer.cmp(&b.writer)));
    Ok(out)
}
