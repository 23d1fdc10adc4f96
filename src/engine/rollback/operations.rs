//! The rollback methods: restore_files, navigate_tree, undo, approve and
//! reset. Each plans with `plan_restore`, stops there for a preview or an
//! abort, then snapshots before mutating and executes.

use super::git::move_words;
use super::restore::{parse_filter, Operation, Plan};
use crate::engine::api::{
    ApproveParams, ApproveResult, ChangeReason, CheckpointKind, NavigateTreeParams,
    NavigateTreeResult, OnConflict, ResetParams, ResetResult, RestoreFilesParams, RestoreResult,
    UndoParams,
};
use crate::engine::record::snapshot::SnapshotSpec;
use crate::engine::{approved_tree, diff_of, tree_of, Engine, EngineError, Result};
use crate::session::records::{
    Approval, BranchDetails, BranchSummary, Label, Navigation, Record, UnrevertPoint,
};
use crate::session::{EntryId, CUSTOM_APPROVAL, CUSTOM_STEP_SNAPSHOT};
use crate::store::{empty_tree_id, ObjectId};

fn check_abort(plan: &Plan, mode: OnConflict) -> Result<()> {
    if mode == OnConflict::Abort && !plan.conflicts.is_empty() {
        return Err(EngineError::Conflicts(plan.conflicts.clone()));
    }
    Ok(())
}

impl Engine {
    /// The tree of the checkpoint at `id` (the empty tree above the first
    /// checkpoint).
    pub(crate) fn checkpoint_or_empty(&self, id: &EntryId) -> Result<ObjectId> {
        Ok(self
            .checkpoint_tree(id)?
            .map(|(_, t)| t)
            .unwrap_or_else(empty_tree_id))
    }

    /// One plain restore: plan, then [`Engine::carry_out`].
    fn restore_to(
        &mut self,
        target: ObjectId,
        filter: Option<&[crate::repo_path::RepoPath]>,
        mode: OnConflict,
        preview: bool,
        op: Operation,
    ) -> Result<RestoreResult> {
        let plan = self.plan_restore(target, filter, mode)?;
        self.carry_out(plan, mode, preview, op)
    }

    /// A planned restore: stop at the preview or an abort, else snapshot
    /// before mutate and execute. With `op.move_git`, HEAD and the index
    /// move too (planned here, so a refusal writes nothing).
    fn carry_out(
        &mut self,
        mut plan: Plan,
        mode: OnConflict,
        preview: bool,
        mut op: Operation,
    ) -> Result<RestoreResult> {
        let then = op.git_then();
        let mut warnings = then.as_ref().map(|t| self.git_words(t)).unwrap_or_default();
        if op.move_git {
            let then = then.ok_or_else(|| {
                EngineError::GitRefused(
                    "--git needs a checkpoint to take git's state from, not a tree hash".into(),
                )
            })?;
            op.git = Some(self.plan_git_move(&then)?);
        }
        if preview {
            let mut r = plan.preview_result();
            if let Some(m) = &op.git {
                warnings.push(move_words(m, false));
                r.git_moved = !m.is_empty();
            }
            r.warnings = warnings;
            return Ok(r);
        }
        check_abort(&plan, mode)?;
        self.pre_restore_snapshot(&mut plan)?;
        let mut r = self.execute(plan, op)?;
        warnings.append(&mut r.warnings);
        r.warnings = warnings;
        Ok(r)
    }

    /// A restore that takes back chosen hunks of some files (and `whole`
    /// files entirely): the same plan, snapshot, journal and unrevert-point
    /// as any restore.
    fn restore_hunks(
        &mut self,
        target: ObjectId,
        whole: Option<&[crate::repo_path::RepoPath]>,
        selections: Vec<crate::engine::api::HunkSelection>,
        mode: OnConflict,
        preview: bool,
        op: Operation,
    ) -> Result<RestoreResult> {
        let scanned = self.scan_for_plan()?;
        let writes = self.hunk_writes(&scanned, &target, selections, whole)?;
        // Without `files`, only the files named in `hunks` are touched.
        let whole = whole.unwrap_or(&[]);
        let mut plan = self.plan_in(scanned, Some(target), Some(whole), mode, writes.outcomes)?;
        plan.blobs = writes.blobs;
        self.carry_out(plan, mode, preview, op)
    }

