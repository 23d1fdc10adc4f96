//! What changed since a saved scan, found by stat alone — what a watcher
//! would have said, for a process that had none running
//! (docs/architecture.md "Hooks without a server: the saved scan"):
//!
//! - a captured file whose stat is not the one the stat cache holds for it
//!   (edited, replaced, its mode changed, deleted);
//! - in a directory whose stat moved (a name added, removed or renamed
//!   moves it), each name that is new or gone;
//! - every path the scan recorded as present but not captured, and every
//!   untracked one: nothing vouches for them, and they are few;
//! - a walked directory that is gone or no longer a directory.
//!
//! The paths are then scanned as a watcher's would be, against the saved
//! tree.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::capture::{now_ns, Uncaptured};
use super::stat_cache::{FileStat, StatCache};
use crate::repo_path::decode_name;
use crate::store::FlatTree;

/// A directory's stat as saved: `None` when it moved too close to the scan
/// to be trusted (the racy rule), so the next process lists it again.
pub(super) type DirStats = BTreeMap<String, Option<FileStat>>;

/// `stat`, unless it moved within its racy window of `scan_start_ns`
/// ([`FileStat::is_racy`]):
/// the listing that went with it may have been taken before a change that
/// the stat already shows (a walk lists a directory before it stats it),
/// so only an older stat vouches for the names.
pub(super) fn trusted(stat: FileStat, scan_start_ns: i128) -> Option<FileStat> {
    (!stat.is_racy(scan_start_ns)).then_some(stat)
}

/// A directory's stat whose timestamps are both `t`, for tests here and
/// in `saved_scan.rs`.
#[cfg(test)]
pub(super) fn dir_stat(t: i128) -> FileStat {
    FileStat {
        size: 4096,
        mtime_ns: t,
        ctime_ns: t,
        ino: 7,
        mode: 0o40755,
    }
}

/// A directory listed again, with its stat as it was before the listing
/// (`None`: too recent to vouch for the names next time).
pub(super) type Relisted = (String, Option<FileStat>);

pub(super) struct StatChanges {
    pub paths: BTreeSet<String>,
    pub relisted: Vec<Relisted>,
}

/// Why the saved scan cannot say what changed: the project is walked.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unknown {
    /// The root is gone or not a directory.
    Root,
    /// A name the walk would report but no path can hold (not UTF-8).
    OddName(String),
}

fn join(root: &Path, rel: &str) -> std::path::PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        crate::repo_path::join(root, rel)
    }
}

/// The `lstat` of `rel` below `root` ("" is the root itself).
pub(super) fn lstat(root: &Path, rel: &str) -> Option<FileStat> {
    std::fs::symlink_metadata(join(root, rel))
        .ok()
        .map(|m| FileStat::from_metadata(&m))
}

fn is_dir(stat: &FileStat) -> bool {
    stat.mode & libc::S_IFMT == libc::S_IFDIR
}

/// A file's `lstat` by its name in the open directory `dir`.
fn stat_at(dir: &OwnedFd, name: &str) -> Option<FileStat> {
    let name: &std::ffi::OsStr = &decode_name(name);
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(FileStat {
        size: st.st_size as u64,
        mtime_ns: st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128,
        ctime_ns: st.st_ctime as i128 * 1_000_000_000 + st.st_ctime_nsec as i128,
        ino: st.st_ino,
        mode: st.st_mode,
    })
}

/// The paths of `sorted` whose `lstat` is not the stat cache's entry (or
/// that the cache does not hold). Each directory is opened once for the
/// files in it and each file looked up by name there: one path component
/// per file instead of its whole path, whose walk was a seventh of a
/// one-shot hook's time. A directory that does not open as one (gone, or a
/// symlink now) vouches for none of its files.
fn changed_in(root: &Path, sorted: &[&String], cache: &StatCache) -> Vec<String> {
    let mut out = Vec::new();
    let mut dir: Option<(&str, Option<OwnedFd>)> = None;
    for path in sorted {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
        if dir.as_ref().map(|(d, _)| *d) != Some(parent) {
            let fd = rustix::fs::open(
                join(root, parent),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok();
            dir = Some((parent, fd));
        }
        let now = match &dir {
            Some((_, Some(fd))) => stat_at(fd, name),
            _ => None,
        };
        if now.is_none() || cache.get(path).map(|c| c.stat) != now {
            out.push((*path).clone());
        }
    }
    out
}

/// The files of `files` the stat cache no longer vouches for, looked at on
/// up to `threads` threads, as `git status` refreshes its index; a path
/// present but not captured is always among them (nothing vouches for it).
fn changed_files(root: &Path, files: &FlatTree, cache: &StatCache, threads: usize) -> Vec<String> {
    let mut captured: Vec<&String> = Vec::with_capacity(files.len());
    let mut out = Vec::new();
    for (path, entry) in files.iter() {
        if entry.has_object() {
            captured.push(path);
        } else {
            out.push(path.clone());
        }
    }
    if threads <= 1 || captured.len() < 2048 {
        out.extend(changed_in(root, &captured, cache));
        return out;
    }
    let per = captured.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = captured
            .chunks(per)
            .map(|chunk| s.spawn(move || changed_in(root, chunk, cache)))
            .collect();
        for h in handles {
            match h.join() {
                Ok(v) => out.extend(v),
                // A panicked checker vouches for nothing: look at them all.
                Err(_) => out.extend(captured.iter().map(|p| (*p).clone())),
            }
        }
    });
    out
}

