//! Git state at checkpoints (docs/format.md "Git state"), through the real
//! binary and a real git repository: what each checkpoint records, the words
//! a plan says about what git did since, `--git` moving HEAD and the index
//! back and `rewind undo --git` forward again, each refusal, and a session
//! recorded before git's index was recorded. Without `--git`, `.git` is never
//! written (docs/architecture.md rule 6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{bin, skip_or_fail, Fixture};

/// Git's environment for the test and for what `rewind run` starts: no user
/// or system configuration, a fixed identity.
const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@t"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@t"),
];

fn git_available() -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        skip_or_fail("git is not installed: the git state checks are left out");
    }
    ok
}

macro_rules! require_git {
    () => {
        if !git_available() {
            return;
        }
    };
}

/// Run git in the project; its trimmed stdout.
fn git(fx: &Fixture, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(fx.project.path())
        .envs(GIT_ENV.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `rewind ARGS --cwd PROJECT --store STORE` with no terminal to ask; exit
/// code, stdout, stderr.
fn rewind_env(fx: &Fixture, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    // The location right after the subcommand: what follows `run --` is
    // the command's.
    let out = Command::new(bin())
        .args(&args[..1])
        .arg("--cwd")
        .arg(fx.project.path())
        .arg("--store")
        .arg(fx.store.path())
        .args(&args[1..])
        .current_dir(fx.project.path())
        .env("RUST_LOG", "warn")
        .env("REWIND_SERVER", "0")
        .envs(GIT_ENV.iter().copied())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn rewind(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    rewind_env(fx, args, &[])
}

/// `rewind run -- sh -c SCRIPT`: one turn; its checkpoint's entry id.
fn turn(fx: &Fixture, script: &str) -> String {
    let (code, out, err) = rewind(fx, &["run", "--", "sh", "-c", script]);
    assert_eq!(code, 0, "{out}{err}");
    let (_, log, _) = rewind(fx, &["log"]);
    log.lines()
        .rfind(|l| l.starts_with("* "))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no checkpoint in {log}"))
        .to_string()
}

/// A repository with one commit (`a.txt`), on branch main.
fn repo() -> Fixture {
    let fx = Fixture::new();
    git(&fx, &["init", "-q", "-b", "main"]);
    fx.write("a.txt", "a\n");
    git(&fx, &["add", "a.txt"]);
    git(&fx, &["commit", "-qm", "init"]);
    fx
}

/// Every file under `.git` with its bytes: to show a restore without
/// `--git` writes nothing there.
fn dot_git(fx: &Fixture) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    let base = fx.project.path().join(".git");
    walk(&base, &base, &mut out);
    out
}

/// The session's records, by entry id.
fn records(fx: &Fixture) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(fx.store.path().join("sessions")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if let Some(id) = v["id"].as_str() {
                out.insert(id.to_string(), v);
            }
        }
    }
    out
}

fn staged(fx: &Fixture) -> Vec<String> {
    let out = git(fx, &["diff", "--cached", "--name-only"]);
    out.lines().map(str::to_string).collect()
}

/// The agent stages `b.txt` (checkpoint `then`), then commits twice and
/// stages `d.txt`.
fn agent_committed_and_staged(fx: &Fixture) -> (String, String) {
    let then = turn(fx, "echo b > b.txt; git add b.txt");
    let now = turn(
        fx,
        "git commit -qm wip; echo c > c.txt; git add c.txt; git commit -qm cleanup; \
         echo d > d.txt; git add d.txt",
    );
    (then, now)
}

