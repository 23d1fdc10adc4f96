//! The documentation's examples, run: every ```console block of README.md and docs/*.md
//! is run by trycmd against the `rewind` binary cargo built, and its output compared with
//! what the block shows (stdout and stderr together, as a terminal shows them). A block
//! that drifts from what the binary does fails this test; `TRYCMD=overwrite cargo test
//! --test docs` writes what the binary printed back into a document run as itself.
//!
//! Expected output may use trycmd's wildcards: `[..]` for the rest of a line's variable
//! part (ids, times, hashes, paths), `...` on a line of its own for any lines, `[CWD]` for
//! the project directory the commands run in.
//!
//! Each document runs in a sandbox of its own: a fresh `REWIND_HOME` (and `HOME`, so no
//! agent's settings or the user's store are touched) and a small project (`src/main.rs`),
//! which is the current directory of every command. A document that shows two machines
//! (docs/remote.md) has its blocks under a heading beginning "On the other machine" run on
//! a second machine: another `REWIND_HOME` and another copy of the project, in the same
//! sandbox, beside a `file://` remote directory that both stores know as `origin`. Those
//! blocks run from a copy of the document in which every other line is blank (so line
//! numbers stay the document's), and in their commands the placeholder `SESSION_ID` is the
//! id of the session the first machine recorded, as a person would fill it in.
//!
//! Three examples that are not a command line are checked here too, by snapbox with the
//! same wildcards: README.md's sidecar session (its request lines sent to `rewind serve`),
//! docs/agents.md's `rewind log` after a replayed Claude Code turn, and the Claude Code
//! plugin's install command (one, the same in README.md and docs/agents.md).
//!
//! Blocks that cannot run here (an agent, a browser, a real cloud, a server that does not
//! exit) are ```sh or ```text, and are not run.

use std::path::{Path, PathBuf};

/// The heading that moves a document's blocks to the second machine.
const OTHER_MACHINE: &str = "On the other machine";
/// Filled in, in the second machine's commands, with the first machine's session id.
const SESSION_PLACEHOLDER: &str = "SESSION_ID";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Machine {
    Recording,
    Other,
}

/// A ```console block: its lines (0-based, fences included) and the machine it runs on.
struct Block {
    first: usize,
    last: usize,
    machine: Machine,
}

/// The ```console blocks of a Markdown text, as trycmd finds them (a fence at the start
/// of a line; `console,ignore` is not run), each with the machine its heading puts it on.
fn console_blocks(name: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut other_level: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with('#') {
            let level = line.chars().take_while(|c| *c == '#').count();
            let title = line[level..].trim();
            if title.starts_with(OTHER_MACHINE) {
                other_level = Some(level);
            } else if other_level.is_some_and(|l| level <= l) {
                other_level = None;
            }
        }
        if let Some(info) = line.strip_prefix("```") {
            let first = i;
            let mut last = i + 1;
            while last < lines.len() && !lines[last].starts_with("```") {
                last += 1;
            }
            let mut info = info.trim().split(',');
            let lang = info.next().unwrap_or("");
            if lang == "console" && !info.any(|i| i.trim() == "ignore") {
                let machine = if other_level.is_some() {
                    Machine::Other
                } else {
                    Machine::Recording
                };
                blocks.push(Block {
                    first,
                    last,
                    machine,
                });
            }
            assert!(
                !lang.is_empty(),
                "{name}:{}: a code block without a language is run by trycmd as a console block; give it one (text, sh, json…)",
                first + 1
            );
            i = last + 1;
            continue;
        }
        i += 1;
    }
    blocks
}

/// A machine of the sandbox: its `REWIND_HOME` and its copy of the project.
struct Host {
    home: PathBuf,
    project: PathBuf,
}

impl Host {
    fn new(dir: &Path) -> Host {
        let home = dir.join("home");
        let project = dir.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(
            project.join("src/main.rs"),
            "fn main() {\n    println!(\"Hello\");\n}\n",
        )
        .unwrap();
        Host { home, project }
    }

