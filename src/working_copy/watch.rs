//! An inotify watcher that lets a snapshot skip the full walk (issue
//! "beyond the stat scan"). It is drained synchronously, at snapshot time:
//! every change completed before the drain is in the kernel's queue then,
//! so no background thread can race the snapshot.
//!
//! The watcher answers "which paths may have changed since the last drain",
//! or [`Changes::Unknown`] when it cannot be sure — the queue overflowed, a
//! watch could not be added, the project root itself moved — and the caller
//! then scans everything (as it does on start).

use std::collections::{BTreeSet, HashMap};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the watcher knows about changes since the last drain.
#[derive(Debug, PartialEq, Eq)]
pub enum Changes {
    /// Scan everything.
    Unknown,
    /// Only these project paths (files or directories, recursively) may
    /// have changed; empty means nothing did.
    Paths(BTreeSet<String>),
}

pub struct Watcher {
    fd: OwnedFd,
    root: PathBuf,
    by_wd: HashMap<i32, String>,
    by_dir: HashMap<String, i32>,
    /// Set when something was missed; cleared by a full [`Watcher::arm`].
    lost: bool,
    /// The kernel refused a watch for lack of resources (the per-user watch
    /// limit): re-arming would fail again, so the caller should give up.
    exhausted: bool,
}

const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MODIFY
    | libc::IN_ATTRIB
    | libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_DONT_FOLLOW
    | libc::IN_ONLYDIR
    | libc::IN_EXCL_UNLINK;

