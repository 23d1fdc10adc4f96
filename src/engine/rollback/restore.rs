//! The restore core shared by restore_files, navigate_tree, undo and reset:
//! plan (dirty files, conflicts), then — following docs/protocol.md "Snapshot
//! before mutate" — the pre-restore snapshot, the unrevert-point, the
//! journal, and only then the files.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::git::{move_words, GitMove, GitThen};
use super::journal::Journal;
use crate::engine::api::{
    ChangeReason, CheckpointKind, Conflict, ConflictReason, OnConflict, RestoreResult, Uncaptured,
};
use crate::engine::record::snapshot::{diff_lists, SnapshotSpec};
use crate::engine::{result_path, turn_of, Engine, EngineError, EngineEvent, FlatTree, Result};
use crate::repo_path::RepoPath;
use crate::session::records::{Approval, Git, Record, StepSnapshot, UnrevertPoint};
use crate::session::EntryId;
use crate::store::{diff_trees, empty_tree_id, Change, ObjectId, TreeEntry, UncapturedPaths};
use crate::working_copy::CheckoutError;
use crate::working_copy::CheckoutPlan;

/// What a restore will do, computed before anything is written.
pub(crate) struct Plan {
    /// The tree restored to (none for a revert, whose files are merged).
    pub target: Option<ObjectId>,
    /// The working directory as scanned now.
    pub working: ObjectId,
    pub writes: Vec<(RepoPath, TreeEntry)>,
    pub deletes: Vec<RepoPath>,
    pub skipped: Vec<RepoPath>,
    /// Paths the target did not capture, left as they are (also in
    /// `skipped`).
    pub not_captured: Vec<Uncaptured>,
    pub dirty: Vec<RepoPath>,
    pub conflicts: Vec<Conflict>,
    /// What the restore changes in the working tree (path → new entry, or
    /// `None` when deleted): applied to `working`, the tree it leaves.
    pub expected_changes: BTreeMap<String, Option<TreeEntry>>,
    /// The scan that found `working` (its stats go into a pre-restore
    /// snapshot).
    pub scan: crate::working_copy::ScanOutput,
    pub scan_time: std::time::Duration,
    /// The scan's hold on gc, until `working` is recorded (see
    /// `WorkingState::gc_guard`).
    pub gc_guard: Option<crate::store::WriterGuard>,
    /// Contents the writes need that the store may not hold yet (merge
    /// results of a revert or a hunk-level restore), stored by `execute`.
    pub blobs: Vec<Vec<u8>>,
}

impl Plan {
    pub fn is_noop(&self) -> bool {
        self.writes.is_empty() && self.deletes.is_empty()
    }

    pub fn preview_result(&self) -> RestoreResult {
        RestoreResult {
            preview: true,
            restored: self.writes.iter().map(|(p, _)| p.clone()).collect(),
            deleted: self.deletes.clone(),
            skipped: self.skipped.clone(),
            not_captured: self.not_captured.clone(),
            dirty: self.dirty.clone(),
            conflicts: self.conflicts.clone(),
            unrevert_entry_id: None,
            warnings: Vec::new(),
            git_moved: false,
        }
    }
}

/// What the caller records about the operation in its unrevert-point.
pub(crate) struct Operation {
    pub kind: ChangeReason,
    /// The entry restored to, when there is one.
    pub target_entry: Option<EntryId>,
    /// Where the unrevert-point goes (default: the leaf).
    pub parent: Option<EntryId>,
    /// Navigation only: the tip of the branch left, and the target.
    pub old_leaf_id: Option<EntryId>,
    pub target_id: Option<EntryId>,
    /// Undo only: the unrevert-point undone.
    pub undone_entry_id: Option<EntryId>,
    /// Revert only: the first and last checkpoint whose changes were taken out.
    pub reverted: Option<(EntryId, EntryId)>,
    /// `git` was asked for: HEAD and the index move too.
    pub move_git: bool,
    /// The move of HEAD and the index after the files (planned by
    /// `Engine::plan_git_move`, when `move_git`).
    pub git: Option<GitMove>,
}

