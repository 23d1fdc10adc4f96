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
