//! Capturing one path the walk found: whether it is a file rewind keeps
//! and, unless the stat cache vouches for it, reading, hashing and storing
//! its content (read again while a writer moves it, then `unstable`), and
//! what a scan is asked ([`ScanRequest`]) and gathers ([`ScanOutput`],
//! through a [`Sink`]). The walk (`scan.rs`) and the small ignored files
//! captured anyway (`ignored.rs`) both capture through here, so neither
//! needs the other's file for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use serde::Serialize;

use super::options::ScanOptions;
use super::stat_cache::{CachedFile, DirListings, FileStat, StatCache};
use crate::repo_path::RepoPath;
use crate::store::{
    EntryKind, FilePut, FlatTree, ObjectId, Store, StoreError, TreeEntry, UncapturedReason,
};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Uncaptured {
    pub path: RepoPath,
    pub reason: UncapturedReason,
}

pub struct ScanRequest<'a> {
    pub root: &'a Path,
    pub options: &'a ScanOptions,
    pub store: &'a Store,
    pub cache: &'a StatCache,
    /// The files of the parent checkpoint: the size cap spares them.
    pub prior: &'a FlatTree,
    /// Paths captured even when ignored (stage_files).
    pub staged: &'a BTreeSet<String>,
    /// Only these paths (files, or directories and everything below) are
    /// looked at; `None` scans the whole project.
    pub scope: Option<&'a [RepoPath]>,
    /// The files the user's git index tracks ([`git::tracked_of`]),
    /// captured even when ignored.
    pub tracked: &'a [String],
    /// Directory listings remembered from earlier scans (see
    /// [`DirListings`]); `None` lists every directory afresh.
    pub listings: Option<&'a DirListings>,
    /// The files of the scan a scoped scan updates: a scope path that it
    /// captured as a file no ignore rule hides is captured by name, without
    /// a walk (`scan::capture_known`).
    pub known: Option<&'a FlatTree>,
    /// Told how many paths the walk has looked at so far: first once the
    /// scan has run for `scan::PROGRESS_EVERY`, then at most that often.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

#[derive(Debug, Default)]
pub struct ScanOutput {
    /// Captured files and symlinks (within the scope, for scoped scans).
    pub files: BTreeMap<String, TreeEntry>,
    pub untracked: Vec<Uncaptured>,
    /// Fresh stat-cache facts, to be merged with the racy rule.
    pub cache_updates: Vec<(String, CachedFile)>,
    pub files_scanned: u64,
    pub files_hashed: u64,
    pub bytes_hashed: u64,
    /// When the scan began, in ns since the epoch (for the racy rule).
    pub scan_start_ns: i128,
    /// The directories the walk went into (a watcher watches them).
    pub dirs: Vec<String>,
    /// Those directories' stats as the walk saw them (just after listing
    /// them, so only one older than the scan vouches for the listing:
    /// `saved_scan::trusted`); a process without a watcher compares them
    /// next time.
    pub dir_stats: Vec<(String, FileStat)>,
}

pub(super) enum Outcome {
    Captured {
        entry: TreeEntry,
        cache: Option<CachedFile>,
        hashed: Option<u64>,
    },
    Uncaptured(UncapturedReason),
    /// A directory (the walk descends into it), with how many files and
    /// symlinks it holds when they were counted for [`super::ignored`].
    Directory {
        files: Option<usize>,
        /// Its stat as the walk saw it.
        stat: Option<FileStat>,
    },
    /// Gone between the walk finding it and reading it: deleted, which is
    /// what the checkpoint then says.
    Vanished,
}

/// How many times a file that changed while it was read is read again
/// before it is reported `unstable`. A writer that stops while the first
/// reads run is caught by the next one; one that keeps writing is not
/// waited for (a snapshot must not hang on a busy file).
const UNSTABLE_RETRIES: usize = 3;

