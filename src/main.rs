//! The `rewind` binary: `rewind serve` is the sidecar; the other
//! subcommands are for people at a terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "rewind",
    version,
    about = "Checkpoint and rollback sidecar for AI coding agents"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone, Debug, Default)]
pub struct Location {
    /// Project root (default: the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Store directory (default: $REWIND_HOME/projects/<hash of the root>).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Session file (serve: resume or create it; log/diff: read it;
    /// default for log/diff: the project's newest session).
    #[arg(long)]
    session: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the sidecar: newline-delimited JSON-RPC (or pi-style commands)
    /// on stdin/stdout; logs on stderr (RUST_LOG).
    Serve {
        #[command(flatten)]
        at: Location,
        /// Longest accepted input line, in bytes.
        #[arg(long, default_value_t = 64 * 1024 * 1024)]
        max_line_bytes: usize,
    },
    /// Print the protocol's JSON Schema.
    Schema,
    /// Show a session's checkpoints as a tree, with labels.
    Log {
        #[command(flatten)]
        at: Location,
        /// Every branch, not only the path to the leaf.
        #[arg(long)]
        all: bool,
    },
    /// Diff two points (entry ids, tree hashes or @working), or one point
    /// and the working directory.
    Diff {
        #[command(flatten)]
        at: Location,
        /// Default: the baseline.
        from: Option<String>,
        /// Default: @working.
        to: Option<String>,
        /// Only list the changed files.
        #[arg(long)]
        name_only: bool,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let args = Args::parse();
    let result = match args.command {
        Command::Serve { at, max_line_bytes } => cli::serve(at, max_line_bytes),
        Command::Schema => {
            print!("{}", rewind::schema::protocol_schema_text());
            Ok(())
        }
        Command::Log { at, all } => cli::log(at, all),
        Command::Diff {
            at,
            from,
            to,
            name_only,
        } => cli::diff(at, from, to, name_only),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rewind: {err:#}");
            ExitCode::FAILURE
        }
    }
}
