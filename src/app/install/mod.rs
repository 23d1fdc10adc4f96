//! `rewind install` / `rewind uninstall`: wire `rewind hook --agent NAME`
//! into the hook settings of Claude Code, Codex and Gemini CLI, and take it
//! out again.
//!
//! Every edit is planned first ([`plan_install`], [`plan_uninstall`]), for
//! every agent asked for, and written only when all plans succeeded
//! ([`Plan::apply`]): a malformed settings file stops the command before
//! any file changed. Foreign keys and hook entries are kept (see
//! [`json_merge`]); rewind's own entries are recognised by their command
//! ([`is_rewind_hook_command`]), so uninstall needs no record of them.
//!
//! Two settings are not hook entries and carry no command, so what we did
//! to them is recorded: Codex's `[features] hooks = true` in `config.toml`
//! by a comment on that line (see [`codex`]), Gemini CLI's
//! `hooksConfig.enabled` in `$REWIND_HOME/installed.json` (JSON has no
//! comments). That file also lists which Codex `hooks.json` files rely on
//! `[features] hooks`, since the user config is shared by the user install
//! and every project install.

mod claude;
mod cline;
mod codex;
mod copilot;
mod droid;
mod gemini;
pub mod json_merge;
pub mod mcp;
mod mcp_entry;
mod opencode;
mod qwen;
pub mod standdown;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use json_merge::Json;
use rewind::store::Home;

/// The agents, as `rewind hook --agent` names them: one type for the hook
/// that reads their payloads and the installer that wires it in.
pub use crate::app::hooks::Agent;

/// Whose configuration to edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The user's (`~/.claude`, `$CODEX_HOME` or `~/.codex`, `~/.gemini`).
    User,
    /// One project's (`DIR/.claude`, `DIR/.codex`, `DIR/.gemini`).
    Project(PathBuf),
}

/// The directories the settings live in, read from the environment once
/// (tests pass their own).
#[derive(Clone, Debug)]
pub struct Paths {
    pub home: Option<PathBuf>,
    /// `$CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR` (default `~/.claude`): where Claude Code reads
    /// its user settings when set.
    pub claude_config_dir: Option<PathBuf>,
    /// `$COPILOT_HOME` (default `~/.copilot`): Copilot CLI's user hooks are
    /// in its `hooks/`.
    pub copilot_home: Option<PathBuf>,
    /// `$CLINE_DIR` (default `~/.cline`): Cline's user hooks are in its
    /// `hooks/`.
    pub cline_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (default `~/.config`): OpenCode's and Kilo's user
    /// configuration is below it.
    pub xdg_config_home: Option<PathBuf>,
    /// rewind's home, where `installed.json` lives.
    pub rewind_home: Home,
}

