//! `rewind push`: what the remote lacks of one session, in the order that
//! keeps the remote consistent for any reader at any moment
//! (docs/remote.md "Crash consistency"):
//!
//! 1. the objects its checkpoints reach that no remote index names, in
//!    packs, children before their trees, each pack's index after the pack
//!    and after every index before it ([`super::upload`]); so a tree the
//!    remote indexes has its whole subtree there;
//! 2. the session file's lines not yet pushed, as one immutable chunk;
//! 3. the manifest naming every chunk, last.
//!
//! A push cut short anywhere leaves the last manifest valid; the next push
//! finds the packs that arrived in the remote's indexes and sends only the rest.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::error::RemoteError;
use super::index::RemoteIndex;
use super::manifest::{Chunk, Manifest, MANIFEST_FORMAT};
use super::state::Pushed;
use super::upload::upload_objects;
use super::{keys, Remote};
use crate::session::{now_iso, FollowStats, FollowedLog, SessionId};
use crate::store::{empty_tree_id, EntryKind, ObjectId, Store};

/// What one push did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushReport {
    pub session_id: SessionId,
    /// Objects uploaded, in how many packs, and their packed bytes.
    pub objects: u64,
    pub packs: u64,
    pub packed_bytes: u64,
    /// Bytes of session log uploaded (0 when the remote had every line).
    pub log_bytes: u64,
    /// Requests made and bytes sent, everything included.
    pub requests: u64,
    pub bytes_up: u64,
    /// Nothing was missing on the remote.
    pub up_to_date: bool,
    /// How much of the session file the remote now has (its whole lines).
    pub file_bytes: u64,
    /// Chunks this store had pushed that were no longer on the remote (a
    /// remote gc removed the session), sent again; and whether its manifest
    /// was gone too.
    pub chunks_resent: u64,
    pub manifest_resent: bool,
}

/// How hard a push looks before it counts on what it sent before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Check {
    /// Lists the session's keys on the remote (one request) before every
    /// push that sends something, and when `rewind push` is asked for one
    /// that has nothing new: what this store recorded as sent is sent again
    /// where it is gone.
    #[default]
    Remote,
    /// A push with nothing new makes no request (the background pusher:
    /// it pushes a session when it grows, and then checks).
    WhenSending,
}

/// A session file as a push reads it, kept between pushes by the
/// background pusher so each reads only the lines appended since the last
/// ([`FollowedLog`]), and checks only the chunks it has not checked against
/// this file yet. Every entry's trees are still walked on each push that
/// sends something (see [`missing_closure`]): only reading is incremental.
#[derive(Debug)]
pub struct PushSource {
    path: PathBuf,
    log: Option<FollowedLog>,
    /// Chunks found to be the file's first bytes, in the file's read
    /// `generation` (a file read whole again is checked again).
    verified: Vec<Chunk>,
    generation: u64,
}

impl PushSource {
    /// The session file at `path`; nothing is read before the first push.
    pub fn new(path: &Path) -> PushSource {
        PushSource {
            path: path.to_path_buf(),
            log: None,
            verified: Vec::new(),
            generation: 0,
        }
    }

    /// What reading the file has cost so far (nothing before the first push).
    pub fn stats(&self) -> FollowStats {
        self.log
            .as_ref()
            .map(FollowedLog::stats)
            .unwrap_or_default()
    }

    /// Whether the file still begins with `pushed`'s chunks ([`Pushed::is_prefix_of`]),
    /// reading only the chunks not found there before.
    fn begins_with(
        log: &mut FollowedLog,
        verified: &mut Vec<Chunk>,
        pushed: &Pushed,
    ) -> Result<bool, RemoteError> {
        let known = verified
            .iter()
            .zip(&pushed.chunks)
            .take_while(|(a, b)| a == b)
            .count();
        let mut at: u64 = pushed.chunks[..known].iter().map(|c| c.bytes).sum();
        for c in &pushed.chunks[known..] {
            let Some(end) = at.checked_add(c.bytes).filter(|&e| e <= log.len()) else {
                return Ok(false);
            };
            if ObjectId::of(&log.read_range(at, end)?).to_hex() != c.hash {
                return Ok(false);
            }
            at = end;
        }
        verified.clone_from(&pushed.chunks);
        Ok(true)
    }
}

