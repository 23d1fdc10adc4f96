import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { RewindClient, type RewindClientOptions } from "../src/index.js";
import { repoRoot, resolveRewindBinary } from "./binary.js";

let cachedBin: string | undefined;
/** The binary under test (REWIND_BIN, set by test/run.ts, or resolved here). */
export function rewindBin(): string {
  cachedBin ??= resolveRewindBinary();
  return cachedBin;
}

export interface Sandbox {
  root: string;
  project: string;
  store: string;
  home: string;
  write(path: string, content: string | Buffer): void;
  read(path: string): string;
  rm(path: string): void;
  cleanup(): void;
}

/** A temporary project (with `files`), store and REWIND_HOME. */
export function sandbox(files: Record<string, string | Buffer> = {}): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "rewind-ts-")));
  const project = join(root, "project");
  const store = join(root, "store");
  const home = join(root, "home");
  mkdirSync(project);
  const sb: Sandbox = {
    root,
    project,
    store,
    home,
    write(path, content) {
      const p = join(project, path);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
    },
    read(path) {
      return readFileSync(join(project, path), "utf8");
    },
    rm(path) {
      rmSync(join(project, path), { force: true });
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
  for (const [p, c] of Object.entries(files)) sb.write(p, c);
  return sb;
}

/** A client on the sandbox's project, with REWIND_HOME inside the sandbox. */
export function clientFor(sb: Sandbox, options: RewindClientOptions = {}): RewindClient {
  return new RewindClient({
    binary: rewindBin(),
    projectDir: sb.project,
    storeDir: sb.store,
    env: { REWIND_HOME: sb.home, RUST_LOG: undefined },
    ...options,
  });
}

// ---- a small JSON Schema checker for results and notifications ------------------------
// Checks results against schema/rewind-protocol.json, so a server that drifts from the
// schema (and thus from the generated types) fails the tests. Properties the schema does
// not declare are reported too.

type Schema = boolean | { [k: string]: unknown };
export const protocolSchema = JSON.parse(
  readFileSync(join(repoRoot, "schema", "rewind-protocol.json"), "utf8"),
) as { $defs: Record<string, Schema>; methods: Record<string, { params: Schema | null; result: Schema }>; notifications: Record<string, { params: Schema }> };

export function schemaErrors(schema: Schema, value: unknown, path = "$"): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value allowed`];
  const s = schema;
  if (typeof s["$ref"] === "string") {
    const name = (s["$ref"] as string).replace("#/$defs/", "");
    const def = protocolSchema.$defs[name];
    if (def === undefined) return [`${path}: unknown $ref ${name}`];
    return schemaErrors(def, value, path);
  }
  if ("const" in s) return value === s["const"] ? [] : [`${path}: expected ${JSON.stringify(s["const"])}`];
  if (Array.isArray(s["enum"])) {
    return (s["enum"] as unknown[]).includes(value) ? [] : [`${path}: ${JSON.stringify(value)} not in enum`];
  }
  for (const k of ["anyOf", "oneOf"]) {
    if (Array.isArray(s[k])) {
      const variants = s[k] as Schema[];
      const results = variants.map((v) => schemaErrors(v, value, path));
      const ok = results.filter((r) => r.length === 0).length;
      if (k === "anyOf" ? ok >= 1 : ok === 1) return [];
      return [`${path}: matches ${ok} of ${k}: ${results.flat().join("; ")}`];
    }
  }
  const t = s["type"];
  if (t === undefined) return [];
  const types = Array.isArray(t) ? (t as string[]) : [t as string];
  const actual =
    value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value;
  const matches = types.some((ty) => ty === actual || (ty === "number" && actual === "integer"));
  if (!matches) return [`${path}: expected ${types.join("|")}, got ${actual}`];
  if (actual === "array" && s["items"] !== undefined) {
    return (value as unknown[]).flatMap((v, i) => schemaErrors(s["items"] as Schema, v, `${path}[${i}]`));
  }
  if (actual === "object") {
    const obj = value as Record<string, unknown>;
    const props = (s["properties"] ?? {}) as Record<string, Schema>;
    const errs: string[] = [];
    for (const r of (s["required"] ?? []) as string[]) if (!(r in obj)) errs.push(`${path}.${r}: required`);
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) errs.push(...schemaErrors(props[k] as Schema, v, `${path}.${k}`));
      else if (s["properties"] !== undefined) errs.push(`${path}.${k}: not in schema`);
    }
    return errs;
  }
  return [];
}

export function assertResultMatches(method: string, result: unknown): void {
  const m = protocolSchema.methods[method];
  if (m === undefined) throw new Error(`no such method in schema: ${method}`);
  const errs = schemaErrors(m.result, result);
  if (errs.length > 0) throw new Error(`${method} result does not match the schema:\n${errs.join("\n")}`);
}

export function assertNotificationMatches(name: string, params: unknown): void {
  const n = protocolSchema.notifications[name];
  if (n === undefined) throw new Error(`no such notification in schema: ${name}`);
  const errs = schemaErrors(n.params, params);
  if (errs.length > 0) throw new Error(`${name} params do not match the schema:\n${errs.join("\n")}`);
}
