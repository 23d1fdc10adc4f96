//! `rewind pull`: a session from the remote into this store, every copy of
//! it merged, with every object its checkpoints reach (docs/remote.md
//! "Pulling"). Nothing is trusted: each chunk must hash to its name, each
//! object to its id, and every checkpoint must be complete before the
//! session file is written or grows. Pulling never touches a project.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::error::RemoteError;
use super::index::{RemoteIndex, RemotePack};
use super::manifest::Manifest;
use super::state::{write_file, Pushed};
use super::{keys, limits, Remote};
use crate::printable::printable;
use crate::session::records::{Navigation, Record};
use crate::session::{
    canonical_iso, now_iso, parse_copy, Entry, EntryId, Header, SessionId, SessionIndex, SessionLog,
};
use crate::store::{empty_tree_id, EntryKind, IndexEntry, Layout, ObjectId, Store, Tree};

/// What one pull did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullReport {
    pub session_id: SessionId,
    pub session_file: PathBuf,
    /// The session file was made by this pull (it was not in the store).
    pub created: bool,
    /// Entries added from other copies (other machines' branches).
    pub entries_added: usize,
    /// Objects stored, packs downloaded, requests and bytes received.
    pub objects: u64,
    pub packs: u64,
    pub requests: u64,
    pub bytes_down: u64,
}

/// One copy of the session on the remote, fetched and checked.
struct Copy {
    manifest: Manifest,
    header: Header,
    bytes: Vec<u8>,
    index: SessionIndex,
}

