//! What this store knows of one remote, under `remote/<name>/`: the
//! indexes of the remote's packs (immutable, so cached for good) and how
//! much of each session file is on the remote already (its chunks).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::RemoteError;
use super::manifest::Chunk;
use crate::durability::atomic_write;
use crate::session::SessionId;
use crate::store::ObjectId;

const PACKS_DIR: &str = "packs";
const SESSIONS_DIR: &str = "sessions";

/// The chunks a session file's first `bytes` bytes were pushed (or pulled) as.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pushed {
    pub chunks: Vec<Chunk>,
    /// Whether the manifest naming all of `chunks` was written (a push cut
    /// short after its chunk writes it on the next try).
    #[serde(default)]
    pub manifest_written: bool,
}

impl Pushed {
    pub fn bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.bytes).sum()
    }

    /// Whether `file` still begins with the chunks (a torn-tail repair or a
    /// replaced file makes this a fresh start).
    pub fn is_prefix_of(&self, file: &[u8]) -> bool {
        let mut at = 0usize;
        for c in &self.chunks {
            let Ok(n) = usize::try_from(c.bytes) else {
                return false;
            };
            let Some(piece) = file.get(at..at + n) else {
                return false;
            };
            if ObjectId::of(piece).to_hex() != c.hash {
                return false;
            }
            at += n;
        }
        true
    }
}

pub struct State {
    dir: PathBuf,
}

impl State {
    pub fn new(dir: PathBuf) -> State {
        State { dir }
    }

    pub fn packs_dir(&self) -> PathBuf {
        self.dir.join(PACKS_DIR)
    }

    /// A typed id names the file: it cannot leave the directory.
    fn pushed_path(&self, session: &SessionId) -> PathBuf {
        self.dir.join(SESSIONS_DIR).join(format!("{session}.json"))
    }

    pub fn pushed(&self, session: &SessionId) -> Result<Pushed, RemoteError> {
        let path = self.pushed_path(session);
        match fs::read(&path) {
            // An unreadable state only costs a fresh upload of the log.
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_default()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Pushed::default()),
            Err(e) => Err(RemoteError::io("reading", &path, e)),
        }
    }

    pub fn save_pushed(&self, session: &SessionId, pushed: &Pushed) -> Result<(), RemoteError> {
        let path = self.pushed_path(session);
        let bytes = serde_json::to_vec(pushed).map_err(|e| {
            RemoteError::io(
                "encoding",
                &path,
                io::Error::new(io::ErrorKind::InvalidData, e),
            )
        })?;
        write_file(&path, &bytes)
    }
}

/// `path` replaced atomically with `bytes`, its directory made if missing.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RemoteError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| RemoteError::io("creating", dir, e))?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{:016x}", rand::random::<u64>()));
    let temp = path.with_file_name(name);
    atomic_write(path, &temp, false, |f| f.write_all(bytes))
        .map_err(|e| RemoteError::io("writing", path, e))
}
