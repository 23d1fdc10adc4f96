//! Garbage collection (docs/protocol.md "gc", docs/architecture.md rules 8 and 10): retention of whole session files,
//! restic-`forget` style, then a mark-and-sweep of the object store.
//!
//! 1. **Sessions**: every `*.jsonl` directly under `<store>/sessions/`, plus registered
//!    session files (`<store>/registry/*`, one absolute path each). Only the former are ever
//!    removed; registered files elsewhere just keep their objects alive.
//! 2. **Protection**: a session is never removed when a sidecar holds its lock, when it
//!    holds a labelled checkpoint (a `label` entry whose latest label is non-null, or a
//!    snapshot taken with a label) or an approval, when a restore journal sits beside it
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

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::protocol::{GcParams, GcResult};
use crate::session::records::{collect_tree_hashes, collect_tree_hashes_map, Label};
use crate::session::{Entry, SessionError, SessionLog, CUSTOM_APPROVAL};
use crate::store::{
    empty_tree_id, EntryKind, Layout, ObjectId, ObjectInfo, Store, StoreError, KNOWN_OBJECT_TTL,
};
use crate::working_copy::StatCache;

/// Objects younger than this are never deleted. It must exceed [`KNOWN_OBJECT_TTL`] plus the
/// longest snapshot, so an object a live sidecar re-uses without touching it is spared.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60 * 60);
const _: () = assert!(DEFAULT_GRACE.as_secs() > KNOWN_OBJECT_TTL.as_secs());

const SECS_PER_DAY: f64 = 86_400.0;

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

/// Why a session is never removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protection {
    /// A sidecar holds its lock.
    Held,
    Labelled,
    Approved,
    /// A restore journal beside it: an interrupted restore its next open completes.
    Journal,
    /// Not parseable: we cannot know what it references.
    Unparseable,
}

