//! Qwen Code: Claude Code's hook events and shape, in `.qwen/settings.json`
//! (user: `~/.qwen/settings.json`), each entry with a `name` and a timeout
//! in seconds (Qwen Code 0.24 reads 1000 or more as milliseconds). Hooks
//! are on by default (`disableAllHooks` turns them off); a project's load
//! only in a trusted folder. Its MCP servers are `mcpServers` in the same
//! file (install/mcp.rs).

use std::path::PathBuf;

use anyhow::Result;

use super::json_merge::Json;
use super::{Agent, Edit, Paths, Scope};

/// Claude Code's events: Qwen Code takes its names and shape.
pub const EVENTS: [&str; 7] = super::claude::EVENTS;

/// Seconds.
const TIMEOUT: u64 = 60;

pub fn settings_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".qwen/settings.json"),
        Scope::User => paths.home()?.join(".qwen/settings.json"),
    })
}

fn entries(command: &str) -> Vec<(&'static str, Json)> {
    super::hook_entries(&EVENTS, command, |event| {
        vec![
            ("name".into(), Json::String(format!("rewind-{event}"))),
            ("timeout".into(), Json::num(TIMEOUT)),
        ]
    })
}

pub fn install(scope: &Scope, paths: &Paths, command: &str) -> Result<Edit> {
    let file = settings_file(scope, paths)?;
    super::install_json(Agent::Qwen, &file, &entries(command), command, |_, _, _| {
        Ok(())
    })
}

pub fn uninstall(scope: &Scope, paths: &Paths) -> Result<Edit> {
    let file = settings_file(scope, paths)?;
    super::uninstall_json(Agent::Qwen, &file, |_, _, _| Ok(()))
}
