//! The hook's side. `rewind hook` hands its event to the project's server
//! when one answers, and records it itself otherwise, exactly as without a
//! server: the agent never waits on a server that cannot help, and never
//! sees a failure. The event carries an id of the hook's making, so an
//! event the server got but answered too late, then recorded here too, is
//! recorded once.
//!
//! | the server | the hook |
//! |---|---|
//! | answers | done |
//! | none, or a stale socket | starts one (detached), hands the event to it once it listens, else records it itself |
//! | could not start lately (`backoff.rs`) | records the event itself at once, starts nothing until the retry time |
//! | starts, then exits without listening | remembers it (`backoff.rs`) and records the event itself at once |
//! | acknowledges, then dies | starts another, records the event itself |
//! | does not acknowledge in `ACK_WAIT`, or does not answer in `REPLY_WAIT` | records the event itself (the server's lock is the session's: the two never record at once) |
//! | another build | it exits; the hook starts one of its own build and records the event itself |
//! | `REWIND_SERVER=0` | records every event itself, starts nothing |

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::backoff;
use super::place::{self, build_id, Place};
use super::wire::{Reply, Request, Status};
use crate::app::hooks::{self, Agent, Delivery, HookEvent};

/// How long a server may take to acknowledge an event: it acknowledges
/// before any work, so only a hung one takes longer.
const ACK_WAIT: Duration = Duration::from_secs(2);

/// How long a hook waits for a recorded event (agents give a hook 60 s).
const REPLY_WAIT: Duration = Duration::from_secs(50);

/// How long a hook that started a server waits for it to listen before it
/// records the event itself.
const START_WAIT: Duration = Duration::from_millis(500);

/// Why the server did not record an event.
#[derive(Debug, thiserror::Error)]
enum Unserved {
    /// No server listens (none ran, or it died and left its socket).
    #[error("no server: {0}")]
    Absent(std::io::Error),
    /// It took the event and went away before answering.
    #[error("the server went away")]
    Died,
    /// It did not acknowledge, or did not answer, in time.
    #[error("the server did not answer in time")]
    Hung,
    /// Another build of rewind: it gives way.
    #[error("the server is another build ({0})")]
    OtherBuild(String),
    /// The server's directory is not private: not used.
    #[error(transparent)]
    Unsafe(anyhow::Error),
    #[error("{0}")]
    Other(String),
}

impl Unserved {
    /// Whether the hook should start a server for the next events (one
    /// whose directory is not private makes it private first, or fails to
    /// and records alone).
    fn start_one(&self) -> bool {
        matches!(
            self,
            Unserved::Absent(_) | Unserved::Died | Unserved::OtherBuild(_) | Unserved::Unsafe(_)
        )
    }
}

/// `rewind hook`: record the event (parsed from stdin by the caller)
/// through the project's server, or here. Never fails, prints nothing.
pub fn deliver(agent: Agent, event: &HookEvent) {
    if std::env::var_os("REWIND_SERVER").is_some_and(|v| v == "0") {
        return hooks::run(&Delivery::one_shot(agent, event));
    }
    if !hooks::needs_work(agent, event) {
        return;
    }
    let project = hooks::project_dir(agent, event);
    let Ok(place) = place::of_project(&project) else {
        return hooks::run(&Delivery::one_shot(agent, event));
    };
    // Paused (`rewind pause`): nothing to record, and no server to start.
    if crate::app::settings::paused(&rewind::store::Layout::new(&place.store)).is_some() {
        return;
    }
    let d = Delivery {
        agent,
        event,
        project: Some(project),
        event_id: Some(format!("{:032x}", rand::random::<u128>())),
        store: Some(place.store.clone()),
    };
    let why = match send_event(&place, &d) {
        Ok(()) => return,
        Err(why) if why.start_one() => match backoff::read(&place).filter(|f| f.waiting()) {
            // One that failed lately would fail again: not tried, and not
            // waited for, before its retry time.
            Some(failed) => {
                tracing::debug!(reason = %failed.reason, "the hook server could not start lately");
                why
            }
            None => {
                tracing::debug!(%why, "starting a hook server");
                match start_and_wait(&place, START_WAIT) {
                    Ok(Started::Listening) => match send_event(&place, &d) {
                        Ok(()) => return,
                        Err(again) => again,
                    },
                    Ok(Started::Exited | Started::Slow) => why,
                    Err(err) => {
                        tracing::warn!(err = format!("{err:#}"), "could not start a hook server");
                        why
                    }
                }
            }
        },
        Err(why) => why,
    };
    tracing::debug!(%why, "recording the event here");
    hooks::run(&d);
}

fn send_event(place: &Place, d: &Delivery<'_>) -> Result<(), Unserved> {
    let request = Request::Event {
        build: build_id(),
        agent: d.agent,
        project: d
            .project
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        event_id: d.event_id.clone().unwrap_or_default(),
        event: Box::new(d.event.clone()),
    };
    let (_stream, mut replies) = open(place, &request)?;
    let first = next_reply(&mut replies, ACK_WAIT)?;
    if let Some(theirs) = first.other_build {
        return Err(Unserved::OtherBuild(theirs));
    }
    if !first.ack {
        return Err(Unserved::Other(
            first.error.unwrap_or_else(|| "no acknowledgement".into()),
        ));
    }
    next_reply(&mut replies, REPLY_WAIT)?;
    // Done: recorded, or the failure logged by the server as a hook's.
    Ok(())
}

