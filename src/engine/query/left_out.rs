//! What a checkpoint left out (docs/architecture.md rule 14): the paths it
//! found but did not capture — too large, unreadable, special, a path too
//! long, changing while read — which its tree records as present, not
//! captured, and the ignored files over the per-directory cap, which only
//! its record's `stats.untracked` names (rule 13: they are not in the
//! tree). A person asks this to know what a restore to it cannot bring
//! back (`rewind status`, the page).

use crate::engine::api::{Uncaptured, UncapturedReason};
use crate::engine::{Engine, Result};
use crate::repo_path::RepoPath;
use crate::session::records::StepSnapshot;
use crate::session::EntryId;
use crate::store::EntryKind;

/// `Engine::left_out` (the door in engine/mod.rs says what it does).
pub(crate) fn left_out(engine: &mut Engine, at: &EntryId) -> Result<Vec<Uncaptured>> {
    let Some((entry, tree)) = engine.checkpoint_tree(at)? else {
        return Ok(Vec::new());
    };
    let recorded: Vec<Uncaptured> = entry
        .record::<StepSnapshot>()
        .map(|s| s.stats.untracked)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|u| {
            let reason = UncapturedReason::parse(&u.reason)?;
            // The others are in the tree, below.
            if reason != UncapturedReason::IgnoredOverCap {
                return None;
            }
            match RepoPath::parse(&u.path) {
                Ok(path) => Some(Uncaptured { path, reason }),
                // A recorded line is history, not input to refuse: a path
                // this build cannot type (another build's, or a hand-edited
                // file) is left out of the answer, said in the log, and the
                // rest is still shown.
                Err(err) => {
                    tracing::warn!(%err, entry = %at, "a recorded left-out path is not a project path; not shown");
                    None
                }
            }
        })
        .collect();
    let flat = engine.flat(Some(tree))?;
    let mut out: Vec<Uncaptured> = flat
        .iter()
        .filter_map(|(path, e)| match e.kind {
            EntryKind::Uncaptured(reason) => Some(Uncaptured {
                path: crate::engine::result_path(path),
                reason,
            }),
            _ => None,
        })
        .chain(recorded)
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}
