//! Small ignored files: `.env`, local configuration, a notes file the user
//! keeps out of git. An agent's `rm -rf` destroys them as readily as
//! tracked files, so a snapshot captures them too (docs/architecture.md
//! rule 13): gitignored regular files and symlinks up to
//! `ignored_max_size` in a directory the walk went into, at most
//! `ignored_per_directory` of them per directory (what the cap leaves out
//! is reported `ignoredOverCap`). Ignored *directories* are never entered:
//! they are build output, caches and dependencies, and a per-directory cap
//! would not stop a deep one from being swept in file by file.
//!
//! The walk does not yield ignored files, so this pass lists each walked
//! directory again and looks at the names the walk did not produce. Which of
//! those git ignores is decided by [`IgnoreFiles`], a plain reading of the
//! `.gitignore` chain: when it errs it can only leave a file uncaptured
//! (what rewind did before), never capture one twice, because a file the
//! walk produced is never looked at here.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::capture::{capture, held, in_scope, now_ns, Outcome, ScanRequest, Sink};
use super::stat_cache::FileStat;
use crate::repo_path::{decode_name, encode_name, join, RepoPath};
use crate::store::{StoreError, UncapturedReason};

/// The ignore files of one name (`.gitignore`, `.rewindignore`) found in the
/// project's directories, read once per scan.
pub(super) struct IgnoreFiles {
    root: PathBuf,
    name: &'static str,
    /// `.git/info/exclude`: git's lowest-precedence rules (for `.gitignore`
    /// only).
    exclude: Option<Gitignore>,
    by_dir: HashMap<PathBuf, Option<Gitignore>>,
}

impl IgnoreFiles {
    pub(super) fn new(root: &Path, name: &'static str) -> IgnoreFiles {
        IgnoreFiles {
            root: root.to_path_buf(),
            name,
            exclude: None,
            by_dir: HashMap::new(),
        }
    }

    /// `.gitignore` files and `.git/info/exclude`, never the user's global
    /// excludes (as the walk reads them).
    pub(super) fn git(root: &Path) -> IgnoreFiles {
        let mut files = IgnoreFiles::new(root, ".gitignore");
        let exclude = root.join(".git/info/exclude");
        if exclude.is_file() {
            let mut b = GitignoreBuilder::new(root);
            b.add(&exclude);
            files.exclude = b.build().ok();
        }
        files
    }

    fn in_dir(&mut self, dir: &Path) -> Option<&Gitignore> {
        let name = self.name;
        self.by_dir
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let f = dir.join(name);
                if !f.is_file() {
                    return None;
                }
                let mut b = GitignoreBuilder::new(dir);
                b.add(&f);
                b.build().ok()
            })
            .as_ref()
    }

    /// The directories from the root down to `rel`'s parent, each with
    /// `rel` relative to it.
    fn chain(&self, rel: &str) -> Vec<(PathBuf, String)> {
        let comps: Vec<&str> = rel.split('/').collect();
        let mut dir = self.root.clone();
        let mut out = Vec::with_capacity(comps.len());
        for i in 0..comps.len() {
            out.push((dir.clone(), comps[i..].join("/")));
            if i + 1 < comps.len() {
                dir.push(decode_name(comps[i]));
            }
        }
        out
    }

    /// Whether any of these files ignores `rel` or a directory above it;
    /// a `!` rule never re-includes (how `.rewindignore` has always been
    /// read, which a file staged inside an ignored directory relies on).
    pub(super) fn ignores_path_or_parents(&mut self, rel: &str) -> bool {
        for (dir, sub) in self.chain(rel) {
            if let Some(m) = self.in_dir(&dir) {
                if m.matched_path_or_any_parents(&sub, false).is_ignore() {
                    return true;
                }
            }
        }
        false
    }

    /// Whether git ignores the file `rel`, whose parent directories are not
    /// ignored: the deepest file with a rule for it decides (a `!` rule
    /// re-includes), then `.git/info/exclude`.
    pub(super) fn ignores_file(&mut self, rel: &str) -> bool {
        for (dir, sub) in self.chain(rel).into_iter().rev() {
            if let Some(m) = self.in_dir(&dir) {
                let matched = m.matched(&sub, false);
                if matched.is_ignore() {
                    return true;
                }
                if matched.is_whitelist() {
                    return false;
                }
            }
        }
        self.exclude
            .as_ref()
            .is_some_and(|m| m.matched(rel, false).is_ignore())
    }
}

