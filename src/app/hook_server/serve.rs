//! The server: one per project store, started by the first hook event that
//! finds none (detached from the agent's process group), or by `rewind
//! server start`. It records events one at a time through `hooks::handle`
//! with the store and working copy kept warm between them (the watcher
//! armed, so an event scans only what changed: docs/architecture.md rule 12
//! still decides when everything must be scanned), and exits after
//! `idle` without an event, on `rewind server stop`, or when a hook of
//! another build of rewind finds it. One that cannot start says why in
//! `backoff.rs`'s file, and hooks leave it alone for a while.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rewind::engine::Warm;

use super::backoff;
use super::place::{build_id, effective_uid, peer_uid, Place};
use super::wire::{Envelope, Reply, Request, Status};
use crate::app::hooks::{self, Agent, Delivery, HookEvent};

/// How long a server waits without an event before it exits.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);

/// How long a server being replaced may take to let go of the lock.
const LOCK_WAIT: Duration = Duration::from_secs(3);

/// How often an idle server looks whether its socket is still its own.
const CHECK_EVERY: Duration = Duration::from_secs(2);

/// How long a client may take to send its request line.
const READ_REQUEST: Duration = Duration::from_secs(5);

/// The largest request line (a hook payload is at most 64 MiB).
const MAX_REQUEST: u64 = 80 * 1024 * 1024;

enum Job {
    Event {
        stream: UnixStream,
        agent: Agent,
        project: String,
        event_id: String,
        event: Box<HookEvent>,
    },
    Status(UnixStream),
    Stop(UnixStream),
    /// A hook of another build found this server: it gives way.
    Replaced,
}

/// What the server has done, for `rewind server status`.
struct Served {
    started: Instant,
    events: u64,
    failed: u64,
    sessions: std::collections::BTreeSet<String>,
}

/// A server listening: what [`listen`] hands to [`run`].
struct Listening {
    listener: UnixListener,
    /// Held for the server's whole life: one server per store.
    lock: File,
    /// The socket's file: one found otherwise is no longer this server's.
    ours: (u64, u64),
    /// The store's directory: one found otherwise (deleted, replaced) is no
    /// longer this server's to write to.
    store: (u64, u64),
}

/// Why a server did not listen.
enum NotListening {
    /// Another server holds the store's server lock: nothing to remember.
    Busy(anyhow::Error),
    /// It cannot start: remembered, so hooks do not start it again at once.
    Failed(anyhow::Error),
}

