//! Snapshot benchmark (not a timed test: nothing here asserts on a time).
//!
//! ```text
//! cargo bench --bench snapshot [-- --files N --bytes SIZE --runs K --cold-runs K
//!                                  --seed S --no-fsync --keep --dir PATH
//!                                  --profile-no-change N]
//! ```
//!
//! Generates a deterministic, repository-shaped corpus in a fresh temporary
//! directory (default 20,000 tracked files, 200 MB; long-tailed sizes, depth up
//! to 6, some binary files, a `.gitignore` and an ignored `node_modules/`),
//! commits it to git, and measures, as medians over several interleaved runs:
//!
//! - a cold snapshot (first `initialize` of a fresh store: the baseline);
//! - a no-change snapshot (must hash 0 files), also after a restart (a fresh
//!   `Engine::open` resuming the same session file, so the stat cache comes
//!   from disk);
//! - `git status --porcelain` and `GIT_OPTIONAL_LOCKS=0 git status` on the same
//!   tree, as the baseline the no-change snapshot is compared with;
//! - a snapshot after editing 3 files in different directories, checking that
//!   the objects it wrote are exactly the 3 blobs and the trees on their paths;
//! - walk + lstat and walk + read + xxh3 of the same files, for reference.
//!
//! Figures and how to read them: docs/benchmarks.md.
//!
//! Run with no arguments at all (as `cargo test --benches` does, whereas
//! `cargo bench` passes `--bench`), it makes a smoke run on a 300-file
//! corpus. On a generated corpus, a broken required property (filesHashed 0
//! without changes and after a restart, exactly the expected objects after 3
//! edits, no ignored path captured) makes it fail after printing the figures;
//! no time is ever asserted.
//!
//! `--dir PATH` measures an existing directory instead (read-only: the edit
//! step is skipped). `--keep` leaves the generated corpus in place (to pass
//! to `--dir` later). `--profile-no-change N` takes one baseline and then only
//! N no-change snapshots, for a profiler. `--no-fsync` opens the store without
//! fsync (the protocol default is on). Every run works in fresh directories:
//! on some filesystems re-creating many files where many were just deleted
//! is very slow, so no path is ever deleted and re-created.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, bail, Context, Result};
use ignore::{WalkBuilder, WalkState};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rewind::engine::api::{SnapshotParams, SnapshotResult};
use rewind::engine::{Engine, EngineConfig};
use rewind::store::{EntryKind, ObjectId};
use rewind::working_copy::ScanOptions;

#[path = "common/corpus.rs"]
mod corpus;
use corpus::*;
#[path = "common/measure.rs"]
mod measure;
use measure::*;
// ------------------------------------------------------------------ arguments

struct Args {
    files: usize,
    bytes: u64,
    runs: usize,
    cold_runs: usize,
    seed: u64,
    fsync: bool,
    keep: bool,
    /// Only take the baseline, then N no-change snapshots (for a profiler).
    profile_no_change: Option<usize>,
    dir: Option<PathBuf>,
}

const USAGE: &str = "usage: cargo bench --bench snapshot [-- --files N --bytes SIZE \
(e.g. 200M) --runs K --cold-runs K --seed S --no-fsync --keep --dir PATH --profile-no-change N]";

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
        files: 20_000,
        bytes: 200_000_000,
        runs: 7,
        cold_runs: 3,
        seed: 0x5eed_2024,
        fsync: true,
        keep: false,
        profile_no_change: None,
        dir: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        // Run with no arguments at all: not by `cargo bench` (which passes
        // --bench) but by `cargo test --benches`/`--all-targets`. A small
        // smoke run then checks that everything works, in seconds.
        println!(
            "no --bench: smoke run on a small corpus (`cargo bench --bench snapshot` for figures)"
        );
        a.files = 300;
        a.bytes = 3_000_000;
        a.runs = 2;
        a.cold_runs = 1;
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
            "--files" => a.files = value("--files")?.parse()?,
            "--bytes" => a.bytes = parse_size(&value("--bytes")?)?,
            "--runs" => a.runs = value("--runs")?.parse()?,
            "--cold-runs" => a.cold_runs = value("--cold-runs")?.parse()?,
            "--seed" => a.seed = value("--seed")?.parse()?,
            "--dir" => a.dir = Some(PathBuf::from(value("--dir")?)),
            "--no-fsync" => a.fsync = false,
            "--keep" => a.keep = true,
            "--profile-no-change" => {
                a.profile_no_change = Some(value("--profile-no-change")?.parse()?);
                a.cold_runs = 1;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    if a.runs == 0 || a.cold_runs == 0 || a.files < 50 {
        bail!("--runs and --cold-runs must be >= 1 and --files >= 50\n{USAGE}");
    }
    Ok(a)
}

