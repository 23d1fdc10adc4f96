//! `rewind install --mcp`: each agent's MCP registration beside what is
//! there, and its removal.

use super::*;

fn mcp(e: &Env, agents: &[Agent], scope: &Scope, install: bool) -> Plan {
    let plan =
        mcp::plan(agents, scope, install.then_some(Path::new(BIN)), &e.paths).expect("plan mcp");
    plan.apply().expect("apply mcp");
    plan
}

#[test]
fn mcp_registration_keeps_foreign_entries_and_uninstall_restores_the_files() {
    let e = env();
    let gemini = e.root.join("home/.gemini/settings.json");
    let gemini_before = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-server\"\n    }\n  }\n}\n";
    write(&gemini, gemini_before);
    let codex = e.root.join("home/.codex/config.toml");
    let codex_before =
        "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other-server\"\n";
    write(&codex, codex_before);
    let claude = e.root.join("home/.claude.json");
    write(&claude, CLAUDE_FOREIGN);

    let all: Vec<Agent> = Agent::ALL.to_vec();
    let plan = mcp(&e, &all, &Scope::User, true);
    assert!(plan.edits.iter().all(|x| x.changed()), "{plan:?}");
    let g: serde_json::Value = serde_json::from_str(&read(&gemini)).expect("gemini json");
    assert_eq!(
        g["mcpServers"]["rewind"],
        serde_json::json!({"command": BIN, "args": ["mcp"]})
    );
    assert_eq!(g["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(g["theme"], "dark");
    let c: serde_json::Value = serde_json::from_str(&read(&claude)).expect("claude json");
    assert_eq!(
        c["mcpServers"]["rewind"],
        serde_json::json!({"type": "stdio", "command": BIN, "args": ["mcp"]})
    );
    assert_eq!(c["model"], "opus");
    let t = read(&codex);
    assert!(t.starts_with(codex_before), "{t}");
    let doc: toml_edit::DocumentMut = t.parse().expect("toml");
    assert_eq!(doc["mcp_servers"]["rewind"]["command"].as_str(), Some(BIN));
    assert_eq!(
        doc["mcp_servers"]["rewind"]["args"]
            .as_array()
            .and_then(|a| a.get(0))
            .and_then(|v| v.as_str()),
        Some("mcp")
    );
    let env_vars: Vec<&str> = doc["mcp_servers"]["rewind"]["env_vars"]
        .as_array()
        .expect("env_vars")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(env_vars, ["REWIND_HOME", "XDG_DATA_HOME"]);

    // Twice changes nothing.
    let again = mcp(&e, &all, &Scope::User, true);
    assert!(again.edits.iter().all(|x| !x.changed()), "{again:?}");

    mcp(&e, &all, &Scope::User, false);
    assert_eq!(read(&gemini), gemini_before);
    assert_eq!(read(&codex), codex_before);
    assert_eq!(read(&claude), CLAUDE_FOREIGN);
    // The hooks' settings were never touched.
    assert!(!e.root.join("home/.claude/settings.json").exists());
}

#[test]
fn mcp_project_files_are_created_and_removed_and_codex_projects_are_refused() {
    let e = env();
    mcp(&e, &[Agent::ClaudeCode, Agent::Gemini], &e.project(), true);
    let claude = e.root.join("project/.mcp.json");
    let gemini = e.root.join("project/.gemini/settings.json");
    assert!(read(&claude).contains("\"rewind\""));
    assert!(read(&gemini).contains("\"rewind\""));
    let un = mcp(&e, &[Agent::ClaudeCode, Agent::Gemini], &e.project(), false);
    assert!(un.edits.iter().all(|x| x.deletes()), "{un:?}");
    assert!(!claude.exists() && !gemini.exists());

    let err = mcp::plan(
        &[Agent::Codex],
        &e.project(),
        Some(Path::new(BIN)),
        &e.paths,
    )
    .expect_err("codex project");
    assert!(format!("{err:#}").contains("without --project"));
}

#[test]
fn a_foreign_rewind_mcp_server_is_refused_not_replaced() {
    let e = env();
    let gemini = e.root.join("home/.gemini/settings.json");
    let foreign =
        "{\"mcpServers\": {\"rewind\": {\"command\": \"npx\", \"args\": [\"rewind-mcp\"]}}}";
    write(&gemini, foreign);
    for install in [true, false] {
        let err = mcp::plan(
            &[Agent::Gemini],
            &Scope::User,
            install.then_some(Path::new(BIN)),
            &e.paths,
        )
        .expect_err("foreign server");
        assert!(format!("{err:#}").contains("did not write"), "{err:#}");
    }
    assert_eq!(read(&gemini), foreign);
    let err = mcp::codex_toml(
        Some("[mcp_servers.rewind]\ncommand = \"/usr/bin/rewind\"\nargs = [\"serve\"]\n"),
        Some(BIN),
    )
    .expect_err("foreign toml server");
    assert!(err.contains("did not write"), "{err}");
    // Ours, at another path: pointed at this binary.
    let (text, what) = mcp::codex_toml(
        Some("[mcp_servers.rewind]\ncommand = \"/old/rewind\"\nargs = [\"mcp\"]\n"),
        Some(BIN),
    )
    .expect("ours")
    .expect("a change");
    assert!(what.contains("pointed"), "{what}");
    assert!(text.contains(BIN), "{text}");
    assert!(!text.contains("/old/rewind"), "{text}");
    // Ours, from before env_vars: given them.
    let (text, what) = mcp::codex_toml(
        Some(&format!(
            "[mcp_servers.rewind]\ncommand = \"{BIN}\"\nargs = [\"mcp\"]\n"
        )),
        Some(BIN),
    )
    .expect("ours")
    .expect("a change");
    assert!(what.contains("REWIND_HOME"), "{what}");
    assert!(
        text.contains("env_vars = [\"REWIND_HOME\", \"XDG_DATA_HOME\"]"),
        "{text}"
    );
}

#[test]
fn opencode_mcp_server_merges_into_opencode_json() {
    let e = env();
    let config = e.root.join("project/opencode.json");
    let before = "{\n  \"model\": \"x/y\",\n  \"mcp\": {\n    \"other\": {\n      \"type\": \"remote\",\n      \"url\": \"http://h\"\n    }\n  }\n}\n";
    write(&config, before);
    let plan = mcp(&e, &[Agent::OpenCode], &e.project(), true);
    assert!(plan.edits[0].changed());
    let v: serde_json::Value = serde_json::from_str(&read(&config)).expect("json");
    assert_eq!(
        v["mcp"]["rewind"],
        serde_json::json!({"type": "local", "command": [BIN, "mcp"], "enabled": true})
    );
    assert_eq!(v["mcp"]["other"]["url"], "http://h");
    assert!(!mcp(&e, &[Agent::OpenCode], &e.project(), true).edits[0].changed());
    mcp(&e, &[Agent::OpenCode], &e.project(), false);
    assert_eq!(read(&config), before);
}

/// Droid's `.factory/mcp.json` and Copilot CLI's `mcp-config.json` /
/// `.github/mcp.json`, each as the agent's own `mcp add` writes it (Droid
/// 0.215.0, Copilot CLI 1.0.102), beside the user's servers; `file` is
/// the agent's user file in `home/`.
fn user_mcp_file_keeps_other_servers(
    agent: Agent,
    file: &str,
    foreign: &str,
    ours: serde_json::Value,
) {
    let e = env();
    let file = e.root.join("home").join(file);
    write(&file, foreign);
    let plan = mcp(&e, &[agent], &Scope::User, true);
    assert!(plan.edits[0].changed(), "{plan:?}");
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["mcpServers"]["rewind"], ours, "{agent}");
    assert!(v["mcpServers"]["other"].is_object(), "{agent}: {v}");
    assert!(!mcp(&e, &[agent], &Scope::User, true).edits[0].changed());
    let un = mcp(&e, &[agent], &Scope::User, false);
    assert!(un.edits[0].changed(), "{un:?}");
    assert_eq!(read(&file), foreign, "{agent}");
    // Uninstalled twice: nothing to do.
    assert!(!mcp(&e, &[agent], &Scope::User, false).edits[0].changed());
}

#[test]
fn droid_mcp_server_goes_into_factory_mcp_json() {
    let foreign = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"other-server\",\n      \"args\": [],\n      \"disabled\": false\n    }\n  }\n}\n";
    let ours = serde_json::json!({"type": "stdio", "command": BIN, "args": ["mcp"]});
    user_mcp_file_keeps_other_servers(Agent::Droid, ".factory/mcp.json", foreign, ours.clone());
    // A project's: created, then removed again.
    let e = env();
    mcp(&e, &[Agent::Droid], &e.project(), true);
    let file = e.root.join("project/.factory/mcp.json");
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["mcpServers"]["rewind"], ours);
    let un = mcp(&e, &[Agent::Droid], &e.project(), false);
    assert!(un.edits[0].deletes(), "{un:?}");
    assert!(!file.exists());
}

