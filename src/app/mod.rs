//! The `rewind` binary's front ends, in one place: the command line
//! (`args.rs`, dispatched here), the terminal commands (`cli/`), the agents'
//! hooks and their settings (`hooks/`, `install/`), the MCP server (`mcp/`)
//! and the web page (`ui/`). What they share sits beside them: finding and
//! opening a project's session (`project.rs`), how a plan reads
//! (`plan.rs`), the plan-then-confirm write of MCP and the page
//! (`two_step.rs`), points as people type them (`points.rs`) and the
//! project's checkpoint settings: pause, the manual cap (`settings.rs`). All of them
//! call the library's engine; none decides a rule itself
//! (docs/architecture.md "Layers").

use std::process::ExitCode;

use clap::Parser;

pub mod args;
pub mod cli;
pub mod conversation;
pub mod hook_server;
pub mod hooks;
pub mod install;
pub mod mcp;
pub mod plan;
pub mod points;
pub mod project;
pub mod settings;
pub mod two_step;
pub mod ui;
pub mod unprotected;

use args::{Args, Command};

/// Run the command line; the process's exit status.
pub fn main() -> ExitCode {
    rewind::memory::limit_malloc_arenas();
    // No colours, and every control character a field carries escaped: a
    // log line may quote a remote, a session file or a hook's payload.
    tracing_subscriber::fmt()
        .with_writer(|| rewind::printable::PrintableWriter(std::io::stderr()))
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,notify=error")),
        )
        .init();
    let args = Args::parse();
    let result = match args.command {
        Command::Serve { at, max_line_bytes } => cli::serve::serve(at, max_line_bytes),
        Command::Mcp { at } => mcp::run(at),
        Command::Ui {
            at,
            port,
            no_open,
            read_only,
        } => ui::run(
            at,
            ui::Options {
                port,
                open: !no_open,
                read_only,
            },
        ),
        Command::Schema => {
            print!("{}", rewind::sidecar::schema::protocol_schema_text());
            Ok(())
        }
        Command::Log { at, all } => cli::browse::log(at, all),
        Command::Diff {
            at,
            from,
            to,
            name_only,
            cells,
        } => cli::browse::diff(at, from, to, name_only, cells),
        Command::Restore {
            at,
            target,
            files,
            patch: true,
            ..
        } => cli::revert::restore_patch(at, target, files),
        Command::Restore {
            at,
            target,
            files,
            before_step,
            confirm,
            patch: false,
            conversation,
            git,
        } => cli::rollback::restore(at, target, files, before_step, git, confirm, conversation),
        Command::Revert {
            at,
            entry,
            to,
            files,
            on_conflict,
            yes,
        } => cli::revert::revert(at, entry, to, files, on_conflict, yes),
        Command::Blame { at, file, at_entry } => cli::revert::blame(at, file, at_entry),
        Command::Undo {
            at,
            entry,
            git,
            confirm,
            conversation,
        } => cli::rollback::undo(at, entry, git, confirm, conversation),
        Command::Gc {
            at,
            dry_run,
            keep_last,
            max_age_days,
            budget_bytes,
            grace_seconds,
            remote,
        } => {
            let grace = std::time::Duration::from_secs(grace_seconds);
            match remote {
                Some(remote) => cli::maintenance::gc_remote(
                    at,
                    &remote,
                    rewind::remote::gc::RemoteGcParams {
                        keep_last,
                        max_age_days,
                        grace,
                        dry_run,
                    },
                    budget_bytes,
                ),
                None => cli::maintenance::gc(
                    at,
                    grace,
                    rewind::engine::api::GcParams {
                        dry_run: Some(dry_run),
                        keep_last,
                        max_age_days,
                        budget_bytes,
                    },
                ),
            }
        }
        Command::Verify { at } => cli::maintenance::verify(at),
        Command::Hook { agent, plugin } => {
            cli::agents::hook(&agent, plugin);
            Ok(())
        }
        Command::Status { at } => cli::browse::status(at),
        Command::Checkpoint { at, name, note } => cli::checkpoints::checkpoint(at, name, note),
        Command::Label {
            at,
            entry,
            text,
            note,
            clear,
        } => cli::checkpoints::label(at, entry, text, note, clear),
        Command::Pause { at } => cli::checkpoints::pause(at),
        Command::Resume { at } => cli::checkpoints::resume(at),
        Command::Export { at, format, all } => cli::export::export(at, format, all),
        Command::Server { action } => cli::server::server(action),
        Command::Run { at, command } => match cli::unhooked::run(at, command) {
            Ok(code) => return ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => Err(e),
        },
        Command::Watch {
            at,
            settle_ms,
            for_seconds,
        } => cli::unhooked::watch(
            at,
            std::time::Duration::from_millis(settle_ms),
            for_seconds.map(std::time::Duration::from_secs_f64),
        ),
        Command::Install {
            agent,
            project,
            bin,
            mcp: false,
        } => cli::agents::install(agent, project, bin),
        Command::Install {
            agent,
            project,
            bin,
            mcp: true,
        } => cli::agents::install_mcp(agent, project, bin),
        Command::Remote { action } => cli::remote::remote(action),
        Command::Push { at, remote, all } => cli::remote::push(at, remote, all),
        Command::Pull {
            at,
            remote,
            session_id,
        } => cli::remote::pull(at, remote, session_id),
        Command::Sessions { at, remote } => cli::remote::sessions(at, remote),
        Command::Uninstall {
            agent,
            project,
            mcp,
        } => cli::agents::uninstall(agent, project, mcp),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is::<cli::rollback::ConversationRefused>() => {
            // The files were restored (or not asked for); the conversation
            // part was refused: its own status.
            eprintln!("rewind: {}", rewind::printable::printable(&err.to_string()));
            ExitCode::from(cli::rollback::CONVERSATION_REFUSED)
        }
        Err(err) => {
            // An error may quote what a remote or a session file said.
            eprintln!(
                "rewind: {}",
                rewind::printable::printable(&format!("{err:#}"))
            );
            ExitCode::FAILURE
        }
    }
}