// -------------------------------------------------------------- measurement

// ------------------------------------------------------------------- corpus

struct Corpus {
    root: PathBuf,
    /// Kept alive (deleted on drop) unless `--keep`; `None` for `--dir`.
    _tmp: Option<tempfile::TempDir>,
    /// Tracked files (generated corpus only).
    files: Vec<GenFile>,
    generated: bool,
}

fn generate(args: &Args) -> Result<Corpus> {
    let started = Instant::now();
    let tmp = tempfile::Builder::new()
        .prefix("rewind-bench-corpus-")
        .tempdir()
        .context("creating the corpus directory")?;
    let root = tmp.path().canonicalize()?;
    let Written {
        files,
        dirs,
        ignored,
        ignored_bytes,
    } = write_tree(&root, args.files, args.bytes, args.seed, "snapshot")?;
    let gen_time = started.elapsed();

    // Commit everything, so `git status` has a real index to compare with.
    // Without a working git the rest still runs, minus the git rows.
    let git_started = Instant::now();
    let committed = git_ok(&root, &["init", "-q", "-b", "main"])
        .and_then(|_| git_ok(&root, &["add", "-A"]))
        .and_then(|_| git_ok(&root, &["commit", "-q", "-m", "benchmark corpus"]));
    if let Err(err) = committed {
        println!("no git repository ({err:#}): the git rows are skipped");
    }
    let git_time = git_started.elapsed();

    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
    sizes.sort_unstable();
    let pct = |p: f64| sizes[((sizes.len() - 1) as f64 * p) as usize];
    let in_1_20k = sizes
        .iter()
        .filter(|&&s| (1000..=20_480).contains(&s))
        .count();
    println!(
        "corpus: {} ({} tracked files, {}, {} directories, depth <= 6, {} binary files; \
         ignored: {} files, {} under node_modules/, out/, *.log)",
        root.display(),
        files.len(),
        mb(total),
        dirs,
        files.iter().filter(|f| f.binary).count(),
        ignored,
        mb(ignored_bytes),
    );
    println!(
        "sizes: p50 {} B, p90 {} B, p99 {} B, max {}; {:.0}% of files 1-20 KB; \
         generated in {}, git init+add+commit in {}",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        mb(*sizes.last().unwrap_or(&0)),
        100.0 * in_1_20k as f64 / sizes.len() as f64,
        ms(gen_time),
        ms(git_time),
    );
    let tmp = if args.keep {
        println!("--keep: the corpus stays at {}", root.display());
        let _ = tmp.keep();
        None
    } else {
        Some(tmp)
    };
    Ok(Corpus {
        root,
        _tmp: tmp,
        files,
        generated: true,
    })
}

// ---------------------------------------------------------------------- git

fn git_cmd(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "rewind bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_NAME", "rewind bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .env_remove("GIT_OPTIONAL_LOCKS")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE");
    c
}

fn git_ok(dir: &Path, args: &[&str]) -> Result<Output> {
    let out = git_cmd(dir).args(args).output().context("running git")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out)
}

/// `git status --porcelain`: (wall, CPU ticks of git, lines of output).
fn git_status_porcelain(dir: &Path) -> Result<(Duration, u64, usize)> {
    let (d, ticks, out) = measure(true, || git_ok(dir, &["status", "--porcelain"]));
    let lines = out?
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    Ok((d, ticks, lines))
}

