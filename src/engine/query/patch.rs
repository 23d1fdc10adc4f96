//! A range as a git patch: `diff --git` headers, `new file mode` /
//! `deleted file mode`, `/dev/null` for a side that is not there, git's mode
//! lines, paths quoted as git quotes them, and the hunks of the bounded line
//! diff (`line_diff.rs`, also what `get_file_diff` shows). What `rewind diff`
//! prints and the page copies, so that `git apply` takes it: a file added,
//! modified or deleted comes out byte for byte, a last line without a newline
//! included (`\ No newline at end of file`).
//!
//! A binary file gets git's own "Binary files … differ" line, which `git
//! apply` refuses whole rather than leave the file wrong; a file too large
//! to diff or not captured at one end is left out (its `content` says so,
//! for the front end to say).

use super::files::{as_text, MAX_DIFF_BYTES};
use super::line_diff::{self, DiffBudget};
use crate::engine::api::{
    FilePatch, FileStatus, PatchContent, PatchHunk, PatchParams, PatchResult,
};
use crate::engine::{result_path, Engine, Result};
use crate::store::{classify, diff_trees, EntryKind, TreeEntry};

/// `Engine::get_patch` (the door in engine/mod.rs says what it does).
pub(crate) fn get_patch(engine: &mut Engine, p: PatchParams) -> Result<PatchResult> {
    let ((_, from_tree), (_, to_tree)) = engine.range(p.from, p.to)?;
    let changes = diff_trees(&engine.store, Some(&from_tree), Some(&to_tree))?;
    let context = p.context_lines.unwrap_or(3);
    // One budget for the request, as `get_status`: a patch of many files
    // must not stall the ones behind it.
    let mut budget = DiffBudget::for_request();
    let mut files = Vec::new();
    for (c, class) in changes.iter().zip(classify(&changes)) {
        if let Some(only) = &p.files {
            if !only.iter().any(|f| f.as_str() == c.path) {
                continue;
            }
        }
        let (status, _) = FileStatus::of(class);
        files.push(file_patch(
            engine,
            &c.path,
            status,
            c.old,
            c.new,
            context,
            &mut budget,
        )?);
    }
    Ok(PatchResult { files })
}

/// One section of a file's patch: the entries at each end and their bytes.
type Side = (
    Option<TreeEntry>,
    Option<TreeEntry>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
);

/// One file's patch between two tree entries.
fn file_patch(
    engine: &Engine,
    path: &str,
    status: FileStatus,
    old: Option<TreeEntry>,
    new: Option<TreeEntry>,
    context: usize,
    budget: &mut DiffBudget,
) -> Result<FilePatch> {
    let mut out = FilePatch {
        path: result_path(path),
        status,
        content: PatchContent::Text,
        header: String::new(),
        hunks: Vec::new(),
        approximate: false,
    };
    // A directory at one end is no content of this path's (a file replaced a
    // directory, or the other way): only the file's side is in the patch.
    let old = old.filter(|e| e.kind != EntryKind::Tree);
    let new = new.filter(|e| e.kind != EntryKind::Tree);
    if old.is_some_and(|e| !e.has_object()) || new.is_some_and(|e| !e.has_object()) {
        out.content = PatchContent::NotCaptured;
        return Ok(out);
    }
    if old.is_some_and(|e| e.size > MAX_DIFF_BYTES) || new.is_some_and(|e| e.size > MAX_DIFF_BYTES)
    {
        out.content = PatchContent::TooLarge;
        return Ok(out);
    }
    let read = |e: Option<TreeEntry>| -> Result<Option<Vec<u8>>> {
        e.map(|e| engine.store.get(&e.id).map_err(Into::into))
            .transpose()
    };
    let old_bytes = read(old)?;
    let new_bytes = read(new)?;
    // A symlink that became a file (or the other way) is, to git, one path
    // deleted and another added.
    let retyped = matches!((old, new), (Some(o), Some(n)) if (o.kind == EntryKind::Symlink) != (n.kind == EntryKind::Symlink));
    let sides: Vec<Side> = if retyped {
        vec![(old, None, old_bytes, None), (None, new, None, new_bytes)]
    } else {
        vec![(old, new, old_bytes, new_bytes)]
    };
    for (o, n, ob, nb) in sides {
        let header = git_header(path, o, n);
        let (ot, nt) = match (ob.clone().map(as_text), nb.clone().map(as_text)) {
            (Some(None), _) | (_, Some(None)) => {
                out.content = PatchContent::Binary;
                out.header.push_str(&header);
                // git's blob ids in full: without them `git apply` misreads
                // the next file's header; with them it applies the file
                // when git has both blobs, and otherwise refuses, naming it.
                out.header.push_str(&format!(
                    "index {}..{}\n",
                    git_blob_id(ob.as_deref()),
                    git_blob_id(nb.as_deref())
                ));
                out.header.push_str(&format!(
                    "Binary files {} and {} differ\n",
                    label("a/", path, o.is_some(), false),
                    label("b/", path, n.is_some(), false),
                ));
                continue;
            }
            (ot, nt) => (ot.flatten(), nt.flatten()),
        };
        let diff = line_diff::unified_for_patch(
            path,
            ot.as_deref().unwrap_or(""),
            nt.as_deref().unwrap_or(""),
            context,
            budget,
        );
        out.approximate |= diff.approximate;
        out.header.push_str(&header);
        if !diff.hunks.is_empty() {
            out.header.push_str(&format!(
                "--- {}\n+++ {}\n",
                label("a/", path, o.is_some(), true),
                label("b/", path, n.is_some(), true)
            ));
        }
        // Cut as the patch's line diff cuts them, so that a hunk's range names them.
        let new_lines: Vec<&str> = nt
            .as_deref()
            .map(|t| t.split_inclusive('\n').collect())
            .unwrap_or_default();
        if retyped && n.is_none() {
            // The deletion's hunks go first, in the header, so that each hunk
            // of `hunks` stays a patch of its own with the header before it.
            for h in &diff.hunks {
                out.header.push_str(&h.text);
            }
            continue;
        }
        if diff.hunks.is_empty() && o.is_some() && n.is_some() && header.lines().count() == 1 {
            // Only the `diff --git` line: the content and git's mode agree.
            out.content = PatchContent::PermissionsOnly;
            out.header.clear();
            continue;
        }
        out.hunks = diff
            .hunks
            .into_iter()
            .map(|h| PatchHunk {
                new_text: new_lines.get(h.new.clone()).unwrap_or_default().concat(),
                text: h.text,
            })
            .collect();
    }
    Ok(out)
}

