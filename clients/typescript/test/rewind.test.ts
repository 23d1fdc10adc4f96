// The client against the real `rewind serve` binary (REWIND_BIN, or built by test/binary.ts).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import {
  PROTOCOL_VERSION,
  RewindClosedError,
  RewindError,
  RewindTimeoutError,
  type FilesChanged,
  type MethodName,
  type Progress,
  type RewindClient,
} from "../src/index.js";
import {
  assertNotificationMatches,
  assertResultMatches,
  clientFor,
  sandbox,
  type Sandbox,
} from "./helpers.js";

/** Run `fn` with an initialized client on a fresh sandbox; checks every result against the schema. */
async function withRewind(
  files: Record<string, string | Buffer>,
  fn: (c: RewindClient, sb: Sandbox, baseline: string) => Promise<void>,
): Promise<void> {
  const sb = sandbox(files);
  const c = clientFor(sb);
  const stderr: string[] = [];
  c.on("stderr", (l) => stderr.push(l));
  // Check every typed result against the schema.
  const call = c.call.bind(c);
  c.call = (async (method: MethodName, params?: unknown, opts?: unknown) => {
    const result = await (call as (m: string, p: unknown, o: unknown) => Promise<unknown>)(method, params, opts);
    assertResultMatches(method, result);
    return result;
  }) as typeof c.call;
  c.on("files_changed", (p) => assertNotificationMatches("files_changed", p));
  c.on("progress", (p) => assertNotificationMatches("progress", p));
  try {
    const init = await c.initialize({ storeDir: sb.store, options: { fsync: false } });
    await fn(c, sb, init.baseline.entryId);
    const exit = await c.close();
    assert.deepEqual(exit, { code: 0, signal: null }, `rewind exited uncleanly; stderr:\n${stderr.join("\n")}`);
  } finally {
    c.kill("SIGKILL");
    sb.cleanup();
  }
}

test("initialize on a temp project", async () => {
  await withRewind({ "a.txt": "hello\n", "dir/b.txt": "b\n" }, async (c, sb, baseline) => {
    const init = await c.initialize({ storeDir: sb.store, options: { fsync: false } });
    // A second initialize re-opens a (new) session; the result has the contract's shape.
    assert.equal(init.protocolVersion, PROTOCOL_VERSION);
    assert.equal(init.projectRoot, sb.project);
    assert.equal(init.storeDir, sb.store);
    assert.equal(init.baseline.files, 2);
    assert.equal(init.baseline.bytes, 8);
    assert.equal(init.leafId, init.baseline.entryId);
    assert.equal(init.resumed, false);
    assert.notEqual(init.baseline.entryId, baseline);
    assert.ok(existsSync(init.sessionFile));
  });
});

test("snapshot, get_modified_files, get_file_diff, history, tree, checkpoints", async () => {
  await withRewind({ "a.txt": "hello\n", "dir/b.txt": "b\n" }, async (c, sb, baseline) => {
    sb.write("a.txt", "hello world\n");
    sb.write("c.txt", "new\n");
    sb.rm("dir/b.txt");
    const snap = await c.snapshot({ label: "turn 1" });
    assert.equal(snap.changed, true);
    assert.deepEqual(snap.diff, { added: ["c.txt"], modified: ["a.txt"], deleted: ["dir/b.txt"] });
    assert.equal(snap.turnIndex, 1);
    assert.equal(typeof snap.entryId, "string");

    const again = await c.snapshot();
    assert.equal(again.changed, false);
    assert.equal(again.entryId, null);

    const mf = await c.getModifiedFiles();
    assert.deepEqual(
      mf.files.map((f) => [f.path, f.status, f.entryId, f.turnIndex]),
      [
        ["a.txt", "modified", snap.entryId, 1],
        ["c.txt", "added", snap.entryId, 1],
        ["dir/b.txt", "deleted", snap.entryId, 1],
      ],
    );
    assert.equal(mf.toTreeHash, snap.treeHash);

    const d = await c.getFileDiff({ filePath: "a.txt", fromEntryId: baseline });
    assert.ok(d);
    assert.equal(d.oldContent, "hello\n");
    assert.equal(d.newContent, "hello world\n");
    assert.equal(d.encoding, "utf8");
    assert.equal(d.additions, 1);
    assert.equal(d.deletions, 1);
    assert.match(d.unifiedDiff, /^--- a\/a\.txt\n\+\+\+ b\/a\.txt\n/);
    assert.match(d.unifiedDiff, /^-hello$/m);
    assert.match(d.unifiedDiff, /^\+hello world$/m);
    assert.equal(await c.getFileDiff({ filePath: "never-existed.txt" }), null);

    const hist = await c.getFileHistory({ filePath: "a.txt" });
    assert.deepEqual(hist.versions.map((v) => v.status), ["added", "modified"]);

    const tree = await c.getTree();
    assert.equal(tree.leafId, snap.entryId);
    const cps = await c.listCheckpoints();
    assert.deepEqual(cps.checkpoints.map((x) => x.entryId), [baseline, snap.entryId]);
    assert.equal(cps.checkpoints[1]?.label, "turn 1");
    assert.equal(cps.initialEntryId, baseline);
  });
});

