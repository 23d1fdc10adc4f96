//! Reaching paths below the project root without ever following a symlink
//! (docs/architecture.md rule 7). Every
//! component is opened relative to its parent's handle with `O_NOFOLLOW |
//! O_DIRECTORY`, and the final operation (create, rename, unlink, read) is
//! made relative to the handle of the directory that holds the path. A
//! component swapped for a symlink after it was checked therefore cannot
//! redirect a write: the handle still names the real directory, wherever it
//! now is, and a symlink met on the way refuses the path.
//!
//! `rustix` gives safe `*at` calls; `cap-std` would do the same but resolves
//! symlinks that stay inside its sandbox, where a restore must refuse every
//! symlinked parent, and refuses absolute link targets on read.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use crate::repo_path::decode_name;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Why a path cannot be reached.
#[derive(Debug)]
pub enum Unreachable {
    /// A parent component is not a real directory: `(prefix, what)`.
    Blocked(String, &'static str),
    Io(io::Error),
}

impl From<rustix::io::Errno> for Unreachable {
    fn from(e: rustix::io::Errno) -> Self {
        Unreachable::Io(e.into())
    }
}

/// The project root's handle (the root itself may be reached through a
/// symlink: it is the user's choice of directory).
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// One directory below `at`, never through a symlink.
pub fn open_dir(at: impl AsFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The kind of what stands at `name` in `dir` (not following a symlink), or
/// `None` when nothing does.
pub fn kind_at(dir: impl AsFd, name: &OsStr) -> io::Result<Option<FileType>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(FileType::from_raw_mode(st.st_mode))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn what(kind: Option<FileType>) -> &'static str {
    match kind {
        Some(FileType::Symlink) => "a symlink",
        Some(FileType::RegularFile) => "a file",
        _ => "something that is not a directory",
    }
}

/// The handles from the root down to a path's parent, and the path's last
/// component as named on disk.
pub type Reached<'a> = (Vec<OwnedFd>, Cow<'a, OsStr>);

/// The handles of the root and of every directory on the way to `rel`'s
/// parent, in order (`[root, a, a/b]` for `a/b/c`), and `rel`'s last
/// component as it is named on disk (`repo_path::decode_name`). `create`:
/// make missing directories; otherwise a missing one gives `Ok(None)`
/// (nothing can exist below it).
pub fn walk_to_parent<'a>(
    root: &Path,
    rel: &'a str,
    create: bool,
) -> Result<Option<Reached<'a>>, Unreachable> {
    let mut chain = vec![open_root(root).map_err(Unreachable::Io)?];
    let (parents, name) = match rel.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, rel),
    };
    let mut prefix = String::new();
    for comp_str in parents.into_iter().flat_map(|p| p.split('/')) {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(comp_str);
        let comp = decode_name(comp_str);
        let comp: &OsStr = &comp;
        let cur = chain
            .last()
            .ok_or(Unreachable::Io(io::ErrorKind::NotFound.into()))?;
        let next = match open_dir(cur, comp) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(cur, comp, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                match open_dir(cur, comp) {
                    Ok(fd) => fd,
                    Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                        let kind = kind_at(cur, comp).map_err(Unreachable::Io)?;
                        return Err(Unreachable::Blocked(prefix, what(kind)));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                let kind = kind_at(cur, comp).map_err(Unreachable::Io)?;
                return Err(Unreachable::Blocked(prefix, what(kind)));
            }
            Err(e) => return Err(e.into()),
        };
        chain.push(next);
    }
    Ok(Some((chain, decode_name(name))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_real_directories_and_refuses_symlinks_and_files() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        std::fs::write(r.join("f"), "x").unwrap();
        std::os::unix::fs::symlink(r.join("a"), r.join("l")).unwrap();
        let (chain, name) = walk_to_parent(r, "a/b/c", false).unwrap().unwrap();
        assert_eq!((chain.len(), &*name), (3, OsStr::new("c")));
        assert!(walk_to_parent(r, "x/y/z", false).unwrap().is_none());
        let (chain, _) = walk_to_parent(r, "x/y/z", true).unwrap().unwrap();
        assert_eq!(chain.len(), 3);
        assert!(r.join("x/y").is_dir());
        assert!(matches!(
            walk_to_parent(r, "l/b/c", true),
            Err(Unreachable::Blocked(p, "a symlink")) if p == "l"
        ));
        assert!(matches!(
            walk_to_parent(r, "f/c", true),
            Err(Unreachable::Blocked(p, "a file")) if p == "f"
        ));
        let (chain, name) = walk_to_parent(r, "top", false).unwrap().unwrap();
        assert_eq!((chain.len(), &*name), (1, OsStr::new("top")));
    }
}