/// What besides git's rules keeps a path out of every capture.
pub(super) struct Excluded<'a> {
    pub hard: &'a Gitignore,
    pub soft: &'a Gitignore,
    pub rewind: &'a mut IgnoreFiles,
}

/// Whether small ignored files are captured at all.
fn enabled(req: &ScanRequest<'_>) -> bool {
    let opts = req.options;
    // Without git's rules nothing is ignored by them: the walk took it all.
    opts.use_gitignore && opts.ignored_max_size > 0 && opts.ignored_per_directory > 0
}

/// A directory changed this recently may change again within its
/// timestamp's granularity without its mtime moving: not remembered.
const RACY_NS: i128 = 100_000_000;

/// How many files and symlinks the walked directory `rel` holds, when the
/// ignored pass will need to know.
pub(super) fn count_files(
    req: &ScanRequest<'_>,
    abs: &Path,
    rel: &str,
    meta: &std::fs::Metadata,
) -> Option<usize> {
    if !enabled(req) || !lists_scope(req.scope, rel) {
        return None;
    }
    let stat = FileStat::from_metadata(meta);
    if let Some(n) = req.listings.and_then(|l| l.get(rel, &stat)) {
        return Some(n);
    }
    let n = list_files(abs)?.len();
    if let Some(listings) = req.listings {
        let now = now_ns();
        if now - stat.mtime_ns > RACY_NS && now - stat.ctime_ns > RACY_NS {
            listings.insert(rel, stat, n);
        }
    }
    Some(n)
}

/// The names of the files and symlinks directly in `dir`; `None` when it
/// cannot be listed (the walk's verdict on it stands).
fn list_files(dir: &Path) -> Option<Vec<std::ffi::OsString>> {
    let listing = std::fs::read_dir(dir).ok()?;
    Some(
        listing
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
            .map(|e| e.file_name())
            .collect(),
    )
}