/// The longest a drain reads events before it gives up on a queue that
/// keeps filling (see [`Watcher::drain`]).
const DRAIN_BUDGET: std::time::Duration = std::time::Duration::from_millis(200);

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl Watcher {
    /// A watcher for the project at `root` (nothing watched until
    /// [`Watcher::arm`]).
    pub fn new(root: &Path) -> std::io::Result<Watcher> {
        // SAFETY: inotify_init1 takes flags only and returns a new fd or -1.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Watcher {
            // SAFETY: fd is a fresh descriptor we own.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            root: root.to_path_buf(),
            by_wd: HashMap::new(),
            by_dir: HashMap::new(),
            lost: true,
            exhausted: false,
        })
    }

    /// Whether the next drain can be trusted (a full scan re-arms it).
    pub fn is_armed(&self) -> bool {
        !self.lost
    }

    /// Whether the watch limit was hit (see `fs.inotify.max_user_watches`).
    pub fn is_exhausted(&self) -> bool {
        self.exhausted
    }

    /// Distrust the watcher until the next full scan re-arms it (events
    /// were drained but not acted on).
    pub fn invalidate(&mut self) {
        self.lost = true;
    }

    pub fn watched_dirs(&self) -> usize {
        self.by_dir.len()
    }

    fn add(&mut self, dir: &str) -> bool {
        if self.by_dir.contains_key(dir) {
            return true;
        }
        let abs = if dir.is_empty() {
            self.root.clone()
        } else {
            crate::repo_path::join(&self.root, dir)
        };
        let Ok(c) = CString::new(abs.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: a valid fd and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), MASK) };
        if wd < 0 {
            let err = std::io::Error::last_os_error();
            // Gone already, or not a directory (a symlink): nothing to watch,
            // and its parent's events cover it. A path too long to name
            // neither: nothing below it can be captured (scans report it
            // `pathTooLong`), and its parent sees it renamed or removed.
            if matches!(
                err.raw_os_error(),
                Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG)
            ) {
                return true;
            }
            if err.raw_os_error() == Some(libc::ENOSPC) {
                self.exhausted = true;
            }
            tracing::warn!(%err, dir, "cannot watch a directory; snapshots scan everything");
            return false;
        }
        if let Some(old) = self.by_wd.insert(wd, dir.to_string()) {
            // The same inode under a new name (renamed directory).
            self.by_dir.remove(&old);
        }
        self.by_dir.insert(dir.to_string(), wd);
        true
    }

    /// Watch these directories (project-relative, "" is the root). With
    /// `complete`, they are every directory a full scan visited: the
    /// watcher is trusted again from here on.
    pub fn arm<'a>(&mut self, dirs: impl IntoIterator<Item = &'a str>, complete: bool) {
        let mut ok = self.add("");
        for d in dirs {
            ok &= self.add(d);
        }
        if complete {
            self.lost = !ok;
        } else if !ok {
            self.lost = true;
        }
    }

    /// Read every queued event (non-blocking) into the paths they name.
    pub fn drain(&mut self) -> Changes {
        let mut paths = BTreeSet::new();
        let mut buf = vec![0u8; 64 * 1024];
        let started = std::time::Instant::now();
        loop {
            // A process that keeps writing (a build, a loop renaming a
            // directory) refills the queue as fast as it is read: past a
            // budget the drain stops and says "scan everything" instead of
            // never returning. What stays queued is read next time (extra
            // paths to look at, never missing ones).
            if started.elapsed() >= DRAIN_BUDGET {
                tracing::debug!("watcher queue keeps filling; full scan");
                self.lost = true;
                break;
            }
            // SAFETY: reading into a buffer we own, of the length we pass.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::WouldBlock {
                    break;
                }
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                tracing::warn!(%err, "reading the watcher failed; scanning everything");
                self.lost = true;
                break;
            }
            if n == 0 {
                break;
            }
            let mut at = 0usize;
            let n = n as usize;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n {
                // SAFETY: the kernel wrote a whole event header at `at`; read
                // it unaligned since the buffer is a byte array.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) };
                let name_len = ev.len as usize;
                let name_bytes = &buf[at + header..(at + header + name_len).min(n)];
                let name_end = name_bytes
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(name_bytes.len());
                let name = Some(crate::repo_path::encode_name(&name_bytes[..name_end]));
                at += header + name_len;
                self.event(ev.wd, ev.mask, name.as_deref(), &mut paths);
            }
        }
        if self.lost {
            Changes::Unknown
        } else {
            Changes::Paths(paths)
        }
    }

    fn event(&mut self, wd: i32, mask: u32, name: Option<&str>, paths: &mut BTreeSet<String>) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            self.lost = true;
            return;
        }
        let Some(dir) = self.by_wd.get(&wd).cloned() else {
            return;
        };
        if mask & libc::IN_IGNORED != 0 {
            // The kernel dropped a watch we still count on, without the
            // deletion that explains it (those forget the watch first): we
            // cannot say what happened below it.
            tracing::debug!(dir, "watch dropped unexpectedly; full scan");
            self.forget(&dir, false);
            self.lost = true;
            return;
        }
        if mask & libc::IN_DELETE_SELF != 0 {
            if dir.is_empty() {
                self.lost = true;
            } else {
                // Deleted: rescan the path (it is gone) and forget every
                // watch at or below it, so a new directory of that name is
                // watched afresh.
                self.forget(&dir, false);
                paths.insert(dir);
            }
            return;
        }
        if mask & libc::IN_MOVE_SELF != 0 {
            // A watched directory moved without its parent telling us where
            // (a parent's IN_MOVED_FROM forgets the watch first, so this
            // one is still counted on): it may have left the project, or
            // come back under another name.
            tracing::debug!(dir, "watched directory moved unseen; full scan");
            self.forget(&dir, true);
            self.lost = true;
            return;
        }
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            // An event on the directory itself (attributes): re-check it.
            paths.insert(dir);
            return;
        };
        if name == ".git" || name.starts_with(super::checkout::TEMP_PREFIX) {
            return;
        }
        let Some(name_path) = (!name.contains('/')).then(|| join(&dir, name)) else {
            return;
        };
        if mask & libc::IN_ISDIR != 0 && mask & (libc::IN_MOVED_FROM | libc::IN_DELETE) != 0 {
            // The directory left this name — for another name in the
            // project (its IN_MOVED_TO re-arms it there), outside the project,
            // or for good. Its watches, and those below it, no longer stand
            // for this path: forget them, or a new directory created under
            // the old name would be taken as already watched (issue 10,
            // found 4). A moved directory's watches are removed from the
            // kernel too, so nothing outside the project reports in.
            self.forget(&name_path, mask & libc::IN_MOVED_FROM != 0);
        }
        if mask & libc::IN_ISDIR != 0 && mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0 {
            // A new directory: watch it and everything below before the
            // scan reads it, so nothing written into it is missed.
            self.arm_tree(&name_path);
        }
        paths.insert(name_path);
    }

    /// Stop counting on the watches of `dir` and every directory below it
    /// (`remove`: also take them out of the kernel, for a directory that
    /// still exists elsewhere).
    fn forget(&mut self, dir: &str, remove: bool) {
        let below = format!("{dir}/");
        let gone: Vec<(String, i32)> = self
            .by_dir
            .iter()
            .filter(|(d, _)| d.as_str() == dir || (!dir.is_empty() && d.starts_with(&below)))
            .map(|(d, wd)| (d.clone(), *wd))
            .collect();
        for (d, wd) in gone {
            self.by_dir.remove(&d);
            self.by_wd.remove(&wd);
            if remove {
                // SAFETY: a valid inotify fd and a watch descriptor it gave
                // us; a watch the kernel already dropped fails with EINVAL.
                unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
            }
        }
    }

    fn arm_tree(&mut self, dir: &str) {
        let mut stack = vec![dir.to_string()];
        while let Some(d) = stack.pop() {
            if !self.add(&d) {
                self.lost = true;
                return;
            }
            let Ok(rd) = std::fs::read_dir(crate::repo_path::join(&self.root, &d)) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(t) = e.file_type() else { continue };
                let name = crate::repo_path::encode_name(e.file_name().as_bytes()).into_owned();
                if t.is_dir() && name != ".git" {
                    stack.push(join(&d, &name));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(w: &mut Watcher) -> Vec<String> {
        match w.drain() {
            Changes::Paths(p) => p.into_iter().collect(),
            Changes::Unknown => panic!("watcher lost track"),
        }
    }

    #[test]
    fn reports_changed_paths_since_the_last_drain() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f.txt"), "1").unwrap();
        let mut w = Watcher::new(root).unwrap();
        assert_eq!(w.drain(), Changes::Unknown, "not armed yet");
        w.arm(["a", "a/b"], true);
        assert!(paths(&mut w).is_empty());
        std::fs::write(root.join("a/b/f.txt"), "2").unwrap();
        std::fs::write(root.join("top.txt"), "t").unwrap();
        assert_eq!(paths(&mut w), vec!["a/b/f.txt", "top.txt"]);
        assert!(paths(&mut w).is_empty(), "drained");
        // A new directory tree is watched before anyone reads it.
        std::fs::create_dir_all(root.join("n/m")).unwrap();
        assert_eq!(paths(&mut w), vec!["n"]);
        std::fs::write(root.join("n/m/deep.txt"), "x").unwrap();
        assert_eq!(paths(&mut w), vec!["n/m/deep.txt"]);
        // Renames and deletions.
        std::fs::rename(root.join("a/b"), root.join("a/c")).unwrap();
        assert_eq!(paths(&mut w), vec!["a/b", "a/c"]);
        std::fs::remove_dir_all(root.join("n")).unwrap();
        let p = paths(&mut w);
        assert!(p.contains(&"n".to_string()), "{p:?}");
    }

    /// Issue 10, found 4: a directory moved out of the project, then one of the same name
    /// created: what is written into the new one must be reported.
    #[test]
    fn a_directory_that_left_the_project_is_watched_again_when_recreated() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("proj");
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/b/f.txt"), "f").unwrap();
        let mut w = Watcher::new(&root).unwrap();
        w.arm(["a", "a/b", "a/b/c"], true);
        std::fs::rename(root.join("a/b"), parent.path().join("away")).unwrap();
        assert_eq!(paths(&mut w), vec!["a/b"]);
        // Nothing outside the project reports in.
        std::fs::write(parent.path().join("away/c/x"), "x").unwrap();
        assert!(paths(&mut w).is_empty());
        std::fs::create_dir(root.join("a/b")).unwrap();
        assert_eq!(paths(&mut w), vec!["a/b"]);
        std::fs::write(root.join("a/b/g.txt"), "v1").unwrap();
        assert_eq!(paths(&mut w), vec!["a/b/g.txt"]);
        std::fs::write(root.join("a/b/g.txt"), "v2").unwrap();
        assert_eq!(paths(&mut w), vec!["a/b/g.txt"]);
    }

    /// The same when the directory is deleted while a process keeps it as its working
    /// directory (the kernel reports its own deletion only when the last user lets go).
    #[test]
    fn a_busy_directory_deleted_and_recreated_is_watched_again() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f.txt"), "f").unwrap();
        let mut w = Watcher::new(root).unwrap();
        w.arm(["a", "a/b"], true);
        let mut holder = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(root.join("a/b"))
            .spawn()
            .unwrap();
        std::fs::remove_dir_all(root.join("a/b")).unwrap();
        let p = paths(&mut w);
        assert!(p.contains(&"a/b".to_string()), "{p:?}");
        std::fs::create_dir(root.join("a/b")).unwrap();
        assert_eq!(paths(&mut w), vec!["a/b"]);
        std::fs::write(root.join("a/b/g.txt"), "v1").unwrap();
        let seen = paths(&mut w);
        let _ = holder.kill();
        let _ = holder.wait();
        assert_eq!(seen, vec!["a/b/g.txt"]);
    }

    #[test]
    fn the_root_moving_is_unknown() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("proj");
        std::fs::create_dir(&root).unwrap();
        let mut w = Watcher::new(&root).unwrap();
        w.arm([], true);
        std::fs::rename(&root, parent.path().join("moved")).unwrap();
        assert_eq!(w.drain(), Changes::Unknown);
    }
}