/// `GIT_OPTIONAL_LOCKS=0 git status` (never writes the index back).
fn git_status_no_locks(dir: &Path) -> Result<(Duration, u64)> {
    let (d, ticks, out) = measure(true, || {
        git_cmd(dir)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .arg("status")
            .output()
    });
    let out = out?;
    if !out.status.success() {
        bail!(
            "git status failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((d, ticks))
}

// ---------------------------------------------------------------- reference

/// One parallel pass over the files rewind would see (same walker, gitignore
/// honoured, `.git` skipped): lstat each; with `read`, also read and hash it
/// with xxh3-128 like rewind does. Returns (files, bytes).
fn walk_reference(root: &Path, read: bool) -> (u64, u64) {
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
                if read {
                    if let Ok(content) = std::fs::read(entry.path()) {
                        std::hint::black_box(xxhash_rust::xxh3::xxh3_128(&content));
                        bytes.fetch_add(content.len() as u64, Ordering::Relaxed);
                    }
                } else {
                    bytes.fetch_add(meta.len(), Ordering::Relaxed);
                }
            }
            WalkState::Continue
        })
    });
    (files.into_inner(), bytes.into_inner())
}

// ------------------------------------------------------------------- rewind

struct Workspace {
    _tmp: tempfile::TempDir,
    config: EngineConfig,
}

/// A fresh store and session file, in a directory never used before.
fn workspace(root: &Path, fsync: bool) -> Result<Workspace> {
    let tmp = tempfile::Builder::new()
        .prefix("rewind-bench-store-")
        .tempdir()?;
    let base = tmp.path().canonicalize()?;
    let config = EngineConfig {
        cwd: Some(root.to_path_buf()),
        session_file: Some(base.join("session.jsonl")),
        store_dir: Some(base.join("store")),
        scan: ScanOptions::default(),
        fsync,
        // The full-scan rows measure the scan itself; the watcher section
        // reopens the session with `watch: true`.
        watch: false,
        resume: Default::default(),
    };
    Ok(Workspace { _tmp: tmp, config })
}

/// A snapshot as a host takes it (kind turn, not forced): (wall, CPU ticks, result).
fn take_snapshot(engine: &mut Engine) -> Result<(Duration, u64, SnapshotResult)> {
    let (d, ticks, r) = measure(false, || engine.snapshot(SnapshotParams::default()));
    Ok((d, ticks, r?))
}

/// Every file under `objects/`, as "<fan-out><name>" (the object id in hex
/// for objects; temp files would show up as such too).
fn object_files(store_dir: &Path) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for fan in std::fs::read_dir(store_dir.join("objects"))? {
        let fan = fan?;
        if !fan.file_type()?.is_dir() {
            continue;
        }
        let prefix = fan.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(fan.path())? {
            out.insert(format!("{prefix}{}", f?.file_name().to_string_lossy()));
        }
    }
    Ok(out)
}

/// The objects a snapshot that changed exactly `paths` must have written:
/// each path's blob and the tree of every directory on its path, root
/// included, as found in the snapshot's tree. Also returns the number of
/// distinct directories.
fn expected_objects(
    engine: &Engine,
    tree_hex: &str,
    paths: &[String],
) -> Result<(BTreeSet<String>, usize)> {
    let store = engine.store();
    let root = ObjectId::from_hex(tree_hex)?;
    let mut expected = BTreeSet::new();
    let mut dirs: HashSet<String> = HashSet::new();
    expected.insert(root.to_hex());
    dirs.insert(String::new());
    for p in paths {
        let comps: Vec<&str> = p.split('/').collect();
        let mut cur = root;
        for (i, c) in comps.iter().enumerate() {
            let tree = store.get_tree(&cur)?;
            let e = tree
                .entries
                .get(*c)
                .ok_or_else(|| anyhow!("{p} is not in the snapshot's tree"))?;
            expected.insert(e.id.to_hex());
            cur = e.id;
            if i + 1 < comps.len() {
                if e.kind != EntryKind::Tree {
                    bail!("{p}: {c} is not a directory in the snapshot");
                }
                dirs.insert(comps[..=i].join("/"));
            }
        }
    }
    Ok((expected, dirs.len()))
}

