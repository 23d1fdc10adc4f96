use super::super::capture::Uncaptured;
use super::super::git;
use super::super::options::ScanOptions;
use super::super::stat_cache::StatCache;
use super::*;
use crate::store::{EntryKind, FlatTree, ObjectId, Store};
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;

#[test]
fn progress_is_reported_only_after_the_interval_and_at_most_that_often() {
    let seen = Mutex::new(Vec::new());
    let report = |n: u64| seen.lock().unwrap().push(n);
    let ticker = Ticker {
        seen: std::sync::atomic::AtomicU64::new(0),
        last: Mutex::new(std::time::Instant::now()),
        report: Some(&report),
    };
    // A scan younger than the interval reports nothing.
    for _ in 0..128 {
        ticker.tick();
    }
    assert!(seen.lock().unwrap().is_empty());
    // Once the interval has passed: one report, then quiet again.
    *ticker.last.lock().unwrap() -= PROGRESS_EVERY;
    for _ in 0..256 {
        ticker.tick();
    }
    assert_eq!(*seen.lock().unwrap(), [192]);
}

#[test]
fn tracked_in_scope_finds_exactly_the_scope_paths_and_below() {
    let tracked: Vec<String> = ["a", "a-b", "a.txt", "a/b", "a/b/c", "a0", "ab", "b/x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let pick = |scope: &[&str]| -> Vec<String> {
        let scope: Vec<RepoPath> = scope.iter().map(|s| RepoPath::parse(s).unwrap()).collect();
        let mut v: Vec<String> = tracked_in_scope(&tracked, Some(&scope)).cloned().collect();
        v.sort();
        v
    };
    assert_eq!(pick(&["a"]), ["a", "a/b", "a/b/c"]);
    assert_eq!(pick(&["a/b", "b"]), ["a/b", "a/b/c", "b/x"]);
    assert_eq!(pick(&["a.txt", "zz"]), ["a.txt"]);
    assert_eq!(tracked_in_scope(&tracked, None).count(), tracked.len());
}

struct Env {
    dir: tempfile::TempDir,
    store_dir: tempfile::TempDir,
    store: Store,
}

