//! The last scan of a process without a watcher, kept on disk for the next
//! one (docs/architecture.md "Hooks without a server: the saved scan"): the
//! tree it made, what it saw but could not capture, the capture rules it
//! ran under and every directory it walked with its stat. A one-shot hook
//! then stats those directories and the tree's files — as `git status`
//! does with its index and untracked cache — and scans only what moved
//! (`stat_changes.rs`), instead of walking and matching ignore rules in
//! every directory.
//!
//! It is a cache: a missing, foreign or unreadable file only means a full
//! scan. It is trusted only beside the stat cache it was saved with (another
//! process's save of that cache may vouch for content this scan's tree does
//! not hold) and for [`FULL_SCAN_EVERY_NS`] after the full scan it descends
//! from.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::capture::{now_ns, ScanOutput, Uncaptured};
use super::copy::WorkingCopy;
use super::scan::threads;
use super::scan_state::{LastScan, RulesFingerprint};
use super::stat_cache::{CacheFileId, FileStat};
use super::stat_changes::{since_saved, trusted, DirStats};
use super::watch::Changes;
use super::ScanOptions;
use crate::repo_path::RepoPath;
use crate::store::{FlatCache, ObjectId, Store, UncapturedReason};

/// How long a chain of saved scans stands in for a full walk. What a stat
/// cannot show — a gitignored file growing or shrinking across
/// `ignoredMaxSize` in a directory whose names did not change, a
/// `.gitignore` that is itself excluded and never captured — is picked up
/// by the next full scan, at most this long after the last.
pub const FULL_SCAN_EVERY_NS: i128 = 10 * 60 * 1_000_000_000;

/// Version 2: its tree records files' modes (docs/format.md "Trees"). A
/// version 1 scan's tree does not, and the stat cache would vouch for its
/// files as they are, so it means one full scan.
const VERSION: u32 = 2;

/// More changed paths than this are scanned by a full walk: a scoped walk
/// checks each name against every scope path, and a branch switch can
/// change thousands of files.
const SCOPED_AT_MOST: usize = 512;

/// What one process's scans left for the next.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct SavedScan {
    /// When the full scan this one descends from began (ns since the epoch).
    pub full_scan_ns: i128,
    /// [`options_digest`] of the options it captured with.
    pub options: u64,
    /// The stat cache it was saved with.
    pub stat_cache: CacheFileId,
    pub rules: RulesFingerprint,
    /// The tracked paths' digest as of the full scan.
    pub tracked: u64,
    pub tree: ObjectId,
    pub untracked: Vec<Uncaptured>,
    /// Every directory the scans walked (the root is ""), keyed by path.
    pub dirs: DirStats,
}

/// The options as one number: another configuration means a full scan.
pub(super) fn options_digest(options: &ScanOptions) -> u64 {
    xxhash_rust::xxh3::xxh3_64(format!("{options:?}").as_bytes())
}

#[derive(Serialize, Deserialize)]
struct Wire {
    version: u32,
    full_scan_ns: i64,
    options: u64,
    stat_cache: (u64, u64, i64),
    index: Option<(u64, i64, u64)>,
    exclude: Option<(u64, i64)>,
    tracked: u64,
    tree: String,
    untracked: Vec<(String, String)>,
    dirs: Vec<(String, Option<WireStat>)>,
}

/// size, mtime, ctime, inode, mode.
type WireStat = (u64, i64, i64, u64, u32);

fn to_wire_stat(s: &FileStat) -> WireStat {
    (s.size, s.mtime_ns as i64, s.ctime_ns as i64, s.ino, s.mode)
}

fn from_wire_stat(s: WireStat) -> FileStat {
    FileStat {
        size: s.0,
        mtime_ns: s.1 as i128,
        ctime_ns: s.2 as i128,
        ino: s.3,
        mode: s.4,
    }
}

impl SavedScan {
    fn to_wire(&self) -> Wire {
        let RulesFingerprint(index, exclude) = &self.rules;
        Wire {
            version: VERSION,
            full_scan_ns: self.full_scan_ns as i64,
            options: self.options,
            stat_cache: (
                self.stat_cache.0,
                self.stat_cache.1,
                self.stat_cache.2 as i64,
            ),
            index: index.map(|(s, m, i)| (s, m as i64, i)),
            exclude: exclude.map(|(s, m)| (s, m as i64)),
            tracked: self.tracked,
            tree: self.tree.to_hex(),
            untracked: self
                .untracked
                .iter()
                .map(|u| (u.path.to_string(), u.reason.as_str().to_string()))
                .collect(),
            dirs: self
                .dirs
                .iter()
                .map(|(d, s)| (d.clone(), s.as_ref().map(to_wire_stat)))
                .collect(),
        }
    }