test("restore_files: files_changed arrives before the response resolves; undo reverts", async () => {
  await withRewind({ "a.txt": "v1\n", "dir/b.txt": "b\n" }, async (c, sb, baseline) => {
    sb.write("a.txt", "v2\n");
    sb.write("c.txt", "new\n");
    sb.rm("dir/b.txt");
    await c.snapshot();

    const events: FilesChanged[] = [];
    let settled = false;
    let settledAtEvent: boolean | undefined;
    c.on("files_changed", (e) => {
      events.push(e);
      settledAtEvent = settled;
    });
    const res = await c.restoreFiles({ targetEntryId: baseline }).finally(() => {
      settled = true;
    });
    assert.equal(settledAtEvent, false, "files_changed must come before the response");
    assert.deepEqual(events, [{ reason: "restore", written: ["a.txt", "dir/b.txt"], deleted: ["c.txt"] }]);
    assert.deepEqual(res.restored, ["a.txt", "dir/b.txt"]);
    assert.deepEqual(res.deleted, ["c.txt"]);
    assert.deepEqual(res.conflicts, []);
    assert.equal(typeof res.unrevertEntryId, "string");
    assert.equal(sb.read("a.txt"), "v1\n");
    assert.equal(sb.read("dir/b.txt"), "b\n");
    assert.ok(!existsSync(`${sb.project}/c.txt`));

    const preview = await c.restoreFiles({ targetEntryId: baseline, preview: true });
    assert.equal(preview.preview, true);

    const undone = await c.undo();
    assert.deepEqual(events.at(-1), { reason: "undo", written: ["a.txt", "c.txt"], deleted: ["dir/b.txt"] });
    assert.deepEqual(undone.restored, ["a.txt", "c.txt"]);
    assert.equal(sb.read("a.txt"), "v2\n");
    assert.equal(sb.read("c.txt"), "new\n");
  });
});

test("navigate_tree moves the leaf and the files, and back", async () => {
  await withRewind({ "a.txt": "v1\n" }, async (c, sb, baseline) => {
    sb.write("a.txt", "v2\n");
    const s1 = await c.snapshot();
    const reasons: string[] = [];
    c.on("files_changed", (e) => reasons.push(e.reason));

    const nav = await c.navigateTree({ targetId: baseline });
    assert.equal(nav.oldLeafId, s1.entryId);
    assert.equal(typeof nav.newLeafId, "string");
    assert.deepEqual(nav.restore?.restored, ["a.txt"]);
    assert.equal(sb.read("a.txt"), "v1\n");
    assert.equal((await c.getTree()).leafId, nav.newLeafId);

    const back = await c.navigateTree({ targetId: nav.oldLeafId });
    assert.equal(sb.read("a.txt"), "v2\n");
    assert.equal((await c.getTree()).leafId, back.newLeafId);
    assert.deepEqual(reasons, ["navigate", "navigate"]);

    await c.undo();
    assert.equal(sb.read("a.txt"), "v1\n");
  });
});

