//! The real Claude Code, Codex and Gemini CLI (versions pinned in
//! tests/agents/package-lock.json), offline against the scripted model
//! server of tests/agents, each with the hooks `rewind install --project`
//! writes. A three-turn resumed session writes, edits, deletes a
//! directory with the shell and moves files; then each turn's end is
//! restored with the `rewind` CLI and compared byte for byte with a copy
//! taken when the turn ended, the restore is undone, and a file the agent
//! never touched and an ignored file survive every step.
//!
//! The same session is also run with rewind installed the agents' own way
//! (Claude Code's plugin from this repository as a marketplace, Gemini CLI's
//! extension from clients/gemini-extension), and with both that and
//! `rewind install` at once: it must record the very same checkpoints, each
//! event once (the plugin's hooks stand down, install/standdown.rs).
//!
//! Needs `npm ci` in tests/agents (`.ci/run` does it and sets
//! REWIND_AGENTS_E2E=1, which turns a missing install into a failure, as
//! does CI=true); without it this test says so and passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;

/// The agents' own directories in a project (settings, plugins), left out
/// of the comparisons.
const AGENT_DIRS: [&str; 9] = [
    ".claude",
    ".codex",
    ".gemini",
    ".opencode",
    ".kilo",
    ".qwen",
    ".github",
    ".factory",
    ".clinerules",
];

pub(crate) fn agents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents")
}

/// tests/agents/run-agent.mjs for `agent` in `project` (its output under
/// `out`), without hook settings of its own (the project has rewind's, or
/// the plugin brings them): rewind's store in `home`, this build's `rewind`
/// first on PATH and never another through REWIND_BIN. The caller adds
/// what its run needs.
pub(crate) fn run_agent(agent: &str, project: &Path, out: &Path, home: &Path) -> Command {
    let mut driver = Command::new("node");
    driver
        .arg(agents_dir().join("run-agent.mjs"))
        .args(["--agent", agent, "--timeout", "120", "--no-hooks"])
        .arg("--project")
        .arg(project)
        .arg("--out")
        .arg(out)
        .env("REWIND_HOME", home)
        // A server outliving the test is stopped by `StopServer`; this
        // bounds it if the test dies first.
        .env("REWIND_SERVER_IDLE_SECS", "300")
        .env("PATH", path_with_rewind())
        .env_remove("REWIND_BIN");
    driver
}

/// The harness's JSON summary of a run that must have passed (`what`
/// names the run when it did not).
pub(crate) fn passed(what: &str, result: &std::process::Output) -> Value {
    let summary: Value = serde_json::from_slice(&result.stdout).unwrap_or(Value::Null);
    assert!(
        result.status.success(),
        "{what} failed: {}\n{}",
        serde_json::to_string_pretty(&summary).unwrap_or_default(),
        String::from_utf8_lossy(&result.stderr)
    );
    summary
}

/// How rewind gets into the agent: `rewind install --project` (the
/// settings files), the agent's own plugin or extension, or both.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum How {
    Settings,
    Plugin,
    Both,
}

/// What `--install-plugin` gets for `agent`: the checkout as Claude Code's
/// marketplace, the extension's directory for Gemini CLI.
pub(crate) fn plugin_source(agent: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match agent {
        "gemini" => root.join("clients/gemini-extension"),
        _ => root.to_path_buf(),
    }
}

/// PATH with the tested binary's directory first: the plugin and the
/// extension find `rewind` on PATH (clients/claude-code-plugin/scripts/rewind.sh).
pub(crate) fn path_with_rewind() -> std::ffi::OsString {
    let dir = Path::new(common::bin()).parent().unwrap().to_path_buf();
    let mut dirs = vec![dir];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap()
}

/// Skip (with a message) unless the agents are installed; fail when CI
/// asked for them (REWIND_AGENTS_E2E, or CI=true: `skip_or_fail`).
pub(crate) fn agents_installed() -> bool {
    agent_installed("claude")
}

/// As [`agents_installed`], for the agent whose command is `bin`.
pub(crate) fn agent_installed(bin: &str) -> bool {
    let installed = agents_dir().join("node_modules/.bin").join(bin).exists();
    if !installed {
        assert!(
            std::env::var_os("REWIND_AGENTS_E2E").is_none(),
            "REWIND_AGENTS_E2E is set but tests/agents has no node_modules: run `npm ci` there"
        );
        common::skip_or_fail("the real agents are not installed (cd tests/agents && npm ci)");
    }
    installed
}

