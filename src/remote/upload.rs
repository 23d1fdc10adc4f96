//! The objects of a push on their way up: records read from the store into
//! packs while earlier packs upload, several packs in flight at once, and
//! each pack's index published in order (docs/remote.md "Crash
//! consistency").
//!
//! Why the order: a push skips any tree a remote index names, trusting its
//! whole subtree to be there. The walk emits children before their trees,
//! so a tree's children are in its own pack or an earlier one; an index
//! goes up only after its pack and after every earlier pack's index, so a
//! push cut short anywhere never leaves an indexed tree whose children are
//! not indexed. Pack bytes themselves may arrive in any order: a pack no
//! index names is invisible (a later gc deletes it as a stray).
//!
//! Why several in flight: each request to the server has a fixed cost (its
//! metadata written and synced) on top of its bytes; with one pack at a
//! time a push waited it out once per pack, and read nothing while the
//! last one went up.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver};
use std::sync::{Arc, Mutex};

use super::error::RemoteError;
use super::{keys, Remote};
use crate::store::{encode_index, pack_header, IndexEntry, ObjectId, Store, PACK_HEADER_LEN};

/// The first pack of a push closes at this size (or the remote's pack
/// size, if smaller), each next one at twice the one before, up to the
/// pack size: the network starts working after 4 MiB has been read, not
/// 32, and a large push still makes few requests (4, 8, 16, then 32 MiB
/// packs: 3 packs more than 32 MiB packs alone, whatever the size).
pub const FIRST_PACK_BYTES: usize = 4 << 20;

/// Packs uploading at once. Memory is at most this many packs plus the
/// one being filled (handed over only when an uploader is free).
const PACKS_IN_FLIGHT: usize = 2;

/// What the objects' part of a push sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uploaded {
    pub objects: u64,
    pub packs: u64,
    pub packed_bytes: u64,
}

/// A pack being put together in memory, in the local pack format.
struct PackBuilder {
    bytes: Vec<u8>,
    entries: Vec<IndexEntry>,
}