impl Operation {
    /// What git is compared with for this operation's plan: the restore
    /// undone's starting point, else the target's checkpoint.
    pub fn git_then(&self) -> Option<GitThen> {
        match (&self.undone_entry_id, &self.target_entry) {
            (Some(u), _) => Some(GitThen::BeforeRestore(u.clone())),
            (None, Some(t)) => Some(GitThen::Checkpoint(t.clone())),
            (None, None) => None,
        }
    }
}

/// The working directory scanned for a plan, with the state the sidecar last
/// recorded (what "changed since" is judged against).
pub(crate) struct Scanned {
    pub recorded: FlatTree,
    pub working: FlatTree,
    pub state: crate::working_copy::WorkingState,
}

/// The same entry (kind, content and mode), or both absent.
pub(crate) fn entry_eq(a: Option<&TreeEntry>, b: Option<&TreeEntry>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.kind == b.kind && a.id == b.id && a.mode == b.mode,
        _ => false,
    }
}

/// What a restore writes at a path whose target file came from a tree that
/// did not record modes ([`Engine::modes_known`]): such a tree says 0o644 or
/// 0o755 for every file, whatever the file had, so the file keeps the
/// permission bits it has on disk, with the owner's (and, where it may read,
/// everyone's) execute bit as the target says. A restore to a checkpoint from
/// before modes were recorded therefore changes no file's mode but the
/// executable bit, as restores did then, and never opens a private file to
/// others (docs/format.md "What a restore does not put back").
fn with_unknown_mode(target: TreeEntry, working: &TreeEntry) -> TreeEntry {
    if !target.kind.has_mode() || !working.kind.has_mode() || !target.has_ordinary_mode() {
        return target;
    }
    let bits = u32::from(working.mode);
    let bits = if target.kind == crate::store::EntryKind::Executable {
        // Execute for the owner and for each class that may read: 0o644
        // becomes 0o755, 0o600 0o700.
        bits | ((bits & 0o444) >> 2) | 0o100
    } else {
        bits & !0o111
    };
    TreeEntry::file(bits, target.id, target.size)
}

impl Engine {
    /// Whether the files of `tree` have the modes it records: a record this
    /// session holds captured it with its modes (`modes: true`,
    /// docs/format.md "step-snapshot"), or it is the empty tree. A tree only
    /// older builds recorded says 0o644 or 0o755 for every file whatever the
    /// file had, and so does a tree named by hash that no record captured.
    pub(crate) fn modes_known(&self, tree: &ObjectId) -> bool {
        if *tree == empty_tree_id() {
            return true;
        }
        self.log.index().entries().iter().any(|e| {
            if let Some(s) = e.record::<StepSnapshot>() {
                s.modes && s.snapshot_tree_hash == Some(*tree)
            } else if let Some(u) = e.record::<UnrevertPoint>() {
                u.modes
                    && (u.pre_rollback_tree_hash == Some(*tree)
                        || u.working_tree_hash == Some(*tree))
            } else if let Some(a) = e.record::<Approval>() {
                a.modes
                    && (a.approved_tree_hash == Some(*tree) || a.working_tree_hash == Some(*tree))
            } else {
                false
            }
        })
    }

    /// Scan the working directory for a plan.
    pub(crate) fn scan_for_plan(&mut self) -> Result<Scanned> {
        let recorded_tree = self.recorded_tree();
        let recorded = self.flat(recorded_tree)?;
        let state = self.scan_working(None, &recorded)?;
        let working = self.flat(Some(state.tree))?;
        Ok(Scanned {
            recorded,
            working,
            state,
        })
    }

    /// Plan restoring `target` (only `filter`'s paths when given).
    pub(crate) fn plan_restore(
        &mut self,
        target: ObjectId,
        filter: Option<&[RepoPath]>,
        mode: OnConflict,
    ) -> Result<Plan> {
        let scanned = self.scan_for_plan()?;
        self.plan_in(scanned, Some(target), filter, mode, BTreeMap::new())
    }

