//! rewind's MCP tools inside the real Claude Code, Codex and Gemini CLI
//! (versions pinned in tests/agents/package-lock.json), offline against the
//! scripted model server: the agent lists the checkpoints its hooks
//! recorded, asks for a restore, gets the plan, confirms it with the token
//! and the files come back; a token made stale by a file changed between
//! plan and confirm writes nothing; `undo` (no arguments) undoes the last
//! turn that changed files (tests/agents/scenarios/mcp.json).
//!
//! Each agent gets rewind the way its users would: Claude Code through the
//! plugin (`claude plugin marketplace add <checkout>` + `claude plugin
//! install rewind@rewind`) and through `rewind install claude-code
//! --project --mcp`; Gemini CLI through `gemini extensions install
//! clients/gemini-extension`; Codex through `rewind install codex --project`
//! and `rewind install codex --mcp`; Qwen Code, OpenCode, Kilo, Droid,
//! Copilot CLI and Cline through `rewind install AGENT --project` and `rewind install
//! AGENT --mcp` (Droid's headless turns carry no turn numbers: it runs the
//! first four turns, `check_mcp_session`). The plugin and the extension are
//! uninstalled at the end: the agent's settings are as they were, and a new
//! session records nothing. The plugin's slash commands run as typed
//! (tests/agents/scenarios/commands.json).
//!
//! Needs `npm ci` in tests/agents, like agents_e2e.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents_e2e::{
    agent_installed, agents_dir, agents_installed, passed, plugin_source, rewind, run_agent,
    turn_sessions, StopServer,
};

