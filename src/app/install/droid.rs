//! Factory's Droid: Claude Code's hook events and entries, in
//! `.factory/hooks.json` (user: `~/.factory/hooks.json`), where Droid
//! 0.215.0 wants the events at the top level of the file (a `hooks` key
//! there is ignored as an unknown event, with a warning in its log). The
//! merge is the one of the other agents' settings files, one level up.

use std::path::PathBuf;

use anyhow::Result;

use super::json_merge::{self, Json};
use super::{is_rewind_hook_command, load, Agent, Edit, Paths, Scope};

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

/// The file's events as the `hooks` object json_merge edits.
fn wrapped(events: Json) -> Json {
    Json::Object(vec![("hooks".into(), events)])
}

fn unwrapped(mut root: Json) -> Json {
    root.remove("hooks").unwrap_or_else(Json::object)
}

pub fn install(scope: &Scope, paths: &Paths, command: &str) -> Result<Edit> {
    let loaded = load(&hooks_file(scope, paths)?)?;
    let entries = super::hook_entries(&EVENTS, command, |_| {
        vec![("timeout".into(), Json::num(TIMEOUT))]
    });
    let mut root = wrapped(loaded.json()?);
    let results = json_merge::add_hooks(&mut root, &entries, command, is_rewind_hook_command)
        .map_err(|e| loaded.refuse(e))?;
    let list = |which: json_merge::Added| -> Vec<&str> {
        results
            .iter()
            .filter(|(_, a)| *a == which)
            .map(|(e, _)| e.as_str())
            .collect()
    };
    let mut changes = Vec::new();
    let added = list(json_merge::Added::Added);
    if !added.is_empty() {
        changes.push(format!("added hooks {}", added.join(", ")));
    }
    let updated = list(json_merge::Added::Updated);
    if !updated.is_empty() {
        changes.push(format!(
            "pointed the hooks {} at this binary",
            updated.join(", ")
        ));
    }
    Ok(loaded.json_edit(Agent::Droid, &unwrapped(root), changes, false))
}

pub fn uninstall(scope: &Scope, paths: &Paths) -> Result<Edit> {
    let loaded = load(&hooks_file(scope, paths)?)?;
    if loaded.text.is_none() {
        return Ok(loaded.edit(Agent::Droid, super::Action::Keep, Vec::new()));
    }
    let mut root = wrapped(loaded.json()?);
    let removed = json_merge::remove_hooks(&mut root, is_rewind_hook_command)
        .map_err(|e| loaded.refuse(e))?;
    let changes = if removed.is_empty() {
        Vec::new()
    } else {
        vec![format!("removed hooks {}", removed.join(", "))]
    };
    Ok(loaded.json_edit(Agent::Droid, &unwrapped(root), changes, true))
}
