//! A hook server that cannot start, remembered. Without this, every event
//! would start a server that fails (its socket's place taken, a store it
//! cannot use), wait for it to listen, then record the event itself: half
//! a second more per event, forever. The server that fails (or the hook
//! that saw it exit without a word) writes why to `server/start-failed.json`;
//! until its retry time, hooks record their events themselves at once and
//! start nothing, the wait doubling with each failure in a row (10 s up to
//! 10 minutes); a server that listens removes the file. `rewind status`
//! and `rewind server status` show it (docs/agents.md "The hook server").

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::place::Place;

/// The wait after a first failure; it doubles with each one after it.
const FIRST_WAIT_SECS: u64 = 10;

/// The longest wait between two tries.
const MAX_WAIT_SECS: u64 = 600;

/// `server/start-failed.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartFailure {
    /// When the last try failed (seconds since the epoch).
    pub time: u64,
    /// Why (the server's own error, or how it exited).
    pub reason: String,
    /// Failed tries in a row.
    pub failures: u32,
    /// No hook starts a server before this (seconds since the epoch).
    pub retry_at: u64,
    /// The server process that failed: a hook that saw its server exit
    /// knows by it whether the server said why.
    pub pid: u32,
}

impl StartFailure {
    /// Whether hooks should still leave the server alone.
    pub fn waiting(&self) -> bool {
        now() < self.retry_at
    }

    /// One line for `rewind status` and `rewind server status`.
    pub fn describe(&self) -> String {
        let tries = match self.failures {
            1 => "once".to_string(),
            n => format!("{n} times in a row"),
        };
        let next = if self.waiting() {
            format!(
                "the next event tries again after {}",
                rfc3339(self.retry_at)
            )
        } else {
            "the next event tries again".to_string()
        };
        format!(
            "the hook server could not start ({tries}, last at {}): {}; hooks record their events themselves meanwhile, and {next}",
            rfc3339(self.time),
            self.reason
        )
    }
}

/// The last failure remembered, if any (one that cannot be read is none).
pub fn read(place: &Place) -> Option<StartFailure> {
    let bytes = std::fs::read(place.start_failure()).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Remember that the server `pid` could not start, and why. Written only
/// into a directory that is private and ours (never through a symlink:
/// `Place::check`); a failure to write it is logged and costs only the
/// wait it would have spared.
pub fn note(place: &Place, reason: &str, pid: u32) {
    if let Err(err) = place.check() {
        tracing::debug!(%err, "the server's start failure is not remembered");
        return;
    }
    let failures = read(place).map_or(0, |f| f.failures).saturating_add(1);
    let wait = FIRST_WAIT_SECS
        .saturating_mul(1u64 << (failures - 1).min(16))
        .min(MAX_WAIT_SECS);
    let time = now();
    let record = StartFailure {
        time,
        reason: reason.to_string(),
        failures,
        retry_at: time + wait,
        pid,
    };
    let path = place.start_failure();
    let mut temp = path.clone().into_os_string();
    temp.push(format!(".tmp-{}", std::process::id()));
    let written = serde_json::to_vec(&record)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            rewind::durability::atomic_write(&path, temp.as_ref(), false, |f| f.write_all(&bytes))
        });
    match written {
        Ok(()) => tracing::warn!(
            reason,
            failures,
            wait_secs = wait,
            "the hook server could not start: hooks record events themselves until its retry time"
        ),
        Err(err) => {
            tracing::warn!(%err, path = %path.display(), "could not remember the server's start failure")
        }
    }
}

/// A server listens: forget the failures.
pub fn clear(place: &Place) {
    match std::fs::remove_file(place.start_failure()) {
        Ok(()) => tracing::info!("the hook server starts again: its start failures are forgotten"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => tracing::warn!(%err, "could not remove the server's start failure"),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_in_a_row_wait_longer_and_a_start_forgets_them() {
        let tmp = tempfile::tempdir().unwrap();
        let place = Place::new(tmp.path().to_path_buf(), tmp.path().join("store"));
        // No private directory: nothing is written.
        note(&place, "no directory", 1);
        assert_eq!(read(&place), None);
        place.prepare().unwrap();
        let mut waits = Vec::new();
        for i in 0..8 {
            note(&place, "in the way", 100 + i);
            let f = read(&place).unwrap();
            assert!(f.waiting());
            assert_eq!((f.failures, f.pid), (i + 1, 100 + i));
            waits.push(f.retry_at - f.time);
        }
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 600, 600]);
        let line = read(&place).unwrap().describe();
        assert!(
            line.contains("8 times in a row") && line.contains("in the way"),
            "{line}"
        );
        clear(&place);
        assert_eq!(read(&place), None);
        clear(&place);
    }
}
