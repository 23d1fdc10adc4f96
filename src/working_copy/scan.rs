//! One scan of the working directory: the parallel walk, the ignore rules,
//! and the passes around it (paths captured by name without a walk, files
//! the rules hid that must be captured anyway, uncaptured entries), all on
//! the walker's threads so a cold snapshot uses every core. Each path the
//! walk finds is captured by `capture.rs`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{WalkBuilder, WalkState};
use rayon::prelude::*;

use super::capture::{
    capture, in_scope, now_ns, unreadable, Outcome, ScanOutput, ScanRequest, Sink,
};
use super::ignored::{capture_ignored, count_files, Excluded, IgnoreFiles};
use super::options::{DEFAULT_EXCLUDES, REWINDIGNORE};
pub use super::stat_cache::DirListings;
use super::stat_cache::FileStat;
use crate::repo_path::{relative, RepoPath};
use crate::store::{is_git_dir, names_git_dir, StoreError, TreeEntry};

use crate::store::UncapturedReason;

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("storing the content of {path}: {source}")]
    Store {
        path: String,
        #[source]
        source: StoreError,
    },
    #[error("invalid ignore pattern {pattern:?}: {reason}")]
    BadPattern { pattern: String, reason: String },
    #[error("cannot read the project root {path}: {source}")]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How often a long scan reports progress (docs/protocol.md "Notifications": at most every 100 ms).
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Counts what the walker threads looked at and reports it, throttled.
struct Ticker<'a> {
    seen: std::sync::atomic::AtomicU64,
    last: Mutex<std::time::Instant>,
    report: Option<&'a (dyn Fn(u64) + Sync)>,
}

impl Ticker<'_> {
    fn tick(&self) {
        use std::sync::atomic::Ordering;
        let n = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(report) = self.report else { return };
        // Looking at the clock every 64 paths is often enough; another
        // thread already reporting means this one need not.
        if !n.is_multiple_of(64) {
            return;
        }
        if let Ok(mut last) = self.last.try_lock() {
            if last.elapsed() >= PROGRESS_EVERY {
                *last = std::time::Instant::now();
                report(n);
            }
        }
    }
}

/// What the walk could not look at, from one of its errors: each path it
/// names under `root` with the reason. A path that vanished is no error (it
/// was deleted while the walk ran).
fn walk_error_paths(root: &Path, err: &ignore::Error, out: &mut Vec<(String, Outcome)>) {
    fn io_of(err: &ignore::Error) -> Option<&std::io::Error> {
        match err {
            ignore::Error::Io(e) => Some(e),
            ignore::Error::WithPath { err, .. }
            | ignore::Error::WithDepth { err, .. }
            | ignore::Error::WithLineNumber { err, .. } => io_of(err),
            _ => None,
        }
    }
    match err {
        ignore::Error::Partial(errs) => {
            for e in errs {
                walk_error_paths(root, e, out);
            }
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_paths(root, err, out)
        }
        ignore::Error::WithPath { path, err: inner } => {
            // Only I/O hides files; an ignore file that does not parse
            // (its own content is captured) is not a capture failure.
            let Some(io) = io_of(inner) else {
                tracing::warn!(%err, "walk error");
                return;
            };
            if io.kind() == std::io::ErrorKind::NotFound {
                return;
            }
            if path == root || !path.starts_with(root) {
                tracing::warn!(%err, "walk error outside the project's files");
                return;
            }
            out.push((rel_lossy(root, path), Outcome::Uncaptured(unreadable(io))));
        }
        _ => tracing::warn!(%err, "walk error naming no path; what it hid is not reported"),
    }
}

/// `path` relative to `root`, as the walk reports paths; not UTF-8 parts are
/// replaced (such a path is reported, never captured).
fn rel_lossy(root: &Path, path: &Path) -> String {
    relative(root, path).unwrap_or_else(|| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    })
}

/// How many threads a walk or a stat pass over the project uses: one per core.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

