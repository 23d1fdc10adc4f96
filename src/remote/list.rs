//! `rewind sessions --remote`: every session any store pushed, with each
//! copy's summary (its manifest).

use super::error::RemoteError;
use super::manifest::Manifest;
use super::{keys, Remote};

/// One copy of a session on the remote.
#[derive(Clone, Debug)]
pub struct RemoteCopy {
    pub session_id: String,
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
        let key = listed.key.as_ref();
        if !key.contains("/manifests/") || !key.ends_with(".json") {
            continue;
        }
        let Some(bytes) = remote.backend.get(&listed.key)? else {
            continue;
        };
        match serde_json::from_slice::<Manifest>(&bytes) {
            Ok(m) => out.push(RemoteCopy {
                ours: m.writer == remote.writer,
                session_id: m.session_id,
                writer: m.writer,
                cwd: m.cwd,
                updated: m.updated,
                entries: m.entries,
                leaf: m.leaf,
                bytes: m.bytes,
            }),
            Err(err) => tracing::warn!(key, %err, "a manifest on the remote does not read"),
        }
    }
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.writer.cmp(&b.writer)));
    Ok(out)
}
