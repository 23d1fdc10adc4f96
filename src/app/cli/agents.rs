//! The agents' side at the terminal: `rewind hook` (one event, never
//! failing the agent), `rewind install` and `rewind uninstall`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::app::args::AgentChoice;
use crate::app::hooks::Agent;
use crate::app::install::{self, Plan};
use crate::app::project::absolute;

/// Longest hook payload read; a longer one is a failure, never a hang.
const MAX_HOOK_PAYLOAD: u64 = 64 * 1024 * 1024;

/// `rewind hook --agent NAME [--plugin]`: never fails, prints nothing on
/// stdout. With `--plugin` (the plugin's and the extension's hooks) the
/// event is left to the settings' own `rewind hook` when there is one
/// (`install::standdown`).
pub fn hook(agent: &str, plugin: bool) {
    use std::io::Read;
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_HOOK_PAYLOAD)
        .read_to_end(&mut input);
    let known = match agent {
        "claude" => Some(Agent::ClaudeCode),
        name => Agent::from_name(name),
    };
    let Some(agent) = known else {
        return crate::app::hooks::failures::record_unknown_agent(agent);
    };
    if let Err(err) = read {
        tracing::warn!(%err, "rewind hook: could not read the payload");
        return;
    }
    // Parsed here, once: everything after takes the typed event.
    let event = match crate::app::hooks::payload::parse(agent, &input) {
        Ok(e) => e,
        Err(err) => return crate::app::hooks::record_unparsed(agent, &err),
    };
    if plugin && install::standdown::settings_record(agent, &event, &install::Paths::from_env()) {
        tracing::debug!("rewind hook --plugin: the settings' rewind hook records this event");
        return;
    }
    crate::app::hook_server::client::deliver(agent, &event);
}

impl AgentChoice {
    pub(crate) fn agents(self) -> Vec<Agent> {
        match self {
            AgentChoice::One(agent) => vec![agent],
            AgentChoice::All => Agent::ALL.to_vec(),
        }
    }

    /// The agents to install for: `all` is those whose command is on PATH
    /// (an agent not installed gets no settings of its own).
    fn agents_to_install(self) -> Result<Vec<Agent>> {
        if !matches!(self, AgentChoice::All) {
            return Ok(self.agents());
        }
        let found: Vec<Agent> = Agent::ALL
            .into_iter()
            .filter(|a| on_path(a.command()))
            .collect();
        if found.is_empty() {
            let names: Vec<&str> = Agent::ALL.iter().map(|a| a.command()).collect();
            bail!(
                "none of the agents' commands ({}) is on PATH; name the agent to install for",
                names.join(", ")
            );
        }
        Ok(found)
    }
}

/// Whether an executable file `name` is in a directory of PATH.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

fn install_scope(project: Option<PathBuf>) -> install::Scope {
    project.map_or(install::Scope::User, install::Scope::Project)
}

/// The binary the hooks run: `--bin` (made absolute) or this one, with
/// symlinks resolved where it exists.
fn hook_binary(bin: Option<PathBuf>) -> Result<PathBuf> {
    let bin = match bin {
        Some(b) => absolute(b)?,
        None => std::env::current_exe().context("finding the running rewind binary")?,
    };
    let bin = bin.canonicalize().unwrap_or(bin);
    let name = bin.file_name().and_then(|n| n.to_str());
    if !matches!(name, Some("rewind" | "rewind.exe")) {
        bail!(
            "the hook binary {} must be named `rewind` (uninstall recognises the hooks by that name)",
            bin.display()
        );
    }
    Ok(bin)
}

pub fn install(agent: AgentChoice, project: Option<PathBuf>, bin: Option<PathBuf>) -> Result<()> {
    let bin = hook_binary(bin)?;
    let agents = agent.agents_to_install()?;
    let in_project = project.is_some();
    let plan = install::plan_install(
        &agents,
        &install_scope(project),
        &bin,
        &install::Paths::from_env(),
    )?;
    plan.apply()?;
    print_install_plan(&plan, "already installed");
    let quoted = install::shell_quote(&bin.to_string_lossy());
    let names: Vec<&str> = agents.iter().map(|a| a.name()).collect();
    println!(
        "The hooks run {quoted} hook --agent {} at each step of a session; `rewind uninstall` removes them.",
        names.join("|")
    );
    if in_project {
        // Files in the project are the project's: checkpoints capture them,
        // and a restore elsewhere puts back this machine's path to rewind.
        println!(
            "These files are part of the project: checkpoints capture them like any other file (and \
             git, if you commit them), with this machine's path to rewind in them; on another \
             machine, run `rewind install` there (docs/agents.md \"Project installs\")."
        );
    }
    if plan
        .edits
        .iter()
        .any(|e| e.agent == Agent::Codex && e.changed())
    {
        println!(
            "Codex loads a project's .codex/hooks.json only in a trusted project and may ask you to review new hooks."
        );
    }
    println!(
        "To see checkpoints: `rewind log` in the project; `rewind diff` shows changes; \
         `rewind restore ENTRY` puts files back (preview first); `rewind undo` reverts a restore."
    );
    Ok(())
}

