//! Writing the working copy: the filesystem half of a restore. Every write
//! is atomic (temp file + rename, exec bit set), symlinks are recreated as
//! links, and nothing is ever written or deleted through a symlinked parent
//! (DESIGN rule 7) — a parent that is not a real directory blocks the path.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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

/// Is every parent of `rel` a real directory (or absent)? Returns the first
/// component that is something else.
pub fn blocking_parent(root: &Path, rel: &str) -> Option<String> {
    let mut cur = root.to_path_buf();
    let mut prefix = String::new();
    let comps: Vec<&str> = rel.split('/').collect();
    for comp in &comps[..comps.len().saturating_sub(1)] {
        cur.push(comp);
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(comp);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Some(prefix),
            Err(_) => return None,
        }
    }
    None
}

/// Create the missing parents of `rel`, refusing to go through anything
/// that is not a real directory.
fn make_parents(root: &Path, rel: &str) -> Result<PathBuf, CheckoutError> {
    let mut cur = root.to_path_buf();
    let comps: Vec<&str> = rel.split('/').collect();
    for comp in &comps[..comps.len().saturating_sub(1)] {
        cur.push(comp);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(m) => {
                return Err(CheckoutError::Blocked {
                    path: rel.to_string(),
                    what: format!(
                        "{} at {}",
                        if m.file_type().is_symlink() {
                            "a symlink"
                        } else {
                            "a file"
                        },
                        cur.display()
                    ),
                })
            }
            Err(_) => match std::fs::create_dir(&cur) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(rel, e)),
            },
        }
    }
    Ok(cur)
}

/// Prefix of the temp files restores write before renaming them into
/// place. Scans never capture such names, and recovery removes leftovers.
pub const TEMP_PREFIX: &str = ".rewind-tmp-";

fn temp_name(dir: &Path) -> PathBuf {
    dir.join(format!("{TEMP_PREFIX}{:016x}", rand::random::<u64>()))
}

