import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { defaultBinary } from "./binary.js";
import { RewindAbortError, RewindClosedError, RewindError, RewindTimeoutError } from "./errors.js";
import { encodeLine, LineDecoder } from "./framing.js";
import {
  NOTIFICATIONS,
  RewindMethods,
  type MethodName,
  type MethodParams,
  type MethodResult,
  type NotificationMap,
} from "./generated.js";
import type { CallOptions } from "./types.js";

export interface RewindClientOptions {
  /**
   * The rewind executable. Default: `$REWIND_BIN`, else the binary of the platform package
   * (`rewind-sidecar-linux-x64`, ...), else `rewind` on PATH (see `defaultBinary`).
   */
  binary?: string;
  /**
   * Full argument list. Default: `["serve"]` plus `--cwd`/`--store`/`--session` from
   * `projectDir`/`storeDir`/`sessionFile`.
   */
  args?: string[];
  /** Project root passed as `serve --cwd` (ignored when `args` is given). */
  projectDir?: string;
  /** Store directory passed as `serve --store` (ignored when `args` is given). */
  storeDir?: string;
  /** Session file passed as `serve --session` (ignored when `args` is given). */
  sessionFile?: string;
  /** Working directory of the child process. */
  cwd?: string;
  /** Extra environment variables, merged over `process.env` (`undefined` removes one). */
  env?: Record<string, string | undefined>;
  /** Default per-call timeout in ms (60 000). `0` or `Infinity` disables it. */
  timeoutMs?: number;
  /** How long `close()` waits for the process to exit before killing it (10 000 ms). */
  closeTimeoutMs?: number;
  /** How many stderr lines to keep for error messages (50). */
  stderrTailLines?: number;
}

/** How the sidecar process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned (e.g. ENOENT). */
  error?: Error;
}

/** Events of `RewindClient` and their listener arguments. */
export type RewindEvents = { [N in keyof NotificationMap]: [params: NotificationMap[N]] } & {
  /** Every server notification, known or not. */
  notification: [method: string, params: unknown];
  /** One line the sidecar wrote to stderr (its logs; never parsed as protocol). */
  stderr: [line: string];
  /** The process ended; emitted once, after every pending call was settled. */
  exit: [info: ExitInfo];
  /** A stdout line that is not a protocol message (should never happen). */
  protocol_error: [error: Error, line: string];
};

type Listener<E extends keyof RewindEvents> = (...args: RewindEvents[E]) => void;

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  cleanup: () => void;
}

const KNOWN_NOTIFICATIONS: ReadonlySet<string> = new Set(NOTIFICATIONS);

export interface RewindClient {
  on<E extends keyof RewindEvents>(event: E, listener: Listener<E>): this;
  once<E extends keyof RewindEvents>(event: E, listener: Listener<E>): this;
  off<E extends keyof RewindEvents>(event: E, listener: Listener<E>): this;
  addListener<E extends keyof RewindEvents>(event: E, listener: Listener<E>): this;
  removeListener<E extends keyof RewindEvents>(event: E, listener: Listener<E>): this;
  emit<E extends keyof RewindEvents>(event: E, ...args: RewindEvents[E]): boolean;
}

/**
 * A `rewind serve` sidecar driven over stdin/stdout with JSON-RPC 2.0.
 *
 * ```ts
 * const rw = new RewindClient({ projectDir: "/path/to/project" });
 * await rw.initialize();
 * const snap = await rw.snapshot({ kind: "message" });
 * await rw.close();
 * ```
 */
export class RewindClient extends RewindMethods {
  /** The child process. */
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when the process has ended (never rejects). */
  readonly exited: Promise<ExitInfo>;

  private readonly timeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly stderrTailLines: number;
  private readonly pending = new Map<number, Pending>();
  private readonly stdoutLines = new LineDecoder();
  private readonly stderrLines = new LineDecoder();
  private readonly stderrTail: string[] = [];
  private nextId = 1;
  private closing = false;
  private exitInfo: ExitInfo | undefined;
  private resolveExited!: (info: ExitInfo) => void;

