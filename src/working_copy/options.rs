//! What a scan captures, with every default documented (ripgrep's
//! builder/built style: the defaults here are the ones docs/protocol.md `initialize` names).

/// Dependency, build and cache directories no one wants checkpointed.
/// Files the user's git index tracks below them are still captured.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "node_modules/",
    "target/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "dist/",
    "build/",
    ".next/",
    ".nuxt/",
    ".svelte-kit/",
    ".turbo/",
    ".parcel-cache/",
    ".cache/",
    ".gradle/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".terraform/",
    "coverage/",
    "*.pyc",
];

/// The per-project ignore file read in every directory, like `.gitignore`.
pub const REWINDIGNORE: &str = ".rewindignore";

/// Whether `path` names an ignore file, which changes what every scan
/// captures below its directory (docs/architecture.md rule 12).
pub(super) fn is_rules_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == ".gitignore" || name == REWINDIGNORE
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// Files larger than this (bytes) that the parent checkpoint does not
    /// already hold are reported untracked with reason `tooLarge`.
    /// Default 16 MiB.
    pub max_file_size: u64,
    /// Extra gitignore-style globs; they exclude even files git tracks.
    /// Default none.
    pub extra_ignores: Vec<String>,
    /// Honour `.gitignore` files (with or without a `.git` directory) and
    /// `.git/info/exclude`; never the user's global excludes. Default true.
    pub use_gitignore: bool,
    /// Apply [`DEFAULT_EXCLUDES`]. Default true.
    pub default_excludes: bool,
    /// Files git ignores are captured anyway up to this size (bytes), so
    /// an agent deleting `.env` can be undone; 0 captures none. Ignored
    /// directories are never entered. Default 1 MiB.
    pub ignored_max_size: u64,
    /// At most this many ignored files are captured per directory; the
    /// rest are reported `ignoredOverCap`. Default 32.
    pub ignored_per_directory: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            max_file_size: 16 * 1024 * 1024,
            extra_ignores: Vec::new(),
            use_gitignore: true,
            default_excludes: true,
            ignored_max_size: 1024 * 1024,
            ignored_per_directory: 32,
        }
    }
}