impl Env {
    fn new() -> Env {
        let store_dir = tempfile::tempdir().unwrap();
        let store = Store::open(store_dir.path(), false).unwrap();
        Env {
            dir: tempfile::tempdir().unwrap(),
            store_dir,
            store,
        }
    }
    fn write(&self, rel: &str, content: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    fn scan_with(
        &self,
        options: &ScanOptions,
        staged: &[&str],
        scope: Option<&[RepoPath]>,
    ) -> ScanOutput {
        self.scan_over(options, staged, scope, None)
    }
    /// [`Env::scan_with`], updating the scan whose files are `known`.
    fn scan_over(
        &self,
        options: &ScanOptions,
        staged: &[&str],
        scope: Option<&[RepoPath]>,
        known: Option<&FlatTree>,
    ) -> ScanOutput {
        let _ = self.store_dir.path();
        let staged: BTreeSet<String> = staged.iter().map(|s| s.to_string()).collect();
        scan(&ScanRequest {
            root: self.dir.path(),
            options,
            store: &self.store,
            cache: &StatCache::default(),
            prior: &FlatTree::new(),
            staged: &staged,
            scope,
            tracked: &git::tracked_paths(self.dir.path()),
            progress: None,
            listings: None,
            known,
        })
        .unwrap()
    }
    /// What the ignore rules let through (no small ignored files).
    fn files_by_rules(&self) -> Vec<String> {
        let rules_only = ScanOptions {
            ignored_max_size: 0,
            ..Default::default()
        };
        self.scan_with(&rules_only, &[], None)
            .files
            .into_keys()
            .collect()
    }
    fn files(&self) -> Vec<String> {
        self.scan_with(&ScanOptions::default(), &[], None)
            .files
            .into_keys()
            .collect()
    }
}

#[test]
fn gitignore_applies_without_a_git_directory() {
    let e = Env::new();
    e.write(".gitignore", "*.log\nout/\n!keep.log\n");
    e.write("a.txt", "a");
    e.write("x.log", "x");
    e.write("keep.log", "k");
    e.write("out/o.txt", "o");
    e.write("sub/.gitignore", "local.txt\n");
    e.write("sub/local.txt", "l");
    e.write("sub/other.txt", "o");
    assert_eq!(
        e.files_by_rules(),
        vec![
            ".gitignore",
            "a.txt",
            "keep.log",
            "sub/.gitignore",
            "sub/other.txt"
        ]
    );
}

#[test]
fn default_excludes_hidden_files_and_dot_git() {
    let e = Env::new();
    e.write("node_modules/x/index.js", "x");
    e.write("target/debug/bin", "x");
    e.write("pkg/__pycache__/m.pyc", "x");
    e.write(".env", "SECRET=1");
    e.write(".github/workflows/ci.yml", "on: push");
    e.write(".git/config", "[core]");
    e.write("nested/.git/HEAD", "ref: x");
    e.write("nested/lib.rs", "x");
    assert_eq!(
        e.files(),
        vec![".env", ".github/workflows/ci.yml", "nested/lib.rs"]
    );
    let all = e.scan_with(
        &ScanOptions {
            default_excludes: false,
            ..Default::default()
        },
        &[],
        None,
    );
    assert!(all.files.contains_key("node_modules/x/index.js"));
    assert!(!all.files.keys().any(|k| k.contains(".git/")));
}

#[test]
fn rewindignore_and_extra_ignores() {
    let e = Env::new();
    e.write(".rewindignore", "secret/\n");
    e.write("secret/k", "k");
    e.write("data/big.bin", "b");
    e.write("src/a.rs", "a");
    let out = e.scan_with(
        &ScanOptions {
            extra_ignores: vec!["data/".into()],
            ..Default::default()
        },
        &[],
        None,
    );
    let files: Vec<_> = out.files.into_keys().collect();
    assert_eq!(files, vec![".rewindignore", "src/a.rs"]);
}

#[test]
fn staged_paths_beat_ignore_rules() {
    let e = Env::new();
    e.write(".gitignore", "gen/\n*.tmp\n");
    e.write("gen/a/out.js", "1");
    e.write("x.tmp", "2");
    let out = e.scan_with(&ScanOptions::default(), &["gen", "x.tmp", "missing"], None);
    let files: Vec<_> = out.files.into_keys().collect();
    assert_eq!(files, vec![".gitignore", "gen/a/out.js", "x.tmp"]);
}

#[test]
fn symlinks_exec_bits_special_and_too_large() {
    let e = Env::new();
    e.write("a.txt", "hello");
    e.write("run.sh", "#!/bin/sh");
    std::fs::set_permissions(
        e.dir.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", e.dir.path().join("outside")).unwrap();
    std::os::unix::fs::symlink("a.txt", e.dir.path().join("link")).unwrap();
    e.write("big.bin", &"x".repeat(100));
    let fifo_ok = std::process::Command::new("mkfifo")
        .arg(e.dir.path().join("pipe"))
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    let out = e.scan_with(
        &ScanOptions {
            max_file_size: 50,
            ..Default::default()
        },
        &[],
        None,
    );
    assert_eq!(out.files["run.sh"].kind, EntryKind::Executable);
    assert_eq!(out.files["a.txt"].kind, EntryKind::File);
    let link = out.files["outside"];
    assert_eq!(link.kind, EntryKind::Symlink);
    assert_eq!(e.store.get(&link.id).unwrap(), b"/etc/passwd");
    // Present, not captured: an entry with the reason, and no content.
    assert_eq!(
        out.files["big.bin"].not_captured(),
        Some(UncapturedReason::TooLarge)
    );
    assert!(out.untracked.contains(&Uncaptured {
        path: RepoPath::from_walk("big.bin".into()),
        reason: UncapturedReason::TooLarge
    }));
    if fifo_ok {
        assert_eq!(
            out.files["pipe"].not_captured(),
            Some(UncapturedReason::Special)
        );
        assert!(out.untracked.contains(&Uncaptured {
            path: RepoPath::from_walk("pipe".into()),
            reason: UncapturedReason::Special
        }));
    }
    // The cap spares files the parent checkpoint holds: captured, or
    // recorded present for a passing reason (one unstable moment must not
    // stop a protected file's capture for good); one it left out as too
    // large stays out.
    let held_as = |prior_entry: TreeEntry| {
        let mut prior = FlatTree::new();
        prior.insert("big.bin".to_string(), prior_entry);
        let again = scan(&ScanRequest {
            root: e.dir.path(),
            options: &ScanOptions {
                max_file_size: 50,
                ..Default::default()
            },
            store: &e.store,
            cache: &StatCache::default(),
            prior: &prior,
            staged: &BTreeSet::new(),
            scope: None,
            tracked: &[],
            progress: None,
            listings: None,
            known: None,
        })
        .unwrap();
        again.files["big.bin"].has_object()
    };
    assert!(held_as(out.files["a.txt"]));
    assert!(held_as(TreeEntry::uncaptured(UncapturedReason::Unstable)));
    assert!(!held_as(TreeEntry::uncaptured(UncapturedReason::TooLarge)));
}

/// The next version's byte in [`a_file_rewritten_in_place_is_never_captured_torn`].
fn next_version(b: u8) -> u8 {
    if b == b'z' {
        b'a'
    } else {
        b + 1
    }
}

/// Whether `content` is a state the file was really in while a writer
/// rewrote it, one `block` at a time in `order`, each version one byte
/// value throughout: the new version in the blocks written first (the
/// one being written may be new in its first pages only), the previous
/// version in the rest.
fn existed(content: &[u8], block: usize, order: &[usize]) -> bool {
    let first = content[0];
    let Some(other) = content.iter().copied().find(|&b| b != first) else {
        return true;
    };
    let (new, old) = if next_version(other) == first {
        (first, other)
    } else if next_version(first) == other {
        (other, first)
    } else {
        return false;
    };
    // 0: all new, 1: new pages then old ones, 2: all old; never less
    // than a block written earlier.
    let mut seen = 0;
    for &b in order {
        let pages: Vec<u8> = content[b * block..(b + 1) * block]
            .chunks(4096)
            .map(|p| {
                if p.iter().all(|&x| x == p[0]) {
                    p[0]
                } else {
                    0
                }
            })
            .collect();
        let class = if pages.iter().all(|&p| p == new) {
            0
        } else if pages.iter().all(|&p| p == old) {
            2
        } else {
            let cut = pages.iter().position(|&p| p != new).unwrap_or(pages.len());
            if !pages[cut..].iter().all(|&p| p == old) {
                return false;
            }
            1
        };
        if class < seen || (class == 1 && seen == 1) {
            return false;
        }
        seen = class.max(seen);
        if class == 1 {
            seen = 2;
        }
    }
    true
}

#[test]
fn a_file_rewritten_in_place_is_never_captured_torn() {
    use std::io::{Seek, SeekFrom, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    // Larger than one streamed chunk and than the in-memory limit.
    const SIZE: usize = 6 << 20;
    const BLOCK: usize = 64 << 10;
    // Blocks are written in a shuffled order, so a read racing the
    // writer sees a mix that was never on disk (new blocks that are not
    // the first ones written), while a writer paused mid-version leaves
    // a mix that was (the first ones): that one a scan may capture, as
    // nothing on disk tells it from a finished file.
    let mut order: Vec<usize> = (0..SIZE / BLOCK).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let e = Env::new();
    let path = e.dir.path().join("big.bin");
    std::fs::write(&path, vec![b'a'; SIZE]).unwrap();
    let stop = AtomicBool::new(false);
    let options = ScanOptions {
        max_file_size: 1 << 30,
        ..Default::default()
    };
    /// Stops the writer however the scans end (a failed assertion
    /// included), so the scope can join it.
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let mut results = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            // In place, block by block, as a database writes: never a
            // new inode, never truncated.
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut value = b'a';
            while !stop.load(Ordering::Relaxed) {
                value = next_version(value);
                let block = vec![value; BLOCK];
                for &b in &order {
                    f.seek(SeekFrom::Start((b * BLOCK) as u64)).unwrap();
                    f.write_all(&block).unwrap();
                }
            }
        });
        let _stop = Stop(&stop);
        for _ in 0..12 {
            let out = e.scan_with(&options, &[], None);
            // Never captured torn, and never left out as if deleted: an
            // unstable moment is an uncaptured entry.
            let entry = out.files["big.bin"];
            let content = entry.has_object().then(|| e.store.get(&entry.id).unwrap());
            if !entry.has_object() {
                assert_eq!(entry.not_captured(), Some(UncapturedReason::Unstable));
            }
            results.push((out.untracked, content));
        }
    });
    let (mut captured, mut unstable) = (0, 0);
    for (untracked, content) in &results {
        match content {
            Some(content) => {
                assert_eq!(content.len(), SIZE);
                assert!(
                    existed(content, BLOCK, &order),
                    "captured a mix of versions that was never on disk"
                );
                captured += 1;
            }
            None => {
                assert_eq!(
                    *untracked,
                    [Uncaptured {
                        path: RepoPath::from_walk("big.bin".into()),
                        reason: UncapturedReason::Unstable
                    }]
                );
                unstable += 1;
            }
        }
    }
    eprintln!("{captured} captured whole, {unstable} unstable");
    // Once the writer is done, the file is captured as it stands.
    let out = e.scan_with(&options, &[], None);
    assert!(out.untracked.is_empty(), "{:?}", out.untracked);
    let content = e.store.get(&out.files["big.bin"].id).unwrap();
    assert!(content.iter().all(|&b| b == content[0]));
}