  constructor(options: RewindClientOptions = {}) {
    super();
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
    this.stderrTailLines = options.stderrTailLines ?? 50;
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));

    const binary = options.binary ?? defaultBinary();
    const args = options.args ?? serveArgs(options);
    this.child = spawn(binary, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });

    this.child.stdout.on("data", (chunk: Buffer) => this.onLines(this.stdoutLines.push(chunk)));
    this.child.stdout.on("end", () => this.onLines(this.stdoutLines.end()));
    this.child.stderr.on("data", (chunk: Buffer) => this.onStderr(this.stderrLines.push(chunk)));
    this.child.stderr.on("end", () => this.onStderr(this.stderrLines.end()));
    // EPIPE when the process is gone: the 'close' handler reports that to the callers.
    this.child.stdin.on("error", () => {});
    this.child.on("error", (error) => {
      // Spawn failure: no process, no 'close' guaranteed to follow.
      if (this.child.pid === undefined) this.finish({ code: null, signal: null, error });
    });
    this.child.on("close", (code, signal) => this.finish({ code, signal }));
  }

  /** Spawn a sidecar (same as `new RewindClient(options)`). */
  static spawn(options: RewindClientOptions = {}): RewindClient {
    return new RewindClient(options);
  }

  /** The sidecar's process id (undefined if it could not be spawned). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once the process has ended. */
  get closed(): boolean {
    return this.exitInfo !== undefined;
  }

  /** Send a typed request and resolve with its result (the typed methods use this). */
  call<M extends MethodName>(method: M, params?: MethodParams<M>, opts?: CallOptions): Promise<MethodResult<M>> {
    return this.request(method, params, opts) as Promise<MethodResult<M>>;
  }

  /** Send any request (untyped), e.g. a method newer than this client. */
  request(method: string, params?: unknown, opts: CallOptions = {}): Promise<unknown> {
    if (this.exitInfo !== undefined || this.closing) {
      return Promise.reject(this.closedError(method));
    }
    if (opts.signal?.aborted) {
      return Promise.reject(new RewindAbortError(method, opts.signal.reason));
    }
    const id = this.nextId++;
    let line: string;
    try {
      line = encodeLine(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const signal = opts.signal;
      const onAbort = (): void => {
        this.pending.get(id)?.cleanup();
        reject(new RewindAbortError(method, signal?.reason));
      };
      const cleanup = (): void => {
        this.pending.delete(id);
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          cleanup();
          reject(new RewindTimeoutError(method, timeoutMs));
        }, timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, { method, resolve, reject, cleanup });
      this.child.stdin.write(line);
    });
  }

  /** Send a JSON-RPC notification (no id, no response). */
  notify(method: string, params?: unknown): void {
    if (this.exitInfo !== undefined || this.closing) throw this.closedError(method);
    this.child.stdin.write(encodeLine(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }));
  }

  /**
   * Close stdin (EOF: the sidecar finishes what is in flight, flushes, releases its locks
   * and exits 0) and wait for the process to end. Calls already sent still get their
   * responses; new calls are refused. Kills the process if it has not exited after
   * `timeoutMs` (default: the client's `closeTimeoutMs`).
   */
  async close(opts: { timeoutMs?: number } = {}): Promise<ExitInfo> {
    if (this.exitInfo !== undefined) return this.exitInfo;
    this.closing = true;
    this.child.stdin.end();
    const timeoutMs = opts.timeoutMs ?? this.closeTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const first = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (first === "timeout") {
      this.kill("SIGTERM");
      const killTimer = setTimeout(() => this.kill("SIGKILL"), 2_000);
      const info = await this.exited;
      clearTimeout(killTimer);
      return info;
    }
    return first;
  }

  /** Kill the process now; pending calls reject with `RewindClosedError`. */
  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    if (this.exitInfo === undefined) this.child.kill(signal);
  }

  // ---- internals -------------------------------------------------------------------

  private onLines(lines: string[]): void {
    let deferred: unknown;
    for (const line of lines) {
      try {
        this.onLine(line);
      } catch (err) {
        // A listener threw: keep processing the remaining lines, then rethrow.
        deferred ??= err;
      }
    }
    if (deferred !== undefined) {
      const err = deferred;
      queueMicrotask(() => {
        throw err;
      });
    }
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      this.emit("protocol_error", err instanceof Error ? err : new Error(String(err)), line);
      return;
    }
    if (Array.isArray(message)) {
      for (const m of message) this.onMessage(m, line);
    } else {
      this.onMessage(message, line);
    }
  }

  private onMessage(message: unknown, line: string): void {
    if (message === null || typeof message !== "object") {
      this.emit("protocol_error", new Error("not a JSON-RPC message"), line);
      return;
    }
    const m = message as Record<string, unknown>;
    if ("result" in m || "error" in m) {
      const pending = typeof m["id"] === "number" ? this.pending.get(m["id"]) : undefined;
      if (pending === undefined) {
        // A late answer to a call that timed out or was aborted, or an error not tied
        // to any request of ours (id null).
        if (m["id"] === null || m["id"] === undefined) {
          this.emit("protocol_error", toRewindError(m["error"], "(unknown)"), line);
        }
        return;
      }
      pending.cleanup();
      if ("error" in m && m["error"] !== undefined) {
        pending.reject(toRewindError(m["error"], pending.method));
      } else {
        pending.resolve(m["result"]);
      }
      return;
    }
    if (typeof m["method"] === "string" && !("id" in m)) {
      const method = m["method"];
      const params = m["params"];
      if (KNOWN_NOTIFICATIONS.has(method)) {
        (this.emit as (event: string, ...args: unknown[]) => boolean)(method, params);
      }
      this.emit("notification", method, params);
      return;
    }
    this.emit("protocol_error", new Error("unexpected message"), line);
  }

  private onStderr(lines: string[]): void {
    for (const line of lines) {
      this.stderrTail.push(line);
      if (this.stderrTail.length > this.stderrTailLines) this.stderrTail.shift();
      this.emit("stderr", line);
    }
  }

  private closedError(method: string): RewindClosedError {
    const info = this.exitInfo;
    const how =
      info === undefined
        ? "the client is closing"
        : info.error !== undefined
          ? `rewind could not be started: ${info.error.message}`
          : `rewind exited (${info.signal !== null ? `signal ${info.signal}` : `code ${String(info.code)}`})`;
    return new RewindClosedError(`${how}; ${method} was not answered`, {
      method,
      exitCode: info?.code ?? null,
      signal: info?.signal ?? null,
      stderr: this.stderrTail.join("\n"),
      cause: info?.error,
    });
  }

  private finish(info: ExitInfo): void {
    if (this.exitInfo !== undefined) return;
    this.exitInfo = info;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) {
      p.cleanup();
      p.reject(this.closedError(p.method));
    }
    this.resolveExited(info);
    this.emit("exit", info);
  }
}

function serveArgs(o: RewindClientOptions): string[] {
  const args = ["serve"];
  if (o.projectDir !== undefined) args.push("--cwd", o.projectDir);
  if (o.storeDir !== undefined) args.push("--store", o.storeDir);
  if (o.sessionFile !== undefined) args.push("--session", o.sessionFile);
  return args;
}

function toRewindError(error: unknown, method: string): RewindError {
  if (error !== null && typeof error === "object") {
    const e = error as { code?: unknown; message?: unknown; data?: unknown };
    return new RewindError(
      typeof e.code === "number" ? e.code : 0,
      typeof e.message === "string" ? e.message : "unknown error",
      e.data,
      method,
    );
  }
  return new RewindError(0, String(error), undefined, method);
}
