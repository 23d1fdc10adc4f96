//! `get_file_blame`: for each line of a file, the checkpoint that introduced
//! it (docs/architecture.md "Blame by turn").
//!
//! The file's versions are read along the path from the root to the point
//! asked for: the baseline's, then each checkpoint whose recorded diff names
//! the file. Each version is line-diffed against the one before it; equal
//! lines keep their origin and new ones take the checkpoint's. A version
//! whose content an earlier one already had (a restore, an undo) takes that
//! version's origins whole, so restored lines keep the turn that wrote them.
//! The origins at a checkpoint never change (the log is append-only), so
//! the last result per file is kept and the next request starts from it.

use std::collections::HashMap;
use std::sync::Arc;

use similar::{DiffTag, DiffableStr};

use super::line_diff::{self, DiffBudget};
use crate::engine::api::CheckpointKind;
use crate::engine::api::{BlameLine, FileBlameParams, FileBlameResult, FileStatus};
use crate::engine::query::files::{as_text, MAX_DIFF_BYTES};
use crate::engine::{
    diff_of, kind_of, label_for, parse_path, tree_of, turn_of, Engine, EngineError,
};
use crate::engine::{Point, Result};
use crate::session::EntryId;
use crate::store::{lookup, EntryKind, ObjectId};

/// How many files' origins are remembered between requests.
const CACHED_FILES: usize = 32;

/// Where a line comes from: the checkpoint entry that introduced it, or
/// `None` for a line of the working directory no checkpoint holds yet. An
/// `Arc`, since every version's origins copy the list of them.
type Origin = Option<Arc<EntryId>>;

/// The origin of each line of one version of a file: indexes into `entries`.
#[derive(Debug, Clone, Default)]
struct Origins {
    /// The content these origins are for (`None`: the file is absent).
    blob: Option<ObjectId>,
    entries: Vec<Origin>,
    lines: Vec<u32>,
    approximate: bool,
}

impl Origins {
    fn origin_index(&mut self, entry: &Origin) -> u32 {
        match self.entries.iter().rposition(|e| e == entry) {
            Some(i) => i as u32,
            None => {
                self.entries.push(entry.clone());
                (self.entries.len() - 1) as u32
            }
        }
    }
}

/// Origins computed by earlier requests, by file and checkpoint.
#[derive(Default)]
pub(crate) struct BlameCache {
    by_file: HashMap<String, (EntryId, Arc<Origins>)>,
}

impl BlameCache {
    fn get(&self, path: &str, entry: &EntryId) -> Option<Arc<Origins>> {
        self.by_file
            .get(path)
            .filter(|(e, _)| e == entry)
            .map(|(_, o)| o.clone())
    }

    fn put(&mut self, path: &str, entry: &EntryId, origins: Arc<Origins>) {
        if self.by_file.len() >= CACHED_FILES && !self.by_file.contains_key(path) {
            self.by_file.clear();
        }
        self.by_file
            .insert(path.to_string(), (entry.clone(), origins));
    }
}

/// One version of the file along the history.
struct Version {
    entry: Arc<EntryId>,
    blob: Option<ObjectId>,
}

fn text_of(path: &str, bytes: Vec<u8>) -> Result<String> {
    as_text(bytes).ok_or_else(|| {
        EngineError::InvalidParams(format!(
            "{path} is binary (or not UTF-8): it has no lines to blame"
        ))
    })
}

/// The origins of `new`'s lines given `old`'s: equal lines keep theirs, the
/// rest are `entry`'s.
fn carry(
    old: &Origins,
    old_text: &str,
    new_text: &str,
    entry: &Origin,
    blob: Option<ObjectId>,
    budget: &mut DiffBudget,
) -> Origins {
    let old_lines = old_text.tokenize_lines();
    let new_lines = new_text.tokenize_lines();
    let (ops, approximate) = line_diff::line_ops(&old_lines, &new_lines, budget);
    let mut out = Origins {
        blob,
        entries: old.entries.clone(),
        lines: Vec::with_capacity(new_lines.len()),
        approximate: old.approximate || approximate,
    };
    let mine = out.origin_index(entry);
    for op in ops {
        match op.tag() {
            DiffTag::Equal => out.lines.extend_from_slice(&old.lines[op.old_range()]),
            DiffTag::Delete => {}
            DiffTag::Insert | DiffTag::Replace => out
                .lines
                .extend(std::iter::repeat_n(mine, op.new_range().len())),
        }
    }
    out
}

impl Engine {
    /// The file's versions along the path to `end`: the first checkpoint's,
    /// then each later checkpoint whose diff names it.
    fn versions_of(&self, path: &str, end: &EntryId) -> Result<Vec<Version>> {
        let index = self.log.index();
        let mut out = Vec::new();
        let mut first = true;
        for e in index.path_to_root(end) {
            if !e.is_tree_recording() || e.recorded_tree().is_none() {
                continue;
            }
            let status = diff_of(e)
                .into_iter()
                .find_map(|(p, s)| (p == path).then_some(s));
            if !first && status.is_none() {
                continue;
            }
            // A checkpoint that did not capture the file has no version of
            // it: its lines keep the origins of the last one that did, and
            // the next captured version is compared with that one.
            if status == Some(FileStatus::NotCaptured) {
                continue;
            }
            first = false;
            let blob = lookup(&self.store, &tree_of(e)?, path)?
                .filter(|t| matches!(t.kind, EntryKind::File | EntryKind::Executable));
            if let Some(t) = blob {
                if t.size > MAX_DIFF_BYTES {
                    return Err(EngineError::InvalidParams(format!(
                        "{path} is too large to blame ({} bytes at {})",
                        t.size, e.id
                    )));
                }
            }
            out.push(Version {
                entry: Arc::new(e.id.clone()),
                blob: blob.map(|t| t.id),
            });
        }
        Ok(out)
    }

