//! The packs of one store as this process sees them: where each packed object
//! is, the pack being written, publishing packs at the end of a batch, and
//! gc's rewriting of packs that hold garbage.
//!
//! Readers trust only packs whose index exists; an index is renamed into
//! place only after the pack's records are durable, and another process's
//! new packs are picked up when a lookup misses (`reload`).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::{Instant, SystemTime};

use dashmap::DashMap;

use super::codec;
use super::error::StoreError;
use super::layout::{Layout, TEMP_PREFIX};
use super::listing::{remove_if_stale, ObjectInfo, KNOWN_OBJECT_TTL};
use super::object_id::ObjectId;
use super::pack::{
    decode_index, encode_index, index_path, index_temp_path, is_pack_name, pack_path, read_record,
    IndexEntry, PackWriter, MAX_PACK_BYTES,
};
use crate::durability::{rename_into_place, sync_dir, write_temp, BATCH_SYNC};

/// Where a packed object is: a slot in [`PackSet::slots`] and its record.
/// 12 bytes, since there is one per packed object in memory: packs stay
/// under 4 GiB (a writer closes one at [`MAX_PACK_BYTES`]; an index naming
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

/// Packs finished in this batch, with their index written to a temp file,
/// waiting for [`PackSet::publish`].
pub(crate) struct Sealed {
    packs: Vec<(u32, PackWriter, PathBuf)>,
}

impl Sealed {
    pub fn is_empty(&self) -> bool {
        self.packs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.packs.len()
    }

    /// Without syncfs: flush each pack and index temp on its own.
    pub fn sync_each(&self) -> io::Result<()> {
        for (_, w, temp) in &self.packs {
            w.sync_data()?;
            fs::File::open(temp)?.sync_all()?;
        }
        Ok(())
    }
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

/// One pack as gc sees it.
struct PackListing {
    slot: u32,
    name: String,
    modified: SystemTime,
    entries: Vec<IndexEntry>,
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

    /// Appends an object to the pack being written (starting one if needed);
    /// returns the record's length.
    pub fn append(&self, id: ObjectId, header: &[u8], payload: &[u8]) -> Result<u64, StoreError> {
        let mut writing = self.writing.lock().map_err(|_| poisoned(&self.dir))?;
        if writing.current.is_none() {
            let writer = PackWriter::create(&self.dir)
                .map_err(|e| StoreError::io("creating pack", &self.dir, e))?;
            let slot = self.push_slot(writer.name.clone(), SlotState::Writing, 0)?;
            writing.current = Some((slot, writer));
        }
        let Some((slot, writer)) = writing.current.as_mut() else {
            return Err(poisoned(&self.dir));
        };
        let slot = *slot;
        let entry = writer
            .append(id, &[header, payload])
            .map_err(|e| StoreError::io("writing pack", &writer.path, e))?;
        let full = writer.len() >= MAX_PACK_BYTES;
        let loc = Loc::new(slot, &entry).ok_or_else(|| {
            StoreError::io(
                "writing pack",
                &writer.path,
                io::Error::other("record beyond 4 GiB"),
            )
        })?;
        self.by_id.insert(id, loc);
        if full {
            if let Some(done) = writing.current.take() {
                writing.closed.push(done);
            }
        }
        Ok(entry.len)
    }

    /// Whether a batch has packs to publish.
    pub fn has_pending(&self) -> bool {
        self.writing
            .lock()
            .map(|w| w.current.is_some() || !w.closed.is_empty())
            .unwrap_or(true)
    }

    /// Ends the batch: writes each pending pack's index to a temp file. The
    /// caller makes packs and temps durable, then calls [`PackSet::publish`].
    pub fn seal(&self) -> Result<Sealed, StoreError> {
        let pending: Vec<(u32, PackWriter)> = {
            let mut writing = self.writing.lock().map_err(|_| poisoned(&self.dir))?;
            let mut all = std::mem::take(&mut writing.closed);
            all.extend(writing.current.take());
            all
        };
        let slots: Vec<u32> = pending.iter().map(|(slot, _)| *slot).collect();
        let mut entries = self.entries_of(&slots);
        let mut sealed = Sealed { packs: Vec::new() };
        let mut pending = pending.into_iter();
        while let Some((slot, writer)) = pending.next() {
            let mut of_pack = entries.remove(&slot).unwrap_or_default();
            match self.seal_one(&writer, &mut of_pack) {
                Ok(temp) => sealed.packs.push((slot, writer, temp)),
                Err(e) => {
                    // Leave this and the rest for the next sync to retry,
                    // and unseal what was sealed (it is retried too).
                    self.unseal(sealed);
                    self.requeue(std::iter::once((slot, writer)).chain(pending));
                    return Err(e);
                }
            }
        }
        Ok(sealed)
    }

