// Plain payloads a person can replay, from the recorder's raw samples
// (samples/<agent>.jsonl: each line a wrapper with `payload`, `env_selected`
// and another machine's paths). For each agent, the events of its first turn
// — from the start of the session to the end of that turn — one payload a
// line in samples/payloads/<rewind's agent name>.jsonl, the project's path
// replaced by @PROJECT@ and the transcript's left out (it is another
// machine's file). docs/agents.md "Replaying a turn" has the one-liner.
//
// Usage: node tests/agents/make-payloads.mjs   (after make-samples.sh)
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const agents = {
  claude: { name: "claude-code", env: "CLAUDE_PROJECT_DIR", end: ["Stop"] },
  codex: { name: "codex", env: null, end: ["Stop"] },
  gemini: { name: "gemini", env: "GEMINI_PROJECT_DIR", end: ["AfterAgent"] },
  qwen: { name: "qwen-code", env: "QWEN_PROJECT_DIR", end: ["Stop"] },
  copilot: { name: "copilot", env: "COPILOT_PROJECT_DIR", end: ["Stop"] },
  droid: { name: "droid", env: "FACTORY_PROJECT_DIR", end: ["Stop"] },
  opencode: { name: "opencode", env: null, end: ["session.idle"] },
  kilo: { name: "kilo", env: null, end: ["session.idle"] },
  // Its own shape: the event in `hookName`, the project in `workspaceRoots`.
  cline: { name: "cline", env: null, end: ["agent_end"] },
};

const out = join(here, "samples", "payloads");
mkdirSync(out, { recursive: true });
for (const [file, a] of Object.entries(agents)) {
  const lines = readFileSync(join(here, "samples", `${file}.jsonl`), "utf8").split("\n").filter(Boolean);
  const kept = [];
  for (const line of lines) {
    const rec = JSON.parse(line);
    const p = rec.payload;
    if (!p || typeof p !== "object") continue;
    const project = (a.env && rec.env_selected?.[a.env]) || p.directory || p.workspaceRoots?.[0] || p.cwd || rec.cwd;
    delete p.transcript_path;
    // Longest first: the project inside a run directory's path.
    let text = JSON.stringify(p).split(project).join("@PROJECT@");
    kept.push(text);
    if (a.end.includes(p.hook_event_name ?? p.hookName)) break;
  }
  writeFileSync(join(out, `${a.name}.jsonl`), kept.join("\n") + "\n");
  console.log(`${a.name}: ${kept.length} events`);
}