    /// The file on disk now (`None` when absent or not a regular file).
    fn working_file(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let abs = crate::repo_path::join(self.working_copy.root(), path);
        match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_file() => std::fs::read(&abs)
                .map(Some)
                .map_err(|e| EngineError::io("reading", abs, e)),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(EngineError::io("reading", abs, e)),
        }
    }
}

/// `Engine::get_file_blame` (the door in engine/mod.rs says what it does).
pub(crate) fn get_file_blame(engine: &mut Engine, p: FileBlameParams) -> Result<FileBlameResult> {
    let checked = parse_path(engine.working_copy.root(), &p.path)?;
    let path = checked.as_str();
    let at = p.at.unwrap_or(Point::Working);
    let working = at == Point::Working;
    let end = match at {
        Point::Working => engine.leaf_id(),
        Point::Entry(id) if !engine.log.index().contains(&id) => {
            return Err(EngineError::UnknownEntry(id))
        }
        Point::Entry(id) => Some(id),
        Point::Tree(t) => {
            return Err(EngineError::InvalidParams(format!(
                "blame needs an entry id or {}: tree {t} has no history",
                Point::WORKING
            )))
        }
    };
    let versions = match &end {
        Some(end) => engine.versions_of(path, end)?,
        None => Vec::new(),
    };
    let mut budget = DiffBudget::for_request();
    // Start from the latest version whose origins an earlier request
    // left, else from nothing.
    let (start, mut origins) = versions
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, v)| Some((i + 1, engine.blame_cache.get(path, &v.entry)?)))
        .unwrap_or((0, Arc::new(Origins::default())));
    let mut text = match origins.blob {
        Some(id) => text_of(path, engine.store.get(&id)?)?,
        None => String::new(),
    };
    let mut seen: HashMap<ObjectId, Arc<Origins>> = HashMap::new();
    for v in &versions[start..] {
        if v.blob == origins.blob {
            continue;
        }
        let Some(id) = v.blob else {
            origins = Arc::new(Origins {
                approximate: origins.approximate,
                ..Origins::default()
            });
            text.clear();
            continue;
        };
        let new_text = text_of(path, engine.store.get(&id)?)?;
        let next = match seen.get(&id) {
            Some(earlier) => earlier.clone(),
            None => Arc::new(carry(
                &origins,
                &text,
                &new_text,
                &Some(v.entry.clone()),
                Some(id),
                &mut budget,
            )),
        };
        seen.insert(id, next.clone());
        text = new_text;
        origins = next;
    }
    if let Some(last) = versions.last() {
        engine.blame_cache.put(path, &last.entry, origins.clone());
    }
    // Past the last checkpoint: the file on disk.
    let (lines_text, origins) = if working {
        let disk = engine.working_file(path)?;
        let new_text = match disk {
            Some(bytes) => text_of(path, bytes)?,
            None => String::new(),
        };
        // Lines no checkpoint holds yet: no origin.
        let next = carry(&origins, &text, &new_text, &None, None, &mut budget);
        (new_text, next)
    } else {
        (text, (*origins).clone())
    };
    let index = engine.log.index();
    let lines = lines_text
        .tokenize_lines()
        .into_iter()
        .zip(&origins.lines)
        .enumerate()
        .map(|(i, (line, &o))| {
            let entry = origins.entries[o as usize]
                .as_deref()
                .and_then(|id| index.get(id));
            BlameLine {
                line: i as u64 + 1,
                entry_id: entry.map(|e| e.id.clone()),
                turn_index: entry.map_or(0, turn_of),
                kind: entry.map_or(CheckpointKind::Working, kind_of),
                label: entry.and_then(|e| label_for(index, e, engine.working_copy.root())),
                timestamp: entry.map(|e| e.timestamp.clone()),
                text: line.trim_end_matches(['\n', '\r']).to_string(),
            }
        })
        .collect();
    Ok(FileBlameResult {
        path: checked,
        lines,
        is_approximate: origins.approximate,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn text(lines: &[u8]) -> String {
        lines.iter().map(|l| format!("line {l}\n")).collect()
    }

    proptest! {
        /// Every line of the new version gets exactly one origin; a line the
        /// new version did not change keeps the old origin, and the origin of
        /// a line the checkpoint added is the checkpoint.
        #[test]
        fn every_new_line_gets_one_origin(
            old in prop::collection::vec(0u8..6, 0..30),
            new in prop::collection::vec(0u8..6, 0..30),
        ) {
            let old_text = text(&old);
            let new_text = text(&new);
            let base: Origin = Some(Arc::new(EntryId::from_input("base")));
            let mut start = Origins::default();
            let b = start.origin_index(&base);
            start.lines = vec![b; old.len()];
            let next: Origin = Some(Arc::new(EntryId::from_input("next")));
            let out = carry(&start, &old_text, &new_text, &next, None, &mut DiffBudget::for_request());
            prop_assert_eq!(out.lines.len(), new.len());
            let same = old == new;
            prop_assert!(!same || out.lines.iter().all(|&o| out.entries[o as usize] == base));
            let from_next = out.lines.iter().filter(|&&o| out.entries[o as usize] == next).count();
            // At least the lines the new version has more of are new.
            prop_assert!(from_next >= new.len().saturating_sub(old.len()));
        }
    }
}