    /// Plan against a scan: restore `target`'s files (those in `filter`),
    /// and set each path of `merged` to its entry (`None`: delete). The
    /// `merged` outcomes were computed from the scanned files themselves
    /// (a revert, a hunk-level restore), so they lose nothing that changed
    /// since the last checkpoint and get no `dirty` check; only an
    /// uncaptured file in the way stops them.
    pub(crate) fn plan_in(
        &mut self,
        scanned: Scanned,
        target: Option<ObjectId>,
        filter: Option<&[RepoPath]>,
        mode: OnConflict,
        merged: BTreeMap<String, Option<TreeEntry>>,
    ) -> Result<Plan> {
        let Scanned {
            recorded,
            working,
            mut state,
        } = scanned;
        let in_filter = |p: &str| filter.is_none_or(|f| f.iter().any(|r| r.is_prefix_of(p)));
        // Only the paths that differ: the tree diff descends into directories
        // whose ids differ, so planning costs what the restore changes, not
        // what the project holds.
        let mut changes: Vec<Change> = match &target {
            Some(target) => diff_trees(&self.store, Some(&state.tree), Some(target))?,
            None => Vec::new(),
        };
        // What either side did not capture, before the filter: a file below
        // a directory the target could not list is as uncaptured as the
        // directory (docs/architecture.md rule 14).
        let target_uncaptured = UncapturedPaths::of(&changes, |c| c.new);
        let working_uncaptured = UncapturedPaths::of(&changes, |c| c.old);
        changes.retain(|c| in_filter(&c.path) && !merged.contains_key(&c.path));
        let from_working: BTreeSet<String> = merged.keys().cloned().collect();
        changes.extend(merged.into_iter().map(|(path, new)| Change {
            old: working.get(&path).copied(),
            path,
            new,
        }));
        changes.sort_by(|a, b| a.path.cmp(&b.path));

        let mut plan = Plan {
            target,
            working: state.tree,
            writes: Vec::new(),
            deletes: Vec::new(),
            skipped: Vec::new(),
            not_captured: Vec::new(),
            dirty: Vec::new(),
            conflicts: Vec::new(),
            expected_changes: BTreeMap::new(),
            scan: crate::working_copy::ScanOutput::default(),
            scan_time: state.duration,
            gc_guard: state.gc_guard.take(),
            blobs: Vec::new(),
        };
        // Paths the plan deletes, so a write below a captured file or
        // symlink that is going away is not mistaken for a blocked one.
        let deleting: BTreeSet<&str> = changes
            .iter()
            .filter(|c| c.new.is_none())
            .map(|c| c.path.as_str())
            .collect();
        // A target from before modes were recorded does not say what a
        // file's mode was; the file keeps its own (`with_unknown_mode`).
        let modes_known = target.as_ref().is_none_or(|t| self.modes_known(t));
        let recorded_modes_known = self.recorded_tree().is_none_or(|t| self.modes_known(&t));
        for c in &changes {
            let path = c.path.as_str();
            let adjusted = match (c.new, c.old.as_ref()) {
                (Some(t), Some(w)) if !modes_known && !from_working.contains(path) => {
                    Some(with_unknown_mode(t, w))
                }
                (t, _) => t,
            };
            let (w, t) = (c.old.as_ref(), adjusted.as_ref());
            if entry_eq(t, w) {
                continue;
            }
            if let Some(reason) = target_uncaptured.at(path) {
                // The target saw something here but did not capture it: what
                // it was is unknown, so whatever is here now stays.
                plan.not_captured.push(Uncaptured {
                    path: result_path(path),
                    reason,
                });
                plan.skipped.push(result_path(path));
                continue;
            }
            if working_uncaptured.at(path).is_some() {
                // Not captured now: never deleted or overwritten (rule 2).
                if t.is_some() {
                    plan.conflicts.push(Conflict {
                        path: result_path(path),
                        reason: ConflictReason::InTheWay,
                    });
                    plan.skipped.push(result_path(path));
                }
                continue;
            }
            if t.is_some() && w.is_none() {
                // Something the sidecar never captured where the target has
                // a file: left alone in every mode.
                if let Some(reason) = self.uncaptured_in_the_way(path, &working, &deleting) {
                    tracing::debug!(path, reason, "restore blocked by an uncaptured path");
                    plan.conflicts.push(Conflict {
                        path: result_path(path),
                        reason: ConflictReason::InTheWay,
                    });
                    plan.skipped.push(result_path(path));
                    continue;
                }
            }
            // Judged by the same rule: a mode an older build's recorded
            // state could not know is no edit.
            let was = match (recorded.get(path), w) {
                (Some(r), Some(w)) if !recorded_modes_known => Some(with_unknown_mode(*r, w)),
                (r, _) => r.copied(),
            };
            let dirty = !from_working.contains(path) && !entry_eq(w, was.as_ref());
            if dirty {
                plan.dirty.push(result_path(path));
                if mode != OnConflict::Overwrite {
                    plan.conflicts.push(Conflict {
                        path: result_path(path),
                        reason: ConflictReason::Dirty,
                    });
                    plan.skipped.push(result_path(path));
                    continue;
                }
            }
            match t {
                Some(t) => plan.writes.push((result_path(path), *t)),
                None => plan.deletes.push(result_path(path)),
            }
            plan.expected_changes.insert(path.to_string(), t.copied());
        }
        // A skipped deletion keeps its file, so a write that needed that
        // path to become a directory cannot happen either. (A path is only
        // skipped when its old and new entries differ, so a skipped path the
        // plan was deleting had a file to keep.)
        let kept: BTreeSet<&RepoPath> = plan
            .skipped
            .iter()
            .filter(|s| deleting.contains(s.as_str()))
            .collect();
        if !kept.is_empty() {
            let mut blocked = Vec::new();
            plan.writes.retain(|(p, _)| {
                let hit = kept.iter().any(|k| k.is_prefix_of(p.as_str()) && *k != p);
                if hit {
                    blocked.push(p.clone());
                }
                !hit
            });
            for p in blocked {
                // Left as the working directory has it.
                plan.expected_changes.remove(p.as_str());
                plan.conflicts.push(Conflict {
                    path: p.clone(),
                    reason: ConflictReason::InTheWay,
                });
                plan.skipped.push(p);
            }
        }
        plan.conflicts.sort();
        plan.skipped.sort();
        plan.not_captured.sort();
        plan.scan = state.scan;
        Ok(plan)
    }

