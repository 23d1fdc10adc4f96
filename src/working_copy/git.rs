//! Read-only access to the user's git repository: the index (which files
//! git tracks, and each entry's blob) and HEAD (branch and commit), read from
//! git's files without a git binary. Never written here (docs/architecture.md
//! rule 6: only `--git`, through git itself, `git_cmd.rs`). A missing or
//! unreadable repository yields nothing.

use std::path::{Path, PathBuf};

/// Where the repository's git dir is: `.git` as a directory, or the
/// `gitdir:` named by a `.git` file (worktrees, submodules).
pub fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    if meta.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        let p = Path::new(target);
        return Some(if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        });
    }
    None
}

/// Paths of regular files and symlinks in the index at `root` (see
/// [`tracked_of`]), read and parsed afresh. Rewind itself asks the
/// working copy's cache (`git_index.rs`), which parses once per change.
#[cfg(test)]
pub fn tracked_paths(root: &Path) -> Vec<String> {
    git_dir(root)
        .and_then(|dir| read_index_file(&dir).ok())
        .and_then(|bytes| parse_index_entries(&bytes).ok())
        .map(|entries| tracked_of(&entries))
        .unwrap_or_default()
}

/// Paths of regular files and symlinks among `entries` (stage 0 or any
/// stage of a conflicted path, once each), sorted. Submodules (gitlinks)
/// and sparse directory entries are left out: they are not files.
pub fn tracked_of(entries: &[IndexEntry]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(entries.len());
    for e in entries.iter().filter(|e| e.is_file()) {
        // Names that are not UTF-8 in their project-path form
        // (repo_path::encode_name), like the walk reports them.
        let s = crate::repo_path::encode_name(&e.path).into_owned();
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    // Sorted and unique (git keeps them so, but a scoped scan's binary
    // search must not depend on another program's care).
    out.sort_unstable();
    out.dedup();
    out
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// The largest `.git/index` read (docs/architecture.md: git's files are
/// untrusted input). An index is ~80 bytes a file; past this no git state
/// is recorded.
pub const MAX_INDEX_BYTES: u64 = 256 << 20;

/// One entry of git's index, as git wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The path's bytes as git stores them.
    pub path: Vec<u8>,
    /// `0o100644`, `0o100755`, `0o120000` (symlink), `0o160000` (gitlink)
    /// or `0o040000` (a sparse index's directory).
    pub mode: u32,
    /// The blob's object name: 20 bytes (SHA-1) or 32 (SHA-256).
    pub oid: Oid,
    /// 0, or 1-3 for a conflicted path.
    pub stage: u8,
    /// The file's size and mtime (seconds, nanoseconds) when git last
    /// looked at it; the size is truncated to 32 bits, as git stores it.
    pub size: u32,
    pub mtime: (u32, u32),
    /// Skip-worktree or intent-to-add (v3+ extended flags).
    pub special: bool,
    /// Skip-worktree alone: git keeps the entry without a file in the work
    /// tree (a sparse checkout), a mark `git update-index --index-info`
    /// does not write back.
    pub skip_worktree: bool,
}

/// An object name as git stores it, 20 or 32 bytes, held without an
/// allocation (an index has an entry a file).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Oid {
    bytes: [u8; 32],
    len: u8,
}

impl Oid {
    /// `bytes` (at most 32 of them).
    pub fn new(bytes: &[u8]) -> Oid {
        let mut out = [0u8; 32];
        let len = bytes.len().min(32);
        out[..len].copy_from_slice(&bytes[..len]);
        Oid {
            bytes: out,
            len: len as u8,
        }
    }
}