#[test]
fn copilot_mcp_server_goes_into_mcp_config_json() {
    let foreign = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"tools\": [\n        \"*\"\n      ],\n      \"type\": \"local\",\n      \"command\": \"other-server\",\n      \"args\": []\n    }\n  }\n}\n";
    let ours =
        serde_json::json!({"type": "local", "command": BIN, "args": ["mcp"], "tools": ["*"]});
    user_mcp_file_keeps_other_servers(
        Agent::Copilot,
        ".copilot/mcp-config.json",
        foreign,
        ours.clone(),
    );
    // $COPILOT_HOME/mcp-config.json when it is set.
    let e = env();
    let mut paths = e.paths.clone();
    paths.copilot_home = Some(e.root.join("copilot-home"));
    let bin = Path::new(BIN);
    mcp::plan(&[Agent::Copilot], &Scope::User, Some(bin), &paths)
        .unwrap()
        .apply()
        .unwrap();
    assert!(e.root.join("copilot-home/mcp-config.json").exists());
    assert!(!e.root.join("home/.copilot").exists());
    // A project's: .github/mcp.json (not Claude Code's .mcp.json), created
    // and removed again; a foreign `rewind` there is refused.
    mcp(&e, &[Agent::Copilot], &e.project(), true);
    let file = e.root.join("project/.github/mcp.json");
    let v: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
    assert_eq!(v["mcpServers"]["rewind"], ours);
    assert!(!e.root.join("project/.mcp.json").exists());
    let un = mcp(&e, &[Agent::Copilot], &e.project(), false);
    assert!(un.edits[0].deletes(), "{un:?}");
    assert!(!file.exists());
    let theirs = "{\"mcpServers\": {\"rewind\": {\"type\": \"local\", \"command\": \"npx\", \"args\": [\"rewind-mcp\"]}}}";
    write(&file, theirs);
    let err = mcp::plan(&[Agent::Copilot], &e.project(), Some(bin), &e.paths)
        .expect_err("foreign server");
    assert!(format!("{err:#}").contains("did not write"), "{err:#}");
    assert_eq!(read(&file), theirs);
}

