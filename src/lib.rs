//! rewind: a checkpoint and rollback sidecar for AI coding agents.
//!
//! Data flows one way (docs/architecture.md, "Layers"): a front end —
//! `sidecar` (the JSON-RPC edge `rewind serve` runs: framing, envelopes,
//! the method table, wire types and their conversion), or the CLI, hooks,
//! MCP and UI in the binary — calls `engine` with its own request types
//! (`engine::api`), and the engine works through `working_copy` / `store` /
//! `session` (the disk). Nothing below `sidecar` knows the wire. ("Server"
//! means the per-project hook server, `rewind server`, alone.)

pub mod durability;
pub mod engine;
pub mod gc;
pub mod lock_wait;
pub mod memory;
pub mod printable;
pub mod remote;
pub mod repo_path;
pub mod session;
pub mod sidecar;
pub mod store;
pub mod verify;
pub mod working_copy;
