//! Gemini CLI: `hooks` in `.gemini/settings.json` (user: `~/.gemini`), each
//! entry with a `name` and a timeout in milliseconds, and
//! `hooksConfig.enabled = true` (as tests/agents/run-agent.mjs, verified
//! with Gemini CLI 0.61.0). What we did to `hooksConfig.enabled` is kept in
//! `$REWIND_HOME/installed.json` so that uninstall undoes exactly that.

use std::path::PathBuf;

use anyhow::Result;

use super::json_merge::Json;
use super::{Agent, Edit, Loaded, Paths, Scope, State};

pub const EVENTS: [&str; 6] = [
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "SessionEnd",
];

/// Milliseconds.
const TIMEOUT_MS: u64 = 60_000;

/// What install did to `hooksConfig.enabled` (the values of
/// `gemini_hooks_enabled` in installed.json).
const ADDED: &str = "added";
const ADDED_WITH_OBJECT: &str = "added with hooksConfig";
const WAS_FALSE: &str = "was false";

pub fn settings_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".gemini/settings.json"),
        Scope::User => paths.home()?.join(".gemini/settings.json"),
    })
}

fn entries(command: &str) -> Vec<(&'static str, Json)> {
    super::hook_entries(&EVENTS, command, |event| {
        vec![
            ("name".into(), Json::String(format!("rewind-{event}"))),
            ("timeout".into(), Json::num(TIMEOUT_MS)),
        ]
    })
}

pub fn install(scope: &Scope, paths: &Paths, command: &str, state: &mut State) -> Result<Edit> {
    let file = settings_file(scope, paths)?;
    super::install_json(
        Agent::Gemini,
        &file,
        &entries(command),
        command,
        |loaded: &Loaded, root, changes| {
            let done = match root.get("hooksConfig") {
                None => {
                    root.insert(
                        "hooksConfig",
                        Json::Object(vec![("enabled".into(), Json::Bool(true))]),
                    );
                    Some(ADDED_WITH_OBJECT)
                }
                Some(Json::Object(_)) => match root
                    .get("hooksConfig")
                    .and_then(|c| c.get("enabled"))
                {
                    Some(Json::Bool(true)) => None,
                    Some(Json::Bool(false)) => Some(WAS_FALSE),
                    None => Some(ADDED),
                    Some(_) => return Err(loaded.refuse("`hooksConfig.enabled` is not a boolean")),
                },
                Some(_) => return Err(loaded.refuse("`hooksConfig` is not an object")),
            };
            if let Some(how) = done {
                if let Some(config) = root.get_mut("hooksConfig") {
                    config.insert("enabled", Json::Bool(true));
                }
                changes.push("set hooksConfig.enabled = true".into());
                state.gemini_hooks_enabled.insert(loaded.key(), how.into());
            }
            Ok(())
        },
    )
}

pub fn uninstall(scope: &Scope, paths: &Paths, state: &mut State) -> Result<Edit> {
    let file = settings_file(scope, paths)?;
    super::uninstall_json(Agent::Gemini, &file, |loaded: &Loaded, root, changes| {
        let Some(how) = state.gemini_hooks_enabled.remove(&loaded.key()) else {
            return Ok(());
        };
        let Some(config) = root.get_mut("hooksConfig") else {
            return Ok(());
        };
        if config.get("enabled") != Some(&Json::Bool(true)) {
            // Changed since: leave it to its owner.
            return Ok(());
        }
        if how == WAS_FALSE {
            config.insert("enabled", Json::Bool(false));
            changes.push("set hooksConfig.enabled back to false".into());
        } else {
            config.remove("enabled");
            changes.push("removed hooksConfig.enabled".into());
            if how == ADDED_WITH_OBJECT && config.is_empty_container() {
                root.remove("hooksConfig");
            }
        }
        Ok(())
    })
}
