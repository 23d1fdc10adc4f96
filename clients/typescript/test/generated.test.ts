// The committed src/generated.ts must equal what clients/gen_ts.py makes from the schema,
// and the hand-written runtime must cover everything the schema names.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ERROR_CODES, ErrorCode, METHODS, NOTIFICATIONS, RewindClient } from "../src/index.js";
import { packageDir, repoRoot } from "./binary.js";
import { protocolSchema } from "./helpers.js";

test("src/generated.ts is up to date with schema/rewind-protocol.json", () => {
  const clientsDir = join(packageDir, "..");
  const py = [
    "import json, sys",
    "sys.path.insert(0, sys.argv[1])",
    "import gen_ts",
    "schema = json.load(open(sys.argv[2], encoding='utf-8'))",
    "sys.stdout.write(json.dumps(gen_ts.generate(schema)))",
  ].join("\n");
  const r = spawnSync("python3", ["-c", py, clientsDir, join(repoRoot, "schema", "rewind-protocol.json")], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.error?.message ?? r.stderr);
  const outputs = JSON.parse(r.stdout) as Record<string, string>;
  assert.ok("typescript/src/generated.ts" in outputs);
  for (const [rel, text] of Object.entries(outputs)) {
    const committed = readFileSync(join(clientsDir, rel), "utf8");
    assert.ok(committed === text, `clients/${rel} differs from the generator's output: run python3 clients/generate.py`);
  }
});

test("every schema method has a typed client method; every error code a name", () => {
  const methods = Object.keys(protocolSchema.methods).sort();
  assert.deepEqual(Object.keys(METHODS).sort(), methods);
  const camel = (s: string): string => s.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
  for (const m of methods) {
    assert.equal(typeof (RewindClient.prototype as unknown as Record<string, unknown>)[camel(m)], "function", m);
  }
  assert.deepEqual([...NOTIFICATIONS].sort(), Object.keys(protocolSchema.notifications).sort());
  const named = new Set<number>(Object.values(ErrorCode));
  for (const code of Object.keys(ERROR_CODES)) assert.ok(named.has(Number(code)), `no ErrorCode name for ${code}`);
});