    fn from_wire(w: Wire) -> Option<SavedScan> {
        if w.version != VERSION {
            return None;
        }
        let untracked = w
            .untracked
            .into_iter()
            .map(|(p, r)| {
                Some(Uncaptured {
                    path: RepoPath::from_walk(p),
                    reason: UncapturedReason::parse(&r)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SavedScan {
            full_scan_ns: w.full_scan_ns as i128,
            options: w.options,
            stat_cache: (w.stat_cache.0, w.stat_cache.1, w.stat_cache.2 as i128),
            rules: RulesFingerprint(
                w.index.map(|(s, m, i)| (s, m as i128, i)),
                w.exclude.map(|(s, m)| (s, m as i128)),
            ),
            tracked: w.tracked,
            tree: ObjectId::from_hex(&w.tree).ok()?,
            untracked,
            dirs: w
                .dirs
                .into_iter()
                .map(|(d, s)| (d, s.map(from_wire_stat)))
                .collect(),
        })
    }

    /// The scan saved at `path`; `None` when there is none or it does not
    /// read (then the next scan walks the project).
    pub(super) fn load(path: &Path) -> Option<SavedScan> {
        let bytes = std::fs::read(path).ok()?;
        match serde_json::from_slice::<Wire>(&bytes) {
            Ok(w) => SavedScan::from_wire(w),
            Err(err) => {
                tracing::debug!(%err, path = %path.display(), "ignoring an unreadable saved scan");
                None
            }
        }
    }

    /// Save atomically; not synced (a lost or torn one costs a full scan).
    pub(super) fn save(&self, path: &Path) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(&self.to_wire()).map_err(std::io::Error::other)?;
        let temp = crate::store::Layout::stat_cache_temp(path);
        crate::durability::atomic_write(path, &temp, false, |f| {
            std::io::Write::write_all(f, &bytes)
        })
    }

    /// Forget the saved scan at `path` (one that no longer holds).
    pub(super) fn remove(path: &Path) {
        if let Err(err) = std::fs::remove_file(path) {
            if err.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(%err, path = %path.display(), "could not remove a saved scan");
            }
        }
    }
}

impl WorkingCopy {
    /// In a process without a watcher, once: take up the saved scan as the
    /// last scan, when it still holds (same options, the stat cache it was
    /// saved with, its tree still readable, its full scan recent enough).
    pub(super) fn take_up_saved_scan(&mut self, store: &Store, trees: &mut FlatCache) {
        if self.watcher.is_some() || self.saved.loaded || self.last_scan.is_some() {
            return;
        }
        self.saved.loaded = true;
        let Some(saved) = SavedScan::load(&self.saved.path) else {
            return;
        };
        let why_not = if saved.options != options_digest(&self.options) {
            Some("other capture options")
        } else if Some(saved.stat_cache) != self.stat_cache.file() {
            Some("another stat cache")
        } else if now_ns() - saved.full_scan_ns >= FULL_SCAN_EVERY_NS {
            Some("its full scan is old")
        } else {
            None
        };
        if let Some(why) = why_not {
            tracing::debug!(why, "not using the saved scan");
            return;
        }
        let files = match trees.files(store, Some(saved.tree)) {
            Ok(f) => f,
            Err(err) => {
                tracing::debug!(%err, "the saved scan's tree does not read");
                return;
            }
        };
        self.last_scan = Some(LastScan {
            tree: saved.tree,
            files,
            untracked: Arc::new(saved.untracked),
        });
        self.rules_seen = Some(saved.rules);
        self.tracked_seen = saved.tracked;
        self.saved.dirs = Some(saved.dirs);
        self.saved.full_scan_ns = saved.full_scan_ns;
    }

    /// What changed since the last scan by stat, for a process without a
    /// watcher; `None` when no saved scan vouches for the last one.
    pub(super) fn saved_changes(&mut self) -> Option<Changes> {
        let (dirs, last) = (self.saved.dirs.as_mut()?, self.last_scan.as_ref()?);
        match since_saved(
            &self.root,
            &last.files,
            &last.untracked,
            dirs,
            &self.stat_cache,
            threads(),
        ) {
            Ok(changes) => {
                self.saved.dirty |= !changes.relisted.is_empty();
                dirs.extend(changes.relisted);
                if changes.paths.len() > SCOPED_AT_MOST {
                    tracing::debug!(paths = changes.paths.len(), "too many changes to scope");
                    return Some(Changes::Unknown);
                }
                Some(Changes::Paths(changes.paths))
            }
            Err(why) => {
                tracing::debug!(?why, "the saved scan cannot say what changed");
                Some(Changes::Unknown)
            }
        }
    }