/// One attempt at reading a path.
enum Attempt {
    Done(Outcome),
    /// Its stat moved while it was read: read it again.
    Moved,
}

/// The reason for a path that exists but could not be looked at or read.
pub(super) fn unreadable(err: &std::io::Error) -> UncapturedReason {
    if err.kind() == std::io::ErrorKind::InvalidFilename {
        // ENAMETOOLONG: the path, not the file, is the problem.
        UncapturedReason::PathTooLong
    } else {
        UncapturedReason::Unreadable
    }
}

pub(super) fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

pub(super) fn in_scope(scope: Option<&[RepoPath]>, rel: &str, is_dir: bool) -> bool {
    let Some(scope) = scope else { return true };
    scope.iter().any(|s| {
        s.is_prefix_of(rel)
            || (is_dir && RepoPath::from_walk(rel.to_string()).is_prefix_of(s.as_str()))
    })
}

/// Capture one path found on disk: decide whether it is a file we keep and,
/// unless the stat cache vouches for it, read, hash and store its content.
/// A file whose stat moves while it is read (size, mtime, ctime, inode or
/// mode) is read again, up to [`UNSTABLE_RETRIES`] times, then reported
/// `unstable`: a file rewritten in place under a reader reads as a mix of
/// versions, and a checkpoint must never hold content that never existed.
pub(super) fn capture(
    abs: &Path,
    rel: &str,
    meta: &std::fs::Metadata,
    req: &ScanRequest<'_>,
) -> Result<Outcome, StoreError> {
    let mut again;
    let mut meta = meta;
    for attempt in 0..=UNSTABLE_RETRIES {
        if attempt > 0 {
            again = match std::fs::symlink_metadata(abs) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Outcome::Vanished),
                Err(e) => return Ok(Outcome::Uncaptured(unreadable(&e))),
            };
            meta = &again;
        }
        match capture_once(abs, rel, meta, req)? {
            Attempt::Done(outcome) => return Ok(outcome),
            Attempt::Moved => tracing::debug!(path = rel, attempt, "changed while read"),
        }
    }
    Ok(Outcome::Uncaptured(UncapturedReason::Unstable))
}

/// Whether the parent checkpoint holds `rel`, so the size caps spare it: it
/// captured the file, or recorded it present but unread for a passing reason
/// (a moment of instability, an unreadable spell). Only a file it left out
/// as too large is not held, so one bad moment never turns a file the
/// session protects into one it stops capturing.
pub(super) fn held(prior: &FlatTree, rel: &str) -> bool {
    prior
        .get(rel)
        .is_some_and(|e| e.not_captured() != Some(UncapturedReason::TooLarge))
}

