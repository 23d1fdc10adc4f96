//! Remotes at the terminal: `rewind remote`, `push`, `pull` and
//! `sessions` (docs/remote.md). The remote's rules are `rewind::remote`'s.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use rewind::printable::printable;
use rewind::remote::{self, Remote};
use rewind::session::SessionLog;
use rewind::store::{Layout, Store};

use crate::app::args::{Location, RemoteAction};
use crate::app::project::{locate, project_and_store};

fn store_layout(at: &Location) -> Result<Layout> {
    let (_, store) = project_and_store(at)?;
    Ok(Layout::new(&store))
}

pub fn remote(action: RemoteAction) -> Result<()> {
    match action {
        RemoteAction::Add {
            at,
            name,
            url,
            auto_push,
        } => {
            let layout = store_layout(&at)?;
            std::fs::create_dir_all(layout.root())
                .with_context(|| format!("creating {}", layout.root().display()))?;
            let spec = remote::config::add(&layout, &name, &url, auto_push)?;
            println!(
                "remote {} added: {}{}",
                spec.name,
                spec.url,
                if spec.auto_push {
                    " (sidecars and hook servers push to it as they record)"
                } else {
                    ""
                }
            );
        }
        RemoteAction::List { at } => {
            let layout = store_layout(&at)?;
            for r in remote::config::list(&layout)? {
                println!(
                    "{}\t{}{}",
                    r.name,
                    r.url,
                    if r.auto_push { "\tauto-push" } else { "" }
                );
            }
        }
        RemoteAction::Remove { at, name } => {
            remote::config::remove(&store_layout(&at)?, &name)?;
            println!("remote {name} removed (nothing on it was deleted)");
        }
    }
    Ok(())
}

/// The session files a push means: `--all` of them, else `--session`,
/// else the newest.
fn sessions_to_push(at: &Location, layout: &Layout, all: bool) -> Result<Vec<PathBuf>> {
    if !all {
        return Ok(vec![locate(at)?
            .session_file
            .context("the project has no session")?]);
    }
    let dir = layout.sessions_dir();
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| Layout::is_session_file(p))
        .collect();
    out.sort();
    Ok(out)
}

pub fn push(at: Location, which: Option<String>, all: bool) -> Result<()> {
    let layout = store_layout(&at)?;
    if !layout.version_file().is_file() {
        bail!("no store at {} (nothing to push)", layout.root().display());
    }
    let store = Store::open(layout.root(), true)?;
    let remote = Remote::open(&layout, which.as_deref())?;
    for file in sessions_to_push(&at, &layout, all)? {
        let r = remote::push_session(&store, &remote, &file, remote::PushCheck::Remote)
            .with_context(|| format!("pushing {}", file.display()))?;
        if r.chunks_resent > 0 || r.manifest_resent {
            println!(
                "session {}: {} had lost {} chunk(s){} of it (removed by a remote gc?): sent again",
                r.session_id,
                remote.spec.name,
                r.chunks_resent,
                if r.manifest_resent {
                    " and its manifest"
                } else {
                    ""
                }
            );
        }
        if r.up_to_date {
            println!(
                "session {}: {} is up to date",
                r.session_id, remote.spec.name
            );
        } else {
            println!(
                "session {}: pushed to {}: {} object(s) in {} pack(s) ({} bytes), {} bytes of log; {} request(s), {} bytes sent",
                r.session_id,
                remote.spec.name,
                r.objects,
                r.packs,
                r.packed_bytes,
                r.log_bytes,
                r.requests,
                r.bytes_up
            );
        }
    }
    Ok(())
}

pub fn pull(at: Location, which: Option<String>, session_id: String) -> Result<()> {
    let layout = store_layout(&at)?;
    let store = Store::open(layout.root(), true)?;
    let remote = Remote::open(&layout, which.as_deref())?;
    let session_id = remote::requested_session(&remote, &session_id)?;
    let r = remote::pull_session(&store, &remote, &session_id)?;
    println!(
        "session {}: {} {} from {} ({} object(s) from {} pack(s); {} request(s), {} bytes received){}",
        r.session_id,
        if r.created { "pulled into" } else { "updated in" },
        r.session_file.display(),
        remote.spec.name,
        r.objects,
        r.packs,
        r.requests,
        r.bytes_down,
        if r.entries_added > 0 {
            format!("; {} entries of other machines' branches added", r.entries_added)
        } else {
            String::new()
        }
    );
    // Pulled into this project's store: its commands, run here (or with
    // this --cwd), find it by id; a restore writes into this project.
    let (root, _) = crate::app::project::project_and_store(&at)?;
    println!(
        "see it with `rewind log --session {0}`; `rewind restore --session {0} ENTRY` puts files back into {1}",
        r.session_id,
        root.display()
    );
    Ok(())
}

pub fn sessions(at: Location, which: Option<String>) -> Result<()> {
    let layout = store_layout(&at)?;
    let Some(which) = which else {
        let dir = layout.sessions_dir();
        let Ok(listing) = std::fs::read_dir(&dir) else {
            println!("no sessions in {}", dir.display());
            return Ok(());
        };
        let mut files: Vec<PathBuf> = listing
            .flatten()
            .map(|e| e.path())
            .filter(|p| Layout::is_session_file(p))
            .collect();
        files.sort();
        for f in files {
            match SessionLog::open_read_only(&f) {
                Ok(log) => println!(
                    "{}\t{} entries\t{}\t{}{}",
                    printable(&log.header().id),
                    log.index().len(),
                    printable(&log.header().timestamp),
                    f.display(),
                    if layout.is_pulled(&f) { "\tpulled" } else { "" }
                ),
                Err(err) => println!("?\tunreadable ({err})\t{}", f.display()),
            }
        }
        return Ok(());
    };
    let remote = Remote::open(&layout, Some(&which))?;
    let copies = remote::list_sessions(&remote)?;
    if copies.is_empty() {
        println!("no sessions on {}", remote.spec.url);
    }
    for c in copies {
        println!(
            "{}\t{} entries\t{}\twriter {}{}\t{}",
            c.session_id,
            c.entries,
            c.updated,
            c.writer,
            if c.ours { " (this store)" } else { "" },
            c.cwd
        );
    }
    Ok(())
}