/// Connect and send one request; the answers are read from the reader.
fn open(place: &Place, request: &Request) -> Result<(UnixStream, BufReader<UnixStream>), Unserved> {
    if let Err(unsafe_dir) = place.check() {
        // No directory yet is no server yet.
        if !place.socket().parent().is_some_and(|d| d.exists()) {
            return Err(Unserved::Absent(std::io::ErrorKind::NotFound.into()));
        }
        return Err(Unserved::Unsafe(unsafe_dir));
    }
    let name = place.socket_name().map_err(Unserved::Unsafe)?;
    let mut stream = UnixStream::connect(&name.path).map_err(Unserved::Absent)?;
    let mut line = serde_json::to_vec(request).map_err(|e| Unserved::Other(e.to_string()))?;
    line.push(b'\n');
    stream
        .set_write_timeout(Some(ACK_WAIT))
        .and_then(|()| stream.write_all(&line))
        .map_err(|_| Unserved::Died)?;
    let reader = stream
        .try_clone()
        .map_err(|e| Unserved::Other(e.to_string()))?;
    Ok((stream, BufReader::new(reader)))
}

fn next_reply(replies: &mut BufReader<UnixStream>, wait: Duration) -> Result<Reply, Unserved> {
    replies
        .get_ref()
        .set_read_timeout(Some(wait))
        .map_err(|e| Unserved::Other(e.to_string()))?;
    let mut line = String::new();
    match replies.read_line(&mut line) {
        Ok(0) => Err(Unserved::Died),
        Ok(_) => serde_json::from_str(&line).map_err(|e| Unserved::Other(e.to_string())),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(Unserved::Hung)
        }
        Err(_) => Err(Unserved::Died),
    }
}

/// How a server just started came up.
pub enum Started {
    Listening,
    /// It exited before it listened (its failure is remembered).
    Exited,
    /// Neither yet: it may still listen, for the next events.
    Slow,
}

/// Start the project's server and wait up to `wait` for it to listen. One
/// that exits before it does is not waited for: a server that cannot start
/// costs an event its start, not the whole wait, and is remembered (in
/// `backoff.rs`, by the server itself when it could say why, else here) so
/// the next events start none.
pub fn start_and_wait(place: &Place, wait: Duration) -> Result<Started> {
    let mut child = match start(place) {
        Ok(child) => child,
        Err(err) => {
            // Noted only in a private directory of ours (a directory that is
            // not is refused at every event, which costs nothing).
            backoff::note(place, &format!("{err:#}"), 0);
            return Err(err);
        }
    };
    let started = Instant::now();
    loop {
        if place
            .socket_name()
            .is_ok_and(|name| UnixStream::connect(&name.path).is_ok())
        {
            return Ok(Started::Listening);
        }
        if let Ok(Some(status)) = child.try_wait() {
            // The server says why when it can; a server that could not
            // (killed, crashed) is remembered all the same.
            if backoff::read(place).is_none_or(|f| f.pid != child.id()) {
                backoff::note(
                    place,
                    &format!(
                        "it exited ({status}) before it listened; {} may say why",
                        place.log().display()
                    ),
                    child.id(),
                );
            }
            return Ok(Started::Exited);
        }
        if started.elapsed() >= wait {
            return Ok(Started::Slow);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Start the project's server in the background, detached from the
/// agent's process group, with no terminal: its output goes to its log,
/// never to the hook's stdout (which the agent reads to its end).
fn start(place: &Place) -> Result<Child> {
    place.prepare()?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(place.log())
        .with_context(|| format!("opening {}", place.log().display()))?;
    let exe = std::env::current_exe().context("finding the rewind binary")?;
    Command::new(exe)
        .args(["server", "run", "--cwd"])
        .arg(&place.project)
        .arg("--store")
        .arg(&place.store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("starting the hook server")
}

/// Why no server serves the project when none answers: the failure to
/// start it remembered lately, or a server directory that is not used.
pub fn why_none(place: &Place) -> Option<String> {
    if place.exists() {
        if let Err(err) = place.check() {
            return Some(format!(
                "not used: {err:#}; hooks record their events themselves"
            ));
        }
    }
    backoff::read(place).map(|f| f.describe())
}

/// `rewind server status`: what the project's server runs and has done;
/// `None` when no server answers.
pub fn status(place: &Place) -> Result<Option<Status>> {
    let request = Request::Status { build: build_id() };
    let (_stream, mut replies) = match open(place, &request) {
        Ok(open) => open,
        Err(Unserved::Absent(_)) => return Ok(None),
        Err(e) => bail!("{e:#}"),
    };
    let reply = next_reply(&mut replies, REPLY_WAIT).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(reply.status)
}

/// `rewind server stop`: `false` when no server ran.
pub fn stop(place: &Place) -> Result<bool> {
    let (_stream, mut replies) = match open(place, &Request::Stop) {
        Ok(open) => open,
        Err(Unserved::Absent(_)) => return Ok(false),
        Err(e) => bail!("{e}"),
    };
    next_reply(&mut replies, REPLY_WAIT).map_err(|e| anyhow::anyhow!("{e}"))?;
    // Gone once its socket is.
    let start = Instant::now();
    while place.socket().exists() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}
