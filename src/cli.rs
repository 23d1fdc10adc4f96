//! Subcommands for people at a terminal.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::{frontend, Confirm, Location};
use rewind::engine::api::{
    FileDiffParams, GcParams, ListCheckpointsParams, OnConflict, Point, RangeParams,
    RestoreFilesParams, RestoreResult, Scope, UndoParams,
};
use rewind::engine::{default_store_dir, rewind_home, Engine, EngineConfig};
use rewind::install::{self, Agent, Plan};
use rewind::repo_path::RepoPath;
use rewind::server::handlers::{self, Defaults, Server};
use rewind::server::rpc::{self, ServeConfig, Shutdown};
use rewind::store::{Layout, ObjectId};

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

/// The canonical project root `at` names (default: the current directory)
/// and its store (`--store`, else the project's default store).
pub(crate) fn project_and_store(at: &Location) -> Result<(PathBuf, PathBuf)> {
    let cwd = absolute(at.cwd.clone().unwrap_or_else(|| PathBuf::from(".")))?;
    let root = cwd
        .canonicalize()
        .with_context(|| format!("project root {}", cwd.display()))?;
    let store = match &at.store {
        Some(s) => absolute(s.clone())?,
        None => default_store_dir(&root),
    };
    Ok((root, store))
}

/// Find the session a terminal command means: `--session`, else the newest
/// session file in the project's store.
pub(crate) fn locate(at: &Location) -> Result<EngineConfig> {
    let (root, store) = project_and_store(at)?;
    let session = match &at.session {
        Some(s) => absolute(s.clone())?,
        None => newest_session(&Layout::new(&store).sessions_dir())?,
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
    let listing = std::fs::read_dir(dir).with_context(|| {
        format!(
            "no sessions in {} (run `rewind serve` first, or pass --session)",
            dir.display()
        )
    })?;
    match newest_of(listing) {
        Some(p) => Ok(p),
        None => bail!(
            "no sessions in {} (run `rewind serve` first, or pass --session)",
            dir.display()
        ),
    }
}

/// The session file of `listing` modified last.
pub(crate) fn newest_of(listing: std::fs::ReadDir) -> Option<PathBuf> {
    listing
        .flatten()
        .filter(|e| Layout::is_session_file(&e.path()))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
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
    // Tool checkpoints numbered within their turn (`restore --before-step`).
    let mut steps: std::collections::HashMap<u64, usize> = Default::default();
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
        let tool = match &c.tool {
            Some(t) if c.kind == "tool" => {
                let step = steps.entry(c.turn_index).or_insert(0);
                *step += 1;
                format!(" step {step}: {t}")
            }
            Some(t) => format!(" {t}"),
            None => String::new(),
        };
        // Paths present but not captured (docs/architecture.md rule 14).
        let uncaptured = if c.not_captured > 0 {
            format!(" ?{}", c.not_captured)
        } else {
            String::new()
        };
        println!(
            "{indent}{marker} {} turn {:>3} {:<9} +{} ~{} -{}{uncaptured}  {}{tool}{label}{note}",
            c.entry_id, c.turn_index, c.kind, c.added, c.modified, c.deleted, c.timestamp
        );
    }
    Ok(())
}

