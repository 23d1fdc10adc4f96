//! Garbage collection (docs/protocol.md "gc", docs/architecture.md rules 8 and 10): retention of whole session files,
//! restic-`forget` style, then a mark-and-sweep of the object store.
//!
//! 1. **Sessions**: every `*.jsonl` directly under `<store>/sessions/`, plus registered
//!    session files (`<store>/registry/*`, one absolute path each). Only the former are ever
//!    removed; registered files elsewhere just keep their objects alive.
//! 2. **Protection**: a session is never removed when a sidecar holds its lock, when it
//!    holds a labelled checkpoint (a `label` entry whose latest label is non-null, or a
//!    `manual` snapshot taken with a label) or an approval, when a restore journal sits beside it
//!    (crash recovery needs it), or when it cannot be parsed.
//! 3. **Retention**: with `keepLast` / `maxAgeDays`, every unprotected session under
//!    `sessions/` that is neither among the newest `keepLast` (ranked among the files
//!    under `sessions/`, protected ones included) nor younger than `maxAgeDays` is
//!    removed. Then, with `budgetBytes`, the oldest remaining unprotected sessions outside
//!    the newest `keepLast` are removed while what would stay after the sweep (objects
//!    reachable from the remaining sessions plus unreachable ones still inside the grace
//!    period) exceeds the budget.
//! 4. **Mark**: every remaining session's own rewind records name their trees
//!    ([`Entry::referenced_trees`]; one that cannot be read names every string under a key
//!    ending in `TreeHash` in its line), and so does its restore journal (every such key);
//!    trees are walked recursively, each tree id once. The blobs named by the persisted stat caches (`<store>/cache/
//!    stat-*.bin`, read with [`StatCache::load`]) are roots too: a scan reuses a cache
//!    hit's blob id without touching the store, so a blob the cache vouches for must
//!    outlive every session that referenced it. (A cache that cannot be decoded is not
//!    trusted by scans either, so it names nothing.)
//! 5. **Sweep**: loose objects that are unreachable and older than the grace period are
//!    deleted through [`Store::remove`] (the mtime is checked again right before, so an
//!    object a concurrent put re-used meanwhile is spared); every pack older than the grace
//!    period that holds unreachable objects is rewritten without them, or deleted when it
//!    holds nothing else ([`Store::prune_packs`]; a pack's mtime is its objects' age); stale
//!    temp files and packs a crashed writer never published are removed.
//!
//! If any session file cannot be parsed, or a tree object cannot be decoded, gc cannot know what is referenced and deletes no object in that run (session
//! retention still applies; budget pruning is skipped since it could free nothing).
//!
//! A concurrent sidecar loses nothing: its fresh objects are younger than the grace
//! period, and objects it re-uses get their mtime refreshed by `put` (for at most
//! [`KNOWN_OBJECT_TTL`] it trusts its in-memory set instead, which the grace period
//! exceeds). Session removal happens under the session's exclusive lock, and a session
//! whose file changed since it was read is kept. gc never touches a project directory and
//! never edits a session file.
//!
//! The pieces: [`discover`] (which sessions, what protects them), [`retention`]
//! (which go), [`mark`] (what they and the stat caches reach), [`sweep`] (what
//! is deleted); [`run`] puts them in that order.

mod api;
mod discover;
mod mark;
mod retention;
mod sweep;

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::session::SessionError;
use crate::store::{ObjectId, ObjectInfo, Store, StoreError, KNOWN_OBJECT_TTL};

pub use api::{GcParams, GcResult};
pub(crate) use discover::{kept_for, session_paths};
pub(crate) use mark::{referenced_trees, stat_cache_paths};

use discover::scan_sessions;
use mark::{stat_cache_blobs, Reach, Walker};
use retention::{
    budget_candidates, newest_first, parse_max_age, remove_session, retention_prunes, Removal,
};
use sweep::is_old;

/// Objects younger than this are never deleted. It must exceed [`KNOWN_OBJECT_TTL`] plus the
/// longest snapshot, so an object a live sidecar re-uses without touching it is spared.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60 * 60);
const _: () = assert!(DEFAULT_GRACE.as_secs() > KNOWN_OBJECT_TTL.as_secs());

