//! What gets captured (docs/protocol.md, "What a snapshot captures"), case by case,
//! through the protocol.
//!
//! Most tests initialize on an empty project (so the baseline is the empty
//! tree), then lay out files and ask `get_modified_files` from the baseline
//! to `@working`: every captured path is listed as added. Snapshot results
//! give the untracked list and the diffs.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{skip_or_fail, Fixture, Sidecar};

/// Options that capture no ignored file: for tests of the ignore rules
/// themselves (small ignored files are captured by default).
fn no_ignored() -> Value {
    json!({ "ignoredMaxSize": 0 })
}

/// Initialize on the (still empty) project with these options.
fn start_empty(fx: &Fixture, options: Value) -> Sidecar {
    let (s, init) = fx.start(json!({ "options": options }));
    assert_eq!(
        init["baseline"]["files"], 0,
        "project should be empty: {init}"
    );
    s
}

/// Every path captured from the working directory now (baseline is empty).
/// A path found but not captured is listed as such, never as added.
fn captured(s: &mut Sidecar) -> BTreeSet<String> {
    let r = s.ok("get_modified_files", json!({ "toEntryId": "@working" }));
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| match f["status"].as_str() {
            Some("added") => Some(f["path"].as_str().unwrap().to_string()),
            Some("notCaptured") => {
                assert!(f["reason"].is_string(), "{f}");
                None
            }
            _ => panic!("neither added nor not captured: {f}"),
        })
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|s| s.to_string()).collect()
}

/// `stats.untracked` of a fresh snapshot, as (path, reason).
fn untracked(s: &mut Sidecar) -> Vec<(String, String)> {
    let r = s.ok("snapshot", json!({}));
    r["stats"]["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["path"].as_str().unwrap().to_string(),
                u["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Is git installed? Without it the checks that need a real repository are
/// left out, with a message (a failure under CI=true: `skip_or_fail`).
fn git_available() -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        skip_or_fail("git is not installed: the checks that need a git repository are left out");
    }
    ok
}

/// Run git in `dir` with no user or system configuration.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

macro_rules! require_git {
    () => {
        if !git_available() {
            return;
        }
    };
}

fn chmod(fx: &Fixture, rel: &str, mode: u32) {
    let p = fx.project.path().join(rel);
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

// ------------------------------------------------------------ .gitignore

#[test]
fn gitignore_is_honoured_without_a_git_directory() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, no_ignored());
    fx.write(".gitignore", "*.log\nout/\n/rooted.txt\n");
    fx.write("a.txt", "a");
    fx.write("x.log", "log");
    fx.write("sub/y.log", "log");
    fx.write("out/z.txt", "z");
    fx.write("rooted.txt", "r");
    fx.write("sub/rooted.txt", "r");
    assert!(!fx.project.path().join(".git").exists());
    assert_eq!(
        captured(&mut s),
        set(&[".gitignore", "a.txt", "sub/rooted.txt"])
    );
}

#[test]
fn gitignore_is_honoured_with_a_git_directory() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, no_ignored());
    if git_available() {
        git(fx.project.path(), &["init", "-q"]);
    } else {
        fx.write(".git/HEAD", "ref: refs/heads/main\n");
    }
    fx.write(".gitignore", "*.log\nout/\n");
    fx.write("a.txt", "a");
    fx.write("x.log", "log");
    fx.write("out/z.txt", "z");
    assert_eq!(captured(&mut s), set(&[".gitignore", "a.txt"]));
}

#[test]
fn nested_gitignore_applies_below_its_directory_only() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, no_ignored());
    fx.write("sub/.gitignore", "*.tmp\n");
    fx.write("sub/a.tmp", "x");
    fx.write("sub/deeper/b.tmp", "x");
    fx.write("c.tmp", "x");
    fx.write("sub/keep.txt", "x");
    assert_eq!(
        captured(&mut s),
        set(&["c.tmp", "sub/.gitignore", "sub/keep.txt"])
    );
}

#[test]
fn gitignore_negation_keeps_a_file() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, no_ignored());
    fx.write(".gitignore", "*.log\n!keep.log\n");
    fx.write("drop.log", "x");
    fx.write("keep.log", "x");
    fx.write("deep/keep.log", "x");
    assert_eq!(
        captured(&mut s),
        set(&[".gitignore", "deep/keep.log", "keep.log"])
    );
}

#[test]
fn git_info_exclude_is_honoured() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, no_ignored());
    if git_available() {
        git(fx.project.path(), &["init", "-q"]);
    }
    fx.write(".git/info/exclude", "secret.txt\n");
    fx.write("secret.txt", "s");
    fx.write("public.txt", "p");
    assert_eq!(captured(&mut s), set(&["public.txt"]));
}

