//! Taking snapshots: scan the working directory (all of it, or only the
//! paths a host announced), build the hierarchical tree, diff it against the
//! checkpoint at the parent, and append a step-snapshot when it changed.

use crate::engine::api::{
    CheckpointKind, DiffLists, GitInfo, SnapshotKind, SnapshotParams, SnapshotResult,
    SnapshotStats, ToolInfo,
};
use crate::engine::{turn_of, Engine, Result};
use crate::repo_path::RepoPath;
use crate::session::records::{self, Record, StepSnapshot};
use crate::session::EntryId;
use crate::store::{classify, diff_trees, Change, ChangeClass};
use crate::working_copy::WorkingState;

/// What to record; `parent: None` makes a root entry (the baseline).
pub(crate) struct SnapshotSpec {
    pub kind: CheckpointKind,
    pub label: Option<String>,
    pub scope: Option<Vec<RepoPath>>,
    pub tool: Option<ToolInfo>,
    pub parent: Option<EntryId>,
    pub turn_index: Option<u64>,
    /// Append even when nothing changed.
    pub force: bool,
}

impl SnapshotSpec {
    /// A snapshot the sidecar takes on its own (kinds like "outside",
    /// "pre-restore", "approve"): the whole tree, appended even when it
    /// equals the parent's checkpoint.
    pub fn forced(kind: CheckpointKind, parent: Option<EntryId>) -> SnapshotSpec {
        SnapshotSpec {
            kind,
            label: None,
            scope: None,
            tool: None,
            parent,
            turn_index: None,
            force: true,
        }
    }
}

/// The changes as a record lists them.
pub(crate) fn diff_lists(changes: &[Change]) -> records::Diff {
    let mut d = records::Diff::default();
    for (c, class) in changes.iter().zip(classify(changes)) {
        let list = match class {
            ChangeClass::Added => &mut d.added,
            ChangeClass::Deleted => &mut d.deleted,
            ChangeClass::Modified => &mut d.modified,
            ChangeClass::NotCaptured(_) => &mut d.not_captured,
            ChangeClass::Recaptured(_) => &mut d.recaptured,
        };
        list.push(c.path.clone());
    }
    d
}

/// A recorded diff as a result reports it.
fn result_lists(d: records::Diff) -> DiffLists {
    DiffLists {
        added: RepoPath::all_recorded(d.added),
        modified: RepoPath::all_recorded(d.modified),
        deleted: RepoPath::all_recorded(d.deleted),
        not_captured: RepoPath::all_recorded(d.not_captured),
        recaptured: RepoPath::all_recorded(d.recaptured),
    }
}

impl Engine {
    pub(crate) fn record_snapshot(&mut self, spec: SnapshotSpec) -> Result<SnapshotResult> {
        let parent_cp = match &spec.parent {
            Some(id) => self.checkpoint_tree(id)?.map(|(e, t)| (turn_of(e), t)),
            None => None,
        };
        let parent_tree = parent_cp.map(|(_, t)| t);
        let prior = self.flat(parent_tree)?;
        let state = self.scan_working(spec.scope.as_deref(), &prior)?;
        self.record_state(&spec, state)
    }

    /// Record a scanned state as a step-snapshot below `spec.parent` (when
    /// it changed, or `spec.force`).
    pub(crate) fn record_state(
        &mut self,
        spec: &SnapshotSpec,
        state: WorkingState,
    ) -> Result<SnapshotResult> {
        let parent_cp = match &spec.parent {
            Some(id) => self.checkpoint_tree(id)?.map(|(e, t)| (turn_of(e), t)),
            None => None,
        };
        let parent_tree = parent_cp.map(|(_, t)| t);
        let changes = diff_trees(&self.store, parent_tree.as_ref(), Some(&state.tree))?;
        let diff = diff_lists(&changes);
        let changed = parent_tree != Some(state.tree);
        let stats = SnapshotStats {
            files_scanned: state.scan.files_scanned,
            files_hashed: state.scan.files_hashed,
            bytes_hashed: state.scan.bytes_hashed,
            duration_ms: state.duration_ms,
            untracked: state.scan.untracked.clone(),
        };
        let git = self
            .working_copy
            .git_head()
            .map(|(branch, head)| GitInfo { branch, head });
        if !changed && !spec.force && spec.parent.is_some() {
            return Ok(SnapshotResult {
                entry_id: None,
                tree_hash: state.tree,
                changed: false,
                diff: result_lists(diff),
                turn_index: parent_cp.map(|(t, _)| t).unwrap_or(0),
                stats,
                git,
            });
        }
        let turn_index = spec
            .turn_index
            .unwrap_or_else(|| parent_cp.map(|(t, _)| t + 1).unwrap_or(0));
        let baseline_tree = parent_tree.unwrap_or_else(crate::store::empty_tree_id);
        // The record holds the diff while it is encoded, then hands it back for the
        // result: a baseline's diff names every file, so it is not copied.
        let mut record = StepSnapshot {
            baseline_tree_hash: Some(baseline_tree),
            snapshot_tree_hash: Some(state.tree),
            diff,
            turn_index,
            kind: Some(spec.kind.as_str().to_string()),
            label: spec.label.clone(),
            stats: records::Stats {
                files_scanned: stats.files_scanned,
                files_hashed: stats.files_hashed,
                bytes_hashed: stats.bytes_hashed,
                duration_ms: stats.duration_ms,
                untracked: stats
                    .untracked
                    .iter()
                    .map(|u| records::UntrackedPath {
                        path: u.path.to_string(),
                        reason: u.reason.as_str().to_string(),
                        extra: Default::default(),
                    })
                    .collect(),
                extra: Default::default(),
            },
            tool: spec.tool.as_ref().map(|t| records::Tool {
                name: t.name.clone(),
                input: t.input.clone(),
                extra: Default::default(),
            }),
            git: git.as_ref().map(|g| records::Git {
                branch: g.branch.clone(),
                head: g.head.clone(),
                extra: Default::default(),
            }),
            staged_paths: {
                let staged = self.working_copy.staged();
                (!staged.is_empty()).then(|| staged.iter().cloned().collect())
            },
            extra: Default::default(),
        };
        let new_entry = record.to_new_entry(None, spec.parent.clone())?;
        let diff = result_lists(std::mem::take(&mut record.diff));
        drop(record);
        // Write order (docs/architecture.md rule 4): the objects are durable before the
        // entry that references them.
        self.store.sync()?;
        let entry = self.log.append(new_entry)?;
        Ok(SnapshotResult {
            entry_id: Some(entry.id),
            tree_hash: state.tree,
            changed,
            diff,
            turn_index,
            stats,
            git,
        })
    }
}

/// `Engine::snapshot` (the door in engine/mod.rs says what it does).
pub(crate) fn snapshot(engine: &mut Engine, p: SnapshotParams) -> Result<SnapshotResult> {
    let kind = p.kind.unwrap_or_default();
    let scope = match p.paths {
        Some(paths) => Some(crate::engine::parse_paths(
            engine.working_copy.root(),
            &paths,
        )?),
        None => None,
    };
    let parent = engine.parent_or_leaf(p.parent_id)?;
    engine.record_snapshot(SnapshotSpec {
        kind: kind.into(),
        label: p.label,
        scope,
        tool: p.tool,
        parent,
        turn_index: p.turn_index,
        force: kind == SnapshotKind::Manual || p.force.unwrap_or(false),
    })
}