/// Every file below `root` (agent config directories left out), with its
/// bytes; symlinks as their target.
pub(crate) fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            if AGENT_DIRS.contains(&rel.as_str()) {
                continue;
            }
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                walk(root, &path, out);
            } else if ft.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, target.to_str().unwrap().as_bytes().to_vec());
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn names(t: &BTreeMap<String, Vec<u8>>) -> Vec<&str> {
    t.keys().map(String::as_str).collect()
}

pub(crate) fn rewind(home: &Path, project: &Path, args: &[&str]) -> String {
    let out = Command::new(common::bin())
        .args(args)
        .env("REWIND_HOME", home)
        .current_dir(project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "rewind {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stops the project's hook server however the test ends.
pub(crate) struct StopServer<'a> {
    pub home: &'a Path,
    pub project: &'a Path,
}

impl Drop for StopServer<'_> {
    fn drop(&mut self) {
        let _ = Command::new(common::bin())
            .args(["server", "stop"])
            .env("REWIND_HOME", self.home)
            .current_dir(self.project)
            .output();
    }
}

/// The session files of the one project in `home`'s store that hold an
/// agent's turns (`rewind mcp`, started by a plugin, may have started an
/// empty one of its own before the first hook).
pub(crate) fn turn_sessions(home: &Path) -> Vec<PathBuf> {
    let projects: Vec<PathBuf> = std::fs::read_dir(home.join("projects"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(projects.len(), 1, "{projects:?}");
    std::fs::read_dir(projects[0].join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("\"turnIndex\":1")
        })
        .collect()
}

/// What one run recorded: each turn's end checkpoint tree, and every
/// checkpoint of the session as (kind, turn, tree).
pub(crate) struct Recorded {
    pub turn_trees: Vec<String>,
    pub checkpoints: Vec<(String, u64, String)>,
    /// The run's directories, for a caller that goes on with them.
    pub dirs: Dirs,
}

/// A run's project (`root`, canonical), the agent's scratch home (`out`)
/// and rewind's home, removed when dropped.
pub(crate) struct Dirs {
    /// Holds `root` (removed with it).
    pub _project: tempfile::TempDir,
    pub out: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub root: PathBuf,
}

/// One agent's three scripted turns through its hooks, with the project's
/// hook server (`server`) or every hook on its own (`REWIND_SERVER=0`),
/// rewind installed as `how` says.
pub(crate) fn run(agent: &str, rewind_agent: &str, server: bool, how: How) -> Recorded {
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    std::fs::write(root.join("keep.txt"), "the agent never touches this\n").unwrap();
    std::fs::write(root.join(".gitignore"), "secret.env\n").unwrap();
    std::fs::write(root.join("secret.env"), "TOKEN=ignored but small\n").unwrap();
    let turns_dir = out.path().join("turns");
    // The hooks as a user gets them: written by `rewind install`.
    if how != How::Plugin {
        let installed = rewind(
            home.path(),
            &root,
            &[
                "install",
                rewind_agent,
                "--project",
                root.to_str().unwrap(),
                "--bin",
                common::bin(),
            ],
        );
        assert!(installed.contains("added"), "{installed}");
    }
    let started = std::time::Instant::now();
    let stop = StopServer {
        home: home.path(),
        project: &root,
    };
    let mut driver = run_agent(agent, &root, &out.path().join("run"), home.path());
    if how != How::Settings {
        // The agent's own install: `claude plugin marketplace add` +
        // `plugin install`, or `gemini extensions install`.
        driver.arg("--install-plugin").arg(plugin_source(agent));
    }
    let result = driver
        .args(["--turns", "3", "--save-turns"])
        .arg(&turns_dir)
        .env("REWIND_SERVER", if server { "1" } else { "0" })
        .output()
        .unwrap();
    passed(&format!("{agent} run"), &result);
    eprintln!(
        "{agent}: 3 turns in {:.1} s ({}, {how:?})",
        started.elapsed().as_secs_f64(),
        if server {
            "hook server"
        } else {
            "one-shot hooks"
        }
    );
    let served = rewind(home.path(), &root, &["server", "status"]);
    if server {
        assert!(
            served.contains("events ") && !served.contains("events   0 "),
            "{agent}: {served}"
        );
    } else {
        assert!(served.contains("no hook server runs"), "{agent}: {served}");
    }

    // One rewind session with the agent's turns, a turn-end checkpoint per
    // turn.
    let session = {
        let sessions = turn_sessions(home.path());
        assert_eq!(sessions.len(), 1, "{agent} {how:?}: {sessions:?}");
        sessions[0].clone()
    };
    let entries: Vec<Value> = std::fs::read_to_string(&session)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let turn_entry = |n: u64| -> &Value {
        entries
            .iter()
            .rfind(|e| e["data"]["kind"] == "turn" && e["data"]["turnIndex"] == n)
            .unwrap_or_else(|| panic!("{agent}: no turn-{n} checkpoint"))
    };
    let turn_end = |n: u64| -> String { turn_entry(n)["id"].as_str().unwrap().to_string() };
    let turn_trees: Vec<String> = (1..=3u64)
        .map(|n| {
            turn_entry(n)["data"]["snapshotTreeHash"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let log = rewind(home.path(), &root, &["log"]);
    assert!(!log.contains("outside"), "{agent}: {log}");
    let status = rewind(home.path(), &root, &["status"]);
    assert!(status.contains("no failures recorded"), "{agent}: {status}");

    let keep = std::fs::read(root.join("keep.txt")).unwrap();
    let secret = std::fs::read(root.join("secret.env")).unwrap();
    let end = tree(&root);
    for n in 1..=3u64 {
        let want = tree(&turns_dir.join(format!("turn-{n}")));
        rewind(home.path(), &root, &["restore", &turn_end(n), "--yes"]);
        let got = tree(&root);
        assert_eq!(names(&got), names(&want), "{agent}: turn {n}\n{log}");
        assert!(got == want, "{agent}: turn {n} content differs");
        assert_eq!(std::fs::read(root.join("keep.txt")).unwrap(), keep);
        assert_eq!(std::fs::read(root.join("secret.env")).unwrap(), secret);
        // Undo puts back what the restore replaced (the last turn's end is
        // the disk as it is: that restore changes nothing, there is nothing
        // to undo, and `undo` would undo the previous undo).
        if got != end {
            rewind(home.path(), &root, &["undo", "--yes"]);
            assert!(tree(&root) == end, "{agent}: undo after turn {n}");
        }
    }
    // The start of turn 2 (its prompt's checkpoint) is the end of turn 1,
    // the start of turn 1 what the agent found; undo takes that back.
    let turn_start = |n: u64| -> String {
        entries
            .iter()
            .find(|e| e["data"]["kind"] == "message" && e["data"]["turnIndex"] == n)
            .unwrap_or_else(|| panic!("{agent}: no turn-{n} prompt checkpoint"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    rewind(home.path(), &root, &["restore", &turn_start(2), "--yes"]);
    assert!(
        tree(&root) == tree(&turns_dir.join("turn-1")),
        "{agent}: the start of turn 2\n{log}"
    );
    rewind(home.path(), &root, &["restore", &turn_start(1), "--yes"]);
    assert_eq!(
        names(&tree(&root)),
        [".gitignore", "keep.txt", "secret.env"],
        "{agent}: the start of turn 1"
    );
    rewind(home.path(), &root, &["undo", "--yes"]);
    assert!(
        tree(&root) == tree(&turns_dir.join("turn-1")),
        "{agent}: undo of the restore to the start of turn 1"
    );
    // Back before the first turn: the agent's files are gone, the rest stays.
    let checkpoints: Vec<(String, u64, String)> = entries
        .iter()
        .filter(|e| e["data"]["snapshotTreeHash"].is_string())
        .map(|e| {
            (
                e["data"]["kind"].as_str().unwrap_or("").to_string(),
                e["data"]["turnIndex"].as_u64().unwrap_or(0),
                e["data"]["snapshotTreeHash"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let baseline = entries[1]["id"].as_str().unwrap().to_string();
    rewind(home.path(), &root, &["restore", &baseline, "--yes"]);
    assert_eq!(
        names(&tree(&root)),
        [".gitignore", "keep.txt", "secret.env"],
        "{agent}"
    );
    drop(stop);
    Recorded {
        turn_trees,
        checkpoints,
        dirs: Dirs {
            _project: project,
            out,
            home,
            root,
        },
    }
}

/// With the hook server and without it, the same turns record the same
/// checkpoints, byte for byte (trees are content addressed).
fn both_ways(agent: &str, rewind_agent: &str) {
    let served = run(agent, rewind_agent, true, How::Settings);
    let alone = run(agent, rewind_agent, false, How::Settings);
    assert_eq!(
        served.turn_trees, alone.turn_trees,
        "{agent}: the turns' checkpoints differ"
    );
}

/// Installed the agent's own way, the session is protected exactly as with
/// `rewind install`: the same checkpoints (kind and turn, in order; `run`
/// restored each turn's end byte for byte). The trees differ only because
/// `rewind install --project` adds the agent's settings file to the
/// project. Both ways at once record each event once: the same list as
/// `rewind install` alone, trees included.
fn native_ways(agent: &str, rewind_agent: &str) {
    let settings = run(agent, rewind_agent, true, How::Settings);
    let plugin = run(agent, rewind_agent, true, How::Plugin);
    let steps = |r: &Recorded| -> Vec<(String, u64)> {
        r.checkpoints
            .iter()
            .map(|(kind, turn, _)| (kind.clone(), *turn))
            .collect()
    };
    assert_eq!(
        steps(&plugin),
        steps(&settings),
        "{agent}: the plugin recorded other checkpoints than rewind install"
    );
    let both = run(agent, rewind_agent, true, How::Both);
    assert_eq!(
        both.checkpoints, settings.checkpoints,
        "{agent}: with the plugin and rewind install, events were recorded twice"
    );
}

#[test]
fn claude_code() {
    if agents_installed() {
        both_ways("claude", "claude-code");
    }
}

#[test]
fn codex() {
    if agents_installed() {
        both_ways("codex", "codex");
    }
}

#[test]
fn gemini_cli() {
    if agents_installed() {
        both_ways("gemini", "gemini");
    }
}

#[test]
fn claude_code_plugin() {
    if agents_installed() {
        native_ways("claude", "claude-code");
    }
}

#[test]
fn gemini_cli_extension() {
    if agents_installed() {
        native_ways("gemini", "gemini");
    }
}

/// After an uninstall, a file install wrote is gone, or holds only what
/// the agent adds to a config file it loads (OpenCode 1.18.33 `$schema`,
/// Qwen Code 0.24.4 `$version`).
pub(crate) fn assert_nothing_of_ours(agent: &str, file: &Path) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{agent}: {} is left, not JSON ({e}): {text}",
            file.display()
        )
    });
    let ours: Vec<&String> = v
        .as_object()
        .map(|o| o.keys().filter(|k| !k.starts_with('$')).collect())
        .unwrap_or_default();
    assert!(
        ours.is_empty(),
        "{agent}: {} is left: {text}",
        file.display()
    );
}

/// The agents rewind reaches through a plugin or settings of its own
/// (issue 41): the three turns with the hook server, each turn's start and
/// end restored and undone (`run`); then `rewind uninstall` leaves nothing
/// that records: `files` (what install wrote, relative to the project) are
/// gone, and a new session of the agent changes nothing in the store.
fn installed_then_uninstalled(agent: &str, rewind_agent: &str, files: &[&str]) {
    let recorded = run(agent, rewind_agent, true, How::Settings);
    let Dirs {
        home, out, root, ..
    } = &recorded.dirs;
    let removed = rewind(
        home.path(),
        root,
        &[
            "uninstall",
            rewind_agent,
            "--project",
            root.to_str().unwrap(),
        ],
    );
    assert!(removed.contains("removed"), "{agent}: {removed}");
    for f in files {
        assert_nothing_of_ours(agent, &root.join(f));
    }
    let stored = crate::agents_mcp::store_state(home.path());
    let _stop = StopServer {
        home: home.path(),
        project: root,
    };
    let result = run_agent(
        agent,
        root,
        &out.path().join("after-uninstall"),
        home.path(),
    )
    .args(["--turns", "1"])
    .output()
    .unwrap();
    assert!(
        result.status.success(),
        "{agent} after uninstall: {}\n{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    assert_eq!(
        crate::agents_mcp::store_state(home.path()),
        stored,
        "{agent}: a session after the uninstall was recorded"
    );
}

#[test]
fn opencode() {
    if agent_installed("opencode") {
        installed_then_uninstalled("opencode", "opencode", &[".opencode/plugins/rewind.js"]);
    }
}

#[test]
fn qwen_code() {
    if agent_installed("qwen") {
        installed_then_uninstalled("qwen", "qwen-code", &[".qwen/settings.json"]);
    }
}

#[test]
fn kilo() {
    if agent_installed("kilo") {
        installed_then_uninstalled("kilo", "kilo", &[".kilo/plugins/rewind.js"]);
    }
}

#[test]
fn copilot_cli() {
    if agent_installed("copilot") {
        installed_then_uninstalled("copilot", "copilot", &[".github/hooks/rewind.json"]);
    }
}

/// Cline's CLI 3.0.65: turn 1 `cline --json PROMPT`, turns 2 and 3 through
/// its ACP mode (`cline --id` resumes only in its terminal UI); hook files
/// per event in `.clinerules/hooks/`. Its payloads name no prompt: the turns'
/// start checkpoints carry no label.
#[test]
fn cline() {
    if agent_installed("cline") {
        installed_then_uninstalled(
            "cline",
            "cline",
            &[
                ".clinerules/hooks/TaskStart",
                ".clinerules/hooks/PreToolUse",
                ".clinerules/hooks/PostToolUse",
                ".clinerules/hooks/TaskComplete",
            ],
        );
    }
}

/// Factory's Droid 0.215.0, headless (`droid exec`, later turns `exec -s
/// ID`): it fires no `UserPromptSubmit` there (its TUI is documented to),
/// so the session's checkpoints carry no turn numbers: each run's tools and
/// its end (`Stop`) are recorded, each `turn` checkpoint restores the
/// project as that run left it (and is undone); then uninstall leaves
/// nothing that records. tests/integration/hooks.rs feeds the prompt event
/// its docs give.
#[test]
fn droid() {
    if !agent_installed("droid") {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    std::fs::write(root.join("keep.txt"), "the agent never touches this\n").unwrap();
    let turns_dir = out.path().join("turns");
    let project_arg = root.to_str().unwrap();
    rewind(
        home.path(),
        &root,
        &[
            "install",
            "droid",
            "--project",
            project_arg,
            "--bin",
            common::bin(),
        ],
    );
    let _stop = StopServer {
        home: home.path(),
        project: &root,
    };
    let drive = |turns: &str, out_dir: &str| {
        let result = run_agent("droid", &root, &out.path().join(out_dir), home.path())
            .args(["--turns", turns, "--save-turns"])
            .arg(&turns_dir)
            .output()
            .unwrap();
        assert!(
            result.status.success(),
            "droid: {}\n{}",
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    };
    let started = std::time::Instant::now();
    drive("3", "run");
    eprintln!("droid: 3 turns in {:.1} s", started.elapsed().as_secs_f64());
    let status = rewind(home.path(), &root, &["status"]);
    assert!(status.contains("no failures recorded"), "{status}");
    let stores: Vec<PathBuf> = std::fs::read_dir(home.path().join("projects"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("sessions"))
        .collect();
    assert_eq!(stores.len(), 1);
    let sessions: Vec<PathBuf> = std::fs::read_dir(&stores[0])
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(
        sessions.len(),
        1,
        "one session across `exec -s`: {sessions:?}"
    );
    let entries = common::session_lines(&sessions[0]);
    let kind =
        |k: &str| -> Vec<&Value> { entries.iter().filter(|e| e["data"]["kind"] == k).collect() };
    let tools: Vec<&str> = kind("tool")
        .iter()
        .filter_map(|e| e["data"]["tool"]["name"].as_str())
        .collect();
    for t in ["Create", "Edit", "Execute"] {
        assert!(tools.contains(&t), "droid: no {t} step: {tools:?}");
    }
    let ends = kind("turn");
    assert_eq!(ends.len(), 3, "droid: a turn end per run");
    let end = tree(&root);
    for (n, e) in ends.iter().enumerate() {
        let want = tree(&turns_dir.join(format!("turn-{}", n + 1)));
        rewind(
            home.path(),
            &root,
            &["restore", e["id"].as_str().unwrap(), "--yes"],
        );
        assert!(tree(&root) == want, "droid: the end of run {}", n + 1);
        if want != end {
            rewind(home.path(), &root, &["undo", "--yes"]);
            assert!(tree(&root) == end, "droid: undo after run {}", n + 1);
        }
    }
    let removed = rewind(
        home.path(),
        &root,
        &["uninstall", "droid", "--project", project_arg],
    );
    assert!(removed.contains("removed"), "{removed}");
    assert_nothing_of_ours("droid", &root.join(".factory/hooks.json"));
    let stored = crate::agents_mcp::store_state(home.path());
    drive("1", "after-uninstall");
    assert_eq!(
        crate::agents_mcp::store_state(home.path()),
        stored,
        "droid: a session after the uninstall was recorded"
    );
}
