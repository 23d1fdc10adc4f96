//! Subcommands for people at a terminal, by area: browsing history
//! (`browse.rs`), a person's checkpoints, labels and pause
//! (`checkpoints.rs`), a session for a PR or an audit (`export.rs`), putting files back (`rollback.rs`, `revert.rs`), the
//! agents' hooks and settings (`agents.rs`), recording without hooks
//! (`unhooked.rs`), the store's upkeep (`maintenance.rs`), remotes (`remote.rs`), the sidecar
//! itself (`serve.rs`) and the hook server (`server.rs`). What they share: asking at the terminal, paths as
//! typed, and how a write reports what it did.

use anyhow::Result;
use rewind::repo_path::RepoPath;

pub mod agents;
pub mod browse;
pub mod checkpoints;
pub mod export;
pub mod maintenance;
pub mod remote;
pub mod revert;
pub mod rollback;
pub mod serve;
pub mod server;
pub mod unhooked;

/// Show the plan and ask; `false` when nothing should be written.
/// Paths named on the command line, as the engine takes them; `None` for
/// none (every file).
pub(crate) fn repo_paths(files: &[String]) -> Result<Option<Vec<RepoPath>>> {
    if files.is_empty() {
        return Ok(None);
    }
    let paths = files
        .iter()
        .map(|f| RepoPath::parse(f))
        .collect::<Result<_, _>>()?;
    Ok(Some(paths))
}

/// Ask a yes/no question on the terminal; `false` without one (nothing
/// is written unless `--yes` says so).
pub(crate) fn ask(question: &str) -> Result<bool> {
    use std::io::{BufRead, IsTerminal, Write};
    // Refused, not declined: a script that forgot --yes must see a failure,
    // not an exit status that says the restore happened.
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("nothing written: there is no terminal to ask (pass --yes to proceed)");
    }
    print!("{question} [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// What a restore or revert wrote, how to undo it, and what it kept.
pub(crate) fn print_written(
    restored: usize,
    deleted: usize,
    unrevert: Option<&rewind::session::EntryId>,
    kept: &[rewind::engine::api::Conflict],
) {
    println!(
        "Wrote {restored} file(s), deleted {deleted} file(s){}.",
        unrevert
            .map(|id| format!("; `rewind undo` reverts it (unrevert-point {id})"))
            .unwrap_or_default()
    );
    for c in kept {
        println!("  kept    {} ({:?})", c.path, c.reason);
    }
}