impl std::ops::Deref for Oid {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl std::fmt::Debug for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.iter() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl IndexEntry {
    /// A regular file or a symlink (not a gitlink or a sparse directory).
    pub fn is_file(&self) -> bool {
        let kind = self.mode & 0o170000;
        kind == 0o100000 || kind == 0o120000
    }
}

/// Every entry of git's index format, versions 2 to 4 (v4:
/// prefix-compressed paths), in the index's order (sorted by path, then
/// stage).
pub fn parse_index_entries(b: &[u8]) -> Result<Vec<IndexEntry>, &'static str> {
    if b.get(0..4) != Some(b"DIRC") {
        return Err("bad signature");
    }
    let version = be32(b, 4).ok_or("truncated header")?;
    if !(2..=4).contains(&version) {
        return Err("unsupported index version");
    }
    let count = be32(b, 8).ok_or("truncated header")? as usize;
    // Each entry takes at least 62 bytes: a count beyond that is a lie.
    if count > b.len() / 62 {
        return Err("entries do not parse");
    }
    let mut out: Vec<IndexEntry> = Vec::with_capacity(count);
    let mut prev: Vec<u8> = Vec::new();
    // SHA-1 repositories use 20-byte object names; SHA-256 ones 32. Try
    // SHA-1 first and fall back when the entries do not line up.
    for hash_len in [20usize, 32] {
        out.clear();
        prev.clear();
        let mut pos = 12usize;
        let mut ok = true;
        for _ in 0..count {
            let start = pos;
            let (Some(mode), Some(size), Some(mtime_s), Some(mtime_ns)) = (
                be32(b, start + 24),
                be32(b, start + 36),
                be32(b, start + 8),
                be32(b, start + 12),
            ) else {
                ok = false;
                break;
            };
            let flags_at = start + 40 + hash_len;
            let Some(fl) = b.get(flags_at..flags_at + 2) else {
                ok = false;
                break;
            };
            let oid = Oid::new(&b[start + 40..flags_at]);
            let flags = u16::from_be_bytes([fl[0], fl[1]]);
            let mut p = flags_at + 2;
            let mut special = false;
            let mut skip_worktree = false;
            if version >= 3 && flags & 0x4000 != 0 {
                let Some(ext) = b.get(p..p + 2) else {
                    ok = false;
                    break;
                };
                // 0x4000 skip-worktree, 0x2000 intent-to-add.
                let extended = u16::from_be_bytes([ext[0], ext[1]]);
                special = extended & 0x6000 != 0;
                skip_worktree = extended & 0x4000 != 0;
                p += 2;
            }
            let path: Vec<u8> = if version == 4 {
                // varint: bytes to drop from the previous path
                let mut drop: usize;
                let Some(&first) = b.get(p) else {
                    ok = false;
                    break;
                };
                p += 1;
                drop = (first & 0x7f) as usize;
                let mut byte = first;
                while byte & 0x80 != 0 {
                    let Some(&next) = b.get(p) else {
                        ok = false;
                        break;
                    };
                    p += 1;
                    drop = match drop.checked_add(1).and_then(|d| d.checked_mul(128)) {
                        Some(d) => d | (next & 0x7f) as usize,
                        None => {
                            ok = false;
                            break;
                        }
                    };
                    byte = next;
                }
                if !ok || drop > prev.len() {
                    ok = false;
                    break;
                }
                let Some(nul) = b.get(p..).and_then(|s| s.iter().position(|&c| c == 0)) else {
                    ok = false;
                    break;
                };
                let mut path = prev[..prev.len() - drop].to_vec();
                path.extend_from_slice(&b[p..p + nul]);
                pos = p + nul + 1;
                path
            } else {
                let Some(nul) = b.get(p..).and_then(|s| s.iter().position(|&c| c == 0)) else {
                    ok = false;
                    break;
                };
                let path = b[p..p + nul].to_vec();
                // Entries are padded with 1-8 NULs to a multiple of 8.
                let len = p + nul - start;
                pos = start + (len + 8) / 8 * 8;
                path
            };
            if version == 4 {
                prev.clone_from(&path);
            }
            out.push(IndexEntry {
                path,
                mode,
                oid,
                stage: ((flags >> 12) & 3) as u8,
                size,
                mtime: (mtime_s, mtime_ns),
                special,
                skip_worktree,
            });
        }
        if ok && pos <= b.len() {
            return Ok(out);
        }
    }
    Err("entries do not parse")
}