#[test]
fn each_checkpoint_records_branch_head_dirty_and_the_index() {
    require_git!();
    let fx = repo();
    let staged_one = turn(&fx, "echo b > b.txt; git add b.txt");
    let edited = turn(&fx, "echo more >> a.txt");
    let committed = turn(&fx, "git commit -qam both");
    let head = git(&fx, &["rev-parse", "HEAD"]);
    let r = records(&fx);
    let data = |id: &str| r[id]["data"].clone();
    // Staged, nothing else changed: not dirty.
    assert_eq!(data(&staged_one)["git"]["branch"], "main");
    assert_eq!(
        data(&staged_one)["git"]["dirty"],
        false,
        "{}",
        data(&staged_one)
    );
    // A tracked file changed and not staged: dirty.
    assert_eq!(data(&edited)["git"]["dirty"], true, "{}", data(&edited));
    // Committed: clean again, HEAD moved, the index recorded anew.
    assert_eq!(data(&committed)["git"]["dirty"], false);
    assert_eq!(data(&committed)["git"]["head"], head.as_str());
    let listing = |id: &str| data(id)["gitIndexTreeHash"].as_str().map(str::to_string);
    assert!(listing(&staged_one).is_some());
    // The edit did not touch the index: the same listing, stored once.
    assert_eq!(listing(&edited), listing(&staged_one));
    assert_ne!(listing(&committed), listing(&edited));
    // The listing's objects are the store's like any tree's: verify and gc
    // keep them.
    let (code, out, err) = rewind(&fx, &["verify"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_plan_says_in_words_what_git_did_and_writes_nothing_to_git() {
    require_git!();
    let fx = repo();
    let (then, _) = agent_committed_and_staged(&fx);
    git(&fx, &["switch", "-q", "-c", "feature"]);
    // No terminal and no --yes: the plan, then a refusal that writes nothing.
    let (code, out, err) = rewind(&fx, &["restore", &then]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("pass --yes"), "{err}");
    assert!(
        out.contains(
            "git: 2 commits since this checkpoint: 'wip', 'cleanup'; branch 'main' then, 'feature' now"
        ),
        "{out}"
    );
    assert!(
        out.contains("git: staged then: b.txt; staged now: d.txt"),
        "{out}"
    );
    // The restore itself, without --git: the files go back, .git stays as
    // it is.
    let before = dot_git(&fx);
    let (code, out, err) = rewind(&fx, &["restore", &then, "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(fx.read("c.txt").is_none() && fx.read("d.txt").is_none());
    assert_eq!(
        dot_git(&fx),
        before,
        "a restore without --git wrote to .git"
    );
}

#[test]
fn git_round_trip_head_and_staged_set_back_and_undo_forward() {
    require_git!();
    let fx = repo();
    let then_head = git(&fx, &["rev-parse", "HEAD"]);
    let (then, _) = agent_committed_and_staged(&fx);
    let now_head = git(&fx, &["rev-parse", "HEAD"]);
    assert_ne!(then_head, now_head);
    assert_eq!(staged(&fx), ["d.txt"]);

    let (code, out, err) = rewind(&fx, &["restore", &then, "--git", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("git: HEAD moved to"), "{out}");
    assert_eq!(git(&fx, &["rev-parse", "HEAD"]), then_head);
    assert_eq!(git(&fx, &["branch", "--show-current"]), "main");
    assert_eq!(staged(&fx), ["b.txt"]);
    assert_eq!(git(&fx, &["status", "--porcelain"]), "A  b.txt");

    // Forward again: HEAD and the staged set as the restore found them.
    let (code, out, err) = rewind(&fx, &["undo", "--git", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(git(&fx, &["rev-parse", "HEAD"]), now_head);
    assert_eq!(staged(&fx), ["d.txt"]);
    assert_eq!(git(&fx, &["status", "--porcelain"]), "A  d.txt");

    // Both moves are in the reflog, as git's own.
    let reflog = git(&fx, &["reflog", "-n", "3", "--format=%H %gs"]);
    let lines: Vec<&str> = reflog.lines().collect();
    assert_eq!(
        lines[..2],
        [
            format!("{now_head} rewind undo: updating HEAD"),
            format!("{then_head} rewind restore: updating HEAD"),
        ],
        "{reflog}"
    );
    // The unrevert-point of the restore holds what undo put back.
    let r = records(&fx);
    let restore = r
        .values()
        .find(|v| v["data"]["kind"] == "restore")
        .expect("the restore's unrevert-point");
    assert_eq!(restore["data"]["preRollbackGit"]["head"], now_head.as_str());
    assert_eq!(restore["data"]["git"]["head"], then_head.as_str());
}

/// `rewind undo` without `--git` leaves git alone, and says what moved.
#[test]
fn undo_without_git_leaves_git_where_the_restore_put_it() {
    require_git!();
    let fx = repo();
    let then_head = git(&fx, &["rev-parse", "HEAD"]);
    let (then, _) = agent_committed_and_staged(&fx);
    let (code, out, err) = rewind(&fx, &["restore", &then, "--git", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    let before = dot_git(&fx);
    let (code, out, err) = rewind(&fx, &["undo", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("git: HEAD is 2 commits behind the state the restore replaced"),
        "{out}"
    );
    assert_eq!(git(&fx, &["rev-parse", "HEAD"]), then_head);
    assert_eq!(dot_git(&fx), before);
}

/// Each refusal is one line saying what to do, and writes nothing.
#[test]
fn git_is_refused_in_one_line_when_it_cannot_be_done_whole() {
    require_git!();
    let refused = |fx: &Fixture, then: &str, env: &[(&str, &str)], says: &[&str]| {
        let files = (fx.read("c.txt"), fx.read("d.txt"));
        let before = dot_git(fx);
        let (code, out, err) = rewind_env(fx, &["restore", then, "--git", "--yes"], env);
        assert_ne!(code, 0, "{out}{err}");
        let line = err.trim();
        assert_eq!(line.lines().count(), 1, "{err}");
        for s in says {
            assert!(line.contains(s), "{line:?} does not say {s:?}");
        }
        assert_eq!(dot_git(fx), before);
        assert_eq!((fx.read("c.txt"), fx.read("d.txt")), files);
    };

    // git busy with something unfinished.
    for (name, dir, says) in [
        ("MERGE_HEAD", false, "git merge --abort"),
        ("CHERRY_PICK_HEAD", false, "git cherry-pick --abort"),
        ("rebase-merge", true, "git rebase --abort"),
        ("rebase-apply", true, "git rebase --abort"),
    ] {
        let fx = repo();
        let (then, _) = agent_committed_and_staged(&fx);
        let p = fx.project.path().join(".git").join(name);
        if dir {
            std::fs::create_dir(&p).unwrap();
        } else {
            std::fs::write(&p, git(&fx, &["rev-parse", "HEAD"])).unwrap();
        }
        refused(&fx, &then, &[], &["middle of", says]);
    }

    // Another branch.
    let fx = repo();
    let (then, _) = agent_committed_and_staged(&fx);
    git(&fx, &["switch", "-q", "-c", "other"]);
    refused(
        &fx,
        &then,
        &[],
        &[
            "on 'other'",
            "recorded on 'main'",
            "`git switch main` first",
        ],
    );

    // A staged blob git no longer has.
    let fx = repo();
    let then = turn(&fx, "echo 'only ever staged' > b.txt; git add b.txt");
    turn(&fx, "git rm -q --cached b.txt; rm b.txt");
    git(&fx, &["prune", "--expire=now"]);
    refused(
        &fx,
        &then,
        &[],
        &["staged version of b.txt", "no longer in git's objects"],
    );

    // A path a sparse checkout keeps out of the work tree, which the
    // restore would stage anew: the mark would be lost, and git would call
    // the file deleted.
    let fx = repo();
    let then = turn(&fx, "echo b > b.txt; git add b.txt");
    turn(&fx, "echo b2 > b.txt; git add b.txt");
    git(&fx, &["update-index", "--skip-worktree", "b.txt"]);
    refused(
        &fx,
        &then,
        &[],
        &[
            "b.txt skip-worktree",
            "--no-skip-worktree",
            "restore without --git",
        ],
    );

    // No git on PATH.
    let fx = repo();
    let (then, _) = agent_committed_and_staged(&fx);
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().to_str().unwrap();
    refused(&fx, &then, &[("PATH", path)], &["needs git on PATH"]);
}

/// A session recorded before git's index was recorded: the plan still says
/// what git did (its records have branch and HEAD), `--git` says there is no
/// git state to put back.
#[test]
fn a_checkpoint_recorded_before_git_state_says_so() {
    require_git!();
    let fx = repo();
    let (then, _) = agent_committed_and_staged(&fx);
    // What a build before this one wrote: `git` without `dirty`, no listing.
    for e in std::fs::read_dir(fx.store.path().join("sessions")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            let mut v: Value = serde_json::from_str(line).unwrap();
            if let Some(d) = v.get_mut("data").and_then(Value::as_object_mut) {
                d.remove("gitIndexTreeHash");
                if let Some(g) = d.get_mut("git").and_then(Value::as_object_mut) {
                    g.remove("dirty");
                }
                // And a baseline with no git record at all (taken outside a
                // repository, or by a build before git was recorded).
                if d.get("kind").and_then(Value::as_str) == Some("baseline") {
                    d.remove("git");
                }
            }
            out.push_str(&serde_json::to_string(&v).unwrap());
            out.push('\n');
        }
        std::fs::write(&p, out).unwrap();
    }
    let (code, out, err) = rewind(&fx, &["restore", &then]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("pass --yes"), "{err}");
    assert!(
        out.contains("git: 2 commits since this checkpoint"),
        "{out}"
    );
    assert!(!out.contains("staged then"), "{out}");
    let baseline = records(&fx)
        .into_iter()
        .find(|(_, v)| v["data"]["kind"] == "baseline")
        .map(|(id, _)| id)
        .unwrap();
    let (code, out, err) = rewind(&fx, &["restore", &baseline]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("git: no git state was recorded for this checkpoint"),
        "{out}"
    );
    let before = dot_git(&fx);
    let (code, out, err) = rewind(&fx, &["restore", &then, "--git", "--yes"]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains(&format!("checkpoint {then} has no git state to put back"))
            && err.contains("restore without --git"),
        "{err}"
    );
    assert_eq!(dot_git(&fx), before);
}

#[test]
fn restore_help_explains_git_in_two_lines() {
    let (code, out, err) = crate::common::run_cli(&["restore", "--help"], Path::new("/"));
    assert_eq!(code, 0, "{err}");
    let at = out.find("--git").expect("restore --help names --git");
    // The flag's line, its two lines, then the next option.
    let lines: Vec<&str> = out[at..].lines().take(4).collect();
    assert!(lines[1].contains("HEAD and index"), "{out}");
    assert!(
        lines[2].contains("without it, .git is never written"),
        "{out}"
    );
    assert!(lines[3].trim().is_empty(), "{out}");
}