    /// The entries of the packs in `slots`, from the map (the only list of
    /// them), in one pass over it however many packs a batch filled.
    fn entries_of(&self, slots: &[u32]) -> HashMap<u32, Vec<IndexEntry>> {
        let mut out: HashMap<u32, Vec<IndexEntry>> = HashMap::new();
        for kv in self.by_id.iter() {
            let loc = kv.value();
            if slots.contains(&loc.slot) {
                out.entry(loc.slot).or_default().push(loc.entry(*kv.key()));
            }
        }
        out
    }

    fn seal_one(
        &self,
        writer: &PackWriter,
        entries: &mut Vec<IndexEntry>,
    ) -> Result<PathBuf, StoreError> {
        let lost = writer
            .is_unlinked()
            .map_err(|e| StoreError::io("checking pack", &writer.path, e))?;
        if lost {
            return Err(StoreError::io(
                "sealing pack",
                &writer.path,
                io::Error::other("the pack was deleted while being written"),
            ));
        }
        let temp = index_temp_path(&self.dir, &writer.name);
        // The first half of an atomic write (durability::atomic_write) and
        // not synced: publishing is two-phase for a whole batch, so that one
        // syncfs makes every pack and index temp durable before the first
        // index is renamed into place (docs/format.md "Packs", "Writing").
        write_temp(&temp, false, |f| f.write_all(&encode_index(entries)))
            .map_err(|e| StoreError::io("writing pack index", &temp, e))?;
        Ok(temp)
    }

    /// Undoes [`PackSet::seal`] after a later step of the batch failed: the
    /// index temps go, the packs wait for the next sync.
    pub fn unseal(&self, sealed: Sealed) {
        let writers = sealed.packs.into_iter().map(|(slot, w, temp)| {
            let _ = fs::remove_file(temp);
            (slot, w)
        });
        self.requeue(writers);
    }

    fn requeue(&self, writers: impl Iterator<Item = (u32, PackWriter)>) {
        if let Ok(mut writing) = self.writing.lock() {
            for (slot, w) in writers {
                if w.is_unlinked().unwrap_or(true) {
                    // Its records are gone: forget them so puts write them again.
                    self.by_id.retain(|_, loc| loc.slot != slot);
                    self.set_state(slot, SlotState::Gone);
                } else {
                    writing.closed.push((slot, w));
                }
            }
        }
    }

