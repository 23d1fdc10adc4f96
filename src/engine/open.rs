//! Opening a session: locate the store, create or resume the session file,
//! take the baseline (new session) or record edits made while no sidecar
//! ran (resume).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::api::CheckpointKind;
use super::api::{BaselineInfo, Opened, Recovered, TornTail};
use super::record::snapshot::SnapshotSpec;
use super::{Engine, EngineError, EventSink, Result};
use crate::session::records::StepSnapshot;
use crate::session::{self, Header, ParkedLog, SessionLog, CUSTOM_STEP_SNAPSHOT};
use crate::store::{FlatCache, Home, Layout, Store};
use crate::working_copy::{CachePaths, ScanOptions, WorkingCopy};

#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    /// Project root; `None` takes the process's working directory (never
    /// a session header's `cwd`, which is only compared and reported).
    pub cwd: Option<PathBuf>,
    pub session_file: Option<PathBuf>,
    /// `None`: [`default_store_dir`] of the project.
    pub store_dir: Option<PathBuf>,
    pub scan: ScanOptions,
    pub fsync: bool,
    /// Watch the project (the `notify` crate: inotify on Linux, FSEvents on
    /// macOS, ReadDirectoryChangesW on Windows) so snapshots look only at what
    /// changed; falls back to full scans whenever it cannot be sure.
    pub watch: bool,
    /// What resuming a session does with changes made since its last entry.
    pub resume: ResumeMode,
}

/// What resuming a session does with changes made since its last entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResumeMode {
    /// Record them as an `outside` snapshot: nobody was watching (a
    /// sidecar restarted after downtime).
    #[default]
    RecordOutside,
    /// Leave them for the caller's next snapshot: the session was never
    /// left (an agent hook, one process per event, whose next snapshot
    /// records the tool's effect under the tool's name).
    Continue,
}

/// The project's default store in rewind's home ([`Home::project_store`]).
pub fn default_store_dir(root: &Path) -> PathBuf {
    Home::from_env().project_store(root)
}

fn absolute(p: &Path, what: &str) -> Result<PathBuf> {
    if !p.is_absolute() {
        return Err(EngineError::InvalidParams(format!(
            "{what} must be an absolute path, got {}",
            p.display()
        )));
    }
    Ok(p.to_path_buf())
}

/// What a long-lived process keeps warm from one opened session of a
/// project to the next (the hook server, docs/architecture.md "The hook
/// server"): the store with what it knows, the working copy (stat cache, last
/// scan, armed watcher) and the recently flattened trees. It is handed back
/// by [`Engine::into_warm`] and taken by the next open of a session of the
/// same project and store; the session lock is not part of it, so other
/// processes write the sessions in between.
pub struct Warm {
    store: Store,
    working_copy: WorkingCopy,
    flat_cache: FlatCache,
    /// The sessions recorded into lately, let go of: reopening one reads
    /// only its new lines.
    logs: Vec<ParkedLog>,
}

/// How many let-go sessions a [`Warm`] keeps.
const PARKED_LOGS: usize = 8;

impl Warm {
    /// The working copy kept warm (its watcher and scan counts).
    pub fn working_copy(&self) -> &WorkingCopy {
        &self.working_copy
    }

    fn serves(&self, root: &Path, store_dir: &Path) -> bool {
        self.working_copy.root() == root && self.store.root() == store_dir
    }

    /// For a process about to exit (a hook of its own): do what dropping
    /// does that outlives the process (publish a pack still being written,
    /// save the stat cache) and leave the memory to the exit, which frees
    /// it at once; freeing a large project's trees and caches piece by
    /// piece took a twentieth of a one-shot hook's time. A working copy
    /// with a watcher is dropped as usual (its barrier directory goes).
    pub fn close_for_exit(mut self) {
        if self.working_copy.watched_dirs().is_some() {
            return;
        }
        if let Err(e) = self.store.sync_pending() {
            tracing::warn!(error = %e, "could not publish the last pack on exit");
        }
        self.working_copy.save_caches();
        std::mem::forget(self);
    }

    /// For a process about to exit whose store is gone (a hook server's
    /// store deleted under it): let the watcher go and write nothing — no
    /// stat cache, no saved scan, no pack published — since any of them
    /// would make the store's directories again.
    pub fn discard(self) {
        let Warm {
            store,
            working_copy,
            ..
        } = self;
        working_copy.discard();
        std::mem::forget(store);
    }

