// Runs the example host (clients/examples/typescript) end to end, with its one command
// (`npm start`), against the real binary.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { packageDir } from "./binary.js";
import { rewindBin, sandbox } from "./helpers.js";

const exampleDir = join(packageDir, "..", "examples", "typescript");

function npmCommand(args: string[]): [string, string[]] {
  // Under `npm test`, npm_execpath is npm's own CLI script; use it with this node.
  const npmCli = process.env["npm_execpath"];
  if (npmCli && /\.[cm]?js$/.test(npmCli)) return [process.execPath, [npmCli, ...args]];
  return [process.platform === "win32" ? "npm.cmd" : "npm", args];
}

function run(cmd: string, args: string[], input: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: exampleDir, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

test("example host: checkpoint before each message, approve, reset, undo", { timeout: 180_000 }, async () => {
  const sb = sandbox({ "README.md": "# demo\n" });
  try {
    const script = [
      "write notes.txt first draft",
      "/approve first draft ok",
      "write notes.txt ruined by the agent",
      "delete README.md",
      "/status",
      "/reset",
      "/status",
      "/undo",
      "/quit",
    ].join("\n");
    const [cmd, args] = npmCommand(["start", "--silent", "--", "--project", sb.project, "--store", sb.store]);
    const r = await run(cmd, args, script + "\n", { ...process.env, REWIND_BIN: rewindBin(), REWIND_HOME: sb.home });
    assert.equal(r.code, 0, `example failed:\n${r.stdout}\n${r.stderr}`);
    const out = r.stdout;
    assert.match(out, new RegExp(`rewind ready: project ${sb.project}, baseline [0-9a-f]{8} \\(1 files\\)`));
    assert.match(out, /checkpoint before message 1: unchanged/);
    assert.match(out, /turn 1 done: 1 added, 0 modified, 0 deleted/);
    assert.match(out, /approved [0-9a-f]{12}/);
    assert.match(out, /status: 2 unapproved file\(s\)\n {2}deleted README.md \(\+0 -1\)\n {2}modified notes.txt \(\+1 -1\)/);
    assert.match(out, /files_changed reset: written \[README.md, notes.txt\] deleted \[\]\nreset: restored \[README.md, notes.txt\]/);
    assert.match(out, /status: 0 unapproved file\(s\)/);
    assert.match(out, /files_changed undo: written \[notes.txt\] deleted \[README.md\]/);
    assert.match(out, /bye \(rewind exited 0\)/);
    // After the undo the project is as the agent left it.
    assert.equal(sb.read("notes.txt"), "ruined by the agent\n");
    assert.ok(!existsSync(join(sb.project, "README.md")));
  } finally {
    sb.cleanup();
  }
});