/// Serve `place` until idle for `idle`, stopped, or replaced.
pub fn run(place: Place, idle: Duration) -> Result<()> {
    let Listening {
        listener,
        lock,
        ours,
        store: store_id,
    } = match listen(&place) {
        Ok(listening) => listening,
        Err(NotListening::Busy(err)) => return Err(err),
        Err(NotListening::Failed(err)) => {
            backoff::note(&place, &format!("{err:#}"), std::process::id());
            return Err(err);
        }
    };
    backoff::clear(&place);
    let socket = place.socket();
    let build = build_id();
    tracing::info!(project = %place.project.display(), pid = std::process::id(), "hook server started");
    let (jobs, next) = mpsc::channel::<Job>();
    {
        let build = build.clone();
        std::thread::spawn(move || accept(listener, &build, jobs));
    }
    let pusher = start_pusher(&place);
    let mut warm: Option<Warm> = None;
    let mut served = Served {
        started: Instant::now(),
        events: 0,
        failed: 0,
        sessions: Default::default(),
    };
    let mut last_event = Instant::now();
    loop {
        let wait = idle.saturating_sub(last_event.elapsed()).min(CHECK_EVERY);
        let job = match next.recv_timeout(wait) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) if last_event.elapsed() >= idle => {
                tracing::info!(idle_secs = idle.as_secs(), "hook server idle: exiting");
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The store deleted (`rm -rf` of rewind's data, a cleanup
                // tool) takes the socket with it: no hook can reach this
                // server again, and what it would push or record belongs to
                // a store nobody will read. Hooks start a new server.
                if identity(&socket).ok() != Some(ours) {
                    tracing::info!("the server's socket is gone or replaced: exiting");
                    break;
                }
                if !store_is(&place.store, store_id) {
                    tracing::info!("the server's store is gone or replaced: exiting");
                    break;
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        last_event = Instant::now();
        match job {
            Job::Event {
                stream,
                agent,
                project,
                event_id,
                event,
            } => {
                if !store_is(&place.store, store_id) {
                    // What is warm is another store's: the event is not
                    // answered, and the hook records it itself.
                    tracing::info!("the server's store is gone or replaced: exiting");
                    drop(stream);
                    break;
                }
                let full_before = full_scans(warm.as_ref());
                record(
                    stream,
                    Delivery {
                        agent,
                        event: &event,
                        project: Some(project.into()),
                        event_id: Some(event_id),
                        store: Some(place.store.clone()),
                    },
                    &mut warm,
                    &mut served,
                    pusher.as_ref(),
                );
                // A full scan's peak is freed by now but still mapped: give
                // it back, or the server holds it while it runs.
                if full_scans(warm.as_ref()) != full_before {
                    rewind::memory::release_free();
                }
            }
            Job::Status(mut stream) => {
                let status = status_of(&place, &build, idle, &served, warm.as_ref());
                answer(
                    &mut stream,
                    &Reply {
                        status: Some(status),
                        ..Reply::done()
                    },
                );
            }
            Job::Stop(mut stream) => {
                tracing::info!("hook server stopped on request");
                answer(&mut stream, &Reply::done());
                break;
            }
            Job::Replaced => {
                tracing::info!("a hook of another rewind build found this server: exiting");
                break;
            }
        }
    }
    // New hooks find no socket and start a server of their own; the lock
    // goes with this process. A socket that is no longer ours is another
    // server's: left alone.
    if identity(&socket).ok() == Some(ours) {
        let _ = std::fs::remove_file(&socket);
    }
    if store_is(&place.store, store_id) {
        drop(warm);
        if let Some(p) = pusher {
            p.stop(PUSH_FLUSH);
        }
    } else {
        // A store that is gone is not written to on the way out: saving
        // the stat cache, publishing a pack or a last push would make its
        // directories again, for no one. The push thread ends with the
        // process, its last round not run.
        tracing::info!("the store is gone: nothing is saved into it");
        if let Some(w) = warm {
            w.discard();
        }
        drop(pusher);
    }
    drop(lock);
    Ok(())
}

/// Take the store's server lock and listen on its socket.
fn listen(place: &Place) -> Result<Listening, NotListening> {
    let failed = NotListening::Failed;
    place.prepare().map_err(failed)?;
    let store = identity_of_dir(&place.store)
        .with_context(|| format!("reading {}", place.store.display()))
        .map_err(failed)?;
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(place.lock())
        .with_context(|| format!("opening {}", place.lock().display()))
        .map_err(failed)?;
    let taken = rewind::lock_wait::within(LOCK_WAIT, Duration::from_millis(50), || {
        match lock.try_lock() {
            Ok(()) => Ok(Some(())),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(failed(
                anyhow::Error::new(e).context("locking the server directory"),
            )),
        }
    })?;
    if taken.is_none() {
        return Err(NotListening::Busy(anyhow::anyhow!(
            "a hook server already runs for {}",
            place.project.display()
        )));
    }
    let socket = place.socket();
    // The lock is ours: a socket left here is a dead server's. Anything
    // else in its place is not ours to remove.
    match std::fs::symlink_metadata(&socket) {
        Ok(m) if m.file_type().is_socket() => match std::fs::remove_file(&socket) {
            Ok(()) => tracing::info!("removed a stale server socket"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(failed(
                    anyhow::Error::new(e).context("removing the stale server socket"),
                ))
            }
        },
        Ok(m) => {
            return Err(failed(anyhow::anyhow!(
                "{} is in the way of the server's socket ({}): remove it",
                socket.display(),
                kind_of(&m.file_type())
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(failed(
                anyhow::Error::new(e).context(format!("reading {}", socket.display())),
            ))
        }
    }
    let name = place.socket_name().map_err(failed)?;
    // Created 0600 (the umask is the process's own, and nothing else of
    // this process creates files yet), so its mode is never changed by
    // path after: the directory is private already (`Place::prepare`).
    // SAFETY: umask has no preconditions and cannot fail.
    let umask = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(&name.path);
    // SAFETY: as above.
    unsafe { libc::umask(umask) };
    let listener = bound
        .with_context(|| format!("listening on {}", socket.display()))
        .map_err(failed)?;
    drop(name);
    let ours = identity(&socket)
        .context("looking at the new socket")
        .map_err(failed)?;
    Ok(Listening {
        listener,
        lock,
        ours,
        store,
    })
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a file"
    } else {
        "not a socket"
    }
}

/// Which directory the store's path names now (followed: a store may be a
/// symlink of the user's making).
fn identity_of_dir(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map(|m| (m.dev(), m.ino()))
}

/// Whether the store's path still names the directory the server started
/// on.
fn store_is(store: &Path, id: (u64, u64)) -> bool {
    identity_of_dir(store).is_ok_and(|now| now == id)
}

/// How many full scans the warm working copy has made (none before the
/// first event).
fn full_scans(warm: Option<&Warm>) -> Option<u64> {
    warm.map(|w| w.working_copy().scan_counts().full_total())
}

/// Which file a path names now (device and inode).
fn identity(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).map(|m| (m.dev(), m.ino()))
}

/// How long an exiting server waits for its last background push.
const PUSH_FLUSH: Duration = Duration::from_secs(10);

/// The background push of the store, when it has a remote to push to
/// (docs/remote.md "Continuous push"); a remote that cannot be named is
/// logged and the server records all the same.
fn start_pusher(place: &Place) -> Option<rewind::remote::Pusher> {
    let layout = rewind::store::Layout::new(&place.store);
    match rewind::remote::config::auto_push(&layout, None) {
        Ok(Some(spec)) => Some(rewind::remote::Pusher::start(&place.store, spec)),
        Ok(None) => None,
        Err(err) => {
            tracing::warn!(error = %err, "no background push");
            None
        }
    }
}

/// Record one event as a hook process would, answering when it is done —
/// a session's start too: its baseline is the state the agent found, and
/// it must be durable before the agent goes on and edits. Answered first,
/// a server killed before the baseline (or the baseline failing) left the
/// session to be made by a later event, whose baseline held the agent's
/// edits (docs/agents.md "The hook server").
fn record(
    mut stream: UnixStream,
    d: Delivery<'_>,
    warm: &mut Option<Warm>,
    served: &mut Served,
    pusher: Option<&rewind::remote::Pusher>,
) {
    served.events += 1;
    let started = Instant::now();
    let handled = hooks::handle(&d, Some(warm));
    // The server's part of an event (the hook's process and the round trip
    // are the rest), for the benches: RUST_LOG=rewind::timing=debug.
    tracing::debug!(
        target: "rewind::timing",
        event_us = started.elapsed().as_micros() as u64,
        "event handled"
    );
    match handled {
        Ok(recorded) => {
            if let Some(s) = recorded.session_file {
                served.sessions.insert(s.display().to_string());
            }
            if let Some(p) = pusher {
                p.wake();
            }
            answer(&mut stream, &Reply::done());
        }
        Err(err) => {
            served.failed += 1;
            // Logged where a hook process would log it: `rewind status`
            // shows it.
            hooks::record_failure(&d, &err);
            answer(
                &mut stream,
                &Reply {
                    error: Some(err.to_string()),
                    ..Reply::done()
                },
            );
        }
    }
}

fn status_of(
    place: &Place,
    build: &str,
    idle: Duration,
    served: &Served,
    warm: Option<&Warm>,
) -> Status {
    let wc = warm.map(|w| w.working_copy());
    let counts = wc.map(|w| w.scan_counts().clone()).unwrap_or_default();
    Status {
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        build: build.to_string(),
        project: place.project.display().to_string(),
        store: place.store.display().to_string(),
        uptime_secs: served.started.elapsed().as_secs(),
        idle_exit_secs: idle.as_secs(),
        events_served: served.events,
        events_failed: served.failed,
        sessions: served.sessions.iter().cloned().collect(),
        watched_dirs: wc.and_then(|w| w.watched_dirs()),
        watch_limit_reached: counts.watch_limit_reached,
        scans: counts.scans,
        full_scans: counts
            .full
            .iter()
            .map(|(why, n)| (why.as_str().to_string(), *n))
            .collect(),
    }
}

/// Take connections: check the peer, read its request, acknowledge an
/// event at once, and queue the work for the main loop.
fn accept(listener: UnixListener, build: &str, jobs: mpsc::Sender<Job>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        match peer_uid(&stream) {
            Ok(uid) if uid == effective_uid() => {}
            other => {
                tracing::warn!(
                    ?other,
                    "hook server: a connection from another user refused"
                );
                continue;
            }
        }
        let request = match read_request(&stream, build) {
            Ok(Some(Incoming::Request(r))) => r,
            Ok(Some(Incoming::OtherBuild)) => {
                answer(
                    &mut stream,
                    &Reply {
                        other_build: Some(build.to_string()),
                        ..Default::default()
                    },
                );
                if jobs.send(Job::Replaced).is_err() {
                    return;
                }
                continue;
            }
            // A hook checking that the server listens: nothing to answer.
            Ok(None) => continue,
            Err(err) => {
                answer(&mut stream, &Reply::refused(format!("{err:#}")));
                continue;
            }
        };
        let job = match request {
            Request::Event {
                agent,
                project,
                event_id,
                event,
                ..
            } => {
                answer(&mut stream, &Reply::ack());
                Job::Event {
                    stream,
                    agent,
                    project,
                    event_id,
                    event,
                }
            }
            Request::Status { .. } => Job::Status(stream),
            Request::Stop => Job::Stop(stream),
        };
        if jobs.send(job).is_err() {
            return;
        }
    }
}

/// What a connection asked.
enum Incoming {
    Request(Request),
    /// An event of another build, whatever shape its fields have.
    OtherBuild,
}

fn read_request(stream: &UnixStream, build: &str) -> Result<Option<Incoming>> {
    use std::io::Read;
    stream
        .set_read_timeout(Some(READ_REQUEST))
        .context("setting a read timeout")?;
    let mut line = String::new();
    BufReader::new(stream.take(MAX_REQUEST))
        .read_line(&mut line)
        .context("reading the request")?;
    if line.is_empty() {
        return Ok(None);
    }
    let envelope: Envelope = serde_json::from_str(&line).context("not a hook server request")?;
    // Status answers whichever build asks; an event is another build's to
    // record.
    match envelope.build {
        Some(theirs) if envelope.op == "event" && theirs != build => {
            return Ok(Some(Incoming::OtherBuild))
        }
        _ => {}
    }
    serde_json::from_str(&line)
        .map(|r| Some(Incoming::Request(r)))
        .context("not a hook server request")
}

/// Write one answer line; a client that went away is no error of ours (it
/// records the event itself, and the event id keeps it from being recorded
/// twice).
fn answer(stream: &mut UnixStream, reply: &Reply) {
    let Ok(mut line) = serde_json::to_vec(reply) else {
        return;
    };
    line.push(b'\n');
    if let Err(err) = stream.write_all(&line) {
        tracing::debug!(%err, "hook server: the client went away");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Result<Option<Incoming>> {
        let (mut ours, theirs) = UnixStream::pair().unwrap();
        ours.write_all(line.as_bytes()).unwrap();
        drop(ours);
        read_request(&theirs, "b1")
    }

    /// An event of another build is told so whatever shape the rest of it
    /// has (an older build sent the raw payload, not the parsed event), so
    /// that build's hook replaces this server instead of being refused.
    #[test]
    fn another_builds_event_is_answered_other_build_whatever_its_shape() {
        let old = r#"{"op":"event","build":"b0","agent":"codex","project":"/p","eventId":"e","payload":"{}"}"#;
        assert!(matches!(read(old), Ok(Some(Incoming::OtherBuild))));
        // The same shape from this build is malformed.
        let bad = old.replace("b0", "b1");
        assert!(read(&bad).is_err());
        // This build's event, typed.
        let event = HookEvent {
            name: "Stop".into(),
            session_id: "s".into(),
            cwd: "/p".into(),
            transcript_path: None,
            source: None,
            step: hooks::payload::Step::TurnEnd,
        };
        let line = serde_json::to_string(&Request::Event {
            build: "b1".into(),
            agent: Agent::Codex,
            project: "/p".into(),
            event_id: "e".into(),
            event: Box::new(event.clone()),
        })
        .unwrap();
        match read(&line) {
            Ok(Some(Incoming::Request(Request::Event {
                agent, event: got, ..
            }))) => {
                assert_eq!(agent, Agent::Codex);
                assert_eq!(*got, event);
            }
            _ => panic!("not read back"),
        }
        // Status and stop carry no event; a connection that says nothing
        // is a probe.
        assert!(matches!(
            read(r#"{"op":"status","build":"b0"}"#),
            Ok(Some(Incoming::Request(Request::Status { .. })))
        ));
        assert!(matches!(read(""), Ok(None)));
    }
}