/// The tracked paths (sorted) at or below the scope's paths, found by
/// binary search: a scoped scan of a few paths costs their number, not the
/// size of the git index. A path may come twice when scope paths nest.
fn tracked_in_scope<'a>(
    tracked: &'a [String],
    scope: Option<&'a [RepoPath]>,
) -> Box<dyn Iterator<Item = &'a String> + 'a> {
    let Some(scope) = scope else {
        return Box::new(tracked.iter());
    };
    Box::new(scope.iter().flat_map(move |s| {
        let s = s.as_str();
        let exact = tracked
            .binary_search_by(|p| p.as_str().cmp(s))
            .ok()
            .map(|i| &tracked[i]);
        // Everything below "a/b" sorts from "a/b/" on, contiguously.
        let dir = format!("{s}/");
        let start = tracked.partition_point(|p| p.as_str() < dir.as_str());
        let below = tracked[start..]
            .iter()
            .take_while(move |p| p.starts_with(dir.as_str()));
        exact.into_iter().chain(below)
    }))
}

fn matcher(root: &Path, lines: &[String]) -> Result<Gitignore, ScanError> {
    let mut b = GitignoreBuilder::new(root);
    for line in lines {
        b.add_line(None, line).map_err(|e| ScanError::BadPattern {
            pattern: line.clone(),
            reason: e.to_string(),
        })?;
    }
    b.build().map_err(|e| ScanError::BadPattern {
        pattern: lines.join(", "),
        reason: e.to_string(),
    })
}