#[test]
fn existed_tells_states_on_disk_from_torn_reads() {
    let block = 8192;
    let order = [2, 0, 1];
    let file = |blocks: [&[u8]; 3]| -> Vec<u8> { blocks.concat() };
    let (a, b) = (vec![b'a'; block], vec![b'b'; block]);
    let mut half = vec![b'b'; 4096];
    half.extend(vec![b'a'; 4096]);
    // Written so far: block 2, then block 0 (half of it).
    assert!(existed(&file([&a, &a, &a]), block, &order));
    assert!(existed(&file([&a, &a, &b]), block, &order));
    assert!(existed(&file([&half, &a, &b]), block, &order));
    assert!(existed(&file([&b, &a, &b]), block, &order));
    assert!(existed(&file([&b, &b, &b]), block, &order));
    // Block 0 new before block 2, or half of a block old first: torn.
    assert!(!existed(&file([&b, &a, &a]), block, &order));
    assert!(!existed(&file([&half, &a, &a]), block, &order));
    assert!(!existed(&file([&b, &half, &a]), block, &order));
    assert!(!existed(&file([&a, &b, &vec![b'c'; block]]), block, &order));
}

#[test]
fn walk_errors_name_what_they_hide() {
    let root = Path::new("/project");
    let io = |code: i32, path: &str| ignore::Error::WithDepth {
        depth: 2,
        err: Box::new(ignore::Error::WithPath {
            path: PathBuf::from(path),
            err: Box::new(ignore::Error::Io(std::io::Error::from_raw_os_error(code))),
        }),
    };
    let mut out = Vec::new();
    walk_error_paths(root, &io(libc::EACCES, "/project/locked"), &mut out);
    walk_error_paths(root, &io(libc::ENAMETOOLONG, "/project/a/deep"), &mut out);
    let partial = ignore::Error::Partial(vec![io(libc::EIO, "/project/b")]);
    walk_error_paths(root, &partial, &mut out);
    // Not reported: deleted meanwhile, outside the project, the root
    // itself (a scan of an unreadable root fails instead), and an ignore
    // file that does not parse (not an I/O failure).
    walk_error_paths(root, &io(libc::ENOENT, "/project/gone"), &mut out);
    walk_error_paths(root, &io(libc::EACCES, "/elsewhere/x"), &mut out);
    walk_error_paths(root, &io(libc::EACCES, "/project"), &mut out);
    let glob = ignore::Error::WithPath {
        path: PathBuf::from("/project/.gitignore"),
        err: Box::new(ignore::Error::WithLineNumber {
            line: 3,
            err: Box::new(ignore::Error::Glob {
                glob: Some("a[".into()),
                err: "unclosed class".into(),
            }),
        }),
    };
    walk_error_paths(root, &glob, &mut out);
    let got: Vec<(String, UncapturedReason)> = out
        .into_iter()
        .map(|(p, o)| match o {
            Outcome::Uncaptured(r) => (p, r),
            _ => panic!("{p}: not untracked"),
        })
        .collect();
    assert_eq!(
        got,
        [
            ("locked".to_string(), UncapturedReason::Unreadable),
            ("a/deep".to_string(), UncapturedReason::PathTooLong),
            ("b".to_string(), UncapturedReason::Unreadable),
        ]
    );
}