test("error codes: 1001 unknown entry, -32602 bad path, 1002 abort with data.conflicts, -32601", async () => {
  await withRewind({ "a.txt": "v1\n" }, async (c, sb, baseline) => {
    const e1 = await c.restoreFiles({ targetEntryId: "deadbeef" }).catch((e: unknown) => e);
    assert.ok(e1 instanceof RewindError);
    assert.equal(e1.code, 1001);
    assert.ok(e1.isUnknownEntry);
    assert.equal(e1.method, "restore_files");
    assert.deepEqual(e1.data, { id: "deadbeef" });

    for (const filePath of ["../outside.txt", "/etc/passwd"]) {
      const e2 = await c.getFileDiff({ filePath }).catch((e: unknown) => e);
      assert.ok(e2 instanceof RewindError);
      assert.equal(e2.code, -32602, filePath);
      assert.ok(e2.isInvalidParams);
    }

    sb.write("a.txt", "v2\n");
    await c.snapshot();
    sb.write("a.txt", "edited outside\n");
    const e3 = await c.restoreFiles({ targetEntryId: baseline, onConflict: "abort" }).catch((e: unknown) => e);
    assert.ok(e3 instanceof RewindError);
    assert.equal(e3.code, 1002);
    assert.ok(e3.isConflict);
    assert.deepEqual(e3.conflicts, [{ path: "a.txt", reason: "dirty" }]);
    assert.deepEqual((e3.data as { conflicts: unknown }).conflicts, [{ path: "a.txt", reason: "dirty" }]);
    assert.equal(sb.read("a.txt"), "edited outside\n", "abort touches nothing");

    const e4 = await c.request("no_such_method").catch((e: unknown) => e);
    assert.ok(e4 instanceof RewindError);
    assert.ok(e4.isMethodNotFound);

    // Still usable after errors.
    assert.equal((await c.stats()).projectRoot, sb.project);
  });
});

test("U+2028/U+2029, CRLF and multi-byte characters survive a diff", async () => {
  const old = "plain\n";
  const content = "a\u2028b\u2029c\r\nemoji 😀 ü 日本語\n\u2028\n";
  await withRewind({ "dïr/ファイル.txt": old }, async (c, sb) => {
    sb.write("dïr/ファイル.txt", content);
    const snap = await c.snapshot();
    assert.deepEqual(snap.diff.modified, ["dïr/ファイル.txt"]);
    const d = await c.getFileDiff({ filePath: "dïr/ファイル.txt" });
    assert.ok(d);
    assert.equal(d.oldContent, old);
    assert.equal(d.newContent, content);
    assert.ok(d.unifiedDiff.includes("+a\u2028b\u2029c"));
    assert.ok(d.unifiedDiff.includes("😀"));
  });
});

test("a diff of several MB", async () => {
  const line = (i: number): string => `line ${i} ${"abcdefghij".repeat(4)} ü😀\n`;
  const lines = Array.from({ length: 60_000 }, (_, i) => line(i));
  const before = lines.join("");
  await withRewind({ "big.txt": before }, async (c, sb, baseline) => {
    const after = lines.map((l, i) => (i % 7 === 0 ? l.toUpperCase() : l)).join("");
    sb.write("big.txt", after);
    await c.snapshot();
    const d = await c.getFileDiff({ filePath: "big.txt", fromEntryId: baseline }, { timeoutMs: 120_000 });
    assert.ok(d);
    assert.ok(Buffer.byteLength(after) > 3_000_000);
    assert.equal(d.isTooLarge, false);
    assert.equal(d.oldContent, before);
    assert.equal(d.newContent, after);
    assert.equal(d.additions, Math.ceil(60_000 / 7));
    assert.ok(d.unifiedDiff.length > 1_000_000);

    // A tiny per-call timeout on the same slow call.
    const err = await c
      .getFileDiff({ filePath: "big.txt", fromEntryId: baseline }, { timeoutMs: 1 })
      .catch((e: unknown) => e);
    assert.ok(err instanceof RewindTimeoutError);
    assert.equal(err.method, "get_file_diff");
    // The late answer is dropped; the next call gets its own.
    assert.equal((await c.getTree()).entries.length, 2);
  });
});

test("every other method: label, append_entry, stage_files, approve, get_status, reset, gc, stats", async () => {
  await withRewind({ "a.txt": "v1\n", "ignored.log": "x\n", ".gitignore": "*.log\n" }, async (c, sb, baseline) => {
    assert.equal((await c.label({ targetId: baseline, label: "start", note: "the baseline" })).entryId.length > 0, true);
    assert.deepEqual(
      (await c.listCheckpoints({ query: "start" })).checkpoints.map((x) => x.entryId),
      [baseline],
    );
    const ae = await c.appendEntry({ entryId: "user-msg-1", role: "user", text: "hi" });
    assert.deepEqual(ae, { entryId: "user-msg-1", existed: false });
    assert.deepEqual(await c.appendEntry({ entryId: "user-msg-1", role: "user", text: "hi" }), {
      entryId: "user-msg-1",
      existed: true,
    });
    assert.deepEqual((await c.stageFiles({ paths: ["ignored.log"] })).staged, ["ignored.log"]);

    const approved = await c.approve({ message: "ok" });
    assert.equal(typeof approved.approvedEntryId, "string");
    assert.equal((await c.getStatus()).hasUnapproved, false);

    sb.write("a.txt", "v2\n");
    await c.snapshot(); // the turn ends (an unsnapshotted edit would be dirty and skipped)
    const st = await c.getStatus();
    assert.equal(st.hasUnapproved, true);
    assert.deepEqual(st.changedFiles.map((f) => [f.path, f.status, f.baseContent]), [["a.txt", "modified", "v1\n"]]);

    const events: FilesChanged[] = [];
    c.on("files_changed", (e) => events.push(e));
    const reset = await c.reset();
    assert.equal(reset.resetTo, approved.approvedTreeHash);
    assert.deepEqual(reset.restore.restored, ["a.txt"]);
    assert.deepEqual(events, [{ reason: "reset", written: ["a.txt"], deleted: [] }]);
    assert.equal(sb.read("a.txt"), "v1\n");

    const gc = await c.gc({ dryRun: true });
    assert.equal(gc.dryRun, true);
    const stats = await c.stats();
    assert.equal(stats.storeDir, sb.store);
    assert.ok(stats.snapshots >= 1);
  });
});

