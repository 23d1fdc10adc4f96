//! GitHub Copilot CLI: hook files in `.github/hooks/` (a repository's) and
//! `~/.copilot/hooks/` (`$COPILOT_HOME/hooks`, the user's); install writes
//! one of its own, `rewind.json`, and uninstall removes it (recognised by
//! its commands, all `rewind hook`; a `rewind.json` that is not ours is
//! refused, never replaced). The events are named as Claude Code names
//! them: Copilot CLI 1.0.102 then sends Claude-shaped payloads
//! (`hook_event_name`, `session_id`, `tool_name`, `tool_input`), where its
//! own camelCase names get payloads that do not say which event they are.
//! Repository hooks load in prompt mode (`-p`) only in a trusted folder.

use std::path::PathBuf;

use anyhow::Result;

use super::json_merge::Json;
use super::{is_rewind_hook_command, load, Agent, Edit, OwnFile, Paths, Scope};

/// Claude Code's events, by the names Copilot CLI sends Claude-shaped
/// payloads for (above).
pub const EVENTS: [&str; 7] = super::claude::EVENTS;

/// Seconds.
const TIMEOUT: u64 = 60;

pub fn hooks_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".github/hooks/rewind.json"),
        Scope::User => paths.copilot_home()?.join("hooks/rewind.json"),
    })
}

/// The whole file: `{"version": 1, "hooks": {EVENT: [{"type": "command",
/// "bash": CMD, "timeoutSec": 60}]}}`.
fn text(command: &str) -> String {
    let entry = || {
        Json::Array(vec![Json::Object(vec![
            ("type".into(), Json::str("command")),
            ("bash".into(), Json::str(command)),
            ("timeoutSec".into(), Json::num(TIMEOUT)),
        ])])
    };
    let hooks = EVENTS
        .iter()
        .map(|e| (e.to_string(), entry()))
        .collect::<Vec<_>>();
    let root = Json::Object(vec![
        ("version".into(), Json::num(1)),
        ("hooks".into(), Json::Object(hooks)),
    ]);
    super::json_merge::print(&root, true)
}

/// Whether a hook file is ours: it has hooks, and every command in it runs
/// `rewind hook`.
fn is_ours(text: &str) -> bool {
    let Ok(root) = super::json_merge::parse(text) else {
        return false;
    };
    let Some(Json::Object(events)) = root.get("hooks") else {
        return false;
    };
    let mut any = false;
    for (_, entries) in events {
        let Json::Array(list) = entries else {
            return false;
        };
        for e in list {
            match e.get("bash").and_then(Json::as_str) {
                Some(c) if is_rewind_hook_command(c) => any = true,
                _ => return false,
            }
        }
    }
    any
}

pub fn install(scope: &Scope, paths: &Paths, command: &str) -> Result<Edit> {
    let events = EVENTS.join(", ");
    load(&hooks_file(scope, paths)?)?.own_file(
        Agent::Copilot,
        text(command),
        is_ours,
        OwnFile {
            added: format!("added hooks {events}"),
            updated: format!("pointed the hooks at this binary {events}"),
            foreign: "a hook file rewind did not write is in the way",
        },
    )
}

pub fn uninstall(scope: &Scope, paths: &Paths) -> Result<Edit> {
    Ok(load(&hooks_file(scope, paths)?)?.remove_own_file(
        Agent::Copilot,
        is_ours,
        format!("removed hooks {}", EVENTS.join(", ")),
    ))
}
