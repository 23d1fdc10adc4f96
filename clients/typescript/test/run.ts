// `npm test`: resolve (or build) the rewind binary once, then run every compiled test
// file with Node's test runner, passing the binary on in REWIND_BIN.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveRewindBinary } from "./binary.js";

const here = dirname(fileURLToPath(import.meta.url));
const bin = resolveRewindBinary((m) => process.stderr.write(`rewind tests: ${m}\n`));
process.stderr.write(`rewind tests: using ${bin}\n`);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".test.js"))
  .sort()
  .map((f) => join(here, f));
const r = spawnSync(process.execPath, ["--test", ...process.argv.slice(2), ...files], {
  stdio: "inherit",
  env: { ...process.env, REWIND_BIN: bin },
});
if (r.error) throw r.error;
process.exit(r.status ?? 1);
