//! The file watcher that lets a snapshot skip the full walk (issue "beyond
//! the stat scan"), on the `notify` crate: inotify on Linux, FSEvents on
//! macOS, ReadDirectoryChangesW on Windows. It is drained synchronously, at
//! snapshot time, behind a barrier (see [`Watcher::drain`]): every change
//! completed before the drain is in what the drain reads, although `notify`
//! forwards events from a thread of its own.
//!
//! The watcher answers "which paths may have changed since the last drain",
//! or [`Changes::Unknown`] when it cannot be sure — the event queue
//! overflowed (`notify`'s `Rescan` flag), the event stream reported an
//! error, a watch could not be added, the project root itself moved, the
//! drain could not catch up — and the caller then scans everything (as it
//! does on start). docs/architecture.md rule 12.
//!
//! On Linux every directory a scan walked gets its own non-recursive watch,
//! added as the scans find them, so ignored trees (`node_modules/`,
//! `target/`) cost no watches: `notify`'s recursive mode would watch every
//! directory below the root. Elsewhere the root is watched recursively, once:
//! FSEvents and ReadDirectoryChangesW watch a tree natively, and events from
//! ignored directories are only extra paths, which the scoped scan judges
//! by the ignore rules like any other.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, CreateKind, EventKind, ModifyKind, RenameMode};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

/// What the watcher knows about changes since the last drain.
#[derive(Debug, PartialEq, Eq)]
pub enum Changes {
    /// Scan everything.
    Unknown,
    /// Only these project paths (files or directories, recursively) may
    /// have changed; empty means nothing did.
    Paths(BTreeSet<String>),
}

/// What `notify` hands the event handler, forwarded as is.
type Message = notify::Result<notify::Event>;

pub struct Watcher {
    /// Declared first so it is dropped (its thread stopped) before the
    /// barrier directory is removed.
    inner: RecommendedWatcher,
    events: mpsc::Receiver<Message>,
    /// Set by `notify`'s thread when [`queue_len`] events wait and one more
    /// had to be dropped: the next drain cannot vouch for anything.
    overflowed: Arc<AtomicBool>,
    /// Lets the tests put an event-stream error or a rescan in the queue.
    #[cfg(test)]
    inject: mpsc::SyncSender<Message>,
    root: PathBuf,
    /// The root as the OS spells it (FSEvents reports canonical paths).
    canonical_root: Option<PathBuf>,
    /// Project-relative directories with a watch ("" is the root). Linux:
    /// one non-recursive watch each; elsewhere only "" (recursive).
    watched: BTreeSet<String>,
    barrier: Barrier,
    /// Set when something was missed; cleared by a full [`Watcher::arm`].
    lost: bool,
    /// The OS refused a watch for lack of resources (the per-user inotify
    /// watch limit): re-arming would fail again, so the caller should give up.
    exhausted: bool,
}

/// The longest a drain waits for `notify` to hand over what was queued
/// before it (see [`Watcher::drain`]). Past it the drain says "scan
/// everything": a process that keeps writing (a build, a loop renaming a
/// directory) can keep the watcher's thread busy for longer than that.
const DRAIN_BUDGET: Duration = Duration::from_millis(200);

/// How many events wait between two drains before the watcher stops
/// keeping them and says "scan everything" instead: a long-lived server
/// between hook events must not hold a build's millions of events in
/// memory (about 150 bytes each). `REWIND_WATCH_QUEUE` sets it (the tests
/// make it tiny to force an overflow); the kernel's own queue
/// (`fs.inotify.max_queued_events`) overflowing counts the same.
pub const DEFAULT_QUEUE_LEN: usize = 65_536;

fn queue_len() -> usize {
    std::env::var("REWIND_WATCH_QUEUE")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_QUEUE_LEN)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// A read is not a change. inotify reports opens (`notify` asks for
/// `IN_OPEN`), so without this every file a compiler or a grep opens in
/// the project would go through the channel and the drain.
fn is_read(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Access(
            AccessKind::Open(_) | AccessKind::Read | AccessKind::Close(AccessMode::Read)
        )
    )
}