    /// Is an uncaptured file (or a directory holding uncaptured files, or a
    /// parent that is not a directory) standing where `path` must go?
    pub(crate) fn uncaptured_in_the_way(
        &self,
        path: &str,
        working: &FlatTree,
        deleting: &BTreeSet<&str>,
    ) -> Option<&'static str> {
        // Parents first: looking at the path itself through a parent that
        // is a symlink would look outside the project.
        if let Some(parent) = self.working_copy.blocking_parent(path) {
            return if deleting.contains(parent.as_str()) {
                // A captured file or symlink the restore removes first.
                None
            } else {
                Some("uncaptured file in place of a parent directory")
            };
        }
        self.working_copy.uncaptured_at(path, working)
    }

    /// Snapshot before mutate: when the disk differs from the checkpoint at
    /// the leaf, record it (kind "pre-restore") at the leaf, so the branch
    /// being left keeps its latest work. Returns the new entry's id.
    pub(crate) fn pre_restore_snapshot(&mut self, plan: &mut Plan) -> Result<Option<EntryId>> {
        if self.leaf_checkpoint_tree()? == Some(plan.working) {
            return Ok(None);
        }
        let spec = SnapshotSpec::forced(CheckpointKind::PreRestore, self.leaf_id());
        let state = crate::working_copy::WorkingState {
            tree: plan.working,
            scan: std::mem::take(&mut plan.scan),
            duration: plan.scan_time,
            gc_guard: plan.gc_guard.take(),
        };
        Ok(self.record_state(&spec, state)?.entry_id)
    }

    /// Carry out a plan (after [`Engine::pre_restore_snapshot`]): the
    /// unrevert-point, the journal, then the files.
    pub(crate) fn execute(&mut self, plan: Plan, op: Operation) -> Result<RestoreResult> {
        let mut result = RestoreResult {
            preview: false,
            skipped: plan.skipped.clone(),
            not_captured: plan.not_captured.clone(),
            dirty: plan.dirty.clone(),
            conflicts: plan.conflicts.clone(),
            ..Default::default()
        };
        let git_move = op.git.as_ref().filter(|m| !m.is_empty());
        if plan.is_noop() && git_move.is_none() {
            return Ok(result);
        }
        for bytes in &plan.blobs {
            self.store.put(bytes)?;
        }
        // Every object the restore writes must be readable before the first
        // file is touched: a corrupt one stops the restore here (1003).
        for (_, e) in &plan.writes {
            self.store.get(&e.id)?;
        }
        // The tree the restore leaves, and its files derived from the
        // scan's (not flattened again from the store by the next operation).
        let working_files = self.flat(Some(plan.working))?;
        let (expected_tree, _) = self.flat_cache.derive(
            &self.store,
            plan.working,
            working_files,
            &plan.expected_changes,
        )?;
        let parent = op.parent.clone().or_else(|| self.leaf_id());
        let parent_cp = match &parent {
            Some(id) => self.checkpoint_tree(id)?,
            None => None,
        };
        let (parent_tree, turn) = match parent_cp {
            Some((e, t)) => (Some(t), turn_of(e)),
            None => (None, 0),
        };
        let changes = diff_trees(&self.store, parent_tree.as_ref(), Some(&expected_tree))?;
        // Git as the restore finds it, for `undo` with `git` (read only;
        // its index's listing is stored under the lock that keeps gc out,
        // docs/architecture.md rule 10).
        let git_before = {
            let no_gc = self.store.writer_guard()?;
            if no_gc.stale {
                self.store.refresh_after_gc(no_gc.generation)?;
            }
            self.git_now(plan.working)
        };
        let mut touched: Vec<&str> = plan.writes.iter().map(|(p, _)| p.as_str()).collect();
        touched.extend(plan.deletes.iter().map(RepoPath::as_str));
        touched.sort();
        let record = UnrevertPoint {
            kind: Some(op.kind.as_str().to_string()),
            pre_rollback_tree_hash: Some(plan.working),
            target_tree_hash: plan.target,
            rolled_back_to_leaf: op.target_entry,
            restored_files: touched.into_iter().map(str::to_string).collect(),
            working_tree_hash: Some(expected_tree),
            diff: diff_lists(&changes),
            turn_index: turn,
            old_leaf_id: op.old_leaf_id,
            target_id: op.target_id,
            undone_entry_id: op.undone_entry_id,
            reverted_entry_id: op.reverted.as_ref().map(|r| r.0.clone()),
            reverted_to_entry_id: op.reverted.map(|r| r.1),
            modes: true,
            pre_rollback_git: git_before.as_ref().map(|g| Git {
                branch: g.branch.clone(),
                head: g.head.clone(),
                dirty: g.dirty,
                extra: Default::default(),
            }),
            pre_rollback_git_index_tree_hash: git_before.as_ref().and_then(|g| g.index),
            git: git_move.map(|m| Git {
                branch: m.to.branch.clone(),
                head: m.to.head.clone(),
                dirty: None,
                extra: Default::default(),
            }),
            git_index_tree_hash: git_move.and_then(|m| m.to.index),
            extra: Default::default(),
        };
        let entry_id = EntryId::generate(|c| self.log.index().contains(c));
        let new_entry = record.to_new_entry(Some(entry_id.clone()), parent)?;
        drop(record);
        // The journal goes first: if we die after the unrevert-point is
        // appended, the next start finds the journal and completes the
        // restore; if we die before, the journal names an entry that never
        // made it and nothing was touched.
        let journal = Journal {
            version: 1,
            unrevert_entry_id: entry_id.clone(),
            pre_rollback_tree_hash: plan.working.to_hex(),
            working_tree_hash: expected_tree.to_hex(),
            writes: plan.writes.iter().map(|(p, _)| p.to_string()).collect(),
            deletes: plan.deletes.iter().map(RepoPath::to_string).collect(),
        };
        let journal_path = crate::store::Layout::session_journal(self.log.path());
        self.store.sync()?;
        journal.write(&journal_path, self.fsync)?;
        let appended = self.log.append(new_entry);
        if let Err(e) = appended {
            Journal::remove(&journal_path);
            return Err(e.into());
        }
        result.unrevert_entry_id = Some(entry_id);

        let before = self.flat(Some(plan.working))?;
        let failures = self.apply(
            &plan.writes,
            &plan.deletes,
            &before,
            op.kind.as_str(),
            &mut result,
        );
        Journal::remove(&journal_path);
        // Git after the files (docs/architecture.md rule 6): the
        // unrevert-point already holds what `undo` with `git` puts back.
        if let Some(m) = git_move {
            let action = format!("rewind {}", op.kind.as_str());
            match self.apply_git_move(m, &action) {
                Some(failed) => result.warnings.push(failed),
                None => {
                    result.git_moved = true;
                    result.warnings.push(move_words(m, true));
                }
            }
        }
        if !failures.is_empty() {
            // The disk is not what the unrevert-point says: record what it
            // is, so the recorded state stays true.
            let recorded = self.flat(Some(expected_tree))?;
            let state = self.scan_working(None, &recorded)?;
            // Not forced: if the failures left the disk as the checkpoint
            // already says, there is nothing to record.
            let spec = SnapshotSpec {
                force: false,
                ..SnapshotSpec::forced(CheckpointKind::PostRestore, self.leaf_id())
            };
            self.record_state(&spec, state)?;
        }
        result.conflicts.sort();
        result.skipped.sort();
        self.emit(EngineEvent::FilesChanged {
            reason: op.kind,
            written: result.restored.clone(),
            deleted: result.deleted.clone(),
        });
        Ok(result)
    }

    /// Touch the files ([`WorkingCopy::checkout`]): deletions, then writes,
    /// each only while the path still holds what `before` says (the state
    /// the restore was planned against, docs/architecture.md rule 11). A path
    /// that changed since is left alone as a `dirty` conflict; other failures
    /// become `unwritable` or `untracked` conflicts; the rest goes on.
    /// Returns the paths that failed, in the order they were tried.
    ///
    /// [`WorkingCopy::checkout`]: crate::working_copy::WorkingCopy::checkout
    pub(crate) fn apply(
        &mut self,
        writes: &[(RepoPath, TreeEntry)],
        deletes: &[RepoPath],
        before: &FlatTree,
        operation: &str,
        result: &mut RestoreResult,
    ) -> Vec<RepoPath> {
        let mut last_progress = Instant::now();
        let plan = CheckoutPlan {
            writes,
            deletes,
            before,
        };
        let outcome = self
            .working_copy
            .checkout(&self.store, plan, &mut |done, total| {
                self.progress(operation, done, total, &mut last_progress)
            });
        let mut failures = Vec::with_capacity(outcome.failed.len());
        for (path, err) in outcome.failed {
            let reason = match err {
                CheckoutError::Blocked { .. } => ConflictReason::InTheWay,
                CheckoutError::Io { .. } => ConflictReason::Unwritable,
                CheckoutError::Changed { .. } => {
                    result.dirty.push(path.clone());
                    ConflictReason::Dirty
                }
            };
            result.conflicts.push(Conflict {
                path: path.clone(),
                reason,
            });
            result.skipped.push(path.clone());
            failures.push(path);
        }
        result.deleted.extend(outcome.deleted);
        result.deleted.sort();
        result.restored.extend(outcome.restored);
        result.restored.sort();
        failures
    }

    fn progress(&self, operation: &str, done: u64, total: u64, last: &mut Instant) {
        if last.elapsed() >= progress_interval() && done < total {
            *last = Instant::now();
            self.emit(EngineEvent::Progress {
                operation: operation.to_string(),
                done,
                total,
            });
        }
    }

    /// What a person should know of git before trusting the restored
    /// files: what git did since the target's checkpoint, in words.
    pub(crate) fn git_warnings(&self, target_entry: Option<&EntryId>) -> Vec<String> {
        match target_entry {
            Some(id) => self.git_words(&GitThen::Checkpoint(id.clone())),
            None => Vec::new(),
        }
    }
}

/// How often a long restore says how far it got: every 100 ms, or what
/// `REWIND_PROGRESS_MS` says (0: after every file — the crash tests kill a
/// restore at its n-th note, so the kill lands while files are written).
fn progress_interval() -> Duration {
    static INTERVAL: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *INTERVAL.get_or_init(|| {
        let ms = std::env::var("REWIND_PROGRESS_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100);
        Duration::from_millis(ms)
    })
}

/// Parse and check a restore's `files` filter.
pub(crate) fn parse_filter(
    root: &std::path::Path,
    files: Option<Vec<RepoPath>>,
) -> Result<Option<Vec<RepoPath>>> {
    let Some(files) = files else { return Ok(None) };
    let out = crate::engine::parse_paths(root, &files)?;
    if out.is_empty() {
        return Err(EngineError::InvalidParams(
            "files is empty: give at least one path, or omit it for all files".into(),
        ));
    }
    Ok(Some(out))
}
