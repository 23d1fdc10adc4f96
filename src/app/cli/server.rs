//! `rewind server start|stop|status|run`: the project's hook server
//! (`app/hook_server`) from the terminal.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::app::args::{Location, ServerAction};
use crate::app::hook_server::{client, serve, Place};
use crate::app::project::project_and_store;

/// The idle time a server gets: `--idle-minutes`, else
/// `$REWIND_SERVER_IDLE_SECS`, else 30 minutes.
fn idle(minutes: Option<f64>) -> Result<Duration> {
    if let Some(m) = minutes {
        return Duration::try_from_secs_f64(m * 60.0).context("--idle-minutes");
    }
    match std::env::var("REWIND_SERVER_IDLE_SECS") {
        Ok(s) => Ok(Duration::from_secs(
            s.parse()
                .context("REWIND_SERVER_IDLE_SECS is not a number of seconds")?,
        )),
        Err(_) => Ok(serve::DEFAULT_IDLE),
    }
}

fn place(at: &Location) -> Result<Place> {
    let (root, store) = project_and_store(at)?;
    Ok(Place::new(root, store))
}

pub fn server(action: ServerAction) -> Result<()> {
    match action {
        ServerAction::Run { at, idle_minutes } => serve::run(place(&at)?, idle(idle_minutes)?),
        ServerAction::Start { at } => {
            let place = place(&at)?;
            if let Some(s) = client::status(&place)? {
                println!(
                    "a hook server already runs for {} (pid {})",
                    s.project, s.pid
                );
                return Ok(());
            }
            // Asked for by name: tried even while hooks leave a server that
            // could not start alone, and told how it went.
            match client::start_and_wait(&place, Duration::from_secs(10))? {
                client::Started::Listening => println!(
                    "started a hook server for {} (it exits after its idle time; `rewind server stop` stops it)",
                    place.project.display()
                ),
                client::Started::Slow => println!(
                    "started a hook server for {}; it is not listening yet (its log: {})",
                    place.project.display(),
                    place.log().display()
                ),
                client::Started::Exited => anyhow::bail!(
                    "{}",
                    client::why_none(&place)
                        .unwrap_or_else(|| "the hook server could not start".into())
                ),
            }
            Ok(())
        }
        ServerAction::Stop { at } => {
            let place = place(&at)?;
            if client::stop(&place)? {
                println!("stopped the hook server of {}", place.project.display());
            } else {
                println!("no hook server runs for {}", place.project.display());
            }
            Ok(())
        }
        ServerAction::Status { at } => {
            let place = place(&at)?;
            match client::status(&place)? {
                None => match client::why_none(&place) {
                    Some(why) => println!(
                        "no hook server runs for {}: {why}",
                        place.project.display()
                    ),
                    None => println!(
                        "no hook server runs for {} (the next hook event starts one; REWIND_SERVER=0 turns them off)",
                        place.project.display()
                    ),
                },
                Some(s) => {
                    println!("project  {}", s.project);
                    println!("store    {}", s.store);
                    println!("pid      {}", s.pid);
                    println!("version  {} ({})", s.version, s.build);
                    println!(
                        "uptime   {} s (exits after {} s without an event)",
                        s.uptime_secs, s.idle_exit_secs
                    );
                    println!(
                        "events   {} served, {} failed",
                        s.events_served, s.events_failed
                    );
                    println!("sessions {}", s.sessions.len());
                    for f in &s.sessions {
                        println!("  {f}");
                    }
                    match s.watched_dirs {
                        Some(n) => println!("watching {n} directories"),
                        None if s.watch_limit_reached => println!(
                            "watching nothing: the system's watch limit is reached (fs.inotify.max_user_watches); every event scans the whole project"
                        ),
                        None => println!("watching nothing yet (the first event arms the watcher)"),
                    }
                    let full: u64 = s.full_scans.iter().map(|(_, n)| n).sum();
                    println!("scans    {} ({} full)", s.scans, full);
                    for (why, n) in &s.full_scans {
                        println!("  full: {why}: {n}");
                    }
                }
            }
            Ok(())
        }
    }
}
