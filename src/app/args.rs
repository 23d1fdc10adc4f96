//! The command line: every subcommand and its flags (clap). What each does
//! is in the area of `app` that owns it (docs/architecture.md "Layers").

use std::path::PathBuf;

use crate::app::hooks::agent::Agent;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "rewind",
    version,
    about = "Checkpoint and rollback sidecar for AI coding agents"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Args, Clone, Debug, Default)]
pub struct Location {
    /// Project root (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Store directory (default: $REWIND_HOME/projects/<hash of the root>).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Session: a file, or a session id (or its unique beginning) as
    /// `rewind sessions` shows it (serve: resume or create it; others: read
    /// it; default: the project's newest session).
    #[arg(long)]
    pub session: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the sidecar: newline-delimited JSON-RPC (or pi-style commands)
    /// on stdin/stdout; logs on stderr (RUST_LOG).
    Serve {
        #[command(flatten)]
        at: Location,
        /// Longest accepted input line, in bytes.
        #[arg(long, default_value_t = 64 * 1024 * 1024)]
        max_line_bytes: usize,
    },
    /// Serve the checkpoints as Model Context Protocol tools on
    /// stdin/stdout (for MCP clients: Claude Code, Codex, Gemini CLI, IDEs);
    /// logs on stderr. Restores and undos ask for a confirmation token.
    Mcp {
        #[command(flatten)]
        at: Location,
    },
    /// Browse the project's sessions in a web page served from this binary
    /// on 127.0.0.1: the timeline, diffs between any two points, file
    /// histories, and restores (plan first, then a confirmation). Prints
    /// the page's URL (with its secret) and opens the browser.
    Ui {
        #[command(flatten)]
        at: Location,
        /// The port to listen on (default: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Do not open a browser; only print the URL.
        #[arg(long)]
        no_open: bool,
        /// Refuse every write (restore, undo, navigate, label); the page
        /// hides them.
        #[arg(long)]
        read_only: bool,
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
    /// Diff two points (entry ids, turn numbers as `rewind log` shows them,
    /// tree hashes or @working), or one point and the working directory:
    /// `diff 1 2` is what turn 1 changed.
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
        /// Show notebooks (.ipynb) cell by cell, outputs in words (for
        /// reading: without it, the output is a patch `git apply` takes).
        #[arg(long, conflicts_with = "name_only")]
        cells: bool,
    },
    /// Restore files to a checkpoint (entry id or tree hash; default: the
    /// leaf, i.e. discard changes since the last checkpoint). Shows the plan
    /// first and asks before writing.
    Restore {
        #[command(flatten)]
        at: Location,
        /// An entry id, a turn number (the checkpoint the turn started from,
        /// as `rewind log` shows it) or a tree hash; with --before-step, a
        /// turn number.
        target: Option<String>,
        /// Only these files or directories.
        #[arg(long = "file", value_name = "PATH")]
        files: Vec<String>,
        /// Go back to just before this step (tool call) of the turn TARGET,
        /// counted as `rewind log` numbers them (1 = the first).
        #[arg(long, value_name = "N")]
        before_step: Option<usize>,
        /// Choose hunks: show each hunk of the diff from TARGET to the
        /// working directory and ask whether to take it back (y, n, a: this
        /// and the rest of the file, d: none of the rest, q: stop), as
        /// `git checkout -p` does. Answers are read from stdin.
        #[arg(long, short = 'p', conflicts_with_all = ["before_step", "conversation", "conversation_only"])]
        patch: bool,
        /// Also move git's HEAD and index back to the checkpoint's, through your git (in its reflog).
        /// Refused mid-merge or mid-rebase, or on another branch; without it, .git is never written.
        #[arg(long, conflicts_with = "patch", verbatim_doc_comment)]
        git: bool,
        #[command(flatten)]
        confirm: Confirm,
        #[command(flatten)]
        conversation: ConversationOpts,
    },
    /// Take the changes of one checkpoint (an entry id) or one agent turn
    /// (a turn number, as `rewind log` shows it) out of the working
    /// directory, keeping everything after it: a three-way merge per file.
    /// Shows the plan first and asks before writing; `rewind undo` reverts it.
    Revert {
        #[command(flatten)]
        at: Location,
        /// An entry id, or a turn number.
        entry: String,
        /// The last checkpoint of a range starting at ENTRY (an entry id).
        #[arg(long, value_name = "ENTRY")]
        to: Option<String>,
        /// Only these files or directories.
        #[arg(long = "file", value_name = "PATH")]
        files: Vec<String>,
        /// What to do when later changes overlap the reverted ones.
        #[arg(long, value_enum, default_value = "abort")]
        on_conflict: RevertConflictMode,
        /// Do not ask: write right after showing the plan.
        #[arg(long, short)]
        yes: bool,
    },
    /// Show which checkpoint (turn, label or prompt) introduced each line of
    /// a file, like `git blame`.
    Blame {
        #[command(flatten)]
        at: Location,
        file: String,
        /// An entry id or a turn number (default: the working directory).
        #[arg(long = "at", value_name = "ENTRY")]
        at_entry: Option<String>,
    },
    /// Revert the last restore, navigation, reset or undo (or the named
    /// unrevert-point); when an agent's turn came after the last of those,
    /// put back the state before that turn. Shows the plan first and asks
    /// before writing.
    Undo {
        #[command(flatten)]
        at: Location,
        entry: Option<String>,
        /// Also put git's HEAD and index back as the undone restore found them (through your git).
        /// Undoing a turn: as the turn found them. Without it, .git is never written.
        #[arg(long, verbatim_doc_comment)]
        git: bool,
        #[command(flatten)]
        confirm: Confirm,
        #[command(flatten)]
        conversation: ConversationOpts,
    },
    /// Prune old sessions and delete unreferenced objects from the store.
    Gc {
        #[command(flatten)]
        at: Location,
        /// Report what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Keep the newest N sessions (labelled, approved and open ones are
        /// always kept).
        #[arg(long)]
        keep_last: Option<u64>,
        /// Keep sessions younger than this many days.
        #[arg(long)]
        max_age_days: Option<f64>,
        /// Remove the oldest unprotected sessions while the store is larger.
        #[arg(long)]
        budget_bytes: Option<u64>,
        /// Unreferenced objects younger than this are kept. Live sidecars
        /// are safe at any value (they hold gc off while they record); the
        /// default leaves room for writers of older builds.
        #[arg(long, default_value_t = 3600)]
        grace_seconds: u64,
        /// Collect on this remote (a name or URL) instead of the local
        /// store: sessions by the same keep rules, and unreferenced packs
        /// in two runs a grace period apart (docs/remote.md).
        #[arg(long)]
        remote: Option<String>,
    },
    /// Read and hash everything in the store; report what is missing or
    /// damaged (exit 1), repair nothing.
    Verify {
        #[command(flatten)]
        at: Location,
    },
    /// Record one hook event of a coding agent (the JSON payload on stdin).
    /// Written into the agent's settings by `rewind install`; always exits
    /// 0 and prints nothing, so it never breaks the agent (failures are
    /// shown by `rewind status`).
    Hook {
        /// The agent, named as `rewind install --help` lists them (claude-code,
        /// codex, gemini, …). A string, not a choice: a name this build does
        /// not know is recorded as a failure (`rewind status`), never refused
        /// to the agent.
        #[arg(long)]
        agent: String,
        /// Run by rewind's Claude Code plugin or Gemini CLI extension: stand
        /// down for an event the agent's settings already hand to `rewind
        /// hook` (`rewind install`), so that it is recorded once.
        #[arg(long)]
        plugin: bool,
    },
    /// The project's hook server: `rewind hook` hands events to it, so they
    /// are recorded with the store warm and the watcher armed instead of a
    /// walk of the whole project per event. The first hook event starts
    /// it; it exits after 30 idle minutes. `REWIND_SERVER=0` turns it off.
    Server {
        #[command(subcommand)]
        action: ServerAction,
    },
    /// The project's store and newest session, what changed since its last
    /// checkpoint, and recent hook failures.
    Status {
        #[command(flatten)]
        at: Location,
    },
    /// Record a checkpoint of the project now, by hand, with a name and a
    /// note: it takes no turn number (the agent's turns are numbered as if
    /// it were not there) and is recorded even while automatic checkpoints
    /// are paused. At most 50 per session (`max_manual_per_session` under
    /// [checkpoints] in the store's config.toml); past that, label an
    /// existing checkpoint instead.
    Checkpoint {
        #[command(flatten)]
        at: Location,
        /// Its name (one line, at most 4096 bytes).
        name: Option<String>,
        /// A longer note (at most 4096 bytes; may span lines).
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Name or annotate a checkpoint: `rewind label ENTRY TEXT` sets its
    /// label and keeps its note, `--note TEXT` sets the note and keeps the
    /// label, `--clear` removes both. ENTRY is an id `rewind log` shows.
    Label {
        #[command(flatten)]
        at: Location,
        entry: String,
        /// The label (one line, at most 4096 bytes); empty removes it.
        #[arg(conflicts_with = "clear")]
        text: Option<String>,
        /// The note (at most 4096 bytes); empty removes it.
        #[arg(long, value_name = "TEXT", conflicts_with = "clear")]
        note: Option<String>,
        /// Remove the label and the note set on it (the name a checkpoint
        /// was taken with, if any, shows again).
        #[arg(long)]
        clear: bool,
    },
    /// Pause automatic checkpoints for this project: the agents' hooks, the
    /// hook server, `rewind watch` and `rewind mcp`'s resume record nothing
    /// until `rewind resume`. History, restores, `rewind checkpoint` and
    /// the page keep working.
    Pause {
        #[command(flatten)]
        at: Location,
    },
    /// Resume automatic checkpoints after `rewind pause`.
    Resume {
        #[command(flatten)]
        at: Location,
    },
    /// Print a session's checkpoints for a pull request or an audit: each
    /// with its label, note, kind, time, files changed and line counts, in
    /// order. Reads the session as it stands (no lock): safe while an agent
    /// records.
    Export {
        #[command(flatten)]
        at: Location,
        /// md (Markdown) or json (docs/protocol.md "Export").
        #[arg(long, value_enum, default_value = "md")]
        format: ExportFormat,
        /// Every branch, not only the path to the leaf.
        #[arg(long)]
        all: bool,
    },
    /// Record a command as one turn: a checkpoint before it (labelled with
    /// the command) and one after. For tools without hooks (a code
    /// generator, Aider, a script). Exits with the command's status.
    Run {
        #[command(flatten)]
        at: Location,
        /// The command and its arguments (after `--`).
        #[arg(trailing_var_arg = true, required = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Record a checkpoint each time a burst of writes in the project
    /// settles (for editors and agents without hooks). Runs until
    /// interrupted.
    Watch {
        #[command(flatten)]
        at: Location,
        /// How long the project must stay unchanged before a checkpoint.
        #[arg(long, default_value_t = 1000)]
        settle_ms: u64,
        /// Stop after this many seconds (for scripts and tests).
        #[arg(long, hide = true)]
        for_seconds: Option<f64>,
    },
    /// Make an agent run `rewind hook` at each step of its sessions: write
    /// the hooks into its settings (the user's, or with --project a
    /// project's), merged with what is there.
    Install {
        #[arg(value_enum)]
        agent: AgentChoice,
        /// Write the project's settings (DIR/.claude, DIR/.codex,
        /// DIR/.gemini) instead of the user's.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// The binary the hooks run (default: this one). Its file name must
        /// be `rewind`.
        #[arg(long, value_name = "PATH")]
        bin: Option<PathBuf>,
        /// Register `rewind mcp` as the agent's MCP server `rewind`
        /// instead of installing the hooks (Claude Code: ~/.claude.json or
        /// DIR/.mcp.json; Codex: config.toml, user only; Gemini CLI:
        /// settings.json; Droid: .factory/mcp.json; Copilot CLI:
        /// ~/.copilot/mcp-config.json or DIR/.github/mcp.json; Cline:
        /// ~/.cline/data/settings/cline_mcp_settings.json, user only).
        #[arg(long)]
        mcp: bool,
    },
    /// The store's remotes: object storage that sessions are pushed to and
    /// pulled from (docs/remote.md).
    Remote {
        #[command(subcommand)]
        action: RemoteAction,
    },
    /// Upload a session (default: the project's newest) to a remote: the
    /// objects the remote lacks, in packs, the session's new lines, and
    /// its manifest last. An interrupted push is resumed by the next one.
    Push {
        #[command(flatten)]
        at: Location,
        /// The remote: a name from `rewind remote list` or a URL (default:
        /// the only one configured).
        #[arg(long, env = "REWIND_REMOTE")]
        remote: Option<String>,
        /// Every session of the store.
        #[arg(long, conflicts_with = "session")]
        all: bool,
    },
    /// Download a session from a remote into the project's store, with
    /// every object its checkpoints need (each one verified); copies other
    /// stores pushed are merged in as branches. Touches no project file:
    /// restore from it with `rewind restore --session FILE`.
    Pull {
        #[command(flatten)]
        at: Location,
        /// The remote (as for push).
        #[arg(long, env = "REWIND_REMOTE")]
        remote: Option<String>,
        /// The session's id (`rewind sessions --remote NAME` lists them).
        session_id: String,
    },
    /// List sessions: the project's store's, or with --remote every
    /// session any store pushed there.
    Sessions {
        #[command(flatten)]
        at: Location,
        /// A remote's name or URL.
        #[arg(long)]
        remote: Option<String>,
    },
    /// Remove the hooks `rewind install` wrote, and the settings it turned
    /// on for them.
    Uninstall {
        #[arg(value_enum)]
        agent: AgentChoice,
        /// Edit the project's settings instead of the user's.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Remove the MCP server `rewind install --mcp` registered instead
        /// of the hooks.
        #[arg(long)]
        mcp: bool,
    },
}

/// `rewind export --format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Md,
    Json,
}

/// `rewind revert --on-conflict`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevertConflictMode {
    /// Write nothing if any file conflicts.
    Abort,
    /// Write the files that merge cleanly, leave the others.
    Skip,
    /// Write conflicting files with conflict markers.
    Markers,
}