/// Why there are no index entries to give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoIndex {
    /// No `.git/index`, or it could not be read.
    Unreadable,
    /// Larger than [`MAX_INDEX_BYTES`].
    TooLarge,
    /// Not git's index format: why.
    Unparsable(&'static str),
}

/// The warning for an index larger than rewind reads.
pub const TOO_LARGE: &str =
    "the git index is larger than rewind reads; its git state is not recorded";

/// Read `.git/index` (at most [`MAX_INDEX_BYTES`]), saying nothing: the
/// caller words what a missing or oversized index means for it.
pub fn read_index_file(git_dir: &Path) -> Result<Vec<u8>, NoIndex> {
    use std::io::Read;
    let file = std::fs::File::open(git_dir.join("index")).map_err(|_| NoIndex::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| NoIndex::Unreadable)?;
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return Err(NoIndex::TooLarge);
    }
    Ok(bytes)
}

/// Read `.git/index` (at most [`MAX_INDEX_BYTES`]): `None` when there is
/// none or it cannot be read (warned when it is too large).
pub fn read_index(git_dir: &Path) -> Option<Vec<u8>> {
    match read_index_file(git_dir) {
        Ok(bytes) => Some(bytes),
        Err(NoIndex::TooLarge) => {
            tracing::warn!("{TOO_LARGE}");
            None
        }
        Err(_) => None,
    }
}

/// What git is in the middle of, when it is: a merge, a rebase, a
/// cherry-pick or a revert (the files git keeps while one is unfinished).
pub fn in_progress(git_dir: &Path) -> Option<&'static str> {
    [
        ("MERGE_HEAD", "a merge"),
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
        ("REVERT_HEAD", "a revert"),
    ]
    .into_iter()
    .find(|(name, _)| std::fs::symlink_metadata(git_dir.join(name)).is_ok())
    .map(|(_, what)| what)
}

/// A small file of git's (HEAD, a ref), read to at most `max` bytes.
fn read_small(path: &Path, max: u64) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut s = String::new();
    file.take(max).read_to_string(&mut s).ok()?;
    Some(s)
}

/// Whether `s` is an object name as git spells it (40 or 64 lowercase hex
/// digits): what rewind passes to a git command as a commit or blob, so
/// nothing read from a file or a record can be taken for an option.
pub fn is_object_name(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64)
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// Branch and HEAD commit, read from the git dir. `None` when the project is
/// not a git repository.
pub fn head_info(root: &Path) -> Option<(Option<String>, Option<String>)> {
    let dir = git_dir(root)?;
    let head = read_small(&dir.join("HEAD"), 4096)?;
    let head = head.trim();
    if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        let branch = reference
            .strip_prefix("refs/heads/")
            .unwrap_or(reference)
            .to_string();
        let commit = resolve_ref(&dir, reference);
        Some((Some(branch), commit))
    } else {
        Some((None, Some(head.to_string())))
    }
}