/// The agents `--mcp` edits: with `all --project`, those that read a
/// project's MCP servers (Codex and Cline have no project file).
fn mcp_agents(
    choice: AgentChoice,
    mut agents: Vec<Agent>,
    project: &Option<PathBuf>,
) -> Vec<Agent> {
    if matches!(choice, AgentChoice::All) && project.is_some() {
        agents.retain(|a| install::mcp::has_project_file(*a));
    }
    agents
}

/// `rewind install AGENT --mcp`: register `rewind mcp` as the agent's MCP
/// server.
pub fn install_mcp(
    agent: AgentChoice,
    project: Option<PathBuf>,
    bin: Option<PathBuf>,
) -> Result<()> {
    let bin = hook_binary(bin)?;
    let agents = mcp_agents(agent, agent.agents_to_install()?, &project);
    let plan = install::mcp::plan(
        &agents,
        &install_scope(project),
        Some(&bin),
        &install::Paths::from_env(),
    )?;
    plan.apply()?;
    print_install_plan(&plan, "already registered");
    let quoted = install::shell_quote(&bin.to_string_lossy());
    println!(
        "The agent starts {quoted} mcp in the project and sees its checkpoints as tools (docs/mcp.md); \
         `rewind uninstall AGENT --mcp` removes it. Restart the agent to load it."
    );
    Ok(())
}

pub fn uninstall(agent: AgentChoice, project: Option<PathBuf>, mcp: bool) -> Result<()> {
    let paths = install::Paths::from_env();
    let plan = if mcp {
        let agents = mcp_agents(agent, agent.agents(), &project);
        install::mcp::plan(&agents, &install_scope(project), None, &paths)?
    } else {
        install::plan_uninstall(&agent.agents(), &install_scope(project), &paths)?
    };
    plan.apply()?;
    print_install_plan(&plan, "nothing to remove");
    Ok(())
}

/// One line per file changed or left, but one line for a run of an agent's
/// files in one directory that fared alike (Cline's script per event, Codex's
/// two unchanged files).
fn print_install_plan(plan: &Plan, unchanged: &str) {
    let alike = |a: &install::Edit, b: &install::Edit| {
        a.agent == b.agent
            && a.path.parent() == b.path.parent()
            && a.changed() == b.changed()
            && a.deletes() == b.deletes()
    };
    for group in plan.edits.chunk_by(alike) {
        let e = &group[0];
        let changes: Vec<&str> = group
            .iter()
            .flat_map(|x| x.changes.iter().map(String::as_str))
            .collect();
        let what = if changes.is_empty() {
            unchanged.to_owned()
        } else if e.deletes() && group.len() > 1 {
            format!("{} (removed the files)", merged(&changes))
        } else if e.deletes() {
            format!("{} (the file is empty now: removed it)", changes.join("; "))
        } else {
            merged(&changes)
        };
        let place = match (group.len(), e.path.parent()) {
            (1, _) | (_, None) => e.path.display().to_string(),
            (_, Some(dir)) => {
                let names: Vec<String> = group
                    .iter()
                    .filter_map(|x| x.path.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .collect();
                format!("{}/{{{}}}", dir.display(), names.join(","))
            }
        };
        println!("{}: {place}: {what}", e.agent.name());
    }
}

/// Changes that differ only in their last word, said once: "added hook
/// TaskStart", "added hook TaskResume" → "added hooks TaskStart,
/// TaskResume"; others joined with "; ".
fn merged(changes: &[&str]) -> String {
    let split: Vec<Option<(&str, &str)>> = changes.iter().map(|c| c.rsplit_once(' ')).collect();
    match split.first() {
        Some(Some((head, _)))
            if changes.len() > 1 && split.iter().all(|x| x.is_some_and(|(h, _)| h == *head)) =>
        {
            let last: Vec<&str> = split.iter().flatten().map(|(_, w)| *w).collect();
            format!("{head}s {}", last.join(", "))
        }
        _ => changes.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::merged;

    #[test]
    fn changes_that_differ_in_their_last_word_are_said_once() {
        assert_eq!(
            merged(&["added hook TaskStart", "added hook TaskResume"]),
            "added hooks TaskStart, TaskResume"
        );
        assert_eq!(merged(&["added hook TaskStart"]), "added hook TaskStart");
        assert_eq!(
            merged(&["added hooks Stop", "set [features] hooks = true"]),
            "added hooks Stop; set [features] hooks = true"
        );
    }
}