test("progress notifications during a long restore", async (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 400; i++) files[`d${i % 30}/f${i}.txt`] = `content ${i}\n`;
  const sb = sandbox(files);
  const c = clientFor(sb);
  try {
    // fsync on: a restore of 400 files usually takes well over the 100 ms progress
    // interval; progress is required only when it took long enough to be due.
    const init = await c.initialize({ storeDir: sb.store });
    for (let i = 0; i < 400; i++) sb.write(`d${i % 30}/f${i}.txt`, `changed ${i}\n`);
    await c.snapshot(undefined, { timeoutMs: 120_000 });
    const progress: Progress[] = [];
    let settled = false;
    let lateProgress = false;
    c.on("progress", (p) => {
      assertNotificationMatches("progress", p);
      progress.push(p);
      if (settled) lateProgress = true;
    });
    const started = Date.now();
    const res = await c.restoreFiles({ targetEntryId: init.baseline.entryId }, { timeoutMs: 120_000 });
    settled = true;
    const ms = Date.now() - started;
    t.diagnostic(`restore of 400 files took ${ms} ms, ${progress.length} progress notifications`);
    assert.equal(res.restored.length, 400);
    assert.equal(lateProgress, false);
    if (ms > 400) {
      assert.ok(progress.length > 0, `no progress during a ${ms} ms restore`);
      const last = progress.at(-1);
      assert.ok(last !== undefined && last.total === 400 && last.done <= 400);
    }
    assert.deepEqual(await c.close(), { code: 0, signal: null });
  } finally {
    c.kill("SIGKILL");
    sb.cleanup();
  }
});

test("close(): in-flight calls finish, the process exits 0, later calls are refused", async () => {
  const sb = sandbox({ "a.txt": "x\n" });
  const c = clientFor(sb);
  try {
    const exits: unknown[] = [];
    c.on("exit", (e) => exits.push(e));
    const init = c.initialize({ storeDir: sb.store });
    const tree = c.getTree();
    const closing = c.close();
    assert.equal((await init).resumed, false);
    assert.equal((await tree).entries.length, 1);
    assert.deepEqual(await closing, { code: 0, signal: null });
    assert.deepEqual(exits, [{ code: 0, signal: null }]);
    await assert.rejects(c.stats(), RewindClosedError);
    assert.deepEqual(await c.close(), { code: 0, signal: null });
  } finally {
    c.kill("SIGKILL");
    sb.cleanup();
  }
});

test("shutdown answers {} and the process exits 0", async () => {
  const sb = sandbox({ "a.txt": "x\n" });
  const c = clientFor(sb);
  try {
    await c.initialize({ storeDir: sb.store });
    assert.deepEqual(await c.shutdown(), {});
    assert.deepEqual(await c.exited, { code: 0, signal: null });
  } finally {
    c.kill("SIGKILL");
    sb.cleanup();
  }
});

test("a killed sidecar rejects pending calls with RewindClosedError", async () => {
  const sb = sandbox({ "a.txt": "x\n" });
  const c = clientFor(sb);
  try {
    await c.initialize({ storeDir: sb.store });
    const pending = c.getTree();
    c.kill("SIGKILL");
    // getTree may have been answered before the kill landed; either is fine, a hang is not.
    await pending.catch((e: unknown) => assert.ok(e instanceof RewindClosedError));
    assert.equal((await c.exited).signal, "SIGKILL");
    await assert.rejects(c.stats(), RewindClosedError);
  } finally {
    sb.cleanup();
  }
});
