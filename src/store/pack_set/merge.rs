//! Merging small packs into one (docs/format.md "Packs", "Merging").
//!
//! Every batch that writes objects publishes a pack of its own: a turn that
//! changes three files then creates two files (pack and index) instead of
//! one per object, which is what a hook event's time went to on a small
//! project (docs/benchmarks.md, session 16). Left alone, a long session
//! would leave thousands of tiny packs, and every process that opens the
//! store reads every index. So once [`MERGE_AT`] packs under
//! [`SMALL_PACK_BYTES`] are published, the writer that published the last
//! one copies their records into one new pack, publishes it like any other,
//! and only then deletes them. Nothing is ever missing: until the deletions
//! an object is in both, and a reader that loaded a deleted pack finds it
//! gone and reloads (as after gc's rewrite of a pack).

use std::collections::HashSet;
use std::fs::{self, File, TryLockError};
use std::io;

use super::super::error::StoreError;
use super::super::pack::{merge_lock_path, pack_path};
use super::gc::copy_records;
use super::{PackSet, SlotState};

/// A pack smaller than this counts as small. Batches of a few turns' edits
/// write packs of a few kB; a baseline's packs are megabytes and are never
/// rewritten by a merge.
pub(crate) const SMALL_PACK_BYTES: u64 = 1 << 20;

/// How many small packs wait before they are merged: a process that opens
/// the store reads at most this many small indexes, and a merge rewrites a
/// few hundred kB once per this many batches.
pub(crate) const MERGE_AT: usize = 16;

impl PackSet {
    /// Published packs under [`SMALL_PACK_BYTES`], as this process knows them.
    fn small_packs(&self) -> Vec<(u32, String)> {
        match self.slots.read() {
            Ok(slots) => slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.state == SlotState::Published && s.bytes < SMALL_PACK_BYTES)
                .map(|(i, s)| (i as u32, s.name.clone()))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Merges the small packs into one when there are [`MERGE_AT`] of them.
    /// Skipped (returning 0) while a gc runs, which rewrites and deletes
    /// packs itself, or another process merges. Returns how many packs were
    /// merged into one.
    pub fn merge_small(&self) -> Result<usize, StoreError> {
        if self.small_packs().len() < MERGE_AT {
            return Ok(0);
        }
        // Neither lock is waited for: a merge can always wait for the next
        // batch, and the caller is a writer in the middle of a snapshot.
        let Some(_gc) = try_lock(&self.gc_lock, Share::Shared)? else {
            return Ok(0);
        };
        let Some(_merging) = try_lock(&merge_lock_path(&self.dir), Share::Exclusive)? else {
            return Ok(0);
        };
        // Another process may have merged or published since.
        self.reload()?;
        let small = self.small_packs();
        if small.len() < MERGE_AT {
            return Ok(0);
        }
        let mut copied_from = Vec::new();
        let into = self.write_copy(|writer, entries| {
            let mut seen = HashSet::new();
            for (slot, name) in &small {
                // A pack deleted since the reload (by nobody but a gc or a
                // merger, both locked out) is skipped, not merged.
                let Some((of_pack, _)) = self.read_index(name)? else {
                    continue;
                };
                let path = pack_path(&self.dir, name);
                let file = match File::open(&path) {
                    Ok(f) => f,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(StoreError::io("reading pack", path, e)),
                };
                let new = of_pack.iter().filter(|e| seen.insert(e.id));
                copy_records(writer, &file, &path, new, entries)?;
                copied_from.push((*slot, name.clone()));
            }
            Ok(())
        })?;
        // Every object of the merged packs is now in the new one, durably:
        // the old files can go. A failure leaves duplicates, never a gap.
        self.delete_packs(&copied_from)?;
        let into = self
            .slot_name(into)
            .map(|(name, _)| name)
            .unwrap_or_default();
        tracing::debug!(packs = copied_from.len(), into = %into, "small packs merged");
        Ok(copied_from.len())
    }
}

enum Share {
    Shared,
    Exclusive,
}

/// `path` opened (created if missing) and locked without waiting; `None`
/// when another process holds a conflicting lock.
fn try_lock(path: &std::path::Path, share: Share) -> Result<Option<File>, StoreError> {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| StoreError::io("opening a lock", path, e))?;
    let locked = match share {
        Share::Shared => file.try_lock_shared(),
        Share::Exclusive => file.try_lock(),
    };
    match locked {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(StoreError::io("taking a lock", path, e)),
    }
}
