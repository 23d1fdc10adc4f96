//! One agent hook event that takes a full snapshot (a `PreToolUse` before a
//! shell tool), run exactly as an agent runs it — a new `rewind hook`
//! process with the payload on stdin — against `git status` on the same
//! tree, with no change and with three files changed, twice: every hook on
//! its own (`REWIND_SERVER=0`) and through the project's hook server (the
//! default). Also the first hook of a project (the cold baseline) against a
//! shadow-git `add -A && commit`, and with the server how long that first
//! `SessionStart` takes to return and the server's resident memory.
//!
//! `cargo bench --bench hooks` (release build). `REWIND_BENCH_SIZES`
//! (default `3000,20000,100000`) and `REWIND_BENCH_RUNS` (default 9)
//! scale it, `REWIND_BENCH_MODES=server|one-shot` runs one mode,
//! `REWIND_BENCH_REPOS=PATH[,PATH]` adds checkouts of real repositories
//! (cloned from PATH; `REWIND_BENCH_SIZES=` alone measures only those),
//! `REWIND_BENCH_KEEP=1` keeps each tree and its store; `cargo test
//! --benches` runs a small smoke version.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

#[path = "common/corpus.rs"]
mod corpus;
#[path = "common/measure.rs"]
mod measure;
use measure::{median_of, ms};

fn git(dir: &Path, git_dir: Option<&Path>, args: &[&str]) -> Result<Output> {
    let mut c = Command::new("git");
    c.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .current_dir(dir);
    if let Some(g) = git_dir {
        c.env("GIT_DIR", g).env("GIT_WORK_TREE", dir);
    }
    let out = c.args(args).output().context("running git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(out)
}

/// The payload of a Claude Code hook event in the project at `root`.
fn payload(root: &Path, event: &str, extra: &str) -> Result<String> {
    Ok(format!(
        r#"{{"session_id":"bench","cwd":{},"hook_event_name":"{event}"{extra}}}"#,
        serde_json::to_string(&root.to_string_lossy())?
    ))
}

/// A `rewind hook` process as the agent starts it, `payload` written to its
/// stdin (closed), its stdout piped.
fn start_hook(home: &Path, root: &Path, payload: &str, server: bool) -> Result<Child> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rewind"));
    command
        .args(["hook", "--agent", "claude-code"])
        .env("REWIND_HOME", home)
        .env("REWIND_SERVER", if server { "1" } else { "0" })
        .env("REWIND_SERVER_IDLE_SECS", "600")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if server {
        // The server (started by a hook, with its environment) logs where
        // each event's time went; the hooks themselves log nothing more.
        command.env("RUST_LOG", "warn,notify=error,rewind::timing=debug");
    }
    let mut child = command.spawn()?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(payload.as_bytes())?;
    Ok(child)
}

/// One `rewind hook` process as the agent runs it; its wall time.
fn hook(home: &Path, root: &Path, event: &str, extra: &str, server: bool) -> Result<Duration> {
    let payload = payload(root, event, extra)?;
    let start = Instant::now();
    let out = start_hook(home, root, &payload, server)?.wait_with_output()?;
    let took = start.elapsed();
    if !out.status.success() || !out.stdout.is_empty() {
        bail!("rewind hook failed");
    }
    Ok(took)
}

/// `n` `PreToolUse` hooks started at once (parallel tool calls of one
/// session); each one's wall time.
fn burst(home: &Path, root: &Path, n: usize, server: bool) -> Result<Vec<Duration>> {
    burst_of(home, root, n, server, SHELL_TOOL)
}

/// `n` hooks of `tool` started at once; each one's wall time.
fn burst_of(home: &Path, root: &Path, n: usize, server: bool, tool: &str) -> Result<Vec<Duration>> {
    let payload = payload(root, "PreToolUse", tool)?;
    let mut running = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        running.push((start, start_hook(home, root, &payload, server)?));
    }
    running
        .into_iter()
        .map(|(start, child)| {
            let out = child.wait_with_output()?;
            if !out.status.success() {
                bail!("rewind hook failed");
            }
            Ok(start.elapsed())
        })
        .collect()
}

const SHELL_TOOL: &str = r#","tool_name":"Bash","tool_input":{"command":"make"}"#;

/// A read-only tool: the hook process parses the event and exits, with no
/// store, server or engine. Eight of these at once against one alone is
/// what eight process starts on this machine's cores cost by themselves:
/// the floor under the "8 at once" ratio.
const READ_TOOL: &str = r#","tool_name":"Read","tool_input":{"file_path":"README.md"}"#;

