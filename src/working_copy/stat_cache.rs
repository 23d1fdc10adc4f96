//! The persistent stat cache (docs/architecture.md rule 5, jj's `FileState`).
//!
//! For every captured path it remembers the lstat fields that change when a
//! file's content can have changed (size, mtime, ctime, inode, mode) and the
//! tree entry its content hashed to. A later scan whose lstat matches reuses
//! the entry without reading the file — also after a restart, because the
//! cache is saved in the store.
//!
//! The racy-timestamp rule: a file modified within its racy window
//! ([`FileStat::is_racy`]) of the moment the scan started could be modified
//! again without its stat moving (coarse timestamps), so such entries are
//! not saved and get re-hashed by the next scan.

use std::io::{BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap as HashMap;

use super::options::is_rules_file;
use crate::durability::atomic_write;
use crate::store::{checked, EntryKind, Layout, ObjectId, TreeEntry};

/// The format written: the gc generation, an xxh3-64 checksum of the
/// rest, then the entries sorted by path (ids as raw bytes) and the
/// directory listings sorted by path, uncompressed. Every hook process of
/// its own reads the whole cache, and decompressing it was two fifths of
/// the load (20,000 files: 2.7 MB; checking and copying it costs half of
/// that); a 100k-file project's cache is ~13 MB, a few percent of its
/// store (docs/format.md "Stat cache").
const MAGIC: &[u8; 8] = b"RWSTAT05";
/// Version 4: version 5 as one zstd frame, without the checksum.
const MAGIC_V4: &[u8; 8] = b"RWSTAT04";
/// Version 3: version 4 without the directory listings (every directory
/// is listed again once).
const MAGIC_V3: &[u8; 8] = b"RWSTAT03";
/// Version 2: version 3 without the gc generation (read as "validated at
/// no known generation": every entry is checked once against the store).
const MAGIC_V2: &[u8; 8] = b"RWSTAT02";
/// The first format (uncompressed, hex ids), still read so that a cache
/// written by an older build keeps vouching for its files.
const MAGIC_V1: &[u8; 8] = b"RWSTAT01";
/// At most this many changed file entries are left unsaved
/// ([`StatCache::is_dirty`]): what the next process reads again in their
/// place costs less than rewriting a large cache.
const ENTRIES_WORTH_SAVING: usize = 256;
/// Nor more than this many bytes of files to read again.
const BYTES_WORTH_SAVING: u64 = 4 << 20;
/// The racy window of a stat whose timestamps may be whole seconds:
/// filesystem timestamps can be as coarse as a second (two on FAT), and
/// clocks drift a little between the kernel and us; two seconds errs on the
/// safe side.
pub const RACY_WINDOW_NS: i128 = 2_000_000_000;
/// The racy window of a stat whose timestamps carry a fraction of a second
/// (ext4, xfs, btrfs, tmpfs, APFS: nanoseconds). Such a filesystem stamps a
/// change with the kernel's coarse clock, which lags the real one by at
/// most a scheduler tick (1–10 ms), so a change made after a scan started
/// gets a timestamp later than anything older than that tick; 100 ms is ten
/// ticks of margin. Git's racy rule rests on the same fact. A scan at the
/// pace of an agent's tool calls (a few a second) then re-reads only what
/// changed since the last one, not everything of the last two seconds.
pub const FINE_RACY_WINDOW_NS: i128 = 100_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
    pub mode: u32,
}