#[test]
fn users_global_excludes_are_not_consulted() {
    let fx = Fixture::new();
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().join("config");
    // Every place git would look for global excludes says "*.txt".
    std::fs::create_dir_all(xdg.join("git")).unwrap();
    std::fs::write(xdg.join("git/ignore"), "*.txt\n").unwrap();
    std::fs::write(home.path().join(".gitignore_global"), "*.txt\n").unwrap();
    let config = home.path().join("gitconfig");
    std::fs::write(
        &config,
        format!(
            "[core]\n\texcludesFile = {}\n",
            home.path().join(".gitignore_global").display()
        ),
    )
    .unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        std::fs::read(&config).unwrap(),
    )
    .unwrap();
    fx.write(".git/HEAD", "ref: refs/heads/main\n");
    let mut s = Sidecar::spawn_env(
        &[],
        &[
            ("HOME", home.path()),
            ("XDG_CONFIG_HOME", &xdg),
            ("GIT_CONFIG_GLOBAL", &config),
        ],
    );
    let init = s.ok(
        "initialize",
        json!({
            "cwd": fx.project.path().to_str().unwrap(),
            "storeDir": fx.store.path().to_str().unwrap(),
        }),
    );
    assert_eq!(init["baseline"]["files"], 0);
    fx.write("notes.txt", "n");
    fx.write("sub/more.txt", "m");
    assert_eq!(captured(&mut s), set(&["notes.txt", "sub/more.txt"]));
}

// ------------------------------------------------- small ignored files

#[test]
fn an_ignored_env_file_an_agent_deletes_is_brought_back() {
    let fx = Fixture::new();
    fx.write(".gitignore", ".env\n*.log\nbuild/\n");
    fx.write(".env", "API_KEY=one");
    fx.write("config.local.json", "{}");
    fx.write("build/out.bin", "artifact");
    fx.write("src/main.rs", "fn main() {}");
    let (mut s, init) = fx.start(json!({}));
    let base = init["baseline"]["entryId"].as_str().unwrap().to_string();
    // Small ignored files are in the baseline; the ignored directory is not.
    assert_eq!(init["baseline"]["files"], 4, "{init}");
    // The watcher sees an edit to the ignored file.
    fx.write(".env", "API_KEY=two");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!([".env"]), "{r}");
    // The agent's turn: rm -rf of everything it can see.
    fx.remove(".env");
    fx.remove("src/main.rs");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["deleted"], json!([".env", "src/main.rs"]), "{r}");
    let r = s.ok("restore_files", json!({ "targetEntryId": base }));
    assert_eq!(r["conflicts"], json!([]), "{r}");
    assert_eq!(fx.read(".env").unwrap(), b"API_KEY=one");
    assert_eq!(fx.read("src/main.rs").unwrap(), b"fn main() {}");
    // Never captured, never touched.
    assert_eq!(fx.read("build/out.bin").unwrap(), b"artifact");
}

#[test]
fn ignored_files_over_the_directory_cap_are_reported() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "ignoredPerDirectory": 2 }));
    fx.write(".gitignore", "*.log\n");
    for name in ["a.log", "b.log", "c.log"] {
        fx.write(name, name);
    }
    assert_eq!(
        untracked(&mut s),
        [("c.log".to_string(), "ignoredOverCap".to_string())]
    );
    assert_eq!(captured(&mut s), set(&[".gitignore", "a.log", "b.log"]));
}

// ------------------------------------------------------ git-tracked files

#[test]
fn files_git_tracks_are_captured_even_when_gitignore_matches() {
    require_git!();
    let fx = Fixture::new();
    let root = fx.project.path();
    let mut s = start_empty(&fx, no_ignored());
    git(root, &["init", "-q"]);
    fx.write("Cargo.lock", "lock v1");
    fx.write("src/main.rs", "fn main() {}");
    fx.write("excluded.txt", "tracked, then excluded");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "init"]);
    fx.write(".gitignore", "Cargo.lock\n*.tmp\n");
    fx.write(".git/info/exclude", "excluded.txt\n");
    fx.write("scratch.tmp", "untracked and ignored");
    assert_eq!(
        captured(&mut s),
        set(&[".gitignore", "Cargo.lock", "excluded.txt", "src/main.rs"])
    );
    // Changes to the tracked-but-ignored file are seen by snapshots.
    s.ok("snapshot", json!({}));
    fx.write("Cargo.lock", "lock v2");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["Cargo.lock"]), "{r}");
}

