//! Codex: `hooks` in `hooks.json` (user: `$CODEX_HOME` or `~/.codex`;
//! project: `DIR/.codex`), the shape Claude Code uses, and
//! `[features] hooks = true` in `$CODEX_HOME/config.toml`, without which
//! Codex runs no hook (as tests/agents/run-agent.mjs, verified with Codex
//! 0.169.0). That one `config.toml` serves the user install and every
//! project install (whether Codex reads feature flags from a project's
//! `.codex/config.toml` was not verified, so we do not rely on it).
//!
//! `config.toml` is edited with `toml_edit`, which keeps its comments and
//! layout. The line we add or change carries a comment saying so
//! ([`MARK_KEY`] and friends); uninstall undoes only a line that carries
//! one, and only once no `hooks.json` that installed rewind's hooks
//! (listed in installed.json) still has them.

use std::path::{Path, PathBuf};

use anyhow::Result;
use toml_edit::{DocumentMut, Item, Table, Value};

use super::json_merge::{self, Json};
use super::{Action, Agent, Edit, Paths, Scope, State};

/// The events we register: Claude Code's names, without PostToolUseFailure
/// (Codex 0.169.0 has no such event: a failed tool still gets PostToolUse).
pub const EVENTS: [&str; 6] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
];

/// Seconds; Codex clamps SessionEnd hooks to 3 s (and warns if asked for
/// more).
fn timeout(event: &str) -> u64 {
    if event == "SessionEnd" {
        3
    } else {
        60
    }
}

/// `hooks = true` was added to an existing `[features]` table.
pub const MARK_KEY: &str = "# added by rewind install";
/// ... with the `[features]` table.
pub const MARK_TABLE: &str = "# added by rewind install with [features]";
/// ... with `config.toml` itself.
pub const MARK_FILE: &str = "# added by rewind install with config.toml";
/// `hooks = false` was set to true.
pub const MARK_WAS_FALSE: &str = "# set to true by rewind install, was false";

pub fn hooks_file(scope: &Scope, paths: &Paths) -> Result<PathBuf> {
    Ok(match scope {
        Scope::Project(dir) => dir.join(".codex/hooks.json"),
        Scope::User => paths.codex_home()?.join("hooks.json"),
    })
}

fn entries(command: &str) -> Vec<(&'static str, Json)> {
    super::hook_entries(&EVENTS, command, |event| {
        vec![("timeout".into(), Json::num(timeout(event)))]
    })
}

pub fn install(
    scope: &Scope,
    paths: &Paths,
    command: &str,
    state: &mut State,
) -> Result<Vec<Edit>> {
    let file = hooks_file(scope, paths)?;
    let hooks = super::install_json(
        Agent::Codex,
        &file,
        &entries(command),
        command,
        |_, _, _| Ok(()),
    )?;
    state
        .codex_feature_users
        .insert(super::resolve(&file).to_string_lossy().into_owned());
    let config = super::load(&paths.codex_home()?.join("config.toml"))?;
    let edit = match enable_feature(config.text.as_deref()).map_err(|e| config.refuse(e))? {
        Some(text) => config.edit(
            Agent::Codex,
            Action::Write(text),
            vec!["set [features] hooks = true".into()],
        ),
        None => config.edit(Agent::Codex, Action::Keep, Vec::new()),
    };
    Ok(vec![hooks, edit])
}

pub fn uninstall(scope: &Scope, paths: &Paths, state: &mut State) -> Result<Vec<Edit>> {
    let file = hooks_file(scope, paths)?;
    let hooks = super::uninstall_json(Agent::Codex, &file, |_, _, _| Ok(()))?;
    state
        .codex_feature_users
        .remove(&*super::resolve(&file).to_string_lossy());
    // Files deleted or emptied by hand since no longer count.
    state
        .codex_feature_users
        .retain(|f| has_rewind_hooks(Path::new(f)));
    let config = super::load(&paths.codex_home()?.join("config.toml"))?;
    let edit = match (&config.text, state.codex_feature_users.first()) {
        (None, _) => config.edit(Agent::Codex, Action::Keep, Vec::new()),
        (Some(_), Some(user)) => {
            let note = format!("kept [features] hooks: {user} still has rewind hooks");
            config.edit(Agent::Codex, Action::Keep, vec![note])
        }
        (Some(text), None) => match disable_feature(text).map_err(|e| config.refuse(e))? {
            Some((action, change)) => config.edit(Agent::Codex, action, vec![change]),
            None => config.edit(Agent::Codex, Action::Keep, Vec::new()),
        },
    };
    Ok(vec![hooks, edit])
}

