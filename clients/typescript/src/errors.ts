import type { Conflict } from "./generated.js";

/** Named error codes (see ERROR_CODES in generated.ts for the protocol's table). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  UnknownEntry: 1001,
  Conflict: 1002,
  Corruption: 1003,
  Locked: 1004,
  Io: 1005,
  StaleHunk: 1006,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

/** An error response from the sidecar: carries the JSON-RPC `code`, `message` and `data`. */
export class RewindError extends Error {
  override readonly name = "RewindError";
  readonly code: number;
  readonly data: unknown;
  /** The method of the request that failed. */
  readonly method: string;

  constructor(code: number, message: string, data: unknown, method: string) {
    super(message);
    this.code = code;
    this.data = data;
    this.method = method;
  }

  /** -32602: invalid params, including a bad project path (absolute, `..`, outside). */
  get isInvalidParams(): boolean {
    return this.code === ErrorCode.InvalidParams;
  }
  /** -32601: the sidecar does not know the method. */
  get isMethodNotFound(): boolean {
    return this.code === ErrorCode.MethodNotFound;
  }
  /** 1001: unknown entry id or tree hash. */
  get isUnknownEntry(): boolean {
    return this.code === ErrorCode.UnknownEntry;
  }
  /** 1002: restore aborted because of conflicts (`onConflict: "abort"`). */
  get isConflict(): boolean {
    return this.code === ErrorCode.Conflict;
  }
  /** 1003: store corruption detected; `data.object` names the object. */
  get isCorruption(): boolean {
    return this.code === ErrorCode.Corruption;
  }
  /** 1004: the session is locked by another process. */
  get isLocked(): boolean {
    return this.code === ErrorCode.Locked;
  }
  /** 1005: I/O error; `data.path` names the file. */
  get isIoError(): boolean {
    return this.code === ErrorCode.Io;
  }
  /** 1006: a `restore_files` hunk selection no longer matches the file's diff. */
  get isStaleHunk(): boolean {
    return this.code === ErrorCode.StaleHunk;
  }

  /** For 1002: the conflicts listed in `data.conflicts` (empty otherwise). */
  get conflicts(): Conflict[] {
    const d = this.data;
    if (d !== null && typeof d === "object" && Array.isArray((d as { conflicts?: unknown }).conflicts)) {
      return (d as { conflicts: Conflict[] }).conflicts;
    }
    return [];
  }
}

/** A call got no response within its timeout. The sidecar may still carry it out. */
export class RewindTimeoutError extends Error {
  override readonly name = "RewindTimeoutError";
  readonly method: string;
  readonly timeoutMs: number;
  constructor(method: string, timeoutMs: number) {
    super(`rewind: ${method} timed out after ${timeoutMs} ms`);
    this.method = method;
    this.timeoutMs = timeoutMs;
  }
}

/** The sidecar is gone (exited, could not be spawned, or the client was closed). */
export class RewindClosedError extends Error {
  override readonly name = "RewindClosedError";
  readonly method: string | undefined;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last lines the sidecar wrote to stderr, for diagnosis. */
  readonly stderr: string;
  constructor(
    message: string,
    info: { method?: string; exitCode?: number | null; signal?: NodeJS.Signals | null; stderr?: string; cause?: unknown } = {},
  ) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.method = info.method;
    this.exitCode = info.exitCode ?? null;
    this.signal = info.signal ?? null;
    this.stderr = info.stderr ?? "";
  }
}

/** Waiting for a response was aborted through `CallOptions.signal`. */
export class RewindAbortError extends Error {
  override readonly name = "RewindAbortError";
  readonly method: string;
  constructor(method: string, reason: unknown) {
    super(`rewind: ${method} aborted`, { cause: reason });
    this.method = method;
  }
}