#[test]
fn cline_mcp_server_goes_into_cline_mcp_settings_json() {
    let foreign = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"transport\": {\n        \"type\": \"stdio\",\n        \"command\": \"other-server\",\n        \"args\": []\n      }\n    }\n  }\n}\n";
    let ours = serde_json::json!({"transport": {"type": "stdio", "command": BIN, "args": ["mcp"]}});
    user_mcp_file_keeps_other_servers(
        Agent::Cline,
        ".cline/data/settings/cline_mcp_settings.json",
        foreign,
        ours,
    );
    // $CLINE_DIR/data/settings/… when it is set; no project's file.
    let e = env();
    let mut paths = e.paths.clone();
    paths.cline_dir = Some(e.root.join("cline-home"));
    let bin = Path::new(BIN);
    mcp::plan(&[Agent::Cline], &Scope::User, Some(bin), &paths)
        .unwrap()
        .apply()
        .unwrap();
    assert!(e
        .root
        .join("cline-home/data/settings/cline_mcp_settings.json")
        .exists());
    let err =
        mcp::plan(&[Agent::Cline], &e.project(), Some(bin), &e.paths).expect_err("cline project");
    assert!(format!("{err:#}").contains("without --project"), "{err:#}");
    assert!(!mcp::has_project_file(Agent::Cline) && !mcp::has_project_file(Agent::Codex));
    // Ours in Cline's shape is known as ours; someone else's is refused.
    let file = e
        .root
        .join("home/.cline/data/settings/cline_mcp_settings.json");
    let theirs = "{\"mcpServers\": {\"rewind\": {\"transport\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"rewind-mcp\"]}}}}";
    write(&file, theirs);
    let err =
        mcp::plan(&[Agent::Cline], &Scope::User, Some(bin), &e.paths).expect_err("foreign server");
    assert!(format!("{err:#}").contains("did not write"), "{err:#}");
    assert_eq!(read(&file), theirs);
}
