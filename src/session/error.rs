//! Errors of the session log.

use std::io;
use std::path::{Path, PathBuf};

use super::ids::EntryId;

/// Everything that can go wrong reading, indexing or appending to a session file.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Another process, or another `SessionLog` in this process, holds the file's lock.
    #[error("session file {} is locked by another process", path.display())]
    Locked { path: PathBuf },

    #[error("{context} {}: {source}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A line that is not a valid entry. `line` is 1-based; `Entry::from_value` has no file
    /// to name, so it reports an empty path and line 0, which the message then leaves out.
    #[error("{}", malformed_message(path, *line, reason))]
    Malformed {
        path: PathBuf,
        line: usize,
        reason: String,
    },

    #[error("session file {} has format version {version}; only version 3 is supported", path.display())]
    UnsupportedVersion { path: PathBuf, version: u64 },

    #[error("unknown parent entry {id}")]
    UnknownParent { id: EntryId },

    #[error("entry id {id} already exists in the session")]
    DuplicateId { id: EntryId },

    #[error("invalid entry id {id:?}: must be 1 to 64 characters without whitespace")]
    BadId { id: EntryId },

    /// Empty file, or a first line that is not a `session` header.
    #[error("{} is not a session file (no session header on line 1)", path.display())]
    NotASession { path: PathBuf },

    /// A record rewind was about to append could not be turned into JSON.
    #[error("encoding a {kind} entry: {source}")]
    Encode {
        kind: &'static str,
        #[source]
        source: serde_json::Error,
    },

    #[error("session file {} was opened read-only", path.display())]
    ReadOnly { path: PathBuf },
}

impl SessionError {
    pub(crate) fn io(context: &'static str, path: &Path, source: io::Error) -> Self {
        SessionError::Io {
            context,
            path: path.to_path_buf(),
            source,
        }
    }
}

fn malformed_message(path: &Path, line: usize, reason: &str) -> String {
    if line == 0 {
        format!("malformed session entry: {reason}")
    } else {
        format!(
            "{}:{line}: malformed session line: {reason}",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_path_line_and_id() {
        let e = SessionError::Malformed {
            path: PathBuf::from("/s/a.jsonl"),
            line: 7,
            reason: "not JSON".into(),
        };
        assert_eq!(
            e.to_string(),
            "/s/a.jsonl:7: malformed session line: not JSON"
        );
        let e = SessionError::Malformed {
            path: PathBuf::new(),
            line: 0,
            reason: "missing id".into(),
        };
        assert_eq!(e.to_string(), "malformed session entry: missing id");
        let e = SessionError::Locked {
            path: PathBuf::from("/s/a.jsonl"),
        };
        assert!(e.to_string().contains("/s/a.jsonl"));
        let e = SessionError::UnknownParent {
            id: EntryId::from_input("abcd1234"),
        };
        assert!(e.to_string().contains("abcd1234"));
    }
}
