//! rewind: a checkpoint and rollback sidecar for AI coding agents.
//!
//! Data flows one way (docs/architecture.md, "Layers"): a front end —
//! `server` (the JSON-RPC sidecar: framing, envelopes, the method table,
//! wire types and their conversion), or the CLI, hooks, MCP and UI in the
//! binary — calls `engine` with its own request types (`engine::api`), and
//! the engine works through `working_copy` / `store` / `session` (the
//! disk). Nothing below `server` knows the wire.

pub mod durability;
pub mod engine;
pub mod gc;
pub mod lock_wait;
pub mod memory;
pub mod printable;
pub mod remote;
pub mod repo_path;
pub mod server;
pub mod session;
pub mod store;
pub mod verify;
pub mod working_copy;
