//! The working copy: which files of the project a snapshot captures and what
//! they hash to (walk, ignore rules, stat cache), and writing a tree's files
//! back. [`WorkingCopy`] holds one session's view of the project directory.

//! Its submodules are private: the engine reaches the disk only through
//! [`WorkingCopy`]'s methods and the few types re-exported here.

mod beneath;
mod capture;
mod checkout;
mod copy;
mod git;
mod git_cmd;
mod git_index;
mod git_state;
mod ignored;
mod options;
mod saved_scan;
mod scan;
mod scan_state;
mod scan_tree;
mod stat_cache;
mod stat_changes;
mod watch;

/// Whether a directory entry named `name` is never project content: git's
/// directory (in any case) or a restore's temp file (a crash can leave one).
/// The one test the walk, the stat check, the ignored-file count and the
/// watcher share (docs/architecture.md rule 7).
pub(crate) fn never_content(name: &str) -> bool {
    crate::store::is_git_dir(name) || name.starts_with(checkout::TEMP_PREFIX)
}

pub use capture::{ScanOutput, ScanRequest, Uncaptured};
pub use checkout::CheckoutError;
pub use copy::{CachePaths, CheckoutOutcome, CheckoutPlan, WorkingCopy};
pub use git::is_object_name;
pub use git_cmd::{Commits, GitEntry, GitError, GitRepo, MAX_SUBJECTS};
pub use git_state::{index_changes, read_listing, GitState, IndexNow, ListedEntry, ListingError};
pub use options::{ScanOptions, DEFAULT_EXCLUDES, REWINDIGNORE};
pub use scan::{scan, DirListings, ScanError};
pub use scan_state::{FullScan, ScanCounts};
pub use scan_tree::{ScanContext, WorkingCopyError, WorkingState};
pub use stat_cache::{CachedFile, FileStat, StatCache};
