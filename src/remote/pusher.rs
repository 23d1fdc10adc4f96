//! Continuous push: a thread that keeps a remote up to date with a store's
//! sessions while a sidecar or hook server runs (docs/remote.md
//! "Continuous push"). Recording never waits for it: it is woken after
//! each event (and looks once a second anyway), pushes in the background,
//! and backs off while the remote fails.
//!
//! Its queue is the store itself: what a session file holds beyond what
//! `remote/<name>/sessions/<id>.json` says was pushed. So it is bounded by
//! the sessions and survives any restart: the next pusher of the store
//! finds the same difference and sends it.
//!
//! Between wakes it keeps what it read of the last few session files it
//! pushed ([`PushSource`]), so a wake reads only the lines appended since
//! (a file replaced or shortened is read whole again). What a push walks
//! is not cut down: every entry's trees, as a push from the command line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::config::RemoteSpec;
use super::error::RemoteError;
use super::push::{push_source, Check, PushSource};
use super::state::{write_file, Pushed};
use super::Remote;
use crate::session::{now_iso, SessionId};
use crate::store::{Layout, Store};

/// How often the pusher looks without being woken.
const POLL: Duration = Duration::from_secs(1);
/// The longest wait between tries while the remote fails.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
const ERROR_FILE: &str = "last-error.json";
const RESENT_FILE: &str = "last-resent.json";
/// How many session files the pusher keeps what it read of: those being
/// recorded into now. Another that grows is read whole once, then followed.
const FOLLOWED: usize = 8;

struct Shared {
    woken: Mutex<bool>,
    cond: Condvar,
    stop: AtomicBool,
}

/// The running pusher of one store and remote; [`Pusher::stop`] ends it.
pub struct Pusher {
    shared: Arc<Shared>,
    done: mpsc::Receiver<()>,
    root: PathBuf,
    spec: RemoteSpec,
}

impl Pusher {
    /// Starts pushing the sessions of the store at `root` to `spec`.
    pub fn start(root: &Path, spec: RemoteSpec) -> Pusher {
        let shared = Arc::new(Shared {
            woken: Mutex::new(false),
            cond: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let (done_tx, done) = mpsc::channel();
        let root = root.to_path_buf();
        let thread_root = root.clone();
        let thread_shared = shared.clone();
        let thread_spec = spec.clone();
        let spawned = std::thread::Builder::new()
            .name("rewind-push".into())
            .spawn(move || {
                run(&thread_root, thread_spec, &thread_shared);
                let _ = done_tx.send(());
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "could not start the background push");
        }
        tracing::info!(remote = %spec.name, url = %spec.url, "pushing in the background");
        Pusher {
            shared,
            done,
            root: root.clone(),
            spec,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn spec(&self) -> &RemoteSpec {
        &self.spec
    }

    /// Something was recorded: look now.
    pub fn wake(&self) {
        if let Ok(mut w) = self.shared.woken.lock() {
            *w = true;
            self.shared.cond.notify_one();
        }
    }

    /// Stops after one last round, waiting at most `flush` for it (a
    /// sidecar shutting down pushes what it recorded last); past that the
    /// thread is left to the process's exit.
    pub fn stop(self, flush: Duration) {
        self.shared.stop.store(true, Ordering::Release);
        self.wake();
        if self.done.recv_timeout(flush).is_err() {
            tracing::warn!(remote = %self.spec.name, "the last background push did not finish in time");
        }
    }
}

fn run(root: &Path, spec: RemoteSpec, shared: &Shared) {
    let layout = Layout::new(root);
    let mut open: Option<(Store, Remote)> = None;
    let mut pushed: HashMap<PathBuf, u64> = HashMap::new();
    let mut followed = Followed::default();
    let mut backoff: Option<Duration> = None;
    loop {
        if !shared.stop.load(Ordering::Acquire) {
            // While the remote fails, a wake-up does not cut the backoff short.
            wait(shared, backoff.unwrap_or(POLL), backoff.is_some());
        }
        let stopping = shared.stop.load(Ordering::Acquire);
        // A panic in a round (a bug: no input should cause one) is a
        // failed round, not the end of the pusher or of the server it runs in.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if open.is_none() {
                let store = Store::open(root, true)?;
                let remote = Remote::open_spec(&layout, spec.clone())?;
                open = Some((store, remote));
            }
            let Some((store, remote)) = &open else {
                return Ok(());
            };
            round(store, remote, &mut pushed, &mut followed)
        }))
        .unwrap_or_else(|_| {
            open = None;
            followed = Followed::default();
            Err(RemoteError::Backend {
                url: spec.url.clone(),
                message: "the background push panicked (a bug); it starts again".into(),
            })
        });
        match result {
            Ok(()) => {
                if backoff.take().is_some() {
                    tracing::info!(remote = %spec.name, "the remote answers again");
                }
                clear_error(&layout, &spec);
            }
            Err(err) => {
                let next = backoff.map_or(Duration::from_secs(1), |b| (b * 2).min(MAX_BACKOFF));
                tracing::warn!(remote = %spec.name, error = %err, retry_in = ?next, "background push failed");
                record_error(&layout, &spec, &err);
                backoff = Some(next);
            }
        }
        if stopping {
            return;
        }
    }
}

