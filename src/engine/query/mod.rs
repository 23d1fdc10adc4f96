//! Read-only questions (nothing appended, the leaf stays): changed files,
//! diffs, file history, status, checkpoints and stats (`files.rs`), blame by
//! turn (`blame.rs`) on the bounded line diff (`line_diff.rs`); which
//! conversation a checkpoint restores (`conversation.rs`); a range as a git
//! patch (`patch.rs`) and a notebook's diff by cell (`notebook.rs`); what an
//! automatic checkpoint did, in words (`describe.rs`); what a checkpoint
//! left out (`left_out.rs`).
//! engine/api/query.rs has their requests and results.

pub(crate) mod blame;
pub(crate) mod conversation;
pub(crate) mod describe;
pub(crate) mod files;
pub(crate) mod left_out;
pub(crate) mod line_diff;
pub(crate) mod notebook;
pub(crate) mod patch;
