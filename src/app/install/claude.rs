//! Claude Code: `hooks` in `.claude/settings.json` (user: `~/.claude`, or
//! `$CLAUDE_CONFIG_DIR` when set). No `matcher`, so the tool events see
//! every tool (as tests/agents/run-agent.mjs, verified with Claude Code
//! 2.1.331). Never `WorktreeCreate`: a command hook for it replaces git
//! worktree creation.

use std::path::PathBuf;

use anyhow::Result;

use super::json_merge::Json;
use super::{Agent, Edit, Paths, Scope};

pub const EVENTS: [&str; 7] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    // Instead of PostToolUse when the tool failed (a shell exiting non-zero
    // may have deleted files before it did).
    "PostToolUseFailure",
    "Stop",
    "SessionEnd",
];

/// Seconds.
const TIMEOUT: u64 = 60;

pub fn settings_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".claude/settings.json"),
        Scope::User => paths.claude_dir()?.join("settings.json"),
    })
}

fn entries(command: &str) -> Vec<(&'static str, Json)> {
    super::hook_entries(&EVENTS, command, |_| {
        vec![("timeout".into(), Json::num(TIMEOUT))]
    })
}

pub fn install(scope: &Scope, paths: &Paths, command: &str) -> Result<Edit> {
    let file = settings_file(scope, paths)?;
    super::install_json(
        Agent::ClaudeCode,
        &file,
        &entries(command),
        command,
        |_, _, _| Ok(()),
    )
}

pub fn uninstall(scope: &Scope, paths: &Paths) -> Result<Edit> {
    let file = settings_file(scope, paths)?;
    super::uninstall_json(Agent::ClaudeCode, &file, |_, _, _| Ok(()))
}
