//! The remote store against a real S3 server (Garage on 127.0.0.1, started
//! and stopped here; `.ci/garage install` builds it), printing the figures
//! of issue 24's targets as ratios against baselines run in the same
//! process with the same client (docs/benchmarks.md "Remote"):
//!
//! 1. the first push of a baseline: its requests against one per 4 MiB of
//!    packed data, and its time against uploading the same bytes as one
//!    object;
//! 2. a 3-edit checkpoint pushed: requests, and bytes sent against its new
//!    objects' compressed size;
//! 3. a full checkpoint restored on a machine with an empty store (pull +
//!    restore into an empty directory) against the local restore of the
//!    same checkpoint plus downloading its packed bytes.
//!
//! `cargo bench --bench remote` measures a generated repository-shaped
//! tree (`REWIND_BENCH_FILES`, default 50000; `REWIND_BENCH_BYTES`, default
//! 300 MB); `REWIND_BENCH_DIR=PATH` copies a real directory instead.
//! `REWIND_BENCH_RUNS` (default 3) rounds of each measurement, medians
//! printed. Nothing is asserted on a time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

#[path = "common/corpus.rs"]
mod corpus;
#[path = "common/measure.rs"]
mod measure;
use measure::{median_of, ms};

/// What the Garage harness of the tests needs of their `common` module.
mod common {
    pub fn skip_or_fail(why: &str) {
        panic!("{why}");
    }
}
// The tests' own harness: the same server, set up the same way. Its tests
// are not compiled here, so their imports go unused.
#[path = "../tests/integration/garage.rs"]
#[allow(dead_code, unused_imports)]
mod garage;
use garage::Garage;

struct Env {
    vars: Vec<(String, String)>,
}

