//! `rewind install AGENT --mcp` / `rewind uninstall AGENT --mcp`: register
//! `rewind mcp` as the MCP server `rewind` of Claude Code (`mcpServers` in
//! `~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`; a project's
//! `.mcp.json`), Gemini CLI (`mcpServers` in `.gemini/settings.json`),
//! Codex (`[mcp_servers.rewind]` in `$CODEX_HOME/config.toml`), Qwen Code
//! (`mcpServers` in `.qwen/settings.json`), OpenCode and Kilo (`mcp` in
//! their config, install/opencode.rs), Droid (`mcpServers` in
//! `.factory/mcp.json`), Copilot CLI (`mcpServers` in
//! `$COPILOT_HOME/mcp-config.json`; a project's `.github/mcp.json`) and
//! Cline (`mcpServers` in `~/.cline/data/settings/cline_mcp_settings.json`,
//! user only), merged with what is there. The entry is ours when its command is a binary named
//! `rewind` and its arguments are `["mcp"]`, so uninstall needs no record;
//! a `rewind` server that is not ours is refused, never replaced.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use toml_edit::{Array, DocumentMut, Item, Table};

use super::json_merge::Json;
pub use super::mcp_entry::{is_rewind_mcp, NAME};
use super::{load, resolve_scope, Action, Agent, Edit, Paths, Plan, Scope};

/// What Codex passes on to our server from its own environment
/// (`env_vars`): it starts MCP servers with a reduced environment (no
/// `REWIND_HOME`, no `XDG_DATA_HOME`) but gives hooks all of it, so without
/// these the server would look for checkpoints in another store than the
/// one the hooks record into (seen with Codex 0.169.0,
/// tests/integration/agents_mcp.rs).
pub const CODEX_ENV_VARS: [&str; 2] = ["REWIND_HOME", "XDG_DATA_HOME"];

fn claude_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".mcp.json"),
        Scope::User => match &paths.claude_config_dir {
            Some(d) => d.join(".claude.json"),
            None => paths.home()?.join(".claude.json"),
        },
    })
}

fn gemini_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    super::gemini::settings_file(scope, paths)
}

/// Droid 0.215.0 reads `~/.factory/mcp.json` and, in a project, the git
/// root's (else the working directory's) `.factory/mcp.json`.
fn droid_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".factory/mcp.json"),
        Scope::User => paths.home()?.join(".factory/mcp.json"),
    })
}

/// Copilot CLI 1.0.102 reads `$COPILOT_HOME/mcp-config.json` (default
/// `~/.copilot`) and, in a trusted folder, the workspace's `.mcp.json` and
/// `.github/mcp.json`: the latter, beside its hooks in `.github/hooks/`,
/// and not Claude Code's `.mcp.json`.
fn copilot_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".github/mcp.json"),
        Scope::User => paths.copilot_home()?.join("mcp-config.json"),
    })
}

/// Cline 3.0.65 reads `~/.cline/data/settings/cline_mcp_settings.json`
/// (`$CLINE_DIR` for `~/.cline`; `$CLINE_DATA_DIR` and
/// `$CLINE_MCP_SETTINGS_PATH` move it, and are not followed here); no
/// project's file.
fn cline_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    match scope {
        Scope::User => Ok(paths
            .cline_dir()?
            .join("data/settings/cline_mcp_settings.json")),
        Scope::Project(_) => bail!(
            "Cline: it reads no project's MCP servers; \
             run `rewind install cline --mcp` without --project"
        ),
    }
}

fn codex_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    match scope {
        Scope::User => Ok(paths.codex_home()?.join("config.toml")),
        // Codex's project `.codex/config.toml` was not verified (see
        // `codex`): register it in the user's config instead.
        Scope::Project(_) => bail!(
            "Codex: a project's MCP servers are not supported by rewind install; \
             run `rewind install codex --mcp` without --project"
        ),
    }
}

fn utf8(bin: &Path) -> Result<&str> {
    bin.to_str()
        .ok_or_else(|| anyhow!("the binary path {} is not UTF-8", bin.display()))
}