#[test]
fn files_only_staged_in_the_git_index_count_as_tracked() {
    require_git!();
    let fx = Fixture::new();
    let root = fx.project.path();
    let mut s = start_empty(&fx, no_ignored());
    git(root, &["init", "-q"]);
    fx.write(".gitignore", "*.gen\n");
    fx.write("forced.gen", "x");
    fx.write("other.gen", "x");
    git(root, &["add", "-f", "forced.gen"]);
    assert_eq!(captured(&mut s), set(&[".gitignore", "forced.gen"]));
}

// ------------------------------------------------------- default excludes

#[test]
fn default_excludes_apply_but_tracked_files_inside_them_are_captured() {
    let fx = Fixture::new();
    let root = fx.project.path();
    let mut s = start_empty(&fx, json!({}));
    let have_git = git_available();
    if have_git {
        git(root, &["init", "-q"]);
    }
    fx.write("node_modules/pkg/index.js", "x");
    fx.write("web/node_modules/dep.js", "x");
    fx.write("target/debug/app", "x");
    fx.write(".venv/bin/python", "x");
    fx.write("__pycache__/m.cpython-312.pyc", "x");
    fx.write("pkg/__pycache__/n.pyc", "x");
    fx.write("src/app.py", "x");
    if have_git {
        fx.write("node_modules/patched/keep.js", "tracked");
        git(root, &["add", "-f", "node_modules/patched/keep.js"]);
    }
    let mut want = set(&["src/app.py"]);
    if have_git {
        want.insert("node_modules/patched/keep.js".into());
    }
    assert_eq!(captured(&mut s), want);
}

#[test]
fn default_excludes_can_be_switched_off() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "defaultExcludes": false }));
    fx.write("node_modules/pkg/index.js", "x");
    fx.write("target/debug/app", "x");
    fx.write("__pycache__/m.pyc", "x");
    fx.write("src/app.py", "x");
    assert_eq!(
        captured(&mut s),
        set(&[
            "__pycache__/m.pyc",
            "node_modules/pkg/index.js",
            "src/app.py",
            "target/debug/app"
        ])
    );
}

#[test]
fn use_gitignore_false_captures_gitignored_files() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "useGitignore": false }));
    fx.write(".gitignore", "*.log\n");
    fx.write(".git/info/exclude", "secret.txt\n");
    fx.write("x.log", "x");
    fx.write("secret.txt", "s");
    // The default excludes still apply.
    fx.write("node_modules/a.js", "x");
    assert_eq!(
        captured(&mut s),
        set(&[".gitignore", "secret.txt", "x.log"])
    );
}

#[test]
fn rewindignore_excludes_even_tracked_files() {
    let fx = Fixture::new();
    let root = fx.project.path();
    let mut s = start_empty(&fx, json!({}));
    let have_git = git_available();
    fx.write("secret.env", "tracked secret");
    fx.write("sub/local.cfg", "x");
    fx.write("sub/kept.cfg", "x");
    fx.write("public.txt", "p");
    if have_git {
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
    }
    fx.write(".rewindignore", "secret.env\n");
    fx.write("sub/.rewindignore", "local.cfg\n");
    assert_eq!(
        captured(&mut s),
        set(&[
            ".rewindignore",
            "public.txt",
            "sub/.rewindignore",
            "sub/kept.cfg"
        ])
    );
}

#[test]
fn extra_ignores_exclude_even_tracked_files() {
    let fx = Fixture::new();
    let root = fx.project.path();
    let mut s = start_empty(&fx, json!({ "extraIgnores": ["*.bak", "tmp/"] }));
    fx.write("a.bak", "x");
    fx.write("deep/b.bak", "x");
    fx.write("tmp/c.txt", "x");
    fx.write("keep.txt", "x");
    if git_available() {
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
    }
    assert_eq!(captured(&mut s), set(&["keep.txt"]));
}

// ----------------------------------------------------- hidden files, .git

#[test]
fn hidden_files_are_captured() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    fx.write(".env", "KEY=1");
    fx.write(".github/workflows/ci.yml", "on: push");
    fx.write(".config/tool/settings.json", "{}");
    assert_eq!(
        captured(&mut s),
        set(&[
            ".config/tool/settings.json",
            ".env",
            ".github/workflows/ci.yml"
        ])
    );
}

