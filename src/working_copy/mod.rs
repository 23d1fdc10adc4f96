//! The working copy: which files of the project a snapshot captures and what
//! they hash to (walk, ignore rules, stat cache), and writing a tree's files
//! back. [`WorkingCopy`] holds one session's view of the project directory.

pub mod beneath;
pub mod checkout;
mod copy;
pub mod git;
mod ignored;
pub mod options;
pub mod scan;
mod scan_tree;
pub mod stat_cache;
pub mod watch;

pub use copy::{CheckoutOutcome, CheckoutPlan, WorkingCopy};
pub use options::{ScanOptions, DEFAULT_EXCLUDES, REWINDIGNORE};
pub use scan::{scan, DirListings, ScanError, ScanOutput, ScanRequest, Untracked, UntrackedReason};
pub use scan_tree::{ScanContext, WorkingCopyError, WorkingState};
pub use stat_cache::{CachedFile, FileStat, StatCache};