/// One session file as gc sees it.
#[derive(Clone, Debug)]
struct SessionFile {
    path: PathBuf,
    /// A `*.jsonl` file directly under `<store>/sessions/`: subject to retention.
    removable: bool,
    modified: SystemTime,
    len: u64,
    protection: Option<Protection>,
    /// Trees it (and its journal) names.
    roots: Vec<ObjectId>,
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
    let garbage: Vec<&ObjectInfo> = if blockers.any() {
        Vec::new()
    } else {
        listing
            .iter()
            .filter(|o| !o.packed && !live.contains(&o.id) && old(o))
            .collect()
    };
    let mut objects_removed = 0u64;
    let mut bytes_freed = 0u64;
    if let Some(guard) = deletion.as_mut() {
        // Before the first deletion: every writer re-validates what it
        // trusts before its next snapshot.
        guard.bump()?;
    }
    if !blockers.any() {
        // Packed garbage: packs past the grace period are rewritten without it.
        let (n, bytes) = store.prune_packs(&|id| live.contains(id), cutoff, dry_run)?;
        objects_removed += n;
        bytes_freed += bytes;
    }
    if dry_run {
        objects_removed += garbage.len() as u64;
        bytes_freed += garbage.iter().map(|o| o.stored_bytes).sum::<u64>();
    } else {
        for o in &garbage {
            // A put that re-used the object since the listing refreshed its mtime.
            if still_old(store, &o.id, cutoff)? && store.remove(&o.id)? {
                objects_removed += 1;
                bytes_freed += o.stored_bytes;
            }
        }
        let temps = store.remove_stale_temps(opts.grace)?;
        if temps > 0 {
            tracing::info!(temps, "gc removed stale temp files");
        }
    }

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

/// `maxAgeDays` as a duration: `None` when not given, `Some(None)` when it is too large to
/// exclude anything.
fn parse_max_age(days: Option<f64>) -> Result<Option<Option<Duration>>, GcError> {
    match days {
        None => Ok(None),
        Some(d) if d.is_nan() || d < 0.0 => Err(GcError::InvalidParams(format!(
            "maxAgeDays must be a non-negative number, got {d}"
        ))),
        Some(d) => Ok(Some(Duration::try_from_secs_f64(d * SECS_PER_DAY).ok())),
    }
}

fn is_old(modified: SystemTime, cutoff: Option<SystemTime>) -> bool {
    cutoff.is_some_and(|c| modified < c)
}

/// Whether the object file is still there and still older than the cutoff.
fn still_old(store: &Store, id: &ObjectId, cutoff: Option<SystemTime>) -> Result<bool, GcError> {
    let path = store.object_path(id);
    match fs::metadata(&path).and_then(|m| m.modified()) {
        Ok(modified) => Ok(is_old(modified, cutoff)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(GcError::io("checking object age", &path, e)),
    }
}

// ------------------------------------------------------------------ retention

/// Indices of the removable sessions, newest first (ties by path, for determinism).
fn newest_first(sessions: &[SessionFile]) -> Vec<usize> {
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
fn retention_prunes(
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
fn budget_candidates(
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

enum Removal {
    Removed,
    /// Someone else removed it first.
    Vanished,
    /// Held by a sidecar now, or changed since gc read it.
    Kept(&'static str),
}

/// Removes a session file while holding its exclusive lock, so no sidecar can open it
/// meanwhile; keeps it if a sidecar holds it or it changed since it was read.
fn remove_session(s: &SessionFile) -> Result<Removal, GcError> {
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

// ------------------------------------------------------------------- sessions

/// Every session the store serves, read and judged.
fn scan_sessions(store: &Store, blockers: &mut Blockers) -> Result<Vec<SessionFile>, GcError> {
    let mut out = Vec::new();
    for (path, removable) in session_paths(store)? {
        if let Some(s) = read_session(&path, removable, blockers)? {
            out.push(s);
        }
    }
    Ok(out)
}

/// `*.jsonl` under `sessions/` (removable when a plain file, not a symlink) and registered
/// session files that still exist, each once.
pub(crate) fn session_paths(store: &Store) -> Result<Vec<(PathBuf, bool)>, GcError> {
    let mut out = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let dir = store.sessions_dir();
    for entry in read_dir_if_exists(&dir, "listing sessions")? {
        let entry = entry.map_err(|e| GcError::io("listing sessions", &dir, e))?;
        let path = entry.path();
        if !Layout::is_session_file(&path) {
            continue;
        }
        let file_type = entry
            .file_type()
            .map_err(|e| GcError::io("listing sessions", &path, e))?;
        let is_file = match fs::metadata(&path) {
            Ok(m) => m.is_file(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(GcError::io("reading session file metadata", &path, e)),
        };
        if !is_file {
            continue;
        }
        if let Some(canonical) = canonical(&path)? {
            if seen.insert(canonical) {
                out.push((path, file_type.is_file()));
            }
        }
    }
    let registry = store.layout().registry_dir();
    for entry in read_dir_if_exists(&registry, "listing registered sessions")? {
        let entry = entry.map_err(|e| GcError::io("listing registered sessions", &registry, e))?;
        let reg = entry.path();
        let text = match fs::read_to_string(&reg) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(GcError::io("reading session registration", &reg, e)),
        };
        let path = PathBuf::from(text.trim());
        if !path.is_absolute() {
            tracing::warn!(registration = %reg.display(), "ignoring a registration without an absolute path");
            continue;
        }
        let Some(canonical) = canonical(&path)? else {
            // The session file is gone: nothing to keep alive.
            continue;
        };
        if seen.insert(canonical) {
            out.push((path, false));
        }
    }
    Ok(out)
}

fn read_dir_if_exists(
    dir: &Path,
    context: &'static str,
) -> Result<Box<dyn Iterator<Item = io::Result<fs::DirEntry>>>, GcError> {
    match fs::read_dir(dir) {
        Ok(rd) => Ok(Box::new(rd)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Box::new(std::iter::empty())),
        Err(e) => Err(GcError::io(context, dir, e)),
    }
}

fn canonical(path: &Path) -> Result<Option<PathBuf>, GcError> {
    match path.canonicalize() {
        Ok(p) => Ok(Some(p)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(GcError::io("resolving session path", path, e)),
    }
}

/// Reads one session (without locking it): whether a sidecar holds it, what protects it,
/// and the trees it names. `None` if it vanished meanwhile.
fn read_session(
    path: &Path,
    removable: bool,
    blockers: &mut Blockers,
) -> Result<Option<SessionFile>, GcError> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GcError::io("reading session file metadata", path, e)),
    };
    let modified = meta
        .modified()
        .map_err(|e| GcError::io("reading session file metadata", path, e))?;
    let Some(held) = probe_held(path)? else {
        return Ok(None);
    };
    let mut protection = held.then_some(Protection::Held);
    let mut hashes: Vec<String> = Vec::new();

    if meta.len() > 0 {
        match SessionLog::open_read_only(path) {
            Ok(log) => {
                let index = log.index();
                let mut labelled = false;
                for e in index.entries() {
                    referenced_trees(e, path, &mut hashes);
                    if let Some(label) = e.record::<Label>() {
                        let target = label.target_id;
                        labelled |= target.is_some_and(|t| index.label_of(&t).is_some());
                    }
                    // A snapshot taken with a label is a labelled checkpoint too.
                    labelled |= e.is_tree_recording() && e.snapshot_label().is_some();
                }
                if labelled {
                    protection.get_or_insert(Protection::Labelled);
                }
                if index.latest_of_custom_type(CUSTOM_APPROVAL).is_some() {
                    protection.get_or_insert(Protection::Approved);
                }
            }
            Err(SessionError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(err @ SessionError::Io { .. }) => return Err(err.into()),
            Err(err) => {
                blockers.add(format!(
                    "session file {} cannot be parsed: {err}",
                    path.display()
                ));
                protection.get_or_insert(Protection::Unparseable);
            }
        }
    }
    // An empty file (a crash right after creation) names nothing.

    let journal = Layout::session_journal(path);
    match fs::read(&journal) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => {
                collect_tree_hashes(&v, false, &mut hashes);
                protection.get_or_insert(Protection::Journal);
            }
            // The engine drops an unreadable journal on open; it keeps nothing alive.
            Err(err) => {
                tracing::warn!(%err, path = %journal.display(), "gc ignores an unreadable restore journal");
            }
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(GcError::io("reading restore journal", &journal, e)),
    }

    let mut roots = Vec::with_capacity(hashes.len());
    let mut seen = HashSet::new();
    for h in hashes {
        match ObjectId::from_hex(&h) {
            Ok(id) => {
                if seen.insert(id) {
                    roots.push(id);
                }
            }
            Err(_) => {
                tracing::debug!(path = %path.display(), value = %h, "not a tree hash; ignored");
            }
        }
    }
    if let Some(p) = protection {
        tracing::debug!(path = %path.display(), protection = ?p, "session protected");
    }
    Ok(Some(SessionFile {
        path: path.to_path_buf(),
        removable,
        modified,
        len: meta.len(),
        protection,
        roots,
    }))
}

/// Whether a sidecar holds the session's lock: a shared lock cannot be taken next to its
/// exclusive one. Released at once. `None` if the file vanished. A file system that cannot
/// lock at all counts as held (gc keeps more, never less).
fn probe_held(path: &Path) -> Result<Option<bool>, GcError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GcError::io("opening session file", path, e)),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(false)),
        Err(TryLockError::WouldBlock) => Ok(Some(true)),
        Err(TryLockError::Error(err)) => {
            tracing::warn!(%err, path = %path.display(), "cannot probe the session lock; treating it as held");
            Ok(Some(true))
        }
    }
}

/// Adds the trees `e` references to `out` (see [`Entry::referenced_trees`]). A rewind
/// record that cannot be read as its type is not taken to reference nothing: every string
/// under a key ending in `TreeHash` anywhere in its line is kept, the rule gc applied to
/// every entry before the records were typed.
pub(crate) fn referenced_trees(e: &Entry, session: &Path, out: &mut Vec<String>) {
    match e.referenced_trees() {
        Ok(trees) => out.extend(trees),
        Err(err) => {
            tracing::warn!(%err, id = %e.id, path = %session.display(),
                "a rewind record cannot be read; keeping every tree it may name");
            collect_tree_hashes_map(&e.raw, out);
        }
    }
}

// ----------------------------------------------------------------------- mark

/// What a walk reached: every object id, and the trees already walked.
#[derive(Default)]
struct Reach {
    objects: HashSet<ObjectId>,
    trees: HashSet<ObjectId>,
}

type Children = Rc<[(ObjectId, bool)]>;

/// Walks trees; with `memoize`, remembers each tree's children so per-session walks over
/// shared directories read every tree object once.
struct Walker<'a> {
    store: &'a Store,
    memoize: bool,
    memo: HashMap<ObjectId, Children>,
}