/// Scan the working directory as `req` says.
pub fn scan(req: &ScanRequest<'_>) -> Result<ScanOutput, ScanError> {
    let root = req.root;
    if let Err(source) = std::fs::read_dir(root) {
        return Err(ScanError::Root {
            path: root.to_path_buf(),
            source,
        });
    }
    let scan_start_ns = now_ns();
    // extraIgnores exclude everything, tracked files included; the default
    // excludes give way to files git tracks (second pass below).
    let hard = Arc::new(matcher(root, &req.options.extra_ignores)?);
    let soft_lines: Vec<String> = if req.options.default_excludes {
        DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect()
    } else {
        Vec::new()
    };
    let soft = Arc::new(matcher(root, &soft_lines)?);

    let mut rewind = IgnoreFiles::new(root, REWINDIGNORE);
    let (known, walk_scope) = capture_known(req, &hard, &soft, &mut rewind)?;
    let mut wb = WalkBuilder::new(root);
    wb.standard_filters(false)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .git_ignore(req.options.use_gitignore)
        .git_exclude(req.options.use_gitignore)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(REWINDIGNORE)
        // A scoped scan visits a few paths: starting walker threads would
        // cost more than the walk.
        .threads(if req.scope.is_some() { 1 } else { threads() });
    {
        let root = root.to_path_buf();
        let scope = walk_scope.clone();
        let (hard, soft) = (hard.clone(), soft.clone());
        wb.filter_entry(move |e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_name().to_str().is_some_and(super::never_content) {
                return false;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let Some(rel) = relative(&root, e.path()) else {
                // Not UTF-8: let the visitor report it as unreadable.
                return true;
            };
            if !in_scope(scope.as_deref(), &rel, is_dir) {
                return false;
            }
            !hard.matched(&rel, is_dir).is_ignore() && !soft.matched(&rel, is_dir).is_ignore()
        });
    }

    let sink = Mutex::new(Sink {
        out: ScanOutput {
            scan_start_ns,
            ..Default::default()
        },
        listed: HashMap::new(),
    });
    let failure: Mutex<Option<ScanError>> = Mutex::new(None);
    let ticker = Ticker {
        seen: std::sync::atomic::AtomicU64::new(0),
        last: Mutex::new(std::time::Instant::now()),
        report: req.progress,
    };
    // Nothing left to walk when every scope path was captured by name (the
    // watcher's usual event: a few files edited). No walker then: even at
    // depth 0 it starts a thread and reads the ignore files of the root and
    // its ancestors, for nothing it would visit.
    let walk = walk_scope.as_ref().is_none_or(|s| !s.is_empty());
    if walk {
        wb.build_parallel().run(|| {
            let sink = &sink;
            let failure = &failure;
            let ticker = &ticker;
            let mut local: Vec<(String, Outcome)> = Vec::new();
            // Flush in batches so threads rarely contend on the sink.
            struct Flush<'s> {
                local: Vec<(String, Outcome)>,
                sink: &'s Mutex<Sink>,
            }
            impl Drop for Flush<'_> {
                fn drop(&mut self) {
                    if let Ok(mut s) = self.sink.lock() {
                        for (rel, o) in self.local.drain(..) {
                            s.record(rel, o);
                        }
                    }
                }
            }
            let mut flush = Flush {
                local: std::mem::take(&mut local),
                sink,
            };
            Box::new(move |result| {
                let entry = match result {
                    Ok(e) => e,
                    Err(err) => {
                        // A directory it could not list, a path too long to
                        // open: what it hides is reported, never silently left
                        // out of the checkpoint.
                        tracing::debug!(%err, "walk error");
                        walk_error_paths(root, &err, &mut flush.local);
                        return WalkState::Continue;
                    }
                };
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                ticker.tick();
                let abs = entry.path();
                let Some(rel) = relative(root, abs) else {
                    flush.local.push((
                        rel_lossy(root, abs),
                        Outcome::Uncaptured(UncapturedReason::Unreadable),
                    ));
                    return WalkState::Continue;
                };
                let meta = match std::fs::symlink_metadata(abs) {
                    Ok(m) => m,
                    // Vanished mid-walk: deleted.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return WalkState::Continue
                    }
                    Err(e) => {
                        flush.local.push((rel, Outcome::Uncaptured(unreadable(&e))));
                        return WalkState::Continue;
                    }
                };
                match capture(abs, &rel, &meta, req) {
                    Ok(mut o) => {
                        // Counted here, on the walker threads, so the ignored
                        // pass lists again only directories with files the
                        // walk did not produce.
                        if let Outcome::Directory { files, stat } = &mut o {
                            *files = count_files(req, abs, &rel, &meta);
                            *stat = Some(FileStat::from_metadata(&meta));
                        }
                        flush.local.push((rel, o));
                        if flush.local.len() >= 256 {
                            if let Ok(mut s) = sink.lock() {
                                for (rel, o) in flush.local.drain(..) {
                                    s.record(rel, o);
                                }
                            }
                        }
                        WalkState::Continue
                    }
                    Err(source) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(ScanError::Store { path: rel, source });
                        }
                        WalkState::Quit
                    }
                }
            })
        });
    }
    if let Some(err) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(err);
    }
    let mut sink = sink.into_inner().unwrap_or_else(|p| p.into_inner());
    for (rel, outcome) in known {
        sink.record(rel, outcome);
    }
    second_pass(req, &hard, &mut rewind, &mut sink)?;
    let excluded = Excluded {
        hard: &hard,
        soft: &soft,
        rewind: &mut rewind,
    };
    capture_ignored(req, excluded, &mut sink)
        .map_err(|(path, source)| ScanError::Store { path, source })?;
    sink.out.untracked.sort();
    // A directory that could not be listed is found twice (as an entry,
    // then by the error listing it): reported once.
    sink.out.untracked.dedup_by(|a, b| a.path == b.path);
    record_uncaptured(&mut sink.out);
    Ok(sink.out)
}

/// What is left for the walk: `None` is everything.
type WalkScope = Option<Vec<RepoPath>>;