impl FileStat {
    pub fn from_metadata(m: &std::fs::Metadata) -> FileStat {
        FileStat {
            size: m.size(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            ctime_ns: m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
            ino: m.ino(),
            mode: m.mode(),
        }
    }

    /// Whether a change made after `scan_start_ns` could leave this stat as
    /// it is (the racy rule, docs/architecture.md rule 5): its newest
    /// timestamp is within [`Self::racy_window_ns`] of the scan's start (or
    /// after it).
    pub fn is_racy(&self, scan_start_ns: i128) -> bool {
        self.mtime_ns.max(self.ctime_ns) + self.racy_window_ns() >= scan_start_ns
    }

    /// [`FINE_RACY_WINDOW_NS`] when both timestamps have a fraction of a
    /// second (the filesystem keeps sub-second time), else
    /// [`RACY_WINDOW_NS`]: a whole-second timestamp may come from a
    /// filesystem that keeps only seconds (or from a tool that set it, as
    /// tar does; the longer window is only slower there).
    pub fn racy_window_ns(&self) -> i128 {
        const SECOND: i128 = 1_000_000_000;
        let fine = self.mtime_ns.rem_euclid(SECOND) != 0 && self.ctime_ns.rem_euclid(SECOND) != 0;
        if fine {
            FINE_RACY_WINDOW_NS
        } else {
            RACY_WINDOW_NS
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CachedFile {
    pub stat: FileStat,
    pub entry: TreeEntry,
}

/// How many files and symlinks each directory held when it was last
/// listed, trusted while the directory's stat is unchanged: adding,
/// removing or renaming a name moves a directory's mtime and ctime (git's
/// untracked cache rests on the same fact). Without it, every full scan
/// would list every directory a second time (for the small ignored files,
/// `ignored.rs`). Saved with the stat cache, so a hook process of its own
/// does not list them again either.
#[derive(Default, Debug)]
pub struct DirListings {
    by_dir: Mutex<HashMap<String, (FileStat, usize)>>,
    /// How many changed since loaded or saved.
    changed: AtomicUsize,
}

/// Changed listings that make the cache worth saving on their own: one
/// stale listing costs the next process one directory read, a rewrite of
/// the whole cache costs far more (the file entries changed are saved
/// with them anyway).
const LISTINGS_WORTH_SAVING: usize = 64;

impl DirListings {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (FileStat, usize)>> {
        self.by_dir.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The count remembered for `dir`, if its stat is still `stat`.
    pub fn get(&self, dir: &str, stat: &FileStat) -> Option<usize> {
        match self.lock().get(dir) {
            Some((seen, n)) if seen == stat => Some(*n),
            _ => None,
        }
    }

    /// Remember `dir` held `n` files and symlinks at `stat`.
    pub fn insert(&self, dir: &str, stat: FileStat, n: usize) {
        let mut map = self.lock();
        if map.get(dir) != Some(&(stat, n)) {
            map.insert(dir.to_string(), (stat, n));
            self.changed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Forget the directories `keep` says are gone (after a full walk), so
    /// the listings do not grow with deleted directories.
    pub fn retain(&self, mut keep: impl FnMut(&str) -> bool) {
        let mut map = self.lock();
        let before = map.len();
        map.retain(|d, _| keep(d));
        self.changed
            .fetch_add(before - map.len(), Ordering::Relaxed);
    }

    fn is_dirty(&self) -> bool {
        self.changed.load(Ordering::Relaxed) >= LISTINGS_WORTH_SAVING
    }

    /// The remembered counts, for a test to look at or alter.
    #[cfg(test)]
    pub fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, (FileStat, usize)>) -> R) -> R {
        f(&mut self.lock())
    }
}

#[derive(Default, Debug)]
pub struct StatCache {
    entries: HashMap<String, CachedFile>,
    dirs: DirListings,
    /// Something that must be saved (the gc generation checked).
    dirty: bool,
    /// File entries added, changed or removed since loaded or saved, and
    /// the bytes the added and changed ones vouch for: what the next
    /// process re-reads if this cache is not saved ([`Self::is_dirty`]).
    unsaved: usize,
    unsaved_bytes: u64,
    /// The store's gc generation at which every entry's object was known to
    /// exist (`None`: never checked). A cache checked at an older
    /// generation may vouch for objects gc deleted since
    /// (docs/architecture.md rule 10).
    generation: Option<u64>,
    /// The file this cache was last loaded from or saved to, as it was
    /// then: a saved scan is trusted only beside the very cache it was
    /// saved with (`saved_scan.rs`).
    file: Option<CacheFileId>,
}

/// Inode, size and mtime (ns) of a saved stat cache. Each save writes a new
/// file (temp + rename), so another process's save shows as another
/// identity; the ctime is left out because a rename may move it.
pub type CacheFileId = (u64, u64, i128);

fn file_id(m: &std::fs::Metadata) -> CacheFileId {
    let s = FileStat::from_metadata(m);
    (s.ino, s.size, s.mtime_ns)
}

impl StatCache {
    pub fn get(&self, path: &str) -> Option<&CachedFile> {
        self.entries.get(path)
    }

    /// The file this cache was last loaded from or saved to (see the field).
    pub fn file(&self) -> Option<CacheFileId> {
        self.file
    }

    /// Whether the saved file is still the one this cache last loaded or
    /// saved: no other process saved its own since.
    pub fn file_is_current(&self, path: &Path) -> bool {
        self.file.is_some() && std::fs::metadata(path).ok().map(|m| file_id(&m)) == self.file
    }

    /// Every object the cache vouches for (gc keeps them: a scan reuses a
    /// hit's id without touching the store).
    pub fn object_ids(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.entries.values().map(|c| c.entry.id)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The directory listings saved with the files.
    pub fn dirs(&self) -> &DirListings {
        &self.dirs
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Record what a scan saw. Racy entries are dropped so the next scan
    /// re-reads them.
    pub fn update(&mut self, path: String, file: CachedFile, scan_start_ns: i128) {
        if file.stat.is_racy(scan_start_ns) {
            // Dropped here, but not a reason to save: the saved entry's stat
            // is the file's old one, which never comes back (its ctime is
            // older than the racy write's, and ctime cannot be set), so it
            // can never vouch for the new content. Saving a large cache
            // only to drop a few entries cost every edit's hook its
            // rewrite (megabytes at 100k files).
            self.entries.remove(&path);
        } else if self.entries.get(&path) != Some(&file) {
            // An ignore file the saved cache does not vouch for reads as
            // changed to the next process's stat pass, and a changed
            // ignore file means a full scan (`scan_tree.rs`): never left
            // unsaved.
            self.dirty |= is_rules_file(&path);
            self.unsaved += 1;
            self.unsaved_bytes += file.stat.size;
            self.entries.insert(path, file);
        }
    }

    /// Forget paths under `scope` (or all, when `None`) that `keep` says are
    /// gone, so the cache does not grow with deleted files.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|p, _| keep(p));
        self.unsaved += before - self.entries.len();
    }

    /// Whether the cache is worth saving. A few changed entries are not:
    /// a save rewrites the whole cache (milliseconds at 3,000 files, a
    /// tenth of a second at 100,000), while an entry left unsaved costs
    /// the next process one read of that file. Each hook of its own that
    /// follows an edit would otherwise pay the rewrite; unsaved entries
    /// pile up from process to process (each one reads them again) until
    /// they are worth it. A cache never saved, or changed in a large part,
    /// is saved at once.
    pub fn is_dirty(&self) -> bool {
        let worth = (self.entries.len() / 32).clamp(1, ENTRIES_WORTH_SAVING);
        self.dirty
            || (self.unsaved > 0 && self.file.is_none())
            || self.unsaved >= worth
            || self.unsaved_bytes >= BYTES_WORTH_SAVING
            || self.dirs.is_dirty()
    }

    /// The gc generation the entries were checked at (see the field).
    pub fn generation(&self) -> Option<u64> {
        self.generation
    }

    /// Drop every entry whose object `exists` denies, and note that the
    /// rest were checked at `generation`. Returns how many were dropped.
    pub fn revalidate(
        &mut self,
        generation: u64,
        mut exists: impl FnMut(&ObjectId) -> bool,
    ) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, c| exists(&c.entry.id));
        let dropped = before - self.entries.len();
        if dropped > 0 || self.generation != Some(generation) {
            self.dirty = true;
        }
        self.generation = Some(generation);
        dropped
    }

    /// Load a saved cache; a missing, truncated or foreign file is an empty
    /// cache (it is only an optimisation — the worst case is re-hashing).
    pub fn load(path: &Path) -> StatCache {
        match std::fs::File::open(path) {
            Ok(f) => match f
                .metadata()
                .map_err(|e| e.to_string())
                .and_then(|m| Ok((file_id(&m), decode(&mut BufReader::new(f))?)))
            {
                Ok((file, (entries, dirs, generation, current))) => StatCache {
                    entries,
                    dirs: DirListings {
                        by_dir: Mutex::new(dirs),
                        changed: AtomicUsize::new(0),
                    },
                    // An older version is saved again once, in this one.
                    dirty: !current,
                    unsaved: 0,
                    unsaved_bytes: 0,
                    generation,
                    file: Some(file),
                },
                Err(why) => {
                    tracing::warn!(path = %path.display(), %why, "ignoring unreadable stat cache");
                    StatCache::default()
                }
            },
            Err(_) => StatCache::default(),
        }
    }

    /// Save atomically (temp file + rename), so a reader never sees half a
    /// cache. Not fsynced (`fsync: false`): it is a cache, and a torn or
    /// lost one only costs a re-hash, never data (docs/architecture.md
    /// rule 5; docs/format.md "Stat cache"); a sync per save would cost
    /// every snapshot that refreshed it.
    pub fn save(&mut self, path: &Path) -> std::io::Result<()> {
        if !self.is_dirty() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut written = None;
        let body = encode_body(&self.entries, &self.dirs.lock());
        atomic_write(path, &Layout::stat_cache_temp(path), false, |f| {
            f.write_all(MAGIC)?;
            // u64::MAX: never checked (a cache saved before its first scan).
            f.write_all(&self.generation.unwrap_or(u64::MAX).to_le_bytes())?;
            checked::write(f, &body)?;
            written = Some(file_id(&f.metadata()?));
            Ok(())
        })?;
        self.file = written;
        self.dirty = false;
        self.unsaved = 0;
        self.unsaved_bytes = 0;
        self.dirs.changed.store(0, Ordering::Relaxed);
        Ok(())
    }
}

fn kind_byte(k: EntryKind) -> u8 {
    match k {
        EntryKind::File => 0,
        EntryKind::Executable => 1,
        EntryKind::Symlink => 2,
        EntryKind::Tree => 3,
        // Never cached (only captured files are), and never read back: the
        // decoder refuses the byte, so such an entry would only be dropped.
        EntryKind::Uncaptured(_) => 0xff,
    }
}

/// What follows the header: the entries, then the directory listings.
fn encode_body(
    entries: &HashMap<String, CachedFile>,
    dirs: &HashMap<String, (FileStat, usize)>,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(entries.len() * 112 + dirs.len() * 80 + 16);
    // Writing into a Vec cannot fail.
    let _ = write_body(entries, dirs, &mut body);
    body
}

fn write_body(
    entries: &HashMap<String, CachedFile>,
    dirs: &HashMap<String, (FileStat, usize)>,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let mut sorted: Vec<(&String, &CachedFile)> = entries.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    w.write_all(&(sorted.len() as u64).to_le_bytes())?;
    for (path, f) in sorted {
        w.write_all(&(path.len() as u32).to_le_bytes())?;
        w.write_all(path.as_bytes())?;
        write_stat(w, &f.stat)?;
        w.write_all(&[kind_byte(f.entry.kind)])?;
        w.write_all(&f.entry.size.to_le_bytes())?;
        w.write_all(f.entry.id.as_bytes())?;
    }
    let mut sorted: Vec<(&String, &(FileStat, usize))> = dirs.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    w.write_all(&(sorted.len() as u64).to_le_bytes())?;
    for (dir, (stat, n)) in sorted {
        w.write_all(&(dir.len() as u32).to_le_bytes())?;
        w.write_all(dir.as_bytes())?;
        write_stat(w, stat)?;
        w.write_all(&(*n as u64).to_le_bytes())?;
    }
    Ok(())
}

fn write_stat(w: &mut impl Write, stat: &FileStat) -> std::io::Result<()> {
    w.write_all(&stat.size.to_le_bytes())?;
    w.write_all(&stat.mtime_ns.to_le_bytes())?;
    w.write_all(&stat.ctime_ns.to_le_bytes())?;
    w.write_all(&stat.ino.to_le_bytes())?;
    w.write_all(&stat.mode.to_le_bytes())
}

fn read_stat(r: &mut impl Read) -> Result<FileStat, String> {
    Ok(FileStat {
        size: u64::from_le_bytes(take(r)?),
        mtime_ns: i128::from_le_bytes(take(r)?),
        ctime_ns: i128::from_le_bytes(take(r)?),
        ino: u64::from_le_bytes(take(r)?),
        mode: u32::from_le_bytes(take(r)?),
    })
}

/// A path of at most 64 KiB.
fn read_path(r: &mut impl Read) -> Result<String, String> {
    let len = u32::from_le_bytes(take(r)?) as usize;
    if len > 1 << 16 {
        return Err("path too long".into());
    }
    let mut pb = vec![0u8; len];
    r.read_exact(&mut pb).map_err(|e| e.to_string())?;
    String::from_utf8(pb).map_err(|e| e.to_string())
}

/// The next `N` bytes of a cache file.
fn take<const N: usize>(r: &mut impl Read) -> Result<[u8; N], String> {
    let mut b = [0u8; N];
    r.read_exact(&mut b).map_err(|e| e.to_string())?;
    Ok(b)
}

/// The entries, the directory listings, the generation, and whether the
/// file is of the version this build writes.
type Decoded = (
    HashMap<String, CachedFile>,
    HashMap<String, (FileStat, usize)>,
    Option<u64>,
    bool,
);

fn decode(r: &mut impl Read) -> Result<Decoded, String> {
    match &take::<8>(r)? {
        m if m == MAGIC => {
            let generation = u64::from_le_bytes(take(r)?);
            let generation = (generation != u64::MAX).then_some(generation);
            // A torn or damaged cache could vouch for a file with another
            // file's id: it is read whole and as written, or not at all.
            let body = checked::read(r)
                .map_err(|e| e.to_string())?
                .ok_or("checksum mismatch (torn or damaged)")?;
            let mut rest = body.as_slice();
            let entries = decode_entries(&mut rest, true)?;
            let dirs = decode_dirs(&mut rest)?;
            Ok((entries, dirs, generation, true))
        }
        m if m == MAGIC_V4 || m == MAGIC_V3 => {
            let with_dirs = m == MAGIC_V4;
            let generation = u64::from_le_bytes(take(r)?);
            let generation = (generation != u64::MAX).then_some(generation);
            // Decompressed at once, then parsed from memory: reading a
            // field at a time through the decoder cost more than the
            // decompression itself.
            let raw = zstd::stream::decode_all(r).map_err(|e| e.to_string())?;
            let mut z = raw.as_slice();
            let entries = decode_entries(&mut z, true)?;
            let dirs = if with_dirs {
                decode_dirs(&mut z)?
            } else {
                HashMap::default()
            };
            Ok((entries, dirs, generation, false))
        }
        m if m == MAGIC_V2 => {
            let mut z = zstd::stream::read::Decoder::new(r).map_err(|e| e.to_string())?;
            Ok((
                decode_entries(&mut z, true)?,
                HashMap::default(),
                None,
                false,
            ))
        }
        m if m == MAGIC_V1 => Ok((decode_entries(r, false)?, HashMap::default(), None, false)),
        _ => Err("not a rewind stat cache (or another version)".into()),
    }
}

/// The entries after the magic; `raw_ids`: 16 bytes per id (version 2)
/// rather than 32 hex characters (version 1).
fn decode_entries(r: &mut impl Read, raw_ids: bool) -> Result<HashMap<String, CachedFile>, String> {
    let count = u64::from_le_bytes(take(r)?);
    let mut entries =
        HashMap::with_capacity_and_hasher(count.min(1 << 22) as usize, Default::default());
    for _ in 0..count {
        let path = read_path(r)?;
        let stat = read_stat(r)?;
        let kind = match take::<1>(r)?[0] {
            0 => EntryKind::File,
            1 => EntryKind::Executable,
            2 => EntryKind::Symlink,
            _ => return Err("bad entry kind".into()),
        };
        let size = u64::from_le_bytes(take(r)?);
        let id = if raw_ids {
            ObjectId::from_bytes(take::<16>(r)?)
        } else {
            let hex = take::<32>(r)?;
            std::str::from_utf8(&hex)
                .ok()
                .and_then(|h| ObjectId::from_hex(h).ok())
                .ok_or("bad object id")?
        };
        // A file's mode is not a field of its own: the entry vouches for
        // the file only while its stat — `st_mode` included — is the one
        // recorded, so its permission bits are the recorded stat's (the
        // same in every version of the cache).
        let entry = match kind {
            EntryKind::Symlink => TreeEntry::new(kind, id, size),
            _ => TreeEntry::file(stat.mode, id, size),
        };
        if entry.kind != kind {
            return Err("entry kind disagrees with its mode".into());
        }
        entries.insert(path, CachedFile { stat, entry });
    }
    Ok(entries)
}

/// The directory listings after the entries (version 4).
fn decode_dirs(r: &mut impl Read) -> Result<HashMap<String, (FileStat, usize)>, String> {
    let count = u64::from_le_bytes(take(r)?);
    let mut dirs =
        HashMap::with_capacity_and_hasher(count.min(1 << 20) as usize, Default::default());
    for _ in 0..count {
        let dir = read_path(r)?;
        let stat = read_stat(r)?;
        let n = u64::from_le_bytes(take(r)?) as usize;
        dirs.insert(dir, (stat, n));
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests;
