// Where the client finds the rewind binary when RewindClientOptions.binary is not given.
// The esbuild/biome pattern: the rewind-sidecar package lists one package per platform in
// optionalDependencies (each with `os`/`cpu`, so npm installs only the matching one), and
// each holds the binary in bin/.
import { accessSync, constants, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";

/** `${process.platform}-${process.arch}` → the package that holds the binary for it. */
export const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  "linux-x64": "rewind-sidecar-linux-x64",
};

const exe = (platform: string): string => (platform === "win32" ? "rewind.exe" : "rewind");

/** The binary of the installed platform package for this platform, if any. */
export function packagedBinary(
  platform: string = process.platform,
  arch: string = process.arch,
): string | undefined {
  const pkg = PLATFORM_PACKAGES[`${platform}-${arch}`];
  if (pkg === undefined) return undefined;
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  } catch {
    return undefined;
  }
  const binary = join(dirname(manifest), "bin", exe(platform));
  return existsSync(binary) ? binary : undefined;
}

function onPath(name: string, path: string | undefined): boolean {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/**
 * The binary to run when none is given: `$REWIND_BIN` if set, else the one in the
 * platform package (`rewind-sidecar-linux-x64`, ...), else `rewind` on `PATH`. Throws,
 * naming `process.platform`/`process.arch`, when there is none.
 */
export function defaultBinary(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env["REWIND_BIN"];
  if (fromEnv) return fromEnv;
  const packaged = packagedBinary();
  if (packaged !== undefined) return packaged;
  if (onPath(exe(process.platform), env["PATH"])) return "rewind";
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[key];
  throw new Error(
    pkg === undefined
      ? `rewind: no prebuilt binary for ${key} (process.platform ${process.platform}, process.arch ${process.arch}); ` +
          "build it (cargo install --path <rewind checkout>) and set REWIND_BIN or put rewind on PATH"
      : `rewind: the binary for ${key} comes in the optional dependency ${pkg}, which is not installed ` +
          "(npm skips it with --omit=optional or on a platform mismatch); reinstall, or set REWIND_BIN, or put rewind on PATH",
  );
}
