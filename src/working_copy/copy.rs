//! [`WorkingCopy`]: the project directory as one open session sees it — its
//! root and capture options, the stat cache (with its file and save policy),
//! the git index's tracked paths, the last scan, the watcher and the staged
//! set. Scanning it into a tree is in `scan_tree.rs`; writing a tree's files
//! back (`checkout`) is here. The engine decides *what* to capture or
//! restore; this type only knows the disk (docs/architecture.md "Layers").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::checkout::{self, CheckoutError};
pub(crate) use super::git_index::FileIdentity;
use super::git_index::GitIndex;
use super::scan_state::{LastScan, RulesFingerprint, ScanCounts};
use super::{git, ScanOptions, StatCache};
use crate::durability;
use crate::repo_path::RepoPath;
use crate::store::{FlatTree, Store, TreeEntry};

const STAT_CACHE_SAVE_EVERY: Duration = Duration::from_secs(30);

/// A scan that refreshed this many stat-cache entries saves the cache at
/// once (see [`WorkingCopy::after_scan_save`]).
const STAT_CACHE_SAVE_AFTER_UPDATES: usize = 1000;

pub struct WorkingCopy {
    pub(super) root: PathBuf,
    pub(super) options: ScanOptions,
    /// Sync restored files before a restore's journal is removed.
    pub(super) fsync: bool,
    pub(super) stat_cache: StatCache,
    pub(super) stat_cache_path: PathBuf,
    stat_cache_saved: Instant,
    pub(super) staged: BTreeSet<String>,
    /// The user's git index, parsed once while `.git/index` is unchanged
    /// (size, mtime, inode): its entries, and the paths it tracks derived
    /// from them, for both the scans and the git state.
    git_index: GitIndex,
    /// What the git state checkpoints record keeps of the index beyond its
    /// entries: the stored listing, the dirty answer (`git_state.rs`).
    git_state: Option<super::git_state::IndexCache>,
    /// The tree of the last scan and its files: what the watcher's changes
    /// are relative to.
    pub(super) last_scan: Option<LastScan>,
    /// The capture rules outside the tree as of the last full scan.
    pub(super) rules_seen: Option<RulesFingerprint>,
    /// The tracked paths as of that scan (a digest): a `.git/index`
    /// rewritten with the same ones changes nothing a scan captures.
    pub(super) tracked_seen: u64,
    /// Tells a scan which paths changed, so it can skip the walk.
    pub(super) watcher: Option<super::watch::Watcher>,
    /// How the scans went (the hook server's status shows them).
    pub(super) counts: ScanCounts,
    /// Without a watcher: the last scan as the next process will find it
    /// (`saved_scan.rs`).
    pub(super) saved: SavedState,
}

/// Where a working copy keeps what outlives its process (docs/format.md
/// "Stat cache", "Saved scan", "Saved flat tree").
pub struct CachePaths {
    pub stat: PathBuf,
    pub scan: PathBuf,
    pub flat: PathBuf,
}

/// What a working copy without a watcher knows of the saved scan.
#[derive(Default)]
pub(super) struct SavedState {
    pub(super) path: PathBuf,
    /// Where the saved scan's tree's files are kept.
    pub(super) flat: PathBuf,
    /// The saved scan was looked for (once per process).
    pub(super) loaded: bool,
    /// Every walked directory's stat, while the last scan is one the next
    /// process may trust.
    pub(super) dirs: Option<super::stat_changes::DirStats>,
    /// When the full scan the last scan descends from began.
    pub(super) full_scan_ns: i128,
    /// Changed since loaded or saved.
    pub(super) dirty: bool,
}

/// What a checkout writes and deletes, and what it was planned against.
pub struct CheckoutPlan<'a> {
    pub writes: &'a [(RepoPath, TreeEntry)],
    pub deletes: &'a [RepoPath],
    /// The state the plan was made from: a path is only touched while it
    /// still holds this (docs/architecture.md rule 11).
    pub before: &'a FlatTree,
}

/// What a checkout did; `failed` in the order the paths were tried.
#[derive(Default)]
pub struct CheckoutOutcome {
    /// Written, sorted.
    pub restored: Vec<RepoPath>,
    /// Deleted, sorted.
    pub deleted: Vec<RepoPath>,
    pub failed: Vec<(RepoPath, CheckoutError)>,
}

