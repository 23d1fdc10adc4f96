//! The append-only session log (pi's session format v3): one JSON line per entry, the
//! in-memory tree index over it, and the lock that keeps one writer per file.

mod entry;
mod error;
mod follow;
mod ids;
mod index;
mod log;
pub mod records;

pub use entry::*;
pub use error::SessionError;
pub use follow::{FollowStats, FollowedLog};
pub use ids::*;
pub use index::SessionIndex;
pub use log::{parse_copy, OpenReport, ParkedLog, SessionLog, TornTail};