/// The scope paths of a scoped scan that need no walk, captured by name,
/// and the rest of the scope, which does. A path qualifies when the scan
/// being updated (`req.known`) captured it, it is still a regular file or
/// a symlink below real directories, and no rule hides it now
/// (`extraIgnores`, `.rewindignore`, and unless git tracks it the default
/// excludes and the `.gitignore` chain): then the walk would find it and
/// capture it the same way. A small gitignored file is walked, since its
/// capture depends on its directory (docs/architecture.md rule 13). An
/// edit reported by the watcher or found by stat is most often such a
/// file, and a walk to it lists every directory on its way.
fn capture_known(
    req: &ScanRequest<'_>,
    hard: &Gitignore,
    soft: &Gitignore,
    rewind: &mut IgnoreFiles,
) -> Result<(Vec<(String, Outcome)>, WalkScope), ScanError> {
    let (Some(scope), Some(known)) = (req.scope, req.known) else {
        return Ok((Vec::new(), req.scope.map(|s| s.to_vec())));
    };
    let root = req.root;
    let mut git = req.options.use_gitignore.then(|| IgnoreFiles::git(root));
    let mut direct = Vec::new();
    let mut rest = Vec::new();
    for s in scope {
        let rel = s.as_str();
        let by_name = known.get(rel).is_some_and(|e| e.has_object())
            && !hard.matched_path_or_any_parents(rel, false).is_ignore()
            && !rewind.ignores_path_or_parents(rel)
            && (req
                .tracked
                .binary_search_by(|t| t.as_str().cmp(rel))
                .is_ok()
                || (!soft.matched_path_or_any_parents(rel, false).is_ignore()
                    && !git
                        .as_mut()
                        .is_some_and(|g| g.ignores_path_or_parents(rel) || g.ignores_file(rel))))
            && super::checkout::blocking_parent(root, rel).is_none();
        if !by_name {
            rest.push(s.clone());
            continue;
        }
        let abs = crate::repo_path::join(root, rel);
        let meta = match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_file() || m.file_type().is_symlink() => m,
            _ => {
                rest.push(s.clone());
                continue;
            }
        };
        let outcome = capture(&abs, rel, &meta, req).map_err(|source| ScanError::Store {
            path: rel.to_string(),
            source,
        })?;
        direct.push((rel.to_string(), outcome));
    }
    Ok((direct, Some(rest)))
}