    /// A summary of the branch being left, for `summarize` without text:
    /// its checkpoints since the common ancestor and the files they changed.
    fn summarize_branch(&self, old_leaf: &EntryId, target: &EntryId) -> String {
        let index = self.log.index();
        let target_path: Vec<&EntryId> = index.path_to_root(target).iter().map(|e| &e.id).collect();
        let left: Vec<_> = index
            .path_to_root(old_leaf)
            .into_iter()
            .filter(|e| e.is_tree_recording() && !target_path.contains(&&e.id))
            .collect();
        let mut files: Vec<String> = left
            .iter()
            .flat_map(|e| diff_of(e))
            .map(|(p, _)| p)
            .collect();
        files.sort();
        files.dedup();
        let shown: Vec<&str> = files.iter().take(10).map(String::as_str).collect();
        let more = files.len().saturating_sub(shown.len());
        let mut s = format!(
            "Left a branch of {} checkpoint(s) ending at {old_leaf}",
            left.len()
        );
        if !files.is_empty() {
            s.push_str(&format!("; files changed: {}", shown.join(", ")));
            if more > 0 {
                s.push_str(&format!(" (+{more} more)"));
            }
        }
        s
    }
}

/// `Engine::restore_files` (the door in engine/mod.rs says what it does).
pub(crate) fn restore_files(engine: &mut Engine, p: RestoreFilesParams) -> Result<RestoreResult> {
    let filter = parse_filter(engine.working_copy.root(), p.files)?;
    let (target_entry, target) = match (p.target_entry_id, p.tree_hash) {
        (Some(_), Some(_)) => {
            return Err(EngineError::InvalidParams(
                "give targetEntryId or treeHash, not both".into(),
            ))
        }
        (Some(id), None) => {
            let t = engine.checkpoint_or_empty(&id)?;
            (Some(id), t)
        }
        (None, Some(t)) => {
            if engine.store.get_tree(&t).is_err() {
                return Err(EngineError::UnknownTree(t.to_hex()));
            }
            (None, t)
        }
        (None, None) => {
            let leaf = engine.leaf_or_error()?;
            let t = engine.checkpoint_or_empty(&leaf)?;
            (Some(leaf), t)
        }
    };
    let op = Operation {
        kind: ChangeReason::Restore,
        target_entry,
        parent: None,
        old_leaf_id: None,
        target_id: None,
        undone_entry_id: None,
        reverted: None,
        move_git: p.git.unwrap_or(false),
        git: None,
    };
    let mode = p.on_conflict.unwrap_or_default();
    let preview = p.preview.unwrap_or(false);
    match p.hunks {
        Some(h) if h.is_empty() => Err(EngineError::InvalidParams(
            "hunks is empty: name at least one file's hunks, or omit it".into(),
        )),
        Some(h) => engine.restore_hunks(target, filter.as_deref(), h, mode, preview, op),
        None => engine.restore_to(target, filter.as_deref(), mode, preview, op),
    }
}

