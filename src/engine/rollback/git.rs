//! Git beside a restore (docs/architecture.md rule 6): what a plan says git
//! did since the checkpoint — in words, not SHAs — and, only when asked
//! (`git`), moving HEAD and the index back through the user's own `git`.
//!
//! The words come from what the checkpoint recorded (docs/format.md "Git
//! state") against git now: the branch, the commits between the two HEADs
//! (`git rev-list`, `git log`), and what was staged then and now (the
//! recorded index against HEAD's tree, `git ls-tree`). Without a git on PATH
//! they fall back to short SHAs.
//!
//! A move is planned against the disk as it is at that moment and refused,
//! in one line saying what to do, when it could not be carried out whole:
//! git in the middle of a merge, rebase, cherry-pick or revert; another
//! branch than the recorded one; a commit or staged blob git no longer has;
//! no git on PATH; a checkpoint with no git state.

use std::collections::BTreeMap;

use crate::engine::{Engine, EngineError, Result};
use crate::printable::printable;
use crate::session::records::{StepSnapshot, UnrevertPoint};
use crate::session::EntryId;
use crate::store::ObjectId;
use crate::working_copy::{
    index_changes, read_listing, Commits, GitEntry, GitRepo, GitState, ListedEntry, MAX_SUBJECTS,
};

/// Git as a checkpoint (or a restore, before it ran) recorded it.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecordedGit {
    pub branch: Option<String>,
    pub head: Option<String>,
    /// The index's listing; `None` in records written before it was kept.
    pub index: Option<ObjectId>,
}

/// What git is compared with: a checkpoint, or the state a restore found
/// (for `undo`).
pub(crate) enum GitThen {
    /// The checkpoint at this entry.
    Checkpoint(EntryId),
    /// The state the restore of this unrevert-point found.
    BeforeRestore(EntryId),
}

/// A planned move of HEAD and the index.
pub(crate) struct GitMove {
    /// The commit HEAD goes to, when it is not there.
    pub head: Option<String>,
    /// `git update-index -z --index-info` records setting the index back.
    pub index_records: Vec<u8>,
    /// How many index entries change.
    pub index_changes: usize,
    /// Git as the move leaves it (for the unrevert-point).
    pub to: RecordedGit,
}

impl GitMove {
    pub fn is_empty(&self) -> bool {
        self.head.is_none() && self.index_changes == 0
    }
}

/// The first 7 digits of an object name, as git abbreviates it.
fn short(oid: &str) -> String {
    printable(oid.get(..7).unwrap_or(oid)).into_owned()
}

fn branch_name(b: Option<&str>) -> String {
    match b {
        Some(b) => format!("'{}'", printable(b)),
        None => "a detached HEAD".to_string(),
    }
}

/// A commit subject as a plan quotes it: terminal-safe, and not too long.
fn subject(s: &str) -> String {
    let s = printable(s);
    let cut: String = s.chars().take(60).collect();
    if cut.len() < s.len() {
        format!("'{cut}…'")
    } else {
        format!("'{cut}'")
    }
}

fn subjects(c: &Commits) -> String {
    let mut s: Vec<String> = c.subjects.iter().map(|x| subject(x)).collect();
    let more = c.count.saturating_sub(s.len() as u64);
    if more > 0 {
        s.push(format!("and {more} more"));
    }
    s.join(", ")
}

fn commits(n: u64) -> String {
    if n == 1 {
        "1 commit".to_string()
    } else {
        format!("{n} commits")
    }
}

