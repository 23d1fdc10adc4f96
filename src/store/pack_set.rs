//! The packs of one store as this process sees them: where each packed object
//! is, reading it, and picking up packs other processes published or deleted.
//! Writing packs and publishing them at the end of a batch is `publish.rs`'s;
//! gc's listing, rewriting and deleting of packs is `gc.rs`'s; merging small
//! packs is `merge.rs`'s. All of them are `impl PackSet` blocks over the state
//! kept here.
//!
//! Readers trust only packs whose index exists; an index is renamed into
//! place only after the pack's records are durable, and another process's
//! new packs are picked up when a lookup misses (`reload`).

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::{Instant, SystemTime};

use dashmap::DashMap;

use super::error::StoreError;
use super::layout::Layout;
use super::listing::KNOWN_OBJECT_TTL;
use super::object_id::ObjectId;
use super::pack::{
    decode_index, index_path, is_pack_name, pack_path, read_record, IndexEntry, PackWriter,
};

/// Where a packed object is: a slot in [`PackSet::slots`] and its record.
/// 12 bytes, since there is one per packed object in memory: packs stay
/// under 4 GiB (a writer closes one at
/// [`MAX_PACK_BYTES`](super::pack::MAX_PACK_BYTES); an index naming
/// records beyond is refused).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loc {
    slot: u32,
    offset: u32,
    len: u32,
}

impl Loc {
    fn new(slot: u32, e: &IndexEntry) -> Option<Loc> {
        Some(Loc {
            slot,
            offset: u32::try_from(e.offset).ok()?,
            len: u32::try_from(e.len).ok()?,
        })
    }

    fn entry(&self, id: ObjectId) -> IndexEntry {
        IndexEntry {
            id,
            offset: u64::from(self.offset),
            len: u64::from(self.len),
        }
    }

    /// Bytes the object takes in its pack (header and payload).
    pub fn len(&self) -> u64 {
        u64::from(self.len)
    }
}

/// How many times [`PackSet::read`] looks for an object whose pack went
/// away meanwhile: each retry follows a reload that found packs published
/// or deleted since, so only a store whose packs keep changing under the
/// reader uses them all.
const READ_ATTEMPTS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// Being written by this process; no index yet.
    Writing,
    /// Has its index on disk.
    Published,
    /// Deleted (by gc here or elsewhere); its slot number is never reused.
    Gone,
}

#[derive(Debug)]
struct Slot {
    name: String,
    state: SlotState,
    /// When this process last set the pack's mtime (a dedup hit, see
    /// [`KNOWN_OBJECT_TTL`]).
    touched: Option<Instant>,
    /// The pack file's length when it was loaded or published: which packs
    /// are small enough to merge (`merge.rs`).
    bytes: u64,
}

#[derive(Default)]
struct Writing {
    current: Option<(u32, PackWriter)>,
    /// Full packs of this batch, closed before it ended.
    closed: Vec<(u32, PackWriter)>,
}

pub(crate) struct PackSet {
    dir: PathBuf,
    /// `<store>/gc.lock`: a merge runs only while no gc does.
    gc_lock: PathBuf,
    fsync: bool,
    by_id: DashMap<ObjectId, Loc>,
    slots: RwLock<Vec<Slot>>,
    /// Packs already opened for reading, by slot: walking a tree reads a
    /// record per directory, and opening the pack for each cost a one-shot
    /// hook a tenth of its time. A pack gc deleted must read as gone, as it
    /// did when every read opened it by name (an object gc took is never
    /// vouched for again: docs/architecture.md rule 10), so each read checks
    /// the descriptor's link count — an `fstat`, with no path to walk.
    open: DashMap<u32, std::sync::Arc<fs::File>>,
    writing: Mutex<Writing>,
}

impl PackSet {
    /// Loads the index of every published pack under `objects/pack/`.
    pub fn open(layout: &Layout, fsync: bool) -> Result<PackSet, StoreError> {
        let set = PackSet {
            dir: layout.pack_dir(),
            gc_lock: layout.gc_lock(),
            fsync,
            by_id: DashMap::new(),
            open: DashMap::new(),
            slots: RwLock::new(Vec::new()),
            writing: Mutex::new(Writing::default()),
        };
        set.reload()?;
        Ok(set)
    }

    pub fn lookup(&self, id: &ObjectId) -> Option<Loc> {
        self.by_id.get(id).map(|l| *l)
    }

    fn slot_name(&self, slot: u32) -> Option<(String, SlotState)> {
        let slots = self.slots.read().ok()?;
        let s = slots.get(slot as usize)?;
        Some((s.name.clone(), s.state))
    }