pub fn pull_session(
    store: &Store,
    remote: &Remote,
    session_id: &SessionId,
) -> Result<PullReport, RemoteError> {
    let requests_before = remote.backend.traffic.requests();
    let down_before = remote.backend.traffic.bytes_down();
    let local_file = find_local(store.layout(), session_id)?;
    let local_bytes = match &local_file {
        Some(p) => Some(fs::read(p).map_err(|e| RemoteError::io("reading", p, e))?),
        None => None,
    };
    let copies = fetch_copies(remote, session_id, local_bytes.as_deref())?;

    // The base: the local file, else the copy with the most entries.
    let base_copy = match &local_bytes {
        Some(_) => None,
        None => copies
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| (c.index.len(), c.manifest.writer == remote.writer))
            .map(|(i, _)| i),
    };
    let base_index: SessionIndex = match (&local_file, &local_bytes, base_copy) {
        (Some(path), Some(bytes), _) => parse_copy(path, bytes)?.1,
        (_, _, Some(i)) => copies[i].index.clone(),
        _ => return Err(no_such(remote, session_id.as_str())),
    };

    // Entries the base lacks, each copy's in its own order (parents first).
    let mut have: HashSet<EntryId> = base_index.entries().iter().map(|e| e.id.clone()).collect();
    let mut added: Vec<Entry> = Vec::new();
    for (i, copy) in copies.iter().enumerate() {
        if Some(i) == base_copy {
            continue;
        }
        for e in copy.index.entries() {
            if have.contains(&e.id) {
                continue;
            }
            if let Some(p) = &e.parent_id {
                if !have.contains(p) {
                    return Err(RemoteError::Damaged {
                        session: session_id.to_string(),
                        what: format!("the copy of writer {}", copy.manifest.writer),
                        reason: format!("entry {} names a parent {} it does not hold", e.id, p),
                    });
                }
            }
            have.insert(e.id.clone());
            added.push(e.clone());
        }
    }

    // Every object every new checkpoint reaches, verified, before any line.
    let mut roots: Vec<(ObjectId, EntryId)> = Vec::new();
    let new_entries = base_copy
        .map(|_| base_index.entries())
        .unwrap_or_default()
        .iter()
        .chain(added.iter());
    for e in new_entries {
        if let Ok(trees) = e.referenced_trees() {
            roots.extend(trees.into_iter().map(|t| (t, e.id.clone())));
        }
    }
    let mut report = PullReport {
        session_id: session_id.clone(),
        session_file: PathBuf::new(),
        created: false,
        entries_added: 0,
        objects: 0,
        packs: 0,
        requests: 0,
        bytes_down: 0,
    };
    if !roots.is_empty() {
        let _writing = store.writer_guard()?;
        fetch_closure(store, remote, session_id, roots, &mut report)?;
        store.sync()?;
    }

    // The session file: written whole when new, else grown by the entries
    // it lacks; then the leaf goes back where it was. Its name is made of
    // the id asked for (checked above) and the header's time as this build
    // spells one, nothing else a remote wrote; and a new file never
    // replaces one that is there.
    let path = match (&local_file, base_copy) {
        (Some(path), _) => path.clone(),
        (None, Some(i)) => {
            let copy = &copies[i];
            let stamp =
                canonical_iso(&copy.header.timestamp).ok_or_else(|| RemoteError::Damaged {
                    session: session_id.to_string(),
                    what: format!("the copy of writer {}", copy.manifest.writer),
                    reason: format!(
                        "its header's timestamp {} is not a time",
                        printable(&copy.header.timestamp)
                    ),
                })?;
            let path = store.layout().new_session_file(&stamp, session_id.as_str());
            mark_pulled(store.layout(), session_id, remote)?;
            create_new_file(&path, &copy.bytes)?;
            // Its chunks are this store's first lines: a push sends only what follows.
            remote.state.save_pushed(
                session_id,
                &Pushed {
                    chunks: copy.manifest.chunks.clone(),
                    manifest_written: false,
                },
            )?;
            report.created = true;
            path
        }
        (None, None) => return Err(no_such(remote, session_id.as_str())),
    };
    if !added.is_empty() {
        let (mut log, _) = SessionLog::open(&path, store.fsync())?;
        let old_leaf = log.index().leaf().map(|e| e.id.clone());
        let recorded = log.index().latest_working_tree();
        for e in &added {
            log.append_existing(e)?;
        }
        if let Some(old_leaf) = old_leaf {
            // Back to where this store was: the disk still holds what that
            // leaf recorded, and the next checkpoint belongs below it.
            let nav = Navigation {
                old_leaf_id: log.index().leaf().map(|e| e.id.clone()),
                target_id: Some(old_leaf.clone()),
                skip_files: Some(true),
                working_tree_hash: recorded,
                extra: Default::default(),
            };
            log.append(nav.to_new_entry(None, Some(old_leaf))?)?;
        }
        report.entries_added = added.len();
    }
    report.session_file = path;
    report.requests = remote.backend.traffic.requests() - requests_before;
    report.bytes_down = remote.backend.traffic.bytes_down() - down_before;
    Ok(report)
}

/// `path` made with `bytes`, durably, only if nothing is there: the bytes go
/// to a temp file that is then linked to `path` (which fails when it
/// exists), so a pull can never replace a session file, whoever races it.
fn create_new_file(path: &Path, bytes: &[u8]) -> Result<(), RemoteError> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{:016x}", rand::random::<u64>()));
    let temp = path.with_file_name(name);
    write_file(&temp, bytes)?;
    let linked = fs::hard_link(&temp, path);
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            if let Some(dir) = path.parent() {
                crate::durability::sync_dir(dir).map_err(|e| RemoteError::io("syncing", dir, e))?;
            }
            Ok(())
        }
        Err(e) => Err(RemoteError::io("creating", path, e)),
    }
}

/// Records that `session_id` came from `remote` (`remote/.pulled/`), before
/// its file appears: commands that take the newest session pass it by.
fn mark_pulled(
    layout: &Layout,
    session_id: &SessionId,
    remote: &Remote,
) -> Result<(), RemoteError> {
    let marker = layout.pulled_marker(session_id.as_str());
    let body = serde_json::json!({ "url": remote.backend.url(), "pulledAt": now_iso() });
    write_file(&marker, body.to_string().as_bytes())
}

fn no_such(remote: &Remote, session: &str) -> RemoteError {
    RemoteError::NoSuchSession {
        session: session.to_owned(),
        url: remote.backend.url().to_owned(),
    }
}

