//! The plan-then-confirm write of the front ends that open the session per
//! call (`rewind mcp`, `rewind ui`, and `rewind restore` / `undo`, which
//! plan on a read-only view and write after the person says yes): a plan
//! first, with a token bound to the plan, the arguments, the files on disk
//! and the session's leaf, then the write only with a token that still
//! matches — so what is written is what the plan showed.

use rewind::engine::{Engine, EngineError};
use rewind::session::EntryId;
use rewind::sidecar::convert::{to_json, ToWire};
use rewind::store::ObjectId;
use serde::Serialize;
use serde_json::{json, Value};

use crate::app::project::FrontError;

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
    working_tree: &ObjectId,
    leaf: Option<&EntryId>,
) -> Result<String, FrontError> {
    let text = serde_json::to_string(&json!({
        "op": op,
        "plan": plan,
        "workingTreeHash": working_tree.to_hex(),
        // "" for no leaf, as the wire spells it, so tokens read as before.
        "leafId": leaf.map_or("", EntryId::as_str),
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
        working_tree: ObjectId,
        stale: bool,
    },
}

/// A plan and the token that confirms it.
pub struct Planned<T> {
    pub plan: T,
    pub token: String,
    /// The files on disk the plan was made against.
    pub working_tree: ObjectId,
}

/// The first step alone: `run(engine, true)` plans, and the token binds
/// the plan to `op` (with the session), the files on disk and the session's
/// leaf. On any engine — `rewind restore` plans on a read-only view, then
/// confirms with [`two_step`] on the session opened for writing.
pub fn plan<T: ToWire<Wire: Serialize> + Clone>(
    engine: &mut Engine,
    op: &Value,
    run: &impl Fn(&mut Engine, bool) -> Result<T, EngineError>,
) -> Result<Planned<T>, FrontError> {
    let mut op = op.clone();
    op["session"] = json!(engine.session_file().display().to_string());
    let working = engine.working_tree_hash()?;
    let leaf = engine.get_tree()?.leaf_id;
    let plan = run(engine, true)?;
    let token = plan_token(&op, &to_value(&plan)?, &working, leaf.as_ref())?;
    Ok(Planned {
        plan,
        token,
        working_tree: working,
    })
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
    let Planned {
        plan,
        token: fresh,
        working_tree,
    } = plan(engine, &op, &run)?;
    match token {
        Some(t) if constant_time_eq(t.as_bytes(), fresh.as_bytes()) => {
            Ok(Step::Done(run(engine, false)?))
        }
        given => Ok(Step::Plan {
            plan,
            token: fresh,
            working_tree,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_change_with_any_part() {
        let op = json!({"tool": "restore", "target": "a"});
        let plan = json!({"restored": ["x"]});
        let l = EntryId::from_input("l");
        let w = ObjectId::of(b"w");
        let t = plan_token(&op, &plan, &w, Some(&l)).unwrap();
        assert_eq!(t.len(), 32);
        assert_eq!(t, plan_token(&op, &plan, &w, Some(&l)).unwrap());
        assert_ne!(
            t,
            plan_token(&json!({"tool": "undo"}), &plan, &w, Some(&l)).unwrap()
        );
        assert_ne!(t, plan_token(&op, &json!({}), &w, Some(&l)).unwrap());
        assert_ne!(
            t,
            plan_token(&op, &plan, &ObjectId::of(b"w2"), Some(&l)).unwrap()
        );
        assert_ne!(
            t,
            plan_token(&op, &plan, &w, Some(&EntryId::from_input("l2"))).unwrap()
        );
    }

    #[test]
    fn constant_time_eq_is_eq() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }
}
