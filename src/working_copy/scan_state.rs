//! What a working copy keeps between its scans: the last scan's result
//! ([`LastScan`], what the watcher's changes are relative to), the capture
//! rules' fingerprint ([`RulesFingerprint`]: the git index and
//! `.git/info/exclude`, which the watcher does not see) with a digest of the
//! tracked paths, and the counts of its scans by why each was a full one
//! ([`ScanCounts`], [`FullScan`]). `copy.rs` holds them, `scan_tree.rs`
//! reads and updates them, `saved_scan.rs` saves them for the next process.

use std::sync::Arc;

use super::git;
use super::git_index::{identity, index_identity, FileIdentity};
use crate::store::{FlatTree, ObjectId};

/// What decides which files are captured besides the files themselves: the
/// git index (tracked files) and `.git/info/exclude`. Neither lives where
/// the watcher looks, so a change to either means a full scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RulesFingerprint(
    pub(super) Option<FileIdentity>,
    pub(super) Option<(u64, i128)>,
);

impl RulesFingerprint {
    /// Stats `.git/index` and `.git/info/exclude` (once per scan: the
    /// index's identity also keys the tracked paths).
    pub(super) fn of(root: &std::path::Path) -> RulesFingerprint {
        let dir = git::git_dir(root);
        let index = dir.as_deref().and_then(index_identity);
        let exclude = dir
            .as_ref()
            .and_then(|d| std::fs::metadata(d.join("info/exclude")).ok())
            .map(|m| {
                let (size, mtime, _) = identity(&m);
                (size, mtime)
            });
        RulesFingerprint(index, exclude)
    }

    /// The identity of `.git/index`, when there is one.
    pub(super) fn index(&self) -> Option<FileIdentity> {
        self.0
    }
}

/// A digest of the tracked paths (the order `git::tracked_of` gives).
pub(super) fn tracked_digest(paths: &[String]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in paths {
        h.update(p.as_bytes());
        h.update(b"\0");
    }
    h.digest()
}

/// Why a scan looked at the whole project (docs/architecture.md rule 12):
/// whatever the watcher cannot vouch for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FullScan {
    /// No scan before it (a start, or gc forgot what was known).
    FirstScan,
    /// Nothing watches the project (one process per event, or the
    /// watcher is off).
    NoWatcher,
    /// The system's limit of watches is reached (on Linux
    /// `fs.inotify.max_user_watches`): every scan is a full one.
    WatchLimit,
    /// The watcher lost events (its queue overflowed, an error, a barrier
    /// that did not come through, the root moved).
    WatcherLostTrack,
    /// `.gitignore`, `.rewindignore`, `.git/info/exclude` or the git index
    /// changed what is captured.
    RulesChanged,
}

impl FullScan {
    pub fn as_str(self) -> &'static str {
        match self {
            FullScan::FirstScan => "first scan",
            FullScan::NoWatcher => "no watcher",
            FullScan::WatchLimit => "watch limit reached",
            FullScan::WatcherLostTrack => "watcher lost track",
            FullScan::RulesChanged => "capture rules changed",
        }
    }
}

/// What a working copy's scans were, since it was made.
#[derive(Clone, Debug, Default)]
pub struct ScanCounts {
    pub scans: u64,
    /// Full scans, by why.
    pub full: std::collections::BTreeMap<FullScan, u64>,
    /// The watch limit was reached: the watcher was given up.
    pub watch_limit_reached: bool,
}

impl ScanCounts {
    /// Full scans of every reason together.
    pub fn full_total(&self) -> u64 {
        self.full.values().sum()
    }
}

/// The last scan's result: what the watcher's changes are relative to.
#[derive(Clone)]
pub(crate) struct LastScan {
    pub tree: ObjectId,
    pub files: FlatTree,
    pub untracked: Arc<Vec<super::Uncaptured>>,
}