/// The session a command line names, typed where it enters: text that is
/// no session id names none on any remote, and says so as a pull of a
/// missing one does.
pub fn requested_session(remote: &Remote, text: &str) -> Result<SessionId, RemoteError> {
    SessionId::parse(text).map_err(|_| no_such(remote, text))
}

/// The session file of `session_id` among the store's own.
pub(super) fn find_local(
    layout: &Layout,
    session_id: &SessionId,
) -> Result<Option<PathBuf>, RemoteError> {
    let dir = layout.sessions_dir();

    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RemoteError::io("listing", &dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| RemoteError::io("listing", &dir, e))?;
        if Layout::session_id_of(&entry.path()) == Some(session_id.as_str()) {
            return Ok(Some(entry.path()));
        }
    }
    Ok(None)
}

/// Every copy (manifest) of the session, its chunks fetched and verified.
/// A chunk this store's file already begins with is read from the file.
fn fetch_copies(
    remote: &Remote,
    session_id: &SessionId,
    local: Option<&[u8]>,
) -> Result<Vec<Copy>, RemoteError> {
    let pushed = remote.state.pushed(session_id)?;
    let mut known: HashMap<String, Vec<u8>> = HashMap::new();
    if let Some(file) = local {
        if pushed.is_prefix_of(file) {
            let mut at = 0usize;
            for c in &pushed.chunks {
                let n = c.bytes as usize;
                known.insert(c.hash.clone(), file[at..at + n].to_vec());
                at += n;
            }
        }
    }
    let damaged = |what: String, reason: String| RemoteError::Damaged {
        session: session_id.to_string(),
        what,
        reason,
    };
    let mut listed = remote.backend.list(&keys::manifests_dir(session_id))?;
    listed.sort_by(|a, b| a.key.as_ref().cmp(b.key.as_ref()));
    let mut copies = Vec::new();
    for l in listed {
        let Some(bytes) = remote.backend.get(&l.key, limits::MAX_MANIFEST_BYTES)? else {
            continue;
        };
        let manifest = Manifest::parse(&l.key, &bytes)
            .map_err(|reason| damaged(format!("manifest {}", printable(l.key.as_ref())), reason))?;
        if manifest.session_id != *session_id {
            return Err(damaged(
                format!("manifest {}", printable(l.key.as_ref())),
                "it is another session's".into(),
            ));
        }
        let file = assemble(remote, session_id, &manifest, &mut known)?;
        let (header, index) = parse_copy(Path::new(&l.key.to_string()), &file)?;
        // The header must name the session asked for: a copy that says it
        // is another would be merged into, or named after, that one.
        if header.id != session_id.as_str() {
            return Err(damaged(
                format!("the copy of writer {}", manifest.writer),
                format!("its header names session {}", printable(&header.id)),
            ));
        }
        copies.push(Copy {
            manifest,
            header,
            bytes: file,
            index,
        });
    }
    if copies.is_empty() {
        return Err(no_such(remote, session_id.as_str()));
    }
    Ok(copies)
}

/// The session file `manifest` describes: its chunks in order, each
/// fetched once (`known` holds those already here, by hash) and checked
/// against its name and length.
pub(super) fn assemble(
    remote: &Remote,
    session_id: &SessionId,
    manifest: &Manifest,
    known: &mut HashMap<String, Vec<u8>>,
) -> Result<Vec<u8>, RemoteError> {
    let damaged = |what: String, reason: String| RemoteError::Damaged {
        session: session_id.to_string(),
        what,
        reason,
    };
    // `Manifest::parse` bounded the sum of the chunks' lengths; the file
    // grows only by chunks that arrived with exactly their listed length.
    let mut file = Vec::new();
    for c in &manifest.chunks {
        if !keys::is_hash(&c.hash) {
            return Err(damaged(
                format!("the manifest of writer {}", manifest.writer),
                format!("bad chunk name {}", printable(&c.hash)),
            ));
        }
        if !known.contains_key(&c.hash) {
            let key = keys::chunk(session_id, &c.hash);
            let piece = remote
                .backend
                .get(&key, c.bytes.min(limits::MAX_SESSION_BYTES))
                .map_err(|e| match e {
                    RemoteError::Refused { reason, .. } => {
                        damaged(format!("log chunk {}", c.hash), reason)
                    }
                    other => other,
                })?
                .ok_or_else(|| damaged(format!("log chunk {}", c.hash), "missing".into()))?;
            if piece.len() as u64 != c.bytes || ObjectId::of(&piece).to_hex() != c.hash {
                return Err(damaged(
                    format!("log chunk {}", c.hash),
                    "its bytes do not hash to its name".into(),
                ));
            }
            known.insert(c.hash.clone(), piece);
        }
        let piece = &known[&c.hash];
        if let Some(reason) =
            limits::over((file.len() + piece.len()) as u64, limits::MAX_SESSION_BYTES)
        {
            return Err(damaged(
                format!("the manifest of writer {}", manifest.writer),
                format!("a session of {reason}"),
            ));
        }
        file.extend_from_slice(piece);
    }
    Ok(file)
}

