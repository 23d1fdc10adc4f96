//! Which objects a remote holds, and in which pack: the union of the
//! indexes of its packs. A pack counts once its index is listed (it is
//! uploaded after the pack, docs/remote.md "Crash consistency"); indexes
//! never change, so each is downloaded once and kept in `remote/<name>/packs/`.

use std::collections::HashMap;
use std::fs;
use std::io;

use std::time::SystemTime;

use super::backend::{Backend, Listed};
use super::error::RemoteError;
use super::keys::{self, PackKey};
use super::limits;
use super::state::{write_file, State};
use crate::store::{decode_index, IndexEntry, ObjectId};

/// One pack on the remote.
#[derive(Clone, Debug)]
pub struct RemotePack {
    pub name: String,
    /// Its size as listed: what its index's offsets must lie within, and
    /// what a download must bring.
    pub size: u64,
    /// When it was uploaded, by the server's listing.
    pub modified: SystemTime,
    /// When gc marked it unreferenced (`packs/<name>.gc`), if it did.
    pub marked: Option<SystemTime>,
    /// What its index says it holds.
    pub entries: Vec<IndexEntry>,
}

#[derive(Default)]
pub struct RemoteIndex {
    pub packs: Vec<RemotePack>,
    /// Keys under `packs/` no reader counts on: a pack without its index
    /// (a push cut short), a mark or an index without its pack (a gc cut
    /// short). gc deletes them once older than its grace period.
    pub strays: Vec<Listed>,
    by_id: HashMap<ObjectId, (u32, IndexEntry)>,
}

impl RemoteIndex {
    /// Lists the remote's packs (one request per thousand) and reads the
    /// index of each, from the local cache or else from the remote. An
    /// index that does not decode is logged and its pack left out: its
    /// objects are then uploaded again, never trusted.
    pub fn load(backend: &Backend, state: &State) -> Result<RemoteIndex, RemoteError> {
        let mut packs: HashMap<String, Listed> = HashMap::new();
        let mut indexes: Vec<String> = Vec::new();
        let mut marked: HashMap<String, Listed> = HashMap::new();
        for listed in backend.list(&keys::packs_dir())? {
            match keys::parse_pack_key(&listed.key) {
                Some(PackKey::Pack(name)) => {
                    packs.insert(name, listed);
                }
                Some(PackKey::Index(name)) => indexes.push(name),
                Some(PackKey::Mark(name)) => {
                    marked.insert(name, listed);
                }
                None => {}
            }
        }
        indexes.sort();
        let mut out = RemoteIndex::default();
        for (name, listed) in &packs {
            if !indexes.contains(name) {
                out.strays.push(listed.clone());
            }
        }
        for (name, listed) in &marked {
            if !packs.contains_key(name) {
                out.strays.push(listed.clone());
            }
        }
        let cache = state.packs_dir();
        for name in indexes {
            // An index without its pack: a gc removing it, or a damaged remote.
            let Some(listed) = packs.get(&name) else {
                out.strays.push(Listed {
                    key: keys::pack_index(&name),
                    size: 0,
                    modified: SystemTime::UNIX_EPOCH,
                });
                continue;
            };
            let size = listed.size;
            let modified = listed.modified;
            let mark = marked.get(&name).map(|m| m.modified);
            let cached = cache.join(format!("{name}.idx"));
            let bytes = match fs::read(&cached) {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match backend.get(&keys::pack_index(&name), limits::MAX_INDEX_BYTES) {
                        Ok(Some(b)) => {
                            if decode_index(&b, size).is_ok() {
                                write_file(&cached, &b)?;
                            }
                            b
                        }
                        Ok(None) => continue,
                        // Past its bound: left out like one that does not decode.
                        Err(RemoteError::Refused { reason, .. }) => {
                            tracing::warn!(pack = %name, %reason, "a pack index on the remote is refused; its objects count as absent");
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(RemoteError::io("reading", &cached, e)),
            };
            match decode_index(&bytes, size) {
                Ok(entries) => out.add(RemotePack {
                    name,
                    size,
                    modified,
                    marked: mark,
                    entries,
                }),
                Err(reason) => {
                    tracing::warn!(pack = %name, %reason, "a pack index on the remote does not read; its objects count as absent");
                }
            }
        }
        Ok(out)
    }

    pub fn add(&mut self, pack: RemotePack) {
        let slot = self.packs.len() as u32;
        // A marked pack may be deleted by the next gc: a push does not
        // count on it (its objects go up again), a pull still reads it.
        for e in pack.entries.iter().filter(|_| pack.marked.is_none()) {
            self.by_id.entry(e.id).or_insert((slot, *e));
        }
        self.packs.push(pack);
    }

    pub fn has(&self, id: &ObjectId) -> bool {
        self.by_id.contains_key(id)
    }

    /// The pack holding `id` and where in it (an unmarked one first).
    pub fn locate(&self, id: &ObjectId) -> Option<(&RemotePack, IndexEntry)> {
        if let Some((slot, e)) = self.by_id.get(id) {
            return Some((&self.packs[*slot as usize], *e));
        }
        self.packs
            .iter()
            .filter(|p| p.marked.is_some())
            .find_map(|p| {
                let at = p.entries.binary_search_by_key(id, |e| e.id).ok()?;
                Some((p, p.entries[at]))
            })
    }
}
