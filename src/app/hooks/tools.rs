//! Which of an agent's tools can change files, and which files: a read-only
//! tool costs a hook nothing, a file tool whose paths are known is a scoped
//! snapshot (the `paths` fast path), anything else — a shell, a tool rewind
//! does not know — is a full snapshot.

use serde_json::Value;

use super::payload::Agent;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolEffect {
    /// Reads only: no snapshot.
    ReadOnly,
    /// Writes exactly these paths (as the agent names them: absolute, or
    /// relative to its `cwd`).
    Files(Vec<String>),
    /// May change anything: a full snapshot.
    Anything,
}

/// Tools that never change the project, by agent.
fn read_only(agent: Agent, tool: &str) -> bool {
    match agent {
        Agent::ClaudeCode => matches!(
            tool,
            "Read"
                | "Grep"
                | "Glob"
                | "LS"
                | "NotebookRead"
                | "WebFetch"
                | "WebSearch"
                | "TodoWrite"
                | "TodoRead"
                | "ExitPlanMode"
                | "BashOutput"
                | "KillShell"
                | "KillBash"
                | "ListMcpResourcesTool"
                | "ReadMcpResourceTool"
        ),
        Agent::Codex => matches!(tool, "update_plan" | "view_image" | "web_search"),
        Agent::Gemini => matches!(
            tool,
            "read_file"
                | "read_many_files"
                | "list_directory"
                | "glob"
                | "search_file_content"
                | "grep"
                | "google_web_search"
                | "web_fetch"
                | "save_memory"
                | "write_todos"
        ),
        // Qwen Code 0.24's (`ToolNames` in its bundle).
        Agent::Qwen => matches!(
            tool,
            "read_file"
                | "read_many_files"
                | "list_directory"
                | "glob"
                | "grep_search"
                | "web_fetch"
                | "web_search"
                | "todo_write"
                | "save_memory"
                | "ask_user_question"
                | "exit_plan_mode"
                | "lsp"
                | "skill"
        ),
        // Copilot CLI 1.0.102: Claude Code's names in its Claude-shaped
        // payloads (`Read`, …), its own elsewhere.
        Agent::Copilot => matches!(
            tool,
            "Read"
                | "Grep"
                | "Glob"
                | "view"
                | "grep"
                | "glob"
                | "read_bash"
                | "list_bash"
                | "read_agent"
                | "list_agents"
                | "fetch_copilot_cli_documentation"
        ),
        // Droid 0.215's (the tools its requests offer).
        Agent::Droid => matches!(
            tool,
            "Read"
                | "LS"
                | "Grep"
                | "Glob"
                | "TodoWrite"
                | "WebSearch"
                | "FetchUrl"
                | "AskUser"
                | "ExitSpecMode"
                | "TaskOutput"
                | "ToolSearch"
        ),
        // Cline 3.0.65's (the tools its requests offer).
        Agent::Cline => matches!(
            tool,
            "read_files"
                | "search_codebase"
                | "fetch_web_content"
                | "web_search"
                | "ask_question"
                | "skills"
        ),
        // OpenCode 1.18's built-in tools (Kilo's are OpenCode's).
        Agent::OpenCode | Agent::Kilo => matches!(
            tool,
            "read"
                | "glob"
                | "grep"
                | "list"
                | "todoread"
                | "todowrite"
                | "webfetch"
                | "websearch"
                | "codesearch"
                | "skill"
                | "question"
        ),
    }
}

/// What a tool call can change.
pub fn effect(agent: Agent, tool: &str, input: &Value) -> ToolEffect {
    if read_only(agent, tool) {
        return ToolEffect::ReadOnly;
    }
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_string);
    let paths = match (agent, tool) {
        (Agent::ClaudeCode, "Write" | "Edit" | "MultiEdit") => field("file_path").map(|p| vec![p]),
        (Agent::ClaudeCode, "NotebookEdit") => field("notebook_path").map(|p| vec![p]),
        (Agent::Gemini, "write_file" | "replace") | (Agent::Qwen, "write_file" | "edit") => {
            field("file_path").map(|p| vec![p])
        }
        (Agent::Copilot, "Write" | "Edit" | "create" | "edit") => field("path").map(|p| vec![p]),
        (Agent::Droid, "Create" | "Edit") => field("file_path").map(|p| vec![p]),
        (Agent::OpenCode | Agent::Kilo, "write" | "edit" | "multiedit") => {
            field("filePath").map(|p| vec![p])
        }
        (Agent::OpenCode | Agent::Kilo, "apply_patch" | "patch") => {
            field("patchText").and_then(|patch| patch_paths(&patch))
        }
        (Agent::Cline, "editor") => field("path").map(|p| vec![p]),
        (Agent::Cline, "apply_patch") => field("input").and_then(|patch| patch_paths(&patch)),
        (Agent::Codex, "apply_patch") => {
            // The patch comes as `command` (a string) or, from some
            // versions, as `input`.
            field("command")
                .or_else(|| field("input"))
                .or_else(|| input.as_str().map(str::to_string))
                .and_then(|patch| patch_paths(&patch))
        }
        _ => None,
    };
    match paths {
        Some(p) if !p.is_empty() => ToolEffect::Files(p),
        _ => ToolEffect::Anything,
    }
}

