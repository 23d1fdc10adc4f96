//! Where a project's hook server lives and who may talk to it: the
//! directory `server/` in the project's store, made mode 0700 so only its
//! user can reach the socket, whose peer's uid the server checks again; and
//! which build of rewind a server is, so a hook never talks to another one.
//!
//! A socket's address holds at most 107 bytes of path: a store deep enough
//! (a long `REWIND_HOME`) has a socket path too long to bind or connect
//! to. The socket stays where it is and is named through an open handle on
//! its directory instead (`/proc/self/fd/<fd>/hook.sock`), opened without
//! following a symlink and checked private first (docs/architecture.md
//! "The hook server").

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
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

/// How a socket is named to `bind` and `connect`: its path, or, when that
/// is too long for a socket address, a short path through a handle on its
/// directory, which must stay open while the name is used.
pub struct SocketName {
    pub path: PathBuf,
    _dir: Option<File>,
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

    /// Why the last server could not start, and when hooks try again
    /// (`backoff.rs`).
    pub fn start_failure(&self) -> PathBuf {
        self.dir.join("start-failed.json")
    }

    /// Whether the directory exists at all (none: no server ever ran).
    pub fn exists(&self) -> bool {
        std::fs::symlink_metadata(&self.dir).is_ok()
    }

    /// The name to bind or connect the socket by (see the module's
    /// comment): its path when that fits in a socket address.
    pub fn socket_name(&self) -> Result<SocketName> {
        let path = self.socket();
        if path.as_os_str().len() < sun_path_len() {
            return Ok(SocketName { path, _dir: None });
        }
        if !Path::new("/proc/self/fd").is_dir() {
            bail!(
                "{} is {} bytes, longer than a socket address holds, and /proc is not mounted to name it otherwise",
                path.display(),
                path.as_os_str().len()
            );
        }
        let dir = open_dir(&self.dir)?;
        let m = dir
            .metadata()
            .with_context(|| format!("reading {}", self.dir.display()))?;
        check_meta(&self.dir, &m)?;
        let short = PathBuf::from(format!("/proc/self/fd/{}/hook.sock", dir.as_raw_fd()));
        Ok(SocketName {
            path: short,
            _dir: Some(dir),
        })
    }

    /// Make the directory (and the store above it) if needed, mode 0700,
    /// and check it is ours: a socket in a directory someone else can
    /// enter could be replaced by theirs. A symlink in its place is
    /// refused, and nothing is changed through it: its target's mode is
    /// not ours to change.
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
        // One an older build made with the default mode: made private
        // through a handle on the directory itself (fchmod), never by its
        // path, which a symlink could lead elsewhere.
        let dir = open_dir(&self.dir)?;
        let m = dir
            .metadata()
            .with_context(|| format!("reading {}", self.dir.display()))?;
        if m.uid() == effective_uid() && m.mode() & 0o077 != 0 {
            dir.set_permissions(std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("making {} private", self.dir.display()))?;
        }
        self.check()
    }

    /// The directory exists, is ours, and only we can enter it.
    pub fn check(&self) -> Result<()> {
        let m = std::fs::symlink_metadata(&self.dir)
            .with_context(|| format!("reading {}", self.dir.display()))?;
        check_meta(&self.dir, &m)
    }
}

/// `dir` as `m` describes it (not following a symlink) is a directory of
/// this user that no one else can enter.
fn check_meta(dir: &Path, m: &std::fs::Metadata) -> Result<()> {
    if m.file_type().is_symlink() {
        bail!(
            "{} is a symbolic link, not a private directory of this user",
            dir.display()
        );
    }
    if !m.is_dir() || m.uid() != effective_uid() || m.mode() & 0o077 != 0 {
        bail!(
            "{} is not a private directory of this user (mode {:o}, owner {})",
            dir.display(),
            m.mode() & 0o7777,
            m.uid()
        );
    }
    Ok(())
}

/// A handle on the directory `dir` itself: not a symlink's target.
fn open_dir(dir: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)
        .map_err(|e| match e.raw_os_error() {
            // A symlink fails with ELOOP, or with ENOTDIR as O_DIRECTORY
            // is checked first: which one it is, lstat says.
            Some(libc::ELOOP | libc::ENOTDIR) => match std::fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_symlink() => anyhow::anyhow!(
                    "{} is a symbolic link, not a private directory of this user",
                    dir.display()
                ),
                _ => anyhow::anyhow!(
                    "{} is not a directory (the hook server's belongs there)",
                    dir.display()
                ),
            },
            _ => anyhow::Error::new(e).context(format!("opening {}", dir.display())),
        })
}

/// The size of a socket address's path field, its terminating NUL
/// included: a path of this many bytes or more cannot be bound.
fn sun_path_len() -> usize {
    // SAFETY: sockaddr_un is plain data (an integer and a byte array), for
    // which all zeroes is a valid value.
    let addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_path.len()
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

    /// A socket path too long for a socket address is bound and reached
    /// through the directory's handle, and the socket is where it belongs.
    #[test]
    fn a_socket_path_too_long_for_an_address_is_reached_through_its_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("s".repeat(120));
        let place = Place::new(tmp.path().to_path_buf(), store);
        place.prepare().unwrap();
        assert!(place.socket().as_os_str().len() >= sun_path_len());
        let name = place.socket_name().unwrap();
        assert!(name.path.starts_with("/proc/self/fd/"), "{:?}", name.path);
        let listener = std::os::unix::net::UnixListener::bind(&name.path).unwrap();
        drop(name);
        assert!(std::fs::symlink_metadata(place.socket()).is_ok());
        let name = place.socket_name().unwrap();
        let _client = std::os::unix::net::UnixStream::connect(&name.path).unwrap();
        let (peer, _) = listener.accept().unwrap();
        assert_eq!(peer_uid(&peer).unwrap(), effective_uid());
        // A short one is its own name.
        let short = Place::new(tmp.path().to_path_buf(), tmp.path().join("t"));
        assert_eq!(short.socket_name().unwrap().path, short.socket());
    }

    /// A symlink where the directory belongs is refused, and its target
    /// keeps its mode.
    #[test]
    fn a_symlink_for_the_directory_is_refused_and_its_target_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        let place = Place::new(tmp.path().to_path_buf(), tmp.path().join("store"));
        std::fs::create_dir(&place.store).unwrap();
        std::os::unix::fs::symlink(&target, &place.dir).unwrap();
        let err = format!("{:#}", place.prepare().unwrap_err());
        assert!(err.contains("symbolic link"), "{err}");
        assert!(place.check().is_err());
        let mode = std::fs::metadata(&target).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o755);
    }
}
