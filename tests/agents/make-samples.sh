#!/usr/bin/env bash
# Re-record tests/agents/samples/*.jsonl: runs each agent through the default
# 3-turn scenario and the failures scenario with the payload recorder.
# Usage: bash tests/agents/make-samples.sh [WORKDIR]   (default: a fresh mktemp dir)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$(mktemp -d -t rewind-agents-XXXXXX)}"
mkdir -p "$work"
status=0
for agent in claude codex gemini; do
  node "$here/run-agent.mjs" --agent "$agent" --project "$work/$agent/project" --out "$work/$agent/run" \
    --samples "$here/samples/$agent.jsonl" > "$work/$agent.summary.json" || status=1
  node "$here/run-agent.mjs" --agent "$agent" --project "$work/$agent-failures/project" --out "$work/$agent-failures/run" \
    --script "$here/scenarios/failures.json" --turns 2 \
    --samples "$here/samples/$agent-failures.jsonl" > "$work/$agent-failures.summary.json" || status=1
  node -e '
    for (const f of process.argv.slice(1)) {
      const s = JSON.parse(require("fs").readFileSync(f, "utf8"));
      console.log(`${s.ok ? "ok  " : "FAIL"} ${s.agent} ${s.version} turns(s)=${s.turns.map((t) => t.duration_s).join(",")} ${f}`);
    }' "$work/$agent.summary.json" "$work/$agent-failures.summary.json"
done
# The agents of issue 41: the default scenario only (their failures are
# not scripted yet).
for agent in opencode kilo qwen copilot droid cline; do
  node "$here/run-agent.mjs" --agent "$agent" --project "$work/$agent/project" --out "$work/$agent/run" \
    --samples "$here/samples/$agent.jsonl" > "$work/$agent.summary.json" || status=1
  node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(`${s.ok ? "ok  " : "FAIL"} ${s.agent} ${s.version} turns(s)=${s.turns.map((t) => t.duration_s).join(",")}`);' "$work/$agent.summary.json"
done
node "$here/make-payloads.mjs"
exit $status