#[test]
fn scope_limits_the_walk() {
    let e = Env::new();
    e.write("a/x.txt", "1");
    e.write("a/y/z.txt", "2");
    e.write("b/w.txt", "3");
    e.write("c.txt", "4");
    let scope = [
        RepoPath::parse("a/y").unwrap(),
        RepoPath::parse("c.txt").unwrap(),
    ];
    let out = e.scan_with(&ScanOptions::default(), &[], Some(&scope));
    let files: Vec<_> = out.files.into_keys().collect();
    assert_eq!(files, vec!["a/y/z.txt", "c.txt"]);
}

#[test]
fn stat_cache_hits_read_nothing() {
    let e = Env::new();
    e.write("a.txt", "hello");
    let first = e.scan_with(&ScanOptions::default(), &[], None);
    assert_eq!(first.files_hashed, 1);
    let mut cache = StatCache::default();
    for (p, c) in first.cache_updates {
        // Pretend the scan started long after the file was written.
        cache.update(p, c, i128::MAX / 2);
    }
    let second = scan(&ScanRequest {
        root: e.dir.path(),
        options: &ScanOptions::default(),
        store: &e.store,
        cache: &cache,
        prior: &FlatTree::new(),
        staged: &BTreeSet::new(),
        scope: None,
        tracked: &[],
        progress: None,
        listings: None,
        known: None,
    })
    .unwrap();
    assert_eq!(second.files_hashed, 0);
    assert_eq!(second.files, first.files);
}

