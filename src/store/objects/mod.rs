//! The on-disk object store: `root/objects/ab/cdef...` files, one per object.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use dashmap::DashMap;

use super::codec::{self, Codec, HEADER_LEN};
use super::error::StoreError;
use super::layout::Layout;
use super::listing::{ObjectInfo, KNOWN_OBJECT_TTL};
use super::object_id::ObjectId;
use super::pack::MAX_PACKED_OBJECT;
use super::pack_set::PackSet;
use super::tree::Tree;

mod loose;
mod stream;

use loose::freshen;
use stream::{read_whole, Source, StreamFail};

/// Store format version written to `root/VERSION`. Version 2 added packs
/// (`objects/pack/`); version 3 added uncaptured tree entries; version 4
/// added trees of encoding version 2, which record files' modes
/// (docs/format.md "Trees"). Each older store is a valid newer one without
/// them, so opening one upgrades its `VERSION` in place, after which older
/// builds refuse the store instead of calling its trees corrupt.
pub const STORE_VERSION: u32 = 4;
/// The older versions this build upgrades on open.
const UPGRADABLE_VERSIONS: [u32; 3] = [1, 2, 3];

/// Content longer than this is hashed and compressed as a stream, a chunk
/// at a time, never whole in memory: a snapshot of a 300 MB file used to
/// hold the file and then its compressed copy (609 MiB peak RSS). It is
/// [`MAX_PACKED_OBJECT`], so streamed objects are always loose files and
/// the in-memory put of the same content writes the same file.
const STREAM_MIN: usize = MAX_PACKED_OBJECT;

/// The read size of a streamed put.
const STREAM_CHUNK: usize = 256 << 10;

/// Result of a put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PutOutcome {
    pub id: ObjectId,
    /// `false` if the object already existed and nothing was written.
    pub written: bool,
    /// Size of the object file on disk (header included), whether written now or earlier.
    pub stored_bytes: u64,
}

/// What [`Store::put_file`] did with a file.
#[derive(Debug)]
pub enum FilePut {
    /// Its content is stored (now or before).
    Stored(PutOutcome),
    /// It was not the announced length, or did not read the same in every
    /// pass over it: it changed while being read. What was read is not
    /// stored under any id it does not hash to; the caller may read again.
    Changed,
    /// Reading it failed; the store itself is fine.
    Unreadable(io::Error),
}

/// Totals over `root/objects/` (temp files excluded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreUsage {
    pub objects: u64,
    /// Sum of object file sizes (compressed, headers included).
    pub bytes: u64,
}

#[derive(Clone, Copy)]
struct Known {
    /// When we last wrote the object or refreshed its mtime.
    at: Instant,
    stored_bytes: u64,
}

/// A content-addressed object store. `Send + Sync`: share one instance (e.g. in an `Arc`)
/// between all threads of a snapshot.
pub struct Store {
    layout: Layout,
    /// `layout.objects_dir()`, which every put and get joins onto.
    objects: PathBuf,
    fsync: bool,
    /// Objects this process wrote or found on disk recently, so repeated puts of the same
    /// content (unchanged files, shared subtrees) skip the filesystem entirely.
    known: DashMap<ObjectId, Known>,
    /// Fan-out directories that gained entries since the last [`Store::sync`] (only tracked
    /// when `fsync` is on).
    dirty_dirs: Box<[AtomicBool]>,
    /// `objects/` itself gained a fan-out directory since the last sync.
    objects_dirty: AtomicBool,
    /// Fan-out directories that may hold loose objects: those there when
    /// the store was opened, and those this process wrote into. A put whose
    /// fan-out directory is not one skips looking for a loose copy (an
    /// `open` that would fail): every put of a young store's first snapshot
    /// did that. One written meanwhile by another process is only missed as
    /// a dedup (the content is stored once more), never as data.
    loose_fanouts: Box<[AtomicBool]>,
    /// Trees read recently, decoded: objects never change, and queries,
    /// restores and snapshots read the same few directories again and again
    /// (each read would otherwise decompress, verify and parse).
    trees: Mutex<HashMap<ObjectId, Arc<Tree>>>,
    /// Packed objects (`objects/pack/`) and the pack being written.
    packs: PackSet,
    /// The gc generation `known`, the pack indexes and the tree cache were
    /// last validated at (see [`super::generation`]).
    validated_generation: std::sync::atomic::AtomicU64,
}