/// Capture the small ignored files of the directories the walk went into
/// (`sink.out.dirs` and the root), within the scan's scope.
pub(super) fn capture_ignored(
    req: &ScanRequest<'_>,
    excluded: Excluded<'_>,
    sink: &mut Sink,
) -> Result<(), (String, StoreError)> {
    if !enabled(req) {
        return Ok(());
    }
    let opts = req.options;
    let mut git = IgnoreFiles::git(req.root);
    let Excluded { hard, soft, rewind } = excluded;

    // How many of each directory's entries the walk produced: a directory
    // holding no more files than that has nothing ignored in it, and is
    // not looked at name by name.
    let untracked: HashSet<&str> = sink.out.untracked.iter().map(|u| u.path.as_str()).collect();
    let mut produced: HashMap<&str, usize> = HashMap::new();
    for path in sink
        .out
        .files
        .keys()
        .map(String::as_str)
        .chain(untracked.iter().copied())
    {
        *produced.entry(parent_of(path)).or_default() += 1;
    }
    let mut dirs: Vec<&str> = vec![""];
    dirs.extend(sink.out.dirs.iter().map(String::as_str));
    dirs.retain(|d| lists_scope(req.scope, d));

    let mut found: Vec<(String, std::fs::Metadata)> = Vec::new();
    let mut over_cap: Vec<String> = Vec::new();
    for dir in dirs {
        let abs_dir = if dir.is_empty() {
            req.root.to_path_buf()
        } else {
            join(req.root, dir)
        };
        let produced_here = produced.get(dir).copied().unwrap_or(0);
        // Counted by the walk; the root, which the walk does not count, is
        // listed here once and that listing is used.
        let root_listing = if dir.is_empty() {
            list_files(&abs_dir)
        } else {
            None
        };
        let counted = match &root_listing {
            Some(names) => Some(names.len()),
            None => sink.listed.get(dir).copied(),
        };
        if counted.is_none_or(|n| n <= produced_here) {
            continue;
        }
        let Some(names) = root_listing.or_else(|| list_files(&abs_dir)) else {
            // Gone or unreadable since the walk: the walk's verdict stands.
            continue;
        };
        // Files already kept (the parent checkpoint holds them) come first,
        // so a new ignored file never pushes an old one out; then by name.
        let mut eligible: Vec<(bool, String, std::fs::Metadata)> = Vec::new();
        for name in names {
            use std::os::unix::ffi::OsStrExt;
            let name_str = encode_name(name.as_bytes());
            if super::never_content(&name_str) {
                continue;
            }
            let rel = if dir.is_empty() {
                name_str.into_owned()
            } else {
                format!("{dir}/{name_str}")
            };
            if sink.out.files.contains_key(&rel)
                || untracked.contains(rel.as_str())
                || RepoPath::parse(&rel).is_err()
                || hard.matched_path_or_any_parents(&rel, false).is_ignore()
                || soft.matched_path_or_any_parents(&rel, false).is_ignore()
                || rewind.ignores_path_or_parents(&rel)
                || !git.ignores_file(&rel)
            {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(abs_dir.join(&name)) else {
                continue;
            };
            let held = held(req.prior, &rel);
            if !(meta.is_file() || meta.file_type().is_symlink())
                || (meta.len() > opts.ignored_max_size && !held)
            {
                continue;
            }
            eligible.push((held, rel, meta));
        }
        eligible.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (i, (_, rel, meta)) in eligible.into_iter().enumerate() {
            if !in_scope(req.scope, &rel, false) {
                continue;
            }
            if i < opts.ignored_per_directory {
                found.push((rel, meta));
            } else {
                over_cap.push(rel);
            }
        }
    }
    for (rel, meta) in found {
        let outcome =
            capture(&join(req.root, &rel), &rel, &meta, req).map_err(|e| (rel.clone(), e))?;
        sink.record(rel, outcome);
    }
    for rel in over_cap {
        sink.record(rel, Outcome::Uncaptured(UncapturedReason::IgnoredOverCap));
    }
    Ok(())
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

/// Whether a file directly in `dir` can be in the scope: `dir` is at or
/// below a scope path, or is the parent of one.
fn lists_scope(scope: Option<&[RepoPath]>, dir: &str) -> bool {
    let Some(scope) = scope else { return true };
    scope.iter().any(|s| {
        (!dir.is_empty() && s.is_prefix_of(dir))
            || s.as_str().is_empty()
            || parent_of(s.as_str()) == dir
    })
}

#[cfg(test)]
mod tests {
    use super::super::capture::ScanOutput;
    use super::super::scan::scan;
    use super::super::stat_cache::DirListings;
    use super::super::{ScanOptions, StatCache};
    use super::*;
    use crate::store::{FlatTree, Store};
    use std::collections::BTreeSet;

    fn scan_of(
        root: &Path,
        options: &ScanOptions,
        prior: &FlatTree,
        scope: Option<&[RepoPath]>,
    ) -> ScanOutput {
        let store_dir = tempfile::tempdir().unwrap();
        let store = Store::open(store_dir.path(), false).unwrap();
        scan(&ScanRequest {
            root,
            options,
            store: &store,
            cache: &StatCache::default(),
            prior,
            staged: &BTreeSet::new(),
            scope,
            tracked: &[],
            progress: None,
            listings: None,
            known: None,
        })
        .unwrap()
    }

    fn files(out: &ScanOutput) -> Vec<&str> {
        out.files.keys().map(String::as_str).collect()
    }

    fn untracked(out: &ScanOutput) -> Vec<(&str, UncapturedReason)> {
        out.untracked
            .iter()
            .map(|u| (u.path.as_str(), u.reason))
            .collect()
    }

    #[test]
    fn small_ignored_files_are_captured_but_not_big_ones_or_ignored_directories() {
        let dir = project(&[
            (".gitignore", "*.log\nout/\n.env\n"),
            (".env", "SECRET=1"),
            ("x.log", "log"),
            ("sub/y.log", "log"),
            ("out/o.txt", "build output"),
            ("a.txt", "a"),
        ]);
        std::fs::write(dir.path().join("big.log"), vec![b'x'; 1024 * 1024 + 1]).unwrap();
        let out = scan_of(dir.path(), &ScanOptions::default(), &FlatTree::new(), None);
        assert_eq!(
            files(&out),
            [".env", ".gitignore", "a.txt", "sub/y.log", "x.log"]
        );
        assert_eq!(untracked(&out), []);
    }

    #[test]
    fn other_exclusions_still_apply_to_ignored_files() {
        let dir = project(&[
            (".gitignore", "*.secret\n*.pyc\n"),
            (".rewindignore", "private.secret\n"),
            ("private.secret", "p"),
            ("extra.secret", "e"),
            ("kept.secret", "k"),
            ("m.pyc", "bytecode"),
        ]);
        let options = ScanOptions {
            extra_ignores: vec!["extra.*".into()],
            ..Default::default()
        };
        let out = scan_of(dir.path(), &options, &FlatTree::new(), None);
        assert_eq!(files(&out), [".gitignore", ".rewindignore", "kept.secret"]);
    }

    #[test]
    fn the_cap_keeps_files_already_held_and_reports_the_rest() {
        let dir = project(&[
            (".gitignore", "*.log\n"),
            ("a.log", "a"),
            ("b.log", "b"),
            ("c.log", "c"),
            ("d.log", "d"),
            ("e.log", "e"),
        ]);
        let options = ScanOptions {
            ignored_per_directory: 3,
            ..Default::default()
        };
        let mut prior = FlatTree::new();
        let held = scan_of(dir.path(), &options, &FlatTree::new(), None).files["a.log"];
        prior.insert("e.log".to_string(), held);
        let out = scan_of(dir.path(), &options, &prior, None);
        assert_eq!(files(&out), [".gitignore", "a.log", "b.log", "e.log"]);
        assert_eq!(
            untracked(&out),
            [
                ("c.log", UncapturedReason::IgnoredOverCap),
                ("d.log", UncapturedReason::IgnoredOverCap)
            ]
        );
    }

    #[test]
    fn a_scoped_scan_captures_an_ignored_file_in_its_scope_only() {
        let dir = project(&[
            (".gitignore", ".env\n"),
            (".env", "S=1"),
            ("sub/.env", "S=2"),
            ("a.txt", "a"),
        ]);
        let opts = ScanOptions::default();
        let prior = FlatTree::new();
        let scope = [RepoPath::parse(".env").unwrap()];
        assert_eq!(
            files(&scan_of(dir.path(), &opts, &prior, Some(&scope))),
            [".env"]
        );
        let scope = [RepoPath::parse("sub").unwrap()];
        assert_eq!(
            files(&scan_of(dir.path(), &opts, &prior, Some(&scope))),
            ["sub/.env"]
        );
        let scope = [RepoPath::parse("a.txt").unwrap()];
        assert_eq!(
            files(&scan_of(dir.path(), &opts, &prior, Some(&scope))),
            ["a.txt"]
        );
    }

    #[test]
    fn a_remembered_listing_is_used_only_while_the_directory_is_unchanged() {
        let dir = project(&[
            (".gitignore", "*.log\n"),
            ("d/a.log", "a"),
            ("d/x.txt", "x"),
        ]);
        // Older than the racy window, so the listing is remembered.
        std::thread::sleep(std::time::Duration::from_millis(150));
        let listings = DirListings::default();
        let scan_with = |listings: &DirListings| {
            let store_dir = tempfile::tempdir().unwrap();
            let store = Store::open(store_dir.path(), false).unwrap();
            scan(&ScanRequest {
                root: dir.path(),
                options: &ScanOptions::default(),
                store: &store,
                cache: &StatCache::default(),
                prior: &FlatTree::new(),
                staged: &BTreeSet::new(),
                scope: None,
                tracked: &[],
                progress: None,
                listings: Some(listings),
                known: None,
            })
            .unwrap()
        };
        let out = scan_with(&listings);
        assert_eq!(files(&out), [".gitignore", "d/a.log", "d/x.txt"]);
        assert_eq!(listings.with(|m| m.get("d").map(|e| e.1)), Some(2));
        // A new name moves the directory's stat: listed again.
        std::fs::write(dir.path().join("d/b.log"), "b").unwrap();
        let out = scan_with(&listings);
        assert_eq!(files(&out), [".gitignore", "d/a.log", "d/b.log", "d/x.txt"]);
        // Remembered once it is older than the racy window; while its stat
        // is unchanged the remembered count is what counts (a count of 0
        // says: nothing the walk did not produce).
        std::thread::sleep(std::time::Duration::from_millis(150));
        scan_with(&listings);
        assert_eq!(listings.with(|m| m.get("d").map(|e| e.1)), Some(3));
        listings.with(|m| m.get_mut("d").map(|entry| entry.1 = 0));
        let out = scan_with(&listings);
        assert_eq!(files(&out), [".gitignore", "d/x.txt"]);
    }

    #[test]
    fn nothing_ignored_is_captured_when_turned_off() {
        let dir = project(&[(".gitignore", ".env\n"), (".env", "S=1")]);
        for options in [
            ScanOptions {
                ignored_max_size: 0,
                ..Default::default()
            },
            ScanOptions {
                ignored_per_directory: 0,
                ..Default::default()
            },
        ] {
            let out = scan_of(dir.path(), &options, &FlatTree::new(), None);
            assert_eq!(files(&out), [".gitignore"]);
        }
    }

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_deepest_gitignore_with_a_rule_decides() {
        let dir = project(&[
            (".gitignore", "*.log\n.env\n"),
            ("sub/.gitignore", "!keep.log\n"),
            (".git/info/exclude", "local.txt\n"),
        ]);
        let mut git = IgnoreFiles::git(dir.path());
        assert!(git.ignores_file(".env"));
        assert!(git.ignores_file("a.log"));
        assert!(git.ignores_file("sub/other.log"));
        assert!(!git.ignores_file("sub/keep.log"));
        assert!(git.ignores_file("local.txt"));
        assert!(git.ignores_file("sub/.env"));
        assert!(!git.ignores_file("main.rs"));
    }

    #[test]
    fn rewindignore_rules_never_re_include() {
        let dir = project(&[
            (".rewindignore", "secret/\n"),
            ("secret/.rewindignore", "!x\n"),
        ]);
        let mut files = IgnoreFiles::new(dir.path(), ".rewindignore");
        assert!(files.ignores_path_or_parents("secret/x"));
        assert!(!files.ignores_path_or_parents("public/x"));
    }

    #[test]
    fn a_directory_lists_the_scope_when_a_scope_path_is_in_or_above_it() {
        let scope = [
            RepoPath::parse("a/.env").unwrap(),
            RepoPath::parse("b").unwrap(),
        ];
        let scope = Some(&scope[..]);
        assert!(lists_scope(scope, "a"));
        assert!(lists_scope(scope, "b"));
        assert!(lists_scope(scope, "b/c"));
        // `b` may be a file in the root.
        assert!(lists_scope(scope, ""));
        assert!(!lists_scope(scope, "a/x"));
        assert!(!lists_scope(
            Some(&[RepoPath::parse("a/.env").unwrap()]),
            ""
        ));
        assert!(lists_scope(None, ""));
    }
}
