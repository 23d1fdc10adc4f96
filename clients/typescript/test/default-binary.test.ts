import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { defaultBinary, packagedBinary, PLATFORM_PACKAGES } from "../src/index.js";

test("defaultBinary: $REWIND_BIN first", () => {
  assert.equal(defaultBinary({ REWIND_BIN: "/somewhere/rewind", PATH: "" }), "/somewhere/rewind");
});

test("packagedBinary: none for a platform without a package", () => {
  assert.equal(packagedBinary("plan9", "mips"), undefined);
  assert.equal(PLATFORM_PACKAGES["linux-x64"], "rewind-sidecar-linux-x64");
});

test("defaultBinary: rewind on PATH, else an error naming the platform", (t) => {
  if (packagedBinary() !== undefined) {
    t.skip("a platform package with its binary is installed here");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "rewind-bin-"));
  try {
    assert.throws(() => defaultBinary({ PATH: dir }), (e: Error) => {
      assert.match(e.message, new RegExp(`${process.platform}-${process.arch}`));
      return true;
    });
    const exe = join(dir, process.platform === "win32" ? "rewind.exe" : "rewind");
    writeFileSync(exe, "#!/bin/sh\n");
    chmodSync(exe, 0o755);
    assert.equal(defaultBinary({ PATH: dir }), "rewind");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
