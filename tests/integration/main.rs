//! Every integration test of rewind, in one test binary: each module was a
//! file of `tests/` that cargo compiled and linked as a binary of its own
//! (with its own copy of `common`). One crate is built and linked once, and
//! its tests run side by side. `cargo test --test integration capture::`
//! runs one module; the data they read stays in `tests/` (`transcripts/`,
//! `agents/`, `fuzz/`); the transcript snapshots are in `snapshots/` here.

mod common;

mod agents_conversation;
mod agents_e2e;
mod agents_mcp;
mod azurite;
mod bad_input;
mod capture;
mod checkpoints;
mod cli;
mod cli_revert;
mod concurrency;
mod conflicts;
mod crash;
mod diff_budget;
mod disk_full;
mod fuzz;
mod garage;
mod gc;
mod git_state;
mod hooks;
mod hostile_remote;
mod install;
mod kills;
mod mcp;
mod patch;
mod plugin;
mod races;
mod remote;
mod remote_azure;
mod revert;
mod rollback;
mod rollback_model;
mod roundtrip;
mod schema_drift;
mod session;
mod transcripts;
mod ui;
mod ui_diff_views;
mod unhooked;
