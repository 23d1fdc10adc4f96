//! Session discovery: every session file the store serves (`sessions/*.jsonl`
//! and registered ones), read without taking its lock, with what protects it
//! from retention and the trees it names (found by [`super::mark`]).

use std::collections::HashSet;
use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::mark::{journal_trees, referenced_trees, tree_ids};
use super::{Blockers, GcError};
use crate::session::records::Label;
use crate::session::{SessionError, SessionIndex, SessionLog, CUSTOM_APPROVAL};
use crate::store::{Layout, ObjectId, Store};

/// Why a session is never removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protection {
    /// A sidecar holds its lock.
    Held,
    Labelled,
    Approved,
    /// A restore journal beside it: an interrupted restore its next open completes.
    Journal,
    /// Not parseable: we cannot know what it references.
    Unparseable,
}

/// What in a session's own entries keeps retention from removing it: a
/// labelled checkpoint (a `label` entry still in force, or a `manual`
/// snapshot taken with a label), else an approval. The remote's gc keeps
/// the same rule.
///
/// A label is protection when someone put it there to keep a checkpoint: the
/// `label` method, or a checkpoint asked for by name (`manual`). The label an
/// automatic checkpoint carries (hooks and `rewind run` label every turn's
/// `message` snapshot with the prompt or command) describes it: counting it
/// made every hook session protected, so `--keep-last` never freed anything
/// for people who record through their agent's hooks.
pub(crate) fn kept_for(index: &SessionIndex) -> Option<Protection> {
    let mut labelled = false;
    for e in index.entries() {
        if let Some(label) = e.record::<Label>() {
            let target = label.target_id;
            // A note alone is someone's word on the checkpoint too.
            labelled |= target.is_some_and(|t| {
                index
                    .annotation_of(&t)
                    .is_some_and(|(l, n)| l.is_some() || n.is_some())
            });
        }
        // A checkpoint asked for by name is a labelled checkpoint too.
        labelled |= e.is_tree_recording()
            && e.record_kind() == Some("manual")
            && e.snapshot_label().is_some();
    }
    if labelled {
        Some(Protection::Labelled)
    } else if index.latest_of_custom_type(CUSTOM_APPROVAL).is_some() {
        Some(Protection::Approved)
    } else {
        None
    }
}

/// One session file as gc sees it.
#[derive(Clone, Debug)]
pub(super) struct SessionFile {
    pub path: PathBuf,
    /// A `*.jsonl` file directly under `<store>/sessions/`: subject to retention.
    pub removable: bool,
    pub modified: SystemTime,
    pub len: u64,
    pub protection: Option<Protection>,
    /// Trees it (and its journal) names.
    pub roots: Vec<ObjectId>,
}

/// Every session the store serves, read and judged.
pub(super) fn scan_sessions(
    store: &Store,
    blockers: &mut Blockers,
) -> Result<Vec<SessionFile>, GcError> {
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
    let mut hashes: Vec<ObjectId> = Vec::new();

    if meta.len() > 0 {
        match SessionLog::open_read_only(path) {
            Ok(log) => {
                let index = log.index();
                for e in index.entries() {
                    referenced_trees(e, path, &mut hashes);
                }
                if let Some(p) = kept_for(index) {
                    protection.get_or_insert(p);
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

    if journal_trees(path, &mut hashes)? {
        protection.get_or_insert(Protection::Journal);
    }
    let roots = tree_ids(hashes);
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