/// How many decoded trees [`Store::get_tree`] keeps (a few MB at most).
const TREE_CACHE_ENTRIES: usize = 1024;

impl Store {
    /// Opens the store at `root`, creating `root`, `root/objects` and `root/sessions` if
    /// missing and writing `root/VERSION` for a new store. A store whose `VERSION` names a
    /// format this build doesn't know is refused with `UnsupportedVersion` and left untouched.
    ///
    /// `fsync`: fsync each object file before renaming it into place (and make renames
    /// durable in [`Store::sync`]). Without it a crash of the process is still harmless;
    /// only a power loss can lose recent objects.
    pub fn open(root: &Path, fsync: bool) -> Result<Store, StoreError> {
        fs::create_dir_all(root)
            .map_err(|e| StoreError::io("creating store directory", root, e))?;
        let layout = Layout::new(root);
        check_or_write_version(&layout, fsync)?;
        let objects = layout.objects_dir();
        for dir in [objects.clone(), layout.sessions_dir()] {
            fs::create_dir_all(&dir)
                .map_err(|e| StoreError::io("creating store directory", &dir, e))?;
        }
        let validated = super::generation::read_generation(&layout)?;
        let packs = PackSet::open(&layout, fsync)?;
        let loose_fanouts: Box<[AtomicBool]> = (0..256).map(|_| AtomicBool::new(false)).collect();
        match loose::fanout_dirs(&objects) {
            Ok(dirs) => {
                for (prefix, _) in dirs {
                    if let Ok(b) = u8::from_str_radix(&prefix, 16) {
                        loose_fanouts[usize::from(b)].store(true, Ordering::Relaxed);
                    }
                }
            }
            // Not knowing means looking, as before.
            Err(_) => loose_fanouts
                .iter()
                .for_each(|f| f.store(true, Ordering::Relaxed)),
        }
        Ok(Store {
            validated_generation: std::sync::atomic::AtomicU64::new(validated),
            layout,
            objects,
            fsync,
            packs,
            known: DashMap::new(),
            dirty_dirs: (0..256).map(|_| AtomicBool::new(false)).collect(),
            objects_dirty: AtomicBool::new(false),
            loose_fanouts,
            trees: Mutex::new(HashMap::new()),
        })
    }

    pub fn root(&self) -> &Path {
        self.layout.root()
    }

