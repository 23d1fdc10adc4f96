//! rewind against a shadow git repository, side by side (not a timed test:
//! nothing here asserts on a time).
//!
//! ```text
//! cargo bench --bench shadow_git [-- --sizes 3000,20000,100000 --avg-bytes SIZE
//!     --runs K --cold-runs K --restore-runs K --full-restore-runs K
//!     --turns N --series N --store-turns N --seed S --no-fsync --keep --dir PATH]
//! ```
//!
//! Every popular coding agent checkpoints with a *shadow git*: a separate
//! `GIT_DIR` whose work tree is the project. This benchmark does exactly
//! that, on the same trees and in the same run as rewind:
//!
//! - checkpoint: `git add -A` then `git commit -q --allow-empty -m turn`
//!   (two processes, as agents run them; `-c gc.auto=0 -c
//!   maintenance.auto=false` on the commit so that no background `gc --auto`
//!   runs during the measurements; the first checkpoint also runs `git init`);
//! - restore, row (a): `git read-tree C && git checkout-index -a -f &&
//!   git clean -fdq`; row (b): `git clean -fdq && git reset --hard -q C`;
//! - with `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1` and
//!   author/committer variables; the project's `.gitignore` is honoured by
//!   git itself.
//!
//! For each corpus (deterministic, repository-shaped: long-tailed sizes,
//! depth up to 6, some binary files, a `.gitignore`d `node_modules/`; the
//! project is itself a git repository, so `git status` has a real index),
//! as medians over several interleaved runs, rewind (watcher off and on,
//! fsync on as the protocol default) and the shadow git:
//!
//! - cold snapshot (a fresh store / a fresh shadow repository every run),
//!   and walk + read + xxh3 of the same files for reference;
//! - no-change snapshot, and `git status --porcelain` of the project;
//! - snapshot after editing 3 files;
//! - restore of a checkpoint differing in 5 files (3 modified, 1 deleted,
//!   1 added), both directions;
//! - store bytes after the run's checkpoints;
//! - rewind's peak RSS, as the VmHWM of a separate process (this binary run
//!   as `--rss-probe ROOT DIR`) that, like the `rewind` binary, first caps
//!   malloc's arenas (`rewind::memory`), then opens a fresh session with the
//!   watcher, takes 3 snapshots and calls `get_modified_files`;
//! - as diagnostics without a target: the 3-edit snapshot and the restore
//!   again with fsync off, to show what durability costs.
//!
//! On the smallest corpus only (to stay within the time budget): a session
//! of `--turns` (200) turns of small edits (3 files of a fixed pool of 30
//! a turn, so that the range "baseline → leaf" always holds 30 files) taken
//! by both, with `get_modified_files` / `get_file_diff` against
//! `git diff --name-status` / `git diff -- FILE` at the end, store bytes
//! after `--store-turns` (50) turns, then rewind alone up to `--series`
//! (1,000) snapshots, timing `snapshot` and the queries at 10, 100, 200 and
//! 1,000.
//!
//! Restore row (a) takes time that grows with the whole tree and rewrites
//! some unchanged files (new inodes), so it runs last, for all corpora,
//! after every other measurement: on ext4 here, creating files shortly
//! after many were deleted is slow, and nothing else should pay for it. For
//! the same reason every run gets fresh directories and nothing is deleted
//! before the end.
//!
//! Before each round the benchmark calls `sync()`, outside the timings: git
//! does not fsync loose objects, and rewind's per-snapshot `syncfs` would
//! otherwise pay for flushing git's writes.
//!
//! Run with no arguments at all (as `cargo test --benches` does, whereas
//! `cargo bench` passes `--bench`), it makes a smoke run on a 300-file
//! corpus. `--dir PATH` measures a copy of an existing directory (`cp -a`
//! into a fresh temporary directory; PATH itself is never written).
//! Figures and how to read them: docs/benchmarks.md.

use std::collections::{BTreeSet, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, bail, Context, Result};
use ignore::{WalkBuilder, WalkState};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rewind::engine::api::{
    FileDiffParams, OnConflict, RangeParams, RestoreFilesParams, SnapshotParams, SnapshotResult,
};
use rewind::engine::{Engine, EngineConfig};
use rewind::session::EntryId;
use rewind::store::EntryKind;
use rewind::working_copy::ScanOptions;

#[path = "common/corpus.rs"]
mod corpus;
use corpus::*;
#[path = "common/measure.rs"]
mod measure;
use measure::*;
// ------------------------------------------------------------------ arguments

struct Args {
    sizes: Vec<usize>,
    avg_bytes: u64,
    runs: usize,
    cold_runs: usize,
    restore_runs: usize,
    full_restore_runs: usize,
    turns: usize,
    series: usize,
    store_turns: usize,
    seed: u64,
    fsync: bool,
    keep: bool,
    dir: Option<PathBuf>,
}

const USAGE: &str = "usage: cargo bench --bench shadow_git [-- --sizes N,N,... \
--avg-bytes SIZE --runs K --cold-runs K --restore-runs K --full-restore-runs K \
--turns N --series N --store-turns N --seed S --no-fsync --keep --dir PATH]";

fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim().trim_end_matches(['B', 'b']);
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let n: f64 = num.parse().with_context(|| format!("bad size {s:?}"))?;
    Ok((n * mult) as u64)
}

fn parse_args() -> Result<Args> {
    let mut a = Args {
        sizes: vec![3_000, 20_000, 100_000],
        avg_bytes: 8_000,
        runs: 5,
        cold_runs: 3,
        restore_runs: 3,
        full_restore_runs: 3,
        turns: 200,
        series: 1_000,
        store_turns: 50,
        seed: 0x5eed_2024,
        fsync: true,
        keep: false,
        dir: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        // Not `cargo bench` (which passes --bench) but `cargo test
        // --benches`/`--all-targets`: a smoke run, in seconds.
        println!(
            "no --bench: smoke run on a small corpus (`cargo bench --bench shadow_git` for figures)"
        );
        a.sizes = vec![300];
        a.runs = 2;
        a.cold_runs = 1;
        a.restore_runs = 1;
        a.full_restore_runs = 1;
        a.turns = 12;
        a.series = 30;
        a.store_turns = 5;
        return Ok(a);
    }
    let mut it = argv.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| anyhow!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            // cargo bench passes --bench to harness = false targets.
            "--bench" => {}
            "--sizes" => {
                a.sizes = value("--sizes")?
                    .split(',')
                    .map(|s| parse_size(s).map(|n| n as usize))
                    .collect::<Result<_>>()?
            }
            "--avg-bytes" => a.avg_bytes = parse_size(&value("--avg-bytes")?)?,
            "--runs" => a.runs = value("--runs")?.parse()?,
            "--cold-runs" => a.cold_runs = value("--cold-runs")?.parse()?,
            "--restore-runs" => a.restore_runs = value("--restore-runs")?.parse()?,
            "--full-restore-runs" => a.full_restore_runs = value("--full-restore-runs")?.parse()?,
            "--turns" => a.turns = value("--turns")?.parse()?,
            "--series" => a.series = value("--series")?.parse()?,
            "--store-turns" => a.store_turns = value("--store-turns")?.parse()?,
            "--seed" => a.seed = value("--seed")?.parse()?,
            "--dir" => a.dir = Some(PathBuf::from(value("--dir")?)),
            "--no-fsync" => a.fsync = false,
            "--keep" => a.keep = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    if a.runs == 0 || a.cold_runs == 0 || a.restore_runs == 0 || a.sizes.is_empty() {
        bail!("--runs, --cold-runs and --restore-runs must be >= 1, --sizes non-empty\n{USAGE}");
    }
    if a.sizes.iter().any(|&n| n < 100) {
        bail!("every corpus needs at least 100 files\n{USAGE}");
    }
    a.series = a.series.max(a.turns);
    a.turns = a.turns.max(a.store_turns);
    a.series = a.series.max(a.turns);
    Ok(a)
}

