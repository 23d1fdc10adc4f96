//! Turning the working directory into a tree: the full scan, the scoped
//! scan of paths a host announced, and — with the watcher — the scoped scan
//! of only the paths that changed since the last scan (or none at all).
//! The steps are docs/architecture.md "A snapshot", 1–4.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

use super::copy::{FileIdentity, WorkingCopy};
use super::options::is_rules_file;
use super::scan_state::{tracked_digest, FullScan, LastScan, RulesFingerprint};
use super::{scan, ScanError, ScanOutput, ScanRequest};
use crate::repo_path::RepoPath;
use crate::store::{
    build_tree, entries_under, FlatCache, FlatTree, ObjectId, Store, StoreError, TreeEntry,
    WriterGuard,
};

/// A scan turned into a tree.
pub struct WorkingState {
    pub tree: ObjectId,
    pub scan: ScanOutput,
    /// How long the scan took, its tree built and written.
    pub duration: std::time::Duration,
    /// Holds gc off from the scan until the entry recording `tree` is
    /// appended (or the state is dropped unrecorded): until then the only
    /// thing keeping the tree's older objects alive is this process
    /// (docs/architecture.md rule 10).
    pub gc_guard: Option<WriterGuard>,
}

/// Why a scan produced no tree.
#[derive(Debug, thiserror::Error)]
pub enum WorkingCopyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Scan(#[from] ScanError),
}

/// What a scan needs from the rest of the session.
pub struct ScanContext<'a> {
    pub store: &'a Store,
    /// Flattened trees: the scan derives its tree from one and remembers
    /// the result.
    pub trees: &'a mut FlatCache,
    /// The recorded state's tree, which a scan derives from.
    pub recorded: Option<ObjectId>,
    /// `(done, total)` of a long scan, at most every 100 ms.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
}

/// What turns `old` into `new` (path → new entry, `None` for a deletion), by
/// one merge of the two sorted maps.
fn flat_changes(
    old: &FlatTree,
    new: &BTreeMap<String, TreeEntry>,
) -> BTreeMap<String, Option<TreeEntry>> {
    use std::cmp::Ordering;
    let mut changes = BTreeMap::new();
    let mut olds = old.iter().peekable();
    let mut news = new.iter().peekable();
    loop {
        match (olds.peek(), news.peek()) {
            (None, None) => break,
            (Some((op, _)), Some((np, _))) if op.as_str() == np.as_str() => {
                let (Some((p, o)), Some((_, n))) = (olds.next(), news.next()) else {
                    break;
                };
                if o != n {
                    changes.insert(p.clone(), Some(*n));
                }
            }
            (Some((op, _)), Some((np, _))) if op.as_str().cmp(np.as_str()) == Ordering::Less => {
                if let Some((p, _)) = olds.next() {
                    changes.insert(p.clone(), None);
                }
            }
            (Some(_), None) => {
                if let Some((p, _)) = olds.next() {
                    changes.insert(p.clone(), None);
                }
            }
            _ => {
                if let Some((p, n)) = news.next() {
                    changes.insert(p.clone(), Some(*n));
                }
            }
        }
    }
    changes
}

