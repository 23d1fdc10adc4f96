//! What an automatic checkpoint did, in words, for one without a label: a
//! tool step says which file it touched or which command it ran ("Edit
//! src/app.py", "Bash: npm test", "apply_patch: 3 files") from the tool's
//! recorded input, instead of the bare tool name. Computed when read, so
//! sessions recorded before it read the same way; nothing is stored.
//!
//! The input was written by an agent's hook (docs/architecture.md rule 15):
//! only strings are taken from it, cut short, with control characters left
//! to the printing front end (`printable`).

use std::path::Path;

use serde_json::Value;

use crate::session::records::StepSnapshot;
use crate::session::Entry;

/// The longest description, in characters (a command can be a script).
const MAX_CHARS: usize = 80;

/// Fields a file tool names its file in (Claude Code, Gemini CLI and
/// others spell it one of these ways).
const PATH_FIELDS: [&str; 4] = ["file_path", "notebook_path", "absolute_path", "path"];

/// A `tool` step-snapshot's description, `None` for other entries (and for
/// one whose record does not read).
pub(crate) fn describe(e: &Entry, root: &Path) -> Option<String> {
    let name = e.snapshot_tool()?;
    let record = e.record::<StepSnapshot>()?;
    let input = record.tool.as_ref().and_then(|t| t.input.as_ref());
    let changed = record.diff.added.len() + record.diff.modified.len() + record.diff.deleted.len();
    Some(describe_tool(name, input, root, changed, &record.diff))
}

/// See [`describe`]; `changed` counts the files the step's diff names.
fn describe_tool(
    name: &str,
    input: Option<&Value>,
    root: &Path,
    changed: usize,
    diff: &crate::session::records::Diff,
) -> String {
    let field = |k: &str| {
        input
            .and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    if let Some(path) = PATH_FIELDS.iter().find_map(|k| field(k)) {
        return short(&format!("{name} {}", relative(path, root)));
    }
    // A shell's command: a string, or an argv (Codex's `["bash", "-lc", "…"]`).
    let command = field("command").map(str::to_string).or_else(|| {
        let argv = input?.get("command")?.as_array()?;
        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        // `bash -lc SCRIPT`: the script is the command.
        match words.as_slice() {
            [sh, flag, script] if flag.starts_with('-') && flag.contains('c') && !sh.is_empty() => {
                Some(script.to_string())
            }
            _ => (!words.is_empty()).then(|| words.join(" ")),
        }
    });
    // A patch tool carries the patch as its `command`: a file count says more.
    let is_patch = command
        .as_deref()
        .is_some_and(|c| c.starts_with("*** Begin Patch"));
    if let (Some(command), false) = (command, is_patch) {
        let line = command.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return short(&format!("{name}: {}", line.trim()));
    }
    match changed {
        0 => name.to_string(),
        1 => {
            let one = diff
                .added
                .iter()
                .chain(&diff.modified)
                .chain(&diff.deleted)
                .next()
                .map(String::as_str)
                .unwrap_or("");
            short(&format!("{name} {one}"))
        }
        n => format!("{name} {n} files"),
    }
}

/// A path as the project names it, when it is inside the project.
fn relative(path: &str, root: &Path) -> String {
    Path::new(path)
        .strip_prefix(root)
        .ok()
        .and_then(|p| p.to_str())
        .filter(|p| !p.is_empty())
        .unwrap_or(path)
        .to_string()
}

/// At most [`MAX_CHARS`] characters, with `…` when cut.
fn short(s: &str) -> String {
    match s.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::records::Diff;
    use serde_json::json;

    fn d(modified: &[&str]) -> Diff {
        Diff {
            modified: modified.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_file_tool_names_its_file_relative_to_the_project() {
        let root = Path::new("/p");
        let input = json!({"file_path": "/p/src/app.py", "old_string": "a"});
        assert_eq!(
            describe_tool("Edit", Some(&input), root, 1, &d(&["src/app.py"])),
            "Edit src/app.py"
        );
        let outside = json!({"file_path": "/elsewhere/x"});
        assert_eq!(
            describe_tool("Write", Some(&outside), root, 0, &d(&[])),
            "Write /elsewhere/x"
        );
    }

    #[test]
    fn a_shell_names_its_command_and_a_patch_its_files() {
        let root = Path::new("/p");
        let bash = json!({"command": "npm test\necho done"});
        assert_eq!(
            describe_tool("Bash", Some(&bash), root, 0, &d(&[])),
            "Bash: npm test"
        );
        let argv = json!({"command": ["bash", "-lc", "cargo build"]});
        assert_eq!(
            describe_tool("shell", Some(&argv), root, 0, &d(&[])),
            "shell: cargo build"
        );
        let patch = json!({"command": "*** Begin Patch\n*** Update File: a\n"});
        assert_eq!(
            describe_tool("apply_patch", Some(&patch), root, 3, &d(&["a", "b", "c"])),
            "apply_patch 3 files"
        );
        assert_eq!(
            describe_tool("Write", None, root, 3, &d(&["a", "b", "c"])),
            "Write 3 files"
        );
        assert_eq!(describe_tool("Task", None, root, 0, &d(&[])), "Task");
        let long = json!({"command": "x".repeat(500)});
        assert!(
            describe_tool("Bash", Some(&long), root, 0, &d(&[]))
                .chars()
                .count()
                <= 81
        );
    }
}