impl<'a> Walker<'a> {
    fn new(store: &'a Store) -> Self {
        Walker {
            store,
            memoize: false,
            memo: HashMap::new(),
        }
    }

    fn reach_new(
        &mut self,
        roots: &[ObjectId],
        blockers: &mut Blockers,
    ) -> Result<HashSet<ObjectId>, GcError> {
        let mut reach = Reach::default();
        self.reach(roots, &mut reach, blockers)?;
        Ok(reach.objects)
    }

    /// Adds the trees `roots` and everything under them to `reach`.
    fn reach(
        &mut self,
        roots: &[ObjectId],
        reach: &mut Reach,
        blockers: &mut Blockers,
    ) -> Result<(), GcError> {
        let mut stack: Vec<ObjectId> = roots.to_vec();
        while let Some(tree) = stack.pop() {
            if !reach.trees.insert(tree) {
                continue;
            }
            reach.objects.insert(tree);
            for &(id, is_tree) in self.children(&tree, blockers)?.iter() {
                if is_tree {
                    stack.push(id);
                } else {
                    reach.objects.insert(id);
                }
            }
        }
        Ok(())
    }

    fn children(&mut self, tree: &ObjectId, blockers: &mut Blockers) -> Result<Children, GcError> {
        if let Some(c) = self.memo.get(tree) {
            return Ok(c.clone());
        }
        // Never needs to be stored (the store treats it as always present).
        if *tree == empty_tree_id() {
            return Ok(Rc::from([]));
        }
        let children: Children = match self.store.get_tree(tree) {
            Ok(t) => t
                .entries
                .values()
                .map(|e| (e.id, e.kind == EntryKind::Tree))
                .collect(),
            Err(StoreError::NotFound { .. }) => {
                tracing::warn!(tree = %tree, "gc: a referenced tree is missing from the store");
                Rc::from([])
            }
            Err(err @ (StoreError::Corrupt { .. } | StoreError::BadTree { .. })) => {
                blockers.add(format!("tree {tree} cannot be read: {err}"));
                Rc::from([])
            }
            Err(err) => return Err(err.into()),
        };
        if self.memoize {
            self.memo.insert(*tree, children.clone());
        }
        Ok(children)
    }
}