impl PackBuilder {
    fn new() -> PackBuilder {
        PackBuilder {
            bytes: pack_header().to_vec(),
            entries: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn append(&mut self, id: ObjectId, record: &[u8]) {
        self.entries.push(IndexEntry {
            id,
            offset: self.bytes.len() as u64,
            len: record.len() as u64,
        });
        self.bytes.extend_from_slice(record);
    }
}

/// A pack whose bytes are on the remote, its index not yet.
struct Landed {
    name: String,
    index: Vec<u8>,
    objects: u64,
    bytes: u64,
}

/// Uploads the objects `walk` emits (in the order it emits them, children
/// before trees), reading their records from `store` while earlier packs
/// upload.
pub fn upload_objects(
    store: &Store,
    remote: &Remote,
    walk: impl FnOnce(&mut dyn FnMut(ObjectId) -> Result<(), RemoteError>) -> Result<(), RemoteError>,
) -> Result<Uploaded, RemoteError> {
    // Set by whichever stage fails first: the others stop taking work.
    let stop = AtomicBool::new(false);
    let stopped = || RemoteError::Backend {
        url: remote.backend.url().to_owned(),
        message: "the upload stopped".into(),
    };
    std::thread::scope(|scope| {
        let (packs_tx, packs_rx) = sync_channel::<(u64, PackBuilder)>(0);
        // Shared by the uploaders, and dropped with the last of them: a
        // send into it then fails instead of waiting for ever.
        let packs_rx = Arc::new(Mutex::new(packs_rx));
        let (landed_tx, landed_rx) = channel::<(u64, Result<Landed, RemoteError>)>();
        for _ in 0..PACKS_IN_FLIGHT {
            let (packs_rx, landed_tx, stop) = (packs_rx.clone(), landed_tx.clone(), &stop);
            scope.spawn(move || upload_packs(remote, &packs_rx, &landed_tx, stop));
        }
        drop((packs_rx, landed_tx));
        let publisher = scope.spawn(|| publish_indexes(remote, landed_rx, &stop));

        let built = (|| {
            let mut pack = PackBuilder::new();
            let mut close_at = FIRST_PACK_BYTES.min(remote.pack_bytes);
            let mut seq = 0u64;
            walk(&mut |id| {
                if stop.load(Ordering::Relaxed) {
                    return Err(stopped());
                }
                let record = store.read_record(&id)?;
                if pack.bytes.len() > PACK_HEADER_LEN as usize
                    && pack.bytes.len() + record.len() > close_at
                {
                    close_at = (close_at * 2).min(remote.pack_bytes);
                    let full = std::mem::replace(&mut pack, PackBuilder::new());
                    packs_tx.send((seq, full)).map_err(|_| stopped())?;
                    seq += 1;
                }
                pack.append(id, &record);
                Ok(())
            })?;
            if !pack.is_empty() {
                packs_tx.send((seq, pack)).map_err(|_| stopped())?;
            }
            Ok::<(), RemoteError>(())
        })();
        if built.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        drop(packs_tx);
        let published = publisher.join().map_err(|_| RemoteError::Backend {
            url: remote.backend.url().to_owned(),
            message: "the upload thread panicked".into(),
        })?;
        // The remote's own failure says more than the walk's "stopped".
        let uploaded = published?;
        built?;
        Ok(uploaded)
    })
}

/// One uploader: takes packs until there are none or something failed,
/// uploads each under a fresh name, and hands it to the publisher.
fn upload_packs(
    remote: &Remote,
    packs: &Mutex<Receiver<(u64, PackBuilder)>>,
    landed: &std::sync::mpsc::Sender<(u64, Result<Landed, RemoteError>)>,
    stop: &AtomicBool,
) {
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let next = match packs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((seq, mut pack)) = next else { return };
        // A name of its own, never its content's: a pack pushed again (the
        // same objects, after gc marked the first copy) must not land on
        // the key a gc may be deleting at that moment.
        let name = format!("{:032x}", rand::random::<u128>());
        let index = encode_index(&mut pack.entries);
        let objects = pack.entries.len() as u64;
        let bytes = pack.bytes.len() as u64;
        let result = remote
            .backend
            .put(&keys::pack(&name), pack.bytes)
            .map(|()| Landed {
                name,
                index,
                objects,
                bytes,
            });
        let failed = result.is_err();
        if failed {
            stop.store(true, Ordering::Relaxed);
        }
        if landed.send((seq, result)).is_err() || failed {
            return;
        }
    }
}

/// Publishes the landed packs' indexes strictly in pack order (the module
/// docs say why), keeping each here too: indexes never change. Returns the
/// first failure, after every uploader has finished.
fn publish_indexes(
    remote: &Remote,
    landed: Receiver<(u64, Result<Landed, RemoteError>)>,
    stop: &AtomicBool,
) -> Result<Uploaded, RemoteError> {
    let mut waiting: BTreeMap<u64, Landed> = BTreeMap::new();
    let mut next = 0u64;
    let mut done = Uploaded::default();
    let mut first_error: Option<RemoteError> = None;
    for (seq, result) in landed {
        match result {
            Ok(pack) if first_error.is_none() => {
                waiting.insert(seq, pack);
            }
            Ok(_) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
        while first_error.is_none() {
            let Some(pack) = waiting.remove(&next) else {
                break;
            };
            let published = remote
                .backend
                .put(&keys::pack_index(&pack.name), pack.index.clone())
                .and_then(|()| {
                    super::state::write_file(
                        &remote.state.packs_dir().join(format!("{}.idx", pack.name)),
                        &pack.index,
                    )
                });
            match published {
                Ok(()) => {
                    done.objects += pack.objects;
                    done.packs += 1;
                    done.packed_bytes += pack.bytes;
                    next += 1;
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    first_error = Some(e);
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::tests::{incompressible, side, Side};

    fn landed(name: &str) -> Landed {
        Landed {
            name: name.into(),
            index: vec![1, 2, 3],
            objects: 1,
            bytes: 10,
        }
    }

    /// A store and its `file://` remote in a directory of their own (both
    /// directories removed when dropped: bind them for the test's length).
    fn remote_dir() -> (tempfile::TempDir, Side) {
        let dir = tempfile::tempdir().unwrap();
        let side = side(&format!("file://{}", dir.path().display()));
        (dir, side)
    }

    fn published(remote: &Remote, name: &str) -> bool {
        remote
            .backend
            .get(&keys::pack_index(name), u64::MAX)
            .unwrap()
            .is_some()
    }

    #[test]
    fn a_pack_that_lands_early_is_indexed_once_the_earlier_ones_are() {
        let (_remote_dir, Side { _dir, remote, .. }) = remote_dir();
        let (tx, rx) = channel();
        tx.send((1, Ok(landed("b")))).unwrap();
        tx.send((0, Ok(landed("a")))).unwrap();
        drop(tx);
        let done = publish_indexes(&remote, rx, &AtomicBool::new(false)).unwrap();
        assert_eq!(done.packs, 2);
        assert!(published(&remote, "a") && published(&remote, "b"));
    }

    /// A later pack that landed while an earlier one failed is never
    /// indexed: its trees' children may be in the pack that failed.
    #[test]
    fn a_failed_pack_keeps_every_later_index_unpublished() {
        let (_remote_dir, Side { _dir, remote, .. }) = remote_dir();
        let (tx, rx) = channel();
        tx.send((1, Ok(landed("b")))).unwrap();
        tx.send((
            0,
            Err(RemoteError::Backend {
                url: "file://x".into(),
                message: "cut".into(),
            }),
        ))
        .unwrap();
        tx.send((2, Ok(landed("c")))).unwrap();
        drop(tx);
        let stop = AtomicBool::new(false);
        let err = publish_indexes(&remote, rx, &stop).unwrap_err();
        assert!(err.to_string().contains("cut"), "{err}");
        assert!(!published(&remote, "b") && !published(&remote, "c"));
    }

    /// Through the whole pipeline (two uploaders, packs landing in any
    /// order): every object emitted is in exactly one indexed pack, and no
    /// pack passes the pack size by more than its last record.
    #[test]
    fn every_object_emitted_is_in_exactly_one_indexed_pack() {
        let (
            _remote_dir,
            Side {
                _dir,
                store,
                remote,
            },
        ) = remote_dir();
        let remote = remote.with_pack_bytes(64 << 10);
        // Incompressible 8 KiB objects: about 8 per 64 KiB pack.
        let mut x = 0x9e3779b97f4a7c15u64;
        let ids: Vec<ObjectId> = (0..60)
            .map(|_| store.put(&incompressible(8192, &mut x)).unwrap().id)
            .collect();
        store.sync().unwrap();
        let done = upload_objects(&store, &remote, |emit| {
            ids.iter().try_for_each(|id| emit(*id))
        })
        .unwrap();
        assert_eq!(done.objects, 60);
        let listed = remote.backend.list(&keys::packs_dir()).unwrap();
        let size_of = |name: &str| {
            let key = keys::pack(name);
            listed.iter().find(|l| l.key == key).map(|l| l.size)
        };
        let mut seen = std::collections::HashSet::new();
        let mut sizes = Vec::new();
        for l in &listed {
            let Some(keys::PackKey::Index(name)) = keys::parse_pack_key(&l.key) else {
                continue;
            };
            let pack_len = size_of(&name).expect("an index without its pack");
            sizes.push(pack_len);
            let bytes = remote.backend.get(&l.key, u64::MAX).unwrap().unwrap();
            for entry in crate::store::decode_index(&bytes, pack_len).unwrap() {
                assert!(seen.insert(entry.id), "{} twice", entry.id);
            }
        }
        assert_eq!(seen.len(), 60);
        // Every pack closes at the pack size (the last record may pass it).
        assert!(
            sizes.iter().all(|&n| n <= (64 << 10) + 8192 + 64),
            "{sizes:?}"
        );
        assert_eq!(done.packs as usize, sizes.len());
    }
}
