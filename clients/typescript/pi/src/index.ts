// rewind as pi's file-rollback engine: a pi extension (tested with pi 0.73.1) that drives a
// `rewind serve` sidecar through the TypeScript client, so that moving around pi's
// conversation tree moves the project's files with it.
//
//   pi install npm:rewind-sidecar-pi   or, in a checkout,   pi -e clients/typescript/pi
//   (the binary: REWIND_BIN, else the one rewind-sidecar brings, else `rewind` on PATH)
//
// The mapping, in pi's event order:
//
//   session_start   spawn rewind; initialize it with pi's cwd and a session file beside pi's
//                   (<pi session dir>/rewind/<pi session file name>). Not awaited by pi's
//                   startup: every later handler waits for it.
//   before_agent_start  a person sent a message: snapshot (kind "message"), so their edits made
//                   between turns are recorded before the message (pi awaits this handler
//                   before calling the model).
//   (user message)  pi persists a user message only after its message_end handlers ran, so its
//                   entry id is known from the next event on: tool_call and turn_end first copy
//                   every new user message on pi's branch into rewind (append_entry with pi's own
//                   entry id), right below that "message" snapshot.
//   tool_call       before write/edit: snapshot just the file the tool names (`paths`); before
//                   bash: the whole tree, since a command may touch anything. Registering this
//                   handler is also what makes pi drain its event queue (and so our turn_end
//                   snapshot) before the next tool runs: without any tool_call handler, pi runs
//                   the next turn's tools while turn_end handlers are still going.
//   turn_end        snapshot the tree (kind "turn"), then append a marker carrying the id of pi's
//                   leaf (the entry that ended the turn), so that pi's turn ends exist in
//                   rewind's tree, each right below the snapshot of its turn.
//   session_before_tree / session_tree  navigate rewind to the entry that stands for pi's new
//                   position (see `rewindTarget`), restoring the files recorded there.
//   session_shutdown  close the sidecar (EOF: it flushes and releases its lock).
//
// Commands for a person: /rewind [list] · /rewind diff [path] [fromEntryId] · /rewind undo.
//
// A rewind failure never stops the agent: it is shown as a warning and the tool runs anyway.

import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { homedir } from "node:os";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
// The client package (a dependency; in this repository, `file:..` as a dev dependency): pi loads
// this file with jiti, which compiles it on the fly and resolves `rewind-sidecar` from
// node_modules like Node does (the package's built dist/src/index.js).
import { RewindClient, RewindError, type RestoreResult } from "rewind-sidecar";

/** What pi's session manager returns for an entry (only the fields used here). */
interface PiEntry {
  id: string;
  parentId: string | null;
  type: string;
  message?: { role?: string; content?: unknown };
}

/** The per-session state; undefined while rewind is not running. */
interface Session {
  rw: RewindClient;
  /** The baseline entry: the files as they were when rewind started on this session. */
  baselineId: string;
  /** pi entry ids that exist in rewind's session (user messages and turn-end markers). */
  mirrored: Set<string>;
  /**
   * pi user messages from before rewind was attached (a fork, or a session rewind never saw):
   * rewind has no checkpoint for them, so they are never copied and never navigated to.
   */
  foreign: Set<string>;
  /**
   * pi leaf we navigated away from → the tip of that branch in rewind (navigate_tree's
   * `oldLeafId`: a pre-restore snapshot when the disk had moved on since the last checkpoint),
   * so that coming back brings back that branch's latest files.
   */
  revisit: Map<string, string>;
  /** The entry picked in pi's tree (session_before_tree), read by the following session_tree. */
  selected?: string;
}

/** rewind's marker for the pi entry that ended a turn. */
const TURN_MARKER = "pi-turn";

