//! What is known of stored objects beside their content, shared by loose
//! files (`objects/`) and packs (`pack_set`): how long a put may trust that
//! an object exists, an object as gc lists it, and the removal of a crashed
//! writer's leftovers. Its own file so that the pack set, which the object
//! store holds, needs nothing from the object store.

use std::fs;
use std::time::{Duration, SystemTime};

use super::object_id::ObjectId;

/// How long a "this object exists" fact may be reused without touching the file again.
///
/// When a put finds an object already on disk it refreshes the file's mtime, so that a
/// concurrent gc (which spares objects younger than its grace period) cannot delete an
/// object a new snapshot is about to reference. Remembering existence for at most this long
/// keeps repeated puts cheap while bounding how stale that mtime can be: gc's grace period
/// MUST exceed this plus the longest snapshot.
pub const KNOWN_OBJECT_TTL: Duration = Duration::from_secs(10 * 60);

/// One stored object, as listed for gc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    pub id: ObjectId,
    /// Its file's size, or its record's length in a pack.
    pub stored_bytes: u64,
    /// Last write or last dedup hit (see [`KNOWN_OBJECT_TTL`]); for a packed
    /// object, its pack's.
    pub modified: SystemTime,
    /// In a pack (removed by `Store::prune_packs`) rather than a file of
    /// its own (removed by `Store::remove`).
    pub packed: bool,
}

/// Removes a crashed writer's leftover if its mtime is at least `min_age`
/// before `now` (younger ones may belong to a live writer). Whether it did.
pub(super) fn remove_if_stale(entry: &fs::DirEntry, now: SystemTime, min_age: Duration) -> bool {
    let old = entry
        .metadata()
        .and_then(|m| m.modified())
        .map(|m| now.duration_since(m).unwrap_or_default() >= min_age)
        .unwrap_or(false);
    old && fs::remove_file(entry.path()).is_ok()
}