#[derive(clap::Args, Clone, Debug)]
pub struct Confirm {
    /// What to do with files changed since the sidecar last recorded them.
    /// The default writes them: you see the plan first, the restore first
    /// records them in a pre-restore snapshot, and `rewind undo` brings them
    /// back.
    #[arg(long, value_enum, default_value = "overwrite")]
    pub on_conflict: ConflictMode,
    /// Do not ask: write right after showing the plan.
    #[arg(long, short)]
    pub yes: bool,
}

/// `rewind restore` and `rewind undo`: the agent's conversation too
/// (docs/agents.md "Restoring the conversation").
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ConversationOpts {
    /// Also fork the agent's conversation there: a new session with everything before that checkpoint, nothing after.
    ///
    /// The original is unchanged; prints the command that continues the fork (docs/agents.md).
    #[arg(long)]
    pub conversation: bool,
    /// Only fork the conversation; write no file of the project.
    #[arg(long, conflicts_with = "conversation")]
    pub conversation_only: bool,
    /// Run the command that continues the conversation (in the project directory).
    #[arg(long)]
    pub launch: bool,
    /// Print the result as JSON ({"conversation": {"agent", "sessionId",
    /// "resumeCommand"}, "restore": …}); needs --yes to write files.
    #[arg(long)]
    pub json: bool,
}