    /// After a scan without a watcher: the directories it walked, with
    /// their stats, join the saved scan. A full scan replaces them all
    /// (`root` is the root's stat from before it); a scoped scan replaces
    /// those below its scope, where it walked everything.
    pub(super) fn note_scan_for_saving(
        &mut self,
        out: &ScanOutput,
        scope: Option<&[RepoPath]>,
        root: Option<FileStat>,
    ) {
        if self.watcher.is_some() {
            return;
        }
        let start = out.scan_start_ns;
        let walked = out
            .dir_stats
            .iter()
            .map(|(d, s)| (d.clone(), trusted(*s, start)));
        match scope {
            None => {
                let Some(root) = root else {
                    self.saved.dirs = None;
                    return;
                };
                let mut dirs: DirStats = walked.collect();
                dirs.insert(String::new(), trusted(root, start));
                self.saved.dirs = Some(dirs);
                self.saved.full_scan_ns = start;
            }
            Some(scope) => {
                let Some(dirs) = self.saved.dirs.as_mut() else {
                    return;
                };
                let under = |d: &str| scope.iter().any(|s| s.is_prefix_of(d));
                dirs.retain(|d, _| !under(d));
                // Only below the scope: the walk listed the directories
                // above it too, but looked only for the scope's names there.
                dirs.extend(walked.filter(|(d, _)| under(d)));
            }
        }
        self.saved.dirty = true;
    }

    /// Keep the last scan for the next process (on close), when the stat
    /// cache on disk is the one it goes with.
    pub(super) fn save_scan(&mut self) {
        if self.watcher.is_some() || !self.saved.dirty {
            return;
        }
        let (Some(dirs), Some(last), Some(rules)) = (
            self.saved.dirs.as_ref(),
            self.last_scan.as_ref(),
            self.rules_seen.as_ref(),
        ) else {
            return;
        };
        let cache = match self.stat_cache.file() {
            Some(c)
                if !self.stat_cache.is_dirty()
                    && self.stat_cache.file_is_current(&self.stat_cache_path) =>
            {
                c
            }
            // Not saved, or another process saved its own since: a saved
            // scan beside it would be trusted with facts it does not hold.
            _ => {
                SavedScan::remove(&self.saved.path);
                return;
            }
        };
        let saved = SavedScan {
            full_scan_ns: self.saved.full_scan_ns,
            options: options_digest(&self.options),
            stat_cache: cache,
            rules: rules.clone(),
            tracked: self.tracked_seen,
            tree: last.tree,
            untracked: last.untracked.to_vec(),
            dirs: dirs.clone(),
        };
        // Its tree's files, unless the file already holds them.
        if crate::store::saved_flat::tree_at(&self.saved.flat) != Some(last.tree) {
            if let Err(err) =
                crate::store::saved_flat::save(&self.saved.flat, &last.tree, &last.files)
            {
                tracing::warn!(%err, path = %self.saved.flat.display(), "could not save the last scan's files");
            }
        }
        match saved.save(&self.saved.path) {
            Ok(()) => self.saved.dirty = false,
            Err(err) => {
                tracing::warn!(%err, path = %self.saved.path.display(), "could not save the last scan")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::stat_changes::dir_stat as stat;
    use super::*;

    fn sample() -> SavedScan {
        SavedScan {
            full_scan_ns: 1_700_000_000_000_000_000,
            options: options_digest(&ScanOptions::default()),
            stat_cache: (1, 2, 3),
            rules: RulesFingerprint(Some((10, 20, 30)), None),
            tracked: 99,
            tree: ObjectId::of(b"tree"),
            untracked: vec![Uncaptured {
                path: RepoPath::from_walk("big.bin".into()),
                reason: UncapturedReason::TooLarge,
            }],
            dirs: [("".to_string(), Some(stat(5))), ("src".to_string(), None)]
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn a_saved_scan_reads_back_as_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("scan-x.json");
        let saved = sample();
        saved.save(&path).expect("save");
        assert_eq!(SavedScan::load(&path), Some(saved));
        SavedScan::remove(&path);
        assert_eq!(SavedScan::load(&path), None);
    }

    #[test]
    fn a_torn_or_foreign_file_is_no_saved_scan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("scan-x.json");
        sample().save(&path).expect("save");
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..bytes.len() / 2]).expect("write");
        assert_eq!(SavedScan::load(&path), None);
        let other = String::from_utf8(bytes)
            .expect("utf-8")
            .replace("\"version\":2", "\"version\":1");
        std::fs::write(&path, other).expect("write");
        assert_eq!(SavedScan::load(&path), None);
    }
}