impl Env {
    fn rewind(&self, home: &Path, cwd: &Path, args: &[&str]) -> Result<(Duration, String)> {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_rewind"))
            .args(args)
            .current_dir(cwd)
            .env("REWIND_HOME", home)
            .env_remove("REWIND_REMOTE")
            .envs(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .context("running rewind")?;
        let took = start.elapsed();
        if !out.status.success() {
            bail!("rewind {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok((
            took,
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        ))
    }
}

/// The number before `word` in a push or pull line ("12 request(s)").
fn number_before(text: &str, word: &str) -> Result<u64> {
    let at = text
        .find(word)
        .with_context(|| format!("no {word:?} in {text}"))?;
    let before = text[..at].trim_end();
    let start = before
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    before[start..]
        .parse()
        .with_context(|| format!("no number before {word:?} in {text}"))
}

/// The checkpoint id `rewind run` reported on stderr.
fn checkpoint_of(out: &str) -> Result<String> {
    let at = out.find("(checkpoint ").context("no checkpoint")? + "(checkpoint ".len();
    Ok(out[at..at + 8].to_string())
}

fn session_file(home: &Path) -> Result<PathBuf> {
    for p in std::fs::read_dir(home.join("projects"))?.flatten() {
        for s in std::fs::read_dir(p.path().join("sessions"))?.flatten() {
            if s.path().extension().is_some_and(|x| x == "jsonl") {
                return Ok(s.path());
            }
        }
    }
    bail!("no session in {}", home.display())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    let st = Command::new("cp").arg("-a").arg(from).arg(to).status()?;
    if !st.success() {
        bail!("cp -a {} {}", from.display(), to.display());
    }
    Ok(())
}

fn main() -> Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let runs: usize = std::env::var("REWIND_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let files: usize = std::env::var("REWIND_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let bytes: u64 = std::env::var("REWIND_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000_000);
    let work = tempfile::tempdir()?;
    let source = work.path().join("source");
    match std::env::var_os("REWIND_BENCH_DIR") {
        Some(dir) => copy_dir(Path::new(&dir), &source)?,
        None => {
            std::fs::create_dir_all(&source)?;
            corpus::write_tree(&source, files, bytes, 24, "remote")?;
        }
    }
    let garage = Garage::start().context("garage")?;
    let env = Env {
        vars: vec![
            ("AWS_ACCESS_KEY_ID".into(), garage.access_key_id().into()),
            (
                "AWS_SECRET_ACCESS_KEY".into(),
                garage.secret_access_key().into(),
            ),
            ("AWS_ENDPOINT".into(), garage.endpoint()),
            ("AWS_REGION".into(), garage.region().into()),
            ("AWS_ALLOW_HTTP".into(), "true".into()),
        ],
    };
    let client = garage::client(&garage);
    let rt = garage::runtime();

    let (mut first_push, mut one_put, mut small_push) = (Vec::new(), Vec::new(), Vec::new());
    let (mut remote_restore, mut local_restore, mut download) =
        (Vec::new(), Vec::new(), Vec::new());
    let mut figures = String::new();
    for run in 0..runs {
        let round = work.path().join(format!("run{run}"));
        let project = round.join("project");
        std::fs::create_dir_all(&round)?;
        copy_dir(&source, &project)?;
        let home_a = round.join("home-a");
        let url = format!("s3://{}/bench-{run}", garage.bucket());
        env.rewind(&home_a, &project, &["run", "--", "true"])?;
        env.rewind(&home_a, &project, &["remote", "add", "origin", &url])?;

        // 1. The first push, against one PUT of as many bytes.
        let (took, out) = env.rewind(&home_a, &project, &["push"])?;
        first_push.push(took);
        let sent = number_before(&out, "bytes sent")?;
        let packed = number_before(&out, "bytes), ")?;
        let requests = number_before(&out, "request(s)")?;
        let blob = vec![0x5au8; sent as usize];
        let key = ObjectPath::from(format!("one-object-{run}"));
        let start = Instant::now();
        rt.block_on(client.put(&key, PutPayload::from(blob)))?;
        one_put.push(start.elapsed());
        if run == 0 {
            figures += &format!(
                "first push: {requests} requests for {} MiB packed ({:.1} per 4 MiB); {} bytes sent\n",
                packed >> 20,
                requests as f64 / (packed as f64 / (4 << 20) as f64),
                sent
            );
        }

        // 2. Three files edited in one turn, pushed.
        let edit = "echo edited >> README.md; f=$(find . -name '*.rs' -o -name '*.txt' -o -name '*.h' | grep -v '^./README' | head -2); for x in $f; do echo edited >> $x; done";
        let (_, out) = env.rewind(&home_a, &project, &["run", "--", "sh", "-c", edit])?;
        let checkpoint = checkpoint_of(&out)?;
        let (took, out) = env.rewind(&home_a, &project, &["push"])?;
        small_push.push(took);
        if run == 0 {
            let new_packed = number_before(&out, "bytes), ")?;
            figures += &format!(
                "3-edit push: {} requests, {} bytes sent for {} bytes of new packed objects ({:.2}x), {} bytes of log\n",
                number_before(&out, "request(s)")?,
                number_before(&out, "bytes sent")?,
                new_packed,
                number_before(&out, "bytes sent")? as f64 / new_packed.max(1) as f64,
                number_before(&out, "bytes of log")?
            );
        }

        // 3. That checkpoint on machine B (empty store, empty directory)
        // against the local restore of it plus downloading its packs.
        let home_b = round.join("home-b");
        let empty_b = round.join("b");
        std::fs::create_dir_all(&empty_b)?;
        let id = session_file(&home_a)?
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.rsplit_once('_'))
            .map(|(_, id)| id.to_owned())
            .context("session id")?;
        let start = Instant::now();
        env.rewind(&home_b, &empty_b, &["pull", "--remote", &url, &id])?;
        let file_b = session_file(&home_b)?;
        env.rewind(
            &home_b,
            &empty_b,
            &[
                "restore",
                "--session",
                &file_b.display().to_string(),
                &checkpoint,
                "--yes",
            ],
        )?;
        remote_restore.push(start.elapsed());

        let empty_c = round.join("c");
        std::fs::create_dir_all(&empty_c)?;
        let copy = round.join("copy.jsonl");
        std::fs::copy(session_file(&home_a)?, &copy)?;
        let store_a = session_file(&home_a)?
            .parent()
            .and_then(Path::parent)
            .context("store")?
            .to_path_buf();
        let start = Instant::now();
        env.rewind(
            &home_a,
            &empty_c,
            &[
                "restore",
                "--store",
                &store_a.display().to_string(),
                "--session",
                &copy.display().to_string(),
                &checkpoint,
                "--yes",
            ],
        )?;
        local_restore.push(start.elapsed());
        let start = Instant::now();
        rt.block_on(async {
            use futures_util::TryStreamExt;
            let packs: Vec<_> = client
                .list(Some(&ObjectPath::from(format!("bench-{run}/packs"))))
                .try_collect()
                .await?;
            for p in packs
                .iter()
                .filter(|p| p.location.as_ref().ends_with(".pack"))
            {
                client.get(&p.location).await?.bytes().await?;
            }
            Ok::<(), object_store::Error>(())
        })?;
        download.push(start.elapsed());
        if run == 0 {
            let a = measure_tree(&empty_b)?;
            let c = measure_tree(&empty_c)?;
            if a != c {
                bail!("the remote restore and the local restore differ ({a:?} vs {c:?})");
            }
            figures += &format!(
                "restored checkpoint: {} files, {} bytes (both restores identical)\n",
                a.0, a.1
            );
        }
        std::fs::remove_dir_all(&round)?;
    }
    let (fp, op) = (median_of(&first_push), median_of(&one_put));
    let (rr, lr, dl) = (
        median_of(&remote_restore),
        median_of(&local_restore),
        median_of(&download),
    );
    println!("{figures}");
    println!("medians of {runs} runs:");
    println!(
        "first push            {}  one PUT of the same bytes {}  ratio {:.2}x (target <= 1.5x)",
        ms(fp),
        ms(op),
        fp.as_secs_f64() / op.as_secs_f64()
    );
    println!("3-edit push           {}", ms(median_of(&small_push)));
    println!(
        "restore from remote   {}  local restore {} + download {} = {}  ratio {:.2}x (target <= 2x)",
        ms(rr),
        ms(lr),
        ms(dl),
        ms(lr + dl),
        rr.as_secs_f64() / (lr + dl).as_secs_f64()
    );
    Ok(())
}

/// (files, bytes) of every regular file below `root`.
fn measure_tree(root: &Path) -> Result<(u64, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)?.flatten() {
            let m = e.path().symlink_metadata()?;
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() {
                files += 1;
                bytes += m.len();
            }
        }
    }
    Ok((files, bytes))
}