// -------------------------------------------------------------- measurement

/// Flush every dirty page (outside the timings): git leaves its loose
/// objects unsynced, and rewind's `syncfs` must not pay for them.
fn settle() {
    let t = Instant::now();
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    SETTLE_NS.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// Time spent in [`settle`] so far (outside every timing).
static SETTLE_NS: AtomicU64 = AtomicU64::new(0);

fn settled() -> String {
    ms(Duration::from_nanos(SETTLE_NS.load(Ordering::Relaxed)))
}

fn started() -> Instant {
    static T: OnceLock<Instant> = OnceLock::new();
    *T.get_or_init(Instant::now)
}

macro_rules! progress {
    ($($arg:tt)*) => {{
        let e = started().elapsed().as_secs();
        println!("[{:02}:{:02}] {}", e / 60, e % 60, format!($($arg)*));
    }};
}

/// `du`-style totals under a path: (apparent bytes, files, allocated bytes).
fn du(path: &Path) -> (u64, u64, u64) {
    let mut out = (0, 0, 0);
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        } else {
            out.0 += m.len();
            out.1 += 1;
            out.2 += m.blocks() * 512;
        }
    }
    out
}

// ------------------------------------------------------------------- corpus
// The generator of benches/snapshot.rs, with the file count and bytes as
// parameters.

/// A file rewind captures, as a candidate for edits.
type Cand = GenFile;

struct Corpus {
    label: String,
    root: PathBuf,
    /// Kept alive (deleted on drop) unless `--keep`.
    _tmp: Option<tempfile::TempDir>,
    /// Tracked files (generated corpus; filled from the baseline for --dir).
    files: Vec<Cand>,
    summary: String,
}

