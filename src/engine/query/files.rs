//! Read-side queries: checkpoints, modified files, diffs, history, status
//! and stats. None of them appends anything or moves the leaf.

use base64::Engine as _;

use super::line_diff::{self, DiffBudget};
use crate::engine::api::{
    CheckpointInfo, ContentEncoding, DiffHunk, FileDiff, FileDiffParams, FileHistoryParams,
    FileHistoryResult, FileStatus, FileVersion, ListCheckpointsParams, ListCheckpointsResult,
    ModifiedFile, ModifiedFilesResult, RangeParams, Scope, StatsResult, StatusFile, StatusResult,
};
use crate::engine::{
    approved_tree, diff_of, kind_of, label_for, note_for, result_path, tree_of, turn_of, Engine,
    EngineError, Point, Result,
};
use crate::session::records::StepSnapshot;
use crate::session::{Entry, CUSTOM_APPROVAL, CUSTOM_STEP_SNAPSHOT};
use crate::store::{classify, diff_trees, lookup, ObjectId, TreeEntry, UncapturedReason};

/// Content is shown (and diffed) up to this size; larger is `isTooLarge`.
pub(crate) const MAX_DIFF_BYTES: u64 = 8 * 1024 * 1024;

/// Git's heuristic: a NUL in the first 8000 bytes, or not UTF-8.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    has_early_nul(bytes) || std::str::from_utf8(bytes).is_err()
}

fn has_early_nul(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|&b| b == 0)
}