/// Pushes the session in `session_file` (a file of `store`'s or one it
/// serves) to `remote`.
pub fn push_session(
    store: &Store,
    remote: &Remote,
    session_file: &Path,
    check: Check,
) -> Result<PushReport, RemoteError> {
    push_source(store, remote, &mut PushSource::new(session_file), check)
}

/// [`push_session`] of a file followed between pushes.
pub fn push_source(
    store: &Store,
    remote: &Remote,
    source: &mut PushSource,
    check: Check,
) -> Result<PushReport, RemoteError> {
    let requests_before = remote.backend.traffic.requests();
    let up_before = remote.backend.traffic.bytes_up();
    // The lines and the entries come from one read: every line pushed has
    // its entry's objects pushed with it (or before). A look that fails
    // lets go of what was read: the next reads the file whole.
    let PushSource {
        path,
        log,
        verified,
        generation,
    } = source;
    let followed = match log.take() {
        Some(mut followed) => {
            followed.refresh()?;
            followed
        }
        None => FollowedLog::open(path)?,
    };
    let log = log.insert(followed);
    if log.generation() != *generation {
        *generation = log.generation();
        verified.clear();
    }
    let whole = log.len() as usize;
    let header = log.header().clone();
    // The header is where the id enters: typed here, it names keys and
    // state files below unchecked.
    let session_id = SessionId::parse(&header.id).map_err(|_| RemoteError::Damaged {
        session: header.id.clone(),
        what: "its id".into(),
        reason: "not a name a remote key can hold".into(),
    })?;
    let mut pushed = remote.state.pushed(&session_id)?;
    if !PushSource::begins_with(log, verified, &pushed)? {
        pushed = Default::default();
    }
    let mut report = PushReport {
        session_id: session_id.clone(),
        file_bytes: whole as u64,
        objects: 0,
        packs: 0,
        packed_bytes: 0,
        log_bytes: 0,
        requests: 0,
        bytes_up: 0,
        up_to_date: false,
        chunks_resent: 0,
        manifest_resent: false,
    };
    let nothing_new = pushed.bytes() == whole as u64 && pushed.manifest_written;
    if nothing_new && check == Check::WhenSending {
        report.up_to_date = true;
        return Ok(report);
    }
    // What this store recorded as sent must still be there: a remote gc
    // may have removed the session since (docs/remote.md "gc on the
    // remote"). Chunks are sent again from the file, which begins with them.
    if !pushed.chunks.is_empty() {
        resend_missing(remote, &session_id, log, &mut pushed, &mut report)?;
    }
    if pushed.bytes() == whole as u64 && pushed.manifest_written {
        report.up_to_date = true;
        report.requests = remote.backend.traffic.requests() - requests_before;
        return Ok(report);
    }

    // 1. Objects.
    let index = RemoteIndex::load(&remote.backend, &remote.state)?;
    let mut roots = Vec::new();
    for e in log.index().entries() {
        match e.referenced_trees() {
            Ok(trees) => roots.extend(trees),
            Err(err) => {
                tracing::warn!(id = %e.id, %err, "a record that does not read is pushed as a line only")
            }
        }
    }
    // While any pack is marked, a tree the remote has is walked all the
    // same: its children may sit only in a marked pack, which a gc may
    // delete before this push's manifest lands (docs/remote.md "gc on the
    // remote"). With no mark, none can go before a grace period passes.
    let walk_all = index.packs.iter().any(|p| p.marked.is_some());
    let uploaded = upload_objects(store, remote, |emit| {
        missing_closure(store, &roots, &index, walk_all, emit)
    })?;
    drop(index);
    report.objects = uploaded.objects;
    report.packs = uploaded.packs;
    report.packed_bytes = uploaded.packed_bytes;

    // 2. The new lines, as one chunk.
    let from = pushed.bytes() as usize;
    if from < whole {
        let piece = log.read_range(from as u64, whole as u64)?;
        let hash = ObjectId::of(&piece).to_hex();
        let bytes = piece.len() as u64;
        remote
            .backend
            .put(&keys::chunk(&session_id, &hash), piece)?;
        report.log_bytes = bytes;
        pushed.chunks.push(Chunk { hash, bytes });
        // Made of the file's bytes, after chunks found to be its first:
        // the next push need not read them again to know the file begins so.
        verified.clone_from(&pushed.chunks);
        pushed.manifest_written = false;
        remote.state.save_pushed(&session_id, &pushed)?;
    }

    // 3. The manifest, last.
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        session_id: session_id.clone(),
        writer: remote.writer.clone(),
        cwd: header.cwd.clone(),
        updated: now_iso(),
        entries: (log.lines() as usize).saturating_sub(1),
        leaf: leaf_of(log.last_line()),
        bytes: whole as u64,
        chunks: pushed.chunks.clone(),
    };
    let bytes = serde_json::to_vec_pretty(&manifest).map_err(|e| RemoteError::Damaged {
        session: session_id.to_string(),
        what: "its manifest".into(),
        reason: e.to_string(),
    })?;
    remote
        .backend
        .put(&keys::manifest(&session_id, &remote.writer), bytes)?;
    pushed.manifest_written = true;
    remote.state.save_pushed(&session_id, &pushed)?;
    report.requests = remote.backend.traffic.requests() - requests_before;
    report.bytes_up = remote.backend.traffic.bytes_up() - up_before;
    Ok(report)
}