impl Paths {
    pub fn from_env() -> Paths {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Paths {
            home: var("HOME"),
            codex_home: var("CODEX_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            copilot_home: var("COPILOT_HOME"),
            cline_dir: var("CLINE_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            rewind_home: Home::from_env(),
        }
    }

    fn home(&self) -> Result<&Path> {
        self.home
            .as_deref()
            .ok_or_else(|| anyhow!("HOME is not set; cannot find the user's settings"))
    }

    /// An agent's own directory: the one its variable names when set, else
    /// `~/DOT`.
    fn agent_dir(&self, set: &Option<PathBuf>, dot: &str) -> Result<PathBuf> {
        match set {
            Some(p) => Ok(p.clone()),
            None => Ok(self.home()?.join(dot)),
        }
    }

    /// `$CODEX_HOME`, else `~/.codex`.
    fn codex_home(&self) -> Result<PathBuf> {
        self.agent_dir(&self.codex_home, ".codex")
    }

    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    fn claude_dir(&self) -> Result<PathBuf> {
        self.agent_dir(&self.claude_config_dir, ".claude")
    }

    /// `$COPILOT_HOME`, else `~/.copilot`.
    fn copilot_home(&self) -> Result<PathBuf> {
        self.agent_dir(&self.copilot_home, ".copilot")
    }

    /// `$CLINE_DIR`, else `~/.cline`.
    fn cline_dir(&self) -> Result<PathBuf> {
        self.agent_dir(&self.cline_dir, ".cline")
    }

    fn state_file(&self) -> PathBuf {
        self.rewind_home.installed()
    }
}

/// The command every hook runs: the binary, quoted for the shell the
/// agents run it through, then `hook --agent NAME`.
pub fn hook_command(bin: &Path, agent: Agent) -> Result<String> {
    let s = bin
        .to_str()
        .ok_or_else(|| anyhow!("the binary path {} is not UTF-8", bin.display()))?;
    Ok(format!("{} hook --agent {}", shell_quote(s), agent.name()))
}

/// `s` in double quotes, with the characters a POSIX shell still expands
/// there escaped.
pub fn shell_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Whether a hook command is one of ours: `BIN hook --agent NAME`, BIN (bare,
/// single- or double-quoted) a path whose file name is `rewind`.
pub fn is_rewind_hook_command(cmd: &str) -> bool {
    let Some((program, rest)) = first_word(cmd.trim_start()) else {
        return false;
    };
    let name = Path::new(&program).file_name().and_then(|n| n.to_str());
    if !matches!(name, Some("rewind" | "rewind.exe")) {
        return false;
    }
    let args: Vec<&str> = rest.split_whitespace().collect();
    matches!(args.as_slice(), ["hook", "--agent", _])
}

/// The first shell word of `s` with its quotes removed, and the rest.
fn first_word(s: &str) -> Option<(String, &str)> {
    let mut word = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => loop {
                match chars.next()? {
                    (_, '"') => break,
                    (_, '\\') => word.push(chars.next()?.1),
                    (_, c) => word.push(c),
                }
            },
            '\'' => loop {
                match chars.next()? {
                    (_, '\'') => break,
                    (_, c) => word.push(c),
                }
            },
            '\\' => word.push(chars.next()?.1),
            c if c.is_whitespace() => return Some((word, &s[i..])),
            c => word.push(c),
        }
    }
    (!word.is_empty()).then_some((word, ""))
}

/// One file's planned change.
#[derive(Debug)]
pub struct Edit {
    pub agent: Agent,
    /// The path as the user knows it.
    pub path: PathBuf,
    /// The file written (symlinks followed).
    target: PathBuf,
    action: Action,
    /// What changed, for people; empty when nothing does.
    pub changes: Vec<String>,
}

#[derive(Debug, PartialEq)]
enum Action {
    Keep,
    Write(String),
    Delete,
}

impl Edit {
    pub fn changed(&self) -> bool {
        self.action != Action::Keep
    }
    pub fn deletes(&self) -> bool {
        self.action == Action::Delete
    }
}

/// What `$REWIND_HOME/installed.json` records: the settings we changed
/// that uninstall cannot recognise by their content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct State {
    /// Gemini CLI settings file → what we did to `hooksConfig.enabled`
    /// ([`gemini::Enabled`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    gemini_hooks_enabled: BTreeMap<String, String>,
    /// The Codex `hooks.json` files holding our hooks, which need the
    /// `[features] hooks` we set (it is undone when the last goes).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    codex_feature_users: BTreeSet<String>,
    /// The directories an install made for a settings or plugin file
    /// (`.claude`, `.github/hooks`, …): uninstall removes them once empty.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    created_dirs: BTreeSet<String>,
}

/// Every edit of one install or uninstall, not yet written.
#[derive(Debug)]
pub struct Plan {
    pub edits: Vec<Edit>,
    state_file: PathBuf,
    state_before: State,
    state_after: State,
}

impl Plan {
    /// Write every changed file (atomically, keeping its permissions),
    /// then the record of what we changed.
    pub fn apply(&self) -> Result<()> {
        let mut after = self.state_after.clone();
        for e in &self.edits {
            match &e.action {
                Action::Keep => {}
                Action::Write(text) => {
                    let made = missing_dirs(&e.target);
                    write_file(&e.target, text.as_bytes())
                        .with_context(|| format!("writing {}", e.path.display()))?;
                    after
                        .created_dirs
                        .extend(made.iter().map(|d| d.to_string_lossy().into_owned()));
                }
                Action::Delete => {
                    fs::remove_file(&e.target)
                        .with_context(|| format!("removing {}", e.path.display()))?;
                    remove_empty_made_dirs(&e.target, &mut after.created_dirs);
                }
            }
        }
        self.write_state(&after)
    }

