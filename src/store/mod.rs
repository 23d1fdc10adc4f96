//! Content-addressed object store: blobs (file contents, symlink targets) and directory
//! trees, addressed by xxh3-128 of their uncompressed bytes.
//!
//! The layout under the store root (every path in it) is [`Layout`]'s, which
//! mirrors docs/format.md "Layout".
//!
//! - [`ObjectId`]: the content address.
//! - [`Store`]: put/get with hash verification on every read, dedup, atomic writes.
//! - [`Tree`]: the canonical directory encoding; unchanged directories keep their id.
//! - [`diff_trees`], [`flatten`], [`lookup`], [`build_tree`]: whole-tree operations that
//!   read only the directories they need.

pub(crate) mod checked;
mod codec;
mod diff;
mod error;
mod flat_cache;
mod flat_tree;
mod generation;
mod layout;
mod listing;
mod object_id;
mod objects;
mod pack;
mod pack_set;
pub(crate) mod saved_flat;
mod tree;

pub use diff::{classify, diff_trees, Change, ChangeClass, UncapturedPaths};
pub use error::StoreError;
pub use flat_cache::FlatCache;
pub use flat_tree::{build_tree, entries_under, flatten, lookup, update_tree, FlatTree};
pub use generation::{DeletionGuard, WriterGuard};
pub use layout::{project_hash, Home, Layout};
pub use listing::{ObjectInfo, KNOWN_OBJECT_TTL};
pub use object_id::ObjectId;
/// The pack format, for the remote (docs/remote.md), which carries packs as they are.
pub(crate) use objects::decode_record;
pub use objects::{FilePut, PutOutcome, Store, StoreUsage, STORE_VERSION};
pub(crate) use pack::{decode_index, encode_index, pack_header, IndexEntry, PACK_HEADER_LEN};
pub use tree::{
    empty_tree_id, is_git_dir, names_git_dir, EntryKind, Tree, TreeEntry, UncapturedReason,
    TREE_VERSION,
};

/// A store in a fresh temp directory, opened without fsync (the tests of
/// every store module use one).
#[cfg(test)]
pub(crate) fn new_test_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("store"), false).expect("open store");
    (dir, store)
}
