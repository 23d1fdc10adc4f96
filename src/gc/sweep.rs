//! The sweep (docs/architecture.md rule 10): with the `gc-generation` bumped
//! first, loose objects that nothing marked and that are past the grace period
//! are deleted, packs holding such objects are rewritten without them, and
//! stale temp files go.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::time::SystemTime;

use super::{GcError, GcOptions};
use crate::store::{DeletionGuard, ObjectId, ObjectInfo, Store};

/// How much a sweep removed (or would, in a dry run).
#[derive(Debug)]
pub(super) struct Swept {
    pub objects_removed: u64,
    pub bytes_freed: u64,
}

pub(super) fn is_old(modified: SystemTime, cutoff: Option<SystemTime>) -> bool {
    cutoff.is_some_and(|c| modified < c)
}

/// Removes what `live` does not hold and is older than the grace period,
/// from `listing` (loose objects) and the packs. `blocked`: something could
/// not be read, so nothing is deleted (the generation is still bumped, as
/// before any deletion). A dry run (no `deletion` guard) only counts.
pub(super) fn sweep(
    store: &Store,
    listing: &[ObjectInfo],
    live: &HashSet<ObjectId>,
    blocked: bool,
    deletion: Option<&mut DeletionGuard>,
    dry_run: bool,
    opts: &GcOptions,
) -> Result<Swept, GcError> {
    let cutoff = opts.now.checked_sub(opts.grace);
    let old = |o: &ObjectInfo| is_old(o.modified, cutoff);
    let garbage: Vec<&ObjectInfo> = if blocked {
        Vec::new()
    } else {
        listing
            .iter()
            .filter(|o| !o.packed && !live.contains(&o.id) && old(o))
            .collect()
    };
    let mut objects_removed = 0u64;
    let mut bytes_freed = 0u64;
    if let Some(guard) = deletion {
        // Before the first deletion: every writer re-validates what it
        // trusts before its next snapshot.
        guard.bump()?;
    }
    if !blocked {
        // Packed garbage: packs past the grace period are rewritten without it.
        let (n, bytes) = store.prune_packs(&|id| live.contains(id), cutoff, dry_run)?;
        objects_removed += n;
        bytes_freed += bytes;
    }
    if dry_run {
        objects_removed += garbage.len() as u64;
        bytes_freed += garbage.iter().map(|o| o.stored_bytes).sum::<u64>();
    } else {
        for o in &garbage {
            // A put that re-used the object since the listing refreshed its mtime.
            if still_old(store, &o.id, cutoff)? && store.remove(&o.id)? {
                objects_removed += 1;
                bytes_freed += o.stored_bytes;
            }
        }
        let temps = store.remove_stale_temps(opts.grace)?;
        if temps > 0 {
            tracing::info!(temps, "gc removed stale temp files");
        }
    }
    Ok(Swept {
        objects_removed,
        bytes_freed,
    })
}

/// Whether the object file is still there and still older than the cutoff.
fn still_old(store: &Store, id: &ObjectId, cutoff: Option<SystemTime>) -> Result<bool, GcError> {
    let path = store.object_path(id);
    match fs::metadata(&path).and_then(|m| m.modified()) {
        Ok(modified) => Ok(is_old(modified, cutoff)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(GcError::io("checking object age", &path, e)),
    }
}
