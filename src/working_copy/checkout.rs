//! Writing the working copy: the filesystem half of a restore. Every write
//! is atomic (temp file + rename, with exactly the captured permission
//! bits: docs/format.md "What a restore does not put back"), symlinks are
//! recreated as links, and nothing is ever written or deleted through a
//! symlinked parent (docs/architecture.md rule 7) — a parent that is not a
//! real directory blocks the path.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawMode};

use super::beneath::{self, Unreachable};
use super::stat_cache::{CachedFile, FileStat};
use crate::store::{EntryKind, ObjectId, TreeEntry};

#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// Something the sidecar never captured stands in the way (a file where
    /// a directory must go, a non-empty directory where a file must go).
    #[error("{path}: blocked by {what}")]
    Blocked { path: String, what: String },
    /// The path no longer holds what the restore was planned against
    /// (see [`matches_on_disk`]): left as it is.
    #[error("{path}: changed since the restore was planned")]
    Changed { path: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &str, source: std::io::Error) -> CheckoutError {
    CheckoutError::Io {
        path: path.to_string(),
        source,
    }
}

fn blocked(rel: &str, prefix: &str, what: &str) -> CheckoutError {
    CheckoutError::Blocked {
        path: rel.to_string(),
        what: format!("{what} at {prefix}"),
    }
}

/// The handles on the way to `rel`'s parent and its last component (see
/// [`beneath::walk_to_parent`]), as a checkout error.
fn reach<'a>(
    root: &Path,
    rel: &'a str,
    create: bool,
) -> Result<Option<beneath::Reached<'a>>, CheckoutError> {
    // Trees never name `.git` (they are refused when read), and a restore
    // never writes or deletes inside one whatever asked it to.
    if crate::store::names_git_dir(rel) {
        return Err(CheckoutError::Blocked {
            path: rel.to_string(),
            what: "git's own directory (rewind never writes into .git)".into(),
        });
    }
    match beneath::walk_to_parent(root, rel, create) {
        Ok(found) => Ok(found),
        Err(Unreachable::Blocked(prefix, what)) => Err(blocked(rel, &prefix, what)),
        Err(Unreachable::Io(e)) => Err(io(rel, e)),
    }
}

/// Is every parent of `rel` a real directory (or absent)? Returns the first
/// component that is something else.
pub fn blocking_parent(root: &Path, rel: &str) -> Option<String> {
    match beneath::walk_to_parent(root, rel, false) {
        Err(Unreachable::Blocked(prefix, _)) => Some(prefix),
        _ => None,
    }
}

/// Prefix of the temp files restores write before renaming them into
/// place. Scans never capture such names, and recovery removes leftovers.
pub const TEMP_PREFIX: &str = ".rewind-tmp-";

fn temp_name() -> String {
    format!("{TEMP_PREFIX}{:016x}", rand::random::<u64>())
}