/// The names directly in `dir` that the saved scan knows: the first
/// component below `dir` of every file, walked directory and untracked path.
fn known_names<'a>(
    dir: &str,
    files: &'a FlatTree,
    dirs: &'a DirStats,
    untracked: &'a [Uncaptured],
) -> HashSet<&'a str> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let first = |p: &'a str| -> Option<&'a str> {
        let rest = p.strip_prefix(prefix.as_str())?;
        (!rest.is_empty()).then(|| rest.split('/').next().unwrap_or(rest))
    };
    let mut names = HashSet::new();
    for (p, _) in files.range(prefix.clone()..) {
        if !p.starts_with(prefix.as_str()) {
            break;
        }
        names.extend(first(p));
    }
    for (p, _) in dirs.range(prefix.clone()..) {
        if !p.starts_with(prefix.as_str()) {
            break;
        }
        names.extend(first(p));
    }
    for u in untracked {
        names.extend(first(u.path.as_str()));
    }
    names
}

/// What changed on disk since the saved scan whose tree holds `files`,
/// whose walk went into `dirs` and which saw `untracked`; `cache` is the
/// stat cache saved with it.
pub(super) fn since_saved(
    root: &Path,
    files: &FlatTree,
    untracked: &[Uncaptured],
    dirs: &DirStats,
    cache: &StatCache,
    threads: usize,
) -> Result<StatChanges, Unknown> {
    let started = now_ns();
    let mut paths: BTreeSet<String> = BTreeSet::new();
    let mut relisted = Vec::new();
    for (dir, saved) in dirs {
        let Some(now) = lstat(root, dir).filter(is_dir) else {
            if dir.is_empty() {
                return Err(Unknown::Root);
            }
            // Gone, or something else now: scanned as a path.
            paths.insert(dir.clone());
            continue;
        };
        if saved.as_ref() == Some(&now) {
            continue;
        }
        // Names added or removed: list it (after the stat above, so a name
        // added since moves the stat again) and compare.
        let listing = match std::fs::read_dir(join(root, dir)) {
            Ok(l) => l,
            Err(_) => {
                paths.insert(dir.clone());
                continue;
            }
        };
        let known = known_names(dir, files, dirs, untracked);
        let mut seen: HashSet<String> = HashSet::new();
        for e in listing {
            let Ok(e) = e else {
                paths.insert(dir.clone());
                break;
            };
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                return Err(Unknown::OddName(
                    e.file_name().to_string_lossy().into_owned(),
                ));
            };
            if super::never_content(&name) {
                continue;
            }
            if !known.contains(name.as_str()) {
                paths.insert(child(dir, &name));
            }
            seen.insert(name);
        }
        for name in known {
            if !seen.contains(name) {
                paths.insert(child(dir, name));
            }
        }
        relisted.push((dir.clone(), trusted(now, started)));
    }
    paths.extend(changed_files(root, files, cache, threads));
    paths.extend(untracked.iter().map(|u| u.path.to_string()));
    Ok(StatChanges { paths, relisted })
}

fn child(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo_path::RepoPath;
    use crate::store::{ObjectId, TreeEntry, UncapturedReason};

    fn entry(b: &[u8]) -> TreeEntry {
        TreeEntry::new(
            crate::store::EntryKind::File,
            ObjectId::of(b),
            b.len() as u64,
        )
    }

    #[test]
    fn known_names_are_the_first_components_below_the_directory() {
        let files: FlatTree = ["a/b/c", "a/d", "ab", "e"]
            .iter()
            .map(|p| (p.to_string(), entry(p.as_bytes())))
            .collect();
        let dirs: DirStats = [("".to_string(), None), ("a/x".to_string(), None)]
            .into_iter()
            .collect();
        let untracked = vec![Uncaptured {
            path: RepoPath::from_walk("a/big".into()),
            reason: UncapturedReason::TooLarge,
        }];
        let mut got: Vec<&str> = known_names("a", &files, &dirs, &untracked)
            .into_iter()
            .collect();
        got.sort();
        assert_eq!(got, ["b", "big", "d", "x"]);
        let mut root: Vec<&str> = known_names("", &files, &dirs, &untracked)
            .into_iter()
            .collect();
        root.sort();
        assert_eq!(root, ["a", "ab", "e"]);
    }

    #[test]
    fn a_directory_stat_close_to_the_scan_is_not_trusted() {
        let start = 100 * 1_000_000_000;
        assert_eq!(
            trusted(dir_stat(start - 3_000_000_000), start),
            Some(dir_stat(start - 3_000_000_000))
        );
        assert_eq!(trusted(dir_stat(start - 1_000_000_000), start), None);
        let mut late_ctime = dir_stat(start - 5_000_000_000);
        late_ctime.ctime_ns = start;
        assert_eq!(trusted(late_ctime, start), None);
    }
}
