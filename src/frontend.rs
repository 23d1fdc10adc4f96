//! What the front ends that open the session per call (`rewind mcp`,
//! `rewind ui`) share, so that they cannot drift apart: where the session
//! is, how it is opened for a read (no lock, nothing appended) or a write
//! (locked like a hook, waiting a little for one that holds it), and the
//! two-step write: a plan first, with a token bound to the plan, the
//! arguments, the files on disk and the session's leaf, then the write only
//! with a token that still matches.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rewind::engine::api::{Point, RangeParams, RestoreResult};
use rewind::engine::{Engine, EngineError, ResumeMode};
use rewind::repo_path::RepoPath;
use rewind::server::convert::{to_json, ToWire};
use serde::Serialize;
use serde_json::{json, Value};

use crate::Location;

/// How a call opens the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read-only: no lock, nothing appended.
    Read,
    /// Locked for the call, like a hook: edits since the last entry are
    /// left for the next snapshot (not recorded as `outside`).
    Write,
}

/// Why a session could not be opened or a call failed.
#[derive(Debug)]
pub enum FrontError {
    /// Another process records the session (a live sidecar, `rewind
    /// watch`, a hook): the message says so and what to do.
    Locked(String),
    /// The engine refused (bad ids, paths, arguments, damaged store…).
    Engine(EngineError),
    /// Our own failure (no session, serialization…).
    Internal(String),
}

impl std::fmt::Display for FrontError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrontError::Locked(m) | FrontError::Internal(m) => f.write_str(m),
            FrontError::Engine(e) => write!(f, "{e}"),
        }
    }
}

impl From<EngineError> for FrontError {
    fn from(e: EngineError) -> Self {
        FrontError::Engine(e)
    }
}

/// The session `at` names: `--session`, else the store's newest.
pub fn session_of(at: &Location) -> Result<PathBuf, FrontError> {
    let config = crate::cli_unhooked::locate_newest(at, false)
        .map_err(|e| FrontError::Internal(format!("{e:#}")))?;
    config
        .session_file
        .ok_or_else(|| FrontError::Internal("the project has no session".into()))
}

