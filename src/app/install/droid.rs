//! Factory's Droid: Claude Code's hook events and entries, in
//! `.factory/hooks.json` (user: `~/.factory/hooks.json`), where Droid
//! 0.215.0 wants the events at the top level of the file (a `hooks` key
//! there is ignored as an unknown event, with a warning in its log). The
//! merge is the one of the other agents' settings files, one level up.

use std::path::PathBuf;

use anyhow::Result;

use super::json_merge::Json;
use super::{Agent, Edit, HooksAt, Paths, Scope};

pub const EVENTS: [&str; 6] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
];

/// Seconds.
const TIMEOUT: u64 = 60;

pub fn hooks_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".factory/hooks.json"),
        Scope::User => paths.home()?.join(".factory/hooks.json"),
    })
}

pub fn install(scope: &Scope, paths: &Paths, command: &str) -> Result<Edit> {
    let entries = super::hook_entries(&EVENTS, command, |_| {
        vec![("timeout".into(), Json::num(TIMEOUT))]
    });
    super::install_hooks(
        Agent::Droid,
        &hooks_file(scope, paths)?,
        HooksAt::File,
        &entries,
        command,
        |_, _, _| Ok(()),
    )
}

pub fn uninstall(scope: &Scope, paths: &Paths) -> Result<Edit> {
    super::uninstall_hooks(
        Agent::Droid,
        &hooks_file(scope, paths)?,
        HooksAt::File,
        |_, _, _| Ok(()),
    )
}