#[test]
fn dot_git_is_never_captured_whatever_the_options() {
    let fx = Fixture::new();
    let mut s = start_empty(
        &fx,
        json!({ "useGitignore": false, "defaultExcludes": false }),
    );
    fx.write(".git/HEAD", "ref: refs/heads/main\n");
    fx.write(".git/objects/ab/cdef", "x");
    fx.write("sub/.git", "gitdir: ../.git/worktrees/sub\n");
    fx.write("a.txt", "a");
    assert_eq!(captured(&mut s), set(&["a.txt"]));
}

#[test]
fn staging_a_path_inside_dot_git_does_not_capture_it() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    fx.write(".git/HEAD", "ref: refs/heads/main\n");
    fx.write("a.txt", "a");
    // Refusing the path (-32602) or accepting it and never capturing it are
    // both fine; capturing it is not.
    let r = s.call("stage_files", json!({"paths": [".git/HEAD", ".git"]}));
    if r.get("error").is_some() {
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
    assert_eq!(captured(&mut s), set(&["a.txt"]));
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["a.txt"]), "{r}");
}

#[test]
fn nested_repository_is_captured_without_its_git_dir() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, no_ignored());
    fx.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    fx.write("vendor/lib/.git/config", "[core]\n");
    fx.write("vendor/lib/.gitignore", "*.o\n");
    fx.write("vendor/lib/src.c", "int x;");
    fx.write("vendor/lib/src.o", "obj");
    fx.write("main.c", "int main;");
    assert_eq!(
        captured(&mut s),
        set(&["main.c", "vendor/lib/.gitignore", "vendor/lib/src.c"])
    );
}

// ---------------------------------------------------------------- symlinks

#[test]
fn symlinks_are_captured_as_links_and_never_followed() {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside").unwrap();
    let mut s = start_empty(&fx, json!({}));
    let root = fx.project.path();
    fx.write("real/file.txt", "real");
    std::os::unix::fs::symlink("real/file.txt", root.join("to_file")).unwrap();
    std::os::unix::fs::symlink("real", root.join("to_dir")).unwrap();
    std::os::unix::fs::symlink("does/not/exist", root.join("dangling")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("to_outside")).unwrap();
    std::os::unix::fs::symlink("../../etc/passwd", root.join("real/up")).unwrap();
    assert_eq!(
        captured(&mut s),
        set(&[
            "dangling",
            "real/file.txt",
            "real/up",
            "to_dir",
            "to_file",
            "to_outside"
        ])
    );
    let r = s.ok("snapshot", json!({}));
    let id = r["entryId"].as_str().unwrap().to_string();
    // The diff of a link shows its target text.
    for (link, target) in [
        ("to_file", "real/file.txt".to_string()),
        ("to_dir", "real".to_string()),
        ("dangling", "does/not/exist".to_string()),
        ("to_outside", outside.path().to_str().unwrap().to_string()),
    ] {
        let d = s.ok("get_file_diff", json!({"filePath": link, "toEntryId": id}));
        assert_eq!(d["newContent"], target, "{link}: {d}");
        assert_eq!(d["oldContent"], Value::Null, "{link}: {d}");
    }
    // Nothing below a linked directory is captured, and a path through a
    // link that leaves the project is refused.
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "to_dir/file.txt", "toEntryId": "@working"}),
    );
    assert!(d.is_null(), "{d}");
    let e = s.err(
        "get_file_diff",
        json!({"filePath": "to_outside/secret.txt", "toEntryId": "@working"}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    // Retargeting a link is a modification.
    std::fs::remove_file(root.join("to_file")).unwrap();
    std::os::unix::fs::symlink("real", root.join("to_file")).unwrap();
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["to_file"]), "{r}");
    // A file replaced by a link to the same text is a modification too.
    fx.write("plain", "real");
    s.ok("snapshot", json!({}));
    fx.remove("plain");
    std::os::unix::fs::symlink("real", root.join("plain")).unwrap();
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["plain"]), "{r}");
}

#[test]
fn a_symlink_named_by_a_path_is_fine_but_not_a_path_through_it() {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    let mut s = start_empty(&fx, json!({}));
    std::os::unix::fs::symlink(outside.path(), fx.project.path().join("out")).unwrap();
    s.ok("snapshot", json!({}));
    let d = s.ok("get_file_diff", json!({"filePath": "out"}));
    assert!(!d.is_null());
    let e = s.err("get_file_diff", json!({"filePath": "out/x"}));
    assert_eq!(e["code"], -32602, "{e}");
}

// ------------------------------------------------------ modes and sizes