    /// Where everything lives in this store.
    /// Whether writes are synced (the store was opened with `fsync`).
    pub fn fsync(&self) -> bool {
        self.fsync
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Hold gc off until the guard is dropped (waiting for a running gc);
    /// `stale` says gc deleted objects since this store last validated
    /// what it trusts.
    pub fn writer_guard(&self) -> Result<super::WriterGuard, StoreError> {
        super::generation::writer_guard(&self.layout, self.validated_generation())
    }

    /// Exclusive right to delete objects, for gc.
    pub fn deletion_guard(&self) -> Result<super::DeletionGuard, StoreError> {
        super::generation::deletion_guard(&self.layout, self.fsync)
    }

    /// The gc generation this store's in-memory facts are valid for.
    pub fn validated_generation(&self) -> u64 {
        self.validated_generation
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Forget every "this object exists" fact learnt before a gc (known
    /// objects, pack indexes, decoded trees), so a put writes what gc
    /// deleted instead of deduplicating against it. Call with a
    /// [`super::WriterGuard`] held; `generation` is the one it read.
    pub fn refresh_after_gc(&self, generation: u64) -> Result<(), StoreError> {
        self.known.clear();
        if let Ok(mut trees) = self.trees.lock() {
            trees.clear();
        }
        self.packs.reload()?;
        self.validated_generation
            .store(generation, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// `root/sessions`, where session files live ([`Layout::sessions_dir`]).
    pub fn sessions_dir(&self) -> PathBuf {
        self.layout.sessions_dir()
    }

    /// `root/objects/ab/cdef...`: the first two hex characters name the fan-out directory,
    /// the other 30 the file.
    pub fn object_path(&self, id: &ObjectId) -> PathBuf {
        let hex = id.to_hex();
        self.objects.join(&hex[..2]).join(&hex[2..])
    }

    /// Hashes and stores `bytes`.
    pub fn put(&self, bytes: &[u8]) -> Result<PutOutcome, StoreError> {
        self.put_with_id(ObjectId::of(bytes), bytes)
    }

    /// Stores `bytes` under `id`, which the caller computed with [`ObjectId::of`] (e.g. while
    /// streaming the file). Not re-verified in release builds: a wrong id would be caught by
    /// the next `get` as `Corrupt`.
    pub fn put_with_id(&self, id: ObjectId, bytes: &[u8]) -> Result<PutOutcome, StoreError> {
        debug_assert_eq!(
            ObjectId::of(bytes),
            id,
            "put_with_id: id does not match content"
        );
        if let Some(found) = self.existing(id, bytes.len() as u64) {
            return Ok(found);
        }
        let path = self.object_path(&id);
        let stored_bytes = match self.write_object(&id, &path, bytes)? {
            // The pack index in memory already says it exists.
            Written::Packed(n) => n,
            Written::Loose(n) => {
                self.remember(id, n);
                n
            }
        };
        Ok(PutOutcome {
            id,
            written: true,
            stored_bytes,
        })
    }

    /// Stores the content of `file`, which should be `len` bytes long (its
    /// size when the caller looked), reading it from its start. Up to
    /// [`STREAM_MIN`] bytes are read into memory and put as by
    /// [`Store::put`]. A larger file is read in chunks: once to hash it —
    /// content the store already holds costs no compression — and once more
    /// to compress it into the object's temp file (a third time, raw, if
    /// compression does not pay); what is written must hash to the id the
    /// first pass found, else the file changed and nothing is stored. The
    /// object file is byte for byte what [`Store::put`] of the same content
    /// writes, and memory stays a few chunks whatever the file's size.
    pub fn put_file(&self, file: &File, len: u64) -> Result<FilePut, StoreError> {
        let source = Source::File(file);
        let outcome = if len <= STREAM_MIN as u64 {
            read_whole(file, len).and_then(|bytes| self.put(&bytes).map_err(StreamFail::Store))
        } else {
            self.put_streamed(source, len)
        };
        match outcome {
            Ok(out) => Ok(FilePut::Stored(out)),
            Err(StreamFail::Changed) => Ok(FilePut::Changed),
            Err(StreamFail::Source(e)) => Ok(FilePut::Unreadable(e)),
            Err(StreamFail::Store(e)) => Err(e),
        }
    }

    /// The dedup half of a put: the object is already stored (known to this
    /// process, in a published pack, or a plausible file on disk), and its
    /// mtime is refreshed for gc; `None` means write it.
    fn existing(&self, id: ObjectId, len: u64) -> Option<PutOutcome> {
        if let Some(known) = self.known.get(&id) {
            if known.at.elapsed() < KNOWN_OBJECT_TTL {
                return Some(PutOutcome {
                    id,
                    written: false,
                    stored_bytes: known.stored_bytes,
                });
            }
        }
        if let Some(loc) = self.packs.lookup(&id) {
            self.packs.touch(loc);
            return Some(PutOutcome {
                id,
                written: false,
                stored_bytes: loc.len(),
            });
        }
        if !self.loose_fanouts[usize::from(id.as_bytes()[0])].load(Ordering::Relaxed) {
            return None;
        }
        let stored_bytes = freshen(&self.object_path(&id), len)?;
        self.remember(id, stored_bytes);
        Some(PutOutcome {
            id,
            written: false,
            stored_bytes,
        })
    }

    /// Reads an object, decompresses it and verifies its hash. A missing file is `NotFound`;
    /// anything that does not decode to content hashing to `id` is `Corrupt`, and the bad
    /// bytes are never returned.
    pub fn get(&self, id: &ObjectId) -> Result<Vec<u8>, StoreError> {
        if self.packs.lookup(id).is_some() {
            if let Some(record) = self.packs.read(id)? {
                return decode_record(id, record);
            }
        }
        let path = self.object_path(id);
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Perhaps another process packed it since we loaded the packs.
                if let Some(record) = self.packs.read(id)? {
                    return decode_record(id, record);
                }
                return Err(StoreError::NotFound { id: *id });
            }
            Err(e) => return Err(StoreError::io("opening object", &path, e)),
        };
        let corrupt = || StoreError::Corrupt { id: *id };
        let mut header = [0u8; HEADER_LEN];
        match file.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Err(corrupt()),
            Err(e) => return Err(StoreError::io("reading object", &path, e)),
        }
        let (codec, len) = codec::parse_header(&header).map_err(|_| corrupt())?;
        // The capacity hint comes from the file's real size, never from the header.
        let file_len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let hint = usize::try_from(file_len.saturating_sub(HEADER_LEN as u64)).unwrap_or(0);
        let mut payload = Vec::with_capacity(hint);
        file.read_to_end(&mut payload)
            .map_err(|e| StoreError::io("reading object", &path, e))?;
        codec::decode_payload(id, codec, len, payload).map_err(|_| corrupt())
    }

    /// The object's record as stored (header and payload, still
    /// compressed), not decoded or verified: what a push uploads (the
    /// receiving side verifies every record, docs/remote.md).
    pub fn read_record(&self, id: &ObjectId) -> Result<Vec<u8>, StoreError> {
        if self.packs.lookup(id).is_some() {
            if let Some(record) = self.packs.read(id)? {
                return Ok(record);
            }
        }
        let path = self.object_path(id);
        match fs::read(&path) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match self.packs.read(id)? {
                Some(record) => Ok(record),
                None => Err(StoreError::NotFound { id: *id }),
            },
            Err(e) => Err(StoreError::io("reading object", &path, e)),
        }
    }

    /// Stores a record another store wrote (a pull), under `id`: it is
    /// decoded and its content hashed first, and one that does not verify is
    /// `Corrupt` and stores nothing. Written as it came, without compressing
    /// again. Like every put, durable only after [`Store::sync`].
    pub fn put_record(&self, id: &ObjectId, record: &[u8]) -> Result<PutOutcome, StoreError> {
        let content = decode_record(id, record.to_vec())?;
        if let Some(found) = self.existing(*id, content.len() as u64) {
            return Ok(found);
        }
        let (header, payload) = record.split_at(HEADER_LEN);
        let path = self.object_path(id);
        let stored_bytes = match self.write_encoded(id, &path, content.len(), header, payload)? {
            Written::Packed(n) => n,
            Written::Loose(n) => {
                self.remember(*id, n);
                n
            }
        };
        Ok(PutOutcome {
            id: *id,
            written: true,
            stored_bytes,
        })
    }

    /// Whether the object exists (recently written or seen by this process, or on disk).
    /// Does not read or verify it.
    pub fn contains(&self, id: &ObjectId) -> bool {
        if let Some(known) = self.known.get(id) {
            if known.at.elapsed() < KNOWN_OBJECT_TTL {
                return true;
            }
        }
        if self.packs.lookup(id).is_some() || self.object_path(id).is_file() {
            return true;
        }
        self.packs.reload().is_ok() && self.packs.lookup(id).is_some()
    }

    /// Whether the object exists, by what this store knows now (no reload of
    /// pack indexes on a miss): for checking many ids right after
    /// [`Store::refresh_after_gc`].
    pub fn contains_now(&self, id: &ObjectId) -> bool {
        self.known.contains_key(id)
            || self.packs.lookup(id).is_some()
            || self.object_path(id).is_file()
    }

    /// Validates, encodes and stores a tree; returns its id.
    pub fn put_tree(&self, tree: &Tree) -> Result<ObjectId, StoreError> {
        tree.validate()?;
        Ok(self.put(&tree.encode())?.id)
    }

    /// Reads and decodes a tree object. Bytes that are not a valid tree are `BadTree` with
    /// this id.
    pub fn get_tree(&self, id: &ObjectId) -> Result<Arc<Tree>, StoreError> {
        if let Some(t) = self.cached_tree(id) {
            return Ok(t);
        }
        let bytes = self.get(id)?;
        let tree = Arc::new(Tree::decode(&bytes).map_err(|e| match e {
            StoreError::BadTree { reason, .. } => StoreError::BadTree {
                id: Some(*id),
                reason,
            },
            other => other,
        })?);
        if let Ok(mut trees) = self.trees.lock() {
            if trees.len() >= TREE_CACHE_ENTRIES {
                trees.clear();
            }
            trees.insert(*id, tree.clone());
        }
        Ok(tree)
    }

    fn cached_tree(&self, id: &ObjectId) -> Option<Arc<Tree>> {
        self.trees.lock().ok()?.get(id).cloned()
    }

    /// Counts objects and their on-disk bytes: loose object files plus pack
    /// and pack index files (an object in two places counts twice).
    pub fn usage(&self) -> Result<StoreUsage, StoreError> {
        let loose = self.list_loose()?;
        let packed = self.packs.list_objects()?;
        Ok(StoreUsage {
            objects: (loose.len() + packed.len()) as u64,
            bytes: loose.iter().map(|o| o.stored_bytes).sum::<u64>() + self.packs.file_bytes()?,
        })
    }

    /// Every stored object with its size and mtime, for gc: loose files
    /// (temp files and strays skipped, as is an object deleted while
    /// scanning) and the records of published packs.
    pub fn list_objects(&self) -> Result<Vec<ObjectInfo>, StoreError> {
        let mut out = self.list_loose()?;
        out.extend(self.packs.list_objects()?);
        Ok(out)
    }

    /// gc's sweep of packs: rewrites every pack older than `cutoff` without
    /// the objects `live` rejects (deleting it when none is live). Returns
    /// (objects removed, bytes freed); `dry_run` only counts.
    pub fn prune_packs(
        &self,
        live: &dyn Fn(&ObjectId) -> bool,
        cutoff: Option<SystemTime>,
        dry_run: bool,
    ) -> Result<(u64, u64), StoreError> {
        let out = self.packs.prune(live, cutoff, dry_run)?;
        if !dry_run {
            self.known.retain(|id, _| live(id));
            if let Ok(mut trees) = self.trees.lock() {
                trees.retain(|id, _| live(id));
            }
        }
        Ok(out)
    }

    /// Deletes a loose object file (gc; packed objects go through
    /// [`Store::prune_packs`]). Returns whether it existed. Also forgets it, so a later
    /// put writes it again instead of trusting the in-memory set.
    pub fn remove(&self, id: &ObjectId) -> Result<bool, StoreError> {
        self.known.remove(id);
        if let Ok(mut trees) = self.trees.lock() {
            trees.remove(id);
        }
        let path = self.object_path(id);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::io("removing object", &path, e)),
        }
    }

    /// Makes the renames of objects written since the last call durable by fsyncing the
    /// fan-out directories that received them. With `fsync` on, call this before appending
    /// a session entry that references new objects (write order: objects, then entries).
    /// A no-op when the store was opened without `fsync`.
    pub fn sync(&self) -> Result<(), StoreError> {
        if !self.packs.has_pending() {
            return self.sync_loose();
        }
        // Packs: records and index temps durable first (one syncfs with the
        // loose objects), then the indexes renamed into place and their
        // directory synced, so an index never names records a power loss
        // could take back.
        let sealed = self.packs.seal()?;
        // syncfs flushes every file the filesystem holds dirty, other
        // programs' too (a build beside the agent made one take 1-2 ms): a
        // batch of one pack and no loose object, as a checkpoint that
        // stores only its conversation writes, flushes its own two files
        // instead (docs/architecture.md rule 4).
        let each = !BATCH_SYNC || (sealed.len() == 1 && !self.loose_dirty());
        let durable = (|| {
            if self.fsync && each {
                sealed
                    .sync_each()
                    .map_err(|e| StoreError::io("syncing pack", &self.objects, e))?;
            }
            if self.fsync && !each && !sealed.is_empty() {
                self.objects_dirty.store(true, Ordering::Release);
            }
            self.sync_loose()
        })();
        if let Err(e) = durable {
            // The packs stay pending: the next sync publishes them.
            self.packs.unseal(sealed);
            return Err(e);
        }
        self.packs.publish(sealed)?;
        // The batch is durable whatever a merge does; a failed one leaves
        // the small packs for the next batch to merge.
        if let Err(e) = self.packs.merge_small() {
            tracing::warn!(error = %e, "could not merge small packs");
        }
        Ok(())
    }

    /// [`Store::sync`] if a pack is being written, else nothing: makes a
    /// pack durable and visible after writes that no session entry follows
    /// (a scan of `@working`, closing the store). The store's one verb for
    /// "make this batch durable and visible" is sync; this is it when there
    /// is a batch.
    pub fn sync_pending(&self) -> Result<(), StoreError> {
        if self.packs.has_pending() {
            self.sync()
        } else {
            Ok(())
        }
    }

    /// [`Store::sync_pending`] where a failure can only be logged (closing).
    fn sync_pending_on_close(&self) {
        if let Err(e) = self.sync_pending() {
            tracing::warn!(error = %e, "could not publish the last pack on close");
        }
    }

    fn remember(&self, id: ObjectId, stored_bytes: u64) {
        self.loose_fanouts[usize::from(id.as_bytes()[0])].store(true, Ordering::Relaxed);
        self.known.insert(
            id,
            Known {
                at: Instant::now(),
                stored_bytes,
            },
        );
    }
}

