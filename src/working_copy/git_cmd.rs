//! The user's own `git`, run in the project: what the plan of a restore says
//! git did since a checkpoint (commit subjects, counts, the staged sets), and
//! the one thing rewind ever writes to a repository — `--git`'s move of HEAD
//! and the index (docs/architecture.md rule 6), through `git reset --soft`
//! and `git update-index`, so git's own locks and reflog apply.
//!
//! Git's output is untrusted input: read to a bound, parsed without panics,
//! and object names given to git are checked to be object names first
//! ([`super::git::is_object_name`]), so nothing read from a file or a record
//! reaches git as an option.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::git::is_object_name;

/// The most of a git command's output read (an `ls-tree -r` of a 100k-file
/// repository is ~10 MB).
const MAX_OUTPUT: u64 = 256 << 20;

/// How many commit subjects a plan names.
pub const MAX_SUBJECTS: usize = 5;

/// A git repository's work tree, reached through the `git` on PATH.
#[derive(Clone, Debug)]
pub struct GitRepo {
    root: PathBuf,
    /// The git dir rewind reads (`git.rs`), named to git so it never looks
    /// for another repository above a broken one.
    git_dir: PathBuf,
}

/// A failed git command, as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GitError(pub String);

/// Commits on one side of a range: how many, and the subjects of the
/// first [`MAX_SUBJECTS`] (oldest first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commits {
    pub count: u64,
    pub subjects: Vec<String>,
}

/// One path of a tree or an index as git lists it: mode, object name
/// (hex), stage (0 in a tree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitEntry {
    pub mode: u32,
    pub oid: String,
    pub stage: u8,
}

