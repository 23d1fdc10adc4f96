//! Errors of the remote (docs/remote.md): each one line that names what
//! failed, for a person reading a terminal or a hook's failure log.

use std::io;
use std::path::{Path, PathBuf};

use crate::session::SessionError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The server refused or could not be reached: permission, region,
    /// credentials, network. `message` is the backend's error on one line.
    #[error("remote {url}: {message}")]
    Backend { url: String, message: String },

    /// Remotes belong to one project's store: a name added on another
    /// machine (or for another project) is unknown here, a URL works anywhere.
    #[error(
        "no remote named {name:?} in this project's store ({}); add it with `rewind remote add {name} URL`, or give the URL itself",
        if configured.is_empty() { "none configured".to_owned() } else { format!("configured: {configured}") }
    )]
    UnknownRemote { name: String, configured: String },

    #[error(
        "no remote configured for this project's store: add one with `rewind remote add NAME URL`, or give a URL with --remote or REWIND_REMOTE"
    )]
    NoRemote,

    #[error("several remotes configured ({0}): name one with --remote or REWIND_REMOTE")]
    SeveralRemotes(String),

    #[error("{0:?} is a path, not a remote: a directory is given as a URL, file:///absolute/path")]
    NotARemote(String),

    #[error("remote {0:?} exists already (`rewind remote remove {0}` first)")]
    RemoteExists(String),

    #[error("a remote name is 1 to 64 letters, digits, '-' or '_', not {0:?}")]
    BadName(String),

    #[error("not a remote URL {url:?}: {reason}")]
    BadUrl { url: String, reason: String },

    /// The cloud's client refused the URL together with the credentials and
    /// settings read from the environment (or the AWS files) for it: a key
    /// that is not base64, a bucket missing from an https URL.
    #[error(
        "remote {url}: cannot be set up from the URL and the environment's settings: {reason}"
    )]
    Settings { url: String, reason: String },

    /// The AWS shared files (`~/.aws/credentials`, `~/.aws/config`).
    #[error("AWS profile: {reason}")]
    AwsProfile { reason: String },

    /// Something on the remote that rewind never writes: past a hard bound
    /// (docs/remote.md "What a remote can and cannot do to you"), or a
    /// `file://` remote's key through a symbolic link. Nothing was read.
    #[error("remote {url}: {key}: {reason}")]
    Refused {
        url: String,
        key: String,
        reason: String,
    },

    #[error("session {session} is not on remote {url}")]
    NoSuchSession { session: String, url: String },

    /// An object a checkpoint needs is not on the remote, or arrived
    /// damaged: nothing of the session was written.
    #[error("session {session}, checkpoint {checkpoint}: object {object} {problem}")]
    Object {
        session: String,
        checkpoint: String,
        object: String,
        problem: String,
    },

    /// Something fetched from the remote is not what it claims to be.
    #[error("session {session}: {what} from the remote is damaged: {reason}")]
    Damaged {
        session: String,
        what: String,
        reason: String,
    },

    #[error("{context} {}: {source}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error(transparent)]
    Store(#[from] StoreError),

    #[error(transparent)]
    Session(#[from] SessionError),
}

impl RemoteError {
    pub(crate) fn io(context: &'static str, path: &Path, source: io::Error) -> RemoteError {
        RemoteError::Io {
            context,
            path: path.to_path_buf(),
            source,
        }
    }
}