/// The files an `apply_patch` patch adds, updates, deletes or moves to.
/// `None` when the text is not a patch rewind can read (then the tool is
/// treated as able to change anything).
pub fn patch_paths(patch: &str) -> Option<Vec<String>> {
    let mut lines = patch.lines().map(str::trim_end);
    if lines.next()?.trim() != "*** Begin Patch" {
        return None;
    }
    let mut out = Vec::new();
    for line in lines {
        for prefix in [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if let Some(path) = line.strip_prefix(prefix) {
                out.push(path.trim().to_string());
            }
        }
    }
    Some(out)
}

/// The tool's input as recorded in the checkpoint: long strings (a file's
/// whole new content) are cut, so a session file does not grow by every
/// file an agent writes.
pub fn recorded_input(input: &Value) -> Value {
    const KEEP: usize = 200;
    match input {
        Value::String(s) if s.len() > KEEP => {
            let mut end = KEEP;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Value::String(format!("{}… ({} bytes)", &s[..end], s.len()))
        }
        Value::Array(items) => Value::Array(items.iter().map(recorded_input).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), recorded_input(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Cline 3.0.65's tools, as its payloads name them (samples/cline.jsonl).
    #[test]
    fn cline_tools() {
        assert_eq!(
            effect(
                Agent::Cline,
                "editor",
                &json!({"path": "/p/a.txt", "new_text": "x"})
            ),
            ToolEffect::Files(vec!["/p/a.txt".into()])
        );
        let patch =
            "*** Begin Patch\n*** Update File: b.txt\n@@\n-bravo\n+bravo edited\n*** End Patch";
        assert_eq!(
            effect(Agent::Cline, "apply_patch", &json!({ "input": patch })),
            ToolEffect::Files(vec!["b.txt".into()])
        );
        assert_eq!(
            effect(
                Agent::Cline,
                "read_files",
                &json!({"files": [{"path": "/p/b.txt"}]})
            ),
            ToolEffect::ReadOnly
        );
        assert_eq!(
            effect(
                Agent::Cline,
                "run_commands",
                &json!({"commands": ["rm -rf gen"]})
            ),
            ToolEffect::Anything
        );
    }

    #[test]
    fn file_tools_name_their_paths_and_shells_change_anything() {
        let write = json!({"file_path": "/p/a.txt", "content": "x"});
        assert_eq!(
            effect(Agent::ClaudeCode, "Write", &write),
            ToolEffect::Files(vec!["/p/a.txt".into()])
        );
        assert_eq!(
            effect(
                Agent::ClaudeCode,
                "NotebookEdit",
                &json!({"notebook_path": "n.ipynb"})
            ),
            ToolEffect::Files(vec!["n.ipynb".into()])
        );
        assert_eq!(
            effect(Agent::Gemini, "replace", &json!({"file_path": "b.txt"})),
            ToolEffect::Files(vec!["b.txt".into()])
        );
        assert_eq!(
            effect(Agent::ClaudeCode, "Read", &write),
            ToolEffect::ReadOnly
        );
        assert_eq!(
            effect(Agent::Gemini, "read_file", &write),
            ToolEffect::ReadOnly
        );
        assert_eq!(
            effect(Agent::ClaudeCode, "Bash", &json!({"command": "rm -rf x"})),
            ToolEffect::Anything
        );
        assert_eq!(
            effect(Agent::Gemini, "run_shell_command", &json!({})),
            ToolEffect::Anything
        );
        // Unknown tools, and file tools without their path, may change anything.
        assert_eq!(
            effect(Agent::ClaudeCode, "mcp__x__y", &json!({})),
            ToolEffect::Anything
        );
        assert_eq!(
            effect(Agent::ClaudeCode, "Write", &json!({})),
            ToolEffect::Anything
        );
        // Another agent's read-only tool name is not trusted.
        assert_eq!(
            effect(Agent::Codex, "Read", &json!({})),
            ToolEffect::Anything
        );
    }

    #[test]
    fn apply_patch_paths_are_read_from_the_patch() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** Update File: src/b.rs\n@@\n-x\n+y\n*** Move to: src/c.rs\n*** Delete File: old.txt\n*** End Patch";
        assert_eq!(
            effect(Agent::Codex, "apply_patch", &json!({"command": patch})),
            ToolEffect::Files(vec![
                "a.txt".into(),
                "src/b.rs".into(),
                "src/c.rs".into(),
                "old.txt".into()
            ])
        );
        // Not a patch, or a patch naming nothing: anything.
        assert_eq!(
            effect(Agent::Codex, "apply_patch", &json!({"command": "rm -r x"})),
            ToolEffect::Anything
        );
        assert_eq!(
            effect(
                Agent::Codex,
                "apply_patch",
                &json!({"command": "*** Begin Patch\n*** End Patch"})
            ),
            ToolEffect::Anything
        );
    }

    #[test]
    fn long_inputs_are_cut_when_recorded() {
        let big = "é".repeat(500);
        let v = recorded_input(&json!({"file_path": "a", "content": big, "n": [1, "x"]}));
        assert_eq!(v["file_path"], "a");
        assert_eq!(v["n"], json!([1, "x"]));
        let content = v["content"].as_str().unwrap();
        assert!(content.ends_with("… (1000 bytes)"), "{content}");
        assert!(content.len() < 220);
    }
}