    fn take_log(&mut self, path: &Path) -> Option<ParkedLog> {
        let i = self.logs.iter().position(|l| l.path() == path)?;
        Some(self.logs.remove(i))
    }
}

impl Engine {
    /// [`Engine::into_warm`].
    pub(super) fn park(self) -> Warm {
        let Engine {
            store,
            log,
            working_copy,
            flat_cache,
            mut parked_logs,
            ..
        } = self;
        if let Some(parked) = log.park() {
            parked_logs.insert(0, parked);
            parked_logs.truncate(PARKED_LOGS);
        }
        Warm {
            store,
            working_copy,
            flat_cache,
            logs: parked_logs,
        }
    }

    /// [`Engine::open`] with notifications going to `events` from the start,
    /// so the baseline scan of a large project already reports progress.
    /// `warm`, when it serves the same project and store, is taken once the
    /// session is locked, and its working copy, store and trees are used
    /// instead of fresh ones.
    pub(super) fn open_with(
        config: EngineConfig,
        events: Option<EventSink>,
        warm: &mut Option<Warm>,
    ) -> Result<(Engine, Opened)> {
        let (mut engine, resumed, recovered) = Engine::open_inner(config, events, warm)?;
        let opened = engine.initialize_result(resumed, recovered)?;
        Ok((engine, opened))
    }

    /// [`Engine::open_with`] for a caller that does not need the session's
    /// summary (the hook server, once per event): the baseline's file count
    /// and size are not summed.
    pub(super) fn open_quietly(config: EngineConfig, warm: &mut Option<Warm>) -> Result<Engine> {
        Ok(Engine::open_inner(config, None, warm)?.0)
    }

    /// The open itself: the engine, whether the session was resumed, and
    /// what recovery did.
    fn open_inner(
        config: EngineConfig,
        events: Option<EventSink>,
        warm: &mut Option<Warm>,
    ) -> Result<(Engine, bool, Option<Recovered>)> {
        let session_file = match &config.session_file {
            Some(p) => Some(absolute(p, "sessionFile")?),
            None => None,
        };
        // Lock and read an existing session first: its header names the
        // project when the caller did not.
        let existing = match &session_file {
            Some(p) if p.exists() => {
                let parked = warm.as_mut().and_then(|w| w.take_log(p));
                Some(match parked {
                    Some(parked) => SessionLog::reopen(parked)?,
                    None => SessionLog::open(p, config.fsync)?,
                })
            }
            _ => None,
        };
        let cwd = project_dir(&config)?;
        let root = cwd.canonicalize().map_err(|e| {
            EngineError::InvalidParams(format!("project root {} is not usable: {e}", cwd.display()))
        })?;
        if let Some((log, _)) = &existing {
            note_other_root(&root, &log.header().cwd);
        }
        if !root.is_dir() {
            return Err(EngineError::InvalidParams(format!(
                "project root {} is not a directory",
                root.display()
            )));
        }
        let store_dir = match &config.store_dir {
            Some(d) => absolute(d, "storeDir")?,
            None => store_of_session(session_file.as_deref())
                .unwrap_or_else(|| default_store_dir(&root)),
        };
        let (store, warm) = match warm.take_if(|w| w.serves(&root, &store_dir)) {
            Some(Warm {
                store,
                working_copy,
                flat_cache,
                logs,
            }) => (store, Some((working_copy, flat_cache, logs))),
            None => (Store::open(&store_dir, config.fsync)?, None),
        };
        // The empty tree is every baseline's `baselineTreeHash`; storing it
        // makes it a point like any other tree. Written as a snapshot's
        // objects are, under the lock that keeps gc out and published at
        // once: gc takes a young pack without an index for a crashed
        // writer's when its grace period is short.
        {
            let no_gc = store.writer_guard()?;
            if no_gc.stale {
                store.refresh_after_gc(no_gc.generation)?;
            }
            store.put_tree(&crate::store::Tree::default())?;
            store.sync_pending()?;
        }
        let root_str = root.display().to_string();
        let created = existing.is_none();
        let (log, torn) = match existing {
            Some((log, report)) => (log, report.torn_tail),
            None => {
                let header = Header::new(&root_str);
                let path = match session_file {
                    Some(p) => p,
                    None => store
                        .layout()
                        .new_session_file(&header.timestamp, &header.id),
                };
                (
                    SessionLog::create_with_header(&path, header, config.fsync)?,
                    None,
                )
            }
        };
        let resumed = log.index().first_snapshot().is_some();
        register_session(&store, log.path());
        let warm_copy = warm.is_some();
        let mut engine = Engine::assemble(root, store, log, &config, warm);
        engine.events = events;
        if config.watch && !warm_copy {
            // Armed by the first full scan below.
            engine.working_copy.watch();
        }

        let mut recovered = torn.map(|t| match t {
            session::TornTail::Completed => Recovered {
                torn_tail: Some(TornTail::Completed),
                ..Default::default()
            },
            session::TornTail::Truncated { bytes } => Recovered {
                torn_tail: Some(TornTail::Truncated),
                truncated_bytes: Some(bytes),
                ..Default::default()
            },
        });
        // A restore a crash interrupted is finished before the disk is
        // compared with the recorded state.
        if let Some(done) = engine.recover_interrupted_restore()? {
            recovered
                .get_or_insert_with(Recovered::default)
                .interrupted_restore = Some(done);
        }

        if !resumed {
            // A new session (or one whose file holds only a header): the
            // baseline is its root entry.
            let baseline = engine.record_snapshot(SnapshotSpec {
                kind: CheckpointKind::Baseline,
                label: None,
                note: None,
                scope: None,
                tool: None,
                parent: None,
                turn_index: Some(0),
                force: true,
                request_id: None,
                conversation: None,
            });
            if let Err(err) = baseline {
                // A session file we just made holds nothing worth keeping.
                if created && engine.log.index().is_empty() {
                    let _ = std::fs::remove_file(engine.log.path());
                }
                return Err(err);
            }
        } else if config.resume == ResumeMode::RecordOutside {
            // Resume: record edits made while no sidecar was running.
            let recorded = engine.recorded_tree();
            let prior = engine.flat(recorded)?;
            let state = engine.scan_working(None, &prior)?;
            if Some(state.tree) != recorded {
                // Record the scan just made (not a second walk of the tree).
                let spec = SnapshotSpec::forced(CheckpointKind::Outside, engine.leaf_id());
                let res = engine.record_state(&spec, state)?;
                let r = recovered.get_or_insert_with(Recovered::default);
                r.outside_entry_id = res.entry_id;
            }
        }

        Ok((engine, resumed, recovered))
    }