/// The session files the pusher follows, each with when it last pushed it.
#[derive(Default)]
struct Followed {
    sources: HashMap<PathBuf, (u64, PushSource)>,
    rounds: u64,
}

impl Followed {
    /// The source of `path`, followed from now on; the one pushed longest
    /// ago is let go of when there are too many.
    fn source(&mut self, path: &Path) -> &mut PushSource {
        if !self.sources.contains_key(path) && self.sources.len() >= FOLLOWED {
            let oldest = self
                .sources
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(p, _)| p.clone());
            if let Some(p) = oldest {
                self.sources.remove(&p);
            }
        }
        let at = self.rounds;
        let (used, source) = self
            .sources
            .entry(path.to_path_buf())
            .or_insert_with(|| (at, PushSource::new(path)));
        *used = at;
        source
    }
}

/// Pushes every session file that grew since this pusher last pushed it.
fn round(
    store: &Store,
    remote: &Remote,
    pushed: &mut HashMap<PathBuf, u64>,
    followed: &mut Followed,
) -> Result<(), RemoteError> {
    followed.rounds += 1;
    let mut listed = std::collections::HashSet::new();
    let dir = store.layout().sessions_dir();
    let listing = match std::fs::read_dir(&dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(RemoteError::io("listing", &dir, e)),
    };
    for entry in listing.flatten() {
        let path = entry.path();
        if !Layout::is_session_file(&path) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        listed.insert(path.clone());
        if pushed.get(&path) == Some(&meta.len()) {
            continue;
        }
        let source = followed.source(&path);
        let report = push_source(store, remote, source, Check::WhenSending)?;
        tracing::trace!(session = %report.session_id, read = ?source.stats(), "read of the session file so far");
        if report.chunks_resent > 0 || report.manifest_resent {
            record_resent(store.layout(), &remote.spec, &report);
        }
        if !report.up_to_date {
            tracing::debug!(session = %report.session_id, objects = report.objects, requests = report.requests, "pushed");
        }
        pushed.insert(path, report.file_bytes);
    }
    // A file gone (a gc removed its session) is let go of, and its handle closed.
    followed.sources.retain(|p, _| listed.contains(p));
    Ok(())
}

/// Waits `dur`, or less when woken (unless `ignore_wakes`) or stopped.
fn wait(shared: &Shared, dur: Duration, ignore_wakes: bool) {
    let deadline = Instant::now() + dur;
    let Ok(mut woken) = shared.woken.lock() else {
        return;
    };
    loop {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let now = Instant::now();
        if (*woken && !ignore_wakes) || now >= deadline {
            *woken = false;
            return;
        }
        woken = match shared.cond.wait_timeout(woken, deadline - now) {
            Ok((w, _)) => w,
            Err(p) => p.into_inner().0,
        };
    }
}