/// Where [`Store::write_object`] put an object, and its stored size.
enum Written {
    Loose(u64),
    Packed(u64),
}

/// Decodes and verifies a packed object's record (the same bytes as a loose file).
pub(crate) fn decode_record(id: &ObjectId, mut record: Vec<u8>) -> Result<Vec<u8>, StoreError> {
    let corrupt = || StoreError::Corrupt { id: *id };
    let (codec, len) = codec::parse_header(&record).map_err(|_| corrupt())?;
    let payload = record.split_off(HEADER_LEN);
    codec::decode_payload(id, codec, len, payload).map_err(|_| corrupt())
}

impl Drop for Store {
    /// Publishes a pack still being written, so its objects stay findable
    /// (nothing references them yet, but the next process can dedup against
    /// them instead of writing them again).
    fn drop(&mut self) {
        self.sync_pending_on_close();
    }
}

use crate::durability::{atomic_write, BATCH_SYNC};

/// Checks `root/VERSION`, or writes it (atomically) for a new store.
fn check_or_write_version(layout: &Layout, fsync: bool) -> Result<(), StoreError> {
    let path = layout.version_file();
    match fs::read_to_string(&path) {
        Ok(text) => {
            let found: u32 = text.trim().parse().map_err(|_| {
                StoreError::io(
                    "reading store version",
                    &path,
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("not a version number: {text:?}"),
                    ),
                )
            })?;
            if UPGRADABLE_VERSIONS.contains(&found) {
                return write_version(layout, fsync);
            }
            if found != STORE_VERSION {
                return Err(StoreError::UnsupportedVersion {
                    found,
                    supported: STORE_VERSION,
                });
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_version(layout, fsync),
        Err(e) => Err(StoreError::io("reading store version", &path, e)),
    }
}

/// Writes `root/VERSION` for a new store or one being upgraded: temp +
/// rename so a concurrent opener never reads a half-written VERSION; two
/// processes creating (or upgrading) the store at once both write the same
/// content.
fn write_version(layout: &Layout, fsync: bool) -> Result<(), StoreError> {
    let path = layout.version_file();
    atomic_write(&path, &layout.version_temp(), fsync, |f| {
        f.write_all(format!("{STORE_VERSION}\n").as_bytes())
    })
    .map_err(|e| StoreError::io("writing store version", &path, e))
}

#[cfg(test)]
mod tests;

/// Where a new object goes: a small one into the batch's pack, a large one
/// a loose file (loose.rs).
impl Store {
    /// Writes an object's bytes: a large one streamed into a loose file
    /// (compressed as it goes, as `put_file` does), the rest compressed
    /// and handed to [`Store::write_encoded`].
    fn write_object(
        &self,
        id: &ObjectId,
        path: &Path,
        bytes: &[u8],
    ) -> Result<Written, StoreError> {
        if bytes.len() > STREAM_MIN {
            // Compressed as a stream, as `put_file` does, so both write the
            // same file; and no compressed copy of a large object in memory.
            let mut buf = Vec::new();
            return match self.write_streamed(
                id,
                path,
                Source::Bytes(bytes),
                bytes.len() as u64,
                &mut buf,
            ) {
                Ok(n) => Ok(Written::Loose(n)),
                Err(StreamFail::Store(e)) => Err(e),
                // Bytes in memory neither change nor fail to read.
                Err(StreamFail::Changed | StreamFail::Source(_)) => Err(StoreError::io(
                    "writing object",
                    path,
                    io::Error::other("content changed while being stored"),
                )),
            };
        }
        let compressed = codec::compress(bytes);
        let (codec, payload) = match &compressed {
            Some(z) => (Codec::Zstd, z.as_slice()),
            None => (Codec::Raw, bytes),
        };
        let header = codec::header(codec, bytes.len() as u64);
        self.write_encoded(id, path, bytes.len(), &header, payload)
    }

    /// Writes an object already encoded (`header` and `payload`) whose
    /// content is `len` bytes: into the batch's pack when it is small
    /// enough, else as a loose file. A pull writes the records it received
    /// through this, as they came (docs/format.md: readers accept any
    /// payload that decodes).
    fn write_encoded(
        &self,
        id: &ObjectId,
        path: &Path,
        len: usize,
        header: &[u8],
        payload: &[u8],
    ) -> Result<Written, StoreError> {
        if len <= MAX_PACKED_OBJECT {
            return Ok(Written::Packed(self.packs.append(*id, header, payload)?));
        }
        self.write_loose(id, path, header, payload)
    }
}