/// Paths, a few of them named.
fn paths(list: &[String]) -> String {
    if list.is_empty() {
        return "nothing".to_string();
    }
    let shown: Vec<String> = list
        .iter()
        .take(MAX_SUBJECTS)
        .map(|p| printable(p).into_owned())
        .collect();
    let more = list.len() - shown.len();
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The paths of `index` (stage 0 and conflicted ones) that differ from
/// `head`'s tree: what is staged.
fn staged(index: &[ListedEntry], head: &BTreeMap<Vec<u8>, GitEntry>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for e in index {
        seen.insert(e.path.as_slice());
        let same = e.stage == 0
            && head
                .get(&e.path)
                .is_some_and(|h| h.mode == e.mode && h.oid == e.oid);
        if !same {
            out.push(crate::repo_path::encode_name(&e.path).into_owned());
        }
    }
    for path in head.keys() {
        if !seen.contains(path.as_slice()) {
            out.push(crate::repo_path::encode_name(path).into_owned());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn refused(msg: String) -> EngineError {
    EngineError::GitRefused(msg)
}

impl Engine {
    /// Git as recorded at `then`: `Ok(None)` when the record has none
    /// (written before rewind recorded git, or outside a repository).
    pub(crate) fn recorded_git(&self, then: &GitThen) -> Option<RecordedGit> {
        let index = self.log.index();
        match then {
            GitThen::Checkpoint(id) => {
                let cp = index.checkpoint_at(id)?;
                if let Some(s) = cp.record::<StepSnapshot>() {
                    let g = s.git?;
                    return Some(RecordedGit {
                        branch: g.branch,
                        head: g.head,
                        index: s.git_index_tree_hash,
                    });
                }
                let u = cp.record::<UnrevertPoint>()?;
                // A restore that moved git left the target's; one that did
                // not left git as it found it.
                match (u.git, u.pre_rollback_git) {
                    (Some(g), _) => Some(RecordedGit {
                        branch: g.branch,
                        head: g.head,
                        index: u.git_index_tree_hash,
                    }),
                    (None, Some(g)) => Some(RecordedGit {
                        branch: g.branch,
                        head: g.head,
                        index: u.pre_rollback_git_index_tree_hash,
                    }),
                    (None, None) => None,
                }
            }
            GitThen::BeforeRestore(id) => {
                let u = index.get(id)?.record::<UnrevertPoint>()?;
                let g = u.pre_rollback_git?;
                Some(RecordedGit {
                    branch: g.branch,
                    head: g.head,
                    index: u.pre_rollback_git_index_tree_hash,
                })
            }
        }
    }

    /// What git did since `then`, in words, for a plan (empty when nothing
    /// moved, or when the project is not a git repository).
    pub(crate) fn git_words(&self, then: &GitThen) -> Vec<String> {
        let Some(repo) = self.working_copy.git_repo() else {
            return Vec::new();
        };
        let Some((branch, head)) = self.working_copy.git_head() else {
            return Vec::new();
        };
        let since = match then {
            GitThen::Checkpoint(_) => "this checkpoint",
            GitThen::BeforeRestore(_) => "the state the restore replaced",
        };
        let Some(was) = self.recorded_git(then) else {
            return vec![format!(
                "git: no git state was recorded for {since} (before rewind recorded it, or outside a git repository)"
            )];
        };
        let has_git = repo.available();
        let mut parts = Vec::new();
        if let (Some(old), Some(new)) = (&was.head, &head) {
            if old != new {
                let ahead = has_git.then(|| repo.commits(old, new).ok()).flatten();
                let behind = has_git.then(|| repo.commits(new, old).ok()).flatten();
                match (ahead, behind) {
                    (Some(a), Some(b)) if b.count == 0 => parts.push(format!(
                        "{} since {since}: {}",
                        commits(a.count),
                        subjects(&a)
                    )),
                    (Some(a), Some(b)) if a.count == 0 => parts.push(format!(
                        "HEAD is {} behind {since} ({} no longer on it)",
                        commits(b.count),
                        subjects(&b)
                    )),
                    (Some(a), Some(b)) => parts.push(format!(
                        "HEAD is on another line of history: {} since {since} ({}), {} of then no longer on it ({})",
                        commits(a.count),
                        subjects(&a),
                        commits(b.count),
                        subjects(&b)
                    )),
                    _ => parts.push(format!(
                        "HEAD moved since {since}: {} then, {} now",
                        short(old),
                        short(new)
                    )),
                }
            }
        }
        if was.branch != branch {
            parts.push(format!(
                "branch {} then, {} now",
                branch_name(was.branch.as_deref()),
                branch_name(branch.as_deref())
            ));
        }
        let mut out = Vec::new();
        if !parts.is_empty() {
            out.push(format!("git: {}", parts.join("; ")));
        }
        if let Some(words) = self.staged_words(&repo, has_git, &was, head.as_deref()) {
            out.push(words);
        }
        out
    }

    /// What was staged then and now, when the index changed since and it
    /// matters (the staged sets differ).
    fn staged_words(
        &self,
        repo: &GitRepo,
        has_git: bool,
        was: &RecordedGit,
        head: Option<&str>,
    ) -> Option<String> {
        let then_index = read_listing(&self.store, &was.index?).ok()?;
        let now_index = self.working_copy.git_index_now()?.entries;
        if then_index == now_index {
            return None;
        }
        let staged_of = |index: &[ListedEntry], head: Option<&str>| -> Option<Vec<String>> {
            let tree = match head {
                Some(h) => repo.tree_entries(h).ok()?,
                None => BTreeMap::new(),
            };
            Some(staged(index, &tree))
        };
        if has_git {
            if let (Some(then), Some(now)) = (
                staged_of(&then_index, was.head.as_deref()),
                staged_of(&now_index, head),
            ) {
                if then == now {
                    return None;
                }
                return Some(format!(
                    "git: staged then: {}; staged now: {}",
                    paths(&then),
                    paths(&now)
                ));
            }
        }
        let n = index_changes(&now_index, &then_index).len();
        Some(format!("git: the index differs from then at {n} path(s)"))
    }

    /// Plan moving HEAD and the index to `then` (`git`): refused, in one
    /// line saying what to do, when it cannot be done whole.
    pub(crate) fn plan_git_move(&self, then: &GitThen) -> Result<GitMove> {
        let without = match then {
            GitThen::Checkpoint(_) => "restore without --git",
            GitThen::BeforeRestore(_) => "undo without --git",
        };
        let repo = self.working_copy.git_repo().ok_or_else(|| {
            refused(format!(
                "--git: the project is not a git repository; {without}"
            ))
        })?;
        if !repo.available() {
            return Err(refused(format!(
                "--git needs git on PATH: install git, or {without}"
            )));
        }
        if let Some(what) = self.working_copy.git_in_progress() {
            let abort = match what {
                "a merge" => "git merge --abort",
                "a rebase" => "git rebase --abort",
                "a cherry-pick" => "git cherry-pick --abort",
                _ => "git revert --abort",
            };
            return Err(refused(format!(
                "git is in the middle of {what}: finish it or `{abort}` first, or {without}"
            )));
        }
        let was = self.recorded_git(then).filter(|g| g.index.is_some());
        let Some(was) = was else {
            let what = match then {
                GitThen::Checkpoint(id) => format!("checkpoint {id}"),
                GitThen::BeforeRestore(id) => format!("unrevert-point {id}"),
            };
            return Err(refused(format!(
                "{what} has no git state to put back (recorded before rewind recorded git's index, or outside a git repository): {without}"
            )));
        };
        let (branch, head) = self
            .working_copy
            .git_head()
            .ok_or_else(|| refused(format!("--git: cannot read git's HEAD; {without}")))?;
        if was.branch != branch {
            let switch = match &was.branch {
                Some(b) => format!("`git switch {}` first", printable(b)),
                None => "detach HEAD first".to_string(),
            };
            return Err(refused(format!(
                "git is on {} but this was recorded on {}: {switch}, or {without}",
                branch_name(branch.as_deref()),
                branch_name(was.branch.as_deref())
            )));
        }
        let Some(to_head) = was.head.clone() else {
            return Err(refused(format!(
                "this was recorded before the branch's first commit: HEAD cannot go back there; {without}"
            )));
        };
        if !repo.has_commit(&to_head) {
            return Err(refused(format!(
                "commit {} is no longer in git's objects: {without}",
                short(&to_head)
            )));
        }
        let listing = was.index.ok_or_else(|| refused(without.to_string()))?;
        let then_index = read_listing(&self.store, &listing).map_err(|e| {
            refused(format!(
                "the recorded git index cannot be read ({e}): {without}"
            ))
        })?;
        if then_index.iter().any(|e| e.stage != 0) {
            return Err(refused(format!(
                "the index recorded then had unresolved conflicts: {without}"
            )));
        }
        let now = self
            .working_copy
            .git_index_now()
            .ok_or_else(|| refused(format!("git's index cannot be read: {without}")))?;
        if now.entries.iter().any(|e| e.stage != 0) {
            return Err(refused(format!(
                "git's index has unresolved conflicts: resolve them (`git status`) first, or {without}"
            )));
        }
        let changes = index_changes(&now.entries, &then_index);
        // A sparse checkout's entry set anew would lose its skip-worktree
        // mark (`--index-info` writes none), and git would then call its
        // absent file deleted; one only removed loses nothing.
        if let Some(e) = changes
            .iter()
            .find(|e| e.mode != 0 && now.skip_worktree.contains(&e.path))
        {
            let path = crate::repo_path::encode_name(&e.path).into_owned();
            return Err(refused(format!(
                "git marks {} skip-worktree (a sparse checkout), a mark --git cannot keep: \
                 `git sparse-checkout disable` or `git update-index --no-skip-worktree` it first, or {without}",
                printable(&path)
            )));
        }
        let blobs: Vec<&str> = changes
            .iter()
            .filter(|e| e.mode != 0 && e.mode & 0o170000 != 0o160000)
            .map(|e| e.oid.as_str())
            .collect();
        let missing = repo
            .missing_objects(&blobs)
            .map_err(|e| refused(format!("{e}: {without}")))?;
        if let Some(oid) = missing.first() {
            let path = changes
                .iter()
                .find(|e| e.oid == *oid)
                .map(|e| crate::repo_path::encode_name(&e.path).into_owned())
                .unwrap_or_default();
            return Err(refused(format!(
                "the staged version of {} (blob {}) is no longer in git's objects: {without}",
                printable(&path),
                short(oid)
            )));
        }
        let mut index_records = Vec::new();
        for e in &changes {
            e.index_info(&mut index_records);
        }
        Ok(GitMove {
            head: (head.as_deref() != Some(to_head.as_str())).then_some(to_head),
            index_records,
            index_changes: changes.len(),
            to: was,
        })
    }

    /// Carry out a planned move: HEAD first (`git reset --soft`, a reflog
    /// entry saying `action`), then the index. What went wrong, as a line.
    pub(crate) fn apply_git_move(&self, m: &GitMove, action: &str) -> Option<String> {
        let repo = self.working_copy.git_repo()?;
        if let Some(head) = &m.head {
            if let Err(e) = repo.reset_soft(head, action) {
                return Some(format!(
                    "git: HEAD was not moved ({e}); the files were restored"
                ));
            }
        }
        if let Err(e) = repo.update_index(&m.index_records) {
            return Some(format!(
                "git: the index was not set back ({e}); HEAD and the files were"
            ));
        }
        None
    }

    /// Git as it is now, recorded for an unrevert-point of the work tree
    /// `tree` (what `undo` with `git` puts back).
    pub(crate) fn git_now(&mut self, tree: ObjectId) -> Option<GitState> {
        self.git_state_of(tree, None, &[])
    }
}

/// The line a plan shows for a move.
pub(crate) fn move_words(m: &GitMove, done: bool) -> String {
    let mut parts = Vec::new();
    if let Some(h) = &m.head {
        parts.push(if done {
            format!("HEAD moved to {}", short(h))
        } else {
            format!("HEAD moves to {}", short(h))
        });
    }
    if m.index_changes > 0 {
        parts.push(if done {
            format!("the index was set back at {} path(s)", m.index_changes)
        } else {
            format!("the index is set back at {} path(s)", m.index_changes)
        });
    }
    if parts.is_empty() {
        "git: HEAD and the index are already as recorded".to_string()
    } else if done {
        format!("git: {}", parts.join("; "))
    } else {
        format!("git (--git): {}", parts.join("; "))
    }
}