/// Downloads what the trees `roots` reach that this store lacks, level by
/// level: the packs holding a level's missing objects, each pack once and
/// whole, every record verified before it is stored (a later level finds
/// its objects there). Every tree is walked, those already here too. An
/// object no remote index names, or one that arrived damaged, is an error
/// naming the checkpoint that needs it.
fn fetch_closure(
    store: &Store,
    remote: &Remote,
    session_id: &SessionId,
    roots: Vec<(ObjectId, EntryId)>,
    report: &mut PullReport,
) -> Result<(), RemoteError> {
    let index = RemoteIndex::load(&remote.backend, &remote.state)?;
    // Never uploaded (push.rs): made here.
    store.put_tree(&Tree::default())?;
    let mut seen: HashSet<ObjectId> = HashSet::from([empty_tree_id()]);
    let mut downloaded: HashSet<String> = HashSet::new();
    // Objects this pull stored.
    let mut fetched: HashSet<ObjectId> = HashSet::new();
    // Records of downloaded packs that did not verify, and why.
    let mut bad: HashMap<ObjectId, String> = HashMap::new();
    // (object, is a tree, the checkpoint that needs it)
    let mut level: Vec<(ObjectId, bool, EntryId)> =
        roots.into_iter().map(|(id, e)| (id, true, e)).collect();
    while !level.is_empty() {
        // Every tree is walked, the store's own too: a pull cut short
        // leaves trees whose children never came, so a tree being here does
        // not make it complete. A blob here is whole (it verifies on read).
        let mut wanted: Vec<(ObjectId, bool, EntryId)> = Vec::new();
        let mut missing: HashSet<ObjectId> = HashSet::new();
        for (id, tree, entry) in level {
            if !seen.insert(id) {
                continue;
            }
            let here = fetched.contains(&id) || store.contains(&id);
            if !here {
                missing.insert(id);
            }
            if tree || !here {
                wanted.push((id, tree, entry));
            }
        }
        let fail = |id: &ObjectId, entry: &EntryId, problem: String| RemoteError::Object {
            session: session_id.to_string(),
            checkpoint: entry.to_string(),
            object: id.to_hex(),
            problem,
        };
        // The packs this level needs, each downloaded once.
        let mut packs: Vec<&RemotePack> = Vec::new();
        for (id, _, entry) in wanted.iter().filter(|w| missing.contains(&w.0)) {
            match index.locate(id) {
                Some((pack, _)) if !downloaded.contains(&pack.name) => {
                    if !packs.iter().any(|p| p.name == pack.name) {
                        packs.push(pack);
                    }
                }
                Some(_) => {}
                None => return Err(fail(id, entry, "is not on the remote".into())),
            }
        }
        for pack in packs {
            downloaded.insert(pack.name.clone());
            report.packs += 1;
            let mut reader = PackStream::new(pack, |e| !store.contains_now(&e.id));
            let mut stored = |e: &IndexEntry, record: &[u8]| -> Result<(), RemoteError> {
                match store.put_record(&e.id, record) {
                    Ok(_) => {
                        report.objects += 1;
                        fetched.insert(e.id);
                        Ok(())
                    }
                    Err(crate::store::StoreError::Corrupt { .. }) => {
                        bad.insert(
                            e.id,
                            format!(
                                "arrived altered: its content does not hash to its id (pack {})",
                                pack.name
                            ),
                        );
                        Ok(())
                    }
                    Err(other) => Err(other.into()),
                }
            };
            // A pack its index names but that is gone reads as empty.
            remote.backend.stream(
                &keys::pack(&pack.name),
                pack.size.min(limits::MAX_PACK_BYTES),
                |piece| reader.feed(piece, &mut stored),
            )?;
            for e in reader.unread() {
                bad.insert(
                    e.id,
                    format!(
                        "arrived truncated (pack {} is not as long as listed)",
                        pack.name
                    ),
                );
            }
        }
        // Every wanted object is here now, or the pull fails naming it.
        let mut next = Vec::new();
        for (id, tree, entry) in wanted {
            if let Some(problem) = bad.get(&id) {
                return Err(fail(&id, &entry, problem.clone()));
            }
            if missing.contains(&id) && !fetched.contains(&id) && !store.contains_now(&id) {
                return Err(fail(&id, &entry, "did not arrive with its pack".into()));
            }
            if !tree {
                continue;
            }
            let t = store.get_tree(&id)?;
            for child in t.entries.values() {
                if child.has_object() {
                    next.push((child.id, child.kind == EntryKind::Tree, entry.clone()));
                }
            }
        }
        level = next;
    }
    Ok(())
}