/// git's (SHA-1) blob id of a file's content, in hex; all zeros for a side
/// that is not there, as git writes it.
fn git_blob_id(content: Option<&[u8]>) -> String {
    let Some(content) = content else {
        return "0".repeat(40);
    };
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(format!("blob {}\0", content.len()).as_bytes());
    ctx.update(content);
    ctx.finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// git's mode of an entry: regular, executable or a symlink (git records
/// no other permission bits).
fn git_mode(e: &TreeEntry) -> u32 {
    match e.kind {
        EntryKind::Symlink => 0o120000,
        EntryKind::Executable => 0o100755,
        _ if e.mode & 0o100 != 0 => 0o100755,
        _ => 0o100644,
    }
}

/// `diff --git a/P b/P` and the lines that say what happened to the file
/// itself: created, deleted, or its mode changed.
fn git_header(path: &str, old: Option<TreeEntry>, new: Option<TreeEntry>) -> String {
    let mut s = format!("diff --git {} {}\n", quote("a/", path), quote("b/", path));
    match (old, new) {
        (None, Some(n)) => s.push_str(&format!("new file mode {:06o}\n", git_mode(&n))),
        (Some(o), None) => s.push_str(&format!("deleted file mode {:06o}\n", git_mode(&o))),
        (Some(o), Some(n)) if git_mode(&o) != git_mode(&n) => s.push_str(&format!(
            "old mode {:06o}\nnew mode {:06o}\n",
            git_mode(&o),
            git_mode(&n)
        )),
        _ => {}
    }
    s
}

/// A side's name on the `---`/`+++` (or binary) line: `/dev/null` when the
/// file is not there, else the quoted name; as git, a name with a space
/// ends with a tab on the `---`/`+++` lines, so that what follows it is not
/// read as a timestamp.
fn label(prefix: &str, path: &str, present: bool, tab: bool) -> String {
    if !present {
        return "/dev/null".to_string();
    }
    let name = quote(prefix, path);
    if tab && path.contains(' ') {
        name + "\t"
    } else {
        name
    }
}

/// `prefix` + `path` as git writes a name in a patch (`quote_c_style`, with
/// `core.quotePath` on, git's default): in double quotes with C escapes and
/// every byte outside printable ASCII in octal when the name has any such
/// byte, a `"` or a `\`; as it is otherwise (spaces included).
pub(crate) fn quote(prefix: &str, path: &str) -> String {
    let full = format!("{prefix}{path}");
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    if full.bytes().all(plain) {
        return full;
    }
    let mut s = String::with_capacity(full.len() + 8);
    s.push('"');
    for b in full.bytes() {
        match b {
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            0x0b => s.push_str("\\v"),
            0x0c => s.push_str("\\f"),
            b'\r' => s.push_str("\\r"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b if plain(b) => s.push(char::from(b)),
            b => s.push_str(&format!("\\{b:03o}")),
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quote("a/", "src/main.rs"), "a/src/main.rs");
        assert_eq!(quote("a/", "sp ace.txt"), "a/sp ace.txt");
        assert_eq!(quote("b/", "q\"uo.txt"), "\"b/q\\\"uo.txt\"");
        assert_eq!(quote("a/", "tést.txt"), "\"a/t\\303\\251st.txt\"");
        assert_eq!(quote("a/", "back\\slash"), "\"a/back\\\\slash\"");
        assert_eq!(quote("a/", "tab\there"), "\"a/tab\\there\"");
        assert_eq!(quote("a/", "del\x7f"), "\"a/del\\177\"");
    }

    #[test]
    fn blob_ids_are_gits() {
        // `printf hello | git hash-object --stdin`
        assert_eq!(
            git_blob_id(Some(b"hello")),
            "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"
        );
        assert_eq!(git_blob_id(None), "0".repeat(40));
    }

    #[test]
    fn labels_say_dev_null_and_end_a_spaced_name_with_a_tab() {
        assert_eq!(label("a/", "x y", false, true), "/dev/null");
        assert_eq!(label("a/", "x y", true, true), "a/x y\t");
        assert_eq!(label("a/", "x y", true, false), "a/x y");
        assert_eq!(label("b/", "xy", true, true), "b/xy");
    }

    #[test]
    fn headers_say_created_deleted_and_mode_changes() {
        let id = crate::store::empty_tree_id();
        let file = TreeEntry::new(EntryKind::File, id, 1);
        let exe = TreeEntry::new(EntryKind::Executable, id, 1);
        assert_eq!(
            git_header("f", None, Some(exe)),
            "diff --git a/f b/f\nnew file mode 100755\n"
        );
        assert_eq!(
            git_header("f", Some(file), None),
            "diff --git a/f b/f\ndeleted file mode 100644\n"
        );
        assert_eq!(
            git_header("f", Some(file), Some(exe)),
            "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n"
        );
        assert_eq!(
            git_header("f", Some(file), Some(file)),
            "diff --git a/f b/f\n"
        );
    }
}
