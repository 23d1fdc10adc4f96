//! Making writes durable: one `syncfs` for a batch of files where the OS has
//! it (Linux), else a directory fsync. Both the store (a snapshot's objects)
//! and restores (the files they write) batch their writes this way, because
//! one fsync per file costs more than the writes themselves.

use std::fs::File;
use std::io;
use std::path::Path;

/// Whether [`sync_filesystem`] flushes the whole filesystem (so per-file
/// fsyncs before it can be skipped).
pub const BATCH_SYNC: bool = cfg!(target_os = "linux");

/// Flush everything written on the filesystem holding `path`: contents,
/// renames and directory entries.
#[cfg(target_os = "linux")]
pub fn sync_filesystem(path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let dir = File::open(path)?;
    // SAFETY: syncfs only reads the descriptor, which `dir` keeps open.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Without syncfs: the directory itself (callers fsync each file first,
/// see [`BATCH_SYNC`]).
#[cfg(not(target_os = "linux"))]
pub fn sync_filesystem(path: &Path) -> io::Result<()> {
    sync_dir(path)
}

/// Make a directory's entries (creations, renames, removals) durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replace `path` atomically: `temp` (beside it; the store's layout names
/// every one, docs/format.md "Layout") created, filled by `fill` and with
/// `fsync` synced, then renamed over `path`, and with `fsync` the directory
/// synced. A reader sees the old content or the new, never a mix, and after
/// a crash the old or the new survives. Without `fsync` nothing is synced:
/// a crash of the process still leaves the old content or the new, a power
/// loss may leave neither (fine only for what can be lost, like a cache).
pub fn atomic_write(
    path: &Path,
    temp: &Path,
    fsync: bool,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    write_temp(temp, fsync, fill)?;
    rename_into_place(temp, path)?;
    if fsync {
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
    }
    Ok(())
}

/// The first half of an atomic write, for writers that sync or rename a
/// batch of files at once: `temp` created (or truncated) and filled by
/// `fill`, with `fsync` synced; removed again if any of that fails.
pub fn write_temp(
    temp: &Path,
    fsync: bool,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let write = || -> io::Result<()> {
        let mut f = File::create(temp)?;
        fill(&mut f)?;
        if fsync {
            f.sync_all()?;
        }
        Ok(())
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(temp);
    })
}

/// The second half: `temp` renamed over `path`, or removed if that fails.
/// Making the rename durable (syncing the directory) is the caller's: a
/// batch syncs once after many renames.
pub fn rename_into_place(temp: &Path, path: &Path) -> io::Result<()> {
    std::fs::rename(temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(temp);
    })
}