/// How far the remote is behind one session of the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behind {
    pub session_id: String,
    pub path: PathBuf,
    /// Bytes of the session file not yet on the remote (a whole file never pushed counts whole).
    pub bytes: u64,
}

/// Every session of the store the remote does not have all of, from what
/// this store knows (no request is made).
pub fn behind(layout: &Layout, spec: &RemoteSpec) -> Result<Vec<Behind>, RemoteError> {
    let state = super::state::State::new(spec.state_dir(layout));
    let dir = layout.sessions_dir();
    let listing = match std::fs::read_dir(&dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(RemoteError::io("listing", &dir, e)),
    };
    let mut out = Vec::new();
    for entry in listing.flatten() {
        let path = entry.path();
        let Some(session_id) = Layout::session_id_of(&path).map(str::to_owned) else {
            continue;
        };
        let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
        // The file's name is where its id enters. One that is no session id
        // was never pushed (a push refuses it), so all of it is behind; its
        // name is shown as text, and names no state file.
        let pushed = match SessionId::parse(&session_id) {
            Ok(id) => state.pushed(&id)?,
            Err(_) => Pushed::default(),
        };
        // A pulled session's lines came from the remote: they are there,
        // under the writer that pushed them, whether or not this store
        // wrote a manifest of its own for them yet.
        let done = if pushed.manifest_written || layout.is_pulled(&path) {
            pushed.bytes()
        } else {
            0
        };
        if len > done {
            out.push(Behind {
                session_id,
                path,
                bytes: len - done,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn error_file(layout: &Layout, spec: &RemoteSpec) -> PathBuf {
    spec.state_dir(layout).join(ERROR_FILE)
}

fn record_error(layout: &Layout, spec: &RemoteSpec, err: &RemoteError) {
    let body = serde_json::json!({ "time": now_iso(), "error": err.to_string() });
    let _ = write_file(&error_file(layout, spec), body.to_string().as_bytes());
}

fn resent_file(layout: &Layout, spec: &RemoteSpec) -> PathBuf {
    spec.state_dir(layout).join(RESENT_FILE)
}

/// What the last push that found part of a session gone sent again, for
/// `rewind status` (it is not a failure: the remote is whole again).
fn record_resent(layout: &Layout, spec: &RemoteSpec, report: &super::PushReport) {
    let body = serde_json::json!({
        "time": now_iso(),
        "session": report.session_id,
        "chunks": report.chunks_resent,
        "manifest": report.manifest_resent,
    });
    let _ = write_file(&resent_file(layout, spec), body.to_string().as_bytes());
}

/// The last time a background push found part of a session gone from the
/// remote and sent it again: a line for `rewind status`.
pub fn last_resent(layout: &Layout, spec: &RemoteSpec) -> Option<String> {
    let bytes = std::fs::read(resent_file(layout, spec)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some(format!(
        "at {} a background push found {} chunk(s){} of session {} gone from the remote (a remote gc?) and sent them again",
        v.get("time")?.as_str()?,
        v.get("chunks")?.as_u64()?,
        if v.get("manifest")?.as_bool()? { " and the manifest" } else { "" },
        v.get("session")?.as_str()?,
    ))
}

fn clear_error(layout: &Layout, spec: &RemoteSpec) {
    let _ = std::fs::remove_file(error_file(layout, spec));
}

/// The last background push failure, if the last try failed: (time, error).
pub fn last_error(layout: &Layout, spec: &RemoteSpec) -> Option<(String, String)> {
    let bytes = std::fs::read(error_file(layout, spec)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some((
        v.get("time")?.as_str()?.to_owned(),
        v.get("error")?.as_str()?.to_owned(),
    ))
}

#[cfg(test)]
mod tests;
