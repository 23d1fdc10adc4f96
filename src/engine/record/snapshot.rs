//! Taking snapshots: scan the working directory (all of it, or only the
//! paths a host announced), build the hierarchical tree, diff it against the
//! checkpoint at the parent, and append a step-snapshot when it changed.

use std::time::Instant;

use crate::engine::api::{
    CheckpointKind, ConversationCapture, DiffLists, GitInfo, SnapshotKind, SnapshotParams,
    SnapshotResult, SnapshotStats, ToolInfo,
};
use crate::engine::{turn_of, Engine, EngineError, Result};
use crate::repo_path::RepoPath;
use crate::session::records::{self, Record, StepSnapshot};
use crate::session::{valid_host_id, EntryId};
use crate::store::UncapturedReason;
use crate::store::{classify, diff_trees, Change, ChangeClass, ObjectId, TreeEntry};
use crate::working_copy::{GitState, Uncaptured, WorkingState};

/// What to record; `parent: None` makes a root entry (the baseline).
pub(crate) struct SnapshotSpec {
    pub kind: CheckpointKind,
    pub label: Option<String>,
    /// A person's note (a manual checkpoint's).
    pub note: Option<String>,
    pub scope: Option<Vec<RepoPath>>,
    pub tool: Option<ToolInfo>,
    pub parent: Option<EntryId>,
    pub turn_index: Option<u64>,
    /// Append even when nothing changed.
    pub force: bool,
    /// The host's id for the request (see `SnapshotParams::request_id`).
    pub request_id: Option<String>,
    /// The agent's conversation, recorded with the checkpoint (a hook's;
    /// its pieces already stored).
    pub conversation: Option<records::Conversation>,
}