export default function rewindExtension(pi: ExtensionAPI): void {
  let session: Session | undefined;

  // Every rewind interaction runs through this chain, one at a time: a multi-step operation
  // (snapshot, then append) must not interleave with another (a /rewind command arriving while
  // the agent streams, or a turn_end pi did not wait for).
  let chain: Promise<unknown> = Promise.resolve();
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = chain.then(fn, fn);
    chain = next.catch(() => undefined);
    return next;
  }

  /** Run `fn` with the live session, reporting a failure as a warning (never throwing). */
  function withSession(ctx: ExtensionContext, what: string, fn: (s: Session) => Promise<void>): Promise<void> {
    return serial(async () => {
      const s = session;
      if (s === undefined) return;
      try {
        await fn(s);
      } catch (err) {
        ctx.ui.notify(`rewind: ${what} failed: ${errorText(err)}`, "warning");
      }
    });
  }

  async function stop(): Promise<void> {
    const s = session;
    session = undefined;
    if (s !== undefined) await s.rw.close();
  }

  async function start(ctx: ExtensionContext): Promise<void> {
    await stop();
    const piFile = ctx.sessionManager.getSessionFile();
    // Beside pi's session file, in a subdirectory: rewind writes a pi-style session header, so a
    // `.jsonl` directly in pi's session directory would be listed by /resume and picked by
    // `pi --continue`. Without a pi session file (--no-session) rewind picks its own.
    const sessionFile = piFile === undefined ? undefined : join(dirname(piFile), "rewind", basename(piFile));
    let rw: RewindClient;
    try {
      rw = new RewindClient(); // throws when no binary is found (defaultBinary)
    } catch (err) {
      ctx.ui.notify(`rewind could not start, file checkpoints are off: ${errorText(err)}`, "error");
      return;
    }
    try {
      const init = await rw.initialize({ cwd: ctx.cwd, ...(sessionFile === undefined ? {} : { sessionFile }) });
      // Resuming: what rewind already holds of pi's session.
      const tree = await rw.getTree();
      const mirrored = new Set(
        tree.entries.filter((e) => e.type === "message" || e.customType === TURN_MARKER).map((e) => e.id),
      );
      const foreign = new Set(
        (ctx.sessionManager.getEntries() as PiEntry[]).filter((e) => isUserMessage(e) && !mirrored.has(e.id)).map((e) => e.id),
      );
      const s: Session = { rw, baselineId: init.baseline.entryId, mirrored, foreign, revisit: new Map() };
      session = s;
      rw.on("exit", (info) => {
        if (session !== s) return;
        session = undefined;
        ctx.ui.notify(`rewind exited (${info.signal ?? `code ${String(info.code)}`}); file checkpoints are off`, "warning");
      });
    } catch (err) {
      rw.kill();
      ctx.ui.notify(`rewind could not start, file checkpoints are off: ${errorText(err)}`, "error");
    }
  }

  /** Copy the user messages on pi's branch that rewind does not have yet, oldest first. */
  async function mirrorUserMessages(s: Session, ctx: ExtensionContext): Promise<void> {
    for (const e of ctx.sessionManager.getBranch() as PiEntry[]) {
      if (!isUserMessage(e) || s.mirrored.has(e.id) || s.foreign.has(e.id)) continue;
      await s.rw.appendEntry({ entryId: e.id, entryType: "message", role: "user", text: messageText(e) });
      s.mirrored.add(e.id);
    }
  }

  /**
   * The rewind entry whose checkpoint holds the files for pi's new position.
   *
   * - pi moves its leaf to the *parent* of a selected user message (and puts the message back in
   *   the editor), so the files should be as they were just before that message was sent: the
   *   checkpoint at the message's parent in rewind, which includes the "message" snapshot of a
   *   person's edits made between the turns.
   * - Otherwise the leaf is the entry itself: walk from it towards the root to the first entry
   *   rewind knows — the tip we left there, a turn-end marker (the files when that turn ended),
   *   a user message (the files just before its turn) — or, above everything, the baseline.
   * - undefined: the position predates rewind (a forked conversation); files stay as they are.
   */
  async function rewindTarget(s: Session, ctx: ExtensionContext, newLeafId: string | null, selected: string | undefined): Promise<string | undefined> {
    const sm = ctx.sessionManager;
    const picked = selected === undefined ? undefined : (sm.getEntry(selected) as PiEntry | undefined);
    // (Only when this navigation is the one that picked it: pi's leaf is the message's parent,
    // or a summary or label entry pi put right below it.)
    const leadsHere =
      picked !== undefined &&
      (picked.parentId === newLeafId || (newLeafId !== null && (sm.getEntry(newLeafId) as PiEntry | undefined)?.parentId === picked.parentId));
    if (selected !== undefined && leadsHere && s.mirrored.has(selected) && isUserMessage(picked)) {
      const { entries } = await s.rw.getTree();
      const parent = entries.find((e) => e.id === selected)?.parentId;
      if (parent != null) return parent;
    }
    for (let id = newLeafId; id !== null; ) {
      const tip = s.revisit.get(id);
      if (tip !== undefined) return tip;
      if (s.mirrored.has(id)) return id;
      if (s.foreign.has(id)) return undefined;
      id = (sm.getEntry(id) as PiEntry | undefined)?.parentId ?? null;
    }
    return s.baselineId;
  }

  // ---- pi events -----------------------------------------------------------------------

  pi.on("session_start", (_event, ctx) => {
    // Not awaited, so pi starts while rewind takes its baseline; every later handler waits
    // for it through the chain.
    void serial(() => start(ctx));
  });

  pi.on("session_shutdown", async () => {
    await serial(stop);
  });

  pi.on("before_agent_start", async (_event, ctx) => {
    // The person just sent a message: whatever they changed since the last turn belongs
    // before it (pi awaits this handler before the model is called).
    await withSession(ctx, "message snapshot", async (s) => {
      await s.rw.snapshot({ kind: "message" });
    });
  });

  pi.on("tool_call", async (event, ctx) => {
    await withSession(ctx, `snapshot before ${event.toolName}`, async (s) => {
      await mirrorUserMessages(s, ctx);
      const input = event.input as { path?: unknown; command?: unknown };
      if (event.toolName === "write" || event.toolName === "edit") {
        const raw = input.path;
        if (typeof raw !== "string") return;
        // (The tool's input is recorded without the content it writes: the snapshot has that.)
        const tool = { name: event.toolName, input: { path: raw } };
        const path = projectPath(ctx.cwd, raw);
        if (path === undefined) return; // outside the project: nothing rewind keeps
        try {
          await s.rw.snapshot({ kind: "tool", paths: [path], tool });
        } catch (err) {
          // A path that leaves the project through a symlink is refused (-32602): not ours.
          if (!(err instanceof RewindError && err.isInvalidParams)) throw err;
        }
      } else if (event.toolName === "bash") {
        await s.rw.snapshot({ kind: "tool", tool: { name: "bash", input: { command: input.command } } });
      }
    });
    return undefined; // never block the tool
  });

  pi.on("turn_end", async (_event, ctx) => {
    await withSession(ctx, "turn snapshot", async (s) => {
      await mirrorUserMessages(s, ctx);
      await s.rw.snapshot({ kind: "turn" });
      const leaf = ctx.sessionManager.getLeafEntry() as PiEntry | undefined;
      if (leaf === undefined || s.mirrored.has(leaf.id)) return;
      await s.rw.appendEntry({
        entryId: leaf.id,
        entryType: "custom",
        customType: TURN_MARKER,
        data: { type: leaf.type, role: leaf.message?.role ?? null },
      });
      s.mirrored.add(leaf.id);
    });
  });

  pi.on("session_before_tree", (event) => {
    if (session !== undefined) session.selected = event.preparation.targetId;
  });

  pi.on("session_tree", async (event, ctx) => {
    await withSession(ctx, "navigation", async (s) => {
      const selected = s.selected;
      s.selected = undefined;
      const target = await rewindTarget(s, ctx, event.newLeafId, selected);
      if (target === undefined) {
        ctx.ui.notify("rewind: no checkpoint for this point (it predates rewind); files left as they are", "info");
        return;
      }
      const result = await s.rw.navigateTree({ targetId: target });
      if (event.oldLeafId !== null) s.revisit.set(event.oldLeafId, result.oldLeafId);
      if (result.restore !== null) report(ctx, "files follow the conversation", result.restore);
    });
  });

  // ---- commands ------------------------------------------------------------------------

  pi.registerCommand("rewind", {
    description: "File checkpoints: /rewind [list] | diff [path] [fromEntryId] | undo",
    getArgumentCompletions: (prefix) => {
      const items = ["list", "diff", "undo"].filter((c) => c.startsWith(prefix)).map((c) => ({ value: c, label: c }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      const [sub = "list", ...rest] = args.trim().split(/\s+/).filter((a) => a !== "");
      await serial(async () => undefined); // let a start in progress finish
      if (session === undefined) {
        ctx.ui.notify("rewind is not running", "warning");
        return;
      }
      await withSession(ctx, `/rewind ${sub}`, async (s) => {
        switch (sub) {
          case "list": {
            const { checkpoints } = await s.rw.listCheckpoints();
            const lines = checkpoints.map(
              (c) =>
                `${c.entryId}  turn ${c.turnIndex}  ${c.kind.padEnd(11)} +${c.added} ~${c.modified} -${c.deleted}` +
                (c.label ? `  ${c.label}` : ""),
            );
            ctx.ui.notify(["rewind checkpoints on this branch (oldest first):", ...lines].join("\n"), "info");
            return;
          }
          case "diff": {
            const [filePath, fromEntryId] = rest;
            if (filePath === undefined) {
              // Every file changed since the session started.
              const { files } = await s.rw.getModifiedFiles({ toEntryId: "@working" });
              const lines = files.map((f) => `${f.status.padEnd(8)} ${f.path}  (turn ${f.turnIndex})`);
              ctx.ui.notify(lines.length > 0 ? lines.join("\n") : "no changes since the session started", "info");
              return;
            }
            const diff = await s.rw.getFileDiff({ filePath, toEntryId: "@working", ...(fromEntryId === undefined ? {} : { fromEntryId }) });
            ctx.ui.notify(
              diff === null ? `${filePath}: not in either version` : diff.isBinary ? `${filePath}: binary file differs` : diff.unifiedDiff || `${filePath}: unchanged`,
              "info",
            );
            return;
          }
          case "undo": {
            try {
              report(ctx, "undone", await s.rw.undo());
            } catch (err) {
              if (err instanceof RewindError && err.isUnknownEntry) ctx.ui.notify("rewind: nothing to undo", "info");
              else throw err;
            }
            return;
          }
          default:
            ctx.ui.notify(`usage: /rewind [list] | diff [path] [fromEntryId] | undo`, "warning");
        }
      });
    },
  });
}

// ---- helpers -----------------------------------------------------------------------------

function isUserMessage(e: PiEntry | undefined): e is PiEntry {
  return e !== undefined && e.type === "message" && e.message?.role === "user";
}

function messageText(e: PiEntry): string {
  const content = e.message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b): b is { type: "text"; text: string } => b !== null && typeof b === "object" && b.type === "text")
    .map((b) => b.text)
    .join("\n");
}

