//! Loose objects only (a small object goes into the batch's pack instead:
//! `Store::write_encoded`): one file per object under `objects/ab/cdef...`, written
//! through a temp file and renamed into place, listed by fan-out directory,
//! synced in batches, and freshened when a put finds one already there.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rayon::prelude::*;

use std::sync::atomic::Ordering;

use super::{Store, Written};
use crate::durability::{rename_into_place, sync_dir, sync_filesystem as syncfs, BATCH_SYNC};
use crate::store::codec::{self, Codec, HEADER_LEN};
use crate::store::error::StoreError;
use crate::store::layout::TEMP_PREFIX;
use crate::store::listing::{remove_if_stale, ObjectInfo};
use crate::store::object_id::ObjectId;

pub(super) fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

pub(super) fn list_fanout(prefix: &str, dir: &Path) -> Result<Vec<ObjectInfo>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        // Removed by someone else between listing objects/ and here.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io("scanning objects", dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io("scanning objects", dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.len() != 30 || !name.bytes().all(is_lower_hex) {
            continue;
        }
        let Ok(id) = ObjectId::from_hex(&format!("{prefix}{name}")) else {
            continue;
        };
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(StoreError::io("scanning objects", entry.path(), e)),
        };
        if !meta.is_file() {
            continue;
        }
        out.push(ObjectInfo {
            id,
            stored_bytes: meta.len(),
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            packed: false,
        });
    }
    Ok(out)
}

/// If a plausible object file exists, bumps its mtime to now and returns its size.
///
/// `None` means "write it": the file is missing, unreadable, or visibly damaged (bad header,
/// wrong declared length, raw payload of the wrong size), as a power loss without fsync can
/// leave it. The content is in hand, so rewriting over the damaged file repairs the store.
pub(super) fn freshen(path: &Path, content_len: u64) -> Option<u64> {
    let mut file = File::open(path).ok()?;
    let file_len = file.metadata().ok()?.len();
    let mut header = [0u8; HEADER_LEN];
    file.read_exact(&mut header).ok()?;
    let (codec, len) = codec::parse_header(&header).ok()?;
    let payload_len = file_len.saturating_sub(HEADER_LEN as u64);
    let plausible = len == content_len
        && match codec {
            Codec::Raw => payload_len == len,
            Codec::Zstd => payload_len > 0,
        };
    if !plausible {
        return None;
    }
    // Best effort: failing to bump the mtime only makes the object look older to gc,
    // which matters only if gc runs concurrently with a grace period shorter than the
    // object's real age; not worth failing the snapshot over.
    let _ = file.set_modified(SystemTime::now());
    Some(file_len)
}

impl Store {
    pub(super) fn list_loose(&self) -> Result<Vec<ObjectInfo>, StoreError> {
        let fanouts = self.fanout_dirs()?;
        let per_dir: Vec<Result<Vec<ObjectInfo>, StoreError>> = fanouts
            .par_iter()
            .map(|(prefix, dir)| list_fanout(prefix, dir))
            .collect();
        let mut out = Vec::new();
        for r in per_dir {
            out.extend(r?);
        }
        Ok(out)
    }