impl SnapshotSpec {
    /// A snapshot the sidecar takes on its own (kinds like "outside",
    /// "pre-restore", "approve"): the whole tree, appended even when it
    /// equals the parent's checkpoint.
    pub fn forced(kind: CheckpointKind, parent: Option<EntryId>) -> SnapshotSpec {
        SnapshotSpec {
            kind,
            label: None,
            note: None,
            scope: None,
            tool: None,
            parent,
            turn_index: None,
            force: true,
            request_id: None,
            conversation: None,
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

/// What a step-snapshot's record keeps of its stats.
fn recorded_stats(stats: &SnapshotStats) -> records::Stats {
    records::Stats {
        files_scanned: stats.files_scanned,
        files_hashed: stats.files_hashed,
        bytes_hashed: stats.bytes_hashed,
        duration_ms: stats.duration_ms,
        untracked: stats
            .untracked
            .iter()
            .map(|u| records::UncapturedPath {
                path: u.path.to_string(),
                reason: u.reason.as_str().to_string(),
                extra: Default::default(),
            })
            .collect(),
        extra: Default::default(),
    }
}

/// A record's stats as `snapshot` answers them. A path or reason this
/// build cannot type (a newer writer's reason) is left out of the answer:
/// the record keeps it as written.
fn stats_of_record(stats: records::Stats) -> SnapshotStats {
    SnapshotStats {
        files_scanned: stats.files_scanned,
        files_hashed: stats.files_hashed,
        bytes_hashed: stats.bytes_hashed,
        duration_ms: stats.duration_ms,
        untracked: stats
            .untracked
            .iter()
            .filter_map(|u| {
                Some(Uncaptured {
                    path: RepoPath::parse(&u.path).ok()?,
                    reason: UncapturedReason::parse(&u.reason)?,
                })
            })
            .collect(),
    }
}

impl Engine {
    /// The checkpoint a snapshot goes below: its turn and tree (`None`: a
    /// root entry, or a parent that is no checkpoint).
    fn parent_checkpoint(&self, spec: &SnapshotSpec) -> Result<Option<(u64, ObjectId)>> {
        Ok(match &spec.parent {
            Some(id) => self.checkpoint_tree(id)?.map(|(e, t)| (turn_of(e), t)),
            None => None,
        })
    }

    pub(crate) fn record_snapshot(&mut self, spec: SnapshotSpec) -> Result<SnapshotResult> {
        let parent_cp = self.parent_checkpoint(&spec)?;
        let prior = self.flat(parent_cp.map(|(_, t)| t))?;
        let state = self.scan_working(spec.scope.as_deref(), &prior)?;
        self.record_state_below(&spec, parent_cp, state)
    }

    /// Record a scanned state as a step-snapshot below `spec.parent` (when
    /// it changed, or `spec.force`).
    pub(crate) fn record_state(
        &mut self,
        spec: &SnapshotSpec,
        state: WorkingState,
    ) -> Result<SnapshotResult> {
        let parent_cp = self.parent_checkpoint(spec)?;
        self.record_state_below(spec, parent_cp, state)
    }

    /// [`Engine::record_state`] with the parent's checkpoint looked up once
    /// by the caller.
    fn record_state_below(
        &mut self,
        spec: &SnapshotSpec,
        parent_cp: Option<(u64, ObjectId)>,
        state: WorkingState,
    ) -> Result<SnapshotResult> {
        let parent_tree = parent_cp.map(|(_, t)| t);
        let diff_start = Instant::now();
        let changes = diff_trees(&self.store, parent_tree.as_ref(), Some(&state.tree))?;
        let diff = diff_lists(&changes);
        let changed = parent_tree != Some(state.tree);
        let stats = SnapshotStats {
            files_scanned: state.scan.files_scanned,
            files_hashed: state.scan.files_hashed,
            bytes_hashed: state.scan.bytes_hashed,
            duration_ms: state.duration.as_millis() as u64,
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
        let git_start = Instant::now();
        let git_state = self.git_state_of(state.tree, parent_tree, &changes);
        let git_us = git_start.elapsed().as_micros() as u64;
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
            note: spec.note.clone(),
            stats: recorded_stats(&stats),
            tool: spec.tool.as_ref().map(|t| records::Tool {
                name: t.name.clone(),
                input: t.input.clone(),
                extra: Default::default(),
            }),
            git: git_state.as_ref().map(|g| records::Git {
                branch: g.branch.clone(),
                head: g.head.clone(),
                dirty: g.dirty,
                extra: Default::default(),
            }),
            git_index_tree_hash: git_state.as_ref().and_then(|g| g.index),
            staged_paths: {
                let staged = self.working_copy.staged();
                (!staged.is_empty()).then(|| staged.iter().cloned().collect())
            },
            request_id: spec.request_id.clone(),
            // The scan recorded every file's mode (docs/format.md "Trees").
            modes: true,
            conversation: spec.conversation.clone().map(Box::new),
            extra: Default::default(),
        };
        let new_entry = record.to_new_entry(None, spec.parent.clone())?;
        let diff = result_lists(std::mem::take(&mut record.diff));
        drop(record);
        let diffed = diff_start.elapsed();
        // Write order (docs/architecture.md rule 4): the objects are durable before the
        // entry that references them.
        let sync_start = Instant::now();
        self.store.sync()?;
        let synced = sync_start.elapsed();
        let entry = self.log.append(new_entry)?;
        // Where a snapshot's time went, for the benches (RUST_LOG=rewind::timing=debug):
        // the scan (walk or watcher, reading, hashing, compressing and writing objects,
        // the tree, and the sync of a pack it wrote), the diff against its parent and the
        // record (with git's state, also on its own), the store's sync of loose objects,
        // and the session line written and synced.
        tracing::debug!(
            target: "rewind::timing",
            scan_us = state.duration.as_micros() as u64,
            diff_us = diffed.as_micros() as u64,
            git_us,
            sync_us = synced.as_micros() as u64,
            log_us = (sync_start.elapsed() - synced).as_micros() as u64,
            files_hashed = stats.files_hashed,
            "snapshot recorded"
        );
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

impl Engine {
    /// What a checkpoint of `tree` records of git (docs/format.md "Git
    /// state"); `changes` turn the checkpoint's `parent` tree into it, so
    /// only they are looked at when the parent's answer is known.
    pub(crate) fn git_state_of(
        &mut self,
        tree: ObjectId,
        parent: Option<ObjectId>,
        changes: &[Change],
    ) -> Option<GitState> {
        let changed: Vec<(String, Option<TreeEntry>)> = match parent {
            Some(_) => changes.iter().map(|c| (c.path.clone(), c.new)).collect(),
            None => Vec::new(),
        };
        let Engine {
            working_copy,
            store,
            flat_cache,
            ..
        } = self;
        let mut files = || flat_cache.files(store, Some(tree)).ok();
        working_copy.git_state(
            store,
            tree,
            &mut files,
            parent.map(|p| (p, changed.as_slice())),
        )
    }
}

/// `Engine::snapshot` (the door in engine/mod.rs says what it does).
pub(crate) fn snapshot(engine: &mut Engine, p: SnapshotParams) -> Result<SnapshotResult> {
    snapshot_with_conversation(engine, p, None)
}

/// `Engine::snapshot_with_conversation` (the door in engine/mod.rs says
/// what it does).
pub(crate) fn snapshot_with_conversation(
    engine: &mut Engine,
    p: SnapshotParams,
    conversation: Option<ConversationCapture>,
) -> Result<SnapshotResult> {
    let kind = p.kind.unwrap_or_default();
    let scope = match p.paths {
        Some(paths) => Some(crate::engine::parse_paths(
            engine.working_copy.root(),
            &paths,
        )?),
        None => None,
    };
    if let Some(id) = &p.request_id {
        if !valid_host_id(id) {
            return Err(EngineError::InvalidParams(format!(
                "requestId {id:?} must be a non-empty string without whitespace, at most 64 characters"
            )));
        }
        if let Some(recorded) = recorded_request(engine, id) {
            return Ok(recorded);
        }
    }
    let parent = engine.parent_or_leaf(p.parent_id)?;
    // Stored before the scan: a scan that writes objects makes them durable
    // with its own, so a checkpoint pays no sync of its own for them.
    let (conversation, _no_gc) =
        match conversation.map(|c| super::conversation::store_capture(engine, &c)) {
            Some(Ok((stored, guard))) => (Some(stored), guard),
            // The checkpoint is what matters: it is recorded without its
            // conversation, and the next one reads the transcript on from
            // where the last recorded one left it.
            Some(Err(err)) => {
                tracing::warn!(%err, "the conversation could not be stored with this checkpoint");
                (None, None)
            }
            None => (None, None),
        };
    engine.record_snapshot(SnapshotSpec {
        kind: kind.into(),
        label: p.label,
        note: None,
        scope,
        tool: p.tool,
        parent,
        turn_index: p.turn_index,
        force: kind == SnapshotKind::Manual || p.force.unwrap_or(false),
        request_id: p.request_id,
        conversation,
    })
}

/// How far back a request id is looked for: a retry follows its request
/// closely (a hook's within seconds, behind at most the events of parallel
/// tool calls), and a session can hold many thousands of entries.
const REQUEST_LOOKBACK: usize = 256;

/// The checkpoint an earlier request with this id recorded, as `snapshot`
/// answered it then (its stats and git facts as recorded).
fn recorded_request(engine: &Engine, id: &str) -> Option<SnapshotResult> {
    let entries = engine.log.index().entries();
    entries.iter().rev().take(REQUEST_LOOKBACK).find_map(|e| {
        // The id is looked at in the line as read, and only its record is
        // decoded: decoding each record on the way (a baseline's names every
        // file of the project) cost a 100k-file project's events 60 ms.
        let named = e
            .raw
            .get("data")
            .and_then(|d| d.get("requestId"))
            .and_then(|r| r.as_str());
        if named != Some(id) {
            return None;
        }
        let record = match StepSnapshot::read(e)? {
            Ok(r) => r,
            Err(_) => return None,
        };
        if record.request_id.as_deref() != Some(id) {
            return None;
        }
        let tree_hash = record.snapshot_tree_hash?;
        Some(SnapshotResult {
            entry_id: Some(e.id.clone()),
            tree_hash,
            changed: record.baseline_tree_hash != Some(tree_hash),
            diff: result_lists(record.diff),
            turn_index: record.turn_index,
            stats: stats_of_record(record.stats),
            git: record.git.map(|g| GitInfo {
                branch: g.branch,
                head: g.head,
            }),
        })
    })
}
