//! One event, one recording: the hooks of rewind's Claude Code plugin and
//! Gemini CLI extension run `rewind hook --agent NAME --plugin`, and such a
//! hook stands down for an event that the agent's settings files already
//! hand to `rewind hook` (what `rewind install` writes, recognised by
//! [`is_rewind_hook_command`]). The agent runs both (plugin hooks and
//! settings hooks are merged, not deduplicated across sources), so without
//! this a person who installed both ways would get every checkpoint twice.
//! The settings files win because they are the explicit choice: a plugin is
//! often rolled out to a whole team, settings are someone's own.
//!
//! Only the files the agent reads for the project the hook names are looked
//! at: Claude Code's user `settings.json` (`$CLAUDE_CONFIG_DIR` or
//! `~/.claude`) and the project's `.claude/settings.json` and
//! `.claude/settings.local.json`; Gemini CLI's `~/.gemini/settings.json` and
//! the project's `.gemini/settings.json`; Codex's `hooks.json` (user and
//! project). An unreadable or malformed file counts as not covering the
//! event: the plugin records it then, rather than nobody.

use std::path::{Path, PathBuf};

use super::json_merge::{self, Json};
use super::{claude, codex, gemini, is_rewind_hook_command, Agent, Paths, Scope};
use crate::app::hooks::{project_dir, HookEvent};

/// The settings files of `agent` that can hold hooks for `project`.
fn settings_files(agent: Agent, project: &Path, paths: &Paths) -> Vec<PathBuf> {
    let project_scope = Scope::Project(project.to_path_buf());
    let files = match agent {
        Agent::ClaudeCode => vec![
            claude::settings_file(&Scope::User, paths).ok(),
            claude::settings_file(&project_scope, paths).ok(),
            Some(project.join(".claude/settings.local.json")),
        ],
        Agent::Gemini => vec![
            gemini::settings_file(&Scope::User, paths).ok(),
            gemini::settings_file(&project_scope, paths).ok(),
        ],
        Agent::Codex => vec![
            codex::hooks_file(&Scope::User, paths).ok(),
            codex::hooks_file(&project_scope, paths).ok(),
        ],
        // No rewind plugin of theirs runs `--plugin`.
        Agent::OpenCode
        | Agent::Kilo
        | Agent::Qwen
        | Agent::Copilot
        | Agent::Droid
        | Agent::Cline => vec![],
    };
    files.into_iter().flatten().collect()
}

/// Whether the hooks object of a settings file runs `rewind hook` at
/// `event`: `{"hooks": {EVENT: [{"hooks": [{"command": …}]}]}}`.
fn runs_rewind_at(root: &Json, event: &str) -> bool {
    let Some(Json::Array(groups)) = root.get("hooks").and_then(|h| h.get(event)) else {
        return false;
    };
    groups.iter().any(|group| match group.get("hooks") {
        Some(Json::Array(entries)) => entries.iter().any(|e| {
            e.get("command")
                .and_then(Json::as_str)
                .is_some_and(is_rewind_hook_command)
        }),
        _ => false,
    })
}

fn file_runs_rewind_at(file: &Path, event: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    json_merge::parse(&text).is_ok_and(|root| runs_rewind_at(&root, event))
}

/// Whether a plugin's hook should leave `event` to the hook that `rewind
/// install` put in the agent's settings.
pub fn settings_record(agent: Agent, event: &HookEvent, paths: &Paths) -> bool {
    let project = project_dir(agent, event);
    settings_files(agent, &project, paths)
        .iter()
        .any(|f| file_runs_rewind_at(f, &event.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::hooks::payload::Step;
    use rewind::store::Home;

    fn paths(home: &Path) -> Paths {
        Paths {
            home: Some(home.to_path_buf()),
            codex_home: None,
            claude_config_dir: None,
            xdg_config_home: None,
            copilot_home: None,
            cline_dir: None,
            rewind_home: Home::new(home.join("rewind")),
        }
    }

    fn payload(project: &Path, event: &str) -> HookEvent {
        HookEvent {
            name: event.to_string(),
            session_id: "s".into(),
            cwd: project.display().to_string(),
            transcript_path: None,
            source: None,
            step: Step::Other,
        }
    }

    #[test]
    fn stands_down_only_for_events_the_settings_record() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let p = paths(home.path());
        let stop = payload(project.path(), "Stop");
        let start = payload(project.path(), "SessionStart");
        for agent in Agent::ALL {
            assert!(!settings_record(agent, &stop, &p));
        }
        // A foreign hook at Stop, ours at SessionStart only.
        let dir = project.path().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("settings.local.json"),
            r#"{"hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "echo rewind hook --agent claude-code"}]}],
                "SessionStart": [{"hooks": [{"type": "command", "command": "\"/opt/x/rewind\" hook --agent claude-code"}]}]
            }}"#,
        )
        .unwrap();
        assert!(!settings_record(Agent::ClaudeCode, &stop, &p));
        assert!(settings_record(Agent::ClaudeCode, &start, &p));
        assert!(!settings_record(Agent::Gemini, &start, &p));
        // What `rewind install gemini` writes, in the user's settings.
        let bin = Path::new("/usr/bin/rewind");
        let plan = super::super::plan_install(&[Agent::Gemini], &Scope::User, bin, &p).unwrap();
        plan.apply().unwrap();
        let after_tool = payload(project.path(), "AfterTool");
        assert!(settings_record(Agent::Gemini, &after_tool, &p));
        assert!(!settings_record(
            Agent::Gemini,
            &payload(project.path(), "BeforeModel"),
            &p
        ));
        // Malformed settings: the plugin records.
        std::fs::write(dir.join("settings.local.json"), "{ not json").unwrap();
        assert!(!settings_record(Agent::ClaudeCode, &start, &p));
    }
}