#[test]
fn exec_bit_changes_show_as_modified() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    fx.write("run.sh", "#!/bin/sh\n");
    s.ok("snapshot", json!({}));
    chmod(&fx, "run.sh", 0o755);
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["run.sh"]), "{r}");
    assert!(r["entryId"].is_string());
    chmod(&fx, "run.sh", 0o644);
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["run.sh"]), "{r}");
    // Read/write bits alone are captured too (docs/format.md "Trees").
    chmod(&fx, "run.sh", 0o600);
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["run.sh"]), "{r}");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["changed"], false, "{r}");
}

#[test]
fn files_over_max_file_size_are_untracked_too_large() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "maxFileSize": 100 }));
    fx.write("big.bin", vec![7u8; 101]);
    fx.write("exact.bin", vec![7u8; 100]);
    fx.write("small.txt", "small");
    assert_eq!(captured(&mut s), set(&["exact.bin", "small.txt"]));
    assert_eq!(
        untracked(&mut s),
        vec![("big.bin".to_string(), "tooLarge".to_string())]
    );
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "big.bin", "toEntryId": "@working"}),
    );
    // Present on disk but not captured: said so, without content.
    assert_eq!(d["isTooLarge"], true, "{d}");
    assert_eq!(d["newContent"], Value::Null, "{d}");
    assert_eq!(d["oldContent"], Value::Null, "{d}");
}

#[test]
fn a_captured_file_that_grows_past_the_cap_stays_captured() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "maxFileSize": 100 }));
    fx.write("grows.txt", "short\n");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["grows.txt"]));
    let long = "x".repeat(300);
    fx.write("grows.txt", &long);
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["grows.txt"]), "{r}");
    assert_eq!(r["diff"]["deleted"], json!([]), "{r}");
    assert_eq!(r["stats"]["untracked"], json!([]), "{r}");
    let d = s.ok(
        "get_file_diff",
        json!({"filePath": "grows.txt", "toEntryId": r["entryId"]}),
    );
    assert_eq!(d["newContent"], long.as_str(), "{d}");
    // And it keeps being captured on the next change.
    fx.write("grows.txt", "y".repeat(400));
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["grows.txt"]), "{r}");
}

// ------------------------------------------------ special and unreadable

#[test]
fn a_fifo_is_reported_special() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    let ok = Command::new("mkfifo")
        .arg(fx.project.path().join("pipe"))
        .status()
        .map(|st| st.success())
        .unwrap_or(false);
    if !ok {
        skip_or_fail("mkfifo is unavailable");
        return;
    }
    fx.write("a.txt", "a");
    assert_eq!(captured(&mut s), set(&["a.txt"]));
    assert_eq!(
        untracked(&mut s),
        vec![("pipe".to_string(), "special".to_string())]
    );
}

#[test]
fn an_unreadable_file_is_reported_unreadable() {
    let fx = Fixture::new();
    let (mut s, _) = fx.start_without_read_override(json!({}));
    fx.write("a.txt", "a");
    fx.write("locked.txt", "secret");
    chmod(&fx, "locked.txt", 0o000);
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["a.txt"]), "{r}");
    assert_eq!(r["diff"]["notCaptured"], json!(["locked.txt"]), "{r}");
    assert_eq!(
        r["stats"]["untracked"],
        json!([{"path": "locked.txt", "reason": "unreadable"}]),
        "{r}"
    );
    chmod(&fx, "locked.txt", 0o644);
}