/// Open the session for one call. A write waits up to `lock_wait` for a
/// hook or sidecar that holds the session, then fails with
/// [`FrontError::Locked`].
pub fn open(at: &Location, access: Access, lock_wait: Duration) -> Result<Engine, FrontError> {
    let mut config = crate::cli_unhooked::locate_newest(at, false)
        .map_err(|e| FrontError::Internal(format!("{e:#}")))?;
    if config.session_file.is_none() {
        return Err(FrontError::Internal(
            "the project has no session any more".into(),
        ));
    }
    match access {
        Access::Read => Ok(Engine::open_read_only(config)?),
        Access::Write => {
            config.resume = ResumeMode::Continue;
            let start = Instant::now();
            loop {
                match Engine::open(config.clone()) {
                    Ok((engine, _)) => return Ok(engine),
                    Err(e) if e.is_locked() && start.elapsed() < lock_wait => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(e) if e.is_locked() => {
                        return Err(FrontError::Locked(format!(
                            "{e}: a sidecar (`rewind serve`), `rewind watch` or a hook is recording this session; \
                             a write must go through it (or wait until it lets go, then try again)"
                        )))
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
}

fn to_value<T>(v: &T) -> Result<Value, FrontError>
where
    T: ToWire + Clone,
    T::Wire: Serialize,
{
    to_json(v).map_err(|e| FrontError::Internal(format!("serializing: {e}")))
}

/// The token that confirms a plan: bound to the operation and its
/// arguments (and the session), the plan, the files on disk when it was
/// made and the session's leaf (a checkpoint recorded since the plan makes
/// it stale too).
pub fn plan_token(
    op: &Value,
    plan: &Value,
    working_tree: &str,
    leaf: &str,
) -> Result<String, FrontError> {
    let text = serde_json::to_string(&json!({
        "op": op,
        "plan": plan,
        "workingTreeHash": working_tree,
        "leafId": leaf,
    }))
    .map_err(|e| FrontError::Internal(format!("serializing the plan: {e}")))?;
    Ok(format!(
        "{:032x}",
        xxhash_rust::xxh3::xxh3_128(text.as_bytes())
    ))
}

/// The outcome of one call of a two-step write.
pub enum Step<T> {
    /// The token matched: this is what was done.
    Done(T),
    /// Nothing was written: the current plan and its token. `stale` when a
    /// token was given and no longer matches.
    Plan {
        plan: T,
        token: String,
        working_tree: String,
        stale: bool,
    },
}

/// The two steps of a write: `run(engine, true)` plans, `run(engine,
/// false)` executes. Without `token`, or with one that no longer matches
/// the plan, the files on disk and the session, nothing is written and the
/// answer is the (new) plan with its token.
pub fn two_step<T: ToWire<Wire: Serialize> + Clone>(
    engine: &mut Engine,
    op: Value,
    token: Option<&str>,
    run: impl Fn(&mut Engine, bool) -> Result<T, EngineError>,
) -> Result<Step<T>, FrontError> {
    let mut op = op;
    op["session"] = json!(engine.session_file().display().to_string());
    let working = engine.working_tree_hash()?;
    let leaf = engine.get_tree()?.leaf_id;
    let plan = run(engine, true)?;
    let fresh = plan_token(&op, &to_value(&plan)?, &working, &leaf)?;
    match token {
        Some(t) if constant_time_eq(t.as_bytes(), fresh.as_bytes()) => {
            Ok(Step::Done(run(engine, false)?))
        }
        given => Ok(Step::Plan {
            plan,
            token: fresh,
            working_tree: working,
            stale: given.is_some(),
        }),
    }
}

/// Compare secrets without leaking where they differ through timing.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A range as people name its ends (entry id, tree hash or `@working`,
/// see `Point::parse`); `to` defaults to the working directory.
pub fn range(from: Option<String>, to: Option<String>) -> RangeParams {
    RangeParams {
        from: from.as_deref().map(Point::parse),
        to: Some(to.as_deref().map_or(Point::Working, Point::parse)),
    }
}

/// A restore plan's per-file actions: write, delete or keep.
pub fn plan_files(plan: &RestoreResult) -> Vec<Value> {
    let mut files = Vec::new();
    for p in &plan.restored {
        files.push(json!({ "path": p.as_str(), "action": "write" }));
    }
    for p in &plan.deleted {
        files.push(json!({ "path": p.as_str(), "action": "delete" }));
    }
    // A dirty file that is skipped is in both lists: one row.
    let kept: std::collections::BTreeSet<&RepoPath> = plan
        .skipped
        .iter()
        .chain(&plan.dirty)
        .filter(|p| !plan.restored.contains(p) && !plan.deleted.contains(p))
        .collect();
    for p in kept {
        match plan.not_captured.iter().find(|u| &u.path == p) {
            Some(u) => files.push(json!({
                "path": p.as_str(),
                "action": "keep",
                "reason": format!("not captured by the target: {}", u.reason.as_str()),
            })),
            None => files.push(json!({ "path": p.as_str(), "action": "keep" })),
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dirty file a restore skips is listed once, as kept (it was listed twice).
    #[test]
    fn a_skipped_dirty_file_is_one_kept_row() {
        let p = |s: &str| RepoPath::parse(s).unwrap();
        let plan = RestoreResult {
            restored: vec![p("a.txt")],
            skipped: vec![p("b.txt")],
            dirty: vec![p("b.txt")],
            ..Default::default()
        };
        assert_eq!(
            plan_files(&plan),
            vec![
                json!({"path": "a.txt", "action": "write"}),
                json!({"path": "b.txt", "action": "keep"}),
            ]
        );
    }

    #[test]
    fn tokens_change_with_any_part() {
        let op = json!({"tool": "restore", "target": "a"});
        let plan = json!({"restored": ["x"]});
        let t = plan_token(&op, &plan, "w", "l").unwrap();
        assert_eq!(t.len(), 32);
        assert_eq!(t, plan_token(&op, &plan, "w", "l").unwrap());
        assert_ne!(
            t,
            plan_token(&json!({"tool": "undo"}), &plan, "w", "l").unwrap()
        );
        assert_ne!(t, plan_token(&op, &json!({}), "w", "l").unwrap());
        assert_ne!(t, plan_token(&op, &plan, "w2", "l").unwrap());
        assert_ne!(t, plan_token(&op, &plan, "w", "l2").unwrap());
    }

    #[test]
    fn constant_time_eq_is_eq() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }
}