impl GitRepo {
    /// The repository whose work tree is `root` and git dir `git_dir`.
    pub fn new(root: &Path, git_dir: &Path) -> GitRepo {
        GitRepo {
            root: root.to_path_buf(),
            git_dir: git_dir.to_path_buf(),
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new("git");
        c.current_dir(&self.root)
            // The repository rewind read, and its own index (the one
            // recorded and set back), whatever the environment says.
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.root)
            .env_remove("GIT_INDEX_FILE")
            // Never a prompt or a pager; messages in one language.
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Run git with `args` (and `input` on stdin): its stdout, or its
    /// first line of stderr as the error.
    fn run(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
        env: &[(&str, &str)],
    ) -> Result<Vec<u8>, GitError> {
        let mut cmd = self.command();
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let what = format!("git {}", args.first().copied().unwrap_or(""));
        let mut child = cmd
            .spawn()
            .map_err(|e| GitError(format!("could not run git: {e}")))?;
        // Feed stdin from a thread while stdout is read, so neither pipe
        // fills up and stalls the other side.
        let feeder = match (input, child.stdin.take()) {
            (Some(bytes), Some(mut stdin)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || stdin.write_all(&bytes)))
            }
            _ => None,
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        let stderr = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(s) = stderr {
                let _ = s.take(64 << 10).read_to_end(&mut buf);
            }
            buf
        });
        if let Some(stdout) = child.stdout.take() {
            let _ = stdout.take(MAX_OUTPUT).read_to_end(&mut out);
        }
        if let Ok(buf) = err_reader.join() {
            err = buf;
        }
        let status = child.wait().map_err(|e| GitError(format!("{what}: {e}")))?;
        if let Some(f) = feeder {
            let _ = f.join();
        }
        if status.success() {
            Ok(out)
        } else {
            let text = String::from_utf8_lossy(&err);
            let line = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("failed");
            Err(GitError(format!("{what}: {line}")))
        }
    }

    /// Whether a `git` can be run at all.
    pub fn available(&self) -> bool {
        self.command()
            .arg("--version")
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    /// Whether `oid` names a commit git has.
    pub fn has_commit(&self, oid: &str) -> bool {
        is_object_name(oid)
            && self
                .run(&["cat-file", "-e", &format!("{oid}^{{commit}}")], None, &[])
                .is_ok()
    }

    /// Of `oids`, those git does not have (one `cat-file --batch-check`).
    pub fn missing_objects<'a>(&self, oids: &[&'a str]) -> Result<Vec<&'a str>, GitError> {
        if oids.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(bad) = oids.iter().find(|o| !is_object_name(o)) {
            return Ok(vec![bad]);
        }
        let mut input = Vec::with_capacity(oids.len() * 41);
        for o in oids {
            input.extend_from_slice(o.as_bytes());
            input.push(b'\n');
        }
        let out = self.run(&["cat-file", "--batch-check"], Some(&input), &[])?;
        let text = String::from_utf8_lossy(&out);
        Ok(oids
            .iter()
            .copied()
            .filter(|o| text.lines().any(|l| l.strip_suffix(" missing") == Some(o)))
            .collect())
    }

    /// The commits reachable from `to` but not from `from` (`from..to`).
    pub fn commits(&self, from: &str, to: &str) -> Result<Commits, GitError> {
        if !is_object_name(from) || !is_object_name(to) {
            return Err(GitError("not an object name".into()));
        }
        let range = format!("{from}..{to}");
        let count = self.run(&["rev-list", "--count", &range], None, &[])?;
        let count: u64 = String::from_utf8_lossy(&count)
            .trim()
            .parse()
            .map_err(|_| GitError("git rev-list: not a count".into()))?;
        let mut subjects = Vec::new();
        if count > 0 {
            // Oldest first: `--reverse` applies after `-n`, so the newest
            // subjects would be taken; ask for the oldest ones by skipping.
            let skip = count.saturating_sub(MAX_SUBJECTS as u64).to_string();
            let out = self.run(
                &["log", "--format=%s", "--reverse", "--skip", &skip, &range],
                None,
                &[],
            );
            // --skip drops the newest: the oldest MAX_SUBJECTS remain,
            // listed oldest first.
            if let Ok(out) = out {
                subjects = String::from_utf8_lossy(&out)
                    .lines()
                    .take(MAX_SUBJECTS)
                    .map(str::to_string)
                    .collect();
            }
        }
        Ok(Commits { count, subjects })
    }

    /// Every path of commit `oid`'s tree (`ls-tree -r`), by path bytes.
    pub fn tree_entries(
        &self,
        oid: &str,
    ) -> Result<std::collections::BTreeMap<Vec<u8>, GitEntry>, GitError> {
        if !is_object_name(oid) {
            return Err(GitError("not an object name".into()));
        }
        let out = self.run(&["ls-tree", "-r", "-z", "--full-tree", oid], None, &[])?;
        let mut map = std::collections::BTreeMap::new();
        for rec in out.split(|&c| c == 0).filter(|r| !r.is_empty()) {
            // "<mode> SP <type> SP <oid> TAB <path>"
            let Some(tab) = rec.iter().position(|&c| c == b'\t') else {
                continue;
            };
            let head = String::from_utf8_lossy(&rec[..tab]);
            let mut parts = head.split(' ');
            let (Some(mode), Some(_kind), Some(oid)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(mode) = u32::from_str_radix(mode, 8) else {
                continue;
            };
            map.insert(
                rec[tab + 1..].to_vec(),
                GitEntry {
                    mode,
                    oid: oid.to_string(),
                    stage: 0,
                },
            );
        }
        Ok(map)
    }

    /// `git reset --soft <oid>`: the branch (or a detached HEAD) moves to
    /// `oid`, with a reflog entry saying `action`; the index and the work
    /// tree are left as they are.
    pub fn reset_soft(&self, oid: &str, action: &str) -> Result<(), GitError> {
        if !is_object_name(oid) {
            return Err(GitError(format!("{oid:?} is not a commit name")));
        }
        self.run(
            &["reset", "--soft", "-q", oid],
            None,
            &[("GIT_REFLOG_ACTION", action)],
        )
        .map(drop)
    }

    /// `git update-index -z --index-info`: each record
    /// `<mode> SP <oid> SP <stage> TAB <path> NUL` sets that entry (mode 0
    /// removes the path). Git takes `index.lock` for it.
    pub fn update_index(&self, records: &[u8]) -> Result<(), GitError> {
        if records.is_empty() {
            return Ok(());
        }
        self.run(&["update-index", "-z", "--index-info"], Some(records), &[])
            .map(drop)
    }
}
