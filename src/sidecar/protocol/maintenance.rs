//! Wire types of gc and verify.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ------------------------------------------------------------------------- gc

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GcParams {
    pub dry_run: Option<bool>,
    /// Keep the newest N sessions (plus protected ones).
    pub keep_last: Option<u64>,
    /// Keep sessions younger than this many days (plus protected ones).
    pub max_age_days: Option<f64>,
    /// Remove the oldest unprotected sessions while the store is larger.
    pub budget_bytes: Option<u64>,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GcResult {
    pub objects_before: u64,
    pub objects_removed: u64,
    pub bytes_before: u64,
    pub bytes_freed: u64,
    pub sessions_pruned: u64,
    pub budget_met: bool,
    pub dry_run: bool,
    /// Session files removed (or, in a dry run, that would be).
    pub pruned_sessions: Vec<String>,
}

// --------------------------------------------------------------------- verify

/// What `verify` found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum VerifyProblemKind {
    /// A session file that does not parse.
    Session,
    /// An object a session, a journal or a stat cache names is not stored.
    MissingObject,
    /// A stored object that does not decode to content with its id (or a
    /// tree that does not decode as a tree).
    CorruptObject,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyProblem {
    pub kind: VerifyProblemKind,
    /// The object id or the file the problem is about.
    pub subject: String,
    /// Who needs it (a session file, a stat cache, a tree) and the error.
    pub detail: String,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyResult {
    /// No problem found.
    pub ok: bool,
    pub sessions: u64,
    pub stat_caches: u64,
    /// Distinct objects read and hashed (reachable ones and every other one stored).
    pub objects: u64,
    pub problems: Vec<VerifyProblem>,
}
