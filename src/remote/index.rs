//! Which objects a remote holds, and in which pack: the union of the
//! indexes of its packs. A pack counts once its index is listed (it is
//! uploaded after the pack, docs/remote.md "Crash consistency"); indexes
//! never change, so each is downloaded once and kept in `remote/<name>/packs/`.

use std::collections::HashMap;
use std::fs;
use std::io;

use super::backend::Backend;
use super::error::RemoteError;
use super::keys;
use super::state::{write_file, State};
use crate::store::{decode_index, IndexEntry, ObjectId};

/// One pack on the remote.
#[derive(Clone, Debug)]
pub struct RemotePack {
    pub name: String,
    /// Its size as listed: what its index's offsets must lie within, and
    /// what a download must bring.
    pub size: u64,
    /// What its index says it holds.
    pub entries: Vec<IndexEntry>,
}

#[derive(Default)]
pub struct RemoteIndex {
    pub packs: Vec<RemotePack>,
    by_id: HashMap<ObjectId, (u32, IndexEntry)>,
}

impl RemoteIndex {
    /// Lists the remote's packs (one request per thousand) and reads the
    /// index of each, from the local cache or else from the remote. An
    /// index that does not decode is logged and its pack left out: its
    /// objects are then uploaded again, never trusted.
    pub fn load(backend: &Backend, state: &State) -> Result<RemoteIndex, RemoteError> {
        let mut packs: HashMap<String, u64> = HashMap::new();
        let mut indexes: Vec<String> = Vec::new();
        for listed in backend.list(&keys::packs_dir())? {
            match keys::parse_pack_key(&listed.key) {
                Some((name, false)) => {
                    packs.insert(name, listed.size);
                }
                Some((name, true)) => indexes.push(name),
                None => {}
            }
        }
        indexes.sort();
        let mut out = RemoteIndex::default();
        let cache = state.packs_dir();
        for name in indexes {
            // An index without its pack: a gc removing it, or a damaged remote.
            let Some(&size) = packs.get(&name) else {
                continue;
            };
            let cached = cache.join(format!("{name}.idx"));
            let bytes = match fs::read(&cached) {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match backend.get(&keys::pack_index(&name))? {
                        Some(b) => {
                            if decode_index(&b, size).is_ok() {
                                write_file(&cached, &b)?;
                            }
                            b
                        }
                        None => continue,
                    }
                }
                Err(e) => return Err(RemoteError::io("reading", &cached, e)),
            };
            match decode_index(&bytes, size) {
                Ok(entries) => out.add(RemotePack {
                    name,
                    size,
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
        for e in &pack.entries {
            self.by_id.entry(e.id).or_insert((slot, *e));
        }
        self.packs.push(pack);
    }

    pub fn has(&self, id: &ObjectId) -> bool {
        self.by_id.contains_key(id)
    }

    /// The pack holding `id` and where in it.
    pub fn locate(&self, id: &ObjectId) -> Option<(&RemotePack, IndexEntry)> {
        let (slot, e) = self.by_id.get(id)?;
        Some((&self.packs[*slot as usize], *e))
    }
}