    /// Renames each sealed pack's index into place (after the caller made
    /// the packs durable) and, with fsync, syncs the pack directory so the
    /// indexes are durable before anything that references their objects.
    pub fn publish(&self, sealed: Sealed) -> Result<(), StoreError> {
        let mut published = false;
        let mut packs = sealed.packs.into_iter();
        while let Some((slot, writer, temp)) = packs.next() {
            let idx = index_path(&self.dir, &writer.name);
            if let Err(e) = rename_into_place(&temp, &idx) {
                // This pack and the rest wait for the next sync; dropping
                // them would leave the map naming records no index holds.
                let rest = std::iter::once((slot, writer, temp)).chain(packs);
                self.unseal(Sealed {
                    packs: rest.collect(),
                });
                return Err(StoreError::io("publishing pack index", idx, e));
            }
            // Visible to every reader from here on, synced or not.
            self.set_state(slot, SlotState::Published);
            self.set_bytes(slot, writer.len());
            published = true;
        }
        if self.fsync && published {
            sync_dir(&self.dir).map_err(|e| StoreError::io("syncing packs", &self.dir, e))?;
        }
        Ok(())
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

    /// Published packs with their entries, read from disk (gc's view).
    fn listing(&self) -> Result<Vec<PackListing>, StoreError> {
        self.reload()?;
        let named: Vec<(u32, String)> = {
            let slots = self.slots.read().map_err(|_| poisoned(&self.dir))?;
            slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.state == SlotState::Published)
                .map(|(i, s)| (i as u32, s.name.clone()))
                .collect()
        };
        let mut out = Vec::new();
        for (slot, name) in named {
            let pack = pack_path(&self.dir, &name);
            let modified = match fs::metadata(&pack).and_then(|m| m.modified()) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io("reading pack", pack, e)),
            };
            if let Some((entries, _)) = self.read_index(&name)? {
                out.push(PackListing {
                    slot,
                    name,
                    modified,
                    entries,
                });
            }
        }
        Ok(out)
    }

    /// Every object of every published pack, with the pack's mtime.
    pub fn list_objects(&self) -> Result<Vec<ObjectInfo>, StoreError> {
        Ok(self
            .listing()?
            .into_iter()
            .flat_map(|p| {
                p.entries.into_iter().map(move |e| ObjectInfo {
                    id: e.id,
                    stored_bytes: e.len,
                    modified: p.modified,
                    packed: true,
                })
            })
            .collect())
    }

    /// Bytes of pack and index files on disk (headers and indexes included).
    pub fn file_bytes(&self) -> Result<u64, StoreError> {
        let entries = self.dir_entries()?;
        let mut total = 0;
        for entry in entries {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let stem = name
                .strip_suffix(".idx")
                .or_else(|| name.strip_suffix(".pack"));
            if stem.is_some_and(is_pack_name) {
                total += entry.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
        Ok(total)
    }

    /// gc's sweep of packed objects: every published pack older than
    /// `cutoff` that holds an object `live` rejects is rewritten without it
    /// (records copied as they are), or deleted when nothing in it is live.
    /// Returns (objects removed, bytes freed); with `dry_run` only counts.
    pub fn prune(
        &self,
        live: &dyn Fn(&ObjectId) -> bool,
        cutoff: Option<SystemTime>,
        dry_run: bool,
    ) -> Result<(u64, u64), StoreError> {
        let Some(cutoff) = cutoff else {
            return Ok((0, 0));
        };
        let mut removed = 0;
        let mut freed = 0;
        for pack in self.listing()? {
            if pack.modified >= cutoff {
                continue;
            }
            let (keep, dead): (Vec<IndexEntry>, Vec<IndexEntry>) =
                pack.entries.iter().partition(|e| live(&e.id));
            if dead.is_empty() {
                continue;
            }
            if dry_run {
                removed += dead.len() as u64;
                freed += dead.iter().map(|e| e.len).sum::<u64>();
                continue;
            }
            // A put may have re-used an object of it since the listing.
            let path = pack_path(&self.dir, &pack.name);
            match fs::metadata(&path).and_then(|m| m.modified()) {
                Ok(m) if m < cutoff => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io("reading pack", path, e)),
            }
            if !keep.is_empty() {
                self.rewrite(&pack, &keep)?;
            }
            self.delete(&pack)?;
            removed += dead.len() as u64;
            freed += dead.iter().map(|e| e.len).sum::<u64>();
        }
        Ok((removed, freed))
    }

    /// Copies `keep`'s records into a new published pack and points them there.
    fn rewrite(&self, old: &PackListing, keep: &[IndexEntry]) -> Result<(), StoreError> {
        let old_path = pack_path(&self.dir, &old.name);
        self.write_copy(|writer, entries| {
            let old = fs::File::open(&old_path)
                .map_err(|err| StoreError::io("reading pack", &old_path, err))?;
            copy_records(writer, &old, &old_path, keep, entries)
        })
        .map(drop)
    }

    /// A new pack outside a batch (gc's rewrite, a merge): `fill` appends
    /// its records and lists them in `entries`, then it is published
    /// ([`PackSet::publish_copy`]). Returns its slot; on failure the new
    /// pack file is removed.
    fn write_copy(
        &self,
        fill: impl FnOnce(&mut PackWriter, &mut Vec<IndexEntry>) -> Result<(), StoreError>,
    ) -> Result<u32, StoreError> {
        let mut writer = PackWriter::create(&self.dir)
            .map_err(|e| StoreError::io("creating pack", &self.dir, e))?;
        let mut entries = Vec::new();
        if let Err(e) = fill(&mut writer, &mut entries) {
            let _ = fs::remove_file(&writer.path);
            return Err(e);
        }
        self.publish_copy(writer, entries)
    }

    /// Publishes a pack written outside a batch (gc's rewrite, a merge):
    /// its index durable and in place, then its objects pointed there.
    /// Returns its slot; on failure the pack file is removed.
    fn publish_copy(
        &self,
        writer: PackWriter,
        mut entries: Vec<IndexEntry>,
    ) -> Result<u32, StoreError> {
        let result = (|| {
            let temp = self.seal_one(&writer, &mut entries)?;
            if self.fsync {
                if BATCH_SYNC {
                    crate::durability::sync_filesystem(&self.dir)
                        .map_err(|e| StoreError::io("syncing packs", &self.dir, e))?;
                } else {
                    writer
                        .sync_data()
                        .and_then(|()| fs::File::open(&temp)?.sync_all())
                        .map_err(|e| StoreError::io("syncing pack", &writer.path, e))?;
                }
            }
            let idx = index_path(&self.dir, &writer.name);
            rename_into_place(&temp, &idx)
                .map_err(|e| StoreError::io("publishing pack index", idx, e))?;
            if self.fsync {
                sync_dir(&self.dir).map_err(|e| StoreError::io("syncing packs", &self.dir, e))?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&writer.path);
            return Err(e);
        }
        let slot = self.push_slot(writer.name.clone(), SlotState::Published, writer.len())?;
        for e in &entries {
            if let Some(loc) = Loc::new(slot, e) {
                self.by_id.insert(e.id, loc);
            }
        }
        Ok(slot)
    }

    /// Deletes a pack: index first, so no reader finds an index without its
    /// pack; readers that loaded it find the pack missing and reload.
    fn delete(&self, pack: &PackListing) -> Result<(), StoreError> {
        self.delete_packs(&[(pack.slot, pack.name.clone())])
    }

    /// Deletes packs (as [`PackSet::delete`] does one) and forgets them: in
    /// one pass over the object map however many they are. Objects a copy
    /// holds already point at it.
    fn delete_packs(&self, packs: &[(u32, String)]) -> Result<(), StoreError> {
        let mut gone = Vec::with_capacity(packs.len());
        let mut failed = Ok(());
        for (slot, name) in packs {
            if let Err(e) = self.unlink(name) {
                failed = Err(e);
                break;
            }
            self.set_state(*slot, SlotState::Gone);
            gone.push(*slot);
        }
        if !gone.is_empty() {
            self.by_id.retain(|_, loc| !gone.contains(&loc.slot));
        }
        failed
    }

    /// Removes a pack's files, index first.
    fn unlink(&self, name: &str) -> Result<(), StoreError> {
        let idx = index_path(&self.dir, name);
        match fs::remove_file(&idx) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io("removing pack index", idx, e)),
        }
        let path = pack_path(&self.dir, name);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io("removing pack", path, e)),
        }
        Ok(())
    }

    /// Removes what crashed writers left, if older than `min_age`: packs
    /// without an index and index temp files. Returns how many.
    pub fn remove_stale(&self, min_age: std::time::Duration) -> Result<u64, StoreError> {
        let entries = self.dir_entries()?;
        let published = self.published_names()?;
        let writing: HashSet<String> = match self.slots.read() {
            Ok(slots) => slots
                .iter()
                .filter(|s| s.state == SlotState::Writing)
                .map(|s| s.name.clone())
                .collect(),
            Err(_) => return Err(poisoned(&self.dir)),
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let stale_pack = name
                .strip_suffix(".pack")
                .is_some_and(|s| is_pack_name(s) && !published.contains(s) && !writing.contains(s));
            if (stale_pack || name.starts_with(TEMP_PREFIX))
                && remove_if_stale(&entry, now, min_age)
            {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// Appends the records `entries` name in `from` (at `path`) to `writer`,
/// listing where each went in `out`. A record that no longer parses as an
/// object is copied as it is (it stays damaged either way, and readers
/// report it), with a warning.
fn copy_records<'a>(
    writer: &mut PackWriter,
    from: &fs::File,
    path: &Path,
    entries: impl IntoIterator<Item = &'a IndexEntry>,
    out: &mut Vec<IndexEntry>,
) -> Result<(), StoreError> {
    for e in entries {
        let record = read_record(from, e.offset, e.len)
            .map_err(|err| StoreError::io("reading pack", path, err))?;
        if codec::parse_header(&record).is_err() {
            tracing::warn!(object = %e.id, pack = %path.display(), "damaged packed object copied as it is");
        }
        out.push(
            writer
                .append(e.id, &[&record])
                .map_err(|err| StoreError::io("writing pack", &writer.path, err))?,
        );
    }
    Ok(())
}

fn poisoned(dir: &Path) -> StoreError {
    StoreError::io(
        "using packs",
        dir,
        io::Error::other("a thread panicked while holding the pack state"),
    )
}

mod merge;
#[cfg(test)]
use merge::{MERGE_AT, SMALL_PACK_BYTES};

#[cfg(test)]
mod tests;
