//! Retention (docs/protocol.md "gc"): which whole session files go, by
//! `keepLast` / `maxAgeDays` and then by `budgetBytes` (the budget loop itself
//! is in `run`, since it counts what the mark phase reaches), and removing
//! one under its exclusive lock (docs/architecture.md rule 8). Protected
//! sessions ([`super::discover`]) are never candidates.

use std::fs::{self, File, TryLockError};
use std::io;
use std::time::{Duration, SystemTime};

use super::discover::SessionFile;
use super::GcError;

const SECS_PER_DAY: f64 = 86_400.0;

/// `maxAgeDays` as a duration: `None` when not given, `Some(None)` when it is too large to
/// exclude anything.
pub(super) fn parse_max_age(days: Option<f64>) -> Result<Option<Option<Duration>>, GcError> {
    match days {
        None => Ok(None),
        Some(d) if d.is_nan() || d < 0.0 => Err(GcError::InvalidParams(format!(
            "maxAgeDays must be a non-negative number, got {d}"
        ))),
        Some(d) => Ok(Some(Duration::try_from_secs_f64(d * SECS_PER_DAY).ok())),
    }
}

/// Indices of the removable sessions, newest first (ties by path, for determinism).
pub(super) fn newest_first(sessions: &[SessionFile]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sessions.len())
        .filter(|&i| sessions[i].removable)
        .collect();
    order.sort_by(|&a, &b| {
        sessions[b]
            .modified
            .cmp(&sessions[a].modified)
            .then_with(|| sessions[a].path.cmp(&sessions[b].path))
    });
    order
}

/// Sessions the keep rules remove, oldest first.
pub(super) fn retention_prunes(
    sessions: &[SessionFile],
    ranked: &[usize],
    keep_last: usize,
    max_age: Option<Option<Duration>>,
    now: SystemTime,
) -> Vec<usize> {
    let young = |s: &SessionFile| match max_age {
        None => false,
        Some(None) => true,
        Some(Some(max)) => now.duration_since(s.modified).unwrap_or(Duration::ZERO) < max,
    };
    ranked
        .iter()
        .enumerate()
        .rev()
        .filter(|&(rank, &i)| {
            let s = &sessions[i];
            s.protection.is_none() && rank >= keep_last && !young(s)
        })
        .map(|(_, &i)| i)
        .collect()
}

/// Sessions the budget may remove, oldest first.
pub(super) fn budget_candidates(
    sessions: &[SessionFile],
    ranked: &[usize],
    keep_last: usize,
    pruned: &[usize],
) -> Vec<usize> {
    ranked
        .iter()
        .enumerate()
        .rev()
        .filter(|&(rank, &i)| {
            sessions[i].protection.is_none() && rank >= keep_last && !pruned.contains(&i)
        })
        .map(|(_, &i)| i)
        .collect()
}

pub(super) enum Removal {
    Removed,
    /// Someone else removed it first.
    Vanished,
    /// Held by a sidecar now, or changed since gc read it.
    Kept(&'static str),
}

/// Removes a session file while holding its exclusive lock, so no sidecar can open it
/// meanwhile; keeps it if a sidecar holds it or it changed since it was read.
pub(super) fn remove_session(s: &SessionFile) -> Result<Removal, GcError> {
    let file = match File::open(&s.path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Removal::Vanished),
        Err(e) => return Err(GcError::io("opening session file", &s.path, e)),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Removal::Kept("held by a sidecar")),
        Err(TryLockError::Error(err)) => {
            tracing::warn!(%err, path = %s.path.display(), "cannot lock session file");
            return Ok(Removal::Kept("cannot be locked"));
        }
    }
    let meta = file
        .metadata()
        .map_err(|e| GcError::io("reading session file metadata", &s.path, e))?;
    let modified = meta
        .modified()
        .map_err(|e| GcError::io("reading session file metadata", &s.path, e))?;
    if modified != s.modified || meta.len() != s.len {
        return Ok(Removal::Kept("changed while gc ran"));
    }
    match fs::remove_file(&s.path) {
        // The lock goes with `file`, after the name is gone.
        Ok(()) => Ok(Removal::Removed),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Removal::Vanished),
        Err(e) => Err(GcError::io("removing session file", &s.path, e)),
    }
}