/// The JSON entry's (command, args), if it has that shape (Cline's: in
/// its `transport`).
fn json_server(v: &Json) -> Option<(&str, Vec<&str>)> {
    let v = match v.get("transport") {
        Some(t @ Json::Object(_)) => t,
        _ => v,
    };
    let command = v.get("command")?.as_str()?;
    let args = match v.get("args") {
        None => Vec::new(),
        Some(Json::Array(a)) => a.iter().map(Json::as_str).collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    Some((command, args))
}

/// What an agent's JSON `mcpServers.rewind` holds besides `command` and
/// `args`.
#[derive(Clone, Copy)]
enum Shape {
    /// Nothing (Gemini CLI, Qwen Code).
    Plain,
    /// `"type": "stdio"` (Claude Code; Droid, as `droid mcp add` writes it).
    Stdio,
    /// `"type": "local"` and `"tools": ["*"]`, as `copilot mcp add` writes
    /// it (Copilot CLI 1.0.102).
    CopilotLocal,
    /// All of it inside `"transport": {"type": "stdio", …}`, as `cline mcp
    /// add --yes` writes it (Cline 3.0.65).
    ClineTransport,
}

impl Shape {
    /// Our entry, key by key, as the agent's own `mcp add` writes it.
    fn entry(self, bin: &str) -> Vec<(String, Json)> {
        let kind = |t: &str| ("type".to_owned(), Json::str(t));
        let command = [
            ("command".to_owned(), Json::str(bin)),
            ("args".to_owned(), Json::Array(vec![Json::str("mcp")])),
        ];
        match self {
            Shape::Plain => command.into(),
            Shape::Stdio => std::iter::once(kind("stdio")).chain(command).collect(),
            Shape::CopilotLocal => std::iter::once(kind("local"))
                .chain(command)
                .chain([("tools".to_owned(), Json::Array(vec![Json::str("*")]))])
                .collect(),
            Shape::ClineTransport => {
                let transport = std::iter::once(kind("stdio")).chain(command).collect();
                vec![("transport".to_owned(), Json::Object(transport))]
            }
        }
    }
}

/// Install (`bin: Some`) or remove our entry in a JSON file's `mcpServers`.
fn json_edit(agent: Agent, file: &Path, bin: Option<&str>, shape: Shape) -> Result<Edit> {
    let loaded = load(file)?;
    if bin.is_none() && loaded.text.is_none() {
        return Ok(loaded.edit(agent, Action::Keep, Vec::new()));
    }
    let mut root = loaded.json()?;
    let mut changes = Vec::new();
    let servers = root.get("mcpServers");
    if servers.is_some_and(|s| !matches!(s, Json::Object(_))) {
        return Err(loaded.refuse("`mcpServers` is not an object"));
    }
    let existing = servers.and_then(|s| s.get(NAME));
    let ours = match existing {
        None => None,
        Some(v) => match json_server(v) {
            Some((command, args)) if is_rewind_mcp(command, &args) => Some(command.to_owned()),
            _ => {
                return Err(loaded.refuse(format!(
                    "`mcpServers.{NAME}` is a server rewind did not write"
                )))
            }
        },
    };
    match bin {
        Some(bin) => {
            if ours.as_deref() != Some(bin) {
                let entry = shape.entry(bin);
                if root.get("mcpServers").is_none() {
                    root.insert("mcpServers", Json::object());
                }
                if let Some(s) = root.get_mut("mcpServers") {
                    s.insert(NAME, Json::Object(entry));
                }
                changes.push(if ours.is_some() {
                    format!("pointed the MCP server {NAME} at this binary")
                } else {
                    format!("added the MCP server {NAME}")
                });
            }
        }
        None => {
            if ours.is_some() {
                if let Some(s) = root.get_mut("mcpServers") {
                    s.remove(NAME);
                    if s.is_empty_container() {
                        root.remove("mcpServers");
                    }
                }
                changes.push(format!("removed the MCP server {NAME}"));
            }
        }
    }
    Ok(loaded.json_edit(agent, &root, changes, bin.is_none()))
}

/// `config.toml`'s new text with our `[mcp_servers.rewind]` (`bin: Some`)
/// or without it (`None`), and what changed; `Ok(None)` when nothing does.
pub fn codex_toml(
    text: Option<&str>,
    bin: Option<&str>,
) -> Result<Option<(String, String)>, String> {
    let mut doc: DocumentMut = text
        .unwrap_or("")
        .parse()
        .map_err(|e| format!("not valid TOML: {e}"))?;
    let existing = match doc.get("mcp_servers") {
        None => None,
        Some(item) => {
            let table = item.as_table_like().ok_or("`mcp_servers` is not a table")?;
            match table.get(NAME) {
                None => None,
                Some(server) => {
                    let server = server
                        .as_table_like()
                        .ok_or(format!("`mcp_servers.{NAME}` is not a table"))?;
                    let command = server.get("command").and_then(|c| c.as_str());
                    let args: Option<Vec<&str>> = match server.get("args") {
                        None => Some(Vec::new()),
                        Some(a) => a
                            .as_array()
                            .and_then(|a| a.iter().map(|v| v.as_str()).collect()),
                    };
                    let env_vars: Option<Vec<&str>> = server
                        .get("env_vars")
                        .and_then(|a| a.as_array())
                        .and_then(|a| a.iter().map(|v| v.as_str()).collect());
                    match (command, args) {
                        (Some(c), Some(a)) if is_rewind_mcp(c, &a) => {
                            Some((c.to_owned(), env_vars == Some(CODEX_ENV_VARS.to_vec())))
                        }
                        _ => {
                            return Err(format!(
                                "`mcp_servers.{NAME}` is a server rewind did not write"
                            ))
                        }
                    }
                }
            }
        }
    };
    let change = match bin {
        Some(bin) => {
            if existing
                .as_ref()
                .is_some_and(|(c, env_ok)| c == bin && *env_ok)
            {
                return Ok(None);
            }
            if doc.get("mcp_servers").is_none() {
                let mut t = Table::new();
                t.set_implicit(true);
                doc.insert("mcp_servers", Item::Table(t));
            }
            let servers = doc
                .get_mut("mcp_servers")
                .and_then(|i| i.as_table_like_mut())
                .ok_or("`mcp_servers` is not a table")?;
            let mut server = Table::new();
            server.insert("command", toml_edit::value(bin));
            let mut args = Array::new();
            args.push("mcp");
            server.insert("args", toml_edit::value(args));
            let mut env_vars = Array::new();
            for v in CODEX_ENV_VARS {
                env_vars.push(v);
            }
            server.insert("env_vars", toml_edit::value(env_vars));
            let what = if existing.as_ref().is_some_and(|(c, _)| c == bin) {
                format!(
                    "passed {} to the MCP server {NAME}",
                    CODEX_ENV_VARS.join(", ")
                )
            } else if existing.is_some() {
                format!("pointed the MCP server {NAME} at this binary")
            } else {
                format!("added the MCP server {NAME}")
            };
            servers.insert(NAME, Item::Table(server));
            what
        }
        None => {
            if existing.is_none() {
                return Ok(None);
            }
            let servers = doc
                .get_mut("mcp_servers")
                .and_then(|i| i.as_table_like_mut())
                .ok_or("`mcp_servers` is not a table")?;
            servers.remove(NAME);
            if servers.is_empty() {
                doc.remove("mcp_servers");
            }
            format!("removed the MCP server {NAME}")
        }
    };
    Ok(Some((doc.to_string(), change)))
}

fn codex_edit(file: &Path, bin: Option<&str>) -> Result<Edit> {
    let loaded = load(file)?;
    if bin.is_none() && loaded.text.is_none() {
        return Ok(loaded.edit(Agent::Codex, Action::Keep, Vec::new()));
    }
    match codex_toml(loaded.text.as_deref(), bin).map_err(|e| loaded.refuse(e))? {
        None => Ok(loaded.edit(Agent::Codex, Action::Keep, Vec::new())),
        Some((text, change)) => {
            let action = if bin.is_none() && text.trim().is_empty() {
                Action::Delete
            } else {
                Action::Write(text)
            };
            Ok(loaded.edit(Agent::Codex, action, vec![change]))
        }
    }
}

/// Whether rewind registers its MCP server in a project's file for
/// `agent` (`--project`): all but Codex and Cline (refused by [`plan`]).
pub fn has_project_file(agent: Agent) -> bool {
    !matches!(agent, Agent::Codex | Agent::Cline)
}

/// Plan registering (`bin: Some`) or removing (`None`) the MCP server for
/// `agents` in `scope`.
pub fn plan(agents: &[Agent], scope: &Scope, bin: Option<&Path>, paths: &Paths) -> Result<Plan> {
    let scope = resolve_scope(scope)?;
    let bin = bin.map(utf8).transpose()?;
    let mut edits = Vec::new();
    for &agent in agents {
        edits.push(match agent {
            Agent::ClaudeCode => json_edit(agent, &claude_file(&scope, paths)?, bin, Shape::Stdio)?,
            Agent::Gemini => json_edit(agent, &gemini_file(&scope, paths)?, bin, Shape::Plain)?,
            Agent::Codex => codex_edit(&codex_file(&scope, paths)?, bin)?,
            Agent::OpenCode | Agent::Kilo => super::opencode::mcp(agent, &scope, paths, bin)?,
            Agent::Qwen => json_edit(
                agent,
                &super::qwen::settings_file(&scope, paths)?,
                bin,
                Shape::Plain,
            )?,
            Agent::Copilot => json_edit(
                agent,
                &copilot_file(&scope, paths)?,
                bin,
                Shape::CopilotLocal,
            )?,
            Agent::Droid => json_edit(agent, &droid_file(&scope, paths)?, bin, Shape::Stdio)?,
            Agent::Cline => json_edit(
                agent,
                &cline_file(&scope, paths)?,
                bin,
                Shape::ClineTransport,
            )?,
        });
    }
    // No record in installed.json: our entries are known by their content.
    let state = super::load_state(paths)?;
    Ok(Plan {
        edits,
        state_file: paths.state_file(),
        state_before: state.clone(),
        state_after: state,
    })
}
