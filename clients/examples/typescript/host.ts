// A minimal agent host on top of the rewind TypeScript client.
//
// It reads user messages from stdin, one per line. Before each message it takes a
// checkpoint (so whatever the user changed between turns is recorded), records the
// message in the session, lets a toy "agent" act on it, and takes a checkpoint at the end
// of the turn. `/approve` locks in the current state, `/reset` puts the project back to
// the last approved state (undoable with `/undo`).
//
//   npm start -- [--project DIR] [--store DIR] [--rewind BIN]
//
// Without --project it works on a fresh demo project in a temporary directory.
// Lines:  write PATH TEXT...   the agent writes TEXT to PATH
//         delete PATH          the agent deletes PATH
//         /status /approve [MESSAGE] /reset /undo /log /quit
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { RewindClient, RewindError, type RestoreResult } from "../../typescript/src/index.js";

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * $REWIND_BIN, else the repository's target/release or target/debug build, else undefined:
 * the client's default (the rewind-sidecar-<platform> package's binary, else PATH).
 */
function findRewind(): string | undefined {
  const fromEnv = process.env["REWIND_BIN"];
  if (fromEnv) return fromEnv;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++, dir = dirname(dir)) {
    for (const profile of ["release", "debug"]) {
      const p = join(dir, "target", profile, "rewind");
      if (existsSync(p)) return p;
    }
  }
  return undefined;
}

function demoProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "rewind-demo-"));
  writeFileSync(join(dir, "README.md"), "# demo\n");
  return dir;
}

function describe(r: RestoreResult): string {
  const parts = [`restored [${r.restored.join(", ")}]`, `deleted [${r.deleted.join(", ")}]`];
  if (r.skipped.length > 0) parts.push(`skipped [${r.conflicts.map((c) => `${c.path}: ${c.reason}`).join(", ")}]`);
  return parts.join(" ");
}

const project = resolve(option("--project") ?? demoProject());
const store = option("--store");
const say = (line: string): void => {
  process.stdout.write(line + "\n");
};

const rewind = new RewindClient({ binary: option("--rewind") ?? findRewind(), projectDir: project });
rewind.on("files_changed", (e) =>
  say(`files_changed ${e.reason}: written [${e.written.join(", ")}] deleted [${e.deleted.join(", ")}]`),
);
rewind.on("stderr", (line) => process.stderr.write(`[rewind] ${line}\n`));

const init = await rewind.initialize(store === undefined ? {} : { storeDir: resolve(store) });
say(`rewind ready: project ${init.projectRoot}, baseline ${init.baseline.entryId} (${init.baseline.files} files)`);

/** The toy agent: acts on `write PATH TEXT` and `delete PATH`. */
function agent(message: string): void {
  const [verb, path, ...rest] = message.split(" ");
  if (path === undefined || path.startsWith("/") || path.split("/").includes("..")) {
    say("agent: nothing to do");
  } else if (verb === "write") {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), rest.join(" ") + "\n");
    say(`agent: wrote ${path}`);
  } else if (verb === "delete") {
    rmSync(join(project, path), { force: true });
    say(`agent: deleted ${path}`);
  } else {
    say("agent: nothing to do");
  }
}

let turn = 0;
async function handle(line: string): Promise<boolean> {
  const [command, ...args] = line.trim().split(" ");
  switch (command) {
    case "":
      return true;
    case "/quit":
      return false;
    case "/status": {
      const st = await rewind.getStatus();
      say(`status: ${st.changedFiles.length} unapproved file(s)`);
      for (const f of st.changedFiles) say(`  ${f.status} ${f.path} (+${f.additions} -${f.deletions})`);
      return true;
    }
    case "/approve": {
      const a = await rewind.approve({ message: args.join(" ") || null });
      say(`approved ${a.approvedTreeHash.slice(0, 12)} (${a.snapshotsApproved} snapshot(s))`);
      return true;
    }
    case "/reset": {
      const r = await rewind.reset();
      say(`reset: ${describe(r.restore)}`);
      return true;
    }
    case "/undo": {
      const r = await rewind.undo();
      say(`undo: ${describe(r)}`);
      return true;
    }
    case "/log": {
      for (const c of (await rewind.listCheckpoints()).checkpoints) {
        say(`  ${c.entryId} turn ${c.turnIndex} ${c.kind} +${c.added} ~${c.modified} -${c.deleted}${c.label ? ` [${c.label}]` : ""}`);
      }
      return true;
    }
    default: {
      // A user message: checkpoint first, then record it, then let the agent work.
      turn++;
      const before = await rewind.snapshot({ kind: "message", label: line.slice(0, 40) });
      say(`checkpoint before message ${turn}: ${before.entryId ?? "unchanged"}`);
      await rewind.appendEntry({ role: "user", text: line });
      agent(line);
      const after = await rewind.snapshot({ kind: "turn" });
      say(`turn ${turn} done: ${after.diff.added.length} added, ${after.diff.modified.length} modified, ${after.diff.deleted.length} deleted`);
      return true;
    }
  }
}

const input = createInterface({ input: process.stdin, terminal: false });
for await (const line of input) {
  try {
    if (!(await handle(line))) break;
  } catch (err) {
    if (!(err instanceof RewindError)) throw err;
    say(`error ${err.code}: ${err.message}`);
  }
}
input.close();
const exit = await rewind.close();
say(`bye (rewind exited ${String(exit.code)})`);
process.exitCode = exit.code === 0 ? 0 : 1;
