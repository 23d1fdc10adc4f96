export { defaultBinary, packagedBinary, PLATFORM_PACKAGES } from "./binary.js";
export { RewindClient, type ExitInfo, type RewindClientOptions, type RewindEvents } from "./client.js";
export { ErrorCode, RewindAbortError, RewindClosedError, RewindError, RewindTimeoutError, type ErrorCodeName } from "./errors.js";
export { encodeLine, LineDecoder } from "./framing.js";
export { decodePath, encodePath } from "./paths.js";
export type { CallOptions } from "./types.js";
export * from "./generated.js";
