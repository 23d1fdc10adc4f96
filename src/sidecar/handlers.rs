//! The method table: every protocol method as a jsonrpsee method that parses
//! its params, runs the engine, and maps errors to protocol codes. The
//! engine is opened by `initialize`, or lazily with the command-line
//! defaults by the first other request.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::RpcModule;
use serde::de::DeserializeOwned;

use crate::engine::{Engine, EngineConfig, EngineError, EngineEvent};
use crate::sidecar::convert::{self, FromWire, ToWire};
use crate::sidecar::protocol::*;
use crate::sidecar::rpc::{codes, Notifier, Shutdown};
use crate::working_copy::ScanOptions;

/// What `rewind serve`'s flags say, used when `initialize` does not.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub cwd: Option<PathBuf>,
    pub session_file: Option<PathBuf>,
    pub store_dir: Option<PathBuf>,
}

enum State {
    /// No session yet; the first request other than `shutdown` opens one.
    Idle,
    Open(Box<Engine>, EngineConfig),
    /// The last `initialize` failed and no session is open: requests are
    /// refused rather than opening one with the command-line defaults,
    /// which may name another project.
    Failed(String),
    /// After `shutdown`: nothing is opened again.
    Closed,
}

pub struct Sidecar {
    state: Mutex<State>,
    /// The background push of the open session's store, if it has a remote.
    pusher: Mutex<Option<crate::remote::Pusher>>,
    defaults: Defaults,
    notifier: Notifier,
    shutdown: Shutdown,
}

/// How long `shutdown` waits for the last background push.
const PUSH_FLUSH: std::time::Duration = std::time::Duration::from_secs(10);

fn to_rpc(err: EngineError) -> ErrorObjectOwned {
    let code = codes::code(&err);
    tracing::debug!(%err, code, "request failed");
    ErrorObjectOwned::owned(code, err.to_string(), codes::data(&err))
}

/// An engine event as the notification the protocol names for it.
fn notify(notifier: &Notifier, event: EngineEvent) {
    match convert::notification(event) {
        (method, Ok(params)) => notifier.notify(method, params),
        (method, Err(err)) => {
            tracing::error!(method, %err, "notification dropped: not serializable")
        }
    }
}

fn invalid(msg: String) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(codes::INVALID_PARAMS, msg, None::<()>)
}

/// Params for methods whose params are all optional: absent or null means
/// all defaults.
fn parse_opt<T: DeserializeOwned + Default>(params: Option<&str>) -> Result<T, ErrorObjectOwned> {
    match params {
        None | Some("null") => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw).map_err(|e| invalid(format!("invalid params: {e}"))),
    }
}

fn parse_req<T: DeserializeOwned>(params: Option<&str>) -> Result<T, ErrorObjectOwned> {
    match params {
        None | Some("null") => Err(invalid("invalid params: this method needs params".into())),
        Some(raw) => serde_json::from_str(raw).map_err(|e| invalid(format!("invalid params: {e}"))),
    }
}

