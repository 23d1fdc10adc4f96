//! Checkpoints beyond one machine: sessions and their objects on object
//! storage (S3 and S3-compatible servers, GCS, Azure, a local directory),
//! through the `object_store` crate. docs/remote.md is the user's guide;
//! docs/architecture.md "The remote" the design.
//!
//! Everything on a remote is immutable except one manifest per store and
//! session, and everything is uploaded before what names it: packs, then
//! their indexes, then log chunks, then the manifest. A reader therefore
//! never meets a manifest naming what is not there, and a push cut short
//! is resumed by the next one without sending again what arrived.
//!
//! - [`config`]: the store's remotes (`config.toml`) and its writer id;
//! - [`push`], [`pull`], [`list`]: the three things done with a remote;
//!   `pusher.rs`: pushing in the background while a sidecar or hook server runs;
//! - `backend.rs`: blocking calls on the crate; `keys.rs`: every key's
//!   name; `index.rs`: which objects the remote holds; `state.rs`: what
//!   this store knows of a remote; `manifest.rs`: one copy of a session.

mod aws_profile;
mod backend;
pub mod config;
mod error;
pub mod gc;
mod index;
mod keys;
mod limits;
mod list;
mod manifest;
mod pull;
mod push;
mod pusher;
mod state;
mod upload;

pub use backend::Traffic;
pub use config::RemoteSpec;
pub use error::RemoteError;
pub use limits::REMOTE_PACK_BYTES;
pub use list::{list_sessions, RemoteCopy};
pub use pull::{pull_session, requested_session, PullReport};
pub use push::{push_session, Check as PushCheck, PushReport};
pub use pusher::{behind, last_error, last_resent, Behind, Pusher};

use crate::store::Layout;

/// One remote, opened for a store: its storage, what the store knows of
/// it, and the name the store writes its manifests under.
pub struct Remote {
    pub spec: RemoteSpec,
    backend: backend::Backend,
    state: state::State,
    writer: String,
    /// Where a push closes a pack ([`REMOTE_PACK_BYTES`]; tests make it small).
    pack_bytes: usize,
}

impl Remote {
    /// The remote `which` names (see [`config::resolve`]) for the store at
    /// `layout`. Nothing is contacted yet.
    pub fn open(layout: &Layout, which: Option<&str>) -> Result<Remote, RemoteError> {
        let spec = config::resolve(layout, which)?;
        Remote::open_spec(layout, spec)
    }

    pub fn open_spec(layout: &Layout, spec: RemoteSpec) -> Result<Remote, RemoteError> {
        let backend = backend::Backend::open(&spec.url)?;
        let state = state::State::new(spec.state_dir(layout));
        let writer = config::writer_id(layout)?;
        Ok(Remote {
            spec,
            backend,
            state,
            writer,
            pack_bytes: REMOTE_PACK_BYTES,
        })
    }

    /// The requests and bytes this remote was sent and answered so far.
    pub fn traffic(&self) -> &Traffic {
        &self.backend.traffic
    }

    /// Packs of at most `bytes` (the last record may pass it), for tests
    /// that need many packs from a few objects.
    pub fn with_pack_bytes(mut self, bytes: usize) -> Remote {
        self.pack_bytes = bytes;
        self
    }

    pub fn writer(&self) -> &str {
        &self.writer
    }
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
