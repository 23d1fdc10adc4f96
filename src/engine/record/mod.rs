//! What records: snapshots (`snapshot.rs`) and the other entries a session
//! holds — host entries, labels, the staged set, the tree view
//! (`entries.rs`); an agent's conversation beside its checkpoints
//! (`conversation.rs`). engine/api/record.rs has their requests and results.

pub(crate) mod annotate;
pub(crate) mod conversation;
pub(crate) mod entries;
pub(crate) mod snapshot;