impl Sidecar {
    pub fn new(defaults: Defaults, notifier: Notifier, shutdown: Shutdown) -> Sidecar {
        Sidecar {
            state: Mutex::new(State::Idle),
            pusher: Mutex::new(None),
            defaults,
            notifier,
            shutdown,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside a handler must not wedge every later request.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn config_for(&self, p: InitializeParams) -> EngineConfig {
        let o = p.options.unwrap_or_default();
        let d = ScanOptions::default();
        EngineConfig {
            cwd: p
                .cwd
                .map(PathBuf::from)
                .or_else(|| self.defaults.cwd.clone()),
            session_file: p
                .session_file
                .map(PathBuf::from)
                .or_else(|| self.defaults.session_file.clone()),
            store_dir: p
                .store_dir
                .map(PathBuf::from)
                .or_else(|| self.defaults.store_dir.clone()),
            scan: ScanOptions {
                max_file_size: o.max_file_size.unwrap_or(d.max_file_size),
                extra_ignores: o.extra_ignores.unwrap_or_default(),
                use_gitignore: o.use_gitignore.unwrap_or(d.use_gitignore),
                default_excludes: o.default_excludes.unwrap_or(d.default_excludes),
                ignored_max_size: o.ignored_max_size.unwrap_or(d.ignored_max_size),
                ignored_per_directory: o
                    .ignored_per_directory
                    .map_or(d.ignored_per_directory, |n| n as usize),
            },
            fsync: o.fsync.unwrap_or(true),
            watch: o.watch.unwrap_or(true),
            resume: Default::default(),
        }
    }

    fn initialize(&self, p: InitializeParams) -> Result<InitializeResult, EngineError> {
        let remote = p.options.as_ref().and_then(|o| o.remote.clone());
        let config = self.config_for(p);
        let mut state = self.lock();
        if matches!(*state, State::Closed) {
            return Err(EngineError::InvalidParams(
                "the sidecar is shutting down".into(),
            ));
        }
        // Re-opening the session we hold: release it first (else our own
        // lock refuses us), and take it back if the new open fails.
        let same_file = match (&*state, &config.session_file) {
            (State::Open(e, _), Some(f)) => e.session_file() == f.as_path(),
            _ => false,
        };
        let previous = if same_file {
            std::mem::replace(&mut *state, State::Idle)
        } else {
            State::Idle
        };
        let previous_config = match &previous {
            State::Open(_, c) => Some(c.clone()),
            _ => None,
        };
        drop(previous);
        match self.open_engine(config.clone()) {
            Ok((engine, result)) => {
                // The session's first snapshot was a full scan.
                crate::memory::release_free();
                self.start_pusher(engine.store().root(), remote.as_deref());
                *state = State::Open(Box::new(engine), config);
                Ok(result.to_wire())
            }
            Err(err) => {
                if let Some(c) = previous_config {
                    if let Ok((engine, _)) = self.open_engine(c.clone()) {
                        *state = State::Open(Box::new(engine), c);
                    }
                }
                if !matches!(*state, State::Open(..)) {
                    *state = State::Failed(err.to_string());
                }
                Err(err)
            }
        }
    }

    /// Pushes the store at `root` in the background when it has a remote
    /// to push to (docs/remote.md "Continuous push"); a pusher already
    /// running for this store and remote is kept.
    fn start_pusher(&self, root: &std::path::Path, explicit: Option<&str>) {
        let layout = crate::store::Layout::new(root);
        let spec = match crate::remote::config::auto_push(&layout, explicit) {
            Ok(spec) => spec,
            Err(err) => {
                tracing::warn!(error = %err, "no background push");
                None
            }
        };
        let mut pusher = self.pusher.lock().unwrap_or_else(|p| p.into_inner());
        let same = match (&*pusher, &spec) {
            (Some(p), Some(s)) => p.root() == root && p.spec() == s,
            _ => false,
        };
        if same {
            return;
        }
        if let Some(old) = pusher.take() {
            old.stop(PUSH_FLUSH);
        }
        *pusher = spec.map(|s| crate::remote::Pusher::start(root, s));
    }

    fn wake_pusher(&self) {
        if let Ok(p) = self.pusher.lock() {
            if let Some(p) = p.as_ref() {
                p.wake();
            }
        }
    }

    /// Open an engine whose notifications go to the client.
    fn open_engine(
        &self,
        config: EngineConfig,
    ) -> Result<(Engine, crate::engine::api::Opened), EngineError> {
        let notifier = self.notifier.clone();
        Engine::open_with_events(
            config,
            Some(std::sync::Arc::new(move |event| notify(&notifier, event))),
        )
    }

    /// Run `f` on the open engine, opening it with the defaults first if no
    /// `initialize` came.
    fn with_engine<T>(
        &self,
        f: impl FnOnce(&mut Engine) -> Result<T, EngineError>,
    ) -> Result<T, ErrorObjectOwned> {
        let mut state = self.lock();
        if matches!(*state, State::Idle) {
            let config = self.config_for(InitializeParams::default());
            let (engine, _) = self.open_engine(config.clone()).map_err(to_rpc)?;
            *state = State::Open(Box::new(engine), config);
        }
        match &mut *state {
            State::Open(engine, _) => {
                let full_before = engine.full_scans();
                let out = f(engine).map_err(to_rpc);
                // A full scan's peak is freed by now but still mapped: give
                // it back, or the sidecar holds it while it runs.
                if engine.full_scans() != full_before {
                    crate::memory::release_free();
                }
                drop(state);
                self.wake_pusher();
                out
            }
            State::Failed(why) => Err(ErrorObjectOwned::owned(
                -32600,
                format!(
                    "no session is open: the last initialize failed ({why}); send initialize again"
                ),
                None::<()>,
            )),
            _ => Err(invalid("the sidecar is shutting down".into())),
        }
    }

    fn shutdown(&self) -> EmptyResult {
        let mut state = self.lock();
        // Dropping the engine releases the session lock; every append was
        // already fsynced.
        *state = State::Closed;
        drop(state);
        // What was recorded last goes to the remote before the sidecar exits.
        let pusher = self.pusher.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(p) = pusher {
            p.stop(PUSH_FLUSH);
        }
        self.shutdown.request();
        EmptyResult {}
    }
}

/// Whether a method only reads the session and the files, or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodAccess {
    Read,
    Write,
}

macro_rules! parse {
    (opt, $params:expr) => {
        parse_opt($params)
    };
    (req, $params:expr) => {
        parse_req($params)
    };
}

/// The one table of engine methods: the sidecar registers every one of
/// them (`module`), and front ends that hold their own engine (`rewind ui`)
/// call them by name through [`call`], with the same param and result
/// types, so no method has a second implementation.
macro_rules! engine_methods {
    ($($name:literal, $kind:ident $ty:ty, $access:ident, |$e:ident, $p:ident $(: $pty:ty)?| $body:expr;)*) => {
        fn register_engine_methods(
            m: &mut RpcModule<Sidecar>,
        ) -> Result<(), jsonrpsee::core::RegisterMethodError> {
            $(
                m.register_blocking_method($name, |params, ctx, _| {
                    let wire: $ty = parse!($kind, params.as_str())?;
                    ctx.with_engine(|$e| {
                        let $p $(: $pty)? = FromWire::from_wire(wire)?;
                        $body.map(ToWire::to_wire)
                    })
                })?;
            )*
            Ok(())
        }

        /// Whether `method` is an engine method, and whether it writes.
        pub fn access(method: &str) -> Option<MethodAccess> {
            match method {
                $( $name => Some(MethodAccess::$access), )*
                _ => None,
            }
        }

        /// Run the engine method `method` on `engine` with `params` (JSON
        /// text, or none), as the sidecar would; `None` for a method that
        /// is not an engine method.
        pub fn call(
            engine: &mut Engine,
            method: &str,
            params: Option<&str>,
        ) -> Option<Result<serde_json::Value, ErrorObjectOwned>> {
            match method {
                $(
                    $name => Some((|| {
                        let wire: $ty = parse!($kind, params)?;
                        let $e = engine;
                        let result = FromWire::from_wire(wire)
                            .and_then(|$p $(: $pty)?| $body.map(ToWire::to_wire))
                            .map_err(to_rpc)?;
                        serde_json::to_value(result).map_err(|err| {
                            ErrorObjectOwned::owned(codes::INTERNAL_ERROR, format!("serializing the result: {err}"), None::<()>)
                        })
                    })()),
                )*
                _ => None,
            }
        }
    };
}

engine_methods! {
    "snapshot", opt SnapshotParams, Write, |e, p| e.snapshot(p);
    "append_entry", opt AppendEntryParams, Write, |e, p| e.append_entry(p);
    "label", req LabelParams, Write, |e, p| e.label(p);
    "stage_files", req StageFilesParams, Write, |e, p| e.stage_files(p);
    "get_tree", opt NoParams, Read, |e, _p: ()| e.get_tree();
    "list_checkpoints", opt ListCheckpointsParams, Read, |e, p| e.list_checkpoints(p);
    "get_modified_files", opt RangeParams, Read, |e, p| e.get_modified_files(p);
    "get_file_diff", req FileDiffParams, Read, |e, p| e.get_file_diff(p);
    "get_file_history", req FileHistoryParams, Read, |e, p| e.get_file_history(p);
    "get_file_blame", req FileBlameParams, Read, |e, p| e.get_file_blame(p);
    "get_status", opt NoParams, Read, |e, _p: ()| e.get_status();
    "stats", opt NoParams, Read, |e, _p: ()| e.stats();
    "restore_files", opt RestoreFilesParams, Write, |e, p| e.restore_files(p);
    "navigate_tree", req NavigateTreeParams, Write, |e, p| e.navigate_tree(p);
    "revert", req RevertParams, Write, |e, p| e.revert(p);
    "undo", opt UndoParams, Write, |e, p| e.undo(p);
    "approve", opt ApproveParams, Write, |e, p| e.approve(p);
    "reset", opt ResetParams, Write, |e, p| e.reset(p);
    "gc", opt GcParams, Write, |e, p| e.gc(p);
    "verify", opt NoParams, Read, |e, _p: ()| e.verify();
}

/// Every method of docs/protocol.md.
pub fn module(server: Sidecar) -> Result<RpcModule<Sidecar>, jsonrpsee::core::RegisterMethodError> {
    let mut m = RpcModule::new(server);
    m.register_blocking_method("initialize", |params, ctx, _| {
        let p: InitializeParams = parse_opt(params.as_str())?;
        ctx.initialize(p).map_err(to_rpc)
    })?;
    m.register_blocking_method(
        "shutdown",
        |_params, ctx, _| -> Result<EmptyResult, ErrorObjectOwned> { Ok(ctx.shutdown()) },
    )?;
    register_engine_methods(&mut m)?;
    Ok(m)
}
