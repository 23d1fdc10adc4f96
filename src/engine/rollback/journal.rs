//! The restore journal (docs/architecture.md rule 4): written (and fsynced) before the
//! unrevert-point is appended and before the first file is touched, removed
//! when the restore is done. Finding one on open means a restore was
//! interrupted; recovery completes it (rolls forward to the tree the
//! unrevert-point recorded) when that entry made it into the session, and
//! otherwise just drops the journal — no file was touched yet.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::durability::atomic_write;
use crate::engine::api::{InterruptedRestore, RecoveryAction, RestoreResult};
use crate::engine::{parse_tree_hash, Engine, EngineError, FlatTree, Result};
use crate::repo_path::RepoPath;
use crate::session::EntryId;
use crate::store::{lookup, EntryKind, Layout};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Journal {
    pub version: u32,
    pub unrevert_entry_id: EntryId,
    pub pre_rollback_tree_hash: String,
    /// The tree the restore leaves on disk (the unrevert-point's).
    pub working_tree_hash: String,
    pub writes: Vec<String>,
    pub deletes: Vec<String>,
}

impl Journal {
    /// Written at `path` ([`Layout::session_journal`]) through its temp
    /// file, synced with `fsync` (docs/format.md "Restore journal", step 2).
    pub fn write(&self, path: &Path, fsync: bool) -> Result<()> {
        let body = serde_json::to_vec(self).map_err(|e| {
            EngineError::io(
                "encoding the restore journal",
                path,
                std::io::Error::other(e),
            )
        })?;
        atomic_write(path, &Layout::journal_temp(path), fsync, |f| {
            f.write_all(&body)
        })
        .map_err(|e| EngineError::io("writing the restore journal", path, e))
    }

    pub fn read(path: &Path) -> Option<Journal> {
        let bytes = std::fs::read(path).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(j) => Some(j),
            Err(err) => {
                tracing::warn!(%err, path = %path.display(), "unreadable restore journal ignored");
                None
            }
        }
    }

    pub fn remove(path: &Path) {
        if let Err(err) = std::fs::remove_file(path) {
            if err.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(%err, path = %path.display(), "could not remove the restore journal");
            }
        }
    }
}

impl Engine {
    /// Finish or drop a restore a crash interrupted. Called on open, before
    /// anything else looks at the working directory.
    pub(crate) fn recover_interrupted_restore(&mut self) -> Result<Option<InterruptedRestore>> {
        let path = Layout::session_journal(self.log.path());
        let Some(journal) = Journal::read(&path) else {
            if path.exists() {
                Journal::remove(&path);
            }
            return Ok(None);
        };
        // Temp files of writes the crash cut short are ours, never the
        // user's: remove them whatever happens next.
        let touched = journal
            .writes
            .iter()
            .chain(journal.deletes.iter())
            .map(String::as_str);
        self.working_copy.remove_temp_files(touched);
        if !self.log.index().contains(&journal.unrevert_entry_id) {
            Journal::remove(&path);
            return Ok(Some(InterruptedRestore {
                unrevert_entry_id: journal.unrevert_entry_id,
                action: RecoveryAction::Discarded,
                restored: Vec::new(),
                deleted: Vec::new(),
                kept: Vec::new(),
            }));
        }
        // Roll forward: make every path the restore meant to change match
        // the tree its unrevert-point recorded — but only where the path
        // still holds what the restore found (its pre-rollback tree). A path
        // already at the target was done before the crash; one holding
        // anything else was changed after it (the user, another program) and
        // is kept: recovery never destroys what no checkpoint holds.
        // Idempotent, so a crash during recovery is recovered the same way
        // next time.
        let tree = parse_tree_hash(&journal.working_tree_hash)?;
        let before_tree = parse_tree_hash(&journal.pre_rollback_tree_hash)?;
        let mut writes = Vec::new();
        let mut deletes = Vec::new();
        let mut before = FlatTree::new();
        let mut done = Vec::new();
        for p in journal.writes.iter().chain(journal.deletes.iter()) {
            // A journal is ours, but it lies in the store where anything can
            // edit it: a path that is not a clean project path is never
            // followed (docs/reliability.md).
            let Ok(rel) = RepoPath::parse(p) else {
                tracing::warn!(path = %p, "restore journal names a path outside the project; ignored");
                continue;
            };
            let path = rel.clone();
            let rel = rel.as_str();
            let target = lookup(&self.store, &tree, rel)?.filter(|e| e.kind != EntryKind::Tree);
            if target.is_some_and(|e| !e.has_object()) {
                // A restore never writes what its target did not capture;
                // a journal that says so was not written by one.
                tracing::warn!(path = %rel, "restore journal names an uncaptured path; ignored");
                continue;
            }
            if let Some(e) = lookup(&self.store, &before_tree, rel)?
                .filter(|e| e.kind != EntryKind::Tree && e.has_object())
            {
                before.insert(rel.to_string(), e);
            }
            if self.working_copy.holds(rel, target.as_ref()) {
                done.push(rel.to_string());
                continue;
            }
            match target {
                Some(e) => writes.push((path, e)),
                None => deletes.push(path),
            }
        }
        let mut result = RestoreResult::default();
        let failures = self.apply(&writes, &deletes, &before, "recover", &mut result);
        if !failures.is_empty() {
            tracing::warn!(
                ?failures,
                "some files of the interrupted restore were changed after the crash or could \
                 not be completed; they are left as they are"
            );
        }
        Journal::remove(&path);
        result.restored.extend(RepoPath::all_recorded(done));
        result.restored.sort();
        Ok(Some(InterruptedRestore {
            unrevert_entry_id: journal.unrevert_entry_id,
            action: RecoveryAction::Completed,
            restored: result.restored,
            deleted: result.deleted,
            kept: failures,
        }))
    }
}
