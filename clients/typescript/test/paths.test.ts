import assert from "node:assert/strict";
import { test } from "node:test";
import { decodePath, encodePath } from "../src/index.js";

test("UTF-8 names are unchanged; others round-trip through the escape range", () => {
  assert.equal(encodePath(new TextEncoder().encode("src/é.rs")), "src/é.rs");
  const latin1 = Uint8Array.from([0x63, 0x61, 0x66, 0xe9]);
  assert.equal(encodePath(latin1), "caf\uf7e9");
  assert.deepEqual(decodePath("caf\uf7e9"), latin1);
  const real = new TextEncoder().encode("x\uf7e9");
  assert.equal([...encodePath(real)].length, 4);
  assert.deepEqual(decodePath(encodePath(real)), real);
  for (let n = 0; n < 500; n++) {
    const bytes = Uint8Array.from({ length: n % 13 }, (_, k) => (n * 31 + k * 97) % 256);
    assert.deepEqual(decodePath(encodePath(bytes)), bytes, `case ${n}`);
  }
});