/// Three text files below different top-level directories (so no two share
/// a parent), at depth >= 2, none edited in an earlier round.
fn pick_edits(files: &[GenFile], used: &mut HashSet<String>, rng: &mut StdRng) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut tops: HashSet<&str> = HashSet::new();
    for _ in 0..100_000 {
        if out.len() == 3 {
            break;
        }
        let f = &files[rng.gen_range(0..files.len())];
        let top = f.rel.split('/').next().unwrap_or("");
        let depth = f.rel.matches('/').count();
        if f.binary || f.size > 64_000 || depth < 2 || tops.contains(top) || used.contains(&f.rel) {
            continue;
        }
        tops.insert(top);
        used.insert(f.rel.clone());
        out.push(f.rel.clone());
    }
    out
}

/// Edit a file in place: insert a line in its middle. Dated 10 s back, so
/// the next round's scan does not find it inside the racy window (which
/// would correctly make it re-hash it, blurring "3 files hashed").
fn edit_file(root: &Path, rel: &str, round: usize) -> Result<()> {
    let path = root.join(rel);
    let mut content = std::fs::read(&path)?;
    let at = content.len() / 2;
    let line = format!("\n// edited by the rewind benchmark, round {round}\n");
    content.splice(at..at, line.bytes());
    write_file(&path, &content, SystemTime::now() - Duration::from_secs(10))
}

// --------------------------------------------------------------------- main

struct Row {
    name: String,
    samples: Samples,
    hashed: String,
    notes: String,
}

fn push_row(rows: &mut Vec<Row>, name: &str, samples: &Samples, hashed: String, notes: String) {
    rows.push(Row {
        name: name.to_string(),
        samples: samples.clone(),
        hashed,
        notes,
    });
}