impl Drop for WorkingCopy {
    fn drop(&mut self) {
        self.save_caches();
    }
}

impl WorkingCopy {
    /// The project at `root`, its stat cache loaded from `cache.stat`,
    /// `staged` as the session last recorded it. No watcher until
    /// [`WorkingCopy::watch`].
    pub fn new(
        root: PathBuf,
        options: ScanOptions,
        fsync: bool,
        cache: CachePaths,
        staged: BTreeSet<String>,
    ) -> WorkingCopy {
        let CachePaths {
            stat: stat_cache_path,
            scan,
            flat,
        } = cache;
        WorkingCopy {
            root,
            options,
            fsync,
            stat_cache: StatCache::load(&stat_cache_path),
            stat_cache_path,
            stat_cache_saved: Instant::now(),
            staged,
            git_index: GitIndex::default(),
            git_state: None,
            last_scan: None,
            rules_seen: None,
            tracked_seen: 0,
            watcher: None,
            counts: ScanCounts::default(),
            saved: SavedState {
                path: scan,
                flat,
                ..SavedState::default()
            },
        }
    }

    /// Watch the project (the `notify` crate: inotify, FSEvents,
    /// ReadDirectoryChangesW) so scans look only at what changed; armed by
    /// the next full scan. Without it every scan walks the project.
    pub fn watch(&mut self) {
        match super::watch::Watcher::new(&self.root) {
            Ok(w) => self.watcher = Some(w),
            Err(err) => {
                tracing::warn!(%err, "no file watcher; every snapshot scans the project")
            }
        }
    }

    /// For a process about to exit whose store is gone: stop watching (the
    /// watcher's barrier directory goes) and save nothing — saving the
    /// caches would make the store's directories again.
    pub fn discard(mut self) {
        self.watcher = None;
        std::mem::forget(self);
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How the scans went since this working copy was made.
    pub fn scan_counts(&self) -> &ScanCounts {
        &self.counts
    }

    /// Directories the watcher watches (`None`: no watcher).
    pub fn watched_dirs(&self) -> Option<usize> {
        self.watcher.as_ref().map(|w| w.watched_dirs())
    }

    pub fn options(&self) -> &ScanOptions {
        &self.options
    }

    /// Paths captured even where ignore rules would leave them out.
    pub fn staged(&self) -> &BTreeSet<String> {
        &self.staged
    }

    /// Add to the staged set (paths already validated).
    pub fn stage(&mut self, paths: impl IntoIterator<Item = RepoPath>) {
        self.staged
            .extend(paths.into_iter().map(RepoPath::into_string));
    }

    /// Replace the staged set with a session's (a warm working copy handed
    /// to the next session it serves).
    pub fn set_staged(&mut self, staged: BTreeSet<String>) {
        self.staged = staged;
    }

    /// Scans between periodic saves are kept for the next start: the stat
    /// cache, then the saved scan that goes with it.
    pub(crate) fn save_caches(&mut self) {
        self.save_stat_cache();
        self.save_scan();
    }

    pub(crate) fn save_stat_cache(&mut self) {
        if let Err(err) = self.stat_cache.save(&self.stat_cache_path) {
            // Only an optimisation: the next scan re-hashes what it must.
            tracing::warn!(%err, path = %self.stat_cache_path.display(), "could not save the stat cache");
        }
        self.stat_cache_saved = Instant::now();
    }

    /// The cache file serves the next start; rewriting it (megabytes on a
    /// large tree) for every small snapshot would cost more than the
    /// snapshot. Saved after a scan that hashed many files (a cold or
    /// resumed start: losing those would mean reading the project again),
    /// at most every 30 s otherwise, and when the engine closes — a crash
    /// in between costs re-hashing the few files changed since.
    pub(super) fn after_scan_save(&mut self, cache_updates: usize) {
        if cache_updates >= STAT_CACHE_SAVE_AFTER_UPDATES
            || self.stat_cache_saved.elapsed() >= STAT_CACHE_SAVE_EVERY
        {
            self.save_stat_cache();
        }
    }

    /// The paths the git index tracks ([`git::tracked_of`]), for the index
    /// file's identity `index` (stat'ed once per scan, in
    /// [`RulesFingerprint`]); read and parsed only when it changed, and
    /// that parse also serves [`WorkingCopy::git_state`].
    pub(super) fn tracked_paths(&mut self, index: Option<FileIdentity>) -> Arc<Vec<String>> {
        self.git_index.tracked(&self.root, index)
    }

    /// How many times `.git/index` was read and parsed.
    #[cfg(test)]
    pub(crate) fn git_index_reads(&self) -> u64 {
        self.git_index.reads()
    }

    /// The directory above `path` that is not a real directory (a symlink
    /// or a file), when there is one: nothing is read or written below it
    /// (docs/architecture.md rule 7).
    pub fn blocking_parent(&self, path: &str) -> Option<String> {
        checkout::blocking_parent(&self.root, path)
    }

    /// Whether something other than a directory stands at `path`, or a
    /// directory holding a file `captured` does not hold: what a restore
    /// must not overwrite (docs/architecture.md rule 2). `None` when
    /// nothing of the kind is there.
    pub fn uncaptured_at(&self, path: &str, captured: &FlatTree) -> Option<&'static str> {
        let abs = crate::repo_path::join(&self.root, path);
        let m = std::fs::symlink_metadata(&abs).ok()?;
        if !m.is_dir() {
            return Some("uncaptured file");
        }
        checkout::files_below(&self.root, path)
            .iter()
            .any(|f| !captured.contains_key(f))
            .then_some("directory with uncaptured files")
    }