/** A tool's path as rewind names it (relative to the project, `/`-separated), as pi resolves it. */
function projectPath(cwd: string, raw: string): string | undefined {
  // pi's write/edit tools strip a leading "@", expand "~" and resolve against the cwd.
  let p = raw.startsWith("@") ? raw.slice(1) : raw;
  if (p === "~" || p.startsWith("~/")) p = homedir() + p.slice(1);
  const rel = relative(cwd, resolve(cwd, p));
  if (rel === "" || rel === ".." || rel.startsWith(`..${"/"}`) || rel.startsWith("..\\") || isAbsolute(rel)) return undefined;
  return rel.split("\\").join("/");
}

function report(ctx: ExtensionContext, what: string, r: RestoreResult): void {
  const parts = [`${r.restored.length} written`, `${r.deleted.length} deleted`];
  if (r.skipped.length > 0) parts.push(`${r.skipped.length} skipped (${r.skipped.join(", ")})`);
  const conflicts = r.conflicts.filter((c) => !r.skipped.includes(c.path));
  if (conflicts.length > 0) parts.push(`conflicts: ${conflicts.map((c) => `${c.path} (${c.reason})`).join(", ")}`);
  const warnings = r.warnings ?? [];
  ctx.ui.notify(`rewind: ${what}: ${parts.join(", ")}${warnings.length > 0 ? `\n${warnings.join("\n")}` : ""}`, r.skipped.length > 0 ? "warning" : "info");
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
