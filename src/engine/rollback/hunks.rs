//! Hunk-level restore: `restore_files` with `hunks` takes back chosen hunks
//! of a file's diff from the restore's target to the working directory and
//! keeps the rest of the file as it is (docs/architecture.md "Revert").
//!
//! A hunk is named by its index and the hash of its text, both as
//! `get_file_diff` gave them: the diff is computed again here, and a
//! selection that no longer matches it (the file changed since, another
//! `contextLines`) is refused rather than applied to other lines.

use std::collections::{BTreeMap, BTreeSet};

use similar::DiffableStr;

use super::restore::Scanned;
use crate::engine::api::HunkSelection;
use crate::engine::query::files::{as_text, MAX_DIFF_BYTES};
use crate::engine::query::line_diff::{self, DiffBudget};
use crate::engine::{parse_path, Engine, EngineError, Result};
use crate::repo_path::RepoPath;
use crate::store::{lookup, EntryKind, ObjectId, TreeEntry};

/// The files a hunk-level restore writes: path → what to leave there, and
/// the contents to store first.
pub(crate) struct HunkWrites {
    pub outcomes: BTreeMap<String, Option<TreeEntry>>,
    pub blobs: Vec<Vec<u8>>,
}

impl Engine {
    /// Apply `selections` (hunks of the diff `target` → the scanned working
    /// directory) to the scanned files. `whole` are the paths restored whole
    /// in the same call, which a selection may not name.
    pub(crate) fn hunk_writes(
        &self,
        scanned: &Scanned,
        target: &ObjectId,
        selections: Vec<HunkSelection>,
        whole: Option<&[RepoPath]>,
    ) -> Result<HunkWrites> {
        let mut out = HunkWrites {
            outcomes: BTreeMap::new(),
            blobs: Vec::new(),
        };
        let mut budget = DiffBudget::for_request();
        for sel in selections {
            let path = parse_path(self.working_copy.root(), &sel.path)?;
            let path_str = path.as_str().to_string();
            if whole.is_some_and(|w| w.iter().any(|r| r.is_prefix_of(&path_str))) {
                return Err(EngineError::InvalidParams(format!(
                    "{path_str} is in both files and hunks: restore it whole or by hunks"
                )));
            }
            if out.outcomes.contains_key(&path_str) {
                return Err(EngineError::InvalidParams(format!(
                    "{path_str} is named twice in hunks"
                )));
            }
            if sel.hunks.is_empty() {
                return Err(EngineError::InvalidParams(format!(
                    "no hunks selected for {path_str}"
                )));
            }
            let old = lookup(&self.store, target, &path_str)?.filter(|e| e.kind != EntryKind::Tree);
            let now = scanned.working.get(&path_str).copied();
            let old_text = self.hunk_text(&path_str, old.as_ref())?;
            let now_text = self.hunk_text(&path_str, now.as_ref())?;
            let diff = line_diff::unified(
                &path_str,
                &old_text,
                &now_text,
                sel.context_lines.unwrap_or(3),
                &mut budget,
            );
            let mut chosen = BTreeSet::new();
            for r in &sel.hunks {
                let hunk = diff.hunks.get(r.index as usize);
                if hunk.is_none_or(|h| line_diff::hunk_hash(&h.text) != r.hash) {
                    return Err(EngineError::StaleHunk {
                        path: path_str,
                        index: r.index,
                    });
                }
                chosen.insert(r.index as usize);
            }
            let old_lines = old_text.tokenize_lines();
            let now_lines = now_text.tokenize_lines();
            // Each chosen hunk's lines on the working side replaced by its
            // lines on the target side; hunks do not overlap.
            let mut result = String::with_capacity(now_text.len());
            let mut at = 0;
            for (i, h) in diff.hunks.iter().enumerate() {
                if !chosen.contains(&i) {
                    continue;
                }
                for line in &now_lines[at..h.new.start] {
                    result.push_str(line);
                }
                for line in &old_lines[h.old.clone()] {
                    result.push_str(line);
                }
                at = h.new.end;
            }
            for line in &now_lines[at..] {
                result.push_str(line);
            }
            let outcome = if result.is_empty() && old.is_none() {
                // Every line the file gained since the target taken back,
                // and the target has no such file.
                None
            } else {
                // The file keeps its kind and mode (the working one's, else the
                // target's): hunks are content.
                let bytes = result.into_bytes();
                let (id, size) = (ObjectId::of(&bytes), bytes.len() as u64);
                let entry = match now.or(old) {
                    Some(e) => TreeEntry { id, size, ..e },
                    None => TreeEntry::new(EntryKind::File, id, size),
                };
                out.blobs.push(bytes);
                Some(entry)
            };
            out.outcomes.insert(path_str, outcome);
        }
        Ok(out)
    }

    /// A file's text for a hunk-level restore (empty when absent); binary,
    /// too large and symlinks are refused.
    fn hunk_text(&self, path: &str, e: Option<&TreeEntry>) -> Result<String> {
        let Some(e) = e else {
            return Ok(String::new());
        };
        let refuse = |why: &str| {
            Err(EngineError::InvalidParams(format!(
                "{path} is {why}: restore it whole (without hunks)"
            )))
        };
        if e.kind == EntryKind::Symlink {
            return refuse("a symlink");
        }
        if let Some(r) = e.not_captured() {
            return Err(EngineError::InvalidParams(format!(
                "{path} was not captured ({}): it has no hunks to restore",
                r.as_str()
            )));
        }
        if e.size > MAX_DIFF_BYTES {
            return refuse("too large to diff");
        }
        match as_text(self.store.get(&e.id)?) {
            Some(text) => Ok(text),
            None => refuse("binary"),
        }
    }
}
