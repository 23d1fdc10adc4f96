//! Where a project's hook server lives and who may talk to it: the
//! directory `server/` in the project's store, made mode 0700 so only its
//! user can reach the socket, whose peer's uid the server checks again; and
//! which build of rewind a server is, so a hook never talks to another one.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rewind::store::Layout;

/// A project's server: its directory in the store and the files in it.
#[derive(Clone, Debug)]
pub struct Place {
    pub project: PathBuf,
    pub store: PathBuf,
    dir: PathBuf,
}

impl Place {
    /// The server of the project `root` (canonical) recording into `store`.
    pub fn new(project: PathBuf, store: PathBuf) -> Place {
        let dir = Layout::new(&store).server_dir();
        Place {
            project,
            store,
            dir,
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("hook.sock")
    }

    /// Held by the running server for its whole life: one server per store.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("server.lock")
    }

    /// Where the server's own log goes (it has no terminal).
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Make the directory (and the store above it) if needed, mode 0700,
    /// and check it is ours: a socket in a directory someone else can
    /// enter could be replaced by theirs.
    pub fn prepare(&self) -> Result<()> {
        if let Some(parent) = self.dir.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        // Created private, not made private after: a `rewind server
        // status` looking in between would find it open and refuse it.
        match std::fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("creating {}", self.dir.display())),
        }
        // One an older build made with the default mode.
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("making {} private", self.dir.display()))?;
        self.check()
    }

    /// The directory exists, is ours, and only we can enter it.
    pub fn check(&self) -> Result<()> {
        let m = std::fs::symlink_metadata(&self.dir)
            .with_context(|| format!("reading {}", self.dir.display()))?;
        if !m.is_dir() || m.uid() != effective_uid() || m.mode() & 0o077 != 0 {
            bail!(
                "{} is not a private directory of this user (mode {:o}, owner {})",
                self.dir.display(),
                m.mode() & 0o7777,
                m.uid()
            );
        }
        Ok(())
    }
}

pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The uid of the process at the other end of a Unix socket.
pub fn peer_uid(stream: &std::os::unix::net::UnixStream) -> std::io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED writes one `ucred` into a buffer of its size, and
    // the descriptor is a live socket for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// Which build of rewind this is: its version and the binary's path, size
/// and modification time. A hook talks only to a server of its own build:
/// one started by an older binary (replaced since, or another install)
/// could record by other rules.
pub fn build_id() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let (len, mtime) = std::fs::metadata(&exe)
        .map(|m| (m.len(), m.mtime() * 1_000_000_000 + m.mtime_nsec()))
        .unwrap_or_default();
    format!(
        "{} {} {len} {mtime}",
        env!("CARGO_PKG_VERSION"),
        exe.display()
    )
}

/// The canonical project and its default store a directory names.
pub fn of_project(dir: &Path) -> Result<Place> {
    let root = dir
        .canonicalize()
        .with_context(|| format!("project {}", dir.display()))?;
    let store = rewind::engine::default_store_dir(&root);
    Ok(Place::new(root, store))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server directory is never seen open: a `check` racing the
    /// `prepare` that creates it finds it missing or private (the fix
    /// for a status that found it between mkdir and chmod).
    #[test]
    fn a_check_beside_prepare_never_finds_the_directory_open() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..200 {
            let place = Place::new(tmp.path().to_path_buf(), tmp.path().join(format!("s{i}")));
            let racing = Place::new(tmp.path().to_path_buf(), tmp.path().join(format!("s{i}")));
            let t = std::thread::spawn(move || place.prepare().unwrap());
            while !t.is_finished() {
                if racing.dir.exists() {
                    let m = std::fs::symlink_metadata(&racing.dir).unwrap();
                    assert_eq!(m.mode() & 0o077, 0, "seen with mode {:o}", m.mode());
                }
            }
            t.join().unwrap();
            racing.check().unwrap();
        }
    }
}
