//! The working copy: which files of the project a snapshot captures and what
//! they hash to (walk, ignore rules, stat cache).

pub mod beneath;
pub mod checkout;
pub mod git;
mod ignored;
pub mod options;
pub mod scan;
pub mod stat_cache;
#[cfg(target_os = "linux")]
pub mod watch;

pub use options::{ScanOptions, DEFAULT_EXCLUDES, REWINDIGNORE};
pub use scan::{scan, DirListings, ScanError, ScanOutput, ScanRequest, Untracked, UntrackedReason};
pub use stat_cache::{CachedFile, FileStat, StatCache};