    /// `rewind ARGS` on this machine, in its project; panics unless it succeeds.
    fn rewind(&self, args: &[&str]) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
            .args(args)
            .current_dir(&self.project)
            .env("REWIND_HOME", &self.home)
            .env("HOME", &self.home)
            .env_remove("REWIND_REMOTE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "rewind {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The id of the newest session in this machine's store (session files are named
    /// `<time>_<id>.jsonl`, so the newest sorts last).
    fn newest_session_id(&self) -> String {
        let mut names = Vec::new();
        for project in std::fs::read_dir(self.home.join("projects")).unwrap() {
            let sessions = project.unwrap().path().join("sessions");
            for file in std::fs::read_dir(sessions).unwrap() {
                names.push(file.unwrap().file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        let newest = names
            .last()
            .expect("the recording machine recorded a session");
        let id = newest.rsplit_once('_').unwrap().1;
        id.strip_suffix(".jsonl").unwrap().to_owned()
    }

    /// Runs `case` (a Markdown file) with trycmd on this machine.
    fn run(&self, case: &Path, doc: &str) {
        if !case.ends_with(doc) {
            eprintln!(
                "{doc}: runs from {} (its blocks for this machine, at the document's line numbers)",
                case.display()
            );
        }
        // trycmd runs every command in the current directory when the case has no
        // `.in` fixture beside it; the documents have none, the sandbox is the fixture.
        std::env::set_current_dir(&self.project).unwrap();
        trycmd::TestCases::new()
            .register_bin("rewind", PathBuf::from(env!("CARGO_BIN_EXE_rewind")))
            .env("REWIND_HOME", self.home.display().to_string())
            .env("HOME", self.home.display().to_string())
            .env(
                "XDG_CONFIG_HOME",
                self.home.join(".config").display().to_string(),
            )
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "warn")
            .case(case)
            .run();
    }
}

/// `text` with every line outside `blocks` blank, and `SESSION_ID` in command lines
/// replaced by `session` when given.
fn only_blocks(text: &str, blocks: &[&Block], session: Option<&str>) -> String {
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        if blocks.iter().any(|b| b.first <= n && n <= b.last) {
            let is_command = line.starts_with("$ ") || line.starts_with("> ");
            match session {
                Some(id) if is_command => out.push_str(&line.replace(SESSION_PLACEHOLDER, id)),
                _ => out.push_str(line),
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn every_console_example_in_the_docs_runs_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    in_docs.sort();
    docs.extend(in_docs);

    let mut run = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let name = doc.strip_prefix(root).unwrap().display().to_string();
        let blocks = console_blocks(&name, &text);
        if blocks.is_empty() {
            continue;
        }
        let sandbox = tempfile::tempdir().unwrap();
        let recording = Host::new(&sandbox.path().join("recording"));
        let on = |m: Machine| blocks.iter().filter(|b| b.machine == m).collect::<Vec<_>>();
        let (first, second) = (on(Machine::Recording), on(Machine::Other));
        if second.is_empty() {
            recording.run(doc, &name);
        } else {
            let other = Host::new(&sandbox.path().join("other"));
            let remote = sandbox.path().join("remote");
            std::fs::create_dir(&remote).unwrap();
            let url = format!("file://{}", remote.display());
            recording.rewind(&["remote", "add", "origin", &url]);
            other.rewind(&["remote", "add", "origin", &url]);
            let stem = name.replace(['/', '.'], "-");
            let part = sandbox
                .path()
                .join(format!("{stem}--on-the-machine-that-records.md"));
            std::fs::write(&part, only_blocks(&text, &first, None)).unwrap();
            recording.run(&part, &name);
            let session = recording.newest_session_id();
            let part = sandbox
                .path()
                .join(format!("{stem}--on-the-other-machine.md"));
            std::fs::write(&part, only_blocks(&text, &second, Some(&session))).unwrap();
            other.run(&part, &name);
        }
        std::env::set_current_dir(root).unwrap();
        run.push(name);
    }
    // The documents known to hold examples: were they found (a renamed fence, a moved
    // file, would otherwise pass by running nothing)?
    for must in ["README.md", "docs/remote.md"] {
        assert!(
            run.iter().any(|n| n == must),
            "{must}: no ```console block ran"
        );
    }
}

/// The Claude Code plugin's install command, which cannot run here (it needs Claude Code):
/// one command, the same in README.md's and docs/agents.md's blocks, and no placeholder for a
/// repository that is not published.
#[test]
fn one_plugin_install_command_everywhere() {
    const COMMAND: &str = "claude plugin install rewind --marketplace ./rewind";
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in ["README.md", "docs/agents.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(text.contains(COMMAND), "{doc}: no `{COMMAND}`");
        for line in text
            .lines()
            .filter(|l| l.starts_with("claude plugin install"))
        {
            assert!(
                line.contains(COMMAND),
                "{doc}: another install command: {line}"
            );
        }
    }
    let mut docs = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        docs.push(e.unwrap().path());
    }
    for doc in docs
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(doc).unwrap();
        assert!(
            !text.contains("<owner>"),
            "{}: `<owner>`: the repository is not published yet; say so",
            doc.display()
        );
    }
}

/// The text of the first ```json block after `marker` in `text`.
fn json_block_after(text: &str, marker: &str) -> String {
    let rest = &text[text.find(marker).unwrap_or_else(|| panic!("no {marker:?}"))..];
    let start = rest.find("```json\n").expect("a ```json block") + "```json\n".len();
    let len = rest[start..].find("```").expect("the block's end");
    rest[start..start + len].to_owned()
}

/// README.md's first example, the sidecar on a real directory: its request lines are sent
/// to `rewind serve` one at a time (the project changed before the second, as the README
/// says), and the answers compared with the lines it shows (`[..]` for ids, hashes, times
/// and paths).
#[test]
fn the_readme_sidecar_example_answers_as_shown() {
    use std::io::{BufRead, Write};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let requests = json_block_after(&readme, "Paste these lines one at a time");
    let expected = json_block_after(&readme, "Each gets one line back");

    let sandbox = tempfile::tempdir().unwrap();
    let host = Host::new(sandbox.path());
    std::fs::write(
        host.project.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
        .arg("serve")
        .current_dir(&host.project)
        .env("REWIND_HOME", &host.home)
        .env("HOME", &host.home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answers = String::new();
    for (n, request) in requests.lines().enumerate() {
        if n == 1 {
            // "here `src/main.rs` was edited and `src/util.rs` added before the second line"
            std::fs::write(
                host.project.join("src/main.rs"),
                "mod util;\n\nfn main() {\n    println!(\"{}\", util::two());\n}\n",
            )
            .unwrap();
            std::fs::write(
                host.project.join("src/util.rs"),
                "pub fn two() -> u32 {\n    2\n}\n",
            )
            .unwrap();
        }
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        answers.push_str(&answer);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    snapbox::Assert::new().eq(answers, expected);
}

/// docs/agents.md's "`rewind log` looks like this": the first turn of a real Claude Code
/// session (tests/agents/samples/payloads/claude-code.jsonl) handed to `rewind hook` event
/// by event, with each tool's effect made between its PreToolUse and PostToolUse as the
/// agent would, then `rewind log` compared with the block the document shows.
#[test]
fn the_agents_log_example_is_what_a_replayed_turn_records() {
    use std::io::Write;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/agents.md")).unwrap();
    let marker = "`rewind log` looks like this";
    let rest = &doc[doc.find(marker).expect(marker)..];
    let start = rest.find("```text\n").expect("a ```text block") + "```text\n".len();
    let expected = &rest[start..start + rest[start..].find("```").unwrap()];

    let sandbox = tempfile::tempdir().unwrap();
    let host = Host::new(sandbox.path());
    let payloads =
        std::fs::read_to_string(root.join("tests/agents/samples/payloads/claude-code.jsonl"))
            .unwrap();
    let project = host.project.display().to_string();
    for line in payloads.lines() {
        let line = line.replace("@PROJECT@", &project);
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        let mut hook = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
            .args(["hook", "--agent", "claude-code"])
            .current_dir(&host.project)
            .env("REWIND_HOME", &host.home)
            .env("HOME", &host.home)
            .env("REWIND_SERVER", "0")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        writeln!(hook.stdin.take().unwrap(), "{line}").unwrap();
        assert!(hook.wait().unwrap().success());
        if event["hook_event_name"] == "PreToolUse" {
            let input = &event["tool_input"];
            match event["tool_name"].as_str().unwrap() {
                "Write" => std::fs::write(
                    input["file_path"].as_str().unwrap(),
                    input["content"].as_str().unwrap(),
                )
                .unwrap(),
                "Bash" => assert!(std::process::Command::new("sh")
                    .args(["-c", input["command"].as_str().unwrap()])
                    .current_dir(&host.project)
                    .status()
                    .unwrap()
                    .success()),
                other => panic!("a tool this replay does not make: {other}"),
            }
        }
    }
    let log = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
        .arg("log")
        .current_dir(&host.project)
        .env("REWIND_HOME", &host.home)
        .env("HOME", &host.home)
        .output()
        .unwrap();
    assert!(log.status.success());
    snapbox::Assert::new().eq(String::from_utf8(log.stdout).unwrap(), expected);
}
