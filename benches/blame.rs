//! `get_file_blame` on a long history (issue 14, point 3: 1,000 checkpoints
//! of a 5,000-line file within a second), against `git blame` on a git
//! repository with the same history (one commit per checkpoint), both in
//! this process's run. Cold is a freshly opened engine (nothing cached);
//! warm is the same request again; +1 is a request after one more
//! checkpoint (the cached origins are carried one step).
//!
//! `cargo bench --bench blame` (release build). `REWIND_BENCH_CHECKPOINTS`
//! (default 1000), `REWIND_BENCH_LINES` (default 5000) and
//! `REWIND_BENCH_RUNS` (default 5) scale it; `cargo test --benches` runs a
//! small smoke version.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use rewind::engine::api::{FileBlameParams, SnapshotKind, SnapshotParams};
use rewind::engine::{Engine, EngineConfig};
use rewind::working_copy::ScanOptions;

#[path = "common/measure.rs"]
mod measure;
use measure::{median_of, ms};

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("git")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .current_dir(dir)
        .args(args)
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn config(root: &Path, dir: &Path) -> EngineConfig {
    EngineConfig {
        cwd: Some(root.to_path_buf()),
        session_file: Some(dir.join("session.jsonl")),
        store_dir: Some(dir.join("store")),
        scan: ScanOptions::default(),
        fsync: false,
        watch: false,
        resume: Default::default(),
    }
}

fn env_or(name: &str, smoke: usize, full: usize, is_smoke: bool) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if is_smoke { smoke } else { full })
}

fn blame(engine: &mut Engine) -> Result<usize> {
    let r = engine.get_file_blame(FileBlameParams {
        path: rewind::repo_path::RepoPath::parse("big.txt")?,
        at: None,
    })?;
    Ok(r.lines.len())
}

fn main() -> Result<()> {
    // `cargo bench` passes --bench; `cargo test --benches` does not.
    let smoke = !std::env::args().any(|a| a == "--bench")
        || std::env::var_os("REWIND_BENCH_SMOKE").is_some();
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let checkpoints = env_or("REWIND_BENCH_CHECKPOINTS", 30, 1000, smoke);
    let lines = env_or("REWIND_BENCH_LINES", 200, 5000, smoke);
    let runs = env_or("REWIND_BENCH_RUNS", 2, 5, smoke);

    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("project");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&root)?;
    std::fs::create_dir_all(&state)?;
    let mut rng = StdRng::seed_from_u64(14);
    let mut text: Vec<String> = (0..lines)
        .map(|i| format!("line {i} of the file"))
        .collect();
    let file = root.join("big.txt");
    std::fs::write(&file, text.join("\n") + "\n")?;
    git(&root, &["init", "-q"])?;
    git(&root, &["add", "big.txt"])?;
    git(&root, &["commit", "-qm", "baseline"])?;

    // The history: each checkpoint edits, inserts or deletes a few lines.
    let started = Instant::now();
    let (mut engine, _) = Engine::open(config(&root, &state))?;
    for c in 0..checkpoints {
        for _ in 0..3 {
            let at = rng.gen_range(0..text.len());
            match rng.gen_range(0..4) {
                0 => text.insert(at, format!("inserted by checkpoint {c}")),
                1 if text.len() > lines / 2 => {
                    text.remove(at);
                }
                _ => text[at] = format!("edited by checkpoint {c}"),
            }
        }
        std::fs::write(&file, text.join("\n") + "\n")?;
        engine.snapshot(SnapshotParams {
            kind: Some(SnapshotKind::Turn),
            ..Default::default()
        })?;
        git(&root, &["commit", "-qam", &format!("checkpoint {c}")])?;
    }
    drop(engine);
    println!(
        "history: {checkpoints} checkpoints of a {lines}-line file (built in {})",
        ms(started.elapsed())
    );

    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let mut git_blame = Vec::new();
    let mut n_lines = 0;
    for _ in 0..runs {
        let mut engine = Engine::open_read_only(config(&root, &state))?;
        let t = Instant::now();
        n_lines = blame(&mut engine)?;
        cold.push(t.elapsed());
        let t = Instant::now();
        blame(&mut engine)?;
        warm.push(t.elapsed());
        let t = Instant::now();
        git(&root, &["blame", "-s", "big.txt"])?;
        git_blame.push(t.elapsed());
    }
    // One more checkpoint: the next request starts from the cached origins.
    let (mut engine, _) = Engine::open(config(&root, &state))?;
    blame(&mut engine)?;
    let mut plus_one = Vec::new();
    for c in 0..runs {
        let at = c % text.len();
        text[at] = format!("edited by the extra checkpoint {c}");
        std::fs::write(&file, text.join("\n") + "\n")?;
        engine.snapshot(SnapshotParams {
            kind: Some(SnapshotKind::Turn),
            ..Default::default()
        })?;
        let t = Instant::now();
        blame(&mut engine)?;
        plus_one.push(t.elapsed());
    }
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let (c, w, p, g) = (
        median_of(&cold),
        median_of(&warm),
        median_of(&plus_one),
        median_of(&git_blame),
    );
    println!("get_file_blame of {n_lines} lines, medians of {runs} runs:");
    println!(
        "  cold (new engine)      {:>10}  {:.2}x git blame",
        ms(c),
        ratio(c, g)
    );
    println!(
        "  warm (same request)    {:>10}  {:.2}x git blame",
        ms(w),
        ratio(w, g)
    );
    println!(
        "  after one checkpoint   {:>10}  {:.2}x git blame",
        ms(p),
        ratio(p, g)
    );
    println!("  git blame -s           {:>10}", ms(g));
    Ok(())
}