/// Put what the scan found but could not capture into its files as
/// uncaptured entries (docs/architecture.md rule 14): a checkpoint says
/// "present, not captured" instead of leaving the name out, which a diff
/// would read as a deletion and a restore would carry out as one. An entry
/// is left out where it cannot stand in a tree: below another uncaptured
/// one (the directory already says it), or above a file that was captured
/// (a tracked file read by name inside a directory that could not be
/// listed).
fn record_uncaptured(out: &mut ScanOutput) {
    let mut recorded: HashSet<&str> = HashSet::new();
    let mut entries = Vec::new();
    for u in &out.untracked {
        let path = u.path.as_str();
        if !u.reason.is_recorded() || out.files.contains_key(path) {
            continue;
        }
        let below_recorded = crate::repo_path::ancestors(path).any(|a| recorded.contains(a));
        let dir = format!("{path}/");
        let above_captured = out
            .files
            .range::<str, _>((
                std::ops::Bound::Included(dir.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .is_some_and(|(k, _)| k.starts_with(&dir));
        if below_recorded || above_captured {
            continue;
        }
        recorded.insert(path);
        entries.push((path.to_string(), TreeEntry::uncaptured(u.reason)));
    }
    out.files.extend(entries);
}

/// Files the walk's ignore rules hid but that must be captured anyway: those
/// the user's git index tracks (minus `.rewindignore` and `extraIgnores`,
/// which are explicit intent) and those staged with `stage_files`.
fn second_pass(
    req: &ScanRequest<'_>,
    hard: &Gitignore,
    rewind: &mut IgnoreFiles,
    sink: &mut Sink,
) -> Result<(), ScanError> {
    let root = req.root;
    let untracked: HashSet<String> = sink
        .out
        .untracked
        .iter()
        .map(|u| u.path.to_string())
        .collect();
    let seen = |p: &str| sink.out.files.contains_key(p) || untracked.contains(p);
    let mut candidates: Vec<String> = Vec::new();
    // What the walk of a staged directory could not look at.
    let mut failed: Vec<(String, Outcome)> = Vec::new();

    for path in tracked_in_scope(req.tracked, req.scope) {
        if seen(path) {
            continue;
        }
        if names_git_dir(path) {
            continue;
        }
        if hard.matched_path_or_any_parents(path, false).is_ignore()
            || rewind.ignores_path_or_parents(path)
        {
            continue;
        }
        candidates.push(path.clone());
    }

    for staged in req.staged {
        // `.git` is never captured, staged or not (a session written by an
        // older build may still name one).
        if names_git_dir(staged) {
            continue;
        }
        let abs = crate::repo_path::join(root, staged);
        let Ok(meta) = std::fs::symlink_metadata(&abs) else {
            continue;
        };
        if meta.is_dir() {
            let mut wb = WalkBuilder::new(&abs);
            wb.standard_filters(false).hidden(false).follow_links(false);
            wb.filter_entry(|e| !e.file_name().to_str().is_some_and(is_git_dir));
            for e in wb.build() {
                let e = match e {
                    Ok(e) => e,
                    Err(err) => {
                        walk_error_paths(root, &err, &mut failed);
                        continue;
                    }
                };
                if e.file_type().is_some_and(|t| t.is_dir()) {
                    continue;
                }
                match relative(root, e.path()) {
                    Some(rel) => candidates.push(rel),
                    None => failed.push((
                        rel_lossy(root, e.path()),
                        Outcome::Uncaptured(UncapturedReason::Unreadable),
                    )),
                }
            }
        } else {
            candidates.push(staged.clone());
        }
    }

    let mut done: HashSet<String> = HashSet::new();
    // Whether a directory's parents are all real directories, asked once
    // per directory: the files of one ignored directory (a tracked `build/`)
    // share the answer, and each asking opens every component.
    let mut blocked_dirs: HashMap<String, bool> = HashMap::new();
    let mut todo = Vec::new();
    for rel in candidates {
        if sink.out.files.contains_key(&rel)
            || untracked.contains(&rel)
            || !in_scope(req.scope, &rel, false)
            || !done.insert(rel.clone())
        {
            continue;
        }
        // Never read through a parent that is not a real directory: a tree
        // cannot hold a file below a symlink, so capturing `lnk/f` would
        // record the link as deleted and restore a directory in its place
        // (issue 10, found 8).
        if RepoPath::parse(&rel).is_err() {
            continue;
        }
        let parent = rel.rsplit_once('/').map_or("", |(d, _)| d);
        let blocked = match blocked_dirs.get(parent) {
            Some(&b) => b,
            None => {
                let b = super::checkout::blocking_parent(root, &rel).is_some();
                blocked_dirs.insert(parent.to_string(), b);
                b
            }
        };
        if blocked {
            continue;
        }
        todo.push(rel);
    }
    // Read on every core, as the walk does: a project that commits its
    // `build/` or `dist/` has thousands of files here, and a cold scan
    // compresses each one.
    let captured =
        todo.into_par_iter()
            .map(|rel| {
                let abs = crate::repo_path::join(root, &rel);
                let outcome = match std::fs::symlink_metadata(&abs) {
                    Ok(meta) => Some(capture(&abs, &rel, &meta, req).map_err(|source| {
                        ScanError::Store {
                            path: rel.clone(),
                            source,
                        }
                    })?),
                    // A tracked file deleted from the disk: not captured, rightly.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => Some(Outcome::Uncaptured(unreadable(&e))),
                };
                Ok((rel, outcome))
            })
            .collect::<Result<Vec<_>, ScanError>>()?;
    for (rel, outcome) in captured {
        if let Some(outcome) = outcome {
            sink.record(rel, outcome);
        }
    }
    // (One the main walk reported too is deduplicated with the rest.)
    for (rel, outcome) in failed {
        if in_scope(req.scope, &rel, false) {
            sink.record(rel, outcome);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