/// `Engine::navigate_tree` (the door in engine/mod.rs says what it does).
pub(crate) fn navigate_tree(
    engine: &mut Engine,
    p: NavigateTreeParams,
) -> Result<NavigateTreeResult> {
    if !engine.log.index().contains(&p.target_id) {
        return Err(EngineError::UnknownEntry(p.target_id));
    }
    // The target is an entry, so there is a leaf.
    let old_leaf = engine.leaf_or_error()?;
    if p.target_id == old_leaf {
        return Ok(NavigateTreeResult {
            new_leaf_id: Some(old_leaf.clone()),
            old_leaf_id: old_leaf,
            restore: None,
            summary_entry_id: None,
        });
    }
    let skip_files = p.skip_files.unwrap_or(false);
    let mode = p.on_conflict.unwrap_or_default();
    let target_tree = engine.checkpoint_or_empty(&p.target_id)?;
    let mut plan = if skip_files {
        None
    } else {
        Some(engine.plan_restore(target_tree, None, mode)?)
    };
    if p.preview.unwrap_or(false) {
        return Ok(NavigateTreeResult {
            new_leaf_id: None,
            old_leaf_id: old_leaf,
            restore: plan.map(|pl| {
                let mut r = pl.preview_result();
                r.warnings = engine.git_warnings(Some(&p.target_id));
                r
            }),
            summary_entry_id: None,
        });
    }
    if let Some(plan) = &plan {
        check_abort(plan, mode)?;
    }
    // The tip of the branch being left: its pre-restore snapshot when
    // the disk held unrecorded work.
    let pre = match &mut plan {
        Some(plan) => engine.pre_restore_snapshot(plan)?,
        None => None,
    };
    let old_leaf_id = pre.unwrap_or(old_leaf);

    let mut chain_tip = p.target_id.clone();
    let mut summary_entry_id = None;
    if p.summarize.unwrap_or(false) || p.summary.is_some() {
        let text = match p.summary {
            Some(t) => t,
            None => engine.summarize_branch(&old_leaf_id, &p.target_id),
        };
        let record = BranchSummary {
            from_id: Some(p.target_id.clone()),
            summary: Some(text),
            skip_files: skip_files.then_some(true),
            details: Some(BranchDetails {
                old_leaf_id: Some(old_leaf_id.clone()),
                extra: Default::default(),
            }),
            extra: Default::default(),
        };
        let e = engine
            .log
            .append(record.to_new_entry(None, Some(chain_tip.clone()))?)?;
        summary_entry_id = Some(e.id.clone());
        chain_tip = e.id;
    }
    let mut appended = summary_entry_id.is_some();
    if let Some(label) = p.label {
        let record = Label {
            target_id: Some(p.target_id.clone()),
            label: Some(label),
            note: None,
            extra: Default::default(),
        };
        let e = engine
            .log
            .append(record.to_new_entry(None, Some(chain_tip.clone()))?)?;
        chain_tip = e.id;
        appended = true;
    }
    let restore = match plan {
        Some(plan) => {
            let warnings = engine.git_warnings(Some(&p.target_id));
            let mut r = engine.execute(
                plan,
                Operation {
                    kind: ChangeReason::Navigate,
                    target_entry: Some(p.target_id.clone()),
                    parent: Some(chain_tip.clone()),
                    old_leaf_id: Some(old_leaf_id.clone()),
                    target_id: Some(p.target_id.clone()),
                    undone_entry_id: None,
                    reverted: None,
                    move_git: false,
                    git: None,
                },
            )?;
            r.warnings = warnings;
            if let Some(id) = &r.unrevert_entry_id {
                chain_tip = id.clone();
                appended = true;
            }
            Some(r)
        }
        None => None,
    };
    if !appended {
        let record = Navigation {
            old_leaf_id: Some(old_leaf_id.clone()),
            target_id: Some(p.target_id.clone()),
            skip_files: skip_files.then_some(true),
            working_tree_hash: None,
            extra: Default::default(),
        };
        let e = engine
            .log
            .append(record.to_new_entry(None, Some(chain_tip.clone()))?)?;
        chain_tip = e.id;
    }
    Ok(NavigateTreeResult {
        new_leaf_id: Some(chain_tip),
        old_leaf_id,
        restore,
        summary_entry_id,
    })
}

