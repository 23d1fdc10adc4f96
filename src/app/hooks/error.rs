//! Why a hook event was not recorded ([`HookError`]): what `handle`
//! answers and the failure log keeps.

use std::path::{Path, PathBuf};

use rewind::engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("the project directory {path} is not usable: {source}")]
    Project {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("unreadable agent session record {}: {source}", path.display())]
    BadRecord {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("another hook of this project kept running for {0} s; this event was not recorded")]
    Busy(u64),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl HookError {
    pub(super) fn io(action: &'static str, path: &Path, source: std::io::Error) -> HookError {
        HookError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}
