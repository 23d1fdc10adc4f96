//! What a hook could not do. A hook never tells the agent (it must not
//! break the agent's run), so failures go to a log in the project's store —
//! or, when that cannot be written (an unwritable store, a full disk, no
//! project in the payload), to one in rewind's home — and `rewind status`
//! shows them.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use rewind::engine::default_store_dir;
use rewind::store::{Home, Layout};

use super::agent::Agent;
use super::error::HookError;
use super::event::{project_dir, Delivery};
use super::payload::PayloadError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// RFC 3339, UTC.
    pub time: String,
    pub agent: String,
    pub event: String,
    /// The project (the payload's `cwd`), when known.
    pub project: Option<String>,
    pub error: String,
}

/// Append `failure` to the store's log, else to the home log; `false` when
/// neither could be written (then only stderr has it).
pub fn record(store: Option<&Layout>, home: &Home, failure: &Failure) -> bool {
    let Ok(mut line) = serde_json::to_string(failure) else {
        return false;
    };
    line.push('\n');
    let targets = store
        .map(Layout::hook_failures)
        .into_iter()
        .chain(std::iter::once(home.hook_failures()));
    for path in targets {
        if append(&path, line.as_bytes()).is_ok() {
            return true;
        }
    }
    false
}

fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // One write of a short line: lines of concurrent hooks do not interleave.
    f.write_all(bytes)
}

/// The last `n` failures recorded for `project` (in its store, and in the
/// home log), oldest first. Lines that do not parse are skipped.
pub fn recent(store: &Layout, home: &Home, project: &Path, n: usize) -> Vec<Failure> {
    let project = project.to_string_lossy();
    let mut all: Vec<Failure> = [store.hook_failures(), home.hook_failures()]
        .iter()
        .flat_map(read)
        .filter(|f| {
            f.project
                .as_deref()
                .is_none_or(|p| paths_match(p, &project))
        })
        .collect();
    all.sort_by(|a, b| a.time.cmp(&b.time));
    let skip = all.len().saturating_sub(n);
    all.split_off(skip)
}

fn paths_match(recorded: &str, project: &str) -> bool {
    recorded == project
        || std::fs::canonicalize(recorded).is_ok_and(|p| p.to_string_lossy() == project)
}

fn read(path: &PathBuf) -> Vec<Failure> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Record why an event was not recorded, in the store of the project the
/// event would have been recorded in (the one `rewind status` in that
/// project reads), else in rewind's home.
pub fn record_failure(d: &Delivery<'_>, err: &HookError) {
    tracing::warn!(%err, agent = d.agent.name(), "hook event not recorded");
    // The same project and store `handle` uses: the agent's project
    // directory, not the directory a shell tool `cd`ed into.
    let project = d
        .project
        .clone()
        .unwrap_or_else(|| project_dir(d.agent, d.event));
    let store = d.store.clone().or_else(|| {
        project
            .canonicalize()
            .ok()
            .map(|root| default_store_dir(&root))
    });
    write_failure(
        d.agent,
        store.map(|s| Layout::new(&s)).as_ref(),
        &d.event.name,
        Some(project.display().to_string()),
        err,
    );
}

/// Record a payload that did not parse: no project is known, so it goes to
/// rewind's home.
pub fn record_unparsed(agent: Agent, err: &PayloadError) {
    tracing::warn!(%err, agent = agent.name(), "hook event not recorded");
    write_failure(agent, None, "?", None, err);
}

/// Record a hook run for an agent this build does not know (a typo in
/// settings written by hand, or settings of a newer rewind): no payload is
/// read, so it goes to rewind's home, under the name as given.
pub fn record_unknown_agent(name: &str) {
    tracing::warn!(
        agent = name,
        "rewind hook: unknown agent; event not recorded"
    );
    let known: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
    let failure = Failure {
        time: now_rfc3339(),
        agent: name.to_string(),
        event: "?".to_string(),
        project: None,
        error: format!(
            "rewind hook --agent {name}: no such agent (this rewind knows {})",
            known.join(", ")
        ),
    };
    record(None, &Home::from_env(), &failure);
}

fn write_failure(
    agent: Agent,
    store: Option<&Layout>,
    event: &str,
    project: Option<String>,
    err: &dyn std::fmt::Display,
) {
    let failure = Failure {
        time: now_rfc3339(),
        agent: agent.name().to_string(),
        event: event.to_string(),
        project,
        error: err.to_string(),
    };
    record(store, &Home::from_env(), &failure);
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(time: &str, project: Option<&str>) -> Failure {
        Failure {
            time: time.into(),
            agent: "codex".into(),
            event: "PostToolUse".into(),
            project: project.map(str::to_string),
            error: "disk full".into(),
        }
    }

    #[test]
    fn failures_go_to_the_store_else_home_and_are_read_back_per_project() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"));
        let layout = Layout::new(&dir.path().join("store"));
        assert!(record(Some(&layout), &home, &failure("2", Some("/p"))));
        assert!(layout.hook_failures().is_file());
        // An unwritable store: the home log takes it.
        let blocked = Layout::new(&dir.path().join("file"));
        std::fs::write(dir.path().join("file"), "not a directory").unwrap();
        assert!(record(Some(&blocked), &home, &failure("1", Some("/p"))));
        assert!(record(None, &home, &failure("3", None)));
        assert!(record(None, &home, &failure("4", Some("/other"))));
        std::fs::write(layout.hook_failures(), "garbage\n").unwrap_or(());
        let got: Vec<String> = recent(&layout, &home, Path::new("/p"), 10)
            .into_iter()
            .map(|f| f.time)
            .collect();
        assert_eq!(got, ["1", "3"]);
        assert_eq!(recent(&layout, &home, Path::new("/p"), 1).len(), 1);
    }
}
