//! gc's side of the packs: the published packs listed with their entries
//! and mtimes, each pack that holds garbage rewritten without it (records
//! copied as they are) or deleted, index first, and what crashed writers
//! left removed. Merging borrows the record copy and the deletions.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::Path;
use std::time::SystemTime;

use super::super::codec;
use super::super::error::StoreError;
use super::super::layout::TEMP_PREFIX;
use super::super::listing::{remove_if_stale, ObjectInfo};
use super::super::object_id::ObjectId;
use super::super::pack::{
    index_path, is_pack_name, pack_path, read_record, IndexEntry, PackWriter,
};
use super::{poisoned, PackSet, SlotState};

/// One pack as gc sees it.
struct PackListing {
    slot: u32,
    name: String,
    modified: SystemTime,
    entries: Vec<IndexEntry>,
}

impl PackSet {
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

    /// Deletes a pack: index first, so no reader finds an index without its
    /// pack; readers that loaded it find the pack missing and reload.
    fn delete(&self, pack: &PackListing) -> Result<(), StoreError> {
        self.delete_packs(&[(pack.slot, pack.name.clone())])
    }

    /// Deletes packs (as [`PackSet::delete`] does one) and forgets them: in
    /// one pass over the object map however many they are. Objects a copy
    /// holds already point at it.
    pub(super) fn delete_packs(&self, packs: &[(u32, String)]) -> Result<(), StoreError> {
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
pub(super) fn copy_records<'a>(
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