fn resolve_ref(git_dir: &Path, reference: &str) -> Option<String> {
    // A ref names a file below the git dir: nothing that climbs out.
    if reference
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return None;
    }
    // Worktrees keep shared refs in the common dir.
    let common = read_small(&git_dir.join("commondir"), 4096)
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|| git_dir.to_path_buf());
    for base in [git_dir, common.as_path()] {
        if let Some(s) = read_small(&base.join(reference), 4096) {
            return Some(s.trim().to_string());
        }
        if let Some(packed) = read_small(&base.join("packed-refs"), 256 << 20) {
            for line in packed.lines() {
                if let Some((hash, name)) = line.split_once(' ') {
                    if name == reference {
                        return Some(hash.to_string());
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> bool {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    #[test]
    fn reads_index_versions_2_3_4() {
        for version in ["2", "3", "4"] {
            let d = tempfile::tempdir().unwrap();
            if !git(d.path(), &["init", "-q", "-b", "main"]) {
                eprintln!("git not available; skipping");
                return;
            }
            std::fs::create_dir_all(d.path().join("deep/er")).unwrap();
            std::fs::write(d.path().join("a.txt"), "a").unwrap();
            std::fs::write(d.path().join("deep/er/b.txt"), "b").unwrap();
            std::fs::write(d.path().join("deep/er/bb.txt"), "b").unwrap();
            std::fs::write(d.path().join("Cargo.lock"), "lock").unwrap();
            std::os::unix::fs::symlink("a.txt", d.path().join("link")).unwrap();
            assert!(git(d.path(), &["add", "-A"]));
            assert!(git(d.path(), &["update-index", "--index-version", version]));
            let mut paths = tracked_paths(d.path());
            paths.sort();
            assert_eq!(
                paths,
                vec![
                    "Cargo.lock",
                    "a.txt",
                    "deep/er/b.txt",
                    "deep/er/bb.txt",
                    "link"
                ],
                "index version {version}"
            );
            assert!(git(d.path(), &["commit", "-q", "-m", "x"]));
            let (branch, head) = head_info(d.path()).unwrap();
            assert_eq!(branch.as_deref(), Some("main"));
            assert_eq!(head.map(|h| h.len()), Some(40));
        }
    }

    #[test]
    fn index_entries_carry_mode_blob_stage_and_stat() {
        let d = tempfile::tempdir().unwrap();
        if !git(d.path(), &["init", "-q", "-b", "main"]) {
            eprintln!("git not available; skipping");
            return;
        }
        std::fs::write(d.path().join("a.txt"), "hello").unwrap();
        std::fs::write(d.path().join("run.sh"), "x").unwrap();
        std::fs::set_permissions(
            d.path().join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        assert!(git(d.path(), &["add", "-A"]));
        let dir = git_dir(d.path()).unwrap();
        let entries = parse_index_entries(&read_index(&dir).unwrap()).unwrap();
        assert_eq!(entries.len(), 2);
        let a = &entries[0];
        assert_eq!(a.path, b"a.txt");
        assert_eq!(a.mode, 0o100644);
        assert_eq!(a.stage, 0);
        assert_eq!(a.size, 5);
        // `printf hello | git hash-object --stdin`
        assert_eq!(a.oid[..4], [0xb6, 0xfc, 0x4c, 0x62]);
        let m = std::fs::metadata(d.path().join("a.txt")).unwrap();
        assert_eq!(a.mtime.0 as i64, std::os::unix::fs::MetadataExt::mtime(&m));
        assert_eq!(entries[1].mode, 0o100755);
        assert_eq!(in_progress(&dir), None);
        std::fs::write(dir.join("MERGE_HEAD"), "x").unwrap();
        assert_eq!(in_progress(&dir), Some("a merge"));
    }

    #[test]
    fn object_names_are_hex_of_git_lengths_only() {
        assert!(is_object_name(&"a".repeat(40)));
        assert!(is_object_name(&"0".repeat(64)));
        assert!(!is_object_name(&"A".repeat(40)));
        assert!(!is_object_name("--output=/tmp/x"));
        assert!(!is_object_name(&"a".repeat(39)));
    }

    #[test]
    fn garbage_index_is_an_error_not_a_panic() {
        assert!(parse_index_entries(b"").is_err());
        assert!(parse_index_entries(b"DIRC\0\0\0\x02\0\0\0\x05").is_err());
        assert!(parse_index_entries(b"DIRC\0\0\0\x09\0\0\0\0").is_err());
        let mut b = b"DIRC\0\0\0\x04\0\0\0\x01".to_vec();
        b.extend(std::iter::repeat_n(0xffu8, 100));
        assert!(parse_index_entries(&b).is_err());
    }

    #[test]
    fn not_a_repo_is_nothing() {
        let d = tempfile::tempdir().unwrap();
        assert!(tracked_paths(d.path()).is_empty());
        assert!(head_info(d.path()).is_none());
    }
}
