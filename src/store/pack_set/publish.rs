//! Writing and publishing packs: objects appended to the pack being written
//! (a new one past the size cap), each batch's packs sealed (index to a temp
//! file), then published once the caller made them durable (index renamed
//! into place); a pack written outside a batch (gc's rewrite, a merge)
//! published on its own.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use super::super::error::StoreError;
use super::super::object_id::ObjectId;
use super::super::pack::{
    encode_index, index_path, index_temp_path, IndexEntry, PackWriter, MAX_PACK_BYTES,
};
use super::{poisoned, Loc, PackSet, SlotState};
use crate::durability::{rename_into_place, sync_dir, write_temp, BATCH_SYNC};

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

impl PackSet {
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

    /// A new pack outside a batch (gc's rewrite, a merge): `fill` appends
    /// its records and lists them in `entries`, then it is published
    /// ([`PackSet::publish_copy`]). Returns its slot; on failure the new
    /// pack file is removed.
    pub(super) fn write_copy(
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
}