/// A private directory, watched like the project, in which each drain
/// creates a file: inotify (one queue per instance) and FSEvents (one
/// stream) deliver events in order, so once that file's creation comes
/// out of the channel, every event queued before it has too.
struct Barrier {
    dir: PathBuf,
    next: u64,
}

/// The name every barrier directory starts with, then `<pid>-<16 hex>`.
const BARRIER_PREFIX: &str = "rewind-watch-";

/// Remove the barrier directories of processes that are gone: one killed
/// (a sidecar its host SIGKILLed, a hook server killed) never ran its
/// `Drop`, and each left a directory in the temp dir (ten thousand of them
/// after a day of this project's tests). Only this user's, and only where
/// no process of that pid runs (a pid reused by a live process keeps its
/// directory: harmless, and never someone's live barrier).
#[cfg(unix)]
fn sweep_stale_barriers(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(BARRIER_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid <= 0 || pid as u32 == std::process::id() {
            continue;
        }
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        let ours = e.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
        if gone && ours {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(not(unix))]
fn sweep_stale_barriers(_base: &Path) {}

impl Barrier {
    fn create() -> std::io::Result<Barrier> {
        let base = std::env::temp_dir();
        sweep_stale_barriers(&base);
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            // Only this user can create files in it (a barrier file made
            // by someone else would end a drain early).
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        let mut last = None;
        for _ in 0..8 {
            let dir = base.join(format!(
                "{BARRIER_PREFIX}{}-{:016x}",
                std::process::id(),
                rand::random::<u64>()
            ));
            match builder.create(&dir) {
                // Canonical, so it compares equal to the paths FSEvents reports.
                Ok(()) => {
                    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
                    return Ok(Barrier { dir, next: 0 });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no barrier directory")))
    }

    /// Create (and at once remove) the next barrier file; its path.
    fn raise(&mut self) -> std::io::Result<PathBuf> {
        self.next += 1;
        let mark = self.dir.join(format!("b{}", self.next));
        std::fs::File::create_new(&mark)?;
        // Its creation is queued already; the removal is an event the
        // drain skips (a stale barrier path).
        let _ = std::fs::remove_file(&mark);
        Ok(mark)
    }
}

impl Drop for Barrier {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Watcher {
    /// A watcher for the project at `root` (nothing of it watched until
    /// [`Watcher::arm`]).
    pub fn new(root: &Path) -> std::io::Result<Watcher> {
        Watcher::with_queue(root, queue_len())
    }

    /// See [`DEFAULT_QUEUE_LEN`].
    fn with_queue(root: &Path, queue: usize) -> std::io::Result<Watcher> {
        let (tx, events) = mpsc::sync_channel::<Message>(queue);
        #[cfg(test)]
        let inject = tx.clone();
        let overflowed = Arc::new(AtomicBool::new(false));
        let full = Arc::clone(&overflowed);
        let mut inner = notify::recommended_watcher(move |msg: Message| {
            if matches!(&msg, Ok(ev) if is_read(&ev.kind)) {
                return;
            }
            match tx.try_send(msg) {
                // Disconnected: the receiver is gone only when the watcher
                // is being dropped.
                Ok(()) | Err(mpsc::TrySendError::Disconnected(_)) => {}
                // Never block `notify`'s thread: the kernel's queue would
                // overflow behind it anyway.
                Err(mpsc::TrySendError::Full(_)) => full.store(true, Ordering::SeqCst),
            }
        })
        .map_err(std::io::Error::other)?;
        let barrier = Barrier::create()?;
        inner
            .watch(&barrier.dir, RecursiveMode::NonRecursive)
            .map_err(std::io::Error::other)?;
        Ok(Watcher {
            inner,
            events,
            overflowed,
            #[cfg(test)]
            inject,
            root: root.to_path_buf(),
            canonical_root: std::fs::canonicalize(root).ok().filter(|c| c != root),
            watched: BTreeSet::new(),
            barrier,
            lost: true,
            exhausted: false,
        })
    }

    /// Whether the next drain can be trusted (a full scan re-arms it).
    #[cfg(test)]
    pub fn is_armed(&self) -> bool {
        !self.lost
    }

    /// Whether the watch limit was hit (see `fs.inotify.max_user_watches`).
    pub fn is_exhausted(&self) -> bool {
        self.exhausted
    }

    /// How many directories are watched.
    pub fn watched_dirs(&self) -> usize {
        self.watched.len()
    }

    /// Distrust the watcher until the next full scan re-arms it (events
    /// were drained but not acted on).
    pub fn invalidate(&mut self) {
        self.lost = true;
    }

    fn absolute(&self, dir: &str) -> PathBuf {
        if dir.is_empty() {
            self.root.clone()
        } else {
            crate::repo_path::join(&self.root, dir)
        }
    }

    /// Watch `dir`; `again`: even if it is counted as watched (a directory
    /// that appeared under a name: the watch counted for that name may be
    /// the old directory's, which `notify` drops when it reads the old
    /// one's removal).
    #[cfg(target_os = "linux")]
    fn add(&mut self, dir: &str, again: bool) -> bool {
        if !again && self.watched.contains(dir) {
            return true;
        }
        let abs = self.absolute(dir);
        match self.inner.watch(&abs, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.watched.insert(dir.to_string());
                true
            }
            Err(err) => {
                match &err.kind {
                    // Gone already, or not a directory: nothing to watch, and
                    // its parent's events cover it. A path too long to name
                    // neither: nothing below it can be captured (scans report
                    // it `pathTooLong`), and its parent sees it renamed or
                    // removed.
                    notify::ErrorKind::PathNotFound => return true,
                    notify::ErrorKind::Io(e)
                        if matches!(
                            e.raw_os_error(),
                            Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG)
                        ) =>
                    {
                        return true
                    }
                    notify::ErrorKind::MaxFilesWatch => self.exhausted = true,
                    _ => {}
                }
                tracing::warn!(%err, dir, "cannot watch a directory; snapshots scan everything");
                false
            }
        }
    }

    /// FSEvents and ReadDirectoryChangesW: the root, recursively, once.
    #[cfg(not(target_os = "linux"))]
    fn add(&mut self, _dir: &str, _again: bool) -> bool {
        if self.watched.contains("") {
            return true;
        }
        match self.inner.watch(&self.root, RecursiveMode::Recursive) {
            Ok(()) => {
                self.watched.insert(String::new());
                true
            }
            Err(err) => {
                if matches!(err.kind, notify::ErrorKind::MaxFilesWatch) {
                    self.exhausted = true;
                }
                tracing::warn!(%err, "cannot watch the project; snapshots scan everything");
                false
            }
        }
    }

    /// Watch these directories (project-relative, "" is the root). With
    /// `complete`, they are every directory a full scan visited: the
    /// watcher is trusted again from here on.
    pub fn arm<'a>(&mut self, dirs: impl IntoIterator<Item = &'a str>, complete: bool) {
        // After lost events, a name counted as watched may stand for a
        // directory that was replaced unseen (its watch went with the old
        // one): a full scan's arming watches every directory again.
        let again = complete && self.lost;
        let mut ok = self.add("", again);
        for d in dirs {
            if self.exhausted {
                // Every further watch would be refused too.
                ok = false;
                break;
            }
            ok &= self.add(d, again);
        }
        if complete {
            self.lost = !ok;
        } else if !ok {
            self.lost = true;
        }
    }

    /// Everything queued up to now, as the paths it names. The drain raises
    /// the barrier (see [`Barrier`]) and reads until the barrier's event,
    /// waiting at most [`DRAIN_BUDGET`]; what arrives after it is read next
    /// time (extra paths to look at, never missing ones).
    pub fn drain(&mut self) -> Changes {
        let mut paths = BTreeSet::new();
        if self.overflowed.swap(false, Ordering::SeqCst) {
            // Events were dropped: nothing queued can be trusted. Empty the
            // queue so the barrier's event has room, then read to the
            // barrier as usual (what follows it is the next drain's).
            tracing::debug!("the watcher's queue overflowed; full scan");
            self.lost = true;
            while self.events.try_recv().is_ok() {}
        }
        let deadline = Instant::now() + DRAIN_BUDGET;
        match self.barrier.raise() {
            Ok(mark) => loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    // The budget holds even when the queue never runs dry: a
                    // process renaming directories in a loop queues events
                    // faster than they are taken (each new directory is a
                    // round trip to `notify`'s thread), and a drain that read
                    // on until the barrier stalled the sidecar for minutes.
                    // What is left is read next time, in order.
                    tracing::debug!("watcher backlog longer than the drain budget; full scan");
                    self.lost = true;
                    break;
                }
                match self.events.recv_timeout(left) {
                    Ok(Ok(ev)) if ev.paths.iter().any(|p| p.starts_with(&self.barrier.dir)) => {
                        if ev.paths.contains(&mark) && matches!(ev.kind, EventKind::Create(_)) {
                            break;
                        }
                    }
                    Ok(msg) => self.take(msg, &mut paths),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        tracing::debug!(
                            "watcher did not catch up within the drain budget; full scan"
                        );
                        self.lost = true;
                        break;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        tracing::warn!("the file watcher stopped; scanning everything");
                        self.lost = true;
                        break;
                    }
                }
            },
            Err(err) => {
                tracing::warn!(%err, dir = %self.barrier.dir.display(),
                    "cannot raise the watcher's barrier; scanning everything");
                self.lost = true;
                // The directory may have been cleaned away: a new one for
                // the next drain.
                if let Ok(b) = Barrier::create() {
                    if self
                        .inner
                        .watch(&b.dir, RecursiveMode::NonRecursive)
                        .is_ok()
                    {
                        let old = std::mem::replace(&mut self.barrier, b);
                        let _ = self.inner.unwatch(&old.dir);
                    }
                }
            }
        }
        if self.lost {
            Changes::Unknown
        } else {
            Changes::Paths(paths)
        }
    }

    /// The project-relative path `notify` reported: `None` outside the
    /// project; `Some(None)` for a name the repository cannot spell (only
    /// possible where names are not bytes).
    fn relative(&self, path: &Path) -> Option<Option<String>> {
        let rest = path.strip_prefix(&self.root).ok().or_else(|| {
            self.canonical_root
                .as_deref()
                .and_then(|c| path.strip_prefix(c).ok())
        })?;
        let mut rel = String::new();
        for c in rest.components() {
            let std::path::Component::Normal(name) = c else {
                return Some(None);
            };
            #[cfg(unix)]
            let name = {
                use std::os::unix::ffi::OsStrExt;
                crate::repo_path::encode_name(name.as_bytes())
            };
            #[cfg(not(unix))]
            let Some(name) = name.to_str() else {
                return Some(None);
            };
            rel = join(&rel, &name);
        }
        Some(Some(rel))
    }

    /// Apply one message from `notify` (watches added and forgotten) and
    /// collect the paths it names.
    fn take(&mut self, msg: Message, paths: &mut BTreeSet<String>) {
        let ev = match msg {
            Ok(ev) => ev,
            Err(err) => {
                if matches!(err.kind, notify::ErrorKind::MaxFilesWatch) {
                    self.exhausted = true;
                }
                tracing::warn!(%err, "the file watcher reported an error; full scan");
                self.lost = true;
                return;
            }
        };
        if ev.need_rescan() || matches!(ev.kind, EventKind::Other) {
            // inotify's queue overflowed (`IN_Q_OVERFLOW`), or FSEvents says
            // to rescan (dropped events, a volume mounted or unmounted).
            tracing::debug!(kind = ?ev.kind, "watcher lost track; full scan");
            self.lost = true;
            return;
        }
        for (i, path) in ev.paths.iter().enumerate() {
            let Some(rel) = self.relative(path) else {
                // Outside the project (a moved directory's late events).
                continue;
            };
            let Some(rel) = rel else {
                tracing::debug!(path = %path.display(), "watcher reported an unspellable path; full scan");
                self.lost = true;
                return;
            };
            // Which side of a rename this path is: `Both` names the old then
            // the new one.
            let (left, arrived) = match ev.kind {
                EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                    (true, false)
                }
                EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                    (false, true)
                }
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => (i == 0, i == 1),
                // A rename seen from one side only (FSEvents): either.
                EventKind::Modify(ModifyKind::Name(_)) => (true, true),
                _ => (false, false),
            };
            if rel.is_empty() {
                if left {
                    // The root moved or was removed: nothing below it can
                    // be accounted for.
                    tracing::debug!("the project root moved; full scan");
                    self.lost = true;
                    return;
                }
                // An event on the root itself (attributes): re-check it.
                paths.insert(rel);
                continue;
            }
            let name = rel.rsplit('/').next().unwrap_or(&rel);
            if super::never_content(name) || crate::store::names_git_dir(&rel) {
                continue;
            }
            if !self.reported_by_a_watch(&rel) {
                continue;
            }
            if left {
                // The directory (if it was one) left this name — for another
                // name in the project (its arrival re-arms it there), outside
                // the project, or for good. Its watches, and those below it,
                // no longer stand for this path: forget them, or a new
                // directory created under the old name would be taken as
                // already watched (issue 10, found 4). `notify` removes the
                // kernel's watches of a directory that left its name itself.
                self.forget(&rel);
            }
            if arrived {
                let is_dir = match ev.kind {
                    EventKind::Create(CreateKind::Folder) => true,
                    EventKind::Create(CreateKind::File) => false,
                    _ => std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()),
                };
                if is_dir {
                    // A new directory: watch it and everything below before
                    // the scan reads it, so nothing written into it is missed.
                    self.arm_tree(&rel);
                }
            }
            paths.insert(rel);
        }
    }

    /// Whether the event naming `rel` came from a directory still watched
    /// under that name: its parent's watch, or its own (a `*_SELF` event).
    /// A directory that left its name is forgotten at once (see `take`),
    /// but `notify` drops the kernel's watches of it and of its
    /// subdirectories only after the batch of events it read the move in:
    /// a file written meanwhile where the directory went (outside the
    /// project, say) would be reported under the old name. Such a path
    /// would only be looked at for nothing, but it is not the project's.
    #[cfg(target_os = "linux")]
    fn reported_by_a_watch(&self, rel: &str) -> bool {
        let parent = rel.rsplit_once('/').map_or("", |(p, _)| p);
        self.watched.contains(parent) || self.watched.contains(rel)
    }

    /// Elsewhere the root's one recursive watch reports everything below it.
    #[cfg(not(target_os = "linux"))]
    fn reported_by_a_watch(&self, _rel: &str) -> bool {
        true
    }

    /// Stop counting on the watches of `dir` and every directory below it.
    fn forget(&mut self, dir: &str) {
        let below = format!("{dir}/");
        let gone: Vec<String> = self
            .watched
            .range(dir.to_string()..)
            .take_while(|d| d.as_str() == dir || d.starts_with(&below))
            .cloned()
            .collect();
        for d in gone {
            self.watched.remove(&d);
        }
    }

    /// Watch a directory that appeared and every directory below it.
    #[cfg(target_os = "linux")]
    fn arm_tree(&mut self, dir: &str) {
        let mut stack = vec![dir.to_string()];
        while let Some(d) = stack.pop() {
            if !self.add(&d, true) {
                self.lost = true;
                return;
            }
            let Ok(rd) = std::fs::read_dir(self.absolute(&d)) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(t) = e.file_type() else { continue };
                use std::os::unix::ffi::OsStrExt;
                let name = crate::repo_path::encode_name(e.file_name().as_bytes()).into_owned();
                if t.is_dir() && !crate::store::is_git_dir(&name) {
                    stack.push(join(&d, &name));
                }
            }
        }
    }

    /// The recursive watch on the root covers a new directory already.
    #[cfg(not(target_os = "linux"))]
    fn arm_tree(&mut self, _dir: &str) {}
}

#[cfg(test)]
mod tests;
