//! The hard bounds on what a remote may claim (docs/remote.md "What a remote
//! can and cannot do to you"). Anyone who can write to the bucket chooses
//! every size a listing, an index or a manifest states, so no size from a
//! remote sizes an allocation: each is checked against these bounds before
//! anything is fetched, and again against the bytes that actually arrive
//! (a download stops at its bound, whatever the listing said).
//!
//! Each bound is far above what rewind itself writes, so an honest remote
//! never meets one; a remote past one is refused in one line naming it.
//! The size a push closes its packs at ([`REMOTE_PACK_BYTES`]) is here too:
//! the pack bound is made from it.

/// Packs on the remote close at this size: two requests (pack and index)
/// per 32 MiB of packed data, and a pull that needs one object of a pack
/// downloads at most this much for it.
pub const REMOTE_PACK_BYTES: usize = 32 << 20;

/// A manifest: a few dozen bytes per chunk, a chunk per push.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// A session file assembled from its chunks (and so any one chunk).
pub const MAX_SESSION_BYTES: u64 = 1 << 30;

/// One record (an object as stored, header included): a file's content,
/// compressed, is the largest thing rewind stores.
pub const MAX_RECORD_BYTES: u64 = 1 << 30;

/// A pack: a push closes one at [`REMOTE_PACK_BYTES`], its last record may
/// pass that by one record.
pub const MAX_PACK_BYTES: u64 = REMOTE_PACK_BYTES as u64 + MAX_RECORD_BYTES;

// A pack rewind writes holds any record it writes.
const _: () = assert!(MAX_PACK_BYTES > MAX_RECORD_BYTES);

/// A pack's index: 32 bytes an object (a 32 MiB pack of the smallest
/// records is about 1.7 M objects, 54 MiB of index).
pub const MAX_INDEX_BYTES: u64 = 64 << 20;

/// Why `claimed` bytes of `what` are refused, or `None` within `max`.
pub fn over(claimed: u64, max: u64) -> Option<String> {
    (claimed > max).then(|| {
        format!("{claimed} bytes, more than the {max} rewind ever writes there: refused unread")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_refuse_what_is_past_them_only() {
        assert_eq!(over(MAX_MANIFEST_BYTES, MAX_MANIFEST_BYTES), None);
        assert!(over(MAX_MANIFEST_BYTES + 1, MAX_MANIFEST_BYTES).is_some());
        assert!(over(u64::MAX, MAX_PACK_BYTES).is_some());
    }
}
