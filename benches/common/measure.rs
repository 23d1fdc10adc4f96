//! Timing and process-counter helpers both benchmarks measure with
//! (`benches/snapshot.rs`, `benches/shadow_git.rs`).
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Wall times of the runs of one measurement, and the CPU time they used.
#[derive(Default, Clone)]
pub struct Samples {
    pub wall: Vec<Duration>,
    pub cpu_ticks: u64,
}

impl Samples {
    pub fn push(&mut self, d: Duration, cpu_ticks: u64) {
        self.wall.push(d);
        self.cpu_ticks += cpu_ticks;
    }
    pub fn median(&self) -> Duration {
        median_of(&self.wall)
    }
    pub fn range(&self) -> String {
        let mut v = self.wall.clone();
        v.sort();
        match (v.first(), v.last()) {
            (Some(a), Some(b)) => format!("{}–{}", ms(*a), ms(*b)),
            _ => "–".into(),
        }
    }
    /// Mean CPU time (user + system, all threads) per run.
    pub fn cpu(&self) -> String {
        if self.wall.is_empty() {
            return "–".into();
        }
        let total = Duration::from_millis(self.cpu_ticks * 1000 / CLK_TCK);
        ms(total / self.wall.len() as u32)
    }
}

/// `sysconf(_SC_CLK_TCK)`: 100 on every Linux this runs on.
pub const CLK_TCK: u64 = 100;

/// CPU time in clock ticks: (this process, all threads; its waited-for
/// children), from /proc/self/stat fields 14+15 and 16+17.
pub fn cpu_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|r| r.1).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    if f.len() < 15 {
        return (0, 0);
    }
    (f[11] + f[12], f[13] + f[14])
}

/// Run `f`, returning its wall time and the CPU ticks it used (this
/// process's own, or with `child` those of the subprocesses it waited for).
pub fn measure<T>(child: bool, f: impl FnOnce() -> T) -> (Duration, u64, T) {
    let c0 = cpu_ticks();
    let t = Instant::now();
    let out = f();
    let d = t.elapsed();
    let c1 = cpu_ticks();
    let ticks = if child { c1.1 - c0.1 } else { c1.0 - c0.0 };
    (d, ticks, out)
}

pub fn median_of(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    match v.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

pub fn ms(d: Duration) -> String {
    let m = d.as_secs_f64() * 1e3;
    if m >= 10_000.0 {
        format!("{:.1} s", m / 1e3)
    } else if m >= 100.0 {
        format!("{m:.0} ms")
    } else if m >= 1.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.2} ms")
    }
}

pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn proc_field(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

pub fn peak_rss_kb() -> u64 {
    proc_field("/proc/self/status", "VmHWM:").unwrap_or(0)
}

pub fn median_f64(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Bytes this process has read / written through read(2)/write(2)-like
/// calls (page cache included), all threads.
pub fn io_counters() -> (u64, u64) {
    (
        proc_field("/proc/self/io", "rchar:").unwrap_or(0),
        proc_field("/proc/self/io", "wchar:").unwrap_or(0),
    )
}

/// Reset the peak-RSS mark (VmHWM) to the current RSS, so each phase
/// reports its own peak. Best effort.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

pub fn rss_kb() -> u64 {
    proc_field("/proc/self/status", "VmRSS:").unwrap_or(0)
}

/// Numbers as a comma-separated list (e.g. the filesHashed values seen).
pub fn list(s: &BTreeSet<u64>) -> String {
    s.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
