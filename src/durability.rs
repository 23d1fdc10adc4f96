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

/// Replace `path` with `bytes` atomically: a temp file beside it, written
/// (and with `fsync`, synced), renamed over it, and with `fsync` the
/// directory synced, so a reader sees the old content or the new, never a
/// mix, and after a crash the old or the new survives.
pub fn atomic_write(path: &Path, bytes: &[u8], fsync: bool) -> io::Result<()> {
    use std::io::Write;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(
        ".tmp-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    let tmp = path.with_file_name(name);
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        if fsync {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if fsync {
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
    }
    Ok(())
}
