//! gc on a remote (docs/remote.md "gc on the remote"): sessions go by the
//! local keep rules, and packs no kept checkpoint reaches go in two steps,
//! because object storage cannot be locked (Garage ignores conditional
//! writes) and another machine may be pushing at that very moment:
//!
//! 1. a pack unreferenced and older than the grace period gets a mark
//!    (`packs/<name>.gc`); from then on no push counts on its objects (they
//!    go up again in a pack of their own), while pulls still read it;
//! 2. a later gc, at least the grace period after the mark, deletes the
//!    pack if it is still unreferenced, and takes the mark off if a push
//!    that had counted on it before the mark made it referenced again.
//!
//! A push that listed the packs before the mark finishes long before the
//! grace period ends (an hour by default), so its manifest is there for the
//! second gc to see. Sessions go only when older than the grace period
//! too: a manifest is deleted before its chunks, so no reader meets a
//! manifest without its lines. Packs that hold live and dead objects are
//! kept whole (no repacking yet).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::error::RemoteError;
use super::index::RemoteIndex;
use super::manifest::Manifest;
use super::Remote;
use super::{keys, limits};
use crate::session::{parse_copy, SessionId};
use crate::store::{decode_record, EntryKind, ObjectId, Tree};

/// What to keep: the local gc's rules (a session is kept when any rule
/// keeps it; labelled and approved sessions always are).
#[derive(Clone, Debug, Default)]
pub struct RemoteGcParams {
    pub keep_last: Option<u64>,
    pub max_age_days: Option<f64>,
    /// Unreferenced packs and sessions younger than this are left alone,
    /// and a mark must be this old before its pack is deleted.
    pub grace: Duration,
    pub dry_run: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoteGcReport {
    pub sessions: usize,
    pub sessions_removed: Vec<SessionId>,
    pub packs: usize,
    /// Packs found unreferenced and marked, deleted (marked by an earlier
    /// gc), and unmarked (referenced again).
    pub marked: usize,
    pub deleted: usize,
    pub unmarked: usize,
    /// Packs without an index, marks and indexes without a pack, deleted.
    pub strays: usize,
    pub bytes_freed: u64,
    pub requests: u64,
    pub dry_run: bool,
}

struct RemoteSession {
    id: SessionId,
    updated: String,
    manifests: Vec<object_store::path::Path>,
    chunks: Vec<object_store::path::Path>,
    protected: bool,
    roots: Vec<ObjectId>,
}

pub fn run(remote: &Remote, p: &RemoteGcParams) -> Result<RemoteGcReport, RemoteError> {
    let requests_before = remote.backend.traffic.requests();
    let now = SystemTime::now();
    let mut report = RemoteGcReport {
        dry_run: p.dry_run,
        ..Default::default()
    };
    let sessions = read_sessions(remote)?;
    report.sessions = sessions.len();

    // Which sessions go: not kept by any rule, not protected, older than
    // the grace period.
    let mut ranked: Vec<&RemoteSession> = sessions.iter().collect();
    ranked.sort_by(|a, b| b.updated.cmp(&a.updated));
    // How long ago each session was last pushed (unknown: just now).
    let age_of = |s: &RemoteSession| -> Duration {
        time::OffsetDateTime::parse(&s.updated, &time::format_description::well_known::Rfc3339)
            .ok()
            .and_then(|t| now.duration_since(SystemTime::from(t)).ok())
            .unwrap_or_default()
    };
    let any_rule = p.keep_last.is_some() || p.max_age_days.is_some();
    let mut gone: HashSet<&str> = HashSet::new();
    for (rank, s) in ranked.iter().enumerate() {
        let age = age_of(s);
        let is_young = age < p.grace;
        let kept_by_count = p.keep_last.is_some_and(|n| (rank as u64) < n);
        let kept_by_age = p
            .max_age_days
            .is_some_and(|d| age.as_secs_f64() < d * 86_400.0);
        if any_rule && !kept_by_count && !kept_by_age && !s.protected && !is_young {
            gone.insert(s.id.as_str());
        }
    }

    // Mark: every object the kept sessions' checkpoints reach.
    let index = RemoteIndex::load(&remote.backend, &remote.state)?;
    report.packs = index.packs.len();
    let roots: Vec<ObjectId> = sessions
        .iter()
        .filter(|s| !gone.contains(s.id.as_str()))
        .flat_map(|s| s.roots.iter().copied())
        .collect();
    let live = reach(remote, &index, roots)?;
    // A live object counts for the pack a reader finds it in (an unmarked
    // one first): a marked pack whose objects all went up again elsewhere
    // is not kept for them.
    let used: HashSet<&str> = live
        .iter()
        .filter_map(|id| index.locate(id).map(|(p, _)| p.name.as_str()))
        .collect();

    // Sweep packs, then sessions (manifests before chunks).
    for pack in &index.packs {
        let referenced = used.contains(pack.name.as_str());
        let old = |t: SystemTime| now.duration_since(t).unwrap_or_default() >= p.grace;
        match (referenced, pack.marked) {
            (true, Some(_)) => {
                report.unmarked += 1;
                if !p.dry_run {
                    remote.backend.delete(&keys::pack_mark(&pack.name))?;
                }
            }
            (false, Some(marked)) if old(marked) => {
                report.deleted += 1;
                report.bytes_freed += pack.size;
                if !p.dry_run {
                    // The index first: from then on no reader counts on the pack.
                    remote.backend.delete(&keys::pack_index(&pack.name))?;
                    remote.backend.delete(&keys::pack(&pack.name))?;
                    remote.backend.delete(&keys::pack_mark(&pack.name))?;
                }
            }
            (false, None) if old(pack.modified) => {
                report.marked += 1;
                if !p.dry_run {
                    remote.backend.put(
                        &keys::pack_mark(&pack.name),
                        crate::session::now_iso().into_bytes(),
                    )?;
                }
            }
            _ => {}
        }
    }
    // What a cut-short push or gc left: no reader counts on it.
    for stray in &index.strays {
        if now.duration_since(stray.modified).unwrap_or_default() >= p.grace {
            report.strays += 1;
            if !p.dry_run {
                remote.backend.delete(&stray.key)?;
            }
        }
    }
    for s in sessions.iter().filter(|s| gone.contains(s.id.as_str())) {
        report.sessions_removed.push(s.id.clone());
        if !p.dry_run {
            for key in s.manifests.iter().chain(s.chunks.iter()) {
                remote.backend.delete(key)?;
            }
        }
    }
    report.requests = remote.backend.traffic.requests() - requests_before;
    Ok(report)
}

/// Every session on the remote: its manifests and chunks, when it was last
/// pushed, whether it is protected, and the trees its entries name (every
/// copy's, each chunk fetched once and verified).
fn read_sessions(remote: &Remote) -> Result<Vec<RemoteSession>, RemoteError> {
    let mut by_id: BTreeMap<SessionId, RemoteSession> = BTreeMap::new();
    // Only keys rewind writes, named as it names them, are ever counted
    // here, and so ever deleted: anything else under `sessions/` is left.
    for listed in remote.backend.list(&keys::sessions_dir())? {
        let (id, manifest) = match (
            keys::parse_manifest_key(&listed.key),
            keys::parse_chunk_key(&listed.key),
        ) {
            (Some((id, _)), _) => (id, true),
            (None, Some(id)) => (id, false),
            // A listing is the remote's word: a key that is not one rewind
            // writes (a junk or hostile name) is neither counted nor deleted,
            // and said so, since nothing else would show it.
            (None, None) => {
                tracing::warn!(key = %crate::printable::printable(listed.key.as_ref()), "a key under sessions/ that is not rewind's is left alone");
                continue;
            }
        };
        let s = by_id.entry(id.clone()).or_insert_with(|| RemoteSession {
            id,
            updated: String::new(),
            manifests: Vec::new(),
            chunks: Vec::new(),
            protected: false,
            roots: Vec::new(),
        });
        if manifest {
            s.manifests.push(listed.key);
        } else {
            s.chunks.push(listed.key);
        }
    }
    let mut chunks: HashMap<String, Vec<u8>> = HashMap::new();
    for s in by_id.values_mut() {
        for key in &s.manifests {
            let damaged = |reason: String| RemoteError::Damaged {
                session: s.id.to_string(),
                what: format!("manifest {key}"),
                reason,
            };
            let Some(bytes) = remote.backend.get(key, limits::MAX_MANIFEST_BYTES)? else {
                continue;
            };
            let m = Manifest::parse(key, &bytes).map_err(damaged)?;
            if m.updated > s.updated {
                s.updated = m.updated.clone();
            }
            let file = super::pull::assemble(remote, &s.id, &m, &mut chunks)?;
            let (_, index) = parse_copy(Path::new(key.as_ref()), &file)?;
            s.protected |= crate::gc::kept_for(&index).is_some();
            for e in index.entries() {
                if let Ok(trees) = e.referenced_trees() {
                    s.roots.extend(trees);
                }
            }
        }
    }
    // A session whose manifests are all gone is its chunks only: a push
    // cut short before its first manifest, or one gc removed halfway.
    Ok(by_id.into_values().collect())
}

/// Every object the trees `roots` reach on the remote, reading only tree
/// records (byte ranges of their packs), level by level. A tree no index
/// names stops the gc before anything is deleted.
fn reach(
    remote: &Remote,
    index: &RemoteIndex,
    roots: Vec<ObjectId>,
) -> Result<HashSet<ObjectId>, RemoteError> {
    // The empty tree is never uploaded (push.rs) and names nothing.
    let mut live: HashSet<ObjectId> = HashSet::from([crate::store::empty_tree_id()]);
    let mut level: Vec<ObjectId> = roots.into_iter().filter(|r| live.insert(*r)).collect();
    while !level.is_empty() {
        let mut by_pack: HashMap<&str, Vec<(ObjectId, Range<u64>)>> = HashMap::new();
        for id in &level {
            let Some((pack, e)) = index.locate(id) else {
                return Err(RemoteError::Object {
                    session: "(gc)".into(),
                    checkpoint: "a kept one".into(),
                    object: id.to_hex(),
                    problem: "is not on the remote: gc stops and deletes nothing".into(),
                });
            };
            by_pack
                .entry(pack.name.as_str())
                .or_default()
                .push((*id, e.offset..e.offset + e.len));
        }
        let mut next = Vec::new();
        for (name, wanted) in by_pack {
            let ranges: Vec<_> = wanted.iter().map(|w| w.1.clone()).collect();
            let records = remote.backend.get_ranges(&keys::pack(name), &ranges)?;
            for ((id, _), record) in wanted.iter().zip(records) {
                let bad = |why: String| RemoteError::Object {
                    session: "(gc)".into(),
                    checkpoint: "a kept one".into(),
                    object: id.to_hex(),
                    problem: format!("{why} (pack {name}): gc stops and deletes nothing"),
                };
                let content =
                    decode_record(id, record).map_err(|_| bad("does not verify".into()))?;
                let tree = Tree::decode(&content).map_err(|e| bad(e.to_string()))?;
                for child in tree.entries.values().filter(|c| c.has_object()) {
                    if live.insert(child.id) && child.kind == EntryKind::Tree {
                        next.push(child.id);
                    }
                }
            }
        }
        level = next;
    }
    Ok(live)
}