impl ConversationOpts {
    /// Whether the conversation is asked for.
    pub fn wanted(&self) -> bool {
        self.conversation || self.conversation_only
    }
}

/// Which agent `rewind install` / `rewind uninstall` is for: one of the
/// agents (their names are [`Agent`]'s own), or all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentChoice {
    One(Agent),
    /// install: every agent whose command is on PATH; uninstall: every
    /// agent.
    All,
}

/// Every choice, in [`Agent::ALL`]'s order, then `all`.
static AGENT_CHOICES: std::sync::LazyLock<Vec<AgentChoice>> = std::sync::LazyLock::new(|| {
    Agent::ALL
        .into_iter()
        .map(AgentChoice::One)
        .chain(std::iter::once(AgentChoice::All))
        .collect()
});

/// Written by hand so that the agents are listed once, in [`Agent`]: a
/// derive would need each of them again as a variant here.
impl clap::ValueEnum for AgentChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &AGENT_CHOICES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        match self {
            // The name alone: the agents' doc comments are for the code.
            AgentChoice::One(agent) => Some(clap::builder::PossibleValue::new(agent.name())),
            AgentChoice::All => Some(
                clap::builder::PossibleValue::new("all")
                    .help("install: every agent whose command is on PATH; uninstall: every agent"),
            ),
        }
    }
}

