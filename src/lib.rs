//! rewind: a checkpoint and rollback sidecar for AI coding agents.
//!
//! Data flows one way: `transport` (stdio framing) → `rpc` (envelopes and
//! dispatch) → `handlers` (the method table) → `engine` (semantics) →
//! `working_copy` / `store` / `session` (the disk).

pub mod durability;
pub mod engine;
pub mod gc;
pub mod handlers;
pub mod hooks;
pub mod install;
pub mod memory;
pub mod protocol;
pub mod repo_path;
pub mod rpc;
pub mod schema;
pub mod session;
pub mod store;
pub mod transport;
pub mod verify;
pub mod working_copy;
