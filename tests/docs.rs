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
//! And the design document against the code (rust-analyzer's `tidy`): docs/architecture.md's
//! module table names every module of `src/` and nothing that is not there, and every public
//! method of `Engine` is in its door (`engine/mod.rs`).
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

/// The first cells of docs/architecture.md's module table: each row's paths below `src/`
/// (`app/cli/`, `printable.rs`), with the row's whole text.
fn module_rows(text: &str) -> Vec<(Vec<String>, String)> {
    let table = text
        .split("| module | owns | knows nothing of |")
        .nth(1)
        .expect("docs/architecture.md has its module table");
    table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let first = row.split('|').nth(1).unwrap_or("");
            let paths = first
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            (paths, row.to_string())
        })
        .collect()
}

/// The `.rs` files and directories directly in `dir` (below `src/`), as the table spells
/// them: `name.rs`, `name/`.
fn entries_of(src: &Path, dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(src.join(dir))
        .unwrap()
        .map(|e| e.unwrap())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                Some(format!("{name}/"))
            } else {
                name.ends_with(".rs").then_some(name)
            }
        })
        .collect();
    v.sort();
    v
}

/// rust-analyzer's `tidy`, for our design document: docs/architecture.md's module table
/// and `src/` must agree. Every path the table names exists; every module of `src/` has a
/// row (its own, or a row of a directory above it); and a directory's row that names its
/// files names every one of them (not `mod.rs`, nor tests).
#[test]
fn the_architecture_module_table_matches_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let rows = module_rows(&text);
    let named: Vec<&str> = rows
        .iter()
        .flat_map(|(p, _)| p.iter().map(String::as_str))
        .collect();
    let mut wrong = Vec::new();
    for p in &named {
        if !src.join(p).exists() {
            wrong.push(format!("the table names `{p}`, which is not in src/"));
        }
    }
    let covered = |path: &str| {
        named
            .iter()
            .any(|n| *n == path || (n.ends_with('/') && path.starts_with(n)))
    };
    // A path is covered by a row of its own or of a directory above it; a directory
    // without one (`sidecar/`, whose files have rows) has each of its entries covered.
    let not_modules = ["lib.rs", "main.rs", "build.rs", "mod.rs"];
    let mut todo: Vec<String> = entries_of(&src, "")
        .into_iter()
        .filter(|e| !not_modules.contains(&e.as_str()))
        .collect();
    while let Some(path) = todo.pop() {
        if covered(&path) {
            continue;
        }
        if path.ends_with('/') && named.iter().any(|n| n.starts_with(path.as_str())) {
            todo.extend(
                entries_of(&src, &path)
                    .into_iter()
                    .filter(|e| !not_modules.contains(&e.as_str()) && !e.contains("tests"))
                    .map(|e| format!("{path}{e}")),
            );
        } else {
            wrong.push(format!("src/{path} has no row in the module table"));
        }
    }
    for (paths, row) in &rows {
        for dir in paths.iter().filter(|p| p.ends_with('/')) {
            let owns = row.split('|').nth(2).unwrap_or("");
            let files: Vec<String> = entries_of(&src, dir)
                .into_iter()
                .filter(|f| f.ends_with(".rs") && f != "mod.rs" && !f.contains("tests"))
                .collect();
            // Named as `f.rs` or as `dir/f.rs` (gc's row says `gc/api.rs`).
            let names =
                |f: &str| owns.contains(&format!("`{f}`")) || owns.contains(&format!("`{dir}{f}`"));
            if !files.iter().any(|f| names(f)) {
                continue;
            }
            for f in files {
                if !names(&f) && !named.contains(&format!("{dir}{f}").as_str()) {
                    wrong.push(format!("the row of `{dir}` names its files but not `{f}`"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md's module table and src/ disagree:\n{}",
        wrong.join("\n")
    );
}

/// docs/architecture.md: "`mod.rs` is the door: every public method once". A `pub fn` of
/// `Engine` anywhere else in `src/engine/` is a method the door does not show.
/// Every `.rs` file below `dir`.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// docs/architecture.md "Where to add things": a file past 800 lines is
/// doing more than one job, or its tests belong beside it.
#[test]
fn no_src_file_is_over_800_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 800).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these:\n{}", long.join("\n"));
}

#[test]
fn every_public_engine_method_is_in_the_door() {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut files = Vec::new();
    rs_files(&engine, &mut files);
    let mut outside = Vec::new();
    for f in files.iter().filter(|f| **f != engine.join("mod.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        let mut in_engine = false;
        for line in text.lines() {
            if line.starts_with("impl Engine {") {
                in_engine = true;
            } else if line == "}" {
                in_engine = false;
            } else if in_engine && line.starts_with("    pub fn ") {
                outside.push(format!("{}: {}", f.display(), line.trim()));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "public Engine methods outside engine/mod.rs:\n{}",
        outside.join("\n")
    );
}