/// One attempt of [`capture`], with `meta` the path's lstat from just
/// before.
fn capture_once(
    abs: &Path,
    rel: &str,
    meta: &std::fs::Metadata,
    req: &ScanRequest<'_>,
) -> Result<Attempt, StoreError> {
    let done = |o| Ok(Attempt::Done(o));
    let ft = meta.file_type();
    if ft.is_dir() {
        return done(Outcome::Directory {
            files: None,
            stat: None,
        });
    }
    if ft.is_fifo() || ft.is_socket() || ft.is_block_device() || ft.is_char_device() {
        return done(Outcome::Uncaptured(UncapturedReason::Special));
    }
    let stat = FileStat::from_metadata(meta);
    if ft.is_file() && meta.len() > req.options.max_file_size && !held(req.prior, rel) {
        return done(Outcome::Uncaptured(UncapturedReason::TooLarge));
    }
    if let Some(hit) = req.cache.get(rel) {
        // A hit's object is still stored: the caller revalidated the cache
        // against the store's gc generation before this scan, and holds gc
        // off until the scan is recorded (docs/architecture.md rule 10).
        if hit.stat == stat {
            return done(Outcome::Captured {
                entry: hit.entry,
                cache: None,
                hashed: None,
            });
        }
    }
    // What the file is once read: the open descriptor's stat for a file
    // (no second walk of its path), the path's for a symlink.
    let after: std::io::Result<std::fs::Metadata>;
    let entry = if ft.is_symlink() {
        let target = match std::fs::read_link(abs) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return done(Outcome::Vanished),
            // No longer a symlink: look again.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return Ok(Attempt::Moved),
            Err(e) => return done(Outcome::Uncaptured(unreadable(&e))),
        };
        let bytes = target.as_os_str().as_bytes();
        let id = ObjectId::of(bytes);
        req.store.put_with_id(id, bytes)?;
        after = std::fs::symlink_metadata(abs);
        TreeEntry::new(EntryKind::Symlink, id, bytes.len() as u64)
    } else {
        let file = match open_regular(abs, &stat) {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(Attempt::Moved),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return done(Outcome::Vanished),
            Err(e) => return done(Outcome::Uncaptured(unreadable(&e))),
        };
        // Streamed for large files: memory stays a few chunks, whatever
        // the file's size.
        let id = match req.store.put_file(&file, stat.size)? {
            FilePut::Stored(out) => out.id,
            FilePut::Changed => return Ok(Attempt::Moved),
            FilePut::Unreadable(e) => return done(Outcome::Uncaptured(unreadable(&e))),
        };
        after = file.metadata();
        // Its permission bits as the stat before the read saw them: a chmod
        // during the read moves the stat, and the file is read again.
        TreeEntry::file(stat.mode, id, stat.size)
    };
    // Anything that moved since the stat before the read means a writer was
    // at work: what was read may be torn, so read again. (A file renamed
    // over the path after it was opened is not looked for: what was read
    // is what the path held when it was opened, and the next scan sees the
    // new file's other inode.)
    let stable = match after {
        Ok(m) => FileStat::from_metadata(&m) == stat,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return done(Outcome::Vanished),
        Err(_) => false,
    };
    if !stable {
        return Ok(Attempt::Moved);
    }
    done(Outcome::Captured {
        entry,
        cache: Some(CachedFile { stat, entry }),
        hashed: Some(entry.size),
    })
}

/// Opens the regular file `stat` describes, for reading. `None` when what
/// is there now is not that file (replaced, or no longer a regular file):
/// opened without following a symlink and without blocking on a FIFO, so a
/// path swapped since the walk looked at it is never read through.
fn open_regular(abs: &Path, stat: &FileStat) -> std::io::Result<Option<std::fs::File>> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(abs)
    {
        Ok(f) => f,
        // A symlink now (O_NOFOLLOW): not the file we saw.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let m = file.metadata()?;
    Ok((m.is_file() && m.ino() == stat.ino).then_some(file))
}

pub(super) struct Sink {
    pub(super) out: ScanOutput,
    /// How many files and symlinks each walked directory holds (counted
    /// only when small ignored files are captured).
    pub(super) listed: HashMap<String, usize>,
}

impl Sink {
    pub(super) fn record(&mut self, rel: String, outcome: Outcome) {
        match outcome {
            Outcome::Captured {
                entry,
                cache,
                hashed,
            } => {
                self.out.files_scanned += 1;
                if let Some(n) = hashed {
                    self.out.files_hashed += 1;
                    self.out.bytes_hashed += n;
                }
                if let Some(c) = cache {
                    self.out.cache_updates.push((rel.clone(), c));
                }
                self.out.files.insert(rel, entry);
            }
            Outcome::Uncaptured(reason) => self.out.untracked.push(Uncaptured {
                path: RepoPath::from_walk(rel),
                reason,
            }),
            Outcome::Directory { files, stat } => {
                if let Some(n) = files {
                    self.listed.insert(rel.clone(), n);
                }
                if let Some(stat) = stat {
                    self.out.dir_stats.push((rel.clone(), stat));
                }
                self.out.dirs.push(rel)
            }
            Outcome::Vanished => {}
        }
    }
}