/// Blob ids named by the persisted stat caches in `<store>/cache/`.
fn stat_cache_blobs(store: &Store) -> Result<HashSet<ObjectId>, GcError> {
    let mut out = HashSet::new();
    for path in stat_cache_paths(store)? {
        out.extend(StatCache::load(&path).object_ids());
    }
    Ok(out)
}

/// Every stat cache file of the store (`cache/stat-*.bin`).
pub(crate) fn stat_cache_paths(store: &Store) -> Result<Vec<PathBuf>, GcError> {
    let dir = store.layout().cache_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(GcError::io("listing stat caches", &dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| GcError::io("listing stat caches", &dir, e))?;
        let path = entry.path();
        let is_cache = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(Layout::is_stat_cache_name);
        if is_cache {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(name: &str, age_days: u64, protection: Option<Protection>) -> SessionFile {
        SessionFile {
            path: PathBuf::from(name),
            removable: true,
            modified: SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 86_400)
                - Duration::from_secs(age_days * 86_400),
            len: 1,
            protection,
            roots: Vec::new(),
        }
    }

    fn names(sessions: &[SessionFile], idx: &[usize]) -> Vec<String> {
        idx.iter()
            .map(|&i| sessions[i].path.display().to_string())
            .collect()
    }

    #[test]
    fn keep_rules_are_a_union() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 86_400);
        let mut sessions = vec![
            session("d4", 4, None),
            session("d1", 1, None),
            session("d3", 3, Some(Protection::Labelled)),
            session("d2", 2, None),
            session("d5", 5, None),
        ];
        let mut registered = session("reg", 9, None);
        registered.removable = false;
        sessions.push(registered);
        let ranked = newest_first(&sessions);
        assert_eq!(names(&sessions, &ranked), ["d1", "d2", "d3", "d4", "d5"]);

        let prune = |keep: usize, age: Option<Option<Duration>>| {
            names(
                &sessions,
                &retention_prunes(&sessions, &ranked, keep, age, now),
            )
        };
        // Oldest first; protected and registered never.
        assert_eq!(prune(0, None), ["d5", "d4", "d2", "d1"]);
        assert_eq!(prune(2, None), ["d5", "d4"]);
        // The protected d3 counts among the newest 3.
        assert_eq!(prune(3, None), ["d5", "d4"]);
        let days = |d: f64| parse_max_age(Some(d)).unwrap();
        assert_eq!(prune(0, days(2.5)), ["d5", "d4"]);
        assert_eq!(prune(4, days(2.5)), ["d5"]);
        assert_eq!(prune(0, days(0.0)), ["d5", "d4", "d2", "d1"]);
        assert!(prune(0, days(f64::INFINITY)).is_empty());
        assert!(prune(0, days(1e300)).is_empty());

        let pruned = retention_prunes(&sessions, &ranked, 4, None, now);
        assert_eq!(
            names(
                &sessions,
                &budget_candidates(&sessions, &ranked, 1, &pruned)
            ),
            ["d4", "d2"]
        );
    }

    #[test]
    fn max_age_must_be_a_non_negative_number() {
        assert!(parse_max_age(None).unwrap().is_none());
        for bad in [-1.0, f64::NAN, f64::NEG_INFINITY] {
            assert!(matches!(
                parse_max_age(Some(bad)),
                Err(GcError::InvalidParams(_))
            ));
        }
        assert_eq!(
            parse_max_age(Some(1.5)).unwrap(),
            Some(Some(Duration::from_secs(129_600)))
        );
    }

    #[test]
    fn grace_cutoff() {
        let now = SystemTime::now();
        let cutoff = now.checked_sub(Duration::from_secs(60));
        assert!(is_old(now - Duration::from_secs(61), cutoff));
        assert!(!is_old(now - Duration::from_secs(59), cutoff));
        assert!(!is_old(now, None));
    }

    #[test]
    fn walker_reads_each_tree_once_and_survives_missing_and_corrupt_trees() {
        use crate::store::{Tree, TreeEntry};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), false).unwrap();
        let blob = store.put(b"content").unwrap().id;
        let mut sub = Tree::default();
        sub.entries.insert(
            "f".into(),
            TreeEntry {
                kind: EntryKind::File,
                id: blob,
                size: 7,
            },
        );
        let sub_id = store.put_tree(&sub).unwrap();
        let mut root = Tree::default();
        for name in ["a", "b"] {
            root.entries.insert(
                name.into(),
                TreeEntry {
                    kind: EntryKind::Tree,
                    id: sub_id,
                    size: 0,
                },
            );
        }
        let missing = ObjectId::of(b"never stored");
        root.entries.insert(
            "gone".into(),
            TreeEntry {
                kind: EntryKind::Tree,
                id: missing,
                size: 0,
            },
        );
        let root_id = store.put_tree(&root).unwrap();

        let mut blockers = Blockers::default();
        let mut walker = Walker::new(&store);
        walker.memoize = true;
        let got = walker
            .reach_new(
                &[root_id, ObjectId::of(b"missing root"), empty_tree_id()],
                &mut blockers,
            )
            .unwrap();
        assert!(!blockers.any(), "a missing tree does not block gc");
        for id in [root_id, sub_id, blob] {
            assert!(got.contains(&id));
        }
        assert_eq!(walker.memo.len(), 4);

        // A blob named as a tree cannot be decoded: gc must not delete anything.
        let mut blockers = Blockers::default();
        Walker::new(&store)
            .reach_new(&[blob], &mut blockers)
            .unwrap();
        assert!(blockers.any());
    }
}
