// End to end: the real pi agent (`pi --mode rpc --offline`, the pinned npm package) with the
// rewind adapter and a scripted model (test/fixtures/faux-agent.ts). Scripted turns write, edit
// and delete files and run bash; the test then moves pi's conversation tree back and forth and
// checks the files on disk at every step, /rewind undo, list and diff, and that rewind's session
// file mirrors pi's (user messages and turn ends under pi's own entry ids, step-snapshots with
// the right diffs in between).
//
// Hermetic: HOME, PI_CODING_AGENT_DIR and REWIND_HOME are temporary directories, no network, no
// API key. Bounded: every wait has a deadline and pi is killed when the test ends or fails.
// rewind: $REWIND_BIN, else <repo>/target/release/rewind or target/debug/rewind.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { LineDecoder } from "rewind-sidecar";

/** clients/typescript/pi (this file runs from dist/test/). */
const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const repoRoot = resolve(packageDir, "..", "..", "..");
const piCli = join(packageDir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const adapter = join(packageDir, "src", "index.ts");
const fixture = join(packageDir, "test", "fixtures", "faux-agent.ts");

const WAIT_MS = 30_000;

function rewindBinary(): string {
  const fromEnv = process.env["REWIND_BIN"];
  if (fromEnv) {
    assert.ok(existsSync(fromEnv), `REWIND_BIN=${fromEnv} does not exist`);
    return resolve(fromEnv);
  }
  for (const profile of ["release", "debug"]) {
    const p = join(repoRoot, "target", profile, "rewind");
    if (existsSync(p)) return p;
  }
  throw new Error("no rewind binary: set REWIND_BIN or run `cargo build --bin rewind`");
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** pi in RPC mode: commands on stdin, responses and events on stdout (strict JSONL). */
class Pi {
  readonly child: ChildProcessWithoutNullStreams;
  readonly events: Json[] = [];
  readonly stderr: string[] = [];
  private readonly waiters = new Set<() => void>();
  private nextId = 1;
  readonly exited: Promise<number | null>;

  constructor(cwd: string, env: NodeJS.ProcessEnv, extraArgs: string[] = []) {
    this.child = spawn(
      process.execPath,
      // Only the two extensions given here: no discovery of extensions, skills, prompt
      // templates, themes or AGENTS.md files.
      [piCli, "--mode", "rpc", "--offline", "--provider", "faux", "--model", "faux-1",
        "-ne", "-ns", "-np", "-nc", "--no-themes", "-e", fixture, "-e", adapter, ...extraArgs],
      { cwd, env, stdio: ["pipe", "pipe", "pipe"] },
    );
    const lines = new LineDecoder();
    const onLines = (ls: string[]): void => {
      for (const l of ls) if (l.trim() !== "") this.events.push(JSON.parse(l) as Json);
      for (const w of [...this.waiters]) w();
    };
    this.child.stdout.on("data", (c: Buffer) => onLines(lines.push(c)));
    this.child.stdout.on("end", () => onLines(lines.end()));
    this.child.stderr.on("data", (c: Buffer) => this.stderr.push(c.toString("utf8")));
    this.exited = new Promise((res) => this.child.on("close", (code) => res(code)));
    void this.exited.then(() => {
      for (const w of [...this.waiters]) w();
    });
  }

  /** Wait until `pick` finds something among the events from index `from` on. */
  async waitFor<T>(what: string, from: number, pick: (events: Json[]) => T | undefined): Promise<T> {
    return new Promise<T>((res, rej) => {
      const check = (): void => {
        const found = pick(this.events.slice(from));
        if (found !== undefined) {
          done();
          res(found);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          done();
          rej(new Error(`pi exited while waiting for ${what}\n${this.stderr.join("").slice(-3000)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        rej(new Error(`timed out after ${WAIT_MS} ms waiting for ${what}\nstderr: ${this.stderr.join("").slice(-3000)}`));
      }, WAIT_MS);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Send a command; resolve with its data once pi answered (fails on `success: false`). */
  async command(type: string, fields: Json = {}): Promise<{ data: Json | undefined; from: number }> {
    const id = `t${this.nextId++}`;
    const from = this.events.length;
    this.child.stdin.write(`${JSON.stringify({ id, type, ...fields })}\n`);
    const response = await this.waitFor(`the response to ${type}`, from, (evs) => evs.find((e) => e.type === "response" && e.id === id));
    assert.equal(response["success"], true, `${type} failed: ${String(response["error"])}`);
    return { data: response["data"] as Json | undefined, from };
  }

  /** A user prompt: resolve when the agent run it started has ended. */
  async prompt(message: string): Promise<void> {
    const { from } = await this.command("prompt", { message });
    await this.waitFor(`agent_end after ${JSON.stringify(message)}`, from, (evs) => evs.find((e) => e.type === "agent_end"));
    const errors = this.events.slice(from).filter((e) => e.type === "extension_error");
    assert.deepEqual(errors, [], "extension errors");
  }

  /**
   * An extension command (pi answers `prompt` once the handler has returned): the messages the
   * extensions showed meanwhile (ctx.ui.notify → extension_ui_request "notify").
   */
  async slash(line: string): Promise<string[]> {
    const { from } = await this.command("prompt", { message: line });
    const evs = this.events.slice(from);
    assert.deepEqual(evs.filter((e) => e.type === "extension_error"), [], `extension errors during ${line}`);
    return evs.filter((e) => e.type === "extension_ui_request" && e.method === "notify").map((e) => String(e.message));
  }

  async close(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

/** Every regular file below `dir` (relative `/` paths) with its content. */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p).split("\\").join("/")] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

function readJsonl(path: string): Json[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Json);
}

/** Entry ids from the root to `id` (inclusive), through `parentId`. */
function pathTo(entries: Json[], id: string): string[] {
  const byId = new Map(entries.filter((e) => typeof e.id === "string").map((e) => [e.id as string, e]));
  const out: string[] = [];
  for (let cur: string | null = id; cur !== null; cur = (byId.get(cur)?.parentId as string | null | undefined) ?? null) {
    assert.ok(byId.has(cur), `entry ${cur} missing`);
    out.unshift(cur);
  }
  return out;
}

test("pi + rewind adapter: files follow pi's conversation tree", { timeout: 180_000 }, async (t) => {
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), "rewind-pi-e2e-"));
  const project = join(tmp, "project");
  for (const d of ["home", "agent", "rewind-home", "xdg", "project"]) mkdirSync(join(tmp, d));
  writeFileSync(join(project, "README.md"), "hello\n");
  const rewindBin = rewindBinary();

  const env = {
    ...process.env,
    HOME: join(tmp, "home"),
    PI_CODING_AGENT_DIR: join(tmp, "agent"),
    PI_OFFLINE: "1",
    REWIND_BIN: rewindBin,
    REWIND_HOME: join(tmp, "rewind-home"),
    XDG_DATA_HOME: join(tmp, "xdg"),
    XDG_CONFIG_HOME: join(tmp, "xdg"),
  };
  let pi = new Pi(project, env);
  let passed = false;
  t.after(() => {
    pi.child.kill("SIGKILL"); // a no-op once pi has exited; its rewind child exits on EOF
    if (passed) rmSync(tmp, { recursive: true, force: true });
    else console.error(`kept ${tmp} for inspection`);
  });

  const disk = (): Record<string, string> => filesOf(project);
  const S0 = { "README.md": "hello\n" };
  const S1 = { ...S0, "notes.txt": "one\n", "src/app.js": "v1\n" };
  const S2 = { ...S0, "lib/util.js": "x\n", "notes.txt": "two\n" };
  const S2edited = { ...S2, "README.md": "hello, edited\n" };
  const S3 = { ...S2edited, "notes.txt": "two\nthree\n", "scratch.txt": "person\n", "src/app.js": "v3\n" };
  const S1b = { ...S1, "other.txt": "b\n" };

  const state = (await pi.command("get_state")).data!;
  assert.equal(state["model"]?.["provider"], "faux");
  const piSessionFile = String(state["sessionFile"]);
  const piEntries = (): Json[] => readJsonl(piSessionFile).filter((e) => e.type !== "session");
  const userEntry = (text: string): Json => {
    const found = piEntries().filter((e) => e.type === "message" && e.message.role === "user" && e.message.content[0]?.text === text);
    assert.equal(found.length, 1, `one user message ${JSON.stringify(text)} in pi's session`);
    return found[0]!;
  };
  const leafOfPi = (): string => piEntries().at(-1)!.id as string;

  // ---- the scripted turns ---------------------------------------------------------------
  await pi.prompt("turn 1: create the files");
  assert.deepEqual(disk(), S1, "after turn 1");
  const E1 = leafOfPi(); // pi's leaf after run 1: its final assistant message
  await pi.prompt("turn 2: edit and move");
  assert.deepEqual(disk(), S2, "after turn 2");
  const E2 = leafOfPi();
  writeFileSync(join(project, "README.md"), "hello, edited\n"); // a person, between turns
  await pi.prompt("turn 3: append and recreate");
  assert.deepEqual(disk(), S3, "after turn 3");
  const A3 = leafOfPi();
  const U1 = userEntry("turn 1: create the files").id as string;
  const U2 = userEntry("turn 2: edit and move").id as string;
  const U3 = userEntry("turn 3: append and recreate").id as string;
  assert.equal(userEntry("turn 2: edit and move").parentId, E1);
  assert.equal(userEntry("turn 3: append and recreate").parentId, E2);

  // ---- navigating pi's tree -------------------------------------------------------------
  const nav = async (id: string): Promise<Json> => {
    const shown = await pi.slash(`/tree-nav ${id}`);
    const line = shown.find((m) => m.startsWith("tree-nav "));
    assert.ok(line, `tree-nav answered: ${shown.join(" | ")}`);
    const result = JSON.parse(line.slice("tree-nav ".length)) as Json;
    assert.equal(result["cancelled"], false);
    return result;
  };

  // An assistant message: the leaf is that entry; files as the turn left them (before the
  // person's README edit, which came after run 2).
  assert.equal((await nav(E2))["leaf"], E2);
  assert.deepEqual(disk(), S2, "at the end of run 2");

  // A user message: pi moves its leaf to the message's parent, and the files are as they were
  // just before the message was sent — with the person's README edit.
  assert.equal((await nav(U3))["leaf"], E2, "pi puts its leaf on the parent of a selected user message");
  assert.deepEqual(disk(), S2edited, "before turn 3");
  assert.equal((await nav(U2))["leaf"], E1);
  assert.deepEqual(disk(), S1, "before turn 2");
  assert.equal((await nav(U1))["leaf"], userEntry("turn 1: create the files").parentId);
  assert.deepEqual(disk(), S0, "before turn 1");

  // Forward again, to the tip of the conversation.
  await nav(A3);
  assert.deepEqual(disk(), S3, "forward to the end of turn 3");

  // A second branch from before turn 2, then back and forth between the two tips.
  await nav(U2);
  assert.deepEqual(disk(), S1, "before turn 2, again");
  await pi.prompt("turn 2b: another way");
  assert.deepEqual(disk(), S1b, "after turn 2b");
  const B2 = leafOfPi();
  const U2b = userEntry("turn 2b: another way").id as string;
  assert.equal(userEntry("turn 2b: another way").parentId, E1);
  await nav(A3);
  assert.deepEqual(disk(), S3, "tip of the first branch");
  await nav(B2);
  assert.deepEqual(disk(), S1b, "tip of the second branch");

  // ---- the person's commands ------------------------------------------------------------
  const undone = await pi.slash("/rewind undo");
  assert.ok(undone.some((m) => m.includes("undone")), undone.join(" | "));
  assert.deepEqual(disk(), S3, "/rewind undo reverts the last navigation");
  const list = (await pi.slash("/rewind")).join("\n");
  assert.match(list, /rewind checkpoints/);
  assert.match(list, /\bbaseline\b/);
  assert.match(list, /\bturn\b/);
  const changed = (await pi.slash("/rewind diff")).join("\n");
  assert.match(changed, /added\s+notes\.txt/);
  const diff = (await pi.slash("/rewind diff notes.txt")).join("\n");
  assert.match(diff, /\+\+\+ b\/notes\.txt/);
  assert.match(diff, /^\+three$/m);

  assert.equal(await pi.close(), 0, "pi exits cleanly on EOF");

  // ---- rewind's session mirrors pi's ------------------------------------------------------
  const rewindFile = join(dirname(piSessionFile), "rewind", basename(piSessionFile));
  assert.ok(existsSync(rewindFile), `rewind's session beside pi's: ${rewindFile}`);
  assert.deepEqual(
    readdirSync(dirname(piSessionFile)).filter((f) => f.endsWith(".jsonl")),
    [basename(piSessionFile)],
    "nothing pi would list as a session of its own",
  );
  const rw = readJsonl(rewindFile);
  assert.equal(rw[0]!.type, "session");
  const entries = rw.slice(1);
  const byId = new Map(entries.map((e) => [e.id as string, e]));

  // pi's user messages, under pi's ids and text.
  for (const [id, text] of [[U1, "turn 1: create the files"], [U2, "turn 2: edit and move"], [U3, "turn 3: append and recreate"], [U2b, "turn 2b: another way"]] as const) {
    const e = byId.get(id);
    assert.ok(e, `pi's user message ${id} is in rewind's session`);
    assert.equal(e.type, "message");
    assert.equal(e.message.role, "user");
    assert.equal(e.message.content, text);
  }
  // pi's turn ends, as markers.
  for (const id of [E1, E2, A3, B2]) assert.equal(byId.get(id)?.customType, "pi-turn", `turn end ${id} mirrored`);

  // Rewind's tree has pi's shape: the user messages on the path to each tip are pi's.
  const userIdsOnPath = (tip: string): string[] =>
    pathTo(entries, tip).filter((id) => byId.get(id)?.type === "message");
  assert.deepEqual(userIdsOnPath(A3), [U1, U2, U3]);
  assert.deepEqual(userIdsOnPath(B2), [U1, U2b]);

  // Between one mirrored pi entry and the next on a path: the snapshots of that stretch.
  const snapshotsBetween = (tip: string, fromId: string, toId: string): Json[] => {
    const p = pathTo(entries, tip);
    return p.slice(p.indexOf(fromId) + 1, p.indexOf(toId)).map((id) => byId.get(id)!).filter((e) => e.customType === "step-snapshot");
  };
  const diffOf = (e: Json): Json => ({ kind: e.data.kind, ...e.data.diff });
  const d = (kind: string, added: string[] = [], modified: string[] = [], deleted: string[] = []): Json => ({ kind, added, modified, deleted });

  assert.deepEqual(diffOf(byId.get(pathTo(entries, U1)[0]!)!), d("baseline", ["README.md"]), "the baseline");
  // Run 1: one turn with two parallel writes (their pre-tool snapshots found nothing new).
  assert.deepEqual(snapshotsBetween(A3, U1, E1).map(diffOf), [d("turn", ["notes.txt", "src/app.js"])]);
  // Run 2: two turns, each snapshotted before the next tool ran (no race with the bash call).
  assert.deepEqual(snapshotsBetween(A3, U2, E2).map(diffOf), [d("turn", [], ["notes.txt"]), d("turn", ["lib/util.js"], [], ["src/app.js"])]);
  // The person's edit, recorded when they sent turn 3, before the message.
  assert.deepEqual(snapshotsBetween(A3, E2, U3).map(diffOf), [d("message", [], ["README.md"])]);
  // Run 3: the file saved while the model thought, caught by the snapshot before bash; then the turn.
  const run3 = snapshotsBetween(A3, U3, A3);
  assert.deepEqual(run3.map(diffOf), [d("tool", ["scratch.txt"]), d("turn", ["src/app.js"], ["notes.txt"])]);
  assert.deepEqual(run3[0]!.data.tool, { name: "bash", input: { command: "echo three >> notes.txt" } });
  // Branch 2b.
  assert.deepEqual(snapshotsBetween(B2, U2b, B2).map(diffOf), [d("turn", ["other.txt"])]);

  // ---- pi again, on the same session (--continue): rewind resumes its session beside it ----
  pi = new Pi(project, env, ["--continue"]);
  assert.equal((await pi.command("get_state")).data!["sessionFile"], piSessionFile, "--continue picks pi's session, not rewind's");
  await nav(U2);
  assert.deepEqual(disk(), S1, "before turn 2, after a restart");
  await nav(A3);
  assert.deepEqual(disk(), S3, "the end of turn 3, after a restart");
  assert.equal(await pi.close(), 0);

  passed = process.env["KEEP_TMP"] === undefined;
  t.diagnostic(`e2e took ${Date.now() - started} ms`);
});
