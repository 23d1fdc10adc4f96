//! The per-project hook server (docs/agents.md "The hook server",
//! docs/architecture.md "The hook server"). `rewind hook` is a new process
//! per agent event; without help each one opens the store, loads the stat
//! cache and walks the whole project. The server is a background process per
//! project and store that keeps all of that warm between events — the store,
//! the working copy with its watcher armed, the flattened trees — and records
//! each event with the same code a hook process runs (`hooks::handle`), so no
//! rule exists twice.
//!
//! - `client.rs`: the hook's side: send the event over the server's Unix
//!   socket, start a server when none answers, and do the work itself
//!   whenever the server cannot be trusted to (none, dead, hung, another
//!   build): the hook never fails the agent and never records twice.
//! - `serve.rs`: the server: one listener, events recorded one at a time,
//!   exit after an idle time or on `rewind server stop`.
//! - `wire.rs`: the lines the two exchange.
//! - `place.rs`: where a project's server lives (a 0700 directory in its
//!   store), who may talk to it (the same user), and which build it is.
//! - `backoff.rs`: a server that could not start, remembered, so hooks
//!   leave it alone for a while instead of waiting on it at every event.

mod backoff;
pub mod client;
mod place;
pub mod serve;
mod wire;

pub use place::Place;