/// The user's story through the binary: a file the agent's checkpoint could
/// not read (here a `.env` locked with `chmod 000`, a directory that could
/// not be listed) is never called deleted, and going back to that
/// checkpoint — restore, undo — never deletes it (docs/architecture.md
/// rule 14).
#[test]
fn a_checkpoint_that_could_not_read_a_file_never_deletes_it() {
    let fx = Fixture::new();
    fx.write("app.py", "v1\n");
    fx.write(".env", "TOKEN=1\n");
    fx.write("data/rows.csv", "1\n");
    let (mut s, _) = fx.start_without_read_override(json!({}));
    chmod(&fx, ".env", 0o000);
    chmod(&fx, "data", 0o000);
    fx.write("app.py", "v2\n");
    let turn = s.ok("snapshot", json!({"label": "turn 1"}));
    assert_eq!(turn["diff"]["deleted"], json!([]), "{turn}");
    assert_eq!(
        turn["diff"]["notCaptured"],
        json!([".env", "data", "data/rows.csv"]),
        "{turn}"
    );
    let id = turn["entryId"].as_str().unwrap().to_string();
    let files = s.ok("get_modified_files", json!({"toEntryId": id}));
    let statuses: Vec<(String, String, String)> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
                f["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(
        statuses.contains(&(".env".into(), "notCaptured".into(), "unreadable".into())),
        "{statuses:?}"
    );
    // Readable again, changed, checkpointed; then back to turn 1.
    chmod(&fx, ".env", 0o644);
    chmod(&fx, "data", 0o755);
    fx.write(".env", "TOKEN=2\n");
    fx.write("app.py", "v3\n");
    let later = s.ok("snapshot", json!({"label": "turn 2"}));
    assert_eq!(
        later["diff"]["recaptured"],
        json!([".env", "data", "data/rows.csv"]),
        "{later}"
    );
    let plan = s.ok(
        "restore_files",
        json!({"targetEntryId": id, "preview": true}),
    );
    assert_eq!(plan["deleted"], json!([]), "{plan}");
    assert_eq!(plan["restored"], json!(["app.py"]), "{plan}");
    let r = s.ok("restore_files", json!({"targetEntryId": id}));
    assert_eq!(r["deleted"], json!([]), "{r}");
    let left: Vec<&str> = r["notCaptured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["path"].as_str().unwrap())
        .collect();
    assert!(
        left.contains(&".env") && left.contains(&"data/rows.csv"),
        "{r}"
    );
    assert_eq!(fx.read(".env").as_deref(), Some(&b"TOKEN=2\n"[..]));
    assert_eq!(fx.read("data/rows.csv").as_deref(), Some(&b"1\n"[..]));
    assert_eq!(fx.read("app.py").as_deref(), Some(&b"v2\n"[..]));
    s.ok("undo", json!({}));
    assert_eq!(fx.read("app.py").as_deref(), Some(&b"v3\n"[..]));
    assert_eq!(fx.read(".env").as_deref(), Some(&b"TOKEN=2\n"[..]));
}

// ------------------------------------------------------------ large files

/// A field of `/proc/<pid>/status`, in kB.
fn proc_status_kb(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

#[test]
fn snapshotting_a_large_file_takes_bounded_memory() {
    const MIB: usize = 1 << 20;
    const SIZE: usize = 200 * MIB;
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "maxFileSize": 1u64 << 30 }));
    // Text-like bytes (compressible, as most large files in a project
    // are); each MiB numbered, so no two are alike.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let base: Vec<u8> = (0..MIB)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b" etaoinshrdlu\n"[(x % 14) as usize]
        })
        .collect();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(fx.project.path().join("big.txt")).unwrap();
        let mut chunk = base.clone();
        for i in 0..SIZE / MIB {
            chunk[..8].copy_from_slice(&(i as u64).to_le_bytes());
            f.write_all(&chunk).unwrap();
        }
    }
    let pid = s.pid();
    let before = proc_status_kb(pid, "VmHWM:").unwrap();
    let started = std::time::Instant::now();
    let r = s.ok("snapshot", json!({}));
    let took = started.elapsed();
    let peak = proc_status_kb(pid, "VmHWM:").unwrap();
    eprintln!(
        "snapshot of a {} MiB file: {took:?}, peak RSS {} MiB (after initialize: {} MiB)",
        SIZE / MIB,
        peak / 1024,
        before / 1024
    );
    assert_eq!(r["diff"]["added"], json!(["big.txt"]), "{r}");
    assert_eq!(r["stats"]["bytesHashed"], json!(SIZE), "{r}");
    // The file used to be held whole, then its compressed copy beside it
    // (609 MiB for 300 MB); streamed, the peak is the sidecar's own.
    assert!(
        peak < 150 * 1024,
        "peak RSS {} MiB snapshotting a {} MiB file",
        peak / 1024,
        SIZE / MIB
    );
}

// ------------------------------------------------- paths beyond PATH_MAX

/// Creates the directories `dirs` below `root`, each inside the one before,
/// and `files` (name, or name/child for a file in a new directory) in the
/// last one, without any system call seeing the whole path, which may be
/// longer than PATH_MAX: every step names its parent as
/// `/proc/self/fd/<fd>`.
fn make_deep(root: &Path, dirs: &[String], files: &[(String, &str)]) {
    use std::os::fd::AsRawFd;
    fn via(dir: &std::fs::File, name: &str) -> std::path::PathBuf {
        format!("/proc/self/fd/{}/{name}", dir.as_raw_fd()).into()
    }
    let mut dir = std::fs::File::open(root).unwrap();
    for d in dirs {
        std::fs::create_dir(via(&dir, d)).unwrap();
        dir = std::fs::File::open(via(&dir, d)).unwrap();
    }
    for (name, content) in files {
        match name.split_once('/') {
            Some((sub, child)) => {
                std::fs::create_dir(via(&dir, sub)).unwrap();
                let sub = std::fs::File::open(via(&dir, sub)).unwrap();
                std::fs::write(via(&sub, child), content).unwrap();
            }
            None => std::fs::write(via(&dir, name), content).unwrap(),
        }
    }
}