/// `Engine::undo` (the door in engine/mod.rs says what it does).
pub(crate) fn undo(engine: &mut Engine, p: UndoParams) -> Result<RestoreResult> {
    let index = engine.log.index();
    let unrevert = match &p.entry_id {
        Some(id) => {
            let e = index
                .get(id)
                .ok_or_else(|| EngineError::UnknownEntry(id.clone()))?;
            if !UnrevertPoint::is_kind_of(e) {
                return Err(EngineError::InvalidParams(format!(
                    "entry {id} is not an unrevert-point"
                )));
            }
            e.clone()
        }
        None => {
            let path = match engine.leaf_id() {
                Some(leaf) => index.path_to_root(&leaf),
                None => Vec::new(),
            };
            path.into_iter()
                .rev()
                .find(|e| UnrevertPoint::is_kind_of(e))
                .cloned()
                .ok_or(EngineError::NothingToUndo)?
        }
    };
    let pre = unrevert
        .record::<UnrevertPoint>()
        .and_then(|u| u.pre_rollback_tree_hash)
        .ok_or_else(|| {
            EngineError::InvalidParams(format!(
                "unrevert-point {} has no preRollbackTreeHash",
                unrevert.id
            ))
        })?;
    engine.restore_to(
        pre,
        None,
        p.on_conflict.unwrap_or_default(),
        p.preview.unwrap_or(false),
        Operation {
            kind: ChangeReason::Undo,
            target_entry: None,
            parent: None,
            old_leaf_id: None,
            target_id: None,
            undone_entry_id: Some(unrevert.id),
            reverted: None,
            move_git: p.git.unwrap_or(false),
            git: None,
        },
    )
}

/// `Engine::approve` (the door in engine/mod.rs says what it does).
pub(crate) fn approve(engine: &mut Engine, p: ApproveParams) -> Result<ApproveResult> {
    let recorded_tree = engine.recorded_tree();
    let recorded = engine.flat(recorded_tree)?;
    let state = engine.scan_working(None, &recorded)?;
    let working = state.tree;
    if engine.leaf_checkpoint_tree()? != Some(working) {
        let spec = SnapshotSpec::forced(CheckpointKind::Approve, engine.leaf_id());
        engine.record_state(&spec, state)?;
    }
    let index = engine.log.index();
    let since = index
        .latest_of_custom_type(CUSTOM_APPROVAL)
        .and_then(|a| index.entries().iter().position(|e| e.id == a.id))
        .map(|i| i + 1)
        .unwrap_or(0);
    let snapshots_approved = index.entries()[since..]
        .iter()
        .filter(|e| e.custom_type.as_deref() == Some(CUSTOM_STEP_SNAPSHOT))
        .count() as u64;
    let record = Approval {
        approved_tree_hash: Some(working),
        working_tree_hash: Some(working),
        snapshots_approved,
        message: p.message,
        modes: true,
        extra: Default::default(),
    };
    let parent = engine.leaf_id();
    let e = engine.log.append(record.to_new_entry(None, parent)?)?;
    Ok(ApproveResult {
        approved_entry_id: e.id,
        approved_tree_hash: working,
        snapshots_approved,
    })
}

/// `Engine::reset` (the door in engine/mod.rs says what it does).
pub(crate) fn reset(engine: &mut Engine, p: ResetParams) -> Result<ResetResult> {
    let (target_entry, target) = match engine.log.index().latest_of_custom_type(CUSTOM_APPROVAL) {
        Some(a) => (a.id.clone(), approved_tree(a)?),
        None => {
            let b = engine
                .baseline()
                .ok_or_else(|| EngineError::InvalidParams("the session has no baseline".into()))?;
            (b.id.clone(), tree_of(b)?)
        }
    };
    let restore = engine.restore_to(
        target,
        None,
        p.on_conflict.unwrap_or_default(),
        p.preview.unwrap_or(false),
        Operation {
            kind: ChangeReason::Reset,
            target_entry: Some(target_entry),
            parent: None,
            old_leaf_id: None,
            target_id: None,
            undone_entry_id: None,
            reverted: None,
            move_git: false,
            git: None,
        },
    )?;
    Ok(ResetResult {
        reset_to: target,
        restore,
    })
}