/// `rewind restore --on-conflict` and `rewind undo --on-conflict`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ConflictMode {
    /// Leave files changed outside the sidecar as they are.
    Skip,
    /// Write them too.
    Overwrite,
    /// Change nothing if any file conflicts.
    Abort,
}

/// `rewind remote …`.
#[derive(Subcommand)]
pub enum RemoteAction {
    /// Add a remote: `s3://bucket/prefix`, `gs://bucket/prefix`,
    /// `az://container/prefix` or `file:///directory`. Credentials come
    /// from the cloud's own environment (AWS_*, GOOGLE_*, AZURE_*), never
    /// from here.
    Add {
        #[command(flatten)]
        at: Location,
        name: String,
        url: String,
        /// The store's sidecars and hook servers push to it in the
        /// background after each checkpoint (REWIND_REMOTE does the same
        /// for the processes it is set for).
        #[arg(long)]
        auto_push: bool,
    },
    /// The store's remotes.
    List {
        #[command(flatten)]
        at: Location,
    },
    /// Forget a remote (nothing on it is deleted).
    Remove {
        #[command(flatten)]
        at: Location,
        name: String,
    },
}

/// `rewind server …`.
#[derive(Subcommand)]
pub enum ServerAction {
    /// Start the project's hook server in the background.
    Start {
        #[command(flatten)]
        at: Location,
    },
    /// Stop it (after the event it is recording).
    Stop {
        #[command(flatten)]
        at: Location,
    },
    /// What it runs: pid, version, uptime, sessions, watched directories,
    /// events served, full scans and why.
    Status {
        #[command(flatten)]
        at: Location,
    },
    /// Run it in the foreground (what `start` and the hooks run).
    #[command(hide = true)]
    Run {
        #[command(flatten)]
        at: Location,
        /// Exit after this many minutes without an event (default 30, or
        /// $REWIND_SERVER_IDLE_SECS).
        #[arg(long)]
        idle_minutes: Option<f64>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Each agent is chosen by the name it has everywhere else (`rewind hook
    /// --agent`, the store), and `all` by its own.
    #[test]
    fn an_agent_is_chosen_by_its_one_name() {
        for agent in Agent::ALL {
            assert_eq!(
                AgentChoice::from_str(agent.name(), false),
                Ok(AgentChoice::One(agent))
            );
            let hook_name = agent.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(hook_name.as_deref(), Some(agent.name()));
        }
        assert_eq!(AgentChoice::from_str("all", false), Ok(AgentChoice::All));
        assert!(AgentChoice::from_str("vim", false).is_err());
    }
}