/// Tracked files inside a default-excluded directory are captured by name
/// (the second pass), each checked for a parent that is not a real
/// directory; the answer is kept per directory, so it must hold for every
/// file of it: two files below a directory replaced by a symlink are both
/// left out, two below a real one both captured.
#[test]
fn tracked_files_below_an_excluded_directory_are_checked_per_directory() {
    let e = Env::new();
    for f in [
        "real/build/a.txt",
        "real/build/b.txt",
        "other/build/x.txt",
        "other/build/y.txt",
    ] {
        e.write(f, f);
    }
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(e.dir.path())
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-f", "real", "other"]);
    std::fs::remove_dir_all(e.dir.path().join("other")).unwrap();
    std::os::unix::fs::symlink("real", e.dir.path().join("other")).unwrap();
    let files = e.files_by_rules();
    assert!(files.contains(&"real/build/a.txt".to_string()), "{files:?}");
    assert!(files.contains(&"real/build/b.txt".to_string()), "{files:?}");
    assert!(
        !files.iter().any(|f| f.starts_with("other/build/")),
        "{files:?}"
    );
}

/// A scoped scan over a known tree captures an edited file by name, with
/// no walk; what a rule hides now, a small gitignored file, something that
/// is no longer a file and a path the known tree lacks are walked; either
/// way the files are what a full scan finds.
#[test]
fn scope_paths_known_as_plain_files_are_captured_without_a_walk() {
    let e = Env::new();
    e.write(".gitignore", "*.log\n");
    e.write("src/a.rs", "a");
    e.write("src/deep/b.rs", "b");
    e.write("src/note.log", "small, ignored, captured");
    e.write("src/was_file", "f");
    let full = e.scan_with(&ScanOptions::default(), &[], None);
    assert!(full.files.contains_key("src/note.log"));
    let known: FlatTree = full.files.clone().into_iter().collect();
    let scoped = |scope: &[&str]| {
        let scope: Vec<RepoPath> = scope.iter().map(|p| RepoPath::parse(p).unwrap()).collect();
        e.scan_over(&ScanOptions::default(), &[], Some(&scope), Some(&known))
    };
    e.write("src/deep/b.rs", "b2");
    let out = scoped(&["src/deep/b.rs"]);
    assert!(out.dirs.is_empty(), "walked {:?}", out.dirs);
    assert_eq!(out.files.keys().collect::<Vec<_>>(), ["src/deep/b.rs"]);
    assert_eq!(out.files["src/deep/b.rs"].id, ObjectId::of(b"b2"));

    e.write("src/note.log", "grown");
    std::fs::remove_file(e.dir.path().join("src/was_file")).unwrap();
    std::fs::create_dir(e.dir.path().join("src/was_file")).unwrap();
    e.write("src/was_file/inner.rs", "i");
    e.write("src/new.rs", "n");
    let out = scoped(&["src/note.log", "src/was_file", "src/new.rs"]);
    assert!(!out.dirs.is_empty(), "these are walked");
    let full = e.scan_with(&ScanOptions::default(), &[], None);
    for p in ["src/note.log", "src/was_file/inner.rs", "src/new.rs"] {
        assert_eq!(out.files.get(p), full.files.get(p), "{p}");
    }
}
