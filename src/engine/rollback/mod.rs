//! Everything that writes the project: the restore core (`restore.rs`: plan,
//! snapshot before mutate, journal, unrevert-point, checkout), the
//! operations on it (`operations.rs`: restore_files, navigate_tree, undo,
//! approve, reset), git beside a restore (`git.rs`: the plan's words, the
//! `git` move), revert (`revert.rs`, with its three-way merge in
//! `merge.rs`), hunk-level restores (`hunks.rs`) and the restore journal
//! with crash recovery (`journal.rs`). engine/api/rollback.rs has their
//! requests and results.

pub(crate) mod git;
pub(crate) mod hunks;
pub(crate) mod journal;
pub(crate) mod merge;
pub(crate) mod operations;
pub(crate) mod restore;
pub(crate) mod revert;
