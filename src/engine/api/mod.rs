//! The engine's own request and result types: what every front end (the
//! JSON-RPC server, the CLI, hooks, MCP, the UI) passes to and gets from
//! [`crate::engine::Engine`]. They carry domain types (`RepoPath`,
//! `ObjectId`, enums) and no wire concerns: no serde, no JSON schema. The
//! wire types and the conversion to and from them live in
//! `crate::sidecar` (docs/architecture.md, "Layers").

mod maintenance;
mod open;
mod patch;
mod query;
mod record;
mod rollback;

pub use maintenance::*;
pub use open::*;
pub use patch::*;
pub use query::*;
pub use record::*;
pub use rollback::*;