    fn write_state(&self, after: &State) -> Result<()> {
        if *after == State::default() {
            match fs::remove_file(&self.state_file) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(e)
                        .with_context(|| format!("removing {}", self.state_file.display()))
                }
                _ => {}
            }
        } else if *after != self.state_before {
            let text =
                serde_json::to_string_pretty(after).context("encoding the install record")?;
            write_file(&self.state_file, format!("{text}\n").as_bytes())
                .with_context(|| format!("writing {}", self.state_file.display()))?;
        }
        Ok(())
    }
}

/// The directories above `file` that do not exist yet, deepest first.
fn missing_dirs(file: &Path) -> Vec<PathBuf> {
    file.ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// After `file` was removed: the directories above it that an install made,
/// deepest first, removed while empty (a directory with anything else in it
/// stays, and so does every one above it).
fn remove_empty_made_dirs(file: &Path, made: &mut BTreeSet<String>) {
    for dir in file.ancestors().skip(1) {
        let key = dir.to_string_lossy().into_owned();
        if !made.contains(&key) || fs::remove_dir(dir).is_err() {
            break;
        }
        made.remove(&key);
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let perms = fs::metadata(path).ok().map(|m| m.permissions());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.rewind-{}.tmp", std::process::id()));
    rewind::durability::atomic_write(path, &temp, true, |f| {
        f.write_all(bytes)?;
        if let Some(p) = perms {
            f.set_permissions(p)?;
        }
        Ok(())
    })
}

/// A settings file as read: its text, or `None` if it does not exist.
/// What installing a file of rewind's own says it did.
struct OwnFile<'a> {
    added: String,
    updated: String,
    /// What is in the way when the file is someone else's.
    foreign: &'a str,
}

struct Loaded {
    path: PathBuf,
    target: PathBuf,
    text: Option<String>,
}

fn load(path: &Path) -> Result<Loaded> {
    let target = resolve(path);
    let text = match fs::read(&target) {
        Ok(bytes) => Some(
            String::from_utf8(bytes)
                .map_err(|_| anyhow!("{}: not UTF-8 text; nothing was changed", path.display()))?,
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok(Loaded {
        path: path.to_path_buf(),
        target,
        text,
    })
}

/// `path` with symlinks followed (we edit a symlink's target, not the
/// link), as far as it exists: one settings file has one name in
/// installed.json before and after it is created.
fn resolve(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

impl Loaded {
    fn key(&self) -> String {
        self.target.to_string_lossy().into_owned()
    }

    fn json(&self) -> Result<Json> {
        json_merge::parse(self.text.as_deref().unwrap_or("")).map_err(|e| self.refuse(e))
    }

    fn refuse(&self, why: impl std::fmt::Display) -> anyhow::Error {
        anyhow!(
            "{}: {why}; fix or move the file and try again (nothing was changed)",
            self.path.display()
        )
    }

    /// The edit that writes `root` back (a file that ends up `{}` after an
    /// uninstall is removed).
    fn json_edit(self, agent: Agent, root: &Json, changes: Vec<String>, uninstall: bool) -> Edit {
        let newline = self
            .text
            .as_deref()
            .is_none_or(|t| t.ends_with('\n') || t.trim().is_empty());
        let text = json_merge::print(root, newline);
        let action = if changes.is_empty() || self.text.as_deref() == Some(text.as_str()) {
            Action::Keep
        } else if uninstall && root.is_empty_container() {
            Action::Delete
        } else {
            Action::Write(text)
        };
        self.edit(agent, action, changes)
    }

    /// The edit that installs a file that is rewind's alone (a plugin, a
    /// hook script): written when missing, kept when it is `want`,
    /// rewritten when it is an older one of ours (`is_ours`, said as
    /// `updated`), refused when it is someone else's (`foreign` says what
    /// is in the way).
    fn own_file(
        self,
        agent: Agent,
        want: String,
        is_ours: impl Fn(&str) -> bool,
        said: OwnFile<'_>,
    ) -> Result<Edit> {
        let (action, change) = match self.text.as_deref() {
            None => (Action::Write(want), Some(said.added)),
            Some(t) if t == want => (Action::Keep, None),
            Some(t) if is_ours(t) => (Action::Write(want), Some(said.updated)),
            Some(_) => return Err(self.refuse(said.foreign)),
        };
        Ok(self.edit(agent, action, change.into_iter().collect()))
    }

    /// The edit that uninstalls a file that is rewind's alone: removed when
    /// it is ours (said as `removed`), else left as it is.
    fn remove_own_file(
        self,
        agent: Agent,
        is_ours: impl Fn(&str) -> bool,
        removed: String,
    ) -> Edit {
        match self.text.as_deref() {
            Some(t) if is_ours(t) => self.edit(agent, Action::Delete, vec![removed]),
            _ => self.edit(agent, Action::Keep, Vec::new()),
        }
    }

    fn edit(self, agent: Agent, action: Action, changes: Vec<String>) -> Edit {
        Edit {
            agent,
            path: self.path,
            target: self.target,
            action,
            changes,
        }
    }
}

fn load_state(paths: &Paths) -> Result<State> {
    let file = paths.state_file();
    match fs::read(&file) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{}: not a rewind install record (move it away to start afresh)",
                file.display()
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// The project directory of a `--project` scope, checked and absolute.
fn project_dir(dir: &Path) -> Result<PathBuf> {
    let d = fs::canonicalize(dir).with_context(|| format!("project {}", dir.display()))?;
    if !d.is_dir() {
        bail!("project {} is not a directory", dir.display());
    }
    Ok(d)
}

/// Plan installing the hooks of `agents` in `scope`, each running `bin`.
pub fn plan_install(agents: &[Agent], scope: &Scope, bin: &Path, paths: &Paths) -> Result<Plan> {
    let scope = resolve_scope(scope)?;
    let state_before = load_state(paths)?;
    let mut state = state_before.clone();
    let mut edits = Vec::new();
    for &agent in agents {
        let command = hook_command(bin, agent)?;
        match agent {
            Agent::ClaudeCode => edits.push(claude::install(&scope, paths, &command)?),
            Agent::Codex => edits.extend(codex::install(&scope, paths, &command, &mut state)?),
            Agent::Gemini => edits.push(gemini::install(&scope, paths, &command, &mut state)?),
            Agent::OpenCode | Agent::Kilo => {
                edits.push(opencode::install(agent, &scope, paths, bin)?)
            }
            Agent::Qwen => edits.push(qwen::install(&scope, paths, &command)?),
            Agent::Copilot => edits.push(copilot::install(&scope, paths, &command)?),
            Agent::Droid => edits.push(droid::install(&scope, paths, &command)?),
            Agent::Cline => edits.extend(cline::install(&scope, paths, &command)?),
        }
    }
    Ok(Plan {
        edits,
        state_file: paths.state_file(),
        state_before,
        state_after: state,
    })
}

/// Plan removing rewind's hooks of `agents` from `scope`.
pub fn plan_uninstall(agents: &[Agent], scope: &Scope, paths: &Paths) -> Result<Plan> {
    let scope = resolve_scope(scope)?;
    let state_before = load_state(paths)?;
    let mut state = state_before.clone();
    let mut edits = Vec::new();
    for &agent in agents {
        match agent {
            Agent::ClaudeCode => edits.push(claude::uninstall(&scope, paths)?),
            Agent::Codex => edits.extend(codex::uninstall(&scope, paths, &mut state)?),
            Agent::Gemini => edits.push(gemini::uninstall(&scope, paths, &mut state)?),
            Agent::OpenCode | Agent::Kilo => edits.push(opencode::uninstall(agent, &scope, paths)?),
            Agent::Qwen => edits.push(qwen::uninstall(&scope, paths)?),
            Agent::Copilot => edits.push(copilot::uninstall(&scope, paths)?),
            Agent::Droid => edits.push(droid::uninstall(&scope, paths)?),
            Agent::Cline => edits.extend(cline::uninstall(&scope, paths)?),
        }
    }
    Ok(Plan {
        edits,
        state_file: paths.state_file(),
        state_before,
        state_after: state,
    })
}

fn resolve_scope(scope: &Scope) -> Result<Scope> {
    Ok(match scope {
        Scope::User => Scope::User,
        Scope::Project(d) => Scope::Project(project_dir(d)?),
    })
}

/// One `{"type": "command", "command": CMD, …}` entry per event, in the
/// order given, `fields` adding the agent's own fields (timeout, name).
fn hook_entries(
    events: &[&'static str],
    command: &str,
    fields: impl Fn(&str) -> Vec<(String, Json)>,
) -> Vec<(&'static str, Json)> {
    events
        .iter()
        .map(|&event| {
            let mut entry = vec![
                ("type".to_owned(), Json::str("command")),
                ("command".to_owned(), Json::str(command)),
            ];
            entry.extend(fields(event));
            (event, Json::Object(entry))
        })
        .collect()
}

/// Where a JSON settings file keeps its hook events: under `"hooks"` (Claude
/// Code's shape, which most agents share), or as the file itself (Droid's
/// `hooks.json`). The merge edits a `"hooks"` object either way.
#[derive(Clone, Copy)]
enum HooksAt {
    Key,
    File,
}

impl HooksAt {
    /// The file's JSON as the merge edits it.
    fn open(self, file: Json) -> Json {
        match self {
            HooksAt::Key => file,
            HooksAt::File => Json::Object(vec![("hooks".into(), file)]),
        }
    }

    /// The merged JSON as the file holds it.
    fn close(self, mut root: Json) -> Json {
        match self {
            HooksAt::Key => root,
            HooksAt::File => root.remove("hooks").unwrap_or_else(Json::object),
        }
    }
}

/// Install the hook `entries` into the JSON settings `file`, plus `more`
/// (Gemini's `hooksConfig`).
fn install_json(
    agent: Agent,
    file: &Path,
    entries: &[(&str, Json)],
    command: &str,
    more: impl FnOnce(&Loaded, &mut Json, &mut Vec<String>) -> Result<()>,
) -> Result<Edit> {
    install_hooks(agent, file, HooksAt::Key, entries, command, more)
}

fn install_hooks(
    agent: Agent,
    file: &Path,
    at: HooksAt,
    entries: &[(&str, Json)],
    command: &str,
    more: impl FnOnce(&Loaded, &mut Json, &mut Vec<String>) -> Result<()>,
) -> Result<Edit> {
    let loaded = load(file)?;
    let mut root = at.open(loaded.json()?);
    let results = json_merge::add_hooks(&mut root, entries, command, is_rewind_hook_command)
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
    more(&loaded, &mut root, &mut changes)?;
    Ok(loaded.json_edit(agent, &at.close(root), changes, false))
}

/// Remove our hooks from the JSON settings `file`, plus `more`.
fn uninstall_json(
    agent: Agent,
    file: &Path,
    more: impl FnOnce(&Loaded, &mut Json, &mut Vec<String>) -> Result<()>,
) -> Result<Edit> {
    uninstall_hooks(agent, file, HooksAt::Key, more)
}

fn uninstall_hooks(
    agent: Agent,
    file: &Path,
    at: HooksAt,
    more: impl FnOnce(&Loaded, &mut Json, &mut Vec<String>) -> Result<()>,
) -> Result<Edit> {
    let loaded = load(file)?;
    if loaded.text.is_none() {
        return Ok(loaded.edit(agent, Action::Keep, Vec::new()));
    }
    let mut root = at.open(loaded.json()?);
    let removed = json_merge::remove_hooks(&mut root, is_rewind_hook_command)
        .map_err(|e| loaded.refuse(e))?;
    let mut changes = Vec::new();
    if !removed.is_empty() {
        changes.push(format!("removed hooks {}", removed.join(", ")));
    }
    more(&loaded, &mut root, &mut changes)?;
    Ok(loaded.json_edit(agent, &at.close(root), changes, true))
}

#[cfg(test)]
mod tests;
