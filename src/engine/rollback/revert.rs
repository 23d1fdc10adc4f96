//! `revert`: take the changes one checkpoint made (or a range of them) out of
//! the working directory and keep everything that came after — `git revert`
//! for an agent's turn (docs/architecture.md "Revert").
//!
//! Per file, with *before* the file at the checkpoint above the range,
//! *reverted* as the range left it and *current* on disk now: a file already
//! as *before*, or untouched since (*current* = *reverted*), is set to
//! *before*; a text file changed since is merged three ways (ancestor
//! *reverted*, ours *current*, theirs *before*), hunk by hunk; anything else
//! that changed since (binary, symlink, a type change, a path re-occupied
//! after the range deleted it) is skipped. The write goes through the same
//! plan, pre-restore snapshot, journal and unrevert-point as every restore,
//! so `undo` reverts a revert.

use std::collections::BTreeMap;

use super::merge::{self, Merged, Segment};
use super::restore::{entry_eq, parse_filter, Operation, Scanned};
use crate::engine::api::{
    ChangeReason, Conflict, ConflictHunk, ConflictReason, OnConflict, RevertAction, RevertFile,
    RevertOnConflict, RevertParams, RevertResult, RevertStatus,
};
use crate::engine::query::files::{is_binary, MAX_DIFF_BYTES};
use crate::engine::query::line_diff::{self, DiffBudget};
use crate::engine::{result_path, tree_of, Engine, EngineError, Result};
use crate::session::EntryId;
use crate::store::{
    classify, diff_trees, empty_tree_id, ChangeClass, EntryKind, ObjectId, TreeEntry,
};

/// What the revert does to one path.
struct FilePlan {
    status: RevertStatus,
    reason: Option<&'static str>,
    /// The entry to leave at the path (`None`: delete), when it changes.
    outcome: Option<Option<TreeEntry>>,
    /// Content to store before writing (a merge result).
    blob: Option<Vec<u8>>,
    /// With `onConflict: markers`: the file with conflict markers.
    marked: Option<Vec<u8>>,
    conflicts: Vec<ConflictHunk>,
}

impl FilePlan {
    fn clean(outcome: Option<Option<TreeEntry>>) -> Self {
        FilePlan {
            status: RevertStatus::Clean,
            reason: None,
            outcome,
            blob: None,
            marked: None,
            conflicts: Vec::new(),
        }
    }

    fn skip(reason: &'static str) -> Self {
        FilePlan {
            status: RevertStatus::Skip,
            reason: Some(reason),
            ..FilePlan::clean(None)
        }
    }

    fn conflict(reason: Option<&'static str>) -> Self {
        FilePlan {
            status: RevertStatus::Conflict,
            reason,
            ..FilePlan::clean(None)
        }
    }
}

fn is_file(kind: EntryKind) -> bool {
    matches!(kind, EntryKind::File | EntryKind::Executable)
}