/// Remove restore temp files a crash left in the directories of `paths`
/// (never looking through a symlinked parent).
pub fn remove_temp_files<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) -> usize {
    let dirs: std::collections::BTreeSet<&str> = paths
        .into_iter()
        .map(|p| p.rsplit_once('/').map(|(d, _)| d).unwrap_or(""))
        .collect();
    let mut removed = 0;
    for d in dirs {
        let probe = if d.is_empty() {
            "x".to_string()
        } else {
            format!("{d}/x")
        };
        let Ok(Some((chain, _))) = beneath::walk_to_parent(root, &probe, false) else {
            continue;
        };
        let Some(dir) = chain.last() else { continue };
        let Ok(mut listing) = rustix::fs::Dir::read_from(dir) else {
            continue;
        };
        let mut temps = Vec::new();
        while let Some(Ok(e)) = listing.read() {
            let name = e.file_name().to_bytes();
            if name.starts_with(TEMP_PREFIX.as_bytes()) && e.file_type() != FileType::Directory {
                temps.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        for t in temps {
            if rustix::fs::unlinkat(dir, t.as_os_str(), AtFlags::empty()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Write `entry` (with `content`: file bytes or link target) at `rel`:
/// into a temp file beside it, renamed over it, all relative to the handle
/// of its directory.
///
/// Not `durability::atomic_write`, which works on paths: every step here
/// (`openat` with `O_EXCL | O_NOFOLLOW` and the file's mode, `symlinkat`,
/// `renameat`, `unlinkat`) goes through the directory handle `beneath`
/// opened, so a parent swapped for a symlink meanwhile cannot redirect the
/// write (docs/architecture.md rule 7). The directory is synced by the
/// restore once for all its writes, not here.
pub fn write_entry(
    root: &Path,
    rel: &str,
    entry: &TreeEntry,
    content: &[u8],
    fsync: bool,
) -> Result<(), CheckoutError> {
    let Some((chain, name)) = reach(root, rel, true)? else {
        return Err(io(rel, std::io::ErrorKind::NotFound.into()));
    };
    let name: &OsStr = &name;
    let dir = chain
        .last()
        .ok_or_else(|| io(rel, std::io::ErrorKind::NotFound.into()))?;
    // An empty directory where the file goes (left by deleting its captured
    // content) is removed; a non-empty one holds something uncaptured.
    if beneath::kind_at(dir, name).map_err(|e| io(rel, e))? == Some(FileType::Directory) {
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(|_| {
            CheckoutError::Blocked {
                path: rel.to_string(),
                what: "a directory with files the sidecar never captured".into(),
            }
        })?;
    }
    let tmp = temp_name();
    let result = (|| -> std::io::Result<()> {
        match entry.kind {
            EntryKind::Symlink => {
                rustix::fs::symlinkat(OsStr::from_bytes(content), dir, tmp.as_str())?;
            }
            EntryKind::File | EntryKind::Executable => {
                // Created private — the owner's read and write bits, and
                // only those the file had — then set to exactly its
                // captured bits with fchmod: the umask neither widens nor
                // narrows them, and the file is never more open than it
                // was captured, not even while it is written. (A file
                // just created is writable through this descriptor
                // whatever its mode.)
                let fd = rustix::fs::openat(
                    dir,
                    tmp.as_str(),
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(RawMode::from(entry.mode & 0o600)),
                )?;
                let mut f = std::fs::File::from(fd);
                f.write_all(content)?;
                rustix::fs::fchmod(&f, Mode::from_raw_mode(RawMode::from(entry.mode)))?;
                if fsync {
                    f.sync_all()?;
                }
            }
            EntryKind::Tree => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a tree is not a file",
                ))
            }
            EntryKind::Uncaptured(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "an uncaptured path has no content to write",
                ))
            }
        }
        rustix::fs::renameat(dir, tmp.as_str(), dir, name)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        return Err(io(rel, e));
    }
    Ok(())
}

/// Remove the file or symlink at `rel` (absent is fine), never through a
/// symlinked parent.
pub fn delete_entry(root: &Path, rel: &str) -> Result<(), CheckoutError> {
    let Some((chain, name)) = reach(root, rel, false)? else {
        return Ok(());
    };
    let name: &OsStr = &name;
    let dir = chain
        .last()
        .ok_or_else(|| io(rel, std::io::ErrorKind::NotFound.into()))?;
    match beneath::kind_at(dir, name).map_err(|e| io(rel, e))? {
        Some(FileType::Directory) => Err(CheckoutError::Blocked {
            path: rel.to_string(),
            what: "a directory".into(),
        }),
        Some(_) => match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io(rel, e.into())),
        },
        None => Ok(()),
    }
}

/// Is what stands at `rel` exactly `expected` (`None`: nothing, or a
/// directory — writes and deletes judge directories themselves)? A restore
/// asks this right before it replaces or removes a path, so content that
/// changed after the plan was made — by a writer racing the restore, or
/// unseen by a watcher that missed an event, or edited by the user after a
/// crash — is never destroyed on the word of an earlier scan
/// (docs/architecture.md rule 11).
/// `cached` is the stat cache's entry for the path: when the file's stat
/// still matches it, its content is not read again.
pub fn matches_on_disk(
    root: &Path,
    rel: &str,
    expected: Option<&TreeEntry>,
    cached: Option<&CachedFile>,
) -> bool {
    let (chain, name) = match beneath::walk_to_parent(root, rel, false) {
        Ok(Some(found)) => found,
        // Nothing of ours can stand below a missing directory or a
        // non-directory; writes and deletes refuse the latter anyway.
        Ok(None) | Err(Unreachable::Blocked(..)) => return expected.is_none(),
        Err(Unreachable::Io(_)) => return false,
    };
    let Some(dir) = chain.last() else {
        return false;
    };
    let name: &OsStr = &name;
    let kind = match beneath::kind_at(dir, name) {
        Ok(k) => k,
        Err(_) => return false,
    };
    let Some(want) = expected else {
        return matches!(kind, None | Some(FileType::Directory));
    };
    match kind {
        Some(FileType::Symlink) => {
            want.kind == EntryKind::Symlink
                && rustix::fs::readlinkat(dir, name, Vec::new())
                    .is_ok_and(|t| ObjectId::of(t.as_bytes()) == want.id)
        }
        Some(FileType::RegularFile) => {
            let Ok(fd) = rustix::fs::openat(
                dir,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                return false;
            };
            let mut f = std::fs::File::from(fd);
            let Ok(meta) = f.metadata() else {
                return false;
            };
            let stat = FileStat::from_metadata(&meta);
            // Its kind and permission bits as a scan would record them.
            let seen = TreeEntry::file(stat.mode, want.id, stat.size);
            if seen != *want {
                return false;
            }
            if cached.is_some_and(|c| c.stat == stat && c.entry == *want) {
                return true;
            }
            let mut bytes = Vec::with_capacity(stat.size as usize);
            f.read_to_end(&mut bytes).is_ok() && ObjectId::of(&bytes) == want.id
        }
        _ => false,
    }
}