#[test]
fn paths_longer_than_path_max_are_reported_not_skipped() {
    const PATH_MAX: usize = 4096;
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    // A directory whose absolute path is 3900 bytes long: what is in it
    // can be opened by name if its name is short, not if it is long.
    let root_len = fx.root().as_os_str().len();
    let levels = (3900 - root_len) / 101 - 1;
    let mut dirs: Vec<String> = vec!["d".repeat(100); levels];
    dirs.push("e".repeat(3900 - root_len - levels * 101 - 1));
    let deep = dirs.join("/");
    assert_eq!(root_len + 1 + deep.len(), 3900);
    let long_file = "f".repeat(250);
    let long_dir = "g".repeat(250);
    make_deep(
        &fx.root(),
        &dirs,
        &[
            ("ok.txt".to_string(), "near the limit"),
            (long_file.clone(), "too far"),
            (format!("{long_dir}/inside.txt"), "out of reach"),
        ],
    );
    assert!(root_len + 1 + deep.len() + 1 + long_file.len() > PATH_MAX);
    fx.write("top.txt", "top");
    assert_eq!(
        captured(&mut s),
        set(&["top.txt", &format!("{deep}/ok.txt")])
    );
    let expected = vec![
        (format!("{deep}/{long_file}"), "pathTooLong".to_string()),
        (format!("{deep}/{long_dir}"), "pathTooLong".to_string()),
    ];
    assert_eq!(untracked(&mut s), expected);
    // Still reported when nothing changed since.
    assert_eq!(untracked(&mut s), expected);
}

// ------------------------------------------------------------ staged paths

#[test]
fn staged_paths_are_captured_while_they_exist_and_survive_a_restart() {
    let fx = Fixture::new();
    let (mut s, init) = fx.start(json!({"options": no_ignored()}));
    assert_eq!(init["baseline"]["files"], 0);
    let session = init["sessionFile"].as_str().unwrap().to_string();
    fx.write(".gitignore", "*.out\ngen/\n");
    fx.write("result.out", "r1");
    fx.write("gen/a.txt", "a1");
    fx.write("gen/sub/b.txt", "b1");
    fx.write("other.out", "not staged");
    assert_eq!(captured(&mut s), set(&[".gitignore"]));
    let r = s.ok("stage_files", json!({"paths": ["result.out", "gen"]}));
    assert_eq!(r["staged"], json!(["gen", "result.out"]));
    let r = s.ok("snapshot", json!({}));
    assert_eq!(
        r["diff"]["added"],
        json!([".gitignore", "gen/a.txt", "gen/sub/b.txt", "result.out"]),
        "{r}"
    );
    // While it exists: deleted, then back.
    fx.remove("result.out");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["deleted"], json!(["result.out"]), "{r}");
    fx.write("result.out", "r2");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["result.out"]), "{r}");
    assert!(s.finish().success());

    // Restart on the same session file: still staged.
    let mut s = fx.spawn();
    let init = s.ok(
        "initialize",
        json!({
            "cwd": fx.project.path().to_str().unwrap(),
            "storeDir": fx.store.path().to_str().unwrap(),
            "sessionFile": session,
            "options": no_ignored(),
        }),
    );
    assert_eq!(init["resumed"], true);
    assert!(
        init.get("recovered").is_none() || init["recovered"]["outsideEntryId"].is_null(),
        "{init}"
    );
    fx.write("result.out", "r3");
    fx.write("gen/c.txt", "c");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["gen/c.txt"]), "{r}");
    assert_eq!(r["diff"]["modified"], json!(["result.out"]), "{r}");
    assert_eq!(r["diff"]["deleted"], json!([]), "{r}");
}

#[test]
fn staging_a_path_that_does_not_exist_yet() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    fx.write(".gitignore", "*.out\n");
    s.ok("stage_files", json!({"paths": ["later.out"]}));
    s.ok("snapshot", json!({}));
    fx.write("later.out", "now");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["added"], json!(["later.out"]), "{r}");
}

// --------------------------------------------------- non-UTF-8 file names

