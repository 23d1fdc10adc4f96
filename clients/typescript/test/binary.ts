// Locates the rewind binary for the tests: $REWIND_BIN when set; otherwise builds
// target/release/rewind with cargo (a no-op when it is fresh) and falls back to an existing
// target/release/rewind or target/debug/rewind when cargo is unavailable or the build fails.
// REWIND_NO_BUILD=1 skips the build.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** clients/typescript (this file runs from dist/test/). */
export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The repository root: the nearest directory above the package with a Cargo.toml. */
export const repoRoot = findUp(packageDir, "Cargo.toml") ?? resolve(packageDir, "..", "..");

function findUp(start: string, file: string): string | undefined {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, file))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const exe = process.platform === "win32" ? "rewind.exe" : "rewind";

export function resolveRewindBinary(log: (msg: string) => void = () => {}): string {
  const fromEnv = process.env["REWIND_BIN"];
  if (fromEnv) {
    const p = resolve(fromEnv);
    if (!existsSync(p)) throw new Error(`REWIND_BIN=${fromEnv} does not exist`);
    return p;
  }
  const targetDir = process.env["CARGO_TARGET_DIR"]
    ? resolve(repoRoot, process.env["CARGO_TARGET_DIR"])
    : join(repoRoot, "target");
  const release = join(targetDir, "release", exe);
  const debug = join(targetDir, "debug", exe);
  if (process.env["REWIND_NO_BUILD"] !== "1") {
    log(`building ${release} (cargo build --release --bin rewind)`);
    const r = spawnSync("cargo", ["build", "--release", "--bin", "rewind"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
    });
    if (r.status === 0 && existsSync(release)) return release;
    log(`cargo build failed (${r.error?.message ?? `status ${String(r.status)}`}): ${String(r.stderr ?? "").trim().split("\n").slice(-5).join("\n")}`);
  }
  if (existsSync(release)) return release;
  if (existsSync(debug)) return debug;
  throw new Error(`no rewind binary: set REWIND_BIN, or build ${release}`);
}
