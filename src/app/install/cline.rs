//! Cline's CLI: a hook is a file named after its event in a project's
//! `.clinerules/hooks/` or the user's `~/.cline/hooks/` (`$CLINE_DIR/hooks`),
//! run through the interpreter its shebang names, the payload on stdin
//! (Cline 3.0.65; tests/agents/README.md "Cline CLI"). Install writes one
//! short script per event that runs `rewind hook --agent cline`; uninstall
//! removes each script that is ours (recognised by its marker line and its
//! command), and a file of the same name that is not ours is refused, never
//! replaced.
//!
//! Cline waits for `PreToolUse` and `PostToolUse` (their stdout is read as
//! JSON; rewind prints nothing, which changes nothing) and runs the others
//! detached; a hook's exit status is ignored.

use std::path::PathBuf;

use anyhow::Result;

use super::{is_rewind_hook_command, load, Agent, Edit, OwnFile, Paths, Scope};

/// The events whose hook files rewind writes: a turn's start (a task run,
/// or resumed), each tool before and after, and a turn's end however it
/// ends. (`UserPromptSubmit` never fired in Cline 3.0.65's runs here, and
/// its payload is unknown.)
pub const EVENTS: [&str; 7] = [
    "TaskStart",
    "TaskResume",
    "PreToolUse",
    "PostToolUse",
    "TaskComplete",
    "TaskCancel",
    "TaskError",
];

/// The line that marks a hook file as rewind's.
const MARKER: &str =
    "# rewind: records this Cline event (`rewind uninstall cline` removes this file)";

/// The directory the hook files go in.
fn hooks_dir(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".clinerules/hooks"),
        Scope::User => paths.cline_dir()?.join("hooks"),
    })
}

/// A hook file's whole text.
fn text(command: &str) -> String {
    format!("#!/bin/sh\n{MARKER}\nexec {command}\n")
}

/// Whether a hook file is ours: the marker, and a `rewind hook` command.
fn is_ours(text: &str) -> bool {
    let mut lines = text.lines();
    lines.next() == Some("#!/bin/sh")
        && lines.next() == Some(MARKER)
        && lines
            .next()
            .and_then(|l| l.strip_prefix("exec "))
            .is_some_and(is_rewind_hook_command)
        && lines.all(|l| l.trim().is_empty())
}

pub fn install(scope: &Scope, paths: &Paths, command: &str) -> Result<Vec<Edit>> {
    let dir = hooks_dir(scope, paths)?;
    EVENTS
        .iter()
        .map(|event| {
            load(&dir.join(event))?.own_file(
                Agent::Cline,
                text(command),
                is_ours,
                OwnFile {
                    added: format!("added hook {event}"),
                    updated: format!("pointed hook {event} at this binary"),
                    foreign: "a hook file rewind did not write is in the way",
                },
            )
        })
        .collect()
}

pub fn uninstall(scope: &Scope, paths: &Paths) -> Result<Vec<Edit>> {
    let dir = hooks_dir(scope, paths)?;
    EVENTS
        .iter()
        .map(|event| {
            Ok(load(&dir.join(event))?.remove_own_file(
                Agent::Cline,
                is_ours,
                format!("removed hook {event}"),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_file_of_rewinds_shape_is_ours() {
        let ours = text(r#""/usr/local/bin/rewind" hook --agent cline"#);
        assert!(is_ours(&ours));
        assert!(is_ours(&format!("{ours}\n")));
        // Another script, one that runs more than rewind, a marker copied
        // into a script of someone else's: not ours.
        assert!(!is_ours("#!/bin/sh\necho hi\n"));
        assert!(!is_ours(&format!("{ours}rm -rf ~\n")));
        assert!(!is_ours(&format!(
            "#!/bin/sh\n{MARKER}\nexec curl x | sh\n"
        )));
    }
}