    /// Remove the temp files a restore cut short by a crash left in the
    /// directories of `paths` (they are ours, never the user's); how many.
    pub fn remove_temp_files<'a>(&self, paths: impl IntoIterator<Item = &'a str>) -> usize {
        checkout::remove_temp_files(&self.root, paths)
    }

    /// The project's git branch and HEAD commit, when it is a git
    /// repository (read, never written: rule 6).
    pub fn git_head(&self) -> Option<(Option<String>, Option<String>)> {
        git::head_info(&self.root)
    }

    /// What a checkpoint of the work tree `tree` records of git
    /// (docs/format.md "Git state"): branch and HEAD, the index's listing
    /// (stored in `store` when the index changed), and whether the work tree
    /// differs from the index. `files` gives `tree`'s files when they are
    /// needed; `changed`, when `tree` is a tree this working copy answered
    /// for before changed at these paths, lets only those be looked at.
    /// `None` outside a git repository. Reads git's files only (rule 6).
    pub fn git_state(
        &mut self,
        store: &Store,
        tree: crate::store::ObjectId,
        files: &mut dyn FnMut() -> Option<FlatTree>,
        changed: Option<super::git_state::ChangedPaths<'_>>,
    ) -> Option<super::GitState> {
        let (branch, head) = git::head_info(&self.root)?;
        let mut state = super::GitState {
            branch,
            head,
            dirty: None,
            index: None,
        };
        let Some(dir) = git::git_dir(&self.root) else {
            return Some(state);
        };
        self.git_state =
            super::git_state::IndexCache::refresh(self.git_state.take(), &dir, &mut self.git_index);
        if let Some(cache) = &mut self.git_state {
            match cache.listing(store) {
                Ok(id) => state.index = Some(id),
                Err(err) => tracing::warn!(%err, "could not store the git index's listing"),
            }
            state.dirty = cache.dirty(store, &self.stat_cache, tree, files, changed);
        }
        Some(state)
    }

    /// The user's git, run in the project (`None`: not a git repository).
    /// Only `--git` writes through it (docs/architecture.md rule 6).
    pub fn git_repo(&self) -> Option<super::GitRepo> {
        git::git_dir(&self.root).map(|dir| super::GitRepo::new(&self.root, &dir))
    }

    /// What git is in the middle of (a merge, a rebase, a cherry-pick, a
    /// revert), when it is.
    pub fn git_in_progress(&self) -> Option<&'static str> {
        git::in_progress(&git::git_dir(&self.root)?)
    }

    /// The git index as it is now (`None`: no index that parses).
    pub fn git_index_now(&self) -> Option<super::git_state::IndexNow> {
        super::git_state::index_now(&self.root)
    }

    /// Does `path` hold exactly `expected` (`None`: nothing)? A stat-cache
    /// hit, else its content hashed (docs/architecture.md rule 11).
    pub fn holds(&self, path: &str, expected: Option<&TreeEntry>) -> bool {
        checkout::matches_on_disk(&self.root, path, expected, self.stat_cache.get(path))
    }

    /// Touch the files of `plan`. Deletions first, deepest first (so a file
    /// can replace a directory and vice versa), then writes through temp
    /// files. A path is only touched while it still holds what
    /// `plan.before` says; one that changed since fails with
    /// [`CheckoutError::Changed`] and is left alone (docs/architecture.md
    /// rule 11). Failures do not stop the rest. `progress(done, total)` is
    /// called after each path. With `fsync`, everything is durable on
    /// return (the caller removes its journal next: rule 4).
    pub fn checkout(
        &self,
        store: &Store,
        plan: CheckoutPlan<'_>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> CheckoutOutcome {
        let CheckoutPlan {
            writes,
            deletes,
            before,
        } = plan;
        let total = (writes.len() + deletes.len()) as u64;
        let mut done = 0u64;
        let mut out = CheckoutOutcome::default();
        let deletes_all = deletes;
        // Deepest first, so directories empty out before their parents.
        let mut deletes: Vec<&RepoPath> = deletes.iter().collect();
        let depth = |p: &RepoPath| p.as_str().matches('/').count();
        deletes.sort_by(|a, b| depth(b).cmp(&depth(a)).then(b.cmp(a)));
        let unchanged = |path: &str| {
            if self.holds(path, before.get(path)) {
                Ok(())
            } else {
                Err(CheckoutError::Changed {
                    path: path.to_string(),
                })
            }
        };
        for path in deletes {
            let deleted = unchanged(path.as_str())
                .and_then(|()| checkout::delete_entry(&self.root, path.as_str()));
            match deleted {
                Ok(()) => {
                    checkout::remove_empty_parents(&self.root, path.as_str());
                    out.deleted.push(path.clone());
                }
                Err(e) => {
                    tracing::warn!(err = %e, "restore could not change a file");
                    out.failed.push((path.clone(), e))
                }
            }
            done += 1;
            progress(done, total);
        }
        for (path, entry) in writes {
            let written = unchanged(path.as_str())
                .and_then(|()| {
                    store.get(&entry.id).map_err(|e| CheckoutError::Io {
                        path: path.to_string(),
                        source: std::io::Error::other(e.to_string()),
                    })
                })
                .and_then(|content| {
                    // With a batch sync below, one syncfs covers every file.
                    let fsync_each = self.fsync && !durability::BATCH_SYNC;
                    checkout::write_entry(&self.root, path.as_str(), entry, &content, fsync_each)
                });
            match written {
                Ok(()) => out.restored.push(path.clone()),
                Err(e) => {
                    tracing::warn!(err = %e, "restore could not change a file");
                    out.failed.push((path.clone(), e))
                }
            }
            done += 1;
            progress(done, total);
        }
        // Contents, renames and unlinks must be durable before the caller
        // removes the journal, so a power loss cannot lose a restore the
        // journal no longer describes (until then, the next start rolls it
        // forward). One syncfs where there is one; else every directory.
        if self.fsync {
            if durability::BATCH_SYNC {
                if let Err(err) = durability::sync_filesystem(&self.root) {
                    tracing::warn!(%err, "could not sync the restored files");
                }
            } else {
                let mut dirs: BTreeSet<&str> = BTreeSet::new();
                for p in writes.iter().map(|(p, _)| p).chain(deletes_all.iter()) {
                    dirs.insert(p.as_str().rsplit_once('/').map(|(d, _)| d).unwrap_or(""));
                }
                for d in dirs {
                    if let Err(err) = durability::sync_dir(&crate::repo_path::join(&self.root, d)) {
                        tracing::warn!(%err, dir = d, "could not sync a restored directory");
                    }
                }
            }
        }
        out.deleted.sort();
        out.restored.sort();
        out
    }
}
