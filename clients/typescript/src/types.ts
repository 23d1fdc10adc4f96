/** Per-call options accepted by every client method. */
export interface CallOptions {
  /**
   * Milliseconds to wait for the response before rejecting with `RewindTimeoutError`.
   * Defaults to the client's `timeoutMs` (60 s). `0` or `Infinity` waits forever.
   * The sidecar is not told: a mutating request that times out may still be applied.
   */
  timeoutMs?: number;
  /** Abort waiting for the response (the request itself is not cancelled). */
  signal?: AbortSignal;
}
