//! Finding and opening a project's session, for every front end: the
//! project root and its store a command names (or the hook's agent), the
//! session it means (`--session`, the store's newest, or a new one), and
//! opening it read-only, or locked for a write while waiting a little for a
//! sidecar, hook or terminal command that holds it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rewind::engine::{default_store_dir, Engine, EngineConfig, EngineError, ResumeMode, Warm};
use rewind::store::Layout;

use crate::app::args::Location;

pub(crate) fn absolute(p: PathBuf) -> Result<PathBuf> {
    if p.is_absolute() {
        Ok(p)
    } else {
        Ok(std::env::current_dir()
            .context("reading the current directory")?
            .join(p))
    }
}

/// The canonical project root `at` names (default: the current directory)
/// and its store (`--store`, else the project's default store).
pub(crate) fn project_and_store(at: &Location) -> Result<(PathBuf, PathBuf)> {
    let cwd = absolute(at.cwd.clone().unwrap_or_else(|| PathBuf::from(".")))?;
    let root = cwd
        .canonicalize()
        .with_context(|| format!("project root {}", cwd.display()))?;
    let store = match &at.store {
        Some(s) => absolute(s.clone())?,
        None => default_store_dir(&root),
    };
    Ok((root, store))
}

/// Find the session a terminal command means: `--session`, else the newest
/// session file in the project's store.
pub(crate) fn locate(at: &Location) -> Result<EngineConfig> {
    let (root, store) = project_and_store(at)?;
    let layout = Layout::new(&store);
    let session = match &at.session {
        Some(s) => session_named(&layout, s)?,
        None => newest_session(&layout)?,
    };
    Ok(EngineConfig {
        cwd: Some(root),
        session_file: Some(session),
        store_dir: Some(store),
        fsync: true,
        ..Default::default()
    })
}

/// What to do when a project has no session yet (as `rewind ui` says it).
const RECORD_ONE: &str = "record one first: an agent with `rewind install`, or `rewind run`, \
                          `rewind watch` or `rewind serve`";

fn newest_session(layout: &Layout) -> Result<PathBuf> {
    let dir = layout.sessions_dir();
    if std::fs::read_dir(&dir).is_err() {
        bail!(
            "this project has no session yet in {} ({RECORD_ONE}; a session of another \
             project: pass --cwd or --store)",
            dir.display()
        );
    }
    match newest_of(layout) {
        Some(p) => Ok(p),
        None => bail!(
            "no sessions of this project's own in {} ({RECORD_ONE}; a session pulled from a \
             remote is used only when named: --session ID)",
            dir.display()
        ),
    }
}

