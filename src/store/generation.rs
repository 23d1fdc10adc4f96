//! Who may delete objects, and how everyone else learns that it happened.
//!
//! A process that writes snapshots trusts facts it learnt earlier: its stat
//! cache vouches for a file's blob without touching the store, its pack
//! indexes and its "known objects" say an object exists so a put writes
//! nothing. Each of those facts is only as good as the assumption that no
//! object was deleted since. gc breaks that assumption, so it is made
//! explicit (docs/format.md "Garbage collection", docs/architecture.md):
//!
//! - `<store>/gc.lock` is locked **exclusively** for a whole gc run, and
//!   **shared** by a writer from the start of a scan until the entry that
//!   references its tree is appended ([`WriterGuard`]). So gc never marks
//!   while a writer holds references no session file shows yet.
//! - `<store>/gc-generation` (ASCII decimal) is bumped by gc, under the
//!   exclusive lock, before it deletes anything. A writer compares it with
//!   the generation its facts were validated at; when it moved, it drops
//!   every such fact ([`super::Store::refresh_after_gc`]) and re-checks the
//!   rest (the engine's stat cache) before relying on any of them.

use std::fs::{self, File};
use std::io::{self, Write};

use super::{Layout, StoreError};

/// Held by a writer (shared lock on `gc.lock`): no gc deletes anything while
/// it lives.
#[derive(Debug)]
pub struct WriterGuard {
    _lock: File,
    /// The generation read under the lock.
    pub generation: u64,
    /// gc deleted objects since this store last validated what it trusts:
    /// call [`super::Store::refresh_after_gc`] (and re-check caches) first.
    pub stale: bool,
}

/// Held by gc (exclusive lock on `gc.lock`).
#[derive(Debug)]
pub struct DeletionGuard {
    _lock: File,
    layout: Layout,
    bumped: bool,
    fsync: bool,
}

impl DeletionGuard {
    /// Tell every writer that objects may disappear from here on: called
    /// before the first deletion (once; later calls do nothing).
    pub fn bump(&mut self) -> Result<(), StoreError> {
        if self.bumped {
            return Ok(());
        }
        let next = read_generation(&self.layout)?.wrapping_add(1);
        let path = self.layout.generation();
        let temp = self.layout.generation_temp();
        crate::durability::atomic_write(&path, &temp, self.fsync, |f| {
            f.write_all(format!("{next}\n").as_bytes())
        })
        .map_err(|e| StoreError::io("writing the gc generation", &path, e))?;
        self.bumped = true;
        Ok(())
    }
}

fn open_lock(layout: &Layout) -> Result<File, StoreError> {
    let path = layout.gc_lock();
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| StoreError::io("opening the gc lock", &path, e))
}

/// The store's gc generation (0 before the first gc that deleted anything).
pub fn read_generation(layout: &Layout) -> Result<u64, StoreError> {
    let path = layout.generation();
    match fs::read_to_string(&path) {
        Ok(s) => s.trim().parse().map_err(|_| {
            StoreError::io(
                "reading the gc generation",
                &path,
                io::Error::new(io::ErrorKind::InvalidData, format!("not a number: {s:?}")),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(StoreError::io("reading the gc generation", &path, e)),
    }
}

/// Waits for any running gc to finish, then holds it off.
pub fn writer_guard(layout: &Layout, validated_at: u64) -> Result<WriterGuard, StoreError> {
    let lock = open_lock(layout)?;
    lock.lock_shared()
        .map_err(|e| StoreError::io("locking the store against gc", layout.gc_lock(), e))?;
    let generation = read_generation(layout)?;
    Ok(WriterGuard {
        _lock: lock,
        generation,
        stale: generation != validated_at,
    })
}

/// Waits for every writer's current snapshot to be recorded, then holds
/// new ones off until dropped.
pub fn deletion_guard(layout: &Layout, fsync: bool) -> Result<DeletionGuard, StoreError> {
    let lock = open_lock(layout)?;
    lock.lock()
        .map_err(|e| StoreError::io("locking the store for gc", layout.gc_lock(), e))?;
    Ok(DeletionGuard {
        _lock: lock,
        layout: layout.clone(),
        bumped: false,
        fsync,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bump_makes_writers_stale_once() {
        let d = tempfile::tempdir().unwrap();
        let root = &Layout::new(d.path());
        let w = writer_guard(root, 0).unwrap();
        assert!(!w.stale);
        drop(w);
        let mut g = deletion_guard(root, false).unwrap();
        g.bump().unwrap();
        g.bump().unwrap();
        drop(g);
        assert_eq!(read_generation(root).unwrap(), 1);
        let w = writer_guard(root, 0).unwrap();
        assert!(w.stale);
        assert_eq!(w.generation, 1);
        assert!(!writer_guard(root, 1).unwrap().stale);
    }

    #[test]
    fn gc_waits_for_a_writer() {
        let d = tempfile::tempdir().unwrap();
        let root = Layout::new(d.path());
        let w = writer_guard(&root, 0).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let r2 = root.clone();
        let t = std::thread::spawn(move || {
            let _g = deletion_guard(&r2, false).unwrap();
            tx.send(()).unwrap();
        });
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(200))
            .is_err());
        drop(w);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        t.join().unwrap();
    }
}
