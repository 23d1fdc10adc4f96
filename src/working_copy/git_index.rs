//! The user's git index, read and parsed once per change (issue 40): one
//! cache, keyed by `.git/index`'s identity (size, mtime, inode), holds its
//! entries for both of their readers — a scan's tracked paths (files git
//! tracks are captured even where ignore rules would leave them out), derived
//! from the entries and kept beside them, and the git state a checkpoint
//! records (`git_state.rs`). Read, never written (docs/architecture.md
//! rule 6).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use super::git::{self, IndexEntry, NoIndex};

/// Size, mtime (ns) and inode of a file: git rewrites `.git/index` by
/// rename, so any change to it shows here.
pub(crate) type FileIdentity = (u64, i128, u64);

/// The identity of the file `m` describes.
pub(super) fn identity(m: &std::fs::Metadata) -> FileIdentity {
    (
        m.size(),
        m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
        m.ino(),
    )
}

/// The identity of `git_dir`'s index, when there is one.
pub(super) fn index_identity(git_dir: &Path) -> Option<FileIdentity> {
    std::fs::metadata(git_dir.join("index"))
        .ok()
        .map(|m| identity(&m))
}

/// The index as read for one identity.
struct Parsed {
    identity: FileIdentity,
    /// Its entries, or why there are none. A failure is kept too: an
    /// index that does not parse is not read again until it changes.
    entries: Result<Arc<Vec<IndexEntry>>, NoIndex>,
    /// The tracked paths, derived from `entries` the first time a scan asks.
    tracked: Option<Arc<Vec<String>>>,
}

/// The one parse of `.git/index` a working copy keeps.
#[derive(Default)]
pub(super) struct GitIndex {
    parsed: Option<Parsed>,
    /// How many times `.git/index` was read and parsed: once per change,
    /// whoever asks (shown by the tests).
    #[cfg(test)]
    reads: u64,
}

impl GitIndex {
    /// The index read for `identity` (read and parsed now unless it was for
    /// that identity already). The caller stats the file first and keys by
    /// that stat, so a change after it is seen by the next call.
    fn parsed(&mut self, git_dir: &Path, identity: FileIdentity) -> &mut Parsed {
        if self.parsed.as_ref().is_some_and(|p| p.identity != identity) {
            self.parsed = None;
        }
        self.parsed.get_or_insert_with(|| {
            #[cfg(test)]
            {
                self.reads += 1;
            }
            let entries = git::read_index_file(git_dir).and_then(|bytes| {
                git::parse_index_entries(&bytes)
                    .map(Arc::new)
                    .map_err(NoIndex::Unparsable)
            });
            Parsed {
                identity,
                entries,
                tracked: None,
            }
        })
    }

    /// The entries of the index whose identity is `identity`.
    pub(super) fn entries(
        &mut self,
        git_dir: &Path,
        identity: FileIdentity,
    ) -> Result<Arc<Vec<IndexEntry>>, NoIndex> {
        self.parsed(git_dir, identity).entries.clone()
    }

    /// The paths of regular files and symlinks the index at `root` tracks
    /// ([`git::tracked_of`]: sorted, unique), for the index whose identity
    /// is `identity` (`None`: there is no index, and nothing is tracked).
    /// An index that cannot be parsed tracks nothing, said once per change.
    pub(super) fn tracked(
        &mut self,
        root: &Path,
        identity: Option<FileIdentity>,
    ) -> Arc<Vec<String>> {
        let (Some(identity), Some(dir)) = (identity, git::git_dir(root)) else {
            self.parsed = None;
            return Arc::new(Vec::new());
        };
        let parsed = self.parsed(&dir, identity);
        if let Some(paths) = &parsed.tracked {
            return paths.clone();
        }
        let paths = Arc::new(match &parsed.entries {
            Ok(entries) => git::tracked_of(entries),
            Err(NoIndex::TooLarge) => {
                tracing::warn!("{}", git::TOO_LARGE);
                Vec::new()
            }
            Err(NoIndex::Unparsable(why)) => {
                tracing::warn!(%why, "could not parse the git index; tracked-but-ignored files will follow the ignore rules");
                Vec::new()
            }
            Err(NoIndex::Unreadable) => Vec::new(),
        });
        parsed.tracked = Some(paths.clone());
        paths
    }

    #[cfg(test)]
    pub(super) fn reads(&self) -> u64 {
        self.reads
    }
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
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Both readers of one index share one read and parse; a changed index
    /// is read again, once.
    #[test]
    fn one_parse_serves_the_tracked_paths_and_the_entries() {
        let d = tempfile::tempdir().unwrap();
        if !git(d.path(), &["init", "-q"]) {
            eprintln!("git not available; skipping");
            return;
        }
        std::fs::write(d.path().join("a.txt"), "a").unwrap();
        std::fs::write(d.path().join("b.txt"), "b").unwrap();
        assert!(git(d.path(), &["add", "a.txt"]));
        let dir = git::git_dir(d.path()).unwrap();
        let mut index = GitIndex::default();
        let id = index_identity(&dir);
        assert_eq!(*index.tracked(d.path(), id), ["a.txt"]);
        assert_eq!(index.entries(&dir, id.unwrap()).unwrap().len(), 1);
        assert_eq!(*index.tracked(d.path(), id), ["a.txt"]);
        assert_eq!(index.reads(), 1);

        assert!(git(d.path(), &["add", "b.txt"]));
        let id = index_identity(&dir);
        assert_eq!(index.entries(&dir, id.unwrap()).unwrap().len(), 2);
        assert_eq!(*index.tracked(d.path(), id), ["a.txt", "b.txt"]);
        assert_eq!(index.reads(), 2);

        // Gone: nothing tracked, and nothing kept.
        std::fs::remove_file(dir.join("index")).unwrap();
        assert!(index.tracked(d.path(), index_identity(&dir)).is_empty());
        assert!(index.parsed.is_none());
    }

    /// An index that does not parse is kept as such until it changes: not
    /// read again by either reader, and it tracks nothing.
    #[test]
    fn an_unparsable_index_is_read_once_and_tracks_nothing() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(".git");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("index"), b"DIRC\0\0\0\x09\0\0\0\0").unwrap();
        let mut index = GitIndex::default();
        let id = index_identity(&dir);
        assert!(index.tracked(d.path(), id).is_empty());
        assert_eq!(
            index.entries(&dir, id.unwrap()).err(),
            Some(NoIndex::Unparsable("unsupported index version"))
        );
        assert!(index.tracked(d.path(), id).is_empty());
        assert_eq!(index.reads(), 1);
    }
}
