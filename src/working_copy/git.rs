//! Read-only access to the user's git repository: the index (which files
//! git tracks) and HEAD (branch and commit). Never written (docs/architecture.md rule 6);
//! no git binary needed. A missing or unreadable repository yields nothing.

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

/// Paths of regular files and symlinks in the index (stage 0 or any stage of
/// a conflicted path, once each). Submodules (gitlinks) and sparse
/// directory entries are left out: they are not files.
pub fn tracked_paths(root: &Path) -> Vec<String> {
    let Some(dir) = git_dir(root) else {
        return Vec::new();
    };
    match std::fs::read(dir.join("index")) {
        // Sorted and unique (git keeps them so, but a scoped scan's binary
        // search must not depend on another program's care).
        Ok(bytes) => parse_index(&bytes).map(|mut paths| {
            paths.sort_unstable();
            paths.dedup();
            paths
        }).unwrap_or_else(|why| {
            tracing::warn!(%why, "could not parse the git index; tracked-but-ignored files will follow the ignore rules");
            Vec::new()
        }),
        Err(_) => Vec::new(),
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Parse git's index format, versions 2 to 4 (v4: prefix-compressed paths).
pub fn parse_index(b: &[u8]) -> Result<Vec<String>, &'static str> {
    if b.get(0..4) != Some(b"DIRC") {
        return Err("bad signature");
    }
    let version = be32(b, 4).ok_or("truncated header")?;
    if !(2..=4).contains(&version) {
        return Err("unsupported index version");
    }
    let count = be32(b, 8).ok_or("truncated header")? as usize;
    let mut out: Vec<String> = Vec::with_capacity(count.min(1 << 20));
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
            let Some(mode) = be32(b, start + 24) else {
                ok = false;
                break;
            };
            let flags_at = start + 40 + hash_len;
            let Some(fl) = b.get(flags_at..flags_at + 2) else {
                ok = false;
                break;
            };
            let flags = u16::from_be_bytes([fl[0], fl[1]]);
            let mut p = flags_at + 2;
            if version >= 3 && flags & 0x4000 != 0 {
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
                    drop = ((drop + 1) << 7) | (next & 0x7f) as usize;
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
            prev = path.clone();
            let kind = mode & 0o170000;
            // 0o100000 regular file, 0o120000 symlink; skip gitlinks (0o160000)
            // and sparse-index directories (0o040000).
            if kind == 0o100000 || kind == 0o120000 {
                // Names that are not UTF-8 in their project-path form
                // (repo_path::encode_name), like the walk reports them.
                let s = crate::repo_path::encode_name(&path).into_owned();
                if out.last() != Some(&s) {
                    out.push(s);
                }
            }
        }
        if ok && pos <= b.len() {
            return Ok(out);
        }
    }
    Err("entries do not parse")
}

/// Branch and HEAD commit, read from the git dir. `None` when the project is
/// not a git repository.
pub fn head_info(root: &Path) -> Option<(Option<String>, Option<String>)> {
    let dir = git_dir(root)?;
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
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
    // Worktrees keep shared refs in the common dir.
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|| git_dir.to_path_buf());
    for base in [git_dir, common.as_path()] {
        if let Ok(s) = std::fs::read_to_string(base.join(reference)) {
            return Some(s.trim().to_string());
        }
        if let Ok(packed) = std::fs::read_to_string(base.join("packed-refs")) {
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
    fn garbage_index_is_an_error_not_a_panic() {
        assert!(parse_index(b"").is_err());
        assert!(parse_index(b"DIRC\0\0\0\x02\0\0\0\x05").is_err());
        assert!(parse_index(b"DIRC\0\0\0\x09\0\0\0\0").is_err());
        let mut b = b"DIRC\0\0\0\x04\0\0\0\x01".to_vec();
        b.extend(std::iter::repeat_n(0xffu8, 100));
        assert!(parse_index(&b).is_err());
    }

    #[test]
    fn not_a_repo_is_nothing() {
        let d = tempfile::tempdir().unwrap();
        assert!(tracked_paths(d.path()).is_empty());
        assert!(head_info(d.path()).is_none());
    }
}