/// Remove the directories above `rel` that are now empty (never the root),
/// each relative to its parent's handle.
pub fn remove_empty_parents(root: &Path, rel: &str) {
    let Ok(Some((chain, _))) = beneath::walk_to_parent(root, rel, false) else {
        return;
    };
    let comps: Vec<&str> = rel.split('/').collect();
    // chain[i] is the directory of comps[..i]; comps[i - 1] names it in chain[i - 1].
    for i in (1..chain.len()).rev() {
        if rustix::fs::unlinkat(
            &chain[i - 1],
            &*crate::repo_path::decode_name(comps[i - 1]),
            AtFlags::REMOVEDIR,
        )
        .is_err()
        {
            break;
        }
    }
}

/// Every non-directory path below `dir` (relative to `root`), without
/// following symlinks.
pub fn files_below(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![crate::repo_path::join(root, dir)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                _ => {
                    if let Some(rel) = crate::repo_path::relative(root, &p) {
                        out.push(rel);
                    } else {
                        out.push(p.to_string_lossy().into_owned());
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(kind: EntryKind, content: &[u8]) -> TreeEntry {
        TreeEntry::new(kind, ObjectId::of(content), content.len() as u64)
    }

    fn mode_of(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    /// Each file gets exactly its captured permission bits, whatever the
    /// umask (this test's process has one; 0o777 and 0o666 would come out
    /// narrowed by it) — and nothing beyond 0o777.
    #[test]
    fn writes_exactly_the_captured_mode() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for (name, mode) in [
            ("key", 0o600),
            ("shared", 0o640),
            ("wide", 0o666),
            ("run", 0o755),
            ("own", 0o700),
            ("all", 0o777),
            ("ro", 0o400),
            ("none", 0o000),
        ] {
            let e = TreeEntry::file(0o100000 | mode, ObjectId::of(b"x"), 1);
            write_entry(r, name, &e, b"x", false).unwrap();
            assert_eq!(mode_of(&r.join(name)), mode, "{name}");
            assert_eq!(e.kind == EntryKind::Executable, mode & 0o100 != 0);
        }
        // Over a file with setuid and group bits: the captured bits only.
        let p = r.join("suid");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o4775)).unwrap();
        let e = TreeEntry::file(0o100644, ObjectId::of(b"x"), 1);
        write_entry(r, "suid", &e, b"x", false).unwrap();
        assert_eq!(mode_of(&p), 0o644);
    }

    /// A path whose mode changed since the plan no longer holds what the
    /// plan saw (docs/architecture.md rule 11).
    #[test]
    fn matches_on_disk_compares_modes() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::write(r.join("f"), "v1").unwrap();
        std::fs::set_permissions(r.join("f"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let private = TreeEntry::file(0o100600, ObjectId::of(b"v1"), 2);
        assert!(matches_on_disk(r, "f", Some(&private), None));
        assert!(!matches_on_disk(
            r,
            "f",
            Some(&file(EntryKind::File, b"v1")),
            None
        ));
        std::fs::set_permissions(r.join("f"), std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(!matches_on_disk(r, "f", Some(&private), None));
    }

    #[test]
    fn writes_files_links_and_exec_bits() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write_entry(r, "a/b/c.txt", &file(EntryKind::File, b"hi"), b"hi", false).unwrap();
        assert_eq!(std::fs::read(r.join("a/b/c.txt")).unwrap(), b"hi");
        write_entry(
            r,
            "run.sh",
            &file(EntryKind::Executable, b"#!"),
            b"#!",
            false,
        )
        .unwrap();
        let mode = std::fs::metadata(r.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o100, 0);
        write_entry(r, "run.sh", &file(EntryKind::File, b"#!"), b"#!", false).unwrap();
        let mode = std::fs::metadata(r.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0);
        write_entry(r, "link", &file(EntryKind::Symlink, b"a/b"), b"a/b", false).unwrap();
        assert_eq!(
            std::fs::read_link(r.join("link")).unwrap(),
            Path::new("a/b")
        );
        // No temp files left behind.
        assert!(files_below(r, "")
            .iter()
            .all(|p| !p.contains(".rewind-tmp")));
    }

    #[test]
    fn never_writes_through_a_symlinked_parent() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("dir")).unwrap();
        let e = write_entry(d.path(), "dir/x", &file(EntryKind::File, b"x"), b"x", false);
        assert!(matches!(e, Err(CheckoutError::Blocked { .. })));
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        std::fs::write(outside.path().join("victim"), "v").unwrap();
        assert!(delete_entry(d.path(), "dir/victim").is_err());
        assert!(outside.path().join("victim").exists());
        // The link itself can be deleted.
        delete_entry(d.path(), "dir").unwrap();
        assert!(!d.path().join("dir").exists());
    }

    #[test]
    fn never_writes_or_deletes_in_git_s_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [".git/hooks/post-checkout", "sub/.GIT/config", ".Git"] {
            let entry = file(EntryKind::Executable, b"#!/bin/sh\n");
            let err = write_entry(root, rel, &entry, b"#!/bin/sh\n", false);
            assert!(
                matches!(err, Err(CheckoutError::Blocked { .. })),
                "{rel}: {err:?}"
            );
            assert!(
                matches!(delete_entry(root, rel), Err(CheckoutError::Blocked { .. })),
                "{rel}"
            );
        }
        assert_eq!(
            std::fs::read_dir(root).unwrap().count(),
            0,
            "nothing written"
        );
    }

    #[test]
    fn matches_on_disk_compares_kind_and_content() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let v1 = file(EntryKind::File, b"v1");
        assert!(matches_on_disk(r, "f", None, None));
        assert!(!matches_on_disk(r, "f", Some(&v1), None));
        std::fs::write(r.join("f"), "v1").unwrap();
        // The ordinary mode of `v1`, whatever the umask.
        std::fs::set_permissions(r.join("f"), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches_on_disk(r, "f", Some(&v1), None));
        assert!(!matches_on_disk(r, "f", None, None), "a file appeared");
        std::fs::write(r.join("f"), "v2").unwrap();
        assert!(
            !matches_on_disk(r, "f", Some(&v1), None),
            "same size, new content"
        );
        let exec = file(EntryKind::Executable, b"v2");
        assert!(!matches_on_disk(r, "f", Some(&exec), None));
        std::os::unix::fs::symlink("v1", r.join("l")).unwrap();
        assert!(matches_on_disk(
            r,
            "l",
            Some(&file(EntryKind::Symlink, b"v1")),
            None
        ));
        assert!(!matches_on_disk(r, "l", Some(&v1), None));
        // A stat-cache entry whose stat still matches is believed without a read.
        let meta = std::fs::symlink_metadata(r.join("f")).unwrap();
        let lie = CachedFile {
            stat: FileStat::from_metadata(&meta),
            entry: file(EntryKind::File, b"v3"),
        };
        assert!(matches_on_disk(r, "f", Some(&lie.entry), Some(&lie)));
    }

    #[test]
    fn empties_and_removes_directories() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write_entry(r, "x/y/z.txt", &file(EntryKind::File, b"z"), b"z", false).unwrap();
        delete_entry(r, "x/y/z.txt").unwrap();
        remove_empty_parents(r, "x/y/z.txt");
        assert!(!r.join("x").exists());
        assert!(r.exists());
        // A file where an empty directory stands replaces it; a non-empty
        // one blocks.
        std::fs::create_dir_all(r.join("p/q")).unwrap();
        std::fs::write(r.join("p/q/keep"), "k").unwrap();
        let e = write_entry(r, "p/q", &file(EntryKind::File, b"f"), b"f", false);
        assert!(matches!(e, Err(CheckoutError::Blocked { .. })));
        std::fs::remove_file(r.join("p/q/keep")).unwrap();
        write_entry(r, "p/q", &file(EntryKind::File, b"f"), b"f", false).unwrap();
        assert_eq!(std::fs::read(r.join("p/q")).unwrap(), b"f");
    }
}