/// Everything that can make gc fail. Unreadable or unparseable *content* never does (it
/// makes gc keep more); failing file-system operations do.
#[derive(Debug, thiserror::Error)]
pub enum GcError {
    #[error("invalid gc parameters: {0}")]
    InvalidParams(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("{context} {}: {source}", path.display())]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl GcError {
    fn io(context: &'static str, path: &Path, source: io::Error) -> Self {
        GcError::Io {
            context,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// How gc judges age. Production uses [`GcOptions::default`]; tests pass a small grace
/// period or a fake `now`.
#[derive(Clone, Copy, Debug)]
pub struct GcOptions {
    /// Unreachable objects (and temp files) younger than this are kept.
    pub grace: Duration,
    /// The moment ages are measured from (object grace and `maxAgeDays`).
    pub now: SystemTime,
}

impl Default for GcOptions {
    fn default() -> Self {
        GcOptions {
            grace: DEFAULT_GRACE,
            now: SystemTime::now(),
        }
    }
}

/// Reasons no object may be deleted in this run (empty: deletion allowed).
#[derive(Debug, Default)]
struct Blockers(Vec<String>);

impl Blockers {
    fn add(&mut self, why: String) {
        tracing::warn!(reason = %why, "gc will delete no objects in this run");
        self.0.push(why);
    }

    fn any(&self) -> bool {
        !self.0.is_empty()
    }
}

/// Runs gc on `store` (see the module docs).
pub fn run(store: &Store, params: &GcParams, opts: &GcOptions) -> Result<GcResult, GcError> {
    let dry_run = params.dry_run.unwrap_or(false);
    let max_age = parse_max_age(params.max_age_days)?;
    let keep_last = params
        .keep_last
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let cutoff = opts.now.checked_sub(opts.grace);
    // Held for the whole run: no writer is between its scan and the entry
    // that records it while gc marks, and none starts one until gc is done
    // (see store::generation).
    let mut deletion = if dry_run {
        None
    } else {
        Some(store.deletion_guard()?)
    };

    let listing = store.list_objects()?;
    let objects_before = listing.len() as u64;
    let bytes_before = listing.iter().map(|o| o.stored_bytes).sum();

    let mut blockers = Blockers::default();
    let sessions = scan_sessions(store, &mut blockers)?;
    let cache_blobs = stat_cache_blobs(store)?;

    // Retention by keep rules.
    let ranked = newest_first(&sessions);
    let mut pruned: Vec<usize> = if keep_last.is_some() || max_age.is_some() {
        retention_prunes(
            &sessions,
            &ranked,
            keep_last.unwrap_or(0),
            max_age,
            opts.now,
        )
    } else {
        Vec::new()
    };

    let mut walker = Walker::new(store);
    let old = |o: &ObjectInfo| is_old(o.modified, cutoff);

    // Retention by budget: per-session reachable sets, counted, so removing a session
    // frees exactly the old objects no other remaining session reaches.
    let mut counted: Option<HashMap<ObjectId, u32>> = None;
    if let Some(budget) = params.budget_bytes {
        walker.memoize = true;
        let candidates = budget_candidates(&sessions, &ranked, keep_last.unwrap_or(0), &pruned);
        let mut counts: HashMap<ObjectId, u32> = HashMap::new();
        for id in &cache_blobs {
            *counts.entry(*id).or_default() += 1;
        }
        let mut candidate_sets: HashMap<usize, HashSet<ObjectId>> = HashMap::new();
        for (i, s) in sessions.iter().enumerate() {
            if pruned.contains(&i) {
                continue;
            }
            let set = walker.reach_new(&s.roots, &mut blockers)?;
            for id in &set {
                *counts.entry(*id).or_default() += 1;
            }
            if candidates.contains(&i) {
                candidate_sets.insert(i, set);
            }
        }
        if blockers.any() {
            tracing::warn!("gc skips budget pruning: no object can be deleted in this run");
        } else {
            let info: HashMap<ObjectId, (u64, bool)> = listing
                .iter()
                .map(|o| (o.id, (o.stored_bytes, old(o))))
                .collect();
            let mut size: u64 = listing
                .iter()
                .filter(|o| counts.contains_key(&o.id) || !old(o))
                .map(|o| o.stored_bytes)
                .sum();
            for i in candidates {
                if size <= budget {
                    break;
                }
                for id in candidate_sets.remove(&i).unwrap_or_default() {
                    let Some(c) = counts.get_mut(&id) else {
                        continue;
                    };
                    *c -= 1;
                    if *c == 0 {
                        counts.remove(&id);
                        if let Some(&(bytes, true)) = info.get(&id) {
                            size -= bytes;
                        }
                    }
                }
                pruned.push(i);
            }
        }
        counted = Some(counts);
    }

    // Remove the pruned session files (under their lock); those that cannot be removed
    // stay, and so do their objects.
    let mut removed_sessions: Vec<usize> = Vec::new();
    let mut kept_after_all: Vec<usize> = Vec::new();
    for &i in &pruned {
        let s = &sessions[i];
        if dry_run {
            removed_sessions.push(i);
            continue;
        }
        match remove_session(s)? {
            Removal::Removed => removed_sessions.push(i),
            Removal::Vanished => {}
            Removal::Kept(why) => {
                tracing::warn!(path = %s.path.display(), why, "session not pruned");
                kept_after_all.push(i);
            }
        }
    }

    // Mark.
    let live: HashSet<ObjectId> = match counted {
        Some(counts) => {
            let mut live: HashSet<ObjectId> = counts.into_keys().collect();
            for &i in &kept_after_all {
                live.extend(walker.reach_new(&sessions[i].roots, &mut blockers)?);
            }
            live
        }
        None => {
            let mut reach = Reach::default();
            for (i, s) in sessions.iter().enumerate() {
                if !pruned.contains(&i) || kept_after_all.contains(&i) {
                    walker.reach(&s.roots, &mut reach, &mut blockers)?;
                }
            }
            reach.objects
        }
    };

    let mut live = live;
    live.extend(cache_blobs.iter().copied());

    // Sweep.
    let swept = sweep::sweep(
        store,
        &listing,
        &live,
        blockers.any(),
        deletion.as_mut(),
        dry_run,
        opts,
    )?;
    let (objects_removed, bytes_freed) = (swept.objects_removed, swept.bytes_freed);

    let budget_met = match params.budget_bytes {
        None => true,
        Some(budget) => {
            let remaining: u64 = listing
                .iter()
                .filter(|o| blockers.any() || live.contains(&o.id) || !old(o))
                .map(|o| o.stored_bytes)
                .sum();
            remaining <= budget
        }
    };

    let result = GcResult {
        objects_before,
        objects_removed,
        bytes_before,
        bytes_freed,
        sessions_pruned: removed_sessions.len() as u64,
        budget_met,
        dry_run,
        pruned_sessions: removed_sessions
            .iter()
            .map(|&i| sessions[i].path.display().to_string())
            .collect(),
    };
    tracing::info!(
        dry_run,
        objects_before,
        objects_removed,
        bytes_freed,
        sessions_pruned = result.sessions_pruned,
        budget_met,
        "gc done"
    );
    Ok(result)
}

#[cfg(test)]
mod tests;
