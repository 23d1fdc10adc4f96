//! One store's copy of a session on a remote: the chunks its session file
//! is made of, in order, and a summary for listings. Written after every
//! chunk and pack it depends on (docs/remote.md "Crash consistency").

use serde::{Deserialize, Serialize};

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
