//! Project-relative paths, validated once at the edge (docs/architecture.md rule 7).
//!
//! A [`RepoPath`] is `/`-separated, relative, and has no empty, `.` or `..`
//! components, so joining it onto the project root can never name a place
//! outside the root lexically. Whether its *parent directories* on disk stay
//! inside the root (no symlinked parent pointing elsewhere) is checked by
//! [`RepoPath::check_parents_inside`], because that depends on the disk.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Why a path given by a client was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid path {path:?}: {reason}")]
pub struct PathError {
    pub path: String,
    pub reason: &'static str,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(String);

impl RepoPath {
    /// Parse a client-supplied project path.
    pub fn parse(raw: &str) -> Result<RepoPath, PathError> {
        let err = |reason| PathError {
            path: raw.to_string(),
            reason,
        };
        // Tolerate a trailing slash for directories ("src/"), nothing else.
        let trimmed = raw.strip_suffix('/').unwrap_or(raw);
        if trimmed.is_empty() {
            return Err(err("empty path"));
        }
        if trimmed.starts_with('/') {
            return Err(err(
                "absolute paths are not allowed; use a path relative to the project root",
            ));
        }
        if trimmed.contains('\0') {
            return Err(err("contains a NUL byte"));
        }
        for comp in trimmed.split('/') {
            match comp {
                "" => return Err(err("empty path component")),
                "." => return Err(err("'.' components are not allowed")),
                ".." => return Err(err("'..' components are not allowed")),
                _ => {}
            }
        }
        Ok(RepoPath(trimmed.to_string()))
    }

    /// Wrap a path produced by our own walk (already relative and clean).
    pub fn from_walk(rel: String) -> RepoPath {
        RepoPath(rel)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn to_fs_path(&self, root: &Path) -> PathBuf {
        root.join(&self.0)
    }

    /// Is `self` equal to `other` or a directory above it?
    pub fn is_prefix_of(&self, other: &str) -> bool {
        other == self.0
            || (other.len() > self.0.len()
                && other.starts_with(&self.0)
                && other.as_bytes()[self.0.len()] == b'/')
    }

    /// Reject the path when one of its parent components, as it exists on
    /// disk, resolves outside `root` (a symlinked parent). The last component
    /// may itself be a symlink: its target is data, never followed.
    pub fn check_parents_inside(&self, root: &Path) -> Result<(), PathError> {
        let Some((parent, _)) = self.0.rsplit_once('/') else {
            return Ok(());
        };
        let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        // Walk down the parents; stop at the first one that does not exist
        // (nothing below it can point anywhere).
        let mut cur = root.to_path_buf();
        for comp in parent.split('/') {
            cur.push(comp);
            match std::fs::symlink_metadata(&cur) {
                Ok(_) => {}
                Err(_) => return Ok(()),
            }
            match cur.canonicalize() {
                Ok(resolved) if resolved.starts_with(&canon_root) => {}
                Ok(_) => {
                    return Err(PathError {
                        path: self.0.clone(),
                        reason: "a parent directory resolves outside the project root",
                    })
                }
                // A dangling symlinked parent: nothing can be read through
                // it, and writing through it is refused.
                Err(_) => {
                    return Err(PathError {
                        path: self.0.clone(),
                        reason: "a parent directory is a dangling symlink",
                    })
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RepoPath({:?})", self.0)
    }
}

/// Turn a path found by the walk into the project-relative `/` form; `None`
/// when it is not valid UTF-8 (reported as unreadable by the caller).
pub fn relative_utf8(root: &Path, path: &Path) -> Option<String> {
    // Fast path for what the walk yields (`root` joined with clean names):
    // a byte prefix and a UTF-8 check, no component iteration. Called for
    // every entry of every scan.
    {
        use std::os::unix::ffi::OsStrExt;
        let (r, p) = (root.as_os_str().as_bytes(), path.as_os_str().as_bytes());
        let r = r.strip_suffix(b"/").unwrap_or(r);
        if let Some(rest) = p.strip_prefix(r).and_then(|rest| rest.strip_prefix(b"/")) {
            let clean = !rest.is_empty()
                && !rest.ends_with(b"/")
                && rest
                    .split(|&b| b == b'/')
                    .all(|c| !c.is_empty() && c != b"." && c != b"..");
            if clean {
                return std::str::from_utf8(rest).ok().map(str::to_string);
            }
        }
    }
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for comp in rel.components() {
        match comp {
            Component::Normal(c) => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(c.to_str()?);
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_relative_paths() {
        assert_eq!(RepoPath::parse("a/b.txt").unwrap().as_str(), "a/b.txt");
        assert_eq!(RepoPath::parse("src/").unwrap().as_str(), "src");
        assert_eq!(RepoPath::parse(".env").unwrap().as_str(), ".env");
        assert_eq!(RepoPath::parse("a/..b").unwrap().as_str(), "a/..b");
    }

    #[test]
    fn rejects_escapes() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            "./a",
            "a/./b",
            "a\0b",
            "/",
        ] {
            assert!(RepoPath::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn relative_paths_of_walked_entries() {
        let root = Path::new("/p/root");
        assert_eq!(
            relative_utf8(root, Path::new("/p/root/a/b.txt")).as_deref(),
            Some("a/b.txt")
        );
        assert_eq!(
            relative_utf8(Path::new("/p/root/"), Path::new("/p/root/a")).as_deref(),
            Some("a")
        );
        assert_eq!(relative_utf8(root, Path::new("/p/rootx/a")), None);
        assert_eq!(
            relative_utf8(root, Path::new("/p/root")).as_deref(),
            Some("")
        );
        assert_eq!(relative_utf8(root, Path::new("/p/root/a/../b")), None);
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"/p/root/\xff");
        let _ = relative_utf8(root, Path::new(bad));
        let bad =
            std::ffi::OsStr::from_bytes(&[b'/', b'p', b'/', b'r', b'o', b'o', b't', b'/', 0xff]);
        assert_eq!(relative_utf8(root, Path::new(bad)), None);
    }

    #[test]
    fn prefix_is_component_wise() {
        let p = RepoPath::parse("src").unwrap();
        assert!(p.is_prefix_of("src"));
        assert!(p.is_prefix_of("src/a.rs"));
        assert!(!p.is_prefix_of("srcx/a.rs"));
        assert!(!p.is_prefix_of("sr"));
    }

    #[test]
    fn symlinked_parent_outside_is_rejected() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("inside")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink("inside", root.path().join("alias")).unwrap();
        let ok = RepoPath::parse("inside/x").unwrap();
        assert!(ok.check_parents_inside(root.path()).is_ok());
        let alias = RepoPath::parse("alias/x").unwrap();
        assert!(alias.check_parents_inside(root.path()).is_ok());
        let bad = RepoPath::parse("out/x").unwrap();
        assert!(bad.check_parents_inside(root.path()).is_err());
        // Naming the symlink itself is fine: it is data.
        let link = RepoPath::parse("out").unwrap();
        assert!(link.check_parents_inside(root.path()).is_ok());
        // Non-existent parents cannot escape.
        let fresh = RepoPath::parse("new/dir/file").unwrap();
        assert!(fresh.check_parents_inside(root.path()).is_ok());
    }
}