fn generate(n: usize, bytes: u64, seed: u64, keep: bool) -> Result<Corpus> {
    let t0 = Instant::now();
    let tmp = tempfile::Builder::new()
        .prefix("rewind-sg-corpus-")
        .tempdir()
        .context("creating the corpus directory")?;
    let root = tmp.path().canonicalize()?;
    let Written {
        files,
        dirs,
        ignored,
        ignored_bytes,
    } = write_tree(&root, n, bytes, seed ^ n as u64, "shadow_git")?;
    let gen_time = t0.elapsed();

    // The project is a git repository of its own (so `git status` has a
    // real index, and rewind sees a git project as it would in use).
    let t_git = Instant::now();
    // Uncompressed loose objects: only `git status` uses this repository,
    // and it never reads them; zlib would only slow the setup down.
    git_ok(&root, &["-c", "init.defaultBranch=main", "init", "-q"])?;
    git_ok(&root, &["-c", "core.looseCompression=0", "add", "-A"])?;
    git_ok(
        &root,
        &[
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
            "commit",
            "-q",
            "-m",
            "benchmark corpus",
        ],
    )?;
    let git_time = t_git.elapsed();

    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
    sizes.sort_unstable();
    let pct = |p: f64| sizes[((sizes.len() - 1) as f64 * p) as usize];
    let summary = format!(
        "{} tracked files, {}, {} directories (depth <= 6), {} binary; sizes p50 {} B, \
         p90 {} B, p99 {} B, max {}; ignored: {} files, {} (node_modules/, out/, *.log)",
        files.len(),
        mb(total),
        dirs,
        files.iter().filter(|f| f.binary).count(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        mb(*sizes.last().unwrap_or(&0)),
        ignored,
        mb(ignored_bytes),
    );
    progress!(
        "corpus {}: {summary}; generated in {}, project git init+add+commit in {}",
        root.display(),
        ms(gen_time),
        ms(git_time)
    );
    let tmp = if keep {
        println!("--keep: the corpus stays at {}", root.display());
        let _ = tmp.keep();
        None
    } else {
        Some(tmp)
    };
    Ok(Corpus {
        label: short_count(n),
        root,
        _tmp: tmp,
        files,
        summary,
    })
}

/// A copy of an existing directory (`--dir`), in a fresh temporary one.
fn copy_dir(src: &Path, keep: bool) -> Result<Corpus> {
    let src = src
        .canonicalize()
        .with_context(|| format!("--dir {}", src.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix("rewind-sg-copy-")
        .tempdir()?;
    let root = tmp.path().canonicalize()?;
    let t0 = Instant::now();
    let st = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(&root)
        .status()?;
    if !st.success() {
        bail!("cp -a {} failed", src.display());
    }
    let (bytes, files, _) = du(&root);
    let summary = format!(
        "copy of {}: {files} files, {} (everything, .git and ignored files included)",
        src.display(),
        mb(bytes)
    );
    progress!("{summary}, copied in {}", ms(t0.elapsed()));
    let tmp = if keep {
        let _ = tmp.keep();
        None
    } else {
        Some(tmp)
    };
    Ok(Corpus {
        label: src
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "dir".into()),
        root,
        _tmp: tmp,
        files: Vec::new(),
        summary,
    })
}

fn short_count(n: usize) -> String {
    if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

// ---------------------------------------------------------------------- git

fn git_base() -> Command {
    let mut c = Command::new("git");
    c.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "rewind bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "rewind bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .env_remove("GIT_OPTIONAL_LOCKS")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE");
    c
}

fn checked(out: std::io::Result<Output>, what: &str) -> Result<Output> {
    let out = out.with_context(|| format!("running {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out)
}

/// git in the project's own repository.
fn git_ok(dir: &Path, args: &[&str]) -> Result<Output> {
    checked(
        git_base().current_dir(dir).args(args).output(),
        &format!("git {}", args.join(" ")),
    )
}

/// A shadow repository: `GIT_DIR` outside the project, the project as the
/// work tree.
struct Shadow {
    git_dir: PathBuf,
    work: PathBuf,
}

impl Shadow {
    fn new(git_dir: PathBuf, work: &Path) -> Shadow {
        Shadow {
            git_dir,
            work: work.to_path_buf(),
        }
    }

    fn run(&self, args: &[&str]) -> Result<Output> {
        checked(
            git_base()
                .current_dir(&self.work)
                .env("GIT_DIR", &self.git_dir)
                .env("GIT_WORK_TREE", &self.work)
                .args(args)
                .output(),
            &format!("shadow git {}", args.join(" ")),
        )
    }

    /// The first checkpoint: `git init`, then [`Shadow::checkpoint`].
    fn cold(&self) -> Result<()> {
        self.run(&["-c", "init.defaultBranch=main", "init", "-q"])?;
        self.checkpoint()
    }

    /// `git add -A && git commit -q --allow-empty -m turn`.
    fn checkpoint(&self) -> Result<()> {
        self.run(&["add", "-A"])?;
        self.run(&[
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "turn",
        ])?;
        Ok(())
    }

    fn head(&self) -> Result<String> {
        let out = self.run(&["rev-parse", "HEAD"])?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Run each command in turn; the wall time of each.
    fn steps<const N: usize>(&self, cmds: [&[&str]; N]) -> Result<[Duration; N]> {
        let mut out = [Duration::ZERO; N];
        for (i, c) in cmds.iter().enumerate() {
            let t = Instant::now();
            self.run(c)?;
            out[i] = t.elapsed();
        }
        Ok(out)
    }

    /// Row (a): `git read-tree C && git checkout-index -a -f && git clean -fdq`.
    fn restore_read_tree(&self, commit: &str) -> Result<[Duration; 3]> {
        self.steps([
            &["read-tree", commit],
            &["checkout-index", "-a", "-f"],
            &["clean", "-fdq"],
        ])
    }

    /// Row (b): `git clean -fdq && git reset --hard -q C`.
    fn restore_reset(&self, commit: &str) -> Result<[Duration; 2]> {
        self.steps([&["clean", "-fdq"], &["reset", "--hard", "-q", commit]])
    }

    fn bytes(&self) -> (u64, u64, u64) {
        du(&self.git_dir)
    }
}

// ---------------------------------------------------------------- reference

/// One parallel pass over the files rewind would see (same walker, gitignore
/// honoured, `.git` skipped): read each and hash it with xxh3-128 like
/// rewind does. Returns (files, bytes).
fn walk_read_hash(root: &Path) -> (u64, u64) {
    let files = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let mut wb = WalkBuilder::new(root);
    wb.standard_filters(false)
        .hidden(false)
        .parents(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(|e| e.file_name() != ".git");
    wb.build_parallel().run(|| {
        let (files, bytes) = (&files, &bytes);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                return WalkState::Continue;
            };
            if meta.is_file() {
                files.fetch_add(1, Ordering::Relaxed);
                if let Ok(content) = std::fs::read(entry.path()) {
                    std::hint::black_box(xxhash_rust::xxh3::xxh3_128(&content));
                    bytes.fetch_add(content.len() as u64, Ordering::Relaxed);
                }
            }
            WalkState::Continue
        })
    });
    (files.into_inner(), bytes.into_inner())
}

// ------------------------------------------------------------------- rewind

/// A fresh store and session file, in a directory never used before.
fn rewind_config(dir: &Path, root: &Path, fsync: bool, watch: bool) -> Result<EngineConfig> {
    std::fs::create_dir_all(dir)?;
    Ok(EngineConfig {
        cwd: Some(root.to_path_buf()),
        session_file: Some(dir.join("session.jsonl")),
        store_dir: Some(dir.join("store")),
        scan: ScanOptions::default(),
        fsync,
        watch,
        resume: Default::default(),
    })
}

/// Bytes of a rewind store: everything under the store directory plus the
/// session file (apparent bytes, files, allocated bytes).
fn rewind_bytes(config: &EngineConfig) -> (u64, u64, u64) {
    let mut t = config.store_dir.as_deref().map(du).unwrap_or_default();
    if let Some(s) = config.session_file.as_deref().map(du) {
        t = (t.0 + s.0, t.1 + s.1, t.2 + s.2);
    }
    t
}

/// A snapshot as a host takes it (kind turn, not forced).
fn take_snapshot(engine: &mut Engine) -> Result<(Duration, u64, SnapshotResult)> {
    let (d, ticks, r) = measure(false, || engine.snapshot(SnapshotParams::default()));
    Ok((d, ticks, r?))
}

fn restore(engine: &mut Engine, target: &EntryId) -> Result<(Duration, u64, usize)> {
    let (d, ticks, r) = measure(false, || {
        engine.restore_files(RestoreFilesParams {
            target_entry_id: Some(target.clone()),
            on_conflict: Some(OnConflict::Overwrite),
            ..Default::default()
        })
    });
    let r = r?;
    Ok((d, ticks, r.restored.len() + r.deleted.len()))
}

/// Child mode (`--rss-probe ROOT DIR`): a process that does only what a
/// sidecar does first, then prints its VmHWM.
fn rss_probe_child(root: &Path, dir: &Path) -> Result<()> {
    // As `rewind` does at start (this process starts no thread before it).
    rewind::memory::limit_malloc_arenas();
    let before = peak_rss_kb();
    let (mut engine, _) = Engine::open(rewind_config(dir, root, true, true)?)?;
    for _ in 0..3 {
        engine.snapshot(SnapshotParams::default())?;
    }
    engine.get_modified_files(RangeParams::default())?;
    println!("rss-probe {before} {}", peak_rss_kb());
    Ok(())
}

/// Run [`rss_probe_child`] in a fresh process: (kB before, peak kB, time).
fn rss_probe(root: &Path, dir: &Path) -> Result<(u64, u64, Duration)> {
    let t = Instant::now();
    let out = checked(
        Command::new(std::env::current_exe()?)
            .arg("--rss-probe")
            .arg(root)
            .arg(dir)
            .output(),
        "the RSS probe",
    )?;
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<u64> = text
        .lines()
        .find_map(|l| l.strip_prefix("rss-probe "))
        .ok_or_else(|| anyhow!("the RSS probe printed nothing"))?
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if f.len() != 2 {
        bail!("the RSS probe printed {text:?}");
    }
    Ok((f[0], f[1], t.elapsed()))
}

// -------------------------------------------------------------------- edits

fn is_text(b: &[u8]) -> bool {
    !b.iter().take(8000).any(|&c| c == 0) && std::str::from_utf8(b).is_ok()
}

/// `n` text files of at most 64 KB, below different top-level directories
/// when the tree allows it, none in `used` (which gains them).
fn pick(
    root: &Path,
    cands: &[Cand],
    n: usize,
    used: &mut HashSet<String>,
    rng: &mut StdRng,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut tops: HashSet<String> = HashSet::new();
    if cands.is_empty() {
        return out;
    }
    for attempt in 0..200_000 {
        if out.len() == n {
            break;
        }
        let c = &cands[rng.gen_range(0..cands.len())];
        let top = c.rel.split('/').next().unwrap_or("").to_string();
        let spread = attempt < 100_000;
        if c.binary
            || c.size > 64_000
            || c.size < 64
            || used.contains(&c.rel)
            || c.rel == ".gitignore"
            || (spread && (tops.contains(&top) || !c.rel.contains('/')))
        {
            continue;
        }
        match std::fs::read(root.join(&c.rel)) {
            Ok(b) if is_text(&b) => {}
            _ => continue,
        }
        tops.insert(top);
        used.insert(c.rel.clone());
        out.push(c.rel.clone());
    }
    out
}

/// Insert a line after the middle line of a text file, dated 10 s back (so
/// the next scan does not find it inside the racy window).
/// What rounds of 3-edit snapshots measured.
struct EditRounds {
    rewind: Samples,
    /// filesHashed of the snapshots (3 when only the edits were read).
    hashed: BTreeSet<u64>,
    /// Every snapshot's diff named exactly its round's 3 edits.
    all_found: bool,
}

/// `runs` rounds of: edit 3 text files not edited before (`pick`, which
/// records them in `used`), then a snapshot; with `shadow`, a shadow git
/// checkpoint of the same edits after it, its time pushed to the samples.
fn edit_rounds(
    engine: &mut Engine,
    root: &Path,
    files: &[Cand],
    (used, rng): (&mut HashSet<String>, &mut StdRng),
    runs: usize,
    tag: &str,
    mut shadow: Option<(&Shadow, &mut Samples)>,
) -> Result<EditRounds> {
    let mut out = EditRounds {
        rewind: Samples::default(),
        hashed: BTreeSet::new(),
        all_found: true,
    };
    for round in 0..runs {
        settle();
        let paths = pick(root, files, 3, used, rng);
        for p in &paths {
            edit_file(root, p, &format!("{tag} {round}"))?;
        }
        let (d, t, r) = take_snapshot(engine)?;
        out.rewind.push(d, t);
        out.hashed.insert(r.stats.files_hashed);
        let want: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
        let got: BTreeSet<&str> = r.diff.modified.iter().map(|p| p.as_str()).collect();
        out.all_found &= want == got && paths.len() == 3;
        if let Some((shadow, samples)) = shadow.as_mut() {
            let (d, t, r) = measure(true, || shadow.checkpoint());
            r?;
            samples.push(d, t);
        }
    }
    Ok(out)
}

fn edit_file(root: &Path, rel: &str, tag: &str) -> Result<()> {
    let path = root.join(rel);
    let mut content = std::fs::read(&path)?;
    let mid = content.len() / 2;
    let at = content[mid..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| mid + p + 1)
        .unwrap_or(content.len());
    let line = format!("// edited by the rewind benchmark: {tag}\n");
    content.splice(at..at, line.bytes());
    write_file(&path, &content, SystemTime::now() - Duration::from_secs(10))
}

/// Do the files hold what they should (`None`: absent)?
fn verify(root: &Path, expect: &[(String, Option<Vec<u8>>)]) -> bool {
    expect
        .iter()
        .all(|(rel, want)| std::fs::read(root.join(rel)).ok() == *want)
}

fn snapshot_state(root: &Path, paths: &[String]) -> Vec<(String, Option<Vec<u8>>)> {
    paths
        .iter()
        .map(|p| (p.clone(), std::fs::read(root.join(p)).ok()))
        .collect()
}

// ------------------------------------------------------------------ results

/// One line of a table: rewind's figure, the shadow git's, their ratio.
struct Row {
    name: String,
    rewind: String,
    rewind_cpu: String,
    shadow: String,
    shadow_cpu: String,
    ratio: Option<f64>,
    note: String,
}

fn time_row(name: &str, r: &Samples, s: Option<&Samples>, note: String) -> Row {
    Row {
        name: name.to_string(),
        rewind: format!("{} ({})", ms(r.median()), r.range()),
        rewind_cpu: r.cpu(),
        shadow: s
            .map(|s| format!("{} ({})", ms(s.median()), s.range()))
            .unwrap_or_else(|| "–".into()),
        shadow_cpu: s.map(|s| s.cpu()).unwrap_or_else(|| "–".into()),
        ratio: s.map(|s| r.median().as_secs_f64() / s.median().as_secs_f64()),
        note,
    }
}

fn shadow_only_row(name: &str, s: &Samples, note: String) -> Row {
    Row {
        name: name.to_string(),
        rewind: "–".into(),
        rewind_cpu: "–".into(),
        shadow: format!("{} ({})", ms(s.median()), s.range()),
        shadow_cpu: s.cpu(),
        ratio: None,
        note,
    }
}

fn bytes_row(name: &str, r: (u64, u64, u64), s: (u64, u64, u64), note: String) -> Row {
    Row {
        name: name.to_string(),
        rewind: format!("{} ({} files)", mb(r.0), r.1),
        rewind_cpu: "–".into(),
        shadow: format!("{} ({} files)", mb(s.0), s.1),
        shadow_cpu: "–".into(),
        ratio: Some(r.0 as f64 / s.0.max(1) as f64),
        note: format!(
            "allocated on disk: rewind {}, shadow git {}{}",
            mb(r.2),
            mb(s.2),
            if note.is_empty() {
                String::new()
            } else {
                format!("; {note}")
            }
        ),
    }
}

fn print_table(title: &str, rows: &[Row]) {
    println!();
    println!("### {title}");
    println!();
    println!("| measurement | rewind median (min–max) | CPU/run | shadow git median (min–max) | CPU/run | rewind / shadow git | notes |");
    println!("|---|---:|---:|---:|---:|---:|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            r.rewind,
            r.rewind_cpu,
            r.shadow,
            r.shadow_cpu,
            r.ratio
                .map(|x| if x < 0.01 {
                    format!("1/{:.0}", 1.0 / x)
                } else {
                    format!("{x:.2}")
                })
                .unwrap_or_else(|| "–".into()),
            r.note
        );
    }
}

/// The medians the targets are read from.
#[derive(Default, Clone)]
struct Key {
    label: String,
    cold_r: Duration,
    cold_s: Duration,
    hash_ref: Duration,
    nc_off: Duration,
    nc_on: Duration,
    nc_s: Duration,
    git_status: Duration,
    e3_off: Duration,
    e3_on: Duration,
    e3_s: Duration,
    rest_on: Duration,
    rest_off: Duration,
    rest_reset: Duration,
    rest_read_tree: Option<Duration>,
    store_r: u64,
    store_s: u64,
    /// Diagnostics, fsync off (watcher on).
    e3_nf: Duration,
    rest_nf: Duration,
    /// Peak RSS of a separate rewind process, and of that process before
    /// it opened anything (kB).
    rss_kb: u64,
    rss_base_kb: u64,
}

/// What the restore row (a), run at the very end, needs of a corpus.
struct Pending {
    label: String,
    root: PathBuf,
    shadow: Shadow,
    commits: [String; 2],
    expect: [Vec<(String, Option<Vec<u8>>)>; 2],
    /// Unchanged files whose inode tells whether (a) rewrote them.
    sample: Vec<String>,
    /// Files in the tree.
    files: usize,
}

// ----------------------------------------------------------- one corpus

struct CorpusRun {
    key: Key,
    rows: Vec<Row>,
    pending: Pending,
    /// Stores and shadow repositories, deleted at the end.
    _work: tempfile::TempDir,
    failures: Vec<String>,
}

fn run_corpus(args: &Args, corpus: &mut Corpus) -> Result<CorpusRun> {
    let label = corpus.label.clone();
    let root = corpus.root.clone();
    let work = tempfile::Builder::new()
        .prefix("rewind-sg-work-")
        .tempdir()?;
    let base = work.path().canonicalize()?;
    let mut rows = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut key = Key {
        label: label.clone(),
        ..Default::default()
    };
    let mut rng = StdRng::seed_from_u64(args.seed ^ 0xed17 ^ corpus.files.len() as u64);

    // Warm the page cache and git's view of the project.
    walk_read_hash(&root);
    let has_git = git_ok(&root, &["status", "--porcelain"]).is_ok();

    // ---- cold snapshots: a fresh store / a fresh shadow repository each run.
    let (mut cold_r, mut cold_s, mut hash) =
        (Samples::default(), Samples::default(), Samples::default());
    let mut engine: Option<Engine> = None;
    let mut config = None;
    let mut shadow = None;
    let mut cold_note = String::new();
    let mut walked = (0, 0);
    for i in 0..args.cold_runs {
        drop(engine.take());
        settle();
        let cfg = rewind_config(&base.join(format!("rewind-{i}")), &root, args.fsync, false)?;
        let (d, t, opened) = measure(false, || Engine::open(cfg.clone()));
        let (e, init) = opened?;
        cold_r.push(d, t);
        cold_note = format!(
            "{} files / {} captured",
            init.baseline.files,
            mb(init.baseline.bytes)
        );
        engine = Some(e);
        config = Some(cfg);
        let sh = Shadow::new(base.join(format!("shadow-{i}.git")), &root);
        let (ds, ts, r) = measure(true, || sh.cold());
        r?;
        cold_s.push(ds, ts);
        shadow = Some(sh);
        let (dh, th, w) = measure(false, || walk_read_hash(&root));
        hash.push(dh, th);
        walked = w;
        progress!(
            "[{label}] cold round {}/{}: rewind {}, shadow git {}, walk+read+hash {} (sync so far {})",
            i + 1,
            args.cold_runs,
            ms(d),
            ms(ds),
            ms(dh),
            settled()
        );
    }
    let mut engine = engine.ok_or_else(|| anyhow!("no cold run"))?;
    let mut config = config.ok_or_else(|| anyhow!("no cold run"))?;
    let shadow = shadow.ok_or_else(|| anyhow!("no cold run"))?;
    let cold_store_r = rewind_bytes(&config);
    let cold_store_s = shadow.bytes();
    if corpus.files.is_empty() {
        // --dir: edit candidates from the baseline.
        let tree = engine
            .log()
            .index()
            .first_snapshot()
            .and_then(|e| e.recorded_tree())
            .ok_or_else(|| anyhow!("no baseline"))?;
        let flat = rewind::store::flatten(engine.store(), &tree)?;
        corpus.files = flat
            .into_iter()
            .filter(|(_, e)| e.kind == EntryKind::File)
            .map(|(rel, e)| Cand {
                rel,
                size: e.size,
                binary: false,
            })
            .collect();
    }
    rows.push(time_row(
        "cold snapshot (rewind: first `initialize`, fresh store; git: init + add -A + commit)",
        &cold_r,
        Some(&cold_s),
        cold_note,
    ));
    rows.push(time_row(
        "walk + read + xxh3-128 of the same files (reference, in the rewind column)",
        &hash,
        None,
        format!("{} files, {}", walked.0, mb(walked.1)),
    ));
    rows.push(bytes_row(
        "store after the cold snapshot",
        cold_store_r,
        cold_store_s,
        String::new(),
    ));
    key.cold_r = cold_r.median();
    key.cold_s = cold_s.median();
    key.hash_ref = hash.median();

    // ---- peak RSS: a process of its own doing what a sidecar does first.
    settle();
    let (base_kb, peak_kb, d_probe) = rss_probe(&root, &base.join("rewind-rss"))?;
    key.rss_kb = peak_kb;
    key.rss_base_kb = base_kb;
    progress!(
        "[{label}] peak RSS of a rewind process (cold initialize with the watcher, 3 snapshots, \
         get_modified_files): {} MB ({} MB before opening), in {}",
        peak_kb / 1024,
        base_kb / 1024,
        ms(d_probe)
    );

    // ---- no-change, watcher off, against the shadow's checkpoint and git status.
    take_snapshot(&mut engine)?;
    shadow.checkpoint()?;
    let (mut nc_off, mut nc_s, mut gs) =
        (Samples::default(), Samples::default(), Samples::default());
    let mut hashed = BTreeSet::new();
    for _ in 0..args.runs {
        settle();
        let (d, t, r) = take_snapshot(&mut engine)?;
        nc_off.push(d, t);
        hashed.insert(r.stats.files_hashed);
        if r.changed {
            failures.push(format!("[{label}] a no-change snapshot found a change"));
        }
        let (d, t, r) = measure(true, || shadow.checkpoint());
        r?;
        nc_s.push(d, t);
        if has_git {
            let (d, t, r) = measure(true, || git_ok(&root, &["status", "--porcelain"]));
            r?;
            gs.push(d, t);
        }
    }
    progress!(
        "[{label}] no-change (watcher off): rewind {}, shadow git {}, git status {}",
        ms(nc_off.median()),
        ms(nc_s.median()),
        ms(gs.median())
    );
    rows.push(time_row(
        "no-change snapshot, watcher off (full stat scan)",
        &nc_off,
        Some(&nc_s),
        format!("filesHashed {}", list(&hashed)),
    ));
    if has_git {
        rows.push(shadow_only_row(
            "`git status --porcelain` in the project's own repository",
            &gs,
            "the no-change target's second baseline".into(),
        ));
    }
    key.nc_off = nc_off.median();
    key.nc_s = nc_s.median();
    key.git_status = gs.median();

    // ---- 3 edits, watcher off.
    let mut used = HashSet::new();
    let mut e3_s = Samples::default();
    let EditRounds {
        rewind: e3_off,
        hashed,
        all_found,
    } = edit_rounds(
        &mut engine,
        &root,
        &corpus.files,
        (&mut used, &mut rng),
        args.runs,
        "3-edit off",
        Some((&shadow, &mut e3_s)),
    )?;
    progress!(
        "[{label}] 3 edits (watcher off): rewind {}, shadow git {}",
        ms(e3_off.median()),
        ms(e3_s.median())
    );
    if !all_found {
        failures.push(format!(
            "[{label}] a 3-edit snapshot (watcher off) missed an edit"
        ));
    }
    rows.push(time_row(
        "snapshot after editing 3 files, watcher off",
        &e3_off,
        Some(&e3_s),
        format!(
            "filesHashed {}; the 3 edits found every round: {all_found}",
            list(&hashed)
        ),
    ));
    key.e3_off = e3_off.median();

    // ---- the watcher: the same session reopened with `watch` (the default).
    drop(engine);
    config.watch = true;
    let (d_reopen, _, opened) = measure(false, || Engine::open(config.clone()));
    let (mut engine, _) = opened?;
    take_snapshot(&mut engine)?;
    let mut nc_on = Samples::default();
    let mut hashed = BTreeSet::new();
    for _ in 0..args.runs {
        let (d, t, r) = take_snapshot(&mut engine)?;
        nc_on.push(d, t);
        hashed.insert(r.stats.files_hashed);
        if r.changed {
            failures.push(format!(
                "[{label}] a watched no-change snapshot found a change"
            ));
        }
    }
    rows.push(time_row(
        "no-change snapshot, watcher on (the default)",
        &nc_on,
        Some(&nc_s),
        format!(
            "filesHashed {}; shadow column: the same no-change checkpoints as above; \
             reopening the session with the watcher took {}",
            list(&hashed),
            ms(d_reopen)
        ),
    ));
    key.nc_on = nc_on.median();

    let EditRounds {
        rewind: e3_on,
        hashed,
        all_found,
    } = edit_rounds(
        &mut engine,
        &root,
        &corpus.files,
        (&mut used, &mut rng),
        args.runs,
        "3-edit on",
        Some((&shadow, &mut e3_s)),
    )?;
    progress!(
        "[{label}] no-change (watcher on): rewind {}; 3 edits (watcher on): rewind {}, shadow git {}",
        ms(nc_on.median()),
        ms(e3_on.median()),
        ms(e3_s.median())
    );
    if !all_found {
        failures.push(format!(
            "[{label}] a 3-edit snapshot (watcher on) missed an edit"
        ));
    }
    rows.push(time_row(
        "snapshot after editing 3 files, watcher on",
        &e3_on,
        Some(&e3_s),
        format!(
            "filesHashed {}; the 3 edits found every round: {all_found}; shadow column: \
             both 3-edit series",
            list(&hashed)
        ),
    ));
    key.e3_on = e3_on.median();
    key.e3_s = e3_s.median();

    // ---- restore: checkpoints A and B differ in 3 modified, 1 deleted, 1 added.
    settle();
    let a = engine
        .snapshot(SnapshotParams {
            force: Some(true),
            ..Default::default()
        })?
        .entry_id
        .ok_or_else(|| anyhow!("forced snapshot without an entry"))?;
    shadow.checkpoint()?;
    let ca = shadow.head()?;
    let mods = pick(&root, &corpus.files, 3, &mut used, &mut rng);
    let del = pick(&root, &corpus.files, 1, &mut used, &mut rng);
    if mods.len() != 3 || del.len() != 1 {
        bail!("[{label}] not enough text files to edit");
    }
    let parent = mods[0].rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let added = if parent.is_empty() {
        "rewind_bench_added.txt".to_string()
    } else {
        format!("{parent}/rewind_bench_added.txt")
    };
    let five: Vec<String> = mods
        .iter()
        .chain(del.iter())
        .chain(std::iter::once(&added))
        .cloned()
        .collect();
    let state_a = snapshot_state(&root, &five);
    for p in &mods {
        edit_file(&root, p, "checkpoint B")?;
    }
    std::fs::remove_file(root.join(&del[0]))?;
    write_file(
        &root.join(&added),
        b"// added by the rewind benchmark for checkpoint B\nfn added() {}\n",
        SystemTime::now() - Duration::from_secs(10),
    )?;
    let state_b = snapshot_state(&root, &five);
    let rb = engine.snapshot(SnapshotParams::default())?;
    let b = rb
        .entry_id
        .ok_or_else(|| anyhow!("checkpoint B recorded no change"))?;
    if (
        rb.diff.added.len(),
        rb.diff.modified.len(),
        rb.diff.deleted.len(),
    ) != (1, 3, 1)
    {
        failures.push(format!(
            "[{label}] checkpoint B's diff is {:?}, not 1 added, 3 modified, 1 deleted",
            rb.diff
        ));
    }
    shadow.checkpoint()?;
    let cb = shadow.head()?;

    let (mut rest_on, mut rest_s) = (Samples::default(), Samples::default());
    let mut reset_steps: [Vec<Duration>; 2] = Default::default();
    let mut touched = BTreeSet::new();
    let mut ok = true;
    for round in 0..args.restore_runs {
        settle();
        for (target, expect) in [(&a, &state_a), (&b, &state_b)] {
            let (d, t, n) = restore(&mut engine, target)?;
            rest_on.push(d, t);
            touched.insert(n as u64);
            ok &= verify(&root, expect);
        }
        settle();
        for (target, expect) in [(&ca, &state_a), (&cb, &state_b)] {
            let (d, t, r) = measure(true, || shadow.restore_reset(target));
            for (v, x) in reset_steps.iter_mut().zip(r?) {
                v.push(x);
            }
            rest_s.push(d, t);
            ok &= verify(&root, expect);
        }
        progress!(
            "[{label}] restore round {}/{}: rewind {} / {}, git reset --hard {} / {}",
            round + 1,
            args.restore_runs,
            ms(rest_on.wall[rest_on.wall.len() - 2]),
            ms(rest_on.wall[rest_on.wall.len() - 1]),
            ms(rest_s.wall[rest_s.wall.len() - 2]),
            ms(rest_s.wall[rest_s.wall.len() - 1]),
        );
    }
    if !ok {
        failures.push(format!("[{label}] a restore left the 5 files wrong"));
    }
    rows.push(time_row(
        "restore a checkpoint differing in 5 files, watcher on (git: (b) clean -fdq + reset --hard)",
        &rest_on,
        Some(&rest_s),
        format!(
            "both directions (A→B, B→A) each round; files written+deleted per rewind restore: {}; \
             the 5 files right after every restore: {ok}; git steps (medians): clean {}, reset --hard {}",
            list(&touched),
            ms(median_of(&reset_steps[0])),
            ms(median_of(&reset_steps[1]))
        ),
    ));
    key.rest_on = rest_on.median();
    key.rest_reset = rest_s.median();

    // ---- restore with the watcher off (every restore scans the tree).
    drop(engine);
    config.watch = false;
    let (mut engine, _) = Engine::open(config.clone())?;
    let mut rest_off = Samples::default();
    for _ in 0..args.restore_runs {
        settle();
        for (target, expect) in [(&a, &state_a), (&b, &state_b)] {
            let (d, t, _) = restore(&mut engine, target)?;
            rest_off.push(d, t);
            ok &= verify(&root, expect);
        }
    }
    progress!(
        "[{label}] restore (watcher off): rewind {}",
        ms(rest_off.median())
    );
    if !ok {
        failures.push(format!(
            "[{label}] a restore (watcher off) left the 5 files wrong"
        ));
    }
    rows.push(time_row(
        "restore a checkpoint differing in 5 files, watcher off",
        &rest_off,
        Some(&rest_s),
        "shadow column: the same (b) runs as above".into(),
    ));
    key.rest_off = rest_off.median();

    // ---- store bytes after every checkpoint of this run.
    drop(engine);
    let store_r = rewind_bytes(&config);
    let store_s = shadow.bytes();
    let checkpoints = 1 + 2 * args.runs + 2;
    rows.push(bytes_row(
        &format!(
            "store after this run's checkpoints (cold + {} 3-edit turns + A + B; git also {} empty commits)",
            2 * args.runs,
            args.runs + 1
        ),
        store_r,
        store_s,
        format!("{checkpoints} tree-changing checkpoints each; rewind's column includes the session file and stat cache"),
    ));
    key.store_r = store_r.0;
    key.store_s = store_s.0;

    // ---- diagnostic: the same session with fsync off (watcher on), to
    // show what durability costs in the 3-edit snapshot and the restore.
    let mut nf = config.clone();
    nf.fsync = false;
    nf.watch = true;
    let (mut engine, _) = Engine::open(nf)?;
    take_snapshot(&mut engine)?;
    let mut rest_nf = Samples::default();
    let mut ok_nf = true;
    for _ in 0..args.restore_runs {
        settle();
        for (target, expect) in [(&a, &state_a), (&b, &state_b)] {
            let (d, t, _) = restore(&mut engine, target)?;
            rest_nf.push(d, t);
            ok_nf &= verify(&root, expect);
        }
    }
    let e3_nf = edit_rounds(
        &mut engine,
        &root,
        &corpus.files,
        (&mut used, &mut rng),
        args.runs,
        "3-edit no fsync",
        None,
    )?
    .rewind;
    drop(engine);
    if !ok_nf {
        failures.push(format!(
            "[{label}] a restore (fsync off) left the 5 files wrong"
        ));
    }
    progress!(
        "[{label}] fsync off (diagnostic): 3 edits {}, restore {}",
        ms(e3_nf.median()),
        ms(rest_nf.median())
    );
    rows.push(time_row(
        "diagnostic, no target: snapshot after editing 3 files, watcher on, fsync off",
        &e3_nf,
        Some(&e3_s),
        "what is left without durability; shadow column: the 3-edit checkpoints above".into(),
    ));
    rows.push(time_row(
        "diagnostic, no target: restore 5 files, watcher on, fsync off",
        &rest_nf,
        Some(&rest_s),
        "what is left without durability; shadow column: the (b) runs above".into(),
    ));
    key.e3_nf = e3_nf.median();
    key.rest_nf = rest_nf.median();

    // Unchanged files, to see whether row (a) rewrites them.
    let sample: Vec<String> = corpus
        .files
        .iter()
        .filter(|f| !used.contains(&f.rel))
        .step_by((corpus.files.len() / 200).max(1))
        .map(|f| f.rel.clone())
        .collect();
    Ok(CorpusRun {
        key,
        rows,
        pending: Pending {
            label,
            root,
            shadow,
            commits: [ca, cb],
            expect: [state_a, state_b],
            sample,
            files: corpus.files.len(),
        },
        _work: work,
        failures,
    })
}

// ------------------------------------------------- session series (smallest)

struct Series {
    rows: Vec<Row>,
    /// (snapshots in the session, snapshot median of the last 10, get_modified_files median, get_file_diff median)
    points: Vec<(usize, Duration, Duration, Duration)>,
    store_r: u64,
    store_s: u64,
    store_s_packed: u64,
    gmf: Option<(Duration, Duration)>,
    gfd: Option<(Duration, Duration)>,
    _work: tempfile::TempDir,
}

fn run_series(args: &Args, corpus: &Corpus) -> Result<Series> {
    let label = &corpus.label;
    let root = &corpus.root;
    let work = tempfile::Builder::new()
        .prefix("rewind-sg-series-")
        .tempdir()?;
    let base = work.path().canonicalize()?;
    let config = rewind_config(&base.join("rewind"), root, args.fsync, true)?;
    settle();
    let (mut engine, _) = Engine::open(config.clone())?;
    let shadow = Shadow::new(base.join("shadow.git"), root);
    shadow.cold()?;
    let c0 = shadow.head()?;

    // A fixed pool of files the turns edit, so that the range "baseline →
    // leaf" stays the same size while the session grows.
    let mut rng = StdRng::seed_from_u64(args.seed ^ 0x5e41e5);
    let mut used: HashSet<String> = HashSet::new();
    // Files the restore rows used stay out (they changed under the corpus run).
    let pool = pick(root, &corpus.files, 30, &mut used, &mut rng);
    if pool.is_empty() {
        bail!("[{label}] no text files for the session series");
    }
    let hot = pool[0].clone();

    let mut snap = Samples::default();
    let mut git_turn = Samples::default();
    let mut snap_all: Vec<Duration> = Vec::new();
    let mut points = Vec::new();
    let (mut store_r, mut store_s, mut store_s_packed) = ((0, 0, 0), (0, 0, 0), (0, 0, 0));
    let (mut gmf, mut gfd) = (None, None);
    let mut rows = Vec::new();
    let mut marks: Vec<usize> = vec![10, 100, args.turns, args.series];
    marks.retain(|&m| m <= args.series);
    marks.sort_unstable();
    marks.dedup();
    let queries = 21;
    let mut files_in_range = 0;
    for t in 1..=args.series {
        let with_git = t <= args.turns;
        if with_git {
            settle();
        }
        // Three files a turn, going round the pool: by turn 10 every pool
        // file has changed, so every query below sees the same range size.
        for j in 0..3 {
            let p = &pool[(3 * (t - 1) + j) % pool.len()];
            edit_file(root, p, &format!("turn {t}.{j}"))?;
        }
        let (d, tk, r) = take_snapshot(&mut engine)?;
        if !r.changed {
            bail!("[{label}] turn {t}: the snapshot saw no change");
        }
        snap_all.push(d);
        if with_git {
            snap.push(d, tk);
            let (d, tk, r) = measure(true, || shadow.checkpoint());
            r?;
            git_turn.push(d, tk);
        }
        if t == args.store_turns {
            store_r = rewind_bytes(&config);
            store_s = shadow.bytes();
            // What `gc --auto` would eventually make of it.
            shadow.run(&["gc", "-q"])?;
            store_s_packed = shadow.bytes();
            progress!(
                "[{label}] after {t} turns: rewind store {}, shadow git {} ({} packed by git gc)",
                mb(store_r.0),
                mb(store_s.0),
                mb(store_s_packed.0)
            );
        }
        if marks.contains(&t) {
            let mut q_gmf = Samples::default();
            let mut q_gfd = Samples::default();
            let hot_path = rewind::repo_path::RepoPath::parse(&hot)?;
            for _ in 0..queries {
                let (d, tk, r) =
                    measure(false, || engine.get_modified_files(RangeParams::default()));
                files_in_range = r?.files.len();
                q_gmf.push(d, tk);
                let (d, tk, r) = measure(false, || {
                    engine.get_file_diff(FileDiffParams::new(hot_path.clone()))
                });
                if r?.is_none() {
                    bail!("[{label}] get_file_diff found no change to {hot}");
                }
                q_gfd.push(d, tk);
            }
            let last10 = median_of(&snap_all[snap_all.len().saturating_sub(10)..]);
            points.push((t + 1, last10, q_gmf.median(), q_gfd.median()));
            progress!(
                "[{label}] session of {} snapshots: snapshot {} (median of the last 10), \
                 get_modified_files {} ({files_in_range} files), get_file_diff {} (sync so far {})",
                t + 1,
                ms(last10),
                ms(q_gmf.median()),
                ms(q_gfd.median()),
                settled()
            );
            if t == args.turns {
                let head = shadow.head()?;
                let mut g_gmf = Samples::default();
                let mut g_gfd = Samples::default();
                for _ in 0..queries {
                    let (d, tk, r) =
                        measure(true, || shadow.run(&["diff", "--name-status", &c0, &head]));
                    r?;
                    g_gmf.push(d, tk);
                    let (d, tk, r) =
                        measure(true, || shadow.run(&["diff", &c0, &head, "--", &hot]));
                    r?;
                    g_gfd.push(d, tk);
                }
                rows.push(time_row(
                    &format!("`get_modified_files` after {t} turns (git: diff --name-status)"),
                    &q_gmf,
                    Some(&g_gmf),
                    format!("baseline → leaf: {files_in_range} files"),
                ));
                rows.push(time_row(
                    &format!("`get_file_diff` after {t} turns (git: diff C0 C{t} -- FILE)"),
                    &q_gfd,
                    Some(&g_gfd),
                    format!("{hot}, edited every {} turns", pool.len().div_ceil(3)),
                ));
                gmf = Some((q_gmf.median(), g_gmf.median()));
                gfd = Some((q_gfd.median(), g_gfd.median()));
            }
        }
    }
    rows.insert(
        0,
        time_row(
            &format!(
                "snapshot per turn, 3 small edits, watcher on ({} turns)",
                args.turns
            ),
            &snap,
            Some(&git_turn),
            "git: add -A + commit per turn".into(),
        ),
    );
    rows.push(bytes_row(
        &format!("store after {} turns of small edits", args.store_turns),
        store_r,
        store_s,
        format!(
            "shadow git after `git gc` (what gc --auto would make of it): {} in {} files",
            mb(store_s_packed.0),
            store_s_packed.1
        ),
    ));
    Ok(Series {
        rows,
        points,
        store_r: store_r.0,
        store_s: store_s.0,
        store_s_packed: store_s_packed.0,
        gmf,
        gfd,
        _work: work,
    })
}

// ---------------------------------------------------- restore row (a), last

fn run_full_restores(args: &Args, p: &Pending) -> Result<(Samples, String, bool)> {
    let mut s = Samples::default();
    let mut ok = true;
    let mut rewritten = 0usize;
    let mut steps: [Vec<Duration>; 3] = Default::default();
    let mut sampled = 0usize;
    // One run on large trees: it takes tens of seconds there, and rewind is
    // far enough below it that one run settles the ratio.
    let n_runs = if p.files >= 50_000 {
        1
    } else {
        args.full_restore_runs
    };
    for round in 0..n_runs {
        // The disk is at B after the corpus run: alternate A, B, A, ...
        let i = if round % 2 == 0 { 0 } else { 1 };
        let inodes: Vec<Option<u64>> = p
            .sample
            .iter()
            .map(|f| std::fs::metadata(p.root.join(f)).ok().map(|m| m.ino()))
            .collect();
        settle();
        let (d, t, r) = measure(true, || p.shadow.restore_read_tree(&p.commits[i]));
        for (v, x) in steps.iter_mut().zip(r?) {
            v.push(x);
        }
        s.push(d, t);
        ok &= verify(&p.root, &p.expect[i]);
        for (f, before) in p.sample.iter().zip(&inodes) {
            let now = std::fs::metadata(p.root.join(f)).ok().map(|m| m.ino());
            sampled += 1;
            if now != *before {
                rewritten += 1;
            }
        }
        progress!(
            "[{}] restore (a) read-tree + checkout-index -a -f + clean, round {}/{}: {}",
            p.label,
            round + 1,
            n_runs,
            ms(d)
        );
    }
    let note = format!(
        "steps (medians): read-tree {}, checkout-index {}, clean {}; \
         rewrote {rewritten} of {sampled} sampled unchanged files (new inode); \
         the 5 files right after every restore: {ok}; run after every other measurement",
        ms(median_of(&steps[0])),
        ms(median_of(&steps[1])),
        ms(median_of(&steps[2])),
    );
    Ok((s, note, ok))
}

// --------------------------------------------------------------------- main

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

fn main() -> Result<()> {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() == 4 && argv[1] == "--rss-probe" {
        return rss_probe_child(Path::new(&argv[2]), Path::new(&argv[3]));
    }
    let args = parse_args()?;
    started();
    let git_version = Command::new("git")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "no git".into());
    progress!(
        "rewind vs shadow git: {} cores, {git_version}, sizes {:?}, avg {} B/file, runs {} \
         (cold {}, restore {}, restore (a) {}), turns {}, series {}, store turns {}, fsync {}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        if args.dir.is_some() {
            vec![]
        } else {
            args.sizes.clone()
        },
        args.avg_bytes,
        args.runs,
        args.cold_runs,
        args.restore_runs,
        args.full_restore_runs,
        args.turns,
        args.series,
        args.store_turns,
        if args.fsync { "on" } else { "off" }
    );

    let mut corpora: Vec<Corpus> = Vec::new();
    let mut runs: Vec<CorpusRun> = Vec::new();
    let mut series: Option<Series> = None;
    let specs: Vec<Option<usize>> = match &args.dir {
        Some(_) => vec![None],
        None => {
            let mut s = args.sizes.clone();
            s.sort_unstable();
            s.into_iter().map(Some).collect()
        }
    };
    for (i, spec) in specs.iter().enumerate() {
        let mut corpus = match (spec, &args.dir) {
            (Some(n), _) => generate(*n, *n as u64 * args.avg_bytes, args.seed, args.keep)?,
            (None, Some(d)) => copy_dir(d, args.keep)?,
            (None, None) => unreachable!(),
        };
        let run = run_corpus(&args, &mut corpus)?;
        if i == 0 {
            // The session series on the smallest corpus.
            series = Some(run_series(&args, &corpus)?);
        }
        runs.push(run);
        corpora.push(corpus);
    }
    // Row (a) rewrites whole trees: last, so nothing else pays for it.
    let mut failures: Vec<String> = Vec::new();
    for run in runs.iter_mut() {
        if args.full_restore_runs == 0 {
            break;
        }
        let (s, note, ok) = run_full_restores(&args, &run.pending)?;
        if !ok {
            failures.push(format!(
                "[{}] restore (a) left the 5 files wrong",
                run.key.label
            ));
        }
        run.key.rest_read_tree = Some(s.median());
        let r = Samples {
            wall: vec![run.key.rest_on],
            cpu_ticks: 0,
        };
        let mut row = time_row(
            "restore a checkpoint differing in 5 files, watcher on, vs (a) read-tree + checkout-index -a -f + clean -fdq",
            &r,
            Some(&s),
            note,
        );
        row.rewind = format!("{} (median above)", ms(run.key.rest_on));
        row.rewind_cpu = "–".into();
        run.rows.push(row);
    }
    let total = started().elapsed();

    // ---- report.
    println!();
    println!("## Results");
    for (run, corpus) in runs.iter().zip(&corpora) {
        failures.extend(run.failures.iter().cloned());
        print_table(
            &format!("{} files — {}", run.key.label, corpus.summary),
            &run.rows,
        );
        println!();
        println!(
            "rewind's peak RSS (VmHWM of a separate process: cold initialize with the watcher, \
             3 snapshots, get_modified_files): {} MB; the same process before opening: {} MB",
            run.key.rss_kb / 1024,
            run.key.rss_base_kb / 1024
        );
    }
    if let Some(s) = &series {
        print_table(
            &format!(
                "session series on the {} corpus (one fresh session and shadow repository)",
                runs[0].key.label
            ),
            &s.rows,
        );
        println!();
        println!("| snapshots in the session | snapshot (median of the last 10) | get_modified_files | get_file_diff |");
        println!("|---:|---:|---:|---:|");
        for (n, sn, g, f) in &s.points {
            println!("| {n} | {} | {} | {} |", ms(*sn), ms(*g), ms(*f));
        }
    }

    // ---- targets.
    println!();
    println!("## Targets");
    println!();
    println!("| target | corpus | figure | verdict |");
    println!("|---|---|---|---|");
    let x = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    for run in &runs {
        let k = &run.key;
        let l = &k.label;
        let r = x(k.cold_s, k.cold_r);
        println!(
            "| cold snapshot ≥ 5× faster than shadow git | {l} | {} vs {}: {r:.1}× | {} |",
            ms(k.cold_r),
            ms(k.cold_s),
            verdict(r >= 5.0)
        );
        let r = x(k.cold_r, k.hash_ref);
        println!(
            "| cold snapshot within 3× of walk+read+hash | {l} | {} vs {}: {r:.1}× | {} |",
            ms(k.cold_r),
            ms(k.hash_ref),
            verdict(r <= 3.0)
        );
        for (mode, nc) in [("watcher on", k.nc_on), ("watcher off", k.nc_off)] {
            let r = x(k.nc_s, nc);
            if k.git_status.is_zero() {
                println!(
                    "| no-change ≥ 2× faster than shadow git ({mode}; no git repository, so no git status) | {l} | {} vs {} ({r:.1}× faster) | {} |",
                    ms(nc),
                    ms(k.nc_s),
                    verdict(r >= 2.0)
                );
                continue;
            }
            let g = x(nc, k.git_status);
            println!(
                "| no-change ≥ 2× faster than shadow git, ≤ git status ({mode}) | {l} | {} vs {} ({r:.1}× faster); {g:.2}× git status ({}) | {} |",
                ms(nc),
                ms(k.nc_s),
                ms(k.git_status),
                verdict(r >= 2.0 && g <= 1.0)
            );
        }
        for (mode, e3, nc) in [
            ("watcher on", k.e3_on, k.nc_on),
            ("watcher off", k.e3_off, k.nc_off),
        ] {
            let d = e3.as_secs_f64() * 1e3 - nc.as_secs_f64() * 1e3;
            println!(
                "| 3-file snapshot within 5 ms of no-change ({mode}) | {l} | {} vs {}: +{d:.1} ms | {} |",
                ms(e3),
                ms(nc),
                verdict(d <= 5.0)
            );
        }
        let r = x(k.rest_reset, k.rest_on);
        println!(
            "| restore ≥ 10× faster than shadow git (b) reset --hard | {l} | {} vs {}: {r:.1}× | {} |",
            ms(k.rest_on),
            ms(k.rest_reset),
            verdict(r >= 10.0)
        );
        if let Some(rt) = k.rest_read_tree {
            let r = x(rt, k.rest_on);
            println!(
                "| restore ≥ 10× faster than shadow git (a) read-tree + checkout-index | {l} | {} vs {}: {r:.0}× | {} |",
                ms(k.rest_on),
                ms(rt),
                verdict(r >= 10.0)
            );
        }
        let r = k.store_r as f64 / k.store_s.max(1) as f64;
        println!(
            "| store no larger than the shadow git directory (this run's checkpoints) | {l} | {} vs {}: {r:.2}× | {} |",
            mb(k.store_r),
            mb(k.store_s),
            verdict(r <= 1.0)
        );
        println!(
            "| peak RSS < 150 MB | {l} | {} MB (process alone {} MB) | {} |",
            k.rss_kb / 1024,
            k.rss_base_kb / 1024,
            verdict(k.rss_kb < 150 * 1024)
        );
    }
    if runs.len() > 1 {
        let first = &runs[0].key;
        let last = &runs[runs.len() - 1].key;
        let r = x(last.rest_on, first.rest_on);
        println!(
            "| restore time independent of the tree's size (watcher on) | {} → {} | {} → {}: {r:.2}× | {} |",
            first.label,
            last.label,
            ms(first.rest_on),
            ms(last.rest_on),
            verdict(r <= 1.5)
        );
    }
    if let Some(s) = &series {
        let l = &runs[0].key.label;
        let r = s.store_r as f64 / s.store_s.max(1) as f64;
        let rp = s.store_r as f64 / s.store_s_packed.max(1) as f64;
        println!(
            "| store after {} small-edit turns no larger than shadow git | {l} | {} vs {} loose: {r:.2}×; vs {} packed: {rp:.2}× | {} (loose), {} (packed) |",
            args.store_turns,
            mb(s.store_r),
            mb(s.store_s),
            mb(s.store_s_packed),
            verdict(r <= 1.0),
            verdict(rp <= 1.0)
        );
        if let (Some(first), Some(lastp)) = (s.points.first(), s.points.last()) {
            let rs = x(lastp.1, first.1);
            let rg = x(lastp.2, first.2);
            println!(
                "| snapshot and get_modified_files flat from {} to {} snapshots | {l} | snapshot {} → {} ({rs:.2}×); get_modified_files {} → {} ({rg:.2}×) | {} |",
                first.0,
                lastp.0,
                ms(first.1),
                ms(lastp.1),
                ms(first.2),
                ms(lastp.2),
                verdict(rs <= 1.5 && rg <= 1.5)
            );
        }
        if let (Some(g), Some(f)) = (s.gmf, s.gfd) {
            println!(
                "| (no target) get_modified_files / get_file_diff vs git diff after {} turns | {l} | {} vs {} ({:.2}); {} vs {} ({:.2}) | – |",
                args.turns,
                ms(g.0),
                ms(g.1),
                x(g.0, g.1),
                ms(f.0),
                ms(f.1),
                x(f.0, f.1)
            );
        }
    }
    println!();
    println!(
        "measured in {} (everything above; the cleanup below is extra)",
        ms(total)
    );
    progress!("removing the corpora, stores and shadow repositories…");
    let cleanup = Instant::now();
    drop(series);
    drop(runs);
    drop(corpora);
    progress!(
        "cleanup took {}; total {}",
        ms(cleanup.elapsed()),
        ms(started().elapsed())
    );
    if !failures.is_empty() {
        bail!(
            "required properties do not hold:\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(())
}