/// The session `--session` names: a session file, or a session id (or the
/// unique beginning of one) of the store's sessions, as `rewind sessions`
/// and `rewind pull` print them.
pub(crate) fn session_named(layout: &Layout, named: &std::path::Path) -> Result<PathBuf> {
    let path = absolute(named.to_path_buf())?;
    if path.is_file() {
        return Ok(path);
    }
    let Some(id) = named
        .to_str()
        .filter(|s| !s.is_empty() && !s.contains('/') && !s.ends_with(".jsonl"))
    else {
        bail!("no session file {}", path.display());
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(layout.sessions_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            Layout::is_session_file(p)
                && Layout::session_id_of(p).is_some_and(|s| s.starts_with(id))
        })
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!(
            "no session {id:?} in this project's store {} (`rewind sessions` lists them; a session \
             of another project: pass --cwd or --store)",
            layout.sessions_dir().display()
        ),
        n => bail!(
            "{n} sessions begin with {id:?}: {} (give more of the id)",
            found
                .iter()
                .filter_map(|p| Layout::session_id_of(p))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The store's own session file modified last. A session pulled from a
/// remote is another machine's: it is used only when named (`--session`),
/// never taken for this project's (docs/remote.md "Pulling").
pub(crate) fn newest_of(layout: &Layout) -> Option<PathBuf> {
    std::fs::read_dir(layout.sessions_dir())
        .ok()?
        .flatten()
        .filter(|e| Layout::is_session_file(&e.path()) && !layout.is_pulled(&e.path()))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

/// Where `at` points: the canonical project root, its store, and the
/// session (`--session`, else the store's newest, else none: `Engine::open`
/// starts one).
pub(crate) fn locate_newest(at: &Location, watch: bool) -> Result<EngineConfig> {
    let (root, store) = crate::app::project::project_and_store(at)?;
    let store = match at.store {
        Some(_) => store.canonicalize().unwrap_or(store),
        None => store,
    };
    let session = match &at.session {
        Some(s) => Some(session_named(&Layout::new(&store), s)?),
        None => newest_of(&Layout::new(&store)),
    };
    Ok(EngineConfig {
        cwd: Some(root),
        session_file: session,
        store_dir: Some(store),
        fsync: true,
        watch,
        ..Default::default()
    })
}

/// The newest session of the project's store (or `--session`), or a new
/// one with its baseline: `run`, `watch` and `mcp` record into it.
pub(crate) fn open_or_start(at: &Location, watch: bool) -> Result<Engine> {
    match Engine::open(locate_newest(at, watch)?) {
        Ok((engine, _)) => Ok(engine),
        Err(e) if e.is_locked() => {
            bail!("{e}: a sidecar or another `rewind watch` is recording this session")
        }
        Err(e) => Err(e.into()),
    }
}

/// The session `config` names, locked for a confirmed write (a restore,
/// undo or revert the person saw planned on a read-only view). Opened as
/// MCP's and the page's writes are (`ResumeMode::Continue`): the edits
/// made since its last entry are not recorded as an `outside` snapshot
/// first, which would make them the recorded state and change the plan
/// (files the plan keeps as changed since would no longer be); the write's
/// pre-restore snapshot records them before any file is touched
/// (docs/architecture.md rule 1).
pub(crate) fn open_to_confirm(mut config: EngineConfig) -> Result<Engine> {
    config.resume = ResumeMode::Continue;
    match Engine::open(config) {
        Ok((engine, _)) => Ok(engine),
        Err(e) if e.is_locked() => bail!(
            "{e}: a sidecar is running on this session; ask it (restore_files / undo) or stop it first"
        ),
        Err(e) => Err(e.into()),
    }
}

/// Open `config`'s session locked, waiting up to `wait` while another
/// process (a sidecar, `rewind watch`, a hook, a terminal command) holds
/// it. The error of the last try is returned, `is_locked()` when it was
/// still held.
pub(crate) fn open_waiting(config: EngineConfig, wait: Duration) -> Result<Engine, EngineError> {
    open_waiting_warm(config, wait, &mut None)
}

/// [`open_waiting`], taking what `warm` keeps (see `Engine::open_warm`).
pub(crate) fn open_waiting_warm(
    config: EngineConfig,
    wait: Duration,
    warm: &mut Option<Warm>,
) -> Result<Engine, EngineError> {
    let mut locked = None;
    let opened =
        rewind::lock_wait::within(wait, Duration::from_millis(50), || match Engine::open_warm(
            config.clone(),
            warm,
        ) {
            Ok(engine) => Ok(Some(engine)),
            Err(e) if e.is_locked() => {
                locked = Some(e);
                Ok(None)
            }
            Err(e) => Err(e),
        })?;
    match (opened, locked) {
        (Some(engine), _) => Ok(engine),
        (None, Some(e)) => Err(e),
        // Never so (at least one try is made); one more try says why.
        (None, None) => Engine::open_warm(config, warm),
    }
}

/// How a call opens the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read-only: no lock, nothing appended.
    Read,
    /// Locked for the call, like a hook: edits since the last entry are
    /// left for the next snapshot (not recorded as `outside`).
    Write,
}

/// Why a session could not be opened or a call failed.
#[derive(Debug)]
pub enum FrontError {
    /// Another process records the session (a live sidecar, `rewind
    /// watch`, a hook): the message says so and what to do.
    Locked(String),
    /// The engine refused (bad ids, paths, arguments, damaged store…).
    Engine(EngineError),
    /// Our own failure (no session, serialization…).
    Internal(String),
}

impl std::fmt::Display for FrontError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrontError::Locked(m) | FrontError::Internal(m) => f.write_str(m),
            FrontError::Engine(e) => write!(f, "{e}"),
        }
    }
}

impl From<EngineError> for FrontError {
    fn from(e: EngineError) -> Self {
        FrontError::Engine(e)
    }
}

/// The session `at` names: `--session`, else the store's newest.
pub fn session_of(at: &Location) -> Result<PathBuf, FrontError> {
    let config = locate_newest(at, false).map_err(|e| FrontError::Internal(format!("{e:#}")))?;
    config
        .session_file
        .ok_or_else(|| FrontError::Internal("the project has no session".into()))
}

/// Open the session for one call. A write waits up to `lock_wait` for a
/// hook or sidecar that holds the session, then fails with
/// [`FrontError::Locked`].
pub fn open(at: &Location, access: Access, lock_wait: Duration) -> Result<Engine, FrontError> {
    let mut config =
        locate_newest(at, false).map_err(|e| FrontError::Internal(format!("{e:#}")))?;
    if config.session_file.is_none() {
        return Err(FrontError::Internal(
            "the project has no session any more".into(),
        ));
    }
    match access {
        Access::Read => Ok(Engine::open_read_only(config)?),
        Access::Write => {
            config.resume = ResumeMode::Continue;
            match open_waiting(config, lock_wait) {
                Ok(engine) => Ok(engine),
                Err(e) if e.is_locked() => Err(FrontError::Locked(format!(
                    "{e}: a sidecar (`rewind serve`), `rewind watch` or a hook is recording this session; \
                     a write must go through it (or wait until it lets go, then try again)"
                ))),
                Err(e) => Err(e.into()),
            }
        }
    }
}
