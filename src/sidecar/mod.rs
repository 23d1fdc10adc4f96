//! The JSON-RPC edge (docs/architecture.md, "Layers"): everything that
//! knows the wire. `transport` frames lines, `rpc` recognises JSON-RPC 2.0
//! and pi-style envelopes and owns the error-code table, `handlers` is the
//! one method table, `protocol` holds the wire types the schema is
//! generated from, and `convert` turns wire params into the engine's
//! requests and the engine's results into wire results. Nothing below this
//! module (engine, working copy, store, session) imports from it.

pub mod convert;
pub mod handlers;
pub mod protocol;
pub mod rpc;
pub mod schema;
pub mod transport;