pub fn diff(at: Location, from: Option<String>, to: Option<String>, name_only: bool) -> Result<()> {
    let mut engine = Engine::open_read_only(locate(&at)?)?;
    let RangeParams { from, to } = frontend::range(from, to);
    let files = engine.get_modified_files(RangeParams {
        from: from.clone(),
        to: to.clone(),
    })?;
    for f in &files.files {
        if name_only {
            println!("{}\t{}", f.status.letter(), f.path);
            continue;
        }
        let d = engine.get_file_diff(FileDiffParams {
            file_path: f.path.clone(),
            from: from.clone(),
            to: to.clone(),
            context_lines: None,
        })?;
        if let Some(d) = d {
            if d.is_binary {
                println!("Binary file {} differs", d.path);
            } else if d.is_too_large {
                println!("File {} is too large to diff", d.path);
            } else {
                print!("{}", d.unified_diff);
                // On stderr, so that stdout stays a patch that applies.
                if d.is_approximate {
                    eprintln!(
                        "rewind: the diff of {} is not minimal (too large to diff in time): \
                         changed stretches are shown removed and re-added whole",
                        d.path
                    );
                }
            }
        }
    }
    Ok(())
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ConflictMode {
    /// Leave files changed outside the sidecar as they are.
    Skip,
    /// Write them too.
    Overwrite,
    /// Change nothing if any file conflicts.
    Abort,
}

impl From<ConflictMode> for OnConflict {
    fn from(m: ConflictMode) -> OnConflict {
        match m {
            ConflictMode::Skip => OnConflict::Skip,
            ConflictMode::Overwrite => OnConflict::Overwrite,
            ConflictMode::Abort => OnConflict::Abort,
        }
    }
}

/// Open the session for writing (a running sidecar holding it refuses us).
pub(crate) fn open_for_writing(at: &Location) -> Result<Engine> {
    let config = locate(at)?;
    match Engine::open(config) {
        Ok((engine, _)) => Ok(engine),
        Err(e) if e.is_locked() => bail!(
            "{e}: a sidecar is running on this session; ask it (restore_files / undo) or stop it first"
        ),
        Err(e) => Err(e.into()),
    }
}

fn print_plan(r: &RestoreResult) {
    let note = |p: &RepoPath| {
        if r.dirty.contains(p) {
            "  (changed since the last checkpoint; undo brings it back)"
        } else {
            ""
        }
    };
    for p in &r.restored {
        println!("  write   {p}{}", note(p));
    }
    for p in &r.deleted {
        println!("  delete  {p}{}", note(p));
    }
    for c in &r.conflicts {
        println!("  keep    {} ({:?})", c.path, c.reason);
    }
    for u in &r.not_captured {
        println!(
            "  keep    {} (the checkpoint did not capture it: {})",
            u.path,
            u.reason.as_str()
        );
    }
    for w in &r.warnings {
        println!("warning: {w}");
    }
}

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

fn confirmed(plan: &RestoreResult, confirm: &Confirm) -> Result<bool> {
    if plan.restored.is_empty() && plan.deleted.is_empty() {
        println!("Nothing to change.");
        print_plan(plan);
        return Ok(false);
    }
    println!(
        "This will write {} file(s) and delete {} file(s):",
        plan.restored.len(),
        plan.deleted.len()
    );
    print_plan(plan);
    Ok(confirm.yes || ask("Proceed?")?)
}

/// Ask a yes/no question on the terminal; `false` without one (nothing
/// is written unless `--yes` says so).
pub(crate) fn ask(question: &str) -> Result<bool> {
    use std::io::{BufRead, IsTerminal, Write};
    if !std::io::stdin().is_terminal() {
        println!("Nothing written (no terminal to ask; pass --yes to proceed).");
        return Ok(false);
    }
    print!("{question} [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

pub(crate) fn print_done(r: &RestoreResult) {
    print_written(
        r.restored.len(),
        r.deleted.len(),
        r.unrevert_entry_id.as_deref(),
        &r.conflicts,
    );
}

/// What a restore or revert wrote, how to undo it, and what it kept.
pub(crate) fn print_written(
    restored: usize,
    deleted: usize,
    unrevert: Option<&str>,
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

pub fn restore(
    at: Location,
    target: Option<String>,
    files: Vec<String>,
    before_step: Option<usize>,
    confirm: Confirm,
) -> Result<()> {
    // The preview comes from a read-only view: nothing is appended until the
    // person says yes. With no target, "the last checkpoint" is the leaf as
    // the session stands now (opening it for writing records the edits
    // made since as an `outside` snapshot, which must not become the
    // target).
    let mut view = Engine::open_read_only(locate(&at)?)?;
    let target = match before_step {
        Some(step) => {
            let turn = target
                .as_deref()
                .and_then(|t| t.parse::<u64>().ok())
                .context("--before-step needs the turn number as TARGET")?;
            let id = before_step_of(&view, turn, step)?;
            println!("before step {step} of turn {turn}: checkpoint {id}");
            Some(id)
        }
        None => target,
    };
    let target = target.unwrap_or_else(|| leaf_of(&view));
    let (target_entry_id, tree_hash) =
        if target.len() == 32 && target.chars().all(|c| c.is_ascii_hexdigit()) {
            (None, Some(ObjectId::from_hex(&target)?))
        } else {
            (Some(target), None)
        };
    let files = repo_paths(&files)?;
    let params = |preview: bool| RestoreFilesParams {
        target_entry_id: target_entry_id.clone(),
        tree_hash,
        files: files.clone(),
        preview: Some(preview),
        on_conflict: Some(confirm.on_conflict.into()),
        hunks: None,
    };
    let plan = view.restore_files(params(true))?;
    if !confirmed(&plan, &confirm)? {
        return Ok(());
    }
    drop(view);
    let mut engine = open_for_writing(&at)?;
    print_done(&engine.restore_files(params(false))?);
    Ok(())
}

/// The session's leaf entry as it stands (empty for an empty session).
pub(crate) fn leaf_of(view: &Engine) -> String {
    view.log()
        .index()
        .leaf()
        .map(|e| e.id.clone())
        .unwrap_or_default()
}

/// The checkpoints on the path to the leaf, oldest first.
pub(crate) fn path_checkpoints(view: &Engine) -> Result<Vec<rewind::engine::api::CheckpointInfo>> {
    Ok(view
        .list_checkpoints(ListCheckpointsParams {
            scope: Some(Scope::Path),
            query: None,
        })?
        .checkpoints)
}

/// Kinds an agent's turn records (through hooks or a host).
const TURN_KINDS: [&str; 3] = ["message", "tool", "turn"];
/// Kinds of the unrevert-points `undo` reverts.
const ROLLBACK_KINDS: [&str; 5] = ["restore", "navigate", "undo", "reset", "revert"];

/// The checkpoint just before the `step`-th tool checkpoint of `turn` (as
/// `rewind log` numbers them).
fn before_step_of(view: &Engine, turn: u64, step: usize) -> Result<String> {
    let path = path_checkpoints(view)?;
    let steps: Vec<usize> = (0..path.len())
        .filter(|&i| path[i].turn_index == turn && path[i].kind == "tool")
        .collect();
    let Some(&i) = step.checked_sub(1).and_then(|k| steps.get(k)) else {
        bail!(
            "turn {turn} has {} step(s) on the current path (see `rewind log`)",
            steps.len()
        );
    };
    match i.checked_sub(1) {
        Some(before) => Ok(path[before].entry_id.clone()),
        None => bail!("step {step} of turn {turn} has no checkpoint before it"),
    }
}

/// When an agent's turn is newer than the last rollback: the checkpoint
/// the turn started from (its prompt's, else the last one before it).
fn before_last_turn(view: &Engine) -> Result<Option<(u64, String)>> {
    let path = path_checkpoints(view)?;
    let last_turn = path
        .iter()
        .rposition(|c| TURN_KINDS.contains(&c.kind.as_str()));
    let last_rollback = path
        .iter()
        .rposition(|c| ROLLBACK_KINDS.contains(&c.kind.as_str()));
    let Some(t) = last_turn.filter(|&t| last_rollback.is_none_or(|r| r < t)) else {
        return Ok(None);
    };
    let turn = path[t].turn_index;
    let first = path
        .iter()
        .position(|c| c.turn_index == turn && TURN_KINDS.contains(&c.kind.as_str()))
        .unwrap_or(t);
    let start = if path[first].kind == "message" {
        Some(first)
    } else {
        first.checked_sub(1)
    };
    Ok(start.map(|i| (turn, path[i].entry_id.clone())))
}

pub fn undo(at: Location, entry: Option<String>, confirm: Confirm) -> Result<()> {
    // Preview from a read-only view; the named (or latest) unrevert-point is
    // fixed before the session is opened for writing.
    let mut view = Engine::open_read_only(locate(&at)?)?;
    if entry.is_none() {
        if let Some((turn, id)) = before_last_turn(&view)? {
            println!("putting back the state before turn {turn} (checkpoint {id})");
            drop(view);
            return restore(at, Some(id), Vec::new(), None, confirm);
        }
    }

    let params = |preview: bool| UndoParams {
        entry_id: entry.clone(),
        on_conflict: Some(confirm.on_conflict.into()),
        preview: Some(preview),
    };
    let plan = view.undo(params(true))?;
    if !confirmed(&plan, &confirm)? {
        return Ok(());
    }
    drop(view);
    let mut engine = open_for_writing(&at)?;
    print_done(&engine.undo(params(false))?);
    Ok(())
}

/// The store `at` names (its default for the project when none is given),
/// which must exist.
fn existing_store(at: &Location, what: &str) -> Result<rewind::store::Store> {
    let (_, store_dir) = project_and_store(at)?;
    if !store_dir.exists() {
        bail!("no store at {} ({what})", store_dir.display());
    }
    Ok(rewind::store::Store::open(&store_dir, true)?)
}

/// `rewind verify`: exit 1 when anything is wrong.
pub fn verify(at: Location) -> Result<()> {
    let store = existing_store(&at, "nothing to verify")?;
    let r = rewind::verify::run(&store)?;
    for p in &r.problems {
        println!("{:?}: {} ({})", p.kind, p.subject, p.detail);
    }
    println!(
        "{} session(s), {} stat cache(s), {} object(s) read and hashed: {}",
        r.sessions,
        r.stat_caches,
        r.objects,
        if r.ok {
            "no problems".to_string()
        } else {
            format!("{} problem(s)", r.problems.len())
        }
    );
    if !r.ok {
        bail!("the store has problems (listed above)");
    }
    Ok(())
}

pub fn gc(at: Location, grace: std::time::Duration, params: GcParams) -> Result<()> {
    let store = existing_store(&at, "nothing to collect")?;
    let opts = rewind::gc::GcOptions {
        grace,
        ..Default::default()
    };
    let r = rewind::gc::run(&store, &params, &opts)?;
    let verb = if r.dry_run { "would remove" } else { "removed" };
    for s in &r.pruned_sessions {
        println!("session {verb}: {s}");
    }
    println!(
        "{} {} of {} object(s), {} of {} byte(s); {} session(s) pruned{}",
        if r.dry_run { "Would free" } else { "Freed" },
        r.objects_removed,
        r.objects_before,
        r.bytes_freed,
        r.bytes_before,
        r.sessions_pruned,
        if r.budget_met {
            ""
        } else {
            "; the budget was NOT met"
        }
    );
    Ok(())
}

/// Longest hook payload read; a longer one is a failure, never a hang.
const MAX_HOOK_PAYLOAD: u64 = 64 * 1024 * 1024;

/// `rewind hook --agent NAME`: never fails, prints nothing on stdout.
pub fn hook(agent: &str) {
    use std::io::Read;
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_HOOK_PAYLOAD)
        .read_to_end(&mut input);
    let agent = match agent {
        "claude-code" | "claude" => rewind::hooks::Agent::ClaudeCode,
        "codex" => rewind::hooks::Agent::Codex,
        "gemini" => rewind::hooks::Agent::Gemini,
        other => {
            tracing::warn!(
                agent = other,
                "rewind hook: unknown agent; event not recorded"
            );
            return;
        }
    };
    match read {
        Ok(_) => rewind::hooks::run(agent, &input),
        Err(err) => tracing::warn!(%err, "rewind hook: could not read the payload"),
    }
}

pub fn status(at: Location) -> Result<()> {
    let (root, store) = project_and_store(&at)?;
    let layout = Layout::new(&store);
    println!("project  {}", root.display());
    println!("store    {}", store.display());
    let agent_sessions = std::fs::read_dir(layout.hook_sessions_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0);
    if agent_sessions > 0 {
        println!("agents   {agent_sessions} agent session(s) recorded through hooks");
    }
    match locate(&at) {
        Ok(config) => {
            let mut engine = Engine::open_read_only(config)?;
            let list = engine.list_checkpoints(ListCheckpointsParams {
                scope: Some(Scope::Path),
                query: None,
            })?;
            println!(
                "session  {} ({} checkpoints)",
                engine.session_file().display(),
                list.checkpoints.len()
            );
            if let Some(last) = list.checkpoints.last() {
                let label = last
                    .label
                    .as_ref()
                    .map(|l| format!(" [{l}]"))
                    .unwrap_or_default();
                println!(
                    "latest   {} turn {} {} {}{label}",
                    last.entry_id, last.turn_index, last.kind, last.timestamp
                );
                let changed = engine.get_modified_files(RangeParams {
                    from: Some(Point::Entry(last.entry_id.clone())),
                    to: Some(Point::Working),
                })?;
                if changed.files.is_empty() {
                    println!("nothing changed since the latest checkpoint");
                } else {
                    println!("changed since the latest checkpoint:");
                    for f in &changed.files {
                        println!("  {:?}\t{}", f.status, f.path);
                    }
                }
            }
        }
        Err(err) => println!("session  none ({err:#})"),
    }
    let failures = rewind::hooks::failures::recent(&layout, &rewind_home(), &root, 10);
    if failures.is_empty() {
        println!("hooks    no failures recorded");
    } else {
        println!("hooks    {} recent failure(s):", failures.len());
        for f in failures {
            println!("  {} {} {}: {}", f.time, f.agent, f.event, f.error);
        }
    }
    Ok(())
}

/// Which agent `rewind install` / `rewind uninstall` is for.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum AgentChoice {
    ClaudeCode,
    Codex,
    Gemini,
    /// All three.
    All,
}

impl AgentChoice {
    fn agents(self) -> Vec<Agent> {
        match self {
            AgentChoice::ClaudeCode => vec![Agent::ClaudeCode],
            AgentChoice::Codex => vec![Agent::Codex],
            AgentChoice::Gemini => vec![Agent::Gemini],
            AgentChoice::All => Agent::ALL.to_vec(),
        }
    }
}

fn install_scope(project: Option<PathBuf>) -> install::Scope {
    project.map_or(install::Scope::User, install::Scope::Project)
}

/// The binary the hooks run: `--bin` (made absolute) or this one, with
/// symlinks resolved where it exists.
fn hook_binary(bin: Option<PathBuf>) -> Result<PathBuf> {
    let bin = match bin {
        Some(b) => absolute(b)?,
        None => std::env::current_exe().context("finding the running rewind binary")?,
    };
    let bin = bin.canonicalize().unwrap_or(bin);
    let name = bin.file_name().and_then(|n| n.to_str());
    if !matches!(name, Some("rewind" | "rewind.exe")) {
        bail!(
            "the hook binary {} must be named `rewind` (uninstall recognises the hooks by that name)",
            bin.display()
        );
    }
    Ok(bin)
}

pub fn install(agent: AgentChoice, project: Option<PathBuf>, bin: Option<PathBuf>) -> Result<()> {
    let bin = hook_binary(bin)?;
    let plan = install::plan_install(
        &agent.agents(),
        &install_scope(project),
        &bin,
        &install::Paths::from_env(),
    )?;
    plan.apply()?;
    print_install_plan(&plan, "already installed");
    let quoted = install::shell_quote(&bin.to_string_lossy());
    println!("The hooks run {quoted} hook --agent NAME at each step of a session; `rewind uninstall` removes them.");
    if plan
        .edits
        .iter()
        .any(|e| e.agent == Agent::Codex && e.changed())
    {
        println!(
            "Codex loads a project's .codex/hooks.json only in a trusted project and may ask you to review new hooks."
        );
    }
    println!(
        "To see checkpoints: `rewind log` in the project; `rewind diff` shows changes; \
         `rewind restore ENTRY` puts files back (preview first); `rewind undo` reverts a restore."
    );
    Ok(())
}

/// `rewind install AGENT --mcp`: register `rewind mcp` as the agent's MCP
/// server.
pub fn install_mcp(
    agent: AgentChoice,
    project: Option<PathBuf>,
    bin: Option<PathBuf>,
) -> Result<()> {
    let bin = hook_binary(bin)?;
    let plan = install::mcp::plan(
        &agent.agents(),
        &install_scope(project),
        Some(&bin),
        &install::Paths::from_env(),
    )?;
    plan.apply()?;
    print_install_plan(&plan, "already registered");
    let quoted = install::shell_quote(&bin.to_string_lossy());
    println!(
        "The agent starts {quoted} mcp in the project and sees its checkpoints as tools (docs/mcp.md); \
         `rewind uninstall AGENT --mcp` removes it. Restart the agent to load it."
    );
    Ok(())
}

pub fn uninstall(agent: AgentChoice, project: Option<PathBuf>, mcp: bool) -> Result<()> {
    let paths = install::Paths::from_env();
    let plan = if mcp {
        install::mcp::plan(&agent.agents(), &install_scope(project), None, &paths)?
    } else {
        install::plan_uninstall(&agent.agents(), &install_scope(project), &paths)?
    };
    plan.apply()?;
    print_install_plan(&plan, "nothing to remove");
    Ok(())
}

fn print_install_plan(plan: &Plan, unchanged: &str) {
    for e in &plan.edits {
        let what = if e.changes.is_empty() {
            unchanged.to_owned()
        } else if e.deletes() {
            format!(
                "{} (the file is empty now: removed it)",
                e.changes.join("; ")
            )
        } else {
            e.changes.join("; ")
        };
        println!("{}: {}: {what}", e.agent.name(), e.path.display());
    }
}
