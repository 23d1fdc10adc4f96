//! Files a checkpoint left out, as a person reads them: why each one was
//! not captured and how to have it captured (docs/architecture.md rules 13
//! and 14). `rewind status`, `rewind checkpoint` and the page say the same.

use rewind::engine::api::{Uncaptured, UncapturedReason};
use serde_json::{json, Value};

/// Why a path was left out and what would include it.
pub fn advice(reason: UncapturedReason) -> &'static str {
    match reason {
        UncapturedReason::TooLarge => {
            "over the size cap (maxFileSize, 16 MiB by default): copy it elsewhere or commit it to git; a sidecar's host can raise the cap in `initialize`"
        }
        UncapturedReason::Special => "a FIFO, socket or device: never captured",
        UncapturedReason::Unreadable => {
            "rewind could not read it (permissions, an I/O error, a name that is not UTF-8): make it readable (chmod u+r) and the next checkpoint takes it"
        }
        UncapturedReason::PathTooLong => "its path is longer than the system allows: shorten it",
        UncapturedReason::Unstable => {
            "it kept changing while it was read: the next checkpoint tries again"
        }
        UncapturedReason::IgnoredOverCap => {
            "gitignored, and its directory holds more small ignored files than are captured (32): stop ignoring it, or stage it (`stage_files`)"
        }
    }
}

/// One line per path: `path (reason): advice`.
pub fn lines(left_out: &[Uncaptured]) -> Vec<String> {
    left_out
        .iter()
        .map(|u| {
            format!(
                "{} ({}): {}",
                rewind::printable::printable(u.path.as_str()),
                u.reason.as_str(),
                advice(u.reason)
            )
        })
        .collect()
}

/// The page's rows: `{path, reason, advice}`.
pub fn rows(left_out: &[Uncaptured]) -> Vec<Value> {
    left_out
        .iter()
        .map(|u| json!({ "path": u.path.as_str(), "reason": u.reason.as_str(), "advice": advice(u.reason) }))
        .collect()
}
