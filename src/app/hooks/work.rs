//! What an event asks of the engine ([`Work`]), and the checkpoint it
//! takes as the engine's snapshot parameters: the event's kind, label, turn
//! and, for a tool, the paths it names relative to the project.

use std::path::{Component, Path};

use crate::app::conversation::Moment;
use rewind::engine::api::{SnapshotKind, SnapshotParams, ToolInfo};
use rewind::repo_path::RepoPath;

use super::payload::{Agent, HookEvent, Step};
use super::tools::{self, ToolEffect};

/// Whether an event needs the engine at all (read-only tools and events
/// rewind ignores do not).
pub fn needs_work(agent: Agent, event: &HookEvent) -> bool {
    work_of(agent, event).is_some()
}

/// What an event asks of the engine; `None`: nothing at all (not even
/// opening the session), as for read-only tools and events rewind ignores.
pub(super) enum Work {
    Open,
    Prompt(String),
    Tool {
        name: String,
        input: serde_json::Value,
        /// Known paths (the fast path), or `None` for a full snapshot.
        paths: Option<Vec<String>>,
    },
    TurnEnd,
}

pub(super) fn work_of(agent: Agent, event: &HookEvent) -> Option<Work> {
    match &event.step {
        Step::SessionStart => Some(Work::Open),
        Step::Prompt(text) => Some(Work::Prompt(text.clone())),
        Step::BeforeTool { tool, input } | Step::AfterTool { tool, input } => {
            let paths = match tools::effect(agent, tool, input) {
                ToolEffect::ReadOnly => return None,
                ToolEffect::Files(p) => Some(p),
                ToolEffect::Anything => None,
            };
            Some(Work::Tool {
                name: tool.clone(),
                input: input.clone(),
                paths,
            })
        }
        Step::TurnEnd => Some(Work::TurnEnd),
        Step::SessionEnd | Step::Other => None,
    }
}

/// A prompt as a checkpoint label: its first line, at most 80 characters.
fn short_label(prompt: &str) -> String {
    let line = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

impl Work {
    /// The moment of the conversation this event's checkpoint stands at
    /// (`None`: the session's opening, which records no conversation).
    pub(super) fn moment(&self) -> Option<Moment<'_>> {
        match self {
            Work::Open => None,
            Work::Prompt(text) => Some(Moment::Prompt(text)),
            Work::Tool { .. } => Some(Moment::Tool),
            Work::TurnEnd => Some(Moment::TurnEnd),
        }
    }

    /// The checkpoint the event takes (`None`: none, the session is only
    /// opened); a prompt starts the next `turn`. Tool paths are made
    /// relative to the project, given as `roots` (canonical and as the
    /// agent spells it), from `cwd`, where the tool ran.
    pub(super) fn snapshot_params(
        self,
        turn: &mut u64,
        roots: &[&Path],
        cwd: &Path,
    ) -> Option<SnapshotParams> {
        match self {
            Work::Open => None,
            Work::Prompt(text) => {
                *turn += 1;
                Some(SnapshotParams {
                    kind: Some(SnapshotKind::Message),
                    // Cline's turn start names no prompt: no label rather
                    // than an empty one.
                    label: (!text.trim().is_empty()).then(|| short_label(&text)),
                    turn_index: Some(*turn),
                    // Every turn's start and end are in the log, changed or
                    // not: they are what a person looks for in `rewind log`.
                    force: Some(true),
                    ..Default::default()
                })
            }
            Work::Tool { name, input, paths } => Some(SnapshotParams {
                kind: Some(SnapshotKind::Tool),
                paths: paths.and_then(|p| relative_paths(roots, cwd, &p)),
                tool: Some(ToolInfo {
                    name,
                    input: Some(tools::recorded_input(&input)),
                }),
                turn_index: Some(*turn),
                ..Default::default()
            }),
            Work::TurnEnd => Some(SnapshotParams {
                kind: Some(SnapshotKind::Turn),
                turn_index: Some(*turn),
                force: Some(true),
                ..Default::default()
            }),
        }
    }
}

/// The agent's paths relative to the project root (given canonical and as
/// the agent spells it); `None` (a full snapshot) when one is outside the
/// project or not plain.
fn relative_paths(roots: &[&Path], cwd: &Path, paths: &[String]) -> Option<Vec<RepoPath>> {
    paths
        .iter()
        .map(|p| {
            let p = Path::new(p);
            let abs = if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd.join(p)
            };
            if abs
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
            {
                return None;
            }
            let rel = roots.iter().find_map(|r| abs.strip_prefix(r).ok())?;
            let rel = rel.to_str()?;
            // A path RepoPath refuses makes the snapshot scan everything.
            RepoPath::parse(rel).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_first_line_cut_at_80_characters() {
        assert_eq!(short_label("\n  fix the bug \nmore"), "fix the bug");
        let long = "é".repeat(100);
        assert_eq!(short_label(&long), format!("{}…", "é".repeat(80)));
    }

    #[test]
    fn agent_paths_become_project_paths_or_a_full_snapshot() {
        let roots = [Path::new("/real/p"), Path::new("/link/p")];
        let cwd = Path::new("/real/p");
        let rel = |p: &[&str]| {
            let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            relative_paths(&roots, cwd, &p)
        };
        assert_eq!(
            rel(&["/real/p/a.txt", "b/c.txt", "/link/p/d"]),
            Some(
                ["a.txt", "b/c.txt", "d"]
                    .map(|p| RepoPath::parse(p).unwrap())
                    .to_vec()
            )
        );
        assert_eq!(rel(&["/elsewhere/x"]), None);
        assert_eq!(rel(&["../x"]), None);
        assert_eq!(rel(&["/real/p"]), None);
        // A tool run in a subdirectory (a shell that `cd`ed).
        let p = vec!["x.txt".to_string()];
        assert_eq!(
            relative_paths(&roots, Path::new("/real/p/sub"), &p),
            Some(vec![RepoPath::parse("sub/x.txt").unwrap()])
        );
    }
}
