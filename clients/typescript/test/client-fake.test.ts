// Client behaviour against a scripted fake sidecar (test/fixtures/fake-sidecar.ts).
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  RewindAbortError,
  RewindClient,
  RewindClosedError,
  RewindError,
  RewindTimeoutError,
  type FilesChanged,
  type Progress,
} from "../src/index.js";

const fake = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-sidecar.js");

function fakeClient(timeoutMs?: number): RewindClient {
  return new RewindClient({ binary: process.execPath, args: [fake], ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

test("per-call timeout rejects with RewindTimeoutError; a late answer is dropped", async () => {
  const c = fakeClient();
  try {
    const started = Date.now();
    const err = await c.request("slow", { delayMs: 400 }, { timeoutMs: 50 }).then(
      () => assert.fail("should time out"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RewindTimeoutError);
    assert.equal(err.method, "slow");
    assert.equal(err.timeoutMs, 50);
    assert.ok(Date.now() - started < 350, "rejected before the answer came");
    // The client keeps working, and the late answer to the timed-out call is ignored.
    await new Promise((r) => setTimeout(r, 450));
    assert.deepEqual(await c.request("echo", { x: 1 }), { x: 1 });
  } finally {
    await c.close();
  }
});

test("the client-wide default timeout applies when a call gives none", async () => {
  const c = fakeClient(30);
  try {
    await assert.rejects(c.request("never"), RewindTimeoutError);
    // timeoutMs: 0 waits forever (here: until the slow answer).
    assert.deepEqual(await c.request("slow", { delayMs: 80 }, { timeoutMs: 0 }), { slow: true });
  } finally {
    await c.close();
  }
});

test("an AbortSignal stops waiting", async () => {
  const c = fakeClient();
  try {
    const ac = new AbortController();
    const p = c.request("never", undefined, { signal: ac.signal });
    ac.abort(new Error("user cancelled"));
    await assert.rejects(p, RewindAbortError);
    await assert.rejects(c.request("echo", {}, { signal: ac.signal }), RewindAbortError);
  } finally {
    await c.close();
  }
});

test("notifications are emitted as events before the response resolves", async () => {
  const c = fakeClient();
  try {
    const order: string[] = [];
    let settled = false;
    c.on("progress", (p: Progress) => order.push(`progress ${p.done}/${p.total} settled=${settled}`));
    c.on("files_changed", (f: FilesChanged) => order.push(`files_changed ${f.written.join(",")} settled=${settled}`));
    c.on("notification", (method) => order.push(`notification ${method}`));
    const p = c.request("notify_then_reply").then((r) => {
      settled = true;
      order.push("response");
      return r;
    });
    assert.deepEqual(await p, { done: true });
    assert.deepEqual(order, [
      "progress 1/2 settled=false",
      "notification progress",
      "files_changed a settled=false",
      "notification files_changed",
      "notification something_new",
      "response",
    ]);
  } finally {
    await c.close();
  }
});

test("responses written in 3-byte pieces (split UTF-8, CRLF) decode intact", async () => {
  const c = fakeClient();
  try {
    const params = { s: "日本語 😀 \u2028 \u2029 ü\r", n: [1, 2, 3] };
    assert.deepEqual(await c.request("split", params), params);
  } finally {
    await c.close();
  }
});

test("batched output and out-of-order answers are correlated by id", async () => {
  const c = fakeClient();
  try {
    const events: string[] = [];
    c.on("progress", (p) => events.push(p.operation));
    const slow = c.request("slow", { delayMs: 100 });
    const fast = c.request("echo", { fast: true });
    const batched = c.request("batch");
    assert.deepEqual(await fast, { fast: true });
    assert.equal(await batched, "batched");
    assert.deepEqual(await slow, { slow: true });
    assert.deepEqual(events, ["scan"]);
  } finally {
    await c.close();
  }
});

test("error responses become RewindError with code, message and data", async () => {
  const c = fakeClient();
  try {
    const data = { conflicts: [{ path: "a.txt", reason: "dirty" }] };
    const err = await c.request("fail", { code: 1002, message: "restore aborted", data }).catch((e: unknown) => e);
    assert.ok(err instanceof RewindError);
    assert.equal(err.code, 1002);
    assert.equal(err.message, "restore aborted");
    assert.equal(err.method, "fail");
    assert.deepEqual(err.data, data);
    assert.ok(err.isConflict);
    assert.ok(!err.isUnknownEntry);
    assert.deepEqual(err.conflicts, data.conflicts);
  } finally {
    await c.close();
  }
});

test("garbage on stdout is reported as protocol_error and does not break the stream", async () => {
  const c = fakeClient();
  try {
    const bad: string[] = [];
    c.on("protocol_error", (_e, line) => bad.push(line));
    assert.equal(await c.request("garbage"), "after garbage");
    assert.equal(bad.length, 2);
    assert.equal(bad[0], "this is not json");
  } finally {
    await c.close();
  }
});

test("stderr lines are events, never protocol", async () => {
  const c = fakeClient();
  try {
    const lines: string[] = [];
    c.on("stderr", (l) => lines.push(l));
    assert.equal(await c.request("stderr"), null);
    await c.close();
    assert.deepEqual(lines, ["log one", "log \u2028two"]);
  } finally {
    await c.close();
  }
});

test("a crash rejects every pending call with RewindClosedError and emits exit", async () => {
  const c = fakeClient();
  const exits: unknown[] = [];
  c.on("exit", (info) => exits.push(info));
  const hanging = c.request("never");
  const crash = c.request("crash");
  for (const p of [hanging, crash]) {
    const err = await p.catch((e: unknown) => e);
    assert.ok(err instanceof RewindClosedError);
    assert.equal(err.exitCode, 3);
    assert.match(err.stderr, /simulated crash/);
  }
  assert.deepEqual(await c.exited, { code: 3, signal: null });
  assert.deepEqual(exits, [{ code: 3, signal: null }]);
  assert.ok(c.closed);
  await assert.rejects(c.request("echo"), RewindClosedError);
  assert.deepEqual(await c.close(), { code: 3, signal: null });
});

test("a final line without \\n is processed at EOF", async () => {
  const c = fakeClient();
  assert.equal(await c.request("no_eol_then_exit"), "last");
  assert.equal((await c.exited).code, 0);
});

test("close() waits for in-flight calls, refuses new ones, and exits 0", async () => {
  const c = fakeClient();
  const inflight = c.request("slow", { delayMs: 100 });
  const closing = c.close();
  await assert.rejects(c.request("echo"), RewindClosedError);
  assert.deepEqual(await inflight, { slow: true });
  assert.deepEqual(await closing, { code: 0, signal: null });
});

test("close() kills a process that does not exit in time", async () => {
  // `sleep` ignores stdin EOF.
  const c = new RewindClient({ binary: "sleep", args: ["30"] });
  const pending = c.request("anything", undefined, { timeoutMs: 0 });
  const info = await c.close({ timeoutMs: 100 });
  assert.equal(info.signal, "SIGTERM");
  await assert.rejects(pending, RewindClosedError);
});

test("a binary that cannot be spawned rejects calls with RewindClosedError", async () => {
  const c = new RewindClient({ binary: "/nonexistent/rewind" });
  const err = await c.request("initialize").catch((e: unknown) => e);
  assert.ok(err instanceof RewindClosedError);
  assert.match(err.message, /could not be started/);
  const info = await c.exited;
  assert.equal((info.error as NodeJS.ErrnoException | undefined)?.code, "ENOENT");
  await c.close();
});