    /// Open a session for reading only (terminal commands): no lock, no
    /// baseline, nothing appended. Queries against `@working` still scan.
    pub(super) fn open_reading(config: EngineConfig) -> Result<Engine> {
        let path = config
            .session_file
            .clone()
            .ok_or_else(|| EngineError::InvalidParams("no session file given".into()))?;
        let log = SessionLog::open_read_only(&absolute(&path, "sessionFile")?)?;
        let cwd = project_dir(&config)?;
        let root = cwd.canonicalize().map_err(|e| {
            EngineError::InvalidParams(format!("project root {} is not usable: {e}", cwd.display()))
        })?;
        note_other_root(&root, &log.header().cwd);
        let store_dir = match &config.store_dir {
            Some(d) => absolute(d, "storeDir")?,
            None => store_of_session(Some(&path)).unwrap_or_else(|| default_store_dir(&root)),
        };
        let store = Store::open(&store_dir, false)?;
        Ok(Engine::assemble(root, store, log, &config, None))
    }

    /// An engine for `log`, with a fresh working copy, or `warm`'s (which
    /// takes the session's staged set; everything else in it is the
    /// project's).
    fn assemble(
        root: PathBuf,
        store: Store,
        log: SessionLog,
        config: &EngineConfig,
        warm: Option<(WorkingCopy, FlatCache, Vec<ParkedLog>)>,
    ) -> Engine {
        let stat_cache_path = store.layout().stat_cache(&root);
        let flat_path = store.layout().saved_flat(&root);
        let scan_path = store.layout().saved_scan(&root);
        // The staged set survives restarts through the latest snapshot
        // that recorded it.
        let staged: BTreeSet<String> = log
            .index()
            .entries()
            .iter()
            .rev()
            .find(|e| e.custom_type.as_deref() == Some(CUSTOM_STEP_SNAPSHOT))
            .and_then(|e| e.record::<StepSnapshot>())
            .and_then(|s| s.staged_paths)
            .map(|paths| paths.into_iter().collect())
            .unwrap_or_default();
        let (working_copy, flat_cache, parked_logs) = match warm {
            Some((mut wc, trees, logs)) => {
                wc.set_staged(staged);
                (wc, trees, logs)
            }
            None => (
                WorkingCopy::new(
                    root,
                    config.scan.clone(),
                    config.fsync,
                    CachePaths {
                        stat: stat_cache_path,
                        scan: scan_path,
                        flat: flat_path.clone(),
                    },
                    staged,
                ),
                FlatCache::with_saved(flat_path),
                Vec::new(),
            ),
        };
        Engine {
            store,
            log,
            working_copy,
            flat_cache,
            parked_logs,
            events: None,
            blame_cache: Default::default(),
            fsync: config.fsync,
        }
    }