/// Remove restore temp files a crash left in the directories of `paths`.
pub fn remove_temp_files<'a>(root: &Path, paths: impl IntoIterator<Item = &'a str>) -> usize {
    let dirs: std::collections::BTreeSet<&str> = paths
        .into_iter()
        .map(|p| p.rsplit_once('/').map(|(d, _)| d).unwrap_or(""))
        .collect();
    let mut removed = 0;
    for d in dirs {
        if blocking_parent(root, &format!("{d}/x")).is_some() && !d.is_empty() {
            continue; // never look through a symlinked parent
        }
        let Ok(rd) = std::fs::read_dir(root.join(d)) else {
            continue;
        };
        for e in rd.flatten() {
            let is_temp = e
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(TEMP_PREFIX));
            if is_temp
                && e.file_type().is_ok_and(|t| !t.is_dir())
                && std::fs::remove_file(e.path()).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

/// Write `entry` (with `content`: file bytes or link target) at `rel`.
pub fn write_entry(
    root: &Path,
    rel: &str,
    entry: &TreeEntry,
    content: &[u8],
    fsync: bool,
) -> Result<(), CheckoutError> {
    let dir = make_parents(root, rel)?;
    let abs = root.join(rel);
    // An empty directory where the file goes (left by deleting its captured
    // content) is removed; a non-empty one holds something uncaptured.
    if let Ok(m) = std::fs::symlink_metadata(&abs) {
        if m.is_dir() {
            std::fs::remove_dir(&abs).map_err(|_| CheckoutError::Blocked {
                path: rel.to_string(),
                what: "a directory with files the sidecar never captured".into(),
            })?;
        }
    }
    let tmp = temp_name(&dir);
    let result = (|| -> std::io::Result<()> {
        match entry.kind {
            EntryKind::Symlink => {
                use std::os::unix::ffi::OsStrExt;
                std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(content), &tmp)?;
            }
            EntryKind::File | EntryKind::Executable => {
                let mode = if entry.kind == EntryKind::Executable {
                    0o777
                } else {
                    0o666
                };
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(mode) // less the umask, as for any new file
                    .open(&tmp)?;
                f.write_all(content)?;
                if entry.kind == EntryKind::Executable {
                    // The umask may have dropped the owner's x bit.
                    let m = f.metadata()?.permissions().mode();
                    if m & 0o100 == 0 {
                        f.set_permissions(std::fs::Permissions::from_mode(m | 0o100))?;
                    }
                }
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
        }
        std::fs::rename(&tmp, &abs)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(rel, e));
    }
    Ok(())
}

/// Remove the file or symlink at `rel` (absent is fine), never through a
/// symlinked parent.
pub fn delete_entry(root: &Path, rel: &str) -> Result<(), CheckoutError> {
    if let Some(p) = blocking_parent(root, rel) {
        return Err(CheckoutError::Blocked {
            path: rel.to_string(),
            what: format!("{p} (not a directory)"),
        });
    }
    let abs = root.join(rel);
    match std::fs::symlink_metadata(&abs) {
        Ok(m) if m.is_dir() => Err(CheckoutError::Blocked {
            path: rel.to_string(),
            what: "a directory".into(),
        }),
        Ok(_) => std::fs::remove_file(&abs).map_err(|e| io(rel, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(rel, e)),
    }
}

/// Is what stands at `rel` exactly `expected` (`None`: nothing, or a
/// directory — writes and deletes judge directories themselves)? A restore
/// asks this right before it replaces or removes a path, so content that
/// changed after the plan was made — by a writer racing the restore, or
/// unseen by a watcher that missed an event, or edited by the user after a
/// crash — is never destroyed on the word of an earlier scan
/// (docs/architecture.md, "never destroy what was not captured").
/// `cached` is the stat cache's entry for the path: when the file's stat
/// still matches it, its content is not read again.
pub fn matches_on_disk(
    root: &Path,
    rel: &str,
    expected: Option<&TreeEntry>,
    cached: Option<&CachedFile>,
) -> bool {
    use std::os::unix::ffi::OsStrExt;
    if blocking_parent(root, rel).is_some() {
        // Nothing of ours can stand below a non-directory; writes and
        // deletes refuse such paths anyway.
        return expected.is_none();
    }
    let abs = root.join(rel);
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return expected.is_none(),
        Err(_) => return false,
    };
    let ft = meta.file_type();
    let Some(want) = expected else {
        return ft.is_dir();
    };
    if ft.is_symlink() {
        return want.kind == EntryKind::Symlink
            && std::fs::read_link(&abs)
                .is_ok_and(|t| ObjectId::of(t.as_os_str().as_bytes()) == want.id);
    }
    if !ft.is_file() {
        return false;
    }
    let stat = FileStat::from_metadata(&meta);
    let kind = if stat.mode & 0o100 != 0 {
        EntryKind::Executable
    } else {
        EntryKind::File
    };
    if kind != want.kind || stat.size != want.size {
        return false;
    }
    if cached.is_some_and(|c| c.stat == stat && c.entry == *want) {
        return true;
    }
    std::fs::read(&abs).is_ok_and(|b| ObjectId::of(&b) == want.id)
}

/// Remove the directories above `rel` that are now empty (never the root).
pub fn remove_empty_parents(root: &Path, rel: &str) {
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    while !parts.is_empty() {
        let dir = root.join(parts.join("/"));
        if std::fs::remove_dir(&dir).is_err() {
            break;
        }
        parts.pop();
    }
}

/// Every non-directory path below `dir` (relative to `root`), without
/// following symlinks.
pub fn files_below(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                _ => {
                    if let Some(rel) = crate::repo_path::relative_utf8(root, &p) {
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

    fn file(kind: EntryKind, content: &[u8]) -> TreeEntry {
        TreeEntry {
            kind,
            id: ObjectId::of(content),
            size: content.len() as u64,
        }
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
    fn matches_on_disk_compares_kind_and_content() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let v1 = file(EntryKind::File, b"v1");
        assert!(matches_on_disk(r, "f", None, None));
        assert!(!matches_on_disk(r, "f", Some(&v1), None));
        std::fs::write(r.join("f"), "v1").unwrap();
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
