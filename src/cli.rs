//! Subcommands for people at a terminal.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::Location;
use rewind::engine::{default_store_dir, Engine, EngineConfig};
use rewind::handlers::{self, Defaults, Server};
use rewind::protocol::{FileDiffParams, ListCheckpointsParams, RangeParams, Scope};
use rewind::rpc::{self, ServeConfig, Shutdown};

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
        let server = Server::new(defaults, notifier, shutdown.clone());
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

fn absolute(p: PathBuf) -> Result<PathBuf> {
    if p.is_absolute() {
        Ok(p)
    } else {
        Ok(std::env::current_dir()
            .context("reading the current directory")?
            .join(p))
    }
}

/// Find the session a terminal command means: `--session`, else the newest
/// session file in the project's store.
fn locate(at: &Location) -> Result<EngineConfig> {
    let cwd = absolute(at.cwd.clone().unwrap_or_else(|| PathBuf::from(".")))?;
    let root = cwd
        .canonicalize()
        .with_context(|| format!("project root {}", cwd.display()))?;
    let store = match &at.store {
        Some(s) => absolute(s.clone())?,
        None => default_store_dir(&root),
    };
    let session = match &at.session {
        Some(s) => absolute(s.clone())?,
        None => newest_session(&store.join("sessions"))?,
    };
    Ok(EngineConfig {
        cwd: Some(root),
        session_file: Some(session),
        store_dir: Some(store),
        fsync: true,
        ..Default::default()
    })
}

fn newest_session(dir: &Path) -> Result<PathBuf> {
    let mut sessions: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| {
            format!(
                "no sessions in {} (run `rewind serve` first, or pass --session)",
                dir.display()
            )
        })?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    sessions.sort();
    match sessions.pop() {
        Some((_, p)) => Ok(p),
        None => bail!(
            "no sessions in {} (run `rewind serve` first, or pass --session)",
            dir.display()
        ),
    }
}

pub fn log(at: Location, all: bool) -> Result<()> {
    let engine = Engine::open_read_only(locate(&at)?)?;
    let list = engine.list_checkpoints(ListCheckpointsParams {
        scope: Some(if all { Scope::All } else { Scope::Path }),
        query: None,
    })?;
    let tree = engine.get_tree()?;
    println!("session {}", engine.session_file().display());
    let depth_of = |id: &str| -> usize {
        // Depth in the tree of tree-recording entries, for indentation.
        let mut d = 0;
        let mut cur = tree
            .entries
            .iter()
            .find(|e| e.id == id)
            .and_then(|e| e.parent_id.clone());
        while let Some(p) = cur {
            if list.checkpoints.iter().any(|c| c.entry_id == p) {
                d += 1;
            }
            cur = tree
                .entries
                .iter()
                .find(|e| e.id == p)
                .and_then(|e| e.parent_id.clone());
        }
        d
    };
    for c in &list.checkpoints {
        let indent = if all {
            "  ".repeat(depth_of(&c.entry_id))
        } else {
            String::new()
        };
        // `*` marks the checkpoints on the path to the leaf.
        let marker = if c.on_current_path { "*" } else { " " };
        let label = c
            .label
            .as_ref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        let note = c
            .note
            .as_ref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default();
        println!(
            "{indent}{marker} {} turn {:>3} {:<9} +{} ~{} -{}  {}{label}{note}",
            c.entry_id, c.turn_index, c.kind, c.added, c.modified, c.deleted, c.timestamp
        );
    }
    Ok(())
}

pub fn diff(at: Location, from: Option<String>, to: Option<String>, name_only: bool) -> Result<()> {
    let mut engine = Engine::open_read_only(locate(&at)?)?;
    let point = |s: Option<String>| -> (Option<String>, Option<String>) {
        match s {
            Some(s) if s.len() == 32 && s.chars().all(|c| c.is_ascii_hexdigit()) => (None, Some(s)),
            Some(s) => (Some(s), None),
            None => (None, None),
        }
    };
    let (from_entry, from_hash) = point(from);
    let (to_entry, to_hash) = match to {
        None => (Some("@working".to_string()), None),
        t => point(t),
    };
    let files = engine.get_modified_files(RangeParams {
        from_entry_id: from_entry.clone(),
        to_entry_id: to_entry.clone(),
        from_hash: from_hash.clone(),
        to_hash: to_hash.clone(),
    })?;
    for f in &files.files {
        if name_only {
            let s = match f.status {
                rewind::protocol::FileStatus::Added => "A",
                rewind::protocol::FileStatus::Modified => "M",
                rewind::protocol::FileStatus::Deleted => "D",
            };
            println!("{s}\t{}", f.path);
            continue;
        }
        let d = engine.get_file_diff(FileDiffParams {
            file_path: f.path.clone(),
            from_entry_id: from_entry.clone(),
            to_entry_id: to_entry.clone(),
            from_hash: from_hash.clone(),
            to_hash: to_hash.clone(),
            context_lines: None,
        })?;
        if let Some(d) = d {
            if d.is_binary {
                println!("Binary file {} differs", d.path);
            } else if d.is_too_large {
                println!("File {} is too large to diff", d.path);
            } else {
                print!("{}", d.unified_diff);
            }
        }
    }
    Ok(())
}