/// Issue 10, found 11: names that are not UTF-8 were reported unreadable and never captured.
/// They are captured and restored byte-exact, carried in the protocol with the lossless
/// encoding of docs/protocol.md ("Paths"): each byte of an invalid sequence is U+F700 + byte.
#[test]
fn non_utf8_file_names_are_captured_and_restored_byte_exact() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({}));
    let root = fx.project.path();
    let bad = root.join(OsStr::from_bytes(b"bad\xff.txt"));
    if std::fs::write(&bad, "x").is_err() {
        skip_or_fail("the filesystem refuses non-UTF-8 names");
        return;
    }
    let bad_dir = root.join(OsStr::from_bytes(b"dir\xfe"));
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("inner.txt"), "y").unwrap();
    // A name that really holds a character of the escape range round-trips too.
    std::fs::write(root.join("real\u{f7ff}.txt"), "z").unwrap();
    fx.write("good.txt", "g");
    let r = s.ok("snapshot", json!({}));
    assert_eq!(
        r["diff"]["added"],
        json!([
            "bad\u{f7ff}.txt",
            "dir\u{f7fe}/inner.txt",
            "good.txt",
            "real\u{f7ef}\u{f79f}\u{f7bf}.txt"
        ]),
        "{r}"
    );
    assert_eq!(r["stats"]["untracked"], json!([]), "{r}");
    let turn = r["entryId"].as_str().unwrap().to_string();
    let diff = s.ok("get_file_diff", json!({"filePath": "bad\u{f7ff}.txt"}));
    assert!(diff.is_object(), "{diff}");
    // Gone, then restored byte-exact.
    std::fs::remove_file(&bad).unwrap();
    std::fs::remove_dir_all(&bad_dir).unwrap();
    std::fs::remove_file(root.join("real\u{f7ff}.txt")).unwrap();
    let r = s.ok(
        "restore_files",
        json!({"targetEntryId": turn, "onConflict": "overwrite"}),
    );
    assert_eq!(r["conflicts"], json!([]), "{r}");
    assert_eq!(std::fs::read(&bad).unwrap(), b"x");
    assert_eq!(std::fs::read(bad_dir.join("inner.txt")).unwrap(), b"y");
    assert_eq!(std::fs::read(root.join("real\u{f7ff}.txt")).unwrap(), b"z");
    // The watcher reports such names too: an edit is seen by the next snapshot.
    std::fs::write(&bad, "x2").unwrap();
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["diff"]["modified"], json!(["bad\u{f7ff}.txt"]), "{r}");
}

// ------------------------------------------------ the `paths` fast path

#[test]
fn the_paths_fast_path_applies_the_same_rules() {
    let fx = Fixture::new();
    let mut s = start_empty(&fx, json!({ "maxFileSize": 100, "ignoredMaxSize": 0 }));
    fx.write(".gitignore", "*.log\n");
    s.ok("snapshot", json!({}));
    fx.write("node_modules/pkg/index.js", "x");
    fx.write("app.log", "x");
    fx.write("big.bin", vec![1u8; 500]);
    fx.write(".git/config", "[core]\n");
    fx.write("ok.txt", "ok");
    let r = s.ok(
        "snapshot",
        json!({"paths": ["node_modules/pkg/index.js", "node_modules", "app.log", "big.bin", ".git/config", ".git", "ok.txt"]}),
    );
    assert_eq!(r["diff"]["added"], json!(["ok.txt"]), "{r}");
    assert_eq!(
        r["stats"]["untracked"],
        json!([{"path": "big.bin", "reason": "tooLarge"}]),
        "{r}"
    );
    // A full snapshot agrees.
    let r = s.ok("snapshot", json!({}));
    assert_eq!(r["changed"], false, "{r}");
}

#[test]
fn the_paths_fast_path_sees_staged_and_tracked_files() {
    let fx = Fixture::new();
    let root = fx.project.path();
    let mut s = start_empty(&fx, json!({}));
    let have_git = git_available();
    fx.write(".gitignore", "*.out\nCargo.lock\n");
    fx.write("Cargo.lock", "v1");
    if have_git {
        git(root, &["init", "-q"]);
        git(root, &["add", "-f", "Cargo.lock"]);
    }
    s.ok("stage_files", json!({"paths": ["gen.out"]}));
    s.ok("snapshot", json!({}));
    fx.write("gen.out", "generated");
    fx.write("Cargo.lock", "v2");
    let r = s.ok("snapshot", json!({"paths": ["gen.out", "Cargo.lock"]}));
    assert_eq!(r["diff"]["added"], json!(["gen.out"]), "{r}");
    if have_git {
        assert_eq!(r["diff"]["modified"], json!(["Cargo.lock"]), "{r}");
    }
}
