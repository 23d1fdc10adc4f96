//! Requests and results of the two readings of a diff that are not on the
//! wire: a git patch of a range (what `rewind diff` prints and the page
//! copies, engine/query/patch.rs) and a notebook's diff by cell (`rewind
//! diff --cells` and the page, engine/query/notebook.rs).

use super::{FileStatus, Point};
use crate::repo_path::RepoPath;

// ---------------------------------------------------------------- git patch

#[derive(Debug, Clone, Default)]
pub struct PatchParams {
    /// Default: the baseline.
    pub from: Option<Point>,
    /// Default: the leaf.
    pub to: Option<Point>,
    /// Only these files; default: every file that differs.
    pub files: Option<Vec<RepoPath>>,
    /// Default 3, as git.
    pub context_lines: Option<usize>,
}

/// One file's part of a patch, and why it may hold no hunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchContent {
    /// Text: the hunks say it all (none for an empty file or a mode change).
    Text,
    /// Binary: git's "Binary files … differ" line, which `git apply` refuses
    /// (loudly) rather than leave the file wrong.
    Binary,
    /// Over the size a diff is shown for: not in the patch.
    TooLarge,
    /// A side was present but not captured: its content is unknown, so it is
    /// not in the patch.
    NotCaptured,
    /// Only permission bits git does not record changed (0600 to 0644, say):
    /// nothing a git patch can hold, so not in it.
    PermissionsOnly,
}

#[derive(Debug, Clone)]
pub struct FilePatch {
    pub path: RepoPath,
    pub status: FileStatus,
    pub content: PatchContent,
    /// `diff --git …`, the mode lines and `---`/`+++` (or git's binary
    /// line): the patch of this file before its first hunk. Empty when the
    /// file is not in the patch (too large, not captured).
    pub header: String,
    pub hunks: Vec<PatchHunk>,
    /// Some stretch is shown removed and re-added whole (still a correct patch).
    pub approximate: bool,
}

/// One hunk: its text (the `@@` line and its lines) and the lines it leaves
/// (context and added lines as they read at the newer end, without signs).
#[derive(Debug, Clone)]
pub struct PatchHunk {
    pub text: String,
    pub new_text: String,
}

impl FilePatch {
    /// The file's patch: `git apply`-able on its own.
    pub fn text(&self) -> String {
        let mut s = self.header.clone();
        for h in &self.hunks {
            s.push_str(&h.text);
        }
        s
    }

    /// One hunk as a patch of its own (the file's header and that hunk).
    pub fn hunk_patch(&self, index: usize) -> Option<String> {
        self.hunks
            .get(index)
            .map(|h| format!("{}{}", self.header, h.text))
    }
}

#[derive(Debug, Clone)]
pub struct PatchResult {
    pub files: Vec<FilePatch>,
}

impl PatchResult {
    /// The whole comparison as one patch.
    pub fn text(&self) -> String {
        self.files.iter().map(FilePatch::text).collect()
    }
}

// ------------------------------------------------------------- notebook diff

/// What happened to a notebook cell between the two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellStatus {
    Added,
    Deleted,
    /// Its source changed (its outputs may have too).
    Modified,
    /// Its source is the same; `outputs_changed` says whether its outputs are.
    Unchanged,
}

impl CellStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Added => "added",
            CellStatus::Deleted => "deleted",
            CellStatus::Modified => "modified",
            CellStatus::Unchanged => "unchanged",
        }
    }
}

#[derive(Debug, Clone)]
pub struct CellDiff {
    pub status: CellStatus,
    /// `code`, `markdown` or `raw` (as the notebook says, at the newer end
    /// when the cell is there).
    pub cell_type: String,
    /// 1-based positions at each end.
    pub old_index: Option<usize>,
    pub new_index: Option<usize>,
    /// The source's hunks (`@@` lines and their lines), empty when the
    /// source did not change.
    pub source_diff: String,
    /// The outputs at the newer end (the older one for a deleted cell) in a
    /// few words: "2 outputs: stream, image/png"; `None` for a cell without
    /// outputs at either end.
    pub outputs: Option<String>,
    pub outputs_changed: bool,
}

#[derive(Debug, Clone)]
pub struct NotebookDiff {
    pub path: RepoPath,
    /// The notebook's language (`metadata.kernelspec.language` or
    /// `metadata.language_info.name`), for highlighting code cells.
    pub language: Option<String>,
    /// Every cell of both ends, in the newer end's order.
    pub cells: Vec<CellDiff>,
    /// Some source diff ran out of its budget (see `get_file_diff`).
    pub approximate: bool,
}