    /// Deletes temp files and unpublished packs left by writers that crashed, if older
    /// than `min_age` (younger ones may belong to a live writer in another process).
    /// Returns how many were removed.
    pub fn remove_stale_temps(&self, min_age: Duration) -> Result<u64, StoreError> {
        let now = SystemTime::now();
        let mut removed = self.packs.remove_stale(min_age)?;
        for (_, dir) in self.fanout_dirs()? {
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io("scanning objects", &dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| StoreError::io("scanning objects", &dir, e))?;
                if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX)
                    && remove_if_stale(&entry, now, min_age)
                {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Whether loose objects (or a new fan-out directory) wait for a sync.
    pub(super) fn loose_dirty(&self) -> bool {
        self.objects_dirty.load(Ordering::Acquire)
            || self.dirty_dirs.iter().any(|f| f.load(Ordering::Acquire))
    }

    /// The loose half of [`Store::sync`].
    pub(super) fn sync_loose(&self) -> Result<(), StoreError> {
        if !self.fsync {
            return Ok(());
        }
        if BATCH_SYNC {
            // One syncfs covers the objects' contents, their renames and
            // the fan-out directories.
            let pending = self
                .dirty_dirs
                .iter()
                .fold(false, |acc, f| f.swap(false, Ordering::AcqRel) | acc)
                | self.objects_dirty.swap(false, Ordering::AcqRel);
            if pending {
                if let Err(e) = syncfs(&self.objects) {
                    self.objects_dirty.store(true, Ordering::Release);
                    return Err(StoreError::io(
                        "syncing the store's filesystem",
                        &self.objects,
                        e,
                    ));
                }
            }
            return Ok(());
        }
        for (i, flag) in self.dirty_dirs.iter().enumerate() {
            if flag.swap(false, Ordering::AcqRel) {
                let dir = self.objects.join(format!("{i:02x}"));
                if let Err(e) = sync_dir(&dir) {
                    // Leave it dirty so the next sync retries.
                    flag.store(true, Ordering::Release);
                    return Err(StoreError::io("syncing object directory", dir, e));
                }
            }
        }
        if self.objects_dirty.swap(false, Ordering::AcqRel) {
            if let Err(e) = sync_dir(&self.objects) {
                self.objects_dirty.store(true, Ordering::Release);
                return Err(StoreError::io("syncing object directory", &self.objects, e));
            }
        }
        Ok(())
    }

    /// Writes an encoded object (`header`, `payload`) as a loose file:
    /// temp file in the fan-out directory, fsync (if enabled and not
    /// batched), rename into place. Concurrent writers of the same id each
    /// use their own temp file; the renames replace one complete, identical
    /// file with another.
    ///
    /// Only the rename is `durability`'s: the temp is created exclusively in
    /// a fan-out directory made on first use, and the directories are
    /// synced once per batch by [`Store::sync`], where
    /// `durability::atomic_write` would sync each write.
    pub(super) fn write_loose(
        &self,
        id: &ObjectId,
        path: &Path,
        header: &[u8],
        payload: &[u8],
    ) -> Result<Written, StoreError> {
        let dir = path.parent().unwrap_or(&self.objects);
        let (mut file, temp) = self.create_temp(dir)?;
        let result = (|| {
            file.write_all(header)?;
            file.write_all(payload)?;
            // On Linux one syncfs in `sync` makes every object written
            // since durable at once (a cold snapshot writes tens of
            // thousands: one fsync each cost more than hashing and
            // compressing them). Elsewhere each file is synced here.
            if self.fsync && !BATCH_SYNC {
                file.sync_all()?;
            }
            Ok::<(), io::Error>(())
        })();
        drop(file);
        if let Err(e) = result {
            let _ = fs::remove_file(&temp);
            return Err(StoreError::io("writing object", &temp, e));
        }
        // No directory sync here: `sync` makes a batch's renames durable.
        rename_into_place(&temp, path)
            .map_err(|e| StoreError::io("renaming object into place", path, e))?;
        if self.fsync {
            self.dirty_dirs[usize::from(id.as_bytes()[0])].store(true, Ordering::Release);
        }
        Ok(Written::Loose((HEADER_LEN + payload.len()) as u64))
    }

    /// Creates a uniquely named temp file in `dir`, creating `dir` on first use.
    pub(super) fn create_temp(&self, dir: &Path) -> Result<(File, PathBuf), StoreError> {
        let mut created_dir = false;
        let mut attempts = 0;
        loop {
            let temp = dir.join(format!("{TEMP_PREFIX}{:016x}", rand::random::<u64>()));
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(f) => return Ok((f, temp)),
                Err(e) if e.kind() == io::ErrorKind::NotFound && !created_dir => {
                    // Fan-out directories are created lazily: most stores never fill all 256.
                    fs::create_dir_all(dir)
                        .map_err(|e| StoreError::io("creating object directory", dir, e))?;
                    if self.fsync {
                        self.objects_dirty.store(true, Ordering::Release);
                    }
                    created_dir = true;
                }
                // A 64-bit random name collided: astronomically unlikely, just retry.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => {}
                Err(e) => return Err(StoreError::io("creating object temp file", temp, e)),
            }
            attempts += 1;
        }
    }

    /// `(prefix, path)` of each existing fan-out directory (two lowercase hex chars).
    pub(super) fn fanout_dirs(&self) -> Result<Vec<(String, PathBuf)>, StoreError> {
        fanout_dirs(&self.objects)
    }
}

/// `(prefix, path)` of each fan-out directory in `objects` (two lowercase hex chars).
pub(super) fn fanout_dirs(objects: &Path) -> Result<Vec<(String, PathBuf)>, StoreError> {
    let entries =
        fs::read_dir(objects).map_err(|e| StoreError::io("scanning objects", objects, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io("scanning objects", objects, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.len() == 2 && name.bytes().all(is_lower_hex) {
            out.push((name.to_string(), entry.path()));
        }
    }
    Ok(out)
}