    /// The record (object header and payload) of a packed object; `None` if
    /// no pack known here or published since holds it.
    ///
    /// A pack may go between the reload that found it and the read (small
    /// packs are merged every few batches, and a merged pack is merged
    /// again): as long as reloading changes what is known, the read is
    /// tried again, up to [`READ_ATTEMPTS`] times.
    pub fn read(&self, id: &ObjectId) -> Result<Option<Vec<u8>>, StoreError> {
        for attempt in 0..READ_ATTEMPTS {
            if let Some(loc) = self.lookup(id) {
                if let Some((name, state)) = self.slot_name(loc.slot) {
                    if state != SlotState::Gone {
                        let path = pack_path(&self.dir, &name);
                        match self.read_at(loc.slot, &path, u64::from(loc.offset), loc.len()) {
                            Ok(bytes) => return Ok(Some(bytes)),
                            // gc here or elsewhere rewrote or removed it.
                            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                            // A pack cut short: the record is corrupt.
                            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                                return Err(StoreError::Corrupt { id: *id });
                            }
                            Err(e) => return Err(StoreError::io("reading pack", path, e)),
                        }
                    }
                }
            }
            if attempt + 1 == READ_ATTEMPTS || !self.reload()? {
                break;
            }
        }
        Ok(None)
    }

    /// One record of the pack in `slot` (at `path`), through its open
    /// descriptor.
    fn read_at(&self, slot: u32, path: &Path, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        use std::os::unix::fs::MetadataExt;
        let file = match self.open.get(&slot).map(|f| f.clone()) {
            Some(f) if f.metadata()?.nlink() > 0 => f,
            Some(_) => {
                self.open.remove(&slot);
                return Err(io::Error::from(io::ErrorKind::NotFound));
            }
            None => {
                let f = std::sync::Arc::new(fs::File::open(path)?);
                self.open.insert(slot, f.clone());
                f
            }
        };
        read_record(&file, offset, len)
    }

    /// Re-reads the pack directory: loads packs published since (by another
    /// process) and forgets packs deleted since. Returns whether anything
    /// changed.
    ///
    /// A pack is deleted only after its objects that stay were copied into
    /// another (a merge, gc's rewrite), and this may see the copy published
    /// in an earlier reload and the original gone only now: each object of
    /// a deleted pack is then looked for in the packs that remain.
    pub fn reload(&self) -> Result<bool, StoreError> {
        let on_disk = self.published_names()?;
        let mut changed = false;
        let mut gone: Vec<u32> = Vec::new();
        let (known, writing): (HashSet<String>, HashSet<u32>) = {
            let mut slots = self.slots.write().map_err(|_| poisoned(&self.dir))?;
            for (i, s) in slots.iter_mut().enumerate() {
                if s.state == SlotState::Published && !on_disk.contains(&s.name) {
                    s.state = SlotState::Gone;
                    self.open.remove(&(i as u32));
                    gone.push(i as u32);
                }
            }
            (
                slots.iter().map(|s| s.name.clone()).collect(),
                (0..slots.len() as u32)
                    .filter(|&i| slots[i as usize].state == SlotState::Writing)
                    .collect(),
            )
        };
        let mut orphans: HashSet<ObjectId> = HashSet::new();
        if !gone.is_empty() {
            self.by_id.retain(|id, loc| {
                let keep = !gone.contains(&loc.slot);
                if !keep {
                    orphans.insert(*id);
                }
                keep
            });
            changed = true;
        }
        let mut loaded = HashSet::new();
        for name in on_disk.iter().filter(|n| !known.contains(*n)) {
            let Some((entries, bytes)) = self.read_index(name)? else {
                continue;
            };
            let slot = self.push_slot(name.clone(), SlotState::Published, bytes)?;
            let locs: Option<Vec<Loc>> = entries.iter().map(|e| Loc::new(slot, e)).collect();
            let Some(locs) = locs else {
                tracing::warn!(pack = %name, "pack larger than 4 GiB; its objects are unavailable");
                self.set_state(slot, SlotState::Gone);
                continue;
            };
            for (e, loc) in entries.iter().zip(locs) {
                // The newest copy is the one a merge or rewrite leaves; a
                // record of this process's pack being written stays (its
                // index is made from this map).
                match self.by_id.entry(e.id) {
                    dashmap::Entry::Occupied(mut o) => {
                        if !writing.contains(&o.get().slot) {
                            o.insert(loc);
                        }
                    }
                    dashmap::Entry::Vacant(v) => {
                        v.insert(loc);
                    }
                }
            }
            loaded.insert(slot);
            changed = true;
        }
        orphans.retain(|id| !self.by_id.contains_key(id));
        if !orphans.is_empty() {
            self.find_again(orphans, &loaded)?;
        }
        Ok(changed)
    }

    /// Points `ids` (objects of a deleted pack) at another published pack
    /// that holds them, reading the indexes of those not in `skip` (just
    /// loaded). Objects gc deleted are found nowhere and stay unmapped.
    fn find_again(
        &self,
        mut ids: HashSet<ObjectId>,
        skip: &HashSet<u32>,
    ) -> Result<(), StoreError> {
        let published: Vec<(u32, String)> = {
            let slots = self.slots.read().map_err(|_| poisoned(&self.dir))?;
            slots
                .iter()
                .enumerate()
                .filter(|(i, s)| s.state == SlotState::Published && !skip.contains(&(*i as u32)))
                .map(|(i, s)| (i as u32, s.name.clone()))
                .collect()
        };
        for (slot, name) in published {
            if ids.is_empty() {
                break;
            }
            let Some((entries, _)) = self.read_index(&name)? else {
                continue;
            };
            for e in entries {
                if ids.remove(&e.id) {
                    if let Some(loc) = Loc::new(slot, &e) {
                        self.by_id.insert(e.id, loc);
                    }
                }
            }
        }
        Ok(())
    }

    /// What `objects/pack/` holds (nothing before the first pack).
    fn dir_entries(&self) -> Result<Vec<fs::DirEntry>, StoreError> {
        let list = || -> io::Result<Vec<fs::DirEntry>> { fs::read_dir(&self.dir)?.collect() };
        match list() {
            Ok(entries) => Ok(entries),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(StoreError::io("listing packs", &self.dir, e)),
        }
    }

    /// Names of the packs that have an index.
    fn published_names(&self) -> Result<HashSet<String>, StoreError> {
        let entries = self.dir_entries()?;
        let mut out = HashSet::new();
        for entry in entries {
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".idx")) else {
                continue;
            };
            if is_pack_name(stem) {
                out.insert(stem.to_string());
            }
        }
        Ok(out)
    }

    /// A pack's index entries and the pack's length; `None` (with a warning)
    /// for a pack whose index or pack file vanished or does not decode: its
    /// objects are then missing, which readers report and gc treats as a
    /// reason to delete nothing.
    fn read_index(&self, name: &str) -> Result<Option<(Vec<IndexEntry>, u64)>, StoreError> {
        let idx = index_path(&self.dir, name);
        let bytes = match fs::read(&idx) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io("reading pack index", idx, e)),
        };
        let pack = pack_path(&self.dir, name);
        let pack_len = match fs::metadata(&pack) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::warn!(pack = %pack.display(), "pack index without its pack; ignored");
                return Ok(None);
            }
            Err(e) => return Err(StoreError::io("reading pack", pack, e)),
        };
        match decode_index(&bytes, pack_len) {
            Ok(entries) => Ok(Some((entries, pack_len))),
            Err(why) => {
                tracing::warn!(index = %idx.display(), why, "unreadable pack index; its objects are unavailable");
                Ok(None)
            }
        }
    }

    fn push_slot(&self, name: String, state: SlotState, bytes: u64) -> Result<u32, StoreError> {
        let mut slots = self.slots.write().map_err(|_| poisoned(&self.dir))?;
        slots.push(Slot {
            name,
            state,
            touched: None,
            bytes,
        });
        Ok((slots.len() - 1) as u32)
    }

    fn set_bytes(&self, slot: u32, bytes: u64) {
        if let Ok(mut slots) = self.slots.write() {
            if let Some(s) = slots.get_mut(slot as usize) {
                s.bytes = bytes;
            }
        }
    }

    fn set_state(&self, slot: u32, state: SlotState) {
        if state == SlotState::Gone {
            self.open.remove(&slot);
        }
        if let Ok(mut slots) = self.slots.write() {
            if let Some(s) = slots.get_mut(slot as usize) {
                s.state = state;
            }
        }
    }

    /// After a dedup hit: sets the pack's mtime to now, at most once per
    /// [`KNOWN_OBJECT_TTL`], so gc (which spares young packs) keeps it.
    pub fn touch(&self, loc: Loc) {
        let due = match self.slots.read() {
            Ok(slots) => slots.get(loc.slot as usize).is_some_and(|s| {
                s.state == SlotState::Published
                    && s.touched.is_none_or(|t| t.elapsed() >= KNOWN_OBJECT_TTL)
            }),
            Err(_) => false,
        };
        if !due {
            return;
        }
        let Some((name, _)) = self.slot_name(loc.slot) else {
            return;
        };
        // Best effort, as for loose objects: a failure only makes the pack
        // look older to a concurrent gc.
        if let Ok(f) = fs::File::options()
            .write(true)
            .open(pack_path(&self.dir, &name))
        {
            let _ = f.set_modified(SystemTime::now());
        }
        if let Ok(mut slots) = self.slots.write() {
            if let Some(s) = slots.get_mut(loc.slot as usize) {
                s.touched = Some(Instant::now());
            }
        }
    }
}

fn poisoned(dir: &Path) -> StoreError {
    StoreError::io(
        "using packs",
        dir,
        io::Error::other("a thread panicked while holding the pack state"),
    )
}

mod gc;
mod merge;
mod publish;
#[cfg(test)]
use merge::{MERGE_AT, SMALL_PACK_BYTES};

#[cfg(test)]
mod tests;
