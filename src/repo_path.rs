//! Project-relative paths, validated once at the edge (docs/architecture.md rule 7).
//!
//! A [`RepoPath`] is `/`-separated, relative, and has no empty, `.` or `..`
//! components, so joining it onto the project root can never name a place
//! outside the root lexically. Whether its *parent directories* on disk stay
//! inside the root (no symlinked parent pointing elsewhere) is checked by
//! [`RepoPath::check_parents_inside`], because that depends on the disk.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// File names are bytes; project paths are strings (in trees, the session file and on the
/// wire). A name that is not valid UTF-8 is carried losslessly: each byte of an invalid
/// sequence (always 0x80–0xFF) becomes the private-use character U+F700 + byte
/// (U+F780–U+F7FF), and a name that really contains one of those characters has each byte
/// of its UTF-8 encoding written the same way, so decoding is unambiguous
/// (docs/protocol.md, "Paths"). Names that are valid UTF-8 without such characters — all
/// but a handful in practice — are unchanged.
const ESCAPE_BASE: u32 = 0xF700;

fn is_escape(c: char) -> bool {
    (0xF780..=0xF7FF).contains(&(c as u32))
}

fn push_escaped(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        // 0x80..=0xFF + 0xF700 is a valid scalar value in the private-use area.
        out.push(char::from_u32(ESCAPE_BASE + b as u32).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
}

/// A file name (or a `/`-joined path) as bytes → its project-path string.
pub fn encode_name(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(is_escape) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_escape(c) {
                let mut buf = [0u8; 4];
                push_escaped(&mut out, c.encode_utf8(&mut buf).as_bytes());
            } else {
                out.push(c);
            }
        }
        push_escaped(&mut out, chunk.invalid());
    }
    Cow::Owned(out)
}

/// A project-path string → the bytes it names on disk (the inverse of [`encode_name`]).
pub fn decode_name(s: &str) -> Cow<'_, OsStr> {
    if !s.chars().any(is_escape) {
        return Cow::Borrowed(OsStr::new(s));
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if is_escape(c) {
            out.push((c as u32 - ESCAPE_BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(std::os::unix::ffi::OsStringExt::from_vec(out))
}

/// `root` joined with the project path `rel`, decoded to the bytes on disk.
/// The directories above a project path, the topmost first: `a`, `a/b`
/// for `a/b/c` (none for a top-level name).
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

pub fn join(root: &Path, rel: &str) -> PathBuf {
    root.join(decode_name(rel))
}

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

    /// Wrap a path produced by our own walk (already relative and clean),
    /// or one a stored tree or a session record names (it came from one).
    pub fn from_walk(rel: String) -> RepoPath {
        RepoPath(rel)
    }

    /// [`RepoPath::from_walk`] for a list.
    pub fn all_recorded(rels: Vec<String>) -> Vec<RepoPath> {
        rels.into_iter().map(RepoPath).collect()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn to_fs_path(&self, root: &Path) -> PathBuf {
        join(root, &self.0)
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
            cur.push(decode_name(comp));
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

/// A path is recorded as its text (a snapshot's `untracked` list).
impl serde::Serialize for RepoPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A path compares equal to its text (so results can be checked against
/// literals).
impl PartialEq<str> for RepoPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RepoPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Debug for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RepoPath({:?})", self.0)
    }
}

#[cfg(test)]
mod names {
    use super::*;

    #[test]
    fn ancestors_are_the_directories_above_topmost_first() {
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), ["a", "a/b"]);
        assert_eq!(ancestors("a").count(), 0);
    }
    use proptest::prelude::*;

    #[test]
    fn utf8_names_are_unchanged_and_others_round_trip() {
        assert!(matches!(
            encode_name(b"src/main.rs"),
            Cow::Borrowed("src/main.rs")
        ));
        let latin1 = b"caf\xe9.txt";
        let enc = encode_name(latin1);
        assert_eq!(enc, "caf\u{f7e9}.txt");
        assert_eq!(decode_name(&enc).as_bytes(), latin1);
        // A name that really holds an escape character is escaped byte by byte.
        let real = "x\u{f7e9}".as_bytes();
        let enc = encode_name(real);
        assert_eq!(enc.chars().count(), 4);
        assert_eq!(decode_name(&enc).as_bytes(), real);
    }

    proptest! {
        #[test]
        fn any_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let enc = encode_name(&bytes).into_owned();
            let back = decode_name(&enc);
            prop_assert_eq!(back.as_bytes(), &bytes[..]);
            // Distinct names stay distinct: encoding is injective because decoding inverts it.
        }
    }
}

/// Turn a path found by the walk into the project-relative `/` form (names
/// that are not UTF-8 encoded by [`encode_name`]); `None` when it is not
/// below `root` or not clean.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
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
                return Some(encode_name(rest).into_owned());
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
                out.push_str(&encode_name(c.as_bytes()));
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
            relative(root, Path::new("/p/root/a/b.txt")).as_deref(),
            Some("a/b.txt")
        );
        assert_eq!(
            relative(Path::new("/p/root/"), Path::new("/p/root/a")).as_deref(),
            Some("a")
        );
        assert_eq!(relative(root, Path::new("/p/rootx/a")), None);
        assert_eq!(relative(root, Path::new("/p/root")).as_deref(), Some(""));
        assert_eq!(relative(root, Path::new("/p/root/a/../b")), None);
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"/p/root/\xff");
        let _ = relative(root, Path::new(bad));
        // Not UTF-8: encoded losslessly (encode_name).
        let bad =
            std::ffi::OsStr::from_bytes(&[b'/', b'p', b'/', b'r', b'o', b'o', b't', b'/', 0xff]);
        assert_eq!(relative(root, Path::new(bad)).as_deref(), Some("\u{f7ff}"));
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