/// A pack's records as its body streams in: the records wanted, in the
/// order of their offsets, each handed over once its last byte arrived.
/// Only the bytes from the next wanted record on are held, so memory is
/// bounded by one record and one piece, never by what the pack claims.
struct PackStream {
    /// Wanted records by offset, the next one first.
    wanted: std::collections::VecDeque<IndexEntry>,
    /// Bytes held, and the pack offset of their first.
    held: Vec<u8>,
    held_from: u64,
    /// The pack offset just past the bytes that arrived.
    arrived: u64,
}

impl PackStream {
    fn new(pack: &RemotePack, want: impl Fn(&IndexEntry) -> bool) -> PackStream {
        let mut wanted: Vec<IndexEntry> =
            pack.entries.iter().filter(|e| want(e)).copied().collect();
        wanted.sort_by_key(|e| (e.offset, e.len));
        PackStream {
            wanted: wanted.into(),
            held: Vec::new(),
            held_from: 0,
            arrived: 0,
        }
    }

    fn feed(
        &mut self,
        piece: &[u8],
        each: &mut impl FnMut(&IndexEntry, &[u8]) -> Result<(), RemoteError>,
    ) -> Result<(), RemoteError> {
        let piece_from = self.arrived;
        self.arrived += piece.len() as u64;
        let Some(first) = self.wanted.front() else {
            return Ok(());
        };
        // Keep what lies at or after the next wanted record's start.
        let keep_from = first.offset.max(piece_from);
        if keep_from < self.arrived {
            if self.held.is_empty() {
                self.held_from = keep_from;
            }
            self.held
                .extend_from_slice(&piece[(keep_from - piece_from) as usize..]);
        }
        while let Some(e) = self.wanted.front().copied() {
            let end = e.offset + e.len;
            if end > self.arrived {
                break;
            }
            self.wanted.pop_front();
            let at = (e.offset - self.held_from) as usize;
            each(&e, &self.held[at..at + e.len as usize])?;
            // Drop what no wanted record still needs.
            let next = self.wanted.front().map_or(self.arrived, |n| n.offset);
            let drop = next
                .saturating_sub(self.held_from)
                .min(self.held.len() as u64) as usize;
            self.held.drain(..drop);
            self.held_from += drop as u64;
        }
        Ok(())
    }

    /// Wanted records whose bytes never arrived (the pack was shorter).
    fn unread(self) -> impl Iterator<Item = IndexEntry> {
        self.wanted.into_iter()
    }
}