/// Run tests/agents/run-agent.mjs without hook settings of its own (the
/// project has rewind's, or the plugin brings them); its summary.
fn drive(
    agent: &str,
    project: &Path,
    out: &Path,
    home: &Path,
    script: &str,
    turns: u32,
    extra: &[&str],
) -> Value {
    let started = std::time::Instant::now();
    let result = run_agent(agent, project, out, home)
        .arg("--turns")
        .arg(turns.to_string())
        .arg("--script")
        .arg(agents_dir().join("scenarios").join(script))
        .args(extra)
        .output()
        .unwrap();
    let summary = passed(&format!("{agent} {script}"), &result);
    eprintln!(
        "{agent}: {script}, {turns} turns in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    summary
}

/// The outputs of a turn's tool results, in order.
fn results(summary: &Value, turn: usize) -> Vec<String> {
    summary["turns"][turn - 1]["tool_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["output"].as_str().unwrap_or("").to_string())
        .collect()
}

/// What tests/agents/scenarios/mcp.json must show beyond its per-turn file
/// checks (which run-agent makes: a.txt and b.txt back after turn 3,
/// nothing written in turn 4, c.txt gone after turn 5).
///
/// `turns`: 5, or 4 for Droid, whose headless turns carry no turn numbers
/// (`droid exec` fires no prompt hook, tests/integration/agents_e2e.rs
/// `droid`): all its checkpoints are turn 0, and the `undo` of turn 5
/// would undo the whole session.
fn check_mcp_session(agent: &str, summary: &Value, home: &Path, project: &Path, turns: usize) {
    for turn in 3..=turns {
        let calls = summary["turns"][turn - 1]["model_requests"].to_string();
        for tool in match turn {
            5 => &["undo"][..],
            _ => &["list_checkpoints", "restore"][..],
        } {
            assert!(
                calls.contains(tool),
                "{agent}: turn {turn} did not call {tool}: {calls}"
            );
        }
    }
    let executed = |out: &str| out.contains("\"executed\":true") || out.contains(" done: ");
    let planned = |out: &str| out.contains("\"executed\":false") || out.contains(" would ");
    // Turn 3: the plan, then the confirmed restore.
    let r3 = results(summary, 3);
    let n = r3.len();
    assert!(planned(&r3[n - 2]), "{agent}: turn 3 plan: {r3:?}");
    assert!(executed(&r3[n - 1]), "{agent}: turn 3 confirm: {r3:?}");
    // Turn 4: the confirm with the stale token wrote nothing (run-agent
    // checked the files; the answer says so, as far as the summary keeps
    // it: outputs are cut at 300 characters, and Gemini wraps a tool error
    // in its own words first).
    let r4 = results(summary, 4);
    let last = &r4[r4.len() - 1];
    assert!(
        last.contains("NOT executed")
            || last.contains("\"executed\":false")
            || (last.contains("reported tool error") && last.contains("NOT")),
        "{agent}: turn 4 stale token: {r4:?}"
    );
    // Turn 5: undo of turn 4 (it created c.txt), confirmed.
    if turns >= 5 {
        let r5 = results(summary, 5);
        assert!(executed(&r5[r5.len() - 1]), "{agent}: turn 5 undo: {r5:?}");
    }
    // The hooks recorded one session with every turn; nothing failed.
    let sessions = if turns >= 5 {
        turn_sessions(home).len()
    } else {
        // Droid 0.215.0 also starts a session that records nothing but
        // its baseline.
        store_state(home)
            .keys()
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .filter(|p| {
                std::fs::read_to_string(p)
                    .unwrap()
                    .contains("\"kind\":\"turn\"")
            })
            .count()
    };
    assert_eq!(sessions, 1, "{agent}");
    let status = rewind(home, project, &["status"]);
    assert!(status.contains("no failures recorded"), "{agent}: {status}");
    let log = rewind(home, project, &["log"]);
    if turns >= 5 {
        assert!(log.contains("turn   5"), "{agent}: {log}");
    } else {
        // A turn's end per run: `* ID turn N turn ...`.
        let ends = log
            .lines()
            .filter(|l| l.split_whitespace().nth(4) == Some("turn"))
            .count();
        assert_eq!(ends, turns, "{agent}: {log}");
    }
}

/// Every file in the store's session directories, with its size: what a
/// session that records nothing leaves as it was.
pub(crate) fn store_state(home: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    for project in std::fs::read_dir(home.join("projects")).unwrap().flatten() {
        for f in std::fs::read_dir(project.path().join("sessions"))
            .unwrap()
            .flatten()
        {
            out.insert(f.path(), f.metadata().unwrap().len());
        }
    }
    out
}

/// A settings file's JSON (absent: `{}`).
fn settings_json(v: &Value) -> Value {
    match v.as_str() {
        Some(text) => serde_json::from_str(text).unwrap(),
        None => serde_json::json!({}),
    }
}

/// After the uninstall the agent's settings are as before the install,
/// and a new session records nothing. `leftovers`: keys the agent itself
/// leaves behind, empty, when it removes its last plugin.
fn check_uninstalled(
    agent: &str,
    summary: &Value,
    home: &Path,
    project: &Path,
    out: &Path,
    leftovers: &[&str],
) {
    let before = summary["settings_before_install"].as_object().unwrap();
    let after = summary["settings_after_uninstall"].as_object().unwrap();
    for (file, was) in before {
        let now = &after[file];
        if leftovers.is_empty() {
            assert_eq!(now, was, "{agent}: {file} changed");
            continue;
        }
        let mut now_json = settings_json(now);
        if let Some(o) = now_json.as_object_mut() {
            for key in leftovers {
                if o.get(*key) == Some(&serde_json::json!({})) {
                    o.remove(*key);
                }
            }
        }
        assert_eq!(now_json, settings_json(was), "{agent}: {file} changed");
    }
    let stored = store_state(home);
    drive(agent, project, out, home, "mcp.json", 1, &[]);
    assert_eq!(
        store_state(home),
        stored,
        "{agent}: a session after the uninstall was recorded"
    );
}

#[test]
fn claude_code_plugin_mcp_then_uninstall() {
    if !agents_installed() {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let _stop = StopServer {
        home: home.path(),
        project: &root,
    };
    let source = plugin_source("claude");
    let summary = drive(
        "claude",
        &root,
        out.path(),
        home.path(),
        "mcp.json",
        5,
        &[
            "--install-plugin",
            source.to_str().unwrap(),
            "--uninstall-plugin",
        ],
    );
    let calls = summary["turns"][2]["model_requests"].to_string();
    assert!(
        calls.contains("mcp__plugin_rewind_rewind__restore"),
        "the plugin's MCP server: {calls}"
    );
    check_mcp_session("claude", &summary, home.path(), &root, 5);
    // Claude Code 2.1.331 leaves `enabledPlugins` and
    // `extraKnownMarketplaces` behind, empty, in the user's settings.
    check_uninstalled(
        "claude",
        &summary,
        home.path(),
        &root,
        out.path(),
        &["enabledPlugins", "extraKnownMarketplaces"],
    );
}

#[test]
fn claude_code_plugin_slash_commands() {
    if !agents_installed() {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let _stop = StopServer {
        home: home.path(),
        project: &root,
    };
    let source = plugin_source("claude");
    drive(
        "claude",
        &root,
        out.path(),
        home.path(),
        "commands.json",
        11,
        // README.md's one command: `claude plugin install rewind
        // --marketplace <checkout>`.
        &["--install-plugin-at", source.to_str().unwrap(), "--dump"],
    );
    // Each command reached the model as the plugin wrote it.
    let mut bodies = String::new();
    for f in std::fs::read_dir(out.path().join("requests"))
        .unwrap()
        .flatten()
    {
        bodies.push_str(&std::fs::read_to_string(f.path()).unwrap());
    }
    for phrase in [
        "Revert the turn whose number the arguments give",
        "Undo with rewind, in two steps",
        "Restore one file with rewind",
        "show the turns",
        "Show what one turn of this session changed",
    ] {
        assert!(bodies.contains(phrase), "no request carried {phrase:?}");
    }
    let status = rewind(home.path(), &root, &["status"]);
    assert!(status.contains("no failures recorded"), "{status}");
}

/// An agent whose hooks and MCP server `setup` installs (a shell line, given
/// the project) runs the MCP scenario in a new project and home: its third
/// turn calls rewind's restore (a tool name holding `called`) and the
/// session is checked; then `after(home, project)`, before the hook server
/// is stopped.
fn mcp_scenario(
    agent: &str,
    setup: impl FnOnce(&Path) -> String,
    called: &str,
    after: impl FnOnce(&Path, &Path),
) {
    mcp_scenario_turns(agent, 5, setup, called, after)
}

/// [`mcp_scenario`] with its first `turns` turns (see [`check_mcp_session`]).
fn mcp_scenario_turns(
    agent: &str,
    turns: u32,
    setup: impl FnOnce(&Path) -> String,
    called: &str,
    after: impl FnOnce(&Path, &Path),
) {
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let _stop = StopServer {
        home: home.path(),
        project: &root,
    };
    let setup = setup(&root);
    let summary = drive(
        agent,
        &root,
        out.path(),
        home.path(),
        "mcp.json",
        turns,
        &["--setup-cmd", &setup],
    );
    let calls = summary["turns"][2]["model_requests"].to_string();
    assert!(calls.contains(called), "{setup}: {calls}");
    check_mcp_session(agent, &summary, home.path(), &root, turns as usize);
    after(home.path(), &root);
}

#[test]
fn claude_code_install_mcp() {
    if !agents_installed() {
        return;
    }
    // `rewind install claude-code --mcp`, into the project's .mcp.json and
    // into the user's $CLAUDE_CONFIG_DIR/.claude.json.
    for scope in ["project", "user"] {
        let setup = |root: &Path| {
            let hooks = format!("rewind install claude-code --project '{}'", root.display());
            let mcp = match scope {
                "project" => format!(
                    "rewind install claude-code --mcp --project '{}'",
                    root.display()
                ),
                _ => "rewind install claude-code --mcp".to_string(),
            };
            format!("{hooks} && {mcp}")
        };
        mcp_scenario("claude", setup, "mcp__rewind__restore", |_, _| {});
    }
}

#[test]
fn codex_install_mcp() {
    if !agents_installed() {
        return;
    }
    let setup = |root: &Path| {
        format!(
            "rewind install codex --project '{}' && rewind install codex --mcp",
            root.display()
        )
    };
    mcp_scenario("codex", setup, "mcp__rewind.restore", |_, _| {});
}

#[test]
fn gemini_cli_extension_mcp_then_uninstall() {
    if !agents_installed() {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let _stop = StopServer {
        home: home.path(),
        project: &root,
    };
    let source = plugin_source("gemini");
    let summary = drive(
        "gemini",
        &root,
        out.path(),
        home.path(),
        "mcp.json",
        5,
        &[
            "--install-plugin",
            source.to_str().unwrap(),
            "--uninstall-plugin",
        ],
    );
    let calls = summary["turns"][2]["model_requests"].to_string();
    assert!(calls.contains("mcp_rewind_restore"), "{calls}");
    check_mcp_session("gemini", &summary, home.path(), &root, 5);
    check_uninstalled("gemini", &summary, home.path(), &root, out.path(), &[]);
}

/// OpenCode or Kilo with `rewind install AGENT --project` (the plugin) and
/// `--mcp --project` (`mcp.rewind` in the project's opencode.json or
/// kilo.json); uninstalling both leaves neither file.
fn plugin_agent_install_mcp(agent: &str, config: &str, plugin: &str) {
    let setup = |root: &Path| {
        format!(
            "rewind install {agent} --project '{0}' && rewind install {agent} --mcp --project '{0}'",
            root.display()
        )
    };
    mcp_scenario(agent, setup, "rewind_restore", |home, root| {
        let project_arg = root.to_str().unwrap();
        rewind(
            home,
            root,
            &["uninstall", agent, "--mcp", "--project", project_arg],
        );
        rewind(home, root, &["uninstall", agent, "--project", project_arg]);
        crate::agents_e2e::assert_nothing_of_ours(agent, &root.join(config));
        assert!(!root.join(plugin).exists(), "{agent}: {plugin}");
    });
}

#[test]
fn opencode_install_mcp() {
    if agent_installed("opencode") {
        plugin_agent_install_mcp("opencode", "opencode.json", ".opencode/plugins/rewind.js");
    }
}

#[test]
fn qwen_code_install_mcp() {
    if !agent_installed("qwen") {
        return;
    }
    let setup = |root: &Path| {
        format!(
            "rewind install qwen-code --project '{0}' && rewind install qwen-code --mcp --project '{0}'",
            root.display()
        )
    };
    mcp_scenario("qwen", setup, "rewind", |_, _| {});
}

#[test]
fn kilo_install_mcp() {
    if agent_installed("kilo") {
        plugin_agent_install_mcp("kilo", ".kilo/kilo.json", ".kilo/plugins/rewind.js");
    }
}

/// Droid or Copilot CLI with `rewind install AGENT --project` (hooks) and
/// `--mcp`, into the project's MCP file (`--project`) or the user's;
/// uninstalling the MCP server leaves no file of ours.
fn hooks_agent_install_mcp(
    agent: &str,
    rewind_agent: &str,
    turns: u32,
    called: &str,
    files: [&str; 2],
) {
    for (scope, file) in ["project", "user"].into_iter().zip(files) {
        let setup = |root: &Path| {
            let hooks = format!(
                "rewind install {rewind_agent} --project '{}'",
                root.display()
            );
            let mcp = match scope {
                "project" => format!(
                    "rewind install {rewind_agent} --mcp --project '{}'",
                    root.display()
                ),
                _ => format!("rewind install {rewind_agent} --mcp"),
            };
            format!("{hooks} && {mcp}")
        };
        mcp_scenario_turns(agent, turns, setup, called, |home, root| {
            if scope == "project" {
                let project_arg = root.to_str().unwrap();
                rewind(
                    home,
                    root,
                    &["uninstall", rewind_agent, "--mcp", "--project", project_arg],
                );
                assert!(!root.join(file).exists(), "{agent}: {file}");
            }
        });
    }
}

#[test]
fn droid_install_mcp() {
    if agent_installed("droid") {
        hooks_agent_install_mcp(
            "droid",
            "droid",
            4,
            "rewind___restore",
            [".factory/mcp.json", ".factory/mcp.json"],
        );
    }
}

#[test]
fn copilot_cli_install_mcp() {
    if agent_installed("copilot") {
        hooks_agent_install_mcp(
            "copilot",
            "copilot",
            5,
            "rewind-restore",
            [".github/mcp.json", ".copilot/mcp-config.json"],
        );
    }
}

/// Cline with `rewind install cline --project` (hooks) and `rewind install
/// cline --mcp` (the user's `~/.cline/data/settings/cline_mcp_settings.json`:
/// Cline reads no project's MCP servers). Its first turn is `cline --json`,
/// the others its ACP mode: both start the server.
#[test]
fn cline_install_mcp() {
    if !agent_installed("cline") {
        return;
    }
    let setup = |root: &Path| {
        format!(
            "rewind install cline --project '{}' && rewind install cline --mcp",
            root.display()
        )
    };
    mcp_scenario("cline", setup, "rewind__restore", |_, _| {});
}