/// The content as text, `None` when [`is_binary`] says binary (UTF-8 is
/// checked once, by the conversion itself).
pub(crate) fn as_text(bytes: Vec<u8>) -> Option<String> {
    if has_early_nul(&bytes) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// A hunk as `get_file_diff` shows it: numbered, with the header's 1-based starts.
fn wire_hunk((index, h): (usize, &line_diff::Hunk)) -> DiffHunk {
    let start = |r: &std::ops::Range<usize>| {
        // As the `@@` header: an empty side names the line before it.
        (if r.is_empty() { r.start } else { r.start + 1 }) as u64
    };
    DiffHunk {
        index: index as u32,
        old_start: start(&h.old),
        old_lines: h.old.len() as u64,
        new_start: start(&h.new),
        new_lines: h.new.len() as u64,
        hash: line_diff::hunk_hash(&h.text),
    }
}

impl Engine {
    /// The tree of the working directory, scanned against the recorded one.
    fn working_tree(&mut self) -> Result<ObjectId> {
        let recorded = self.recorded_tree();
        let prior = self.flat(recorded)?;
        Ok(self.scan_working(None, &prior)?.tree)
    }

    /// Resolve one side of a range to a point and its tree.
    fn resolve(&mut self, point: Option<Point>, default: Point) -> Result<(Point, ObjectId)> {
        let point = point.unwrap_or(default);
        let tree = match &point {
            Point::Entry(id) => match self.checkpoint_tree(id)? {
                Some((_, t)) => t,
                None => crate::store::empty_tree_id(),
            },
            Point::Tree(t) => {
                // Verifies it is a tree (a blob hash is not a point).
                if *t != crate::store::empty_tree_id() {
                    self.store
                        .get_tree(t)
                        .map_err(|_| EngineError::UnknownTree(t.to_hex()))?;
                }
                *t
            }
            Point::Working => self.working_tree()?,
        };
        Ok((point, tree))
    }

    pub(super) fn range(
        &mut self,
        from: Option<Point>,
        to: Option<Point>,
    ) -> Result<((Point, ObjectId), (Point, ObjectId))> {
        let baseline = self
            .baseline()
            .map(|e| Point::Entry(e.id.clone()))
            .unwrap_or(Point::Working);
        let leaf = self.leaf_id().map(Point::Entry).unwrap_or(Point::Working);
        let from = self.resolve(from, baseline)?;
        let to = self.resolve(to, leaf)?;
        Ok((from, to))
    }

    /// Tree-recording entries that lead from `from` to `to`, oldest first,
    /// as positions in the session (ascending: an ancestor precedes its
    /// descendants in the file): those on the path to `to` that are not on
    /// the path to `from`. When `from` is a tree (a hash, or the live
    /// directory), the range starts after the last entry on the path that
    /// recorded that tree; a tree no entry on the path recorded starts it
    /// after the baseline.
    fn entries_between(&self, from: &Point, from_tree: ObjectId, to: &Point) -> Vec<usize> {
        let index = self.log.index();
        let to_id = match to {
            Point::Entry(id) => id.clone(),
            // The working directory sits below the leaf.
            Point::Working => match index.leaf() {
                Some(l) => l.id.clone(),
                None => return Vec::new(),
            },
            Point::Tree(_) => return Vec::new(),
        };
        let path: Vec<usize> = index
            .path_positions(&to_id)
            .into_iter()
            .filter(|&i| index.records_tree(i))
            .collect();
        match from {
            Point::Entry(id) => {
                let from_path = index.path_positions(id);
                path.into_iter()
                    .filter(|i| from_path.binary_search(i).is_err())
                    .collect()
            }
            _ => {
                let start = path
                    .iter()
                    .rposition(|&i| index.at(i).and_then(Entry::recorded_tree) == Some(from_tree))
                    .map(|i| i + 1)
                    .unwrap_or_else(|| {
                        if from_tree == crate::store::empty_tree_id() {
                            0
                        } else {
                            1.min(path.len())
                        }
                    });
                path.into_iter().skip(start).collect()
            }
        }
    }

    /// The tree of the checkpoint an entry's recorded diff is taken against
    /// (its parent's checkpoint; the empty tree for the baseline).
    fn parent_checkpoint_tree(&self, e: &Entry) -> Result<ObjectId> {
        match &e.parent_id {
            Some(p) => Ok(self
                .checkpoint_tree(p)?
                .map_or_else(crate::store::empty_tree_id, |(_, t)| t)),
            None => Ok(crate::store::empty_tree_id()),
        }
    }

    /// The entry a tree holds for a file path: its own leaf (not a
    /// directory), or, when a directory above it was not captured, that
    /// directory's uncaptured entry (the path may be there; nobody looked).
    pub(super) fn leaf_at(&self, tree: &ObjectId, path: &str) -> Result<Option<TreeEntry>> {
        if let Some(e) = lookup(&self.store, tree, path)? {
            return Ok((e.kind != crate::store::EntryKind::Tree).then_some(e));
        }
        for dir in crate::repo_path::ancestors(path) {
            match lookup(&self.store, tree, dir)? {
                Some(e) if !e.has_object() => return Ok(Some(e)),
                Some(e) if e.kind == crate::store::EntryKind::Tree => continue,
                _ => break,
            }
        }
        Ok(None)
    }

    /// Contents, hashes and unified diff of one file between two versions; the line
    /// diff draws on `budget`, which the request's other files share.
    fn file_diff(
        &self,
        path: &str,
        old: Option<TreeEntry>,
        new: Option<TreeEntry>,
        context: usize,
        too_large: bool,
        budget: &mut DiffBudget,
    ) -> Result<FileDiff> {
        let old_not_captured = old.and_then(|e| e.not_captured());
        let new_not_captured = new.and_then(|e| e.not_captured());
        // No content to show for a side that was not captured.
        let old = old.filter(TreeEntry::has_object);
        let new = new.filter(TreeEntry::has_object);
        let too_large = too_large
            || old_not_captured == Some(UncapturedReason::TooLarge)
            || new_not_captured == Some(UncapturedReason::TooLarge)
            || old.is_some_and(|e| e.size > MAX_DIFF_BYTES)
            || new.is_some_and(|e| e.size > MAX_DIFF_BYTES);
        let mut out = FileDiff {
            path: result_path(path),
            old_content: None,
            new_content: None,
            old_hash: old.map(|e| e.id),
            new_hash: new.map(|e| e.id),
            old_not_captured,
            new_not_captured,
            unified_diff: String::new(),
            additions: 0,
            deletions: 0,
            is_binary: false,
            is_too_large: too_large,
            is_approximate: false,
            encoding: ContentEncoding::Utf8,
            hunks: Vec::new(),
        };
        if too_large || old_not_captured.is_some() || new_not_captured.is_some() {
            return Ok(out);
        }
        let read = |e: Option<TreeEntry>| -> Result<Option<Vec<u8>>> {
            match e {
                Some(e) => Ok(Some(self.store.get(&e.id)?)),
                None => Ok(None),
            }
        };
        let old_bytes = read(old)?;
        let new_bytes = read(new)?;
        let binary = old_bytes.as_deref().is_some_and(is_binary)
            || new_bytes.as_deref().is_some_and(is_binary);
        if binary {
            let b64 =
                |b: Option<Vec<u8>>| b.map(|b| base64::engine::general_purpose::STANDARD.encode(b));
            out.is_binary = true;
            out.encoding = ContentEncoding::Base64;
            out.old_content = b64(old_bytes);
            out.new_content = b64(new_bytes);
            return Ok(out);
        }
        let old_text = old_bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
        let new_text = new_bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
        let diff = line_diff::unified(
            path,
            old_text.as_deref().unwrap_or(""),
            new_text.as_deref().unwrap_or(""),
            context,
            budget,
        );
        out.unified_diff = mode_lines(old, new) + &diff.text;
        out.additions = diff.additions;
        out.deletions = diff.deletions;
        out.is_approximate = diff.approximate;
        out.hunks = diff.hunks.iter().enumerate().map(wire_hunk).collect();
        out.old_content = old_text;
        out.new_content = new_text;
        Ok(out)
    }
}

/// git's `old mode` / `new mode` lines when a file's permission bits
/// changed (docs/format.md "Trees"), which a unified diff starts with; ""
/// otherwise. A change of mode alone is a diff of these two lines.
fn mode_lines(old: Option<TreeEntry>, new: Option<TreeEntry>) -> String {
    match (old, new) {
        (Some(o), Some(n)) if o.kind.has_mode() && n.kind.has_mode() && o.mode != n.mode => {
            // The regular-file type bits, as git writes them.
            format!(
                "old mode {:06o}\nnew mode {:06o}\n",
                0o100000 | u32::from(o.mode),
                0o100000 | u32::from(n.mode)
            )
        }
        _ => String::new(),
    }
}

/// `Engine::working_tree_hash` (the door in engine/mod.rs says what it does).
pub(crate) fn working_tree_hash(engine: &mut Engine) -> Result<ObjectId> {
    engine.working_tree()
}

/// `Engine::get_modified_files` (the door in engine/mod.rs says what it does).
pub(crate) fn get_modified_files(
    engine: &mut Engine,
    p: RangeParams,
) -> Result<ModifiedFilesResult> {
    let ((from, from_tree), (to, to_tree)) = engine.range(p.from, p.to)?;
    let changes = diff_trees(&engine.store, Some(&from_tree), Some(&to_tree))?;
    let between = engine.entries_between(&from, from_tree, &to);
    let index = engine.log.index();
    // The earliest entry in the range whose diff names the path: from
    // the per-path list of changing entries, not by reading every entry
    // of the range (a long session has thousands). The few entries with
    // diffs too large for that list (a baseline) are read when in range.
    let in_range = |i: &usize| between.binary_search(i).is_ok();
    let bulk: Vec<(usize, std::collections::HashSet<String>)> = index
        .bulk_changes()
        .iter()
        .filter(|i| in_range(i))
        .filter_map(|&i| {
            let diff = index.at(i)?.diff()?;
            Some((i, diff.paths().map(|(_, p)| p.to_string()).collect()))
        })
        .collect();
    let first_change = |path: &str| -> Option<&Entry> {
        let changes = index.changes_to(path);
        let from = changes.partition_point(|&i| between.first().is_some_and(|&b| i < b));
        let indexed = changes[from..].iter().copied().find(|i| in_range(i));
        let large = bulk
            .iter()
            .find(|(_, paths)| paths.contains(path))
            .map(|(i, _)| *i);
        let first = match (indexed, large) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        first.and_then(|i| index.at(i))
    };
    let files = changes
        .iter()
        .zip(classify(&changes))
        .map(|(c, class)| {
            let (status, reason) = FileStatus::of(class);
            let hit = first_change(&c.path);
            ModifiedFile {
                path: result_path(&c.path),
                status,
                reason,
                turn_index: hit.map(turn_of),
                entry_id: hit.map(|e| e.id.clone()),
            }
        })
        .collect();
    Ok(ModifiedFilesResult {
        files,
        from_tree_hash: from_tree,
        to_tree_hash: to_tree,
    })
}

/// `Engine::get_file_diff` (the door in engine/mod.rs says what it does).
pub(crate) fn get_file_diff(engine: &mut Engine, p: FileDiffParams) -> Result<Option<FileDiff>> {
    let path = crate::engine::parse_path(engine.working_copy.root(), &p.file_path)?;
    let ((_, from_tree), (_, to_tree)) = engine.range(p.from, p.to)?;
    let old = engine.leaf_at(&from_tree, path.as_str())?;
    let new = engine.leaf_at(&to_tree, path.as_str())?;
    if old.is_none() && new.is_none() {
        return Ok(None);
    }
    let context = p.context_lines.unwrap_or(3);
    Ok(Some(engine.file_diff(
        path.as_str(),
        old,
        new,
        context,
        false,
        &mut DiffBudget::for_request(),
    )?))
}

/// `Engine::get_file_history` (the door in engine/mod.rs says what it does).
pub(crate) fn get_file_history(
    engine: &mut Engine,
    p: FileHistoryParams,
) -> Result<FileHistoryResult> {
    let path = crate::engine::parse_path(engine.working_copy.root(), &p.file_path)?;
    let index = engine.log.index();
    let entries: Vec<&Entry> = match p.scope.unwrap_or_default() {
        Scope::Path => match index.leaf() {
            Some(l) => index.path_to_root(&l.id),
            None => Vec::new(),
        },
        Scope::All => index.entries().iter().collect(),
    };
    let mut versions = Vec::new();
    for e in entries.into_iter().filter(|e| e.is_tree_recording()) {
        let Some(status) = diff_of(e)
            .into_iter()
            .find(|(p, _)| p == path.as_str())
            .map(|(_, s)| s)
        else {
            continue;
        };
        let (hash, reason) = match status {
            FileStatus::Deleted => (None, None),
            FileStatus::Recaptured => {
                let tree = tree_of(e)?;
                let before = engine.parent_checkpoint_tree(e)?;
                let was = engine.leaf_at(&before, path.as_str())?;
                let now = lookup(&engine.store, &tree, path.as_str())?;
                (now.map(|t| t.id), was.and_then(|w| w.not_captured()))
            }
            _ => {
                let tree = tree_of(e)?;
                match engine.leaf_at(&tree, path.as_str())? {
                    Some(t) if !t.has_object() => (None, t.not_captured()),
                    t => (t.map(|t| t.id), None),
                }
            }
        };
        versions.push(FileVersion {
            entry_id: e.id.clone(),
            turn_index: turn_of(e),
            kind: kind_of(e),
            label: label_for(index, e, engine.working_copy.root()),
            timestamp: e.timestamp.clone(),
            status,
            reason,
            hash,
        });
    }
    Ok(FileHistoryResult { path, versions })
}

/// `Engine::list_checkpoints` (the door in engine/mod.rs says what it does).
pub(crate) fn list_checkpoints(
    engine: &Engine,
    p: ListCheckpointsParams,
) -> Result<ListCheckpointsResult> {
    let index = engine.log.index();
    let leaf = index.leaf().map(|l| &l.id);
    let entries: Vec<&Entry> = match p.scope.unwrap_or_default() {
        Scope::Path => leaf.map(|l| index.path_to_root(l)).unwrap_or_default(),
        Scope::All => index.entries().iter().collect(),
    };
    let query = p.query.map(|q| q.to_lowercase());
    let mut checkpoints = Vec::new();
    for e in entries.into_iter().filter(|e| e.is_tree_recording()) {
        let label = label_for(index, e, engine.working_copy.root());
        let note = note_for(index, e);
        if let Some(q) = &query {
            let hit = |s: &Option<String>| s.as_ref().is_some_and(|s| s.to_lowercase().contains(q));
            if !hit(&label) && !hit(&note) {
                continue;
            }
        }
        let diff = diff_of(e);
        let count = |s: FileStatus| diff.iter().filter(|(_, x)| *x == s).count() as u64;
        checkpoints.push(CheckpointInfo {
            entry_id: e.id.clone(),
            parent_id: e.parent_id.clone(),
            kind: kind_of(e),
            label,
            note,
            tool: e.snapshot_tool().map(str::to_string),
            git_branch: e
                .record::<StepSnapshot>()
                .and_then(|s| s.git)
                .and_then(|g| g.branch),
            timestamp: e.timestamp.clone(),
            tree_hash: tree_of(e)?,
            turn_index: turn_of(e),
            added: count(FileStatus::Added),
            modified: count(FileStatus::Modified),
            deleted: count(FileStatus::Deleted),
            not_captured: count(FileStatus::NotCaptured),
            on_current_path: leaf.is_some_and(|l| index.is_ancestor(&e.id, l)),
        });
    }
    Ok(ListCheckpointsResult {
        checkpoints,
        initial_entry_id: engine.baseline().map(|b| b.id.clone()),
    })
}

/// `Engine::get_status` (the door in engine/mod.rs says what it does).
pub(crate) fn get_status(engine: &mut Engine) -> Result<StatusResult> {
    let approval = engine
        .log
        .index()
        .latest_of_custom_type(CUSTOM_APPROVAL)
        .cloned();
    let base_tree = match &approval {
        Some(a) => approved_tree(a)?,
        None => match engine.baseline() {
            Some(b) => tree_of(b)?,
            None => crate::store::empty_tree_id(),
        },
    };
    let (_, working) = engine.resolve(None, Point::Working)?;
    let changes = diff_trees(&engine.store, Some(&base_tree), Some(&working))?;
    let mut changed_files = Vec::with_capacity(changes.len());
    // One budget for all files: the request as a whole is what must not stall.
    let mut budget = DiffBudget::for_request();
    for (c, class) in changes.iter().zip(classify(&changes)) {
        let d = engine.file_diff(&c.path, c.old, c.new, 3, false, &mut budget)?;
        let (status, reason) = FileStatus::of(class);
        changed_files.push(StatusFile {
            path: result_path(&c.path),
            status,
            reason,
            additions: d.additions,
            deletions: d.deletions,
            diff: (!d.is_binary && !d.is_too_large).then_some(d.unified_diff),
            base_content: if d.is_binary { None } else { d.old_content },
            is_binary: d.is_binary,
            is_too_large: d.is_too_large,
            is_approximate: d.is_approximate,
        });
    }
    Ok(StatusResult {
        has_unapproved: !changed_files.is_empty(),
        approved_entry_id: approval.as_ref().map(|a| a.id.clone()),
        last_approved_at: approval.as_ref().map(|a| a.timestamp.clone()),
        changed_files,
    })
}

/// `Engine::stats` (the door in engine/mod.rs says what it does).
pub(crate) fn stats(engine: &Engine) -> Result<StatsResult> {
    let usage = engine.store.usage()?;
    let snapshots = engine
        .log
        .index()
        .entries()
        .iter()
        .filter(|e| e.custom_type.as_deref() == Some(CUSTOM_STEP_SNAPSHOT))
        .count() as u64;
    Ok(StatsResult {
        store_bytes: usage.bytes,
        objects: usage.objects,
        sessions: crate::engine::open::known_sessions(&engine.store).len() as u64,
        snapshots,
        project_root: engine.working_copy.root().to_path_buf(),
        store_dir: engine.store.root().to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(is_binary(b"a\0b"));
        assert!(is_binary(&[0xff, 0xfe]));
        assert!(!is_binary("héllo\n".as_bytes()));
    }
}