/// Why a path of the range is left alone because a side did not capture it.
fn not_captured(class: ChangeClass, now: Option<&TreeEntry>) -> Option<String> {
    match (class, now.and_then(TreeEntry::not_captured)) {
        (ChangeClass::NotCaptured(r), _) => Some(format!(
            "the range's last checkpoint did not capture this file ({})",
            r.as_str()
        )),
        (ChangeClass::Recaptured(r), _) => Some(format!(
            "the checkpoint before the range did not capture this file ({})",
            r.as_str()
        )),
        (_, Some(r)) => Some(format!(
            "it cannot be captured now ({}): left as it is",
            r.as_str()
        )),
        _ => None,
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Engine {
    /// The first and last checkpoint of the range to revert, checked.
    fn revert_range(&self, first: &EntryId, last: Option<&EntryId>) -> Result<(EntryId, EntryId)> {
        let index = self.log.index();
        let last = last.unwrap_or(first);
        for id in [first, last] {
            let e = index
                .get(id)
                .ok_or_else(|| EngineError::UnknownEntry(id.clone()))?;
            if !e.is_tree_recording() || e.recorded_tree().is_none() {
                return Err(EngineError::InvalidParams(format!(
                    "entry {id} records no files (a label, a message, a navigation): name a checkpoint"
                )));
            }
        }
        if !index.is_ancestor(first, last) {
            return Err(EngineError::InvalidParams(format!(
                "{last} does not descend from {first}: a range runs from a checkpoint to a later one on its path"
            )));
        }
        if self.baseline().is_some_and(|b| &b.id == first) {
            return Err(EngineError::InvalidParams(
                "the baseline records the project as rewind found it: it made no change to revert"
                    .into(),
            ));
        }
        Ok((first.clone(), last.clone()))
    }

    /// What reverting one path does (see the module docs): `before` and
    /// `reverted` are its entries above and after the range, `now` on disk.
    fn plan_file(
        &self,
        before: Option<&TreeEntry>,
        reverted: Option<&TreeEntry>,
        now: Option<&TreeEntry>,
        other: &str,
    ) -> Result<FilePlan> {
        if entry_eq(now, before) {
            return Ok(FilePlan::clean(None));
        }
        if entry_eq(now, reverted) {
            return Ok(FilePlan::clean(Some(before.copied())));
        }
        let (Some(before), Some(reverted), Some(now)) = (before, reverted, now) else {
            return Ok(match (before, reverted, now) {
                // Deleted since: nothing of the change is left to take out.
                (_, _, None) => FilePlan::clean(None),
                (_, None, Some(_)) => {
                    FilePlan::skip("the range deleted this file and a new one is there now")
                }
                _ => FilePlan::conflict(Some(
                    "the range created this file and it was changed since: delete it by hand if it should go",
                )),
            });
        };
        let sides = [before, reverted, now];
        if !sides.iter().all(|e| is_file(e.kind)) {
            return Ok(FilePlan::skip(
                "a symlink or a type change, changed since the range",
            ));
        }
        if sides.iter().any(|e| e.size > MAX_DIFF_BYTES) {
            return Ok(FilePlan::skip(
                "too large to merge, and changed since the range",
            ));
        }
        let before_bytes = self.store.get(&before.id)?;
        let reverted_bytes = self.store.get(&reverted.id)?;
        let now_bytes = self.store.get(&now.id)?;
        if [&before_bytes, &reverted_bytes, &now_bytes]
            .iter()
            .any(|b| is_binary(b))
        {
            return Ok(FilePlan::skip("binary, and changed since the range"));
        }
        // The mode (and with it the executable bit) follows the revert unless
        // it was changed since.
        let moded = if (now.kind, now.mode) == (reverted.kind, reverted.mode) {
            before
        } else {
            now
        };
        match merge::revert_text(&reverted_bytes, &now_bytes, &before_bytes) {
            Merged::Clean(bytes) => {
                let entry = TreeEntry {
                    id: ObjectId::of(&bytes),
                    size: bytes.len() as u64,
                    ..*moded
                };
                if entry_eq(Some(&entry), Some(now)) {
                    return Ok(FilePlan::clean(None));
                }
                let blob = (entry.id != before.id).then_some(bytes);
                Ok(FilePlan {
                    blob,
                    ..FilePlan::clean(Some(Some(entry)))
                })
            }
            Merged::Conflicts(segments) => {
                let conflicts = segments
                    .iter()
                    .filter_map(|s| match s {
                        Segment::Conflict {
                            current,
                            reverted,
                            before,
                        } => Some(ConflictHunk {
                            current: lossy(current),
                            reverted: lossy(reverted),
                            before: lossy(before),
                        }),
                        Segment::Text(_) => None,
                    })
                    .collect();
                Ok(FilePlan {
                    marked: Some(merge::with_markers(&segments, other)),
                    conflicts,
                    ..FilePlan::conflict(None)
                })
            }
        }
    }

    /// The unified diff from the file now to what the revert leaves (empty
    /// for binary content).
    fn revert_diff(
        &self,
        path: &str,
        now: Option<&TreeEntry>,
        new: Option<&(TreeEntry, Vec<u8>)>,
        budget: &mut DiffBudget,
    ) -> Result<String> {
        let old = match now {
            Some(e) if e.size <= MAX_DIFF_BYTES => self.store.get(&e.id)?,
            Some(_) => return Ok(String::new()),
            None => Vec::new(),
        };
        let new: &[u8] = new.map(|(_, b)| b.as_slice()).unwrap_or_default();
        if is_binary(&old) || is_binary(new) {
            return Ok(String::new());
        }
        Ok(line_diff::unified(path, &lossy(&old), &lossy(new), 3, budget).text)
    }
}

/// `Engine::revert` (the door in engine/mod.rs says what it does).
pub(crate) fn revert(engine: &mut Engine, p: RevertParams) -> Result<RevertResult> {
    let filter = parse_filter(engine.working_copy.root(), p.files)?;
    let mode = p.on_conflict.unwrap_or_default();
    let preview = p.preview.unwrap_or(false);
    let (first, last) = engine.revert_range(&p.entry_id, p.to_entry_id.as_ref())?;
    let index = engine.log.index();
    let last_entry = index
        .get(&last)
        .ok_or_else(|| EngineError::UnknownEntry(last.clone()))?;
    let after = tree_of(last_entry)?;
    let parent = index.get(&first).and_then(|e| e.parent_id.clone());
    let before = match parent {
        Some(id) => engine.checkpoint_or_empty(&id)?,
        None => empty_tree_id(),
    };
    // What the `>>>>>>>` marker of a conflict names.
    let other = format!("before {first}");
    let in_filter = |path: &str| {
        filter
            .as_deref()
            .is_none_or(|f| f.iter().any(|r| r.is_prefix_of(path)))
    };
    let all = diff_trees(&engine.store, Some(&before), Some(&after))?;
    let classes = classify(&all);
    let (changes, classes): (Vec<_>, Vec<_>) = all
        .into_iter()
        .zip(classes)
        .filter(|(c, _)| in_filter(&c.path))
        .unzip();

    let scanned: Scanned = engine.scan_for_plan()?;
    let mut budget = DiffBudget::for_request();
    let mut files = Vec::with_capacity(changes.len());
    let mut merged: BTreeMap<String, Option<TreeEntry>> = BTreeMap::new();
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    for (c, class) in changes.iter().zip(classes) {
        let now = scanned.working.get(&c.path).copied();
        if let Some(why) = not_captured(class, now.as_ref()) {
            // What one side holds is unknown: nothing to take out or
            // put back (docs/architecture.md rule 14).
            files.push(RevertFile {
                path: result_path(&c.path),
                status: RevertStatus::Skip,
                action: RevertAction::None,
                reason: Some(why),
                diff: String::new(),
                conflicts: Vec::new(),
            });
            continue;
        }
        let mut plan = engine.plan_file(c.old.as_ref(), c.new.as_ref(), now.as_ref(), &other)?;
        // What the file becomes: the merge, or with markers.
        let mut written: Option<Option<(TreeEntry, Vec<u8>)>> = None;
        if plan.status == RevertStatus::Conflict && mode == RevertOnConflict::Markers {
            if let (Some(marked), Some(now)) = (plan.marked.take(), now) {
                let entry = TreeEntry {
                    id: ObjectId::of(&marked),
                    size: marked.len() as u64,
                    ..now
                };
                plan.outcome = Some(Some(entry));
                plan.blob = Some(marked);
            }
        }
        if let Some(outcome) = plan.outcome {
            merged.insert(c.path.clone(), outcome);
            written = Some(match (outcome, plan.blob.take()) {
                (Some(e), Some(bytes)) => {
                    blobs.push(bytes.clone());
                    Some((e, bytes))
                }
                (Some(e), None) => Some((e, engine.store.get(&e.id)?)),
                (None, _) => None,
            });
        }
        let diff = match &written {
            Some(new) => engine.revert_diff(&c.path, now.as_ref(), new.as_ref(), &mut budget)?,
            None => String::new(),
        };
        let action = match &written {
            Some(Some(_)) => RevertAction::Write,
            Some(None) => RevertAction::Delete,
            None => RevertAction::None,
        };
        files.push(RevertFile {
            path: result_path(&c.path),
            status: plan.status,
            action,
            reason: plan.reason.map(str::to_string),
            diff,
            conflicts: plan.conflicts,
        });
    }
    // Conflicts that are not written (abort, skip) leave the file alone.
    if mode != RevertOnConflict::Markers {
        for f in files.iter_mut() {
            if f.status == RevertStatus::Conflict {
                merged.remove(f.path.as_str());
            }
        }
    }
    let mut plan = engine.plan_in(scanned, None, None, OnConflict::Skip, merged)?;
    // Something uncaptured where the revert would create a file.
    for c in &plan.conflicts {
        if let Some(f) = files.iter_mut().find(|f| f.path == c.path) {
            f.status = RevertStatus::Skip;
            f.reason = Some("an uncaptured file is in the way".into());
            f.action = RevertAction::None;
            f.diff.clear();
        }
    }
    let conflicts: Vec<Conflict> = files
        .iter()
        .filter(|f| f.status == RevertStatus::Conflict)
        .map(|f| Conflict {
            path: f.path.clone(),
            reason: ConflictReason::Merge,
        })
        .collect();
    let mut result = RevertResult {
        preview,
        files,
        restored: plan.writes.iter().map(|(p, _)| p.clone()).collect(),
        deleted: plan.deletes.clone(),
        failed: Vec::new(),
        unrevert_entry_id: None,
    };
    if preview {
        return Ok(result);
    }
    if mode == RevertOnConflict::Abort && !conflicts.is_empty() {
        return Err(EngineError::Conflicts(conflicts));
    }
    plan.blobs = blobs;
    let planned: Vec<Conflict> = plan.conflicts.clone();
    engine.pre_restore_snapshot(&mut plan)?;
    let done = engine.execute(
        plan,
        Operation {
            kind: ChangeReason::Revert,
            target_entry: None,
            parent: None,
            old_leaf_id: None,
            target_id: None,
            undone_entry_id: None,
            reverted: Some((first, last)),
            move_git: false,
            git: None,
        },
    )?;
    result.restored = done.restored;
    result.deleted = done.deleted;
    result.failed = done
        .conflicts
        .into_iter()
        .filter(|c| !planned.contains(c))
        .collect();
    result.unrevert_entry_id = done.unrevert_entry_id;
    Ok(result)
}