/// Lists the session's keys and sends again the chunks of `pushed` that are
/// not among them; a missing manifest is written again by the push.
fn resend_missing(
    remote: &Remote,
    session_id: &SessionId,
    log: &mut FollowedLog,
    pushed: &mut Pushed,
    report: &mut PushReport,
) -> Result<(), RemoteError> {
    let there: HashSet<String> = remote
        .backend
        .list(&keys::session_dir(session_id))?
        .into_iter()
        .map(|l| l.key.to_string())
        .collect();
    let mut at = 0u64;
    for c in &pushed.chunks {
        // `is_prefix_of` held: the file has every chunk's bytes.
        let n = c.bytes;
        let key = keys::chunk(session_id, &c.hash);
        if !there.contains(key.as_ref()) {
            let piece = log.read_range(at, at + n)?;
            remote.backend.put(&key, piece)?;
            report.chunks_resent += 1;
        }
        at += n;
    }
    if pushed.manifest_written
        && !there.contains(keys::manifest(session_id, &remote.writer).as_ref())
    {
        report.manifest_resent = true;
        pushed.manifest_written = false;
    }
    if report.chunks_resent > 0 || report.manifest_resent {
        tracing::warn!(
            session = %session_id,
            chunks = report.chunks_resent,
            manifest = report.manifest_resent,
            "the remote had lost part of this session (a remote gc?): sent again"
        );
    }
    Ok(())
}

/// The id of the last line's entry (pi's leaf rule), if it has one.
fn leaf_of(last_line: &[u8]) -> Option<String> {
    let body = last_line.strip_suffix(b"\n")?;
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    if v.get("type").and_then(|t| t.as_str()) == Some("session") {
        return None;
    }
    v.get("id")?.as_str().map(str::to_owned)
}

/// Every object the trees `roots` reach that the remote lacks, given to
/// `emit` children before the trees that name them (each once). A tree the
/// remote has is not walked (its subtree is there, see the module docs),
/// unless `walk_all`: then only what sits in an unmarked pack counts as
/// there, however it is reached.
fn missing_closure(
    store: &Store,
    roots: &[ObjectId],
    remote: &RemoteIndex,
    walk_all: bool,
    emit: &mut dyn FnMut(ObjectId) -> Result<(), RemoteError>,
) -> Result<(), RemoteError> {
    let mut seen = HashSet::new();
    for root in roots {
        visit_tree(store, *root, remote, walk_all, &mut seen, emit)?;
    }
    Ok(())
}

fn visit_tree(
    store: &Store,
    id: ObjectId,
    remote: &RemoteIndex,
    walk_all: bool,
    seen: &mut HashSet<ObjectId>,
    emit: &mut dyn FnMut(ObjectId) -> Result<(), RemoteError>,
) -> Result<(), RemoteError> {
    // The empty tree is never uploaded: every session names it (its first
    // record's baseline), so the pack holding it would stay referenced by
    // everyone forever; any store can make it (pull.rs does).
    if id == empty_tree_id() || !seen.insert(id) {
        return Ok(());
    }
    let there = remote.has(&id);
    if there && !walk_all {
        return Ok(());
    }
    let tree = store.get_tree(&id)?;
    for entry in tree.entries.values() {
        if !entry.has_object() {
            continue;
        }
        if entry.kind == EntryKind::Tree {
            visit_tree(store, entry.id, remote, walk_all, seen, emit)?;
        } else if !remote.has(&entry.id) && seen.insert(entry.id) {
            emit(entry.id)?;
        }
    }
    if there {
        return Ok(());
    }
    emit(id)
}