/// Whether a hooks file (still) holds a rewind hook; an unreadable one
/// counts as holding one.
fn has_rewind_hooks(file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return file.exists();
    };
    let Ok(mut root) = json_merge::parse(&text) else {
        return true;
    };
    json_merge::remove_hooks(&mut root, super::is_rewind_hook_command)
        .map_or(true, |removed| !removed.is_empty())
}

fn marked(v: bool, mark: &str) -> Value {
    let mut value = Value::from(v);
    value.decor_mut().set_suffix(format!(" {mark}"));
    value
}

/// `config.toml`'s text (`None`: no such file) with `[features] hooks =
/// true`, or `None` if it is set already.
pub fn enable_feature(text: Option<&str>) -> Result<Option<String>, String> {
    let mut doc: DocumentMut = text
        .unwrap_or("")
        .parse()
        .map_err(|e| format!("not valid TOML: {e}"))?;
    match doc.get_mut("features") {
        None => {
            let mark = if text.is_none() {
                MARK_FILE
            } else {
                MARK_TABLE
            };
            let mut table = Table::new();
            table.insert("hooks", Item::Value(marked(true, mark)));
            doc.insert("features", Item::Table(table));
        }
        Some(item) => {
            if item.is_inline_table() {
                return Err("`features` is an inline table; make it a [features] table \
                            or add `hooks = true` to it yourself"
                    .into());
            }
            let table = item
                .as_table_like_mut()
                .ok_or("`features` is not a table")?;
            match table.get_mut("hooks") {
                None => {
                    table.insert("hooks", Item::Value(marked(true, MARK_KEY)));
                }
                Some(Item::Value(v)) => match v.as_bool() {
                    Some(true) => return Ok(None),
                    Some(false) => {
                        let prefix = v.decor().prefix().cloned();
                        *v = marked(true, MARK_WAS_FALSE);
                        if let Some(p) = prefix {
                            v.decor_mut().set_prefix(p);
                        }
                    }
                    None => return Err("`features.hooks` is not a boolean".into()),
                },
                Some(_) => return Err("`features.hooks` is not a boolean".into()),
            }
        }
    }
    Ok(Some(doc.to_string()))
}

/// Undo what [`enable_feature`] did, as its mark says: the new text (or
/// removal of a file we created and that is empty again) and what changed;
/// `None` when `hooks` carries no mark of ours.
pub fn disable_feature(text: &str) -> Result<Option<(Action, String)>, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not valid TOML: {e}"))?;
    let Some(table) = doc.get_mut("features").and_then(Item::as_table_like_mut) else {
        return Ok(None);
    };
    let Some(Item::Value(v)) = table.get_mut("hooks") else {
        return Ok(None);
    };
    let mark = v
        .decor()
        .suffix()
        .and_then(|s| s.as_str())
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let change = match mark.as_str() {
        MARK_WAS_FALSE => {
            let prefix = v.decor().prefix().cloned();
            *v = Value::from(false);
            if let Some(p) = prefix {
                v.decor_mut().set_prefix(p);
            }
            "set [features] hooks back to false"
        }
        MARK_KEY | MARK_TABLE | MARK_FILE => {
            table.remove("hooks");
            if mark != MARK_KEY && table.is_empty() {
                doc.remove("features");
            }
            "removed [features] hooks"
        }
        _ => return Ok(None),
    };
    let out = doc.to_string();
    let action = if mark == MARK_FILE && out.trim().is_empty() {
        Action::Delete
    } else {
        Action::Write(out)
    };
    Ok(Some((action, change.into())))
}