fn timed(f: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

/// `rewind server status|stop` in the project.
fn server_cmd(home: &Path, root: &Path, action: &str) -> Result<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_rewind"))
        .args(["server", action])
        .env("REWIND_HOME", home)
        .current_dir(root)
        .output()?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The server's resident memory in MB (10^6 bytes, as the target is
/// stated; from `/proc`, which counts in KiB).
fn server_rss_mb(home: &Path, root: &Path) -> Result<f64> {
    let status = server_cmd(home, root, "status")?;
    let pid = status
        .lines()
        .find_map(|l| l.strip_prefix("pid"))
        .map(str::trim)
        .context("no server")?;
    let proc_status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb: f64 = proc_status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .context("VmRSS")?;
    Ok(kb * 1024.0 / 1e6)
}

/// Where the server's time went in the events that changed a few files,
/// from its log (`rewind::timing`): medians in µs of the server's whole
/// part of an event and of the snapshot's scan, diff, sync and log.
struct Breakdown {
    events: usize,
    event_us: u64,
    scan_us: u64,
    diff_us: u64,
    sync_us: u64,
    log_us: u64,
}

/// The `key=value` number `key` on a log line.
fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// The breakdown of the events that hashed 1 to 100 files (the edits, not
/// the baseline) in the server logs under `home`.
fn breakdown(home: &Path) -> Result<Option<Breakdown>> {
    let mut rows: Vec<[u64; 5]> = Vec::new();
    for project in std::fs::read_dir(home.join("projects"))? {
        let log = project?.path().join("server").join("server.log");
        let Ok(text) = std::fs::read_to_string(&log) else {
            continue;
        };
        let mut snapshot: Option<[u64; 4]> = None;
        for line in text.lines() {
            if line.contains("snapshot recorded") {
                snapshot = match field(line, "files_hashed") {
                    Some(1..=100) => Some([
                        field(line, "scan_us").unwrap_or(0),
                        field(line, "diff_us").unwrap_or(0),
                        field(line, "sync_us").unwrap_or(0),
                        field(line, "log_us").unwrap_or(0),
                    ]),
                    _ => None,
                };
            } else if line.contains("event handled") {
                if let (Some([scan, diff, sync, log]), Some(event)) =
                    (snapshot.take(), field(line, "event_us"))
                {
                    rows.push([event, scan, diff, sync, log]);
                }
            }
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let median = |i: usize| {
        let mut v: Vec<u64> = rows.iter().map(|r| r[i]).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    Ok(Some(Breakdown {
        events: rows.len(),
        event_us: median(0),
        scan_us: median(1),
        diff_us: median(2),
        sync_us: median(3),
        log_us: median(4),
    }))
}

struct Row {
    /// With the server: where its time went in the 3-edit events.
    breakdown: Option<Breakdown>,
    server: bool,
    /// "generated", or the repository's name.
    name: String,
    rss_mb: Option<f64>,
    files: usize,
    status_same: Duration,
    hook_same: Duration,
    status_three: Duration,
    hook_three: Duration,
    cold_hook: Duration,
    /// The median of 8 hook events started at once.
    burst: Duration,
    /// 8 read-only events at once against one alone (the process floor).
    noop_burst: Duration,
    noop_one: Duration,
    /// The session's first event to the baseline recorded (SessionStart
    /// plus the first prompt).
    cold_baseline: Duration,
    cold_shadow: Duration,
    conversation: ConversationCost,
}

/// A prompt and a turn's end without a transcript against the same events
/// naming a Claude Code transcript that grew by a turn since the last
/// checkpoint (issue 37's budget: at most 1 ms more).
struct ConversationCost {
    prompt: Duration,
    prompt_with: Duration,
    turn_end: Duration,
    turn_end_with: Duration,
}

/// What Claude Code appends to its transcript before a prompt's hook: the
/// prompt's queue operation (its `user` line comes after the hook).
fn transcript_prompt(round: usize, session: &str) -> String {
    format!(
        "{{\"type\":\"queue-operation\",\"operation\":\"enqueue\",\"timestamp\":\"2026-11-28T05:00:00.000Z\",\"content\":\"turn {round}\",\"sessionId\":\"{session}\"}}\n"
    )
}

/// What a turn appends before its end's hook: the prompt's user line, the
/// assistant's tool call, the tool's result and the answer, about 5 KB
/// (tool results dominate).
fn transcript_turn(round: usize, session: &str) -> String {
    let result = "x".repeat(4000);
    let uuid = |k: usize| format!("00000000-0000-4000-8000-{:012}", round * 10 + k);
    let line = |k: usize, kind: &str, content: &str| {
        format!(
            r#"{{"parentUuid":"{}","isSidechain":false,"type":"{kind}","message":{{"role":"{kind}","content":"{content}"}},"uuid":"{}","timestamp":"2026-11-28T05:00:00.000Z","sessionId":"{session}","cwd":"/project","version":"2.1.331"}}"#,
            uuid(k.saturating_sub(1)),
            uuid(k)
        ) + "\n"
    };
    line(1, "user", &format!("turn {round}"))
        + &line(2, "assistant", "running the tests")
        + &line(3, "user", &result)
        + &line(4, "assistant", "done")
}

fn conversation_cost(
    home: &Path,
    root: &Path,
    runs: usize,
    server: bool,
) -> Result<ConversationCost> {
    let transcript = home.join("bench-transcript.jsonl");
    let named = format!(
        r#","transcript_path":{}"#,
        serde_json::to_string(&transcript.to_string_lossy())?
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&transcript)?;
    let prompt = r#","prompt":"bench""#;
    let (mut p, mut pw, mut t, mut tw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // A first capture reads the whole transcript so far; the rounds measure
    // what a turn costs once the store holds the rest.
    file.write_all(transcript_turn(0, "bench").as_bytes())?;
    hook(home, root, "Stop", &named, server)?;
    // Each round is a turn as Claude Code writes it, its prompt's and end's
    // events timed against the same events naming no transcript.
    for round in 1..=runs {
        p.push(hook(home, root, "UserPromptSubmit", prompt, server)?);
        file.write_all(transcript_prompt(round, "bench").as_bytes())?;
        pw.push(hook(
            home,
            root,
            "UserPromptSubmit",
            &format!("{prompt}{named}"),
            server,
        )?);
        t.push(hook(home, root, "Stop", "", server)?);
        file.write_all(transcript_turn(round, "bench").as_bytes())?;
        tw.push(hook(home, root, "Stop", &named, server)?);
    }
    Ok(ConversationCost {
        prompt: median_of(&p),
        prompt_with: median_of(&pw),
        turn_end: median_of(&t),
        turn_end_with: median_of(&tw),
    })
}

/// The tree a row measures.
#[derive(Clone)]
enum Source {
    /// A generated repository-shaped tree of this many files, committed.
    Generated(usize),
    /// A checkout of this git repository (cloned from it, so a bare mirror
    /// will do).
    Repo(PathBuf),
}

/// The project at `root`, from `source`; the files the edits may change
/// (tracked regular files, none of the ignore files: an edit of those
/// changes what is captured, which is another measurement).
fn make_project(source: &Source, root: &Path) -> Result<Vec<String>> {
    let files: Vec<String> = match source {
        Source::Generated(n) => {
            std::fs::create_dir(root)?;
            let written = corpus::write_tree(root, *n, *n as u64 * 4_000, 7, "hooks")?;
            git(root, None, &["init", "-q"])?;
            git(root, None, &["add", "-A"])?;
            git(root, None, &["commit", "-q", "-m", "base"])?;
            written.files.into_iter().map(|f| f.rel).collect()
        }
        Source::Repo(repo) => {
            let parent = root.parent().context("project path")?;
            let (from, to) = (
                repo.to_str().context("repo path")?,
                root.to_str().context("project path")?,
            );
            git(parent, None, &["clone", "-q", from, to])?;
            let listed = git(root, None, &["ls-files", "-s"])?;
            String::from_utf8(listed.stdout)?
                .lines()
                // "100644 <hash> 0\t<path>": regular files only.
                .filter(|l| l.starts_with("100644 ") || l.starts_with("100755 "))
                .filter_map(|l| l.split_once('\t').map(|(_, p)| p.to_string()))
                .collect()
        }
    };
    let editable: Vec<String> = files
        .into_iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            name != ".gitignore" && name != ".rewindignore"
        })
        .collect();
    if editable.is_empty() {
        bail!("no file to edit in the project");
    }
    Ok(editable)
}

fn run_size(source: &Source, runs: usize, server: bool) -> Result<Row> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("project");
    let files = make_project(source, &root)?;
    let root = root.canonicalize()?;
    git(&root, None, &["status", "--porcelain"])?; // warm the index

    // The first hook of a project: the cold baseline, against a shadow
    // repository's first add -A && commit (same page cache state: both
    // right after the tree was read by git above).
    let home = dir.path().join("home");
    // The corpus just written is flushed first, so the cold hook's sync
    // pays for its own writes only.
    Command::new("sync").status()?;
    let cold_hook = hook(&home, &root, "SessionStart", "", server)?;
    // SessionStart returns once the baseline is synced (with the server
    // too); the prompt after it adds its own checkpoint.
    let cold_baseline = cold_hook
        + hook(
            &home,
            &root,
            "UserPromptSubmit",
            r#","prompt":"bench""#,
            server,
        )?;
    Command::new("sync").status()?;
    let shadow = dir.path().join("shadow.git");
    git(
        &root,
        None,
        &["init", "-q", "--bare", shadow.to_str().context("path")?],
    )?;
    let cold_shadow = timed(|| {
        git(&root, Some(&shadow), &["add", "-A"])?;
        git(&root, Some(&shadow), &["commit", "-q", "-m", "cold"])?;
        Ok(())
    })?;
    // What the shadow repository left unwritten (tens of MB at 20k files)
    // is flushed before the warm events: a sync of the store waits for all
    // of a filesystem's pending writes, so the events would otherwise pay
    // for the shadow's (a 229 ms `syncfs` was seen).
    Command::new("sync").status()?;

    let mut status_same = Vec::new();
    let mut hook_same = Vec::new();
    let mut status_three = Vec::new();
    let mut hook_three = Vec::new();
    hook(&home, &root, "PreToolUse", SHELL_TOOL, server)?; // warm
    for round in 0..runs {
        status_same.push(timed(|| {
            git(&root, None, &["status", "--porcelain"]).map(drop)
        })?);
        hook_same.push(hook(&home, &root, "PreToolUse", SHELL_TOOL, server)?);
        // Three files changed, then the same measurement. The hook sees
        // the same three files changed (edited once more after `git
        // status`); before session 16 it was given three other files as
        // well, six changes against git's three.
        let edit = |k: usize| -> Result<()> {
            for i in 0..3 {
                let f = &files[(round * 3 + i) % files.len()];
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(root.join(f))?;
                writeln!(file, "edit {round} {k}")?;
            }
            Ok(())
        };
        edit(0)?;
        status_three.push(timed(|| {
            git(&root, None, &["status", "--porcelain"]).map(drop)
        })?);
        edit(1)?;
        hook_three.push(hook(&home, &root, "PreToolUse", SHELL_TOOL, server)?);
    }
    let burst = median_of(&burst(&home, &root, 8, server)?);
    let mut noop_bursts = Vec::new();
    let mut noop_ones = Vec::new();
    for _ in 0..runs {
        noop_ones.push(hook(&home, &root, "PreToolUse", READ_TOOL, server)?);
        noop_bursts.push(median_of(&burst_of(&home, &root, 8, server, READ_TOOL)?));
    }
    let conversation = conversation_cost(&home, &root, runs, server)?;
    let breakdown = if server { breakdown(&home)? } else { None };
    let rss_mb = if server {
        let rss = server_rss_mb(&home, &root).ok();
        server_cmd(&home, &root, "stop")?;
        rss
    } else {
        None
    };
    // REWIND_BENCH_KEEP=1 leaves the tree and its store to look at.
    if std::env::var_os("REWIND_BENCH_KEEP").is_some() {
        eprintln!("kept {}", dir.keep().display());
    }
    Ok(Row {
        breakdown,
        server,
        rss_mb,
        files: match source {
            Source::Generated(n) => *n,
            Source::Repo(_) => files.len(),
        },
        name: match source {
            Source::Generated(_) => "generated".into(),
            Source::Repo(repo) => repo_name(repo),
        },
        status_same: median_of(&status_same),
        hook_same: median_of(&hook_same),
        status_three: median_of(&status_three),
        hook_three: median_of(&hook_three),
        cold_hook,
        burst,
        noop_burst: median_of(&noop_bursts),
        noop_one: median_of(&noop_ones),
        cold_baseline,
        cold_shadow,
        conversation,
    })
}

/// A repository's name from its path (`/x/owner+name/repo` → `owner+name`,
/// `/x/name.git` → `name`).
fn repo_name(repo: &Path) -> String {
    let mut parts = repo.iter().rev().filter_map(|p| p.to_str());
    let last = parts.next().unwrap_or("repo");
    let name = match last {
        "repo" | ".git" => parts.next().unwrap_or(last),
        _ => last,
    };
    name.trim_end_matches(".git").to_string()
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64().max(1e-9))
}

fn main() -> Result<()> {
    let smoke = std::env::args().any(|a| a == "--test" || a == "--list")
        || std::env::var_os("REWIND_BENCH_SMOKE").is_some();
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let sizes: Vec<usize> = match std::env::var("REWIND_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if smoke => vec![300],
        Err(_) => vec![3_000, 20_000, 100_000],
    };
    let runs: usize = std::env::var("REWIND_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(if smoke { 2 } else { 9 });
    println!("rewind hook (a new process per event, payload on stdin) vs git status; medians of {runs} runs");
    println!(
        "{:>8} {:>16} {:>8} | {:>10} {:>10} {:>6} | {:>10} {:>10} {:>6} | {:>10} {:>12} {:>6} | {:>7} | {:>14} | {:>10}",
        "mode",
        "tree",
        "files",
        "git status",
        "hook",
        "ratio",
        "status +3",
        "hook +3",
        "ratio",
        "1st event",
        "shadow add+ci",
        "ratio",
        "RSS MB",
        "8 at once",
        "8 no-op"
    );
    // REWIND_BENCH_MODES=server (or one-shot) runs one of the two.
    let modes: Vec<bool> = match std::env::var("REWIND_BENCH_MODES").as_deref() {
        Ok("server") => vec![true],
        Ok("one-shot") => vec![false],
        _ => vec![false, true],
    };
    // REWIND_BENCH_REPOS=PATH[,PATH...]: real repositories, measured after
    // the generated sizes (their checkouts are cloned from PATH).
    let repos: Vec<Source> = std::env::var("REWIND_BENCH_REPOS")
        .map(|r| {
            r.split(',')
                .filter(|p| !p.is_empty())
                .map(|p| Source::Repo(PathBuf::from(p)))
                .collect()
        })
        .unwrap_or_default();
    let sources = sizes.into_iter().map(Source::Generated).chain(repos);
    for source in sources {
        for &server in &modes {
            let r = run_size(&source, runs, server)?;
            print_row(&r);
        }
    }
    println!(
        "targets: one-shot hook <= 1.5x git status (no change), <= 2x (3 changed); server hook <= 10 ms \
         at 100k and >= 10x faster than git status (no change), <= 0.5x (3 changed); first SessionStart \
         with the server <= 200 ms; server RSS <= 150 MB at 100k; shadow add+ci / the baseline >= 5x; \
         8 at once within 2x of one alone (8 no-op: the same ratio for a read-only event, which only \
         starts a process); a prompt or turn end that stores the conversation <= 1 ms more than one \
         naming no transcript"
    );
    Ok(())
}

fn print_row(r: &Row) {
    println!(
        "{:>8} {:>16} {:>8} | {:>10} {:>10} {:>6} | {:>10} {:>10} {:>6} | {:>10} {:>12} {:>6} | {:>7} | {:>14} | {:>10}",
        if r.server { "server" } else { "one-shot" },
        r.name,
        r.files,
        ms(r.status_same),
        ms(r.hook_same),
        ratio(r.hook_same, r.status_same),
        ms(r.status_three),
        ms(r.hook_three),
        ratio(r.hook_three, r.status_three),
        ms(r.cold_hook),
        ms(r.cold_shadow),
        ratio(r.cold_shadow, r.cold_baseline),
        r.rss_mb
            .map(|m| format!("{m:.0}"))
            .unwrap_or_else(|| "-".into()),
        format!("{} {}", ms(r.burst), ratio(r.burst, r.hook_same)),
        ratio(r.noop_burst, r.noop_one),
    );
    let c = &r.conversation;
    let more = |with: Duration, without: Duration| {
        format!(
            "{:+.2} ms",
            (with.as_secs_f64() - without.as_secs_f64()) * 1000.0
        )
    };
    println!(
        "{:>8} {:>16} {:>8}   conversation (a Claude Code transcript a turn of ~5 KB): prompt {} -> {} ({}, {}), turn end {} -> {} ({}, {})",
        "",
        "",
        "",
        ms(c.prompt),
        ms(c.prompt_with),
        more(c.prompt_with, c.prompt),
        ratio(c.prompt_with, c.prompt),
        ms(c.turn_end),
        ms(c.turn_end_with),
        more(c.turn_end_with, c.turn_end),
        ratio(c.turn_end_with, c.turn_end),
    );
    if let Some(b) = &r.breakdown {
        let ms = |us: u64| format!("{:.1} ms", us as f64 / 1000.0);
        println!(
            "{:>8} {:>16} {:>8}   3 changed, the server's part (median of {} events): {} = scan {} + diff {} + sync {} + log {} + the rest {}; the hook's process and round trip: about {}",
            "",
            "",
            "",
            b.events,
            ms(b.event_us),
            ms(b.scan_us),
            ms(b.diff_us),
            ms(b.sync_us),
            ms(b.log_us),
            ms(b.event_us.saturating_sub(b.scan_us + b.diff_us + b.sync_us + b.log_us)),
            ms((r.hook_three.as_micros() as u64).saturating_sub(b.event_us)),
        );
    }
}
