//! OpenCode, and Kilo's CLI (built on OpenCode): no hook settings, but
//! plugins, JavaScript files loaded from `plugins/` in the project's
//! `.opencode/` (Kilo: `.kilo/`) or the user's `~/.config/opencode/`
//! (`~/.config/kilo/`). Install writes one, `rewind.js`
//! (opencode_plugin.js with the hook command filled in), which hands every
//! prompt, tool call and turn end to `rewind hook --agent NAME`. Uninstall
//! removes that file, recognised by its first line; a `rewind.js` that is
//! not ours is refused, never replaced.
//!
//! `--mcp` registers `rewind mcp` as `mcp.rewind` (`{"type": "local",
//! "command": [BIN, "mcp"]}`) in `opencode.json` (Kilo: `kilo.json`): the
//! project's at its root (Kilo: in `.kilo/`), the user's beside the plugins.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use super::json_merge::Json;
use super::{load, Action, Agent, Edit, OwnFile, Paths, Scope};

/// The plugin, before the command is filled in.
const TEMPLATE: &str = include_str!("opencode_plugin.js");

/// What the first line of our plugin starts with.
const MARK: &str = "// rewind: ";

/// The directory names OpenCode (or Kilo) uses: in a project, under
/// `$XDG_CONFIG_HOME`, and its config file's name.
fn names(agent: Agent) -> (&'static str, &'static str, &'static str) {
    match agent {
        Agent::Kilo => (".kilo", "kilo", "kilo.json"),
        _ => (".opencode", "opencode", "opencode.json"),
    }
}

/// The user's configuration directory of the agent: `$XDG_CONFIG_HOME/NAME`
/// (default `~/.config/NAME`), where OpenCode looks (xdg-basedir).
fn user_dir(agent: Agent, paths: &Paths) -> Result<PathBuf> {
    let config = match &paths.xdg_config_home {
        Some(d) => d.clone(),
        None => paths.home()?.join(".config"),
    };
    Ok(config.join(names(agent).1))
}

pub fn plugin_file(agent: Agent, scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(names(agent).0).join("plugins/rewind.js"),
        Scope::User => user_dir(agent, paths)?.join("plugins/rewind.js"),
    })
}

fn config_file(agent: Agent, scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        // Kilo 7.7.7 reads a project's config from `.kilo/` only.
        Scope::Project(dir) if agent == Agent::Kilo => dir.join(".kilo").join(names(agent).2),
        Scope::Project(dir) => dir.join(names(agent).2),
        Scope::User => user_dir(agent, paths)?.join(names(agent).2),
    })
}

/// The plugin that runs `bin hook --agent NAME`. The command is an argv
/// (JSON): the plugin spawns it without a shell.
pub fn plugin_text(agent: Agent, bin: &Path) -> Result<String> {
    let bin = bin
        .to_str()
        .ok_or_else(|| anyhow!("the binary path {} is not UTF-8", bin.display()))?;
    let argv = serde_json::to_string(&[bin, "hook", "--agent", agent.name()])?;
    Ok(TEMPLATE
        .replace("__REWIND_AGENT__", agent.name())
        .replace("__REWIND_ARGV__", &argv))
}

/// Whether a plugin file is the one rewind writes.
fn is_ours(text: &str) -> bool {
    text.starts_with(MARK)
}

pub fn install(agent: Agent, scope: &Scope, paths: &Paths, bin: &Path) -> Result<Edit> {
    load(&plugin_file(agent, scope, paths)?)?.own_file(
        agent,
        plugin_text(agent, bin)?,
        is_ours,
        OwnFile {
            added: "added the rewind plugin".into(),
            updated: "updated the rewind plugin".into(),
            foreign: "a plugin rewind did not write is in the way",
        },
    )
}

pub fn uninstall(agent: Agent, scope: &Scope, paths: &Paths) -> Result<Edit> {
    Ok(load(&plugin_file(agent, scope, paths)?)?.remove_own_file(
        agent,
        is_ours,
        "removed the rewind plugin".into(),
    ))
}

/// Whether `mcp.rewind` is the entry we write: a `local` server whose
/// command is a binary named `rewind` with the one argument `mcp`.
fn is_our_server(v: &Json) -> Option<String> {
    let Some(Json::Array(cmd)) = v.get("command") else {
        return None;
    };
    let words: Option<Vec<&str>> = cmd.iter().map(Json::as_str).collect();
    match words?.as_slice() {
        [bin, rest @ ..] if super::mcp_entry::is_rewind_mcp(bin, rest) => Some(bin.to_string()),
        _ => None,
    }
}

/// Register (`bin: Some`) or remove `rewind mcp` in the agent's config file.
pub fn mcp(agent: Agent, scope: &Scope, paths: &Paths, bin: Option<&str>) -> Result<Edit> {
    let loaded = load(&config_file(agent, scope, paths)?)?;
    if bin.is_none() && loaded.text.is_none() {
        return Ok(loaded.edit(agent, Action::Keep, Vec::new()));
    }
    let mut root = loaded.json()?;
    let servers = root.get("mcp");
    if servers.is_some_and(|s| !matches!(s, Json::Object(_))) {
        return Err(loaded.refuse("`mcp` is not an object"));
    }
    let name = super::mcp_entry::NAME;
    let ours = match servers.and_then(|s| s.get(name)) {
        None => None,
        Some(v) => Some(is_our_server(v).ok_or_else(|| {
            loaded.refuse(format!("`mcp.{name}` is a server rewind did not write"))
        })?),
    };
    let mut changes = Vec::new();
    match bin {
        Some(bin) if ours.as_deref() != Some(bin) => {
            let entry = Json::Object(vec![
                ("type".into(), Json::str("local")),
                (
                    "command".into(),
                    Json::Array(vec![Json::str(bin), Json::str("mcp")]),
                ),
                ("enabled".into(), Json::Bool(true)),
            ]);
            if root.get("mcp").is_none() {
                root.insert("mcp", Json::object());
            }
            if let Some(s) = root.get_mut("mcp") {
                s.insert(name, entry);
            }
            changes.push(if ours.is_some() {
                format!("pointed the MCP server {name} at this binary")
            } else {
                format!("added the MCP server {name}")
            });
        }
        Some(_) => {}
        None if ours.is_some() => {
            if let Some(s) = root.get_mut("mcp") {
                s.remove(name);
                if s.is_empty_container() {
                    root.remove("mcp");
                }
            }
            changes.push(format!("removed the MCP server {name}"));
        }
        None => {}
    }
    Ok(loaded.json_edit(agent, &root, changes, bin.is_none()))
}
