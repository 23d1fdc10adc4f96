//! What a gc is asked and what it answers (the engine's `gc` method and
//! `rewind gc` take and give these).

#[derive(Debug, Default, Clone)]
pub struct GcParams {
    pub dry_run: Option<bool>,
    /// Keep the newest N sessions (plus protected ones).
    pub keep_last: Option<u64>,
    /// Keep sessions younger than this many days (plus protected ones).
    pub max_age_days: Option<f64>,
    /// Remove the oldest unprotected sessions while the store is larger.
    pub budget_bytes: Option<u64>,
}

#[derive(Debug, Default, Clone)]
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