/// Each scope path, or its highest ancestor that `files` records as
/// uncaptured.
fn widen_to_uncaptured(files: &FlatTree, scope: &[RepoPath]) -> Vec<RepoPath> {
    let mut out: Vec<RepoPath> = scope
        .iter()
        .map(|s| {
            let path = s.as_str();
            crate::repo_path::ancestors(path)
                .chain(std::iter::once(path))
                .find(|p| files.get(*p).is_some_and(|e| !e.has_object()))
                .map_or_else(|| s.clone(), |p| RepoPath::from_walk(p.to_string()))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

impl WorkingCopy {
    /// gc deleted objects since this working copy last checked what it
    /// trusts (or the stat cache was never checked against this store):
    /// forget every "exists" fact — the store's, the stat cache's entries
    /// whose object is gone, the last scan's tree and the flattened trees —
    /// so the next scan hashes and stores again what gc took
    /// (docs/architecture.md rule 10). Called with the writer guard held.
    fn revalidate_after_gc(
        &mut self,
        store: &Store,
        trees: &mut FlatCache,
        generation: u64,
    ) -> Result<(), WorkingCopyError> {
        store.refresh_after_gc(generation)?;
        let dropped = self
            .stat_cache
            .revalidate(generation, |id| store.contains_now(id));
        if dropped > 0 {
            tracing::info!(
                dropped,
                generation,
                "stat cache entries whose objects gc removed"
            );
        }
        self.last_scan = None;
        // A saved scan may name objects gc took: not taken up after this.
        self.saved.dirs = None;
        self.saved.loaded = true;
        trees.clear();
        if let Some(w) = self.watcher.as_mut() {
            w.invalidate();
        }
        Ok(())
    }

    /// Whether `rules` differ from those of the last full scan only by a
    /// `.git/index` rewritten with the same tracked paths (`git status`,
    /// `git add` of a tracked file, a commit: they rewrite it often): then
    /// what is captured did not change, and no full scan is needed.
    fn only_the_index_was_rewritten(&mut self, rules: &RulesFingerprint) -> bool {
        let Some(seen) = &self.rules_seen else {
            return false;
        };
        if seen.1 != rules.1 {
            return false;
        }
        let tracked = self.tracked_paths(rules.index());
        if tracked_digest(&tracked) != self.tracked_seen {
            return false;
        }
        self.rules_seen = Some(rules.clone());
        true
    }

    /// The paths that may have changed since the last scan, when the
    /// watcher can say; else why everything must be scanned
    /// (docs/architecture.md rule 12).
    fn watched_changes(&mut self, rules: &RulesFingerprint) -> Result<BTreeSet<String>, FullScan> {
        let changes = match self.watcher.as_mut() {
            Some(w) => w.drain(),
            // No watcher: what the saved scan's stats say, if it holds.
            None => match self.saved_changes() {
                Some(changes) => changes,
                None => {
                    return Err(if self.counts.watch_limit_reached {
                        FullScan::WatchLimit
                    } else {
                        FullScan::NoWatcher
                    })
                }
            },
        };
        match &changes {
            super::watch::Changes::Paths(p) => {
                tracing::debug!(paths = p.len(), "watcher drained")
            }
            super::watch::Changes::Unknown => {
                tracing::debug!("watcher drained: lost track, full scan")
            }
        }
        if self.last_scan.is_none() {
            return Err(FullScan::FirstScan);
        }
        if self.rules_seen.as_ref() != Some(rules) && !self.only_the_index_was_rewritten(rules) {
            return Err(FullScan::RulesChanged);
        }
        match changes {
            super::watch::Changes::Unknown => Err(FullScan::WatcherLostTrack),
            super::watch::Changes::Paths(p) if p.iter().any(|x| is_rules_file(x)) => {
                Err(FullScan::RulesChanged)
            }
            super::watch::Changes::Paths(p) => Ok(p),
        }
    }

    /// The watcher's (or saved scan's) changed paths, the staged set and a
    /// host's scope, typed. A path that is not a [`RepoPath`] is not
    /// dropped (its change would go unseen): the scan is a full one.
    fn typed_scope(
        &self,
        changed: BTreeSet<String>,
        scope: Option<&[RepoPath]>,
    ) -> Result<Vec<RepoPath>, FullScan> {
        let mut typed = Vec::with_capacity(changed.len() + self.staged.len());
        for p in changed.iter().chain(self.staged.iter()) {
            match RepoPath::parse(p) {
                Ok(r) => typed.push(r),
                Err(err) => {
                    tracing::debug!(path = %p, %err, "a changed path that is no repository path: full scan");
                    return Err(FullScan::WatcherLostTrack);
                }
            }
        }
        typed.extend(scope.into_iter().flatten().cloned());
        typed.sort();
        typed.dedup();
        Ok(typed)
    }

    /// Scan the working directory into a stored tree. `scope` names the
    /// only paths a host says may have changed (the `paths` fast path:
    /// every other path comes from the recorded state). With the watcher,
    /// only what changed since the last scan is looked at. `prior` (the
    /// parent checkpoint's files) lets the scan reuse what it already
    /// knows. Updates the stat cache.
    pub fn scan(
        &mut self,
        ctx: ScanContext<'_>,
        scope: Option<&[RepoPath]>,
        prior: &FlatTree,
    ) -> Result<WorkingState, WorkingCopyError> {
        let started = Instant::now();
        let store = ctx.store;
        let gc_guard = store.writer_guard()?;
        if gc_guard.stale || self.stat_cache.generation() != Some(gc_guard.generation) {
            self.revalidate_after_gc(store, ctx.trees, gc_guard.generation)?;
        }
        // The root's stat before anything lists it, for the saved scan.
        let root_stat = match self.watcher {
            None => super::stat_changes::lstat(&self.root, ""),
            Some(_) => None,
        };
        self.take_up_saved_scan(store, ctx.trees);
        let rules = RulesFingerprint::of(&self.root);
        let watched = match (&self.watcher, scope) {
            // Without a watcher, a host's paths are the only ones looked at
            // (docs/protocol.md `snapshot`): statting every file would cost
            // the fast path what it saves.
            (None, Some(_)) => Err(FullScan::NoWatcher),
            _ => self.watched_changes(&rules),
        };
        self.counts.scans += 1;
        let watched = watched.and_then(|changed| self.typed_scope(changed, scope));
        let (base, scan_scope): (Option<LastScan>, Option<Vec<RepoPath>>) =
            match (watched, self.last_scan.clone()) {
                (Ok(paths), Some(last)) => {
                    if paths.is_empty() {
                        // Nothing changed since the last scan: no walk at all.
                        return Ok(WorkingState {
                            tree: last.tree,
                            scan: ScanOutput {
                                untracked: (*last.untracked).clone(),
                                ..Default::default()
                            },
                            duration: started.elapsed(),
                            gc_guard: Some(gc_guard),
                        });
                    }
                    (Some(last), Some(paths))
                }
                (why, _) => match scope {
                    Some(s) => {
                        let recorded = ctx.recorded;
                        let flat = ctx.trees.files(store, recorded)?;
                        let base = recorded.map(|tree| LastScan {
                            tree,
                            files: flat,
                            untracked: Arc::new(Vec::new()),
                        });
                        (base, Some(s.to_vec()))
                    }
                    None => {
                        let why = why.err().unwrap_or(FullScan::FirstScan);
                        *self.counts.full.entry(why).or_default() += 1;
                        (None, None)
                    }
                },
            };
        let result = self.scan_into_tree(
            ctx,
            rules.index(),
            base,
            scan_scope.as_deref(),
            prior,
            started,
        );
        if result.is_err() {
            // The watcher's events were consumed; without a recorded scan
            // they must not be trusted.
            if let Some(w) = self.watcher.as_mut() {
                w.invalidate();
            }
            self.saved.dirs = None;
        }
        let (mut state, dirs, files) = result?;
        self.note_scan_for_saving(&state.scan, scan_scope.as_deref(), root_stat);
        state.gc_guard = Some(gc_guard);
        // A scan that wrote a pack publishes it now, also when no snapshot
        // follows (a query of `@working`), so it never sits unpublished for
        // long (gc takes an old unpublished pack for a crashed writer's).
        store.sync_pending()?;
        // The scan's time includes that publication (a sync of the store
        // when it wrote a pack), or a breakdown of a snapshot would put the
        // sync nowhere.
        state.duration = started.elapsed();
        let untracked = Arc::new(state.scan.untracked.clone());
        let full = scan_scope.is_none();
        if let Some(w) = self.watcher.as_mut() {
            if full {
                // Every directory the walk went into, and the parents of
                // every captured file (tracked or staged ones inside
                // ignored directories included).
                let mut all: BTreeSet<&str> = dirs.iter().map(String::as_str).collect();
                for path in files.keys() {
                    let mut p = path.as_str();
                    while let Some((parent, _)) = p.rsplit_once('/') {
                        if !all.insert(parent) {
                            break;
                        }
                        p = parent;
                    }
                }
                w.arm(all, true);
            } else {
                w.arm(dirs.iter().map(String::as_str), false);
            }
            if w.is_exhausted() {
                self.counts.watch_limit_reached = true;
                tracing::warn!(
                    "the file watch limit is reached (on Linux fs.inotify.max_user_watches); \
                     this session scans the whole project on every snapshot"
                );
                self.watcher = None;
            }
        }
        if full {
            let tracked = self.tracked_paths(rules.index());
            self.tracked_seen = tracked_digest(&tracked);
            self.rules_seen = Some(rules);
        }
        self.last_scan = Some(LastScan {
            tree: state.tree,
            files,
            untracked,
        });
        Ok(state)
    }

    fn scan_into_tree(
        &mut self,
        ctx: ScanContext<'_>,
        index: Option<FileIdentity>,
        base: Option<LastScan>,
        scope: Option<&[RepoPath]>,
        prior: &FlatTree,
        started: Instant,
    ) -> Result<(WorkingState, Vec<String>, FlatTree), WorkingCopyError> {
        let ScanContext {
            store,
            trees,
            recorded,
            progress,
        } = ctx;
        // A scoped path below a directory the base recorded as uncaptured
        // (one that could not be listed) looks again at that whole
        // directory: the tree cannot hold a file below a leaf.
        let widened = match (&base, scope) {
            (Some(base), Some(scope)) => Some(widen_to_uncaptured(&base.files, scope)),
            _ => None,
        };
        let scope = widened.as_deref().or(scope);
        let tracked = self.tracked_paths(index);
        // A long scan (the baseline of a large project, a full scan without
        // the watcher) tells the host how far it got. The total is an
        // estimate — the files of the last scan, of the parent checkpoint or
        // of the git index — and never below what was already seen.
        let estimate = self
            .last_scan
            .as_ref()
            .map_or(0, |l| l.files.len())
            .max(prior.len())
            .max(tracked.len()) as u64;
        let report = move |done: u64| {
            if let Some(progress) = progress {
                progress(done, estimate.max(done));
            }
        };
        let mut out = scan(&ScanRequest {
            root: &self.root,
            options: &self.options,
            store,
            cache: &self.stat_cache,
            prior,
            staged: &self.staged,
            scope,
            tracked: &tracked,
            progress: Some(&report),
            listings: Some(self.stat_cache.dirs()),
            known: base.as_ref().map(|b| &b.files),
        })?;
        // Moved, not copied: on a cold scan these are every path of the
        // project.
        let cache_updates = out.cache_updates.len();
        for (path, cached) in std::mem::take(&mut out.cache_updates) {
            self.stat_cache.update(path, cached, out.scan_start_ns);
        }
        let (tree, files) = match (base, scope) {
            // A scoped scan over a known tree: only the scope's paths can
            // differ, so the work is proportional to them — looking up the
            // base's entries below each scope path by range, rewriting only
            // the directories on the changed paths, and deriving the new
            // file map from the base's without copying it.
            (Some(base), Some(scope)) => {
                let in_scope = |path: &str| scope.iter().any(|s| s.is_prefix_of(path));
                let mut changes = BTreeMap::new();
                for s in scope {
                    for (p, _) in entries_under(&base.files, s.as_str()) {
                        if !out.files.contains_key(p) {
                            changes.insert(p.clone(), None);
                        }
                    }
                }
                for (p, e) in &out.files {
                    if base.files.get(p) != Some(e) {
                        changes.insert(p.clone(), Some(*e));
                    }
                }
                // Uncaptured paths outside the scope are as the base saw them.
                let mut untracked: Vec<_> = base
                    .untracked
                    .iter()
                    .filter(|u| !in_scope(u.path.as_str()))
                    .cloned()
                    .collect();
                untracked.append(&mut out.untracked);
                untracked.sort();
                out.untracked = untracked;
                trees.derive(store, base.tree, base.files, &changes)?
            }
            _ => {
                // The common case of a full scan, nothing changed: the tree
                // we compared against is the answer, and no directory needs
                // encoding again.
                let reference = match self.last_scan.clone() {
                    Some(last) => Some((last.tree, last.files)),
                    None => match recorded {
                        Some(r) => trees.cached(&r).map(|f| (r, f)),
                        None => None,
                    },
                };
                if scope.is_none() && self.stat_cache.len() > out.files.len() {
                    // Forget deleted files so the cache does not grow.
                    self.stat_cache.retain(|p| out.files.contains_key(p));
                }
                if scope.is_none() {
                    // And deleted directories (the root is "").
                    let walked: HashSet<&str> = out.dirs.iter().map(String::as_str).collect();
                    self.stat_cache
                        .dirs()
                        .retain(|d| d.is_empty() || walked.contains(d));
                }
                match reference {
                    // Against a known tree, only what differs is rewritten:
                    // the directories on the changed paths, and the file
                    // map derived from the reference's.
                    Some((ref_tree, files)) => {
                        let changes = flat_changes(&files, &out.files);
                        trees.derive(store, ref_tree, files, &changes)?
                    }
                    None => {
                        let tree = build_tree(store, &out.files)?;
                        let files: FlatTree = std::mem::take(&mut out.files).into_iter().collect();
                        trees.remember(tree, files.clone());
                        (tree, files)
                    }
                }
            }
        };
        self.after_scan_save(cache_updates);
        let dirs = std::mem::take(&mut out.dirs);
        Ok((
            WorkingState {
                tree,
                scan: out,
                duration: started.elapsed(),
                gc_guard: None,
            },
            dirs,
            files,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::EntryKind;

    fn entry(b: &[u8]) -> TreeEntry {
        TreeEntry::new(EntryKind::File, ObjectId::of(b), b.len() as u64)
    }

    #[test]
    fn flat_changes_lists_additions_modifications_and_deletions() {
        let old: FlatTree = [("a", "1"), ("a/b", "1"), ("c", "1"), ("e", "1")]
            .iter()
            .map(|(p, c)| (p.to_string(), entry(c.as_bytes())))
            .collect();
        let new: BTreeMap<String, TreeEntry> = [("a", "1"), ("a.txt", "1"), ("c", "2"), ("d", "1")]
            .iter()
            .map(|(p, c)| (p.to_string(), entry(c.as_bytes())))
            .collect();
        let changes = flat_changes(&old, &new);
        let got: Vec<(&str, Option<TreeEntry>)> =
            changes.iter().map(|(p, e)| (p.as_str(), *e)).collect();
        assert_eq!(
            got,
            [
                ("a.txt", Some(entry(b"1"))),
                ("a/b", None),
                ("c", Some(entry(b"2"))),
                ("d", Some(entry(b"1"))),
                ("e", None),
            ]
        );
        assert!(flat_changes(&old, &old.clone().into_iter().collect()).is_empty());
    }

    /// A changed or staged path that is no repository path (a session file
    /// written by hand names `../x` staged) makes the scan a full one; it
    /// was dropped, and its change went unseen.
    #[test]
    fn a_path_that_does_not_type_makes_a_full_scan_not_a_dropped_change() {
        let dir = tempfile::tempdir().unwrap();
        let cache = |n: &str| dir.path().join(n);
        let wc = |staged: &[&str]| {
            WorkingCopy::new(
                dir.path().to_path_buf(),
                Default::default(),
                false,
                super::super::copy::CachePaths {
                    stat: cache("stat"),
                    scan: cache("scan"),
                    flat: cache("flat"),
                },
                staged.iter().map(|s| s.to_string()).collect(),
            )
        };
        let changed = |ps: &[&str]| ps.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let host = [RepoPath::parse("c.txt").unwrap()];
        let typed = wc(&["b.txt"])
            .typed_scope(changed(&["a.txt", "b.txt"]), Some(&host))
            .unwrap();
        let names: Vec<&str> = typed.iter().map(RepoPath::as_str).collect();
        assert_eq!(names, ["a.txt", "b.txt", "c.txt"]);
        for (changed_paths, staged) in
            [(&["a.txt", "../x"][..], &[][..]), (&["a.txt"], &["/etc/x"])]
        {
            assert_eq!(
                wc(staged)
                    .typed_scope(changed(changed_paths), None)
                    .unwrap_err(),
                FullScan::WatcherLostTrack
            );
        }
    }
}