/// What a phase's peak RSS was, and what the RSS was when it began.
fn peak_note(start_kb: u64, peak_kb: u64) -> String {
    format!("{} MB (from {} MB)", peak_kb / 1024, start_kb / 1024)
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let t_all = Instant::now();
    println!(
        "rewind snapshot benchmark: {} cores, runs {} (cold {}), fsync {}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        args.runs,
        args.cold_runs,
        if args.fsync {
            "on (the protocol default)"
        } else {
            "off"
        }
    );

    let corpus = match &args.dir {
        Some(d) => Corpus {
            root: d
                .canonicalize()
                .with_context(|| format!("--dir {}", d.display()))?,
            _tmp: None,
            files: Vec::new(),
            generated: false,
        },
        None => generate(&args)?,
    };
    let root = corpus.root.clone();
    let is_git = git_ok(&root, &["rev-parse", "--is-inside-work-tree"]).is_ok();
    if let Ok(out) = git_ok(&root, &["ls-files"]) {
        let n = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        println!("git index: {n} files");
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut peaks: Vec<String> = Vec::new();

    // ---- cold snapshots: the first initialize of a fresh store.
    let mut cold = Samples::default();
    let mut cold_peak = (0, 0);
    let mut kept: Option<(Workspace, Engine)> = None;
    // Earlier runs' stores stay on disk until the end: deleting ~20,000
    // files right before creating as many makes ext4's inode allocator scan
    // recently deleted inodes (see docs/benchmarks.md).
    let mut old_stores: Vec<Workspace> = Vec::new();
    // Properties the issue requires (never times); a generated corpus that
    // breaks one makes the benchmark fail after printing its figures.
    let mut failures: Vec<String> = Vec::new();
    let mut cold_note = String::new();
    let mut cold_hashed = BTreeSet::new();
    for _ in 0..args.cold_runs {
        if let Some((ws, engine)) = kept.take() {
            drop(engine);
            old_stores.push(ws);
        }
        let ws = workspace(&root, args.fsync)?;
        reset_peak_rss();
        let start_kb = rss_kb();
        let (d, ticks, opened) = measure(false, || Engine::open(ws.config.clone()));
        let (engine, init) = opened?;
        cold.push(d, ticks);
        cold_peak = cold_peak.max((peak_rss_kb(), start_kb));
        let stats = engine
            .log()
            .index()
            .first_snapshot()
            .and_then(|e| e.data())
            .and_then(|d| d.get("stats"))
            .cloned()
            .unwrap_or_default();
        let usage = engine.store().usage()?;
        let tree = init.baseline.tree_hash;
        let flat = rewind::store::flatten(engine.store(), &tree)?;
        // Ignored directories are never entered; small ignored files such
        // as the `.log` ones are captured on purpose (docs/architecture.md
        // rule 13), so only the directories count as leaks.
        let leaked = flat
            .keys()
            .filter(|p| p.starts_with("node_modules/") || p.starts_with("out/"))
            .count();
        cold_hashed.insert(stats["filesHashed"].as_u64().unwrap_or(0));
        if leaked > 0 {
            failures.push(format!("the baseline captured {leaked} ignored paths"));
        }
        cold_note = format!(
            "{} files / {} captured, {} hashed; store {} in {} objects; paths in ignored directories captured: {}",
            init.baseline.files,
            mb(init.baseline.bytes),
            mb(stats["bytesHashed"].as_u64().unwrap_or(0)),
            mb(usage.bytes),
            usage.objects,
            leaked
        );
        kept = Some((ws, engine));
    }
    let (ws, mut engine) = kept.take().ok_or_else(|| anyhow!("no cold run"))?;
    push_row(
        &mut rows,
        "rewind cold snapshot (first initialize, fresh store)",
        &cold,
        list(&cold_hashed),
        cold_note,
    );
    peaks.push(format!(
        "cold snapshot {}",
        peak_note(cold_peak.1, cold_peak.0)
    ));

    if let Some(n) = args.profile_no_change {
        let mut s = Samples::default();
        let mut hashed = BTreeSet::new();
        for _ in 0..n {
            let (d, ticks, r) = take_snapshot(&mut engine)?;
            s.push(d, ticks);
            hashed.insert(r.stats.files_hashed);
        }
        println!(
            "{n} no-change snapshots: median {} ({}), CPU {} per snapshot, filesHashed {}",
            ms(s.median()),
            s.range(),
            s.cpu(),
            list(&hashed)
        );
        return Ok(());
    }

    // ---- warm-up: page cache, git's index, the engine's in-memory state.
    take_snapshot(&mut engine)?;
    walk_reference(&root, true);
    let git_dirty = if is_git {
        git_status_no_locks(&root)?;
        git_status_porcelain(&root)?.2
    } else {
        0
    };

    // ---- interleaved rounds: rewind no-change vs git status vs reference.
    let mut lstat = Samples::default();
    let mut hash = Samples::default();
    let mut gs = Samples::default();
    let mut gs_nolock = Samples::default();
    let mut nochange = Samples::default();
    let (mut ratio_git, mut ratio_git_nolock, mut ratio_lstat) =
        (Vec::new(), Vec::new(), Vec::new());
    let mut nochange_hashed = BTreeSet::new();
    let mut nochange_changed = false;
    let mut walked = (0, 0);
    let mut nochange_peak = (0, 0);
    for _ in 0..args.runs {
        let (d_lstat, t_lstat, (n_files, _)) = measure(false, || walk_reference(&root, false));
        let (d_hash, t_hash, (_, n_bytes)) = measure(false, || walk_reference(&root, true));
        lstat.push(d_lstat, t_lstat);
        hash.push(d_hash, t_hash);
        walked = (n_files, n_bytes);
        reset_peak_rss();
        let start_kb = rss_kb();
        let (d_nc, t_nc, r) = take_snapshot(&mut engine)?;
        nochange_peak = nochange_peak.max((peak_rss_kb(), start_kb));
        nochange.push(d_nc, t_nc);
        nochange_hashed.insert(r.stats.files_hashed);
        nochange_changed |= r.changed;
        ratio_lstat.push(d_nc.as_secs_f64() / d_lstat.as_secs_f64());
        if is_git {
            let (d_gs, t_gs, _) = git_status_porcelain(&root)?;
            let (d_gsn, t_gsn) = git_status_no_locks(&root)?;
            gs.push(d_gs, t_gs);
            gs_nolock.push(d_gsn, t_gsn);
            ratio_git.push(d_nc.as_secs_f64() / d_gs.as_secs_f64());
            ratio_git_nolock.push(d_nc.as_secs_f64() / d_gsn.as_secs_f64());
        }
    }
    peaks.push(format!(
        "no-change {}",
        peak_note(nochange_peak.1, nochange_peak.0)
    ));
    push_row(
        &mut rows,
        "walk + lstat (reference)",
        &lstat,
        "–".into(),
        format!("{} files", walked.0),
    );
    push_row(
        &mut rows,
        "walk + read + xxh3-128 (reference)",
        &hash,
        "–".into(),
        format!("{} read", mb(walked.1)),
    );
    if is_git {
        push_row(
            &mut rows,
            "`git status --porcelain`",
            &gs,
            "–".into(),
            format!("{git_dirty} lines of output"),
        );
        push_row(
            &mut rows,
            "`GIT_OPTIONAL_LOCKS=0 git status`",
            &gs_nolock,
            "–".into(),
            String::new(),
        );
    }
    push_row(
        &mut rows,
        "rewind no-change snapshot",
        &nochange,
        list(&nochange_hashed),
        format!("changed: {nochange_changed}"),
    );
    if nochange_changed || nochange_hashed.iter().any(|&n| n != 0) {
        failures.push(format!(
            "no-change snapshots hashed {} files (changed: {nochange_changed})",
            list(&nochange_hashed)
        ));
    }

    // ---- restart: a fresh Engine::open resuming the same session file.
    let store_dir = ws
        .config
        .store_dir
        .clone()
        .ok_or_else(|| anyhow!("store dir"))?;
    let cache_file = std::fs::read_dir(store_dir.join("cache"))
        .ok()
        .and_then(|mut rd| rd.next())
        .and_then(|e| e.ok())
        .and_then(|e| e.metadata().ok())
        .map(|m| m.len())
        .unwrap_or(0);
    let mut reopen = Samples::default();
    let mut after_restart = Samples::default();
    let mut reopen_read = Vec::new();
    let mut restart_hashed = BTreeSet::new();
    let mut restart_outside = false;
    let mut restart_peak = (0, 0);
    let mut engine = Some(engine);
    for _ in 0..args.runs {
        drop(engine.take()); // releases the session lock
        let (r0, _) = io_counters();
        reset_peak_rss();
        let start_kb = rss_kb();
        let (d_open, t_open, opened) = measure(false, || Engine::open(ws.config.clone()));
        let (mut e, init) = opened?;
        let (r1, _) = io_counters();
        restart_outside |= !init.resumed
            || init
                .recovered
                .as_ref()
                .is_some_and(|r| r.outside_entry_id.is_some());
        let (d_snap, t_snap, r) = take_snapshot(&mut e)?;
        restart_peak = restart_peak.max((peak_rss_kb(), start_kb));
        reopen.push(d_open, t_open);
        reopen_read.push(r1 - r0);
        after_restart.push(d_snap, t_snap);
        restart_hashed.insert(r.stats.files_hashed);
        engine = Some(e);
    }
    reopen_read.sort_unstable();
    peaks.push(format!(
        "restart {}",
        peak_note(restart_peak.1, restart_peak.0)
    ));
    push_row(
        &mut rows,
        "rewind restart: `Engine::open` resuming the session (stat cache from disk, full scan)",
        &reopen,
        "–".into(),
        format!(
            "reads {} per open (stat cache file {}); edits recorded as outside: {}",
            mb(reopen_read[reopen_read.len() / 2]),
            mb(cache_file),
            restart_outside
        ),
    );
    push_row(
        &mut rows,
        "rewind no-change snapshot, first after restart",
        &after_restart,
        list(&restart_hashed),
        String::new(),
    );
    if restart_outside || restart_hashed.iter().any(|&n| n != 0) {
        failures.push(format!(
            "after a restart: hashed {} files, outside edits recorded: {restart_outside}",
            list(&restart_hashed)
        ));
    }

    // ---- 3 edits in different directories (generated corpus only).
    let mut edit_detail: Vec<String> = Vec::new();
    if corpus.generated {
        let eng = engine.as_mut().ok_or_else(|| anyhow!("engine"))?;
        let mut rng = StdRng::seed_from_u64(args.seed ^ 0xed17);
        let mut used = HashSet::new();
        let mut edits = Samples::default();
        let mut hashed = BTreeSet::new();
        let mut all_match = true;
        let mut per_round = Vec::new();
        let mut wrote = Vec::new();
        let mut edit_peak = (0, 0);
        for round in 0..args.runs {
            let paths = pick_edits(&corpus.files, &mut used, &mut rng);
            for p in &paths {
                edit_file(&root, p, round)?;
            }
            let before = object_files(&store_dir)?;
            let (_, w0) = io_counters();
            reset_peak_rss();
            let start_kb = rss_kb();
            let (d, ticks, r) = take_snapshot(eng)?;
            edit_peak = edit_peak.max((peak_rss_kb(), start_kb));
            let (_, w1) = io_counters();
            let after = object_files(&store_dir)?;
            let new: BTreeSet<String> = after.difference(&before).cloned().collect();
            let (expected, n_dirs) = expected_objects(eng, &r.tree_hash.to_hex(), &paths)?;
            let ok = paths.len() == 3 && new == expected && r.diff.modified.len() == 3;
            all_match &= ok;
            edits.push(d, ticks);
            wrote.push(w1 - w0);
            hashed.insert(r.stats.files_hashed);
            per_round.push(format!("{}+{}", paths.len(), n_dirs));
            edit_detail.push(format!(
                "round {round}: {} | filesHashed {} | new objects {} | expected 3 blobs + {} trees = {} | {}",
                paths.join(", "),
                r.stats.files_hashed,
                new.len(),
                n_dirs,
                paths.len() + n_dirs,
                if ok { "match" } else { "MISMATCH" }
            ));
            if !ok {
                let extra: Vec<_> = new.difference(&expected).collect();
                let missing: Vec<_> = expected.difference(&new).collect();
                edit_detail.push(format!("  unexpected: {extra:?}; not written: {missing:?}"));
            }
        }
        wrote.sort_unstable();
        peaks.push(format!("3-edit {}", peak_note(edit_peak.1, edit_peak.0)));
        push_row(
            &mut rows,
            "rewind snapshot after editing 3 files",
            &edits,
            list(&hashed),
            format!(
                "new objects == 3 blobs + trees on their paths ({} per round): {}; {} written per snapshot",
                per_round.join(", "),
                if all_match { "yes, every round" } else { "NO" },
                mb(wrote[wrote.len() / 2]),
            ),
        );
        if !all_match || hashed.iter().any(|&n| n != 3) {
            failures.push(format!(
                "3-edit snapshots: filesHashed {}, objects as expected: {all_match}",
                list(&hashed)
            ));
        }
    }

    // ---- the watcher (inotify): the same session reopened with `watch`.
    // The open's full scan arms it; later snapshots look only at what the
    // kernel reported.
    let mut watch_ratio_git = Vec::new();
    let mut watch_ratio_nolock = Vec::new();
    {
        drop(engine.take());
        let mut config = ws.config.clone();
        config.watch = true;
        let (mut e, _) = Engine::open(config)?;
        take_snapshot(&mut e)?;
        let mut nc = Samples::default();
        let mut nc_hashed = BTreeSet::new();
        let mut nc_changed = false;
        for _ in 0..args.runs {
            let (d, t, r) = take_snapshot(&mut e)?;
            nc.push(d, t);
            nc_hashed.insert(r.stats.files_hashed);
            nc_changed |= r.changed;
            if is_git {
                let (d_gs, _, _) = git_status_porcelain(&root)?;
                let (d_gsn, _) = git_status_no_locks(&root)?;
                watch_ratio_git.push(d.as_secs_f64() / d_gs.as_secs_f64());
                watch_ratio_nolock.push(d.as_secs_f64() / d_gsn.as_secs_f64());
            }
        }
        push_row(
            &mut rows,
            "rewind no-change snapshot, watcher on",
            &nc,
            list(&nc_hashed),
            format!("changed: {nc_changed}"),
        );
        if nc_changed || nc_hashed.iter().any(|&n| n != 0) {
            failures.push(format!(
                "watcher no-change snapshots hashed {} files (changed: {nc_changed})",
                list(&nc_hashed)
            ));
        }
        if corpus.generated {
            let mut rng = StdRng::seed_from_u64(args.seed ^ 0x3a7c);
            let mut used = HashSet::new();
            let mut edits = Samples::default();
            let mut hashed = BTreeSet::new();
            let mut seen_all = true;
            for round in 0..args.runs {
                let paths = pick_edits(&corpus.files, &mut used, &mut rng);
                for p in &paths {
                    edit_file(&root, p, round + 1000)?;
                }
                let (d, t, r) = take_snapshot(&mut e)?;
                edits.push(d, t);
                hashed.insert(r.stats.files_hashed);
                let want: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
                let got: BTreeSet<&str> = r.diff.modified.iter().map(|p| p.as_str()).collect();
                seen_all &= want == got;
            }
            push_row(
                &mut rows,
                "rewind snapshot after editing 3 files, watcher on",
                &edits,
                list(&hashed),
                format!("the 3 edits found every round: {seen_all}"),
            );
            if !seen_all {
                failures.push("the watcher missed an edit".into());
            }
        }
    }

    // ---- report.
    println!();
    println!("| measurement | median | min–max | CPU/run | filesHashed | notes |");
    println!("|---|---:|---:|---:|---:|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            r.name,
            ms(r.samples.median()),
            r.samples.range(),
            r.samples.cpu(),
            r.hashed,
            r.notes
        );
    }
    println!();
    println!("ratios (median of the per-round ratios; rounds interleave the measurements):");
    if is_git {
        println!(
            "  rewind no-change / git status --porcelain        = {:.2}",
            median_f64(&ratio_git)
        );
        println!(
            "  rewind no-change / GIT_OPTIONAL_LOCKS=0 git status = {:.2}",
            median_f64(&ratio_git_nolock)
        );
    }
    println!(
        "  rewind no-change / walk + lstat                  = {:.2}",
        median_f64(&ratio_lstat)
    );
    if is_git && !watch_ratio_git.is_empty() {
        println!(
            "  rewind no-change, watcher on / git status --porcelain        = {:.3}",
            median_f64(&watch_ratio_git)
        );
        println!(
            "  rewind no-change, watcher on / GIT_OPTIONAL_LOCKS=0 git status = {:.3}",
            median_f64(&watch_ratio_nolock)
        );
    }
    println!(
        "  rewind cold / walk + read + xxh3 (medians)       = {:.1}",
        cold.median().as_secs_f64() / hash.median().as_secs_f64()
    );
    println!();
    println!(
        "peak RSS (VmHWM, reset before each phase): {}",
        peaks.join("; ")
    );
    if !edit_detail.is_empty() {
        println!();
        println!("3-edit rounds:");
        for l in &edit_detail {
            println!("  {l}");
        }
    }
    println!();
    println!("total benchmark time {}", ms(t_all.elapsed()));
    println!("removing the corpus and the stores…");
    let cleanup = Instant::now();
    drop(engine);
    drop(ws);
    drop(old_stores);
    let generated = corpus.generated;
    drop(corpus);
    println!("cleanup took {}", ms(cleanup.elapsed()));
    if generated && !failures.is_empty() {
        bail!(
            "required properties do not hold:\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(())
}
