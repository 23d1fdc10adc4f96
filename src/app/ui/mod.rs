//! `rewind ui`: the project's sessions in a browser page served from the
//! binary (docs/ui.md). The server listens on 127.0.0.1 only; `guard`
//! checks every request before it is routed; `api` answers in the
//! protocol's own method names and types, opening the session per request
//! through `crate::app::project` (read-only without the lock; a write takes the
//! lock, like `rewind mcp`); `diff_views` serves the diff as a git patch
//! and a notebook by cell; `assets` is the page, embedded.

mod api;
mod assets;
mod diff_views;
mod events;
mod guard;
mod request;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rewind::store::Layout;

use crate::app::args::Location;

/// The command line of `rewind ui`.
pub struct Options {
    pub port: u16,
    pub open: bool,
    pub read_only: bool,
}

/// What every handler shares.
pub struct Ui {
    /// The project root and store, made absolute; `session` is the one
    /// `--session` named (default for the page), if any.
    pub at: Location,
    pub sessions_dir: PathBuf,
    pub read_only: bool,
    /// One write at a time from this server.
    pub write_turn: tokio::sync::Mutex<()>,
}

pub fn run(at: Location, options: Options) -> Result<()> {
    let (root, store) = crate::app::project::project_and_store(&at)?;
    let at = Location {
        cwd: Some(root.clone()),
        store: Some(store.clone()),
        session: at.session.map(|s| s.canonicalize().unwrap_or(s)),
    };
    let sessions_dir = Layout::new(&store).sessions_dir();
    if let Err(e) = crate::app::project::session_of(&at) {
        bail!(
            "{e} in {} (record one first: an agent with `rewind install`, `rewind serve`, `rewind run` or `rewind watch`)",
            store.display()
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port))
            .await
            .with_context(|| format!("listening on 127.0.0.1:{}", options.port))?;
        let port = listener.local_addr().context("the bound address")?.port();
        let secret: [u8; 32] = rand::random();
        let secret: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        let guard = Arc::new(guard::Guard {
            port,
            secret: secret.clone(),
        });
        let ui = Arc::new(Ui {
            at,
            sessions_dir,
            read_only: options.read_only,
            write_turn: tokio::sync::Mutex::new(()),
        });
        let url = format!("http://127.0.0.1:{port}/?token={secret}");
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{url}").context("printing the URL")?;
            out.flush().context("printing the URL")?;
        }
        eprintln!(
            "rewind ui: serving {} on http://127.0.0.1:{port}/{} (Ctrl-C stops)",
            root.display(),
            if options.read_only { " read-only" } else { "" }
        );
        if options.open {
            open_browser(&url, port);
        }
        let app = api::router(ui, guard.clone());
        // The guard wraps the router, so it runs before routing: a bad Host
        // or a missing secret is refused even for a path that does not
        // exist.
        let guarded = tower_layer::Layer::layer(
            &axum::middleware::from_fn_with_state(guard, guard::middleware),
            app,
        );
        axum::serve(
            listener,
            axum::ServiceExt::<axum::extract::Request>::into_make_service(guarded),
        )
        .await
        .context("serving HTTP")
    })
}

/// Open the page in the user's browser; a machine without one is fine
/// (the URL was printed), and is said in one line with what to do.
///
/// The secret never goes on another program's command line, where every
/// user of the machine can read it (`/proc/PID/cmdline`): the opener gets a
/// file only this user can read, in a directory only this user can enter,
/// that sends the browser on to the URL; it is removed a minute later.
fn open_browser(url: &str, port: u16) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let page = match launcher_page(url) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(%e, "could not write the page that opens the browser");
            no_browser(port);
            return;
        }
    };
    let spawned = std::process::Command::new(opener)
        .arg(&page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let dir = page.parent().map(std::path::Path::to_path_buf);
    let cleanup = move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        if let Some(dir) = dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    };
    match spawned {
        // Reap it without blocking the server; an opener that fails (no
        // browser, no display) is said.
        Ok(mut child) => {
            std::thread::spawn(move || {
                if !child.wait().is_ok_and(|s| s.success()) {
                    no_browser(port);
                }
                cleanup();
            });
        }
        Err(e) => {
            tracing::debug!(%e, opener, "could not start the opener");
            no_browser(port);
            std::thread::spawn(cleanup);
        }
    }
}

fn no_browser(port: u16) {
    eprintln!(
        "rewind ui: no browser could be opened here: open the URL above in one (on another \
         machine: `ssh -L {port}:127.0.0.1:{port} THIS-HOST`, then the URL there); --no-open \
         skips this, --port N keeps the port"
    );
}

/// `<temp>/rewind-ui-<random>/open.html` (directory 0700, file 0600),
/// which sends the browser on to `url`.
fn launcher_page(url: &str) -> std::io::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = std::env::temp_dir().join(format!("rewind-ui-{:016x}", rand::random::<u64>()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let page = dir.join("open.html");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&page)?;
    // The URL is ours (127.0.0.1, a port, hex): nothing in it needs escaping.
    writeln!(
        f,
        "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url={url}\"><title>rewind</title><a href=\"{url}\">rewind</a>"
    )?;
    Ok(page)
}
