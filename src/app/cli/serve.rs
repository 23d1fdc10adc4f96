//! `rewind serve`: the sidecar on stdin/stdout (the JSON-RPC edge is the
//! library's `server`).

use anyhow::{Context, Result};
use rewind::sidecar::handlers::{self, Defaults, Sidecar};
use rewind::sidecar::rpc::{self, ServeConfig, Shutdown};

use crate::app::args::Location;
use crate::app::project::absolute;

pub fn serve(at: Location, max_line_bytes: usize) -> Result<()> {
    let defaults = Defaults {
        cwd: at.cwd.map(absolute).transpose()?,
        session_file: at.session.map(absolute).transpose()?,
        store_dir: at.store.map(absolute).transpose()?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let (notifier, outbox) = rpc::notifier_channel();
        let shutdown = Shutdown::new();
        let server = Sidecar::new(defaults, notifier, shutdown.clone());
        let module = handlers::module(server).context("building the method table")?;
        rpc::serve(
            tokio::io::stdin(),
            tokio::io::stdout(),
            module.into(),
            outbox,
            shutdown,
            ServeConfig { max_line_bytes },
        )
        .await
        .context("serving stdin/stdout")
    })?;
    // Blocking handlers may still hold the runtime; we are done.
    runtime.shutdown_background();
    Ok(())
}