    fn initialize_result(&mut self, resumed: bool, recovered: Option<Recovered>) -> Result<Opened> {
        let baseline = self
            .baseline()
            .ok_or_else(|| EngineError::InvalidParams("session has no baseline".into()))?
            .clone();
        let tree = super::tree_of(&baseline)?;
        let files = self.flat(Some(tree))?;
        Ok(Opened {
            session_id: self.log.header().id.clone(),
            session_file: self.log.path().to_path_buf(),
            store_dir: self.store.root().to_path_buf(),
            project_root: self.working_copy.root().to_path_buf(),
            // A session with a baseline has a leaf; the fallback is never taken.
            leaf_id: self.leaf_id().unwrap_or_else(|| baseline.id.clone()),
            resumed,
            baseline: BaselineInfo {
                entry_id: baseline.id.clone(),
                tree_hash: tree,
                files: files.len() as u64,
                bytes: files.values().map(|e| e.size).sum(),
            },
            recovered,
        })
    }
}

/// The store a session file lives in, when it sits in a store's
/// `sessions/` directory: resuming it needs no `storeDir`.
fn store_of_session(session: Option<&Path>) -> Option<PathBuf> {
    Layout::of_session(session?).map(|l| l.root().to_path_buf())
}

/// Every session a store serves is registered in it (docs/format.md "Session registry"), so gc sees
/// sessions kept outside `<store>/sessions/`. A registration that cannot be
/// written is logged: it only matters to gc, which then keeps more.
fn register_session(store: &Store, session_path: &Path) {
    let dir = store.layout().registry_dir();
    let file = store.layout().registration(session_path);
    if file.exists() {
        return;
    }
    let result = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&file, session_path.display().to_string()));
    if let Err(err) = result {
        tracing::warn!(%err, path = %file.display(), "could not register the session in the store");
    }
}

/// Session files the store knows: those under `sessions/` and registered ones.
pub(crate) fn known_sessions(store: &Store) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(store.layout().sessions_dir()) {
        out.extend(
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| Layout::is_session_file(p)),
        );
    }
    if let Ok(rd) = std::fs::read_dir(store.layout().registry_dir()) {
        for e in rd.flatten() {
            if let Ok(p) = std::fs::read_to_string(e.path()) {
                let p = PathBuf::from(p.trim());
                if p.exists() && !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// The project root a caller means: `cwd`, else the process's working
/// directory. Never a session file's header: a session pulled from a remote
/// (or any file someone else wrote) would otherwise choose the directory
/// rewind snapshots and restores into (docs/architecture.md rule 7).
fn project_dir(config: &EngineConfig) -> Result<PathBuf> {
    match &config.cwd {
        Some(c) => absolute(c, "cwd"),
        None => std::env::current_dir()
            .map_err(|e| EngineError::io("reading the current directory", ".", e)),
    }
}

/// One line when the session was recorded in another directory than the
/// project it is opened for (a pulled session, a moved project): said, not
/// obeyed.
fn note_other_root(root: &Path, recorded: &str) {
    let same = Path::new(recorded)
        .canonicalize()
        .map(|r| r == root)
        .unwrap_or(false);
    // Said once a process: a restore opens the session to plan, to confirm
    // and to write, and the person needs the line once.
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !same
        && Path::new(recorded) != root
        && !SAID.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        tracing::warn!(
            "this session was recorded in {}; it is opened for the project {} (pass --cwd to choose another)",
            crate::printable::printable(recorded),
            root.display()
        );
    }
}
