// generated from schema/rewind-protocol.json by clients/generate.py — do not edit

import { EventEmitter } from "node:events";
import type { CallOptions } from "./types.js";

/** Protocol version this client was generated for (`rewind sidecar protocol`). */
export const PROTOCOL_VERSION = 1 as const;

/** Error codes of the protocol and what they mean. */
export const ERROR_CODES = {
  "-32700": "parse error",
  "-32602": "invalid params (including bad paths)",
  "-32601": "unknown method",
  "-32600": "invalid request",
  "1001": "unknown entry id or tree hash",
  "1002": "restore aborted: conflicts; data.conflicts lists them",
  "1003": "store corruption detected (hash mismatch); data.object names it",
  "1004": "session locked by another process",
  "1005": "I/O error; data.path names the file",
  "1006": "a hunk selection no longer matches the file's diff; data.path and data.index name it",
} as const;

/** A code from the protocol's error table. */
export type ProtocolErrorCode = -32700 | -32602 | -32601 | -32600 | 1001 | 1002 | 1003 | 1004 | 1005 | 1006;

// ---- types ($defs) ----

export interface AppendEntryParams {
  customType?: string | null;
  data?: unknown;
  /** The host's own id for the entry (non-empty, no whitespace, ≤ 64 chars). */
  entryId?: string | null;
  entryType?: HostEntryType | null;
  parentId?: string | null;
  role?: string | null;
  text?: string | null;
}

export interface AppendEntryResult {
  entryId: string;
  existed: boolean;
}

export interface ApproveParams {
  message?: string | null;
}

export interface ApproveResult {
  approvedEntryId: string;
  approvedTreeHash: string;
  /**
   * Step-snapshots taken since the previous approval (or the session
   * start), the approve snapshot included.
   */
  snapshotsApproved: number;
}

export interface BaselineInfo {
  bytes: number;
  entryId: string;
  /** Captured regular files and symlinks. */
  files: number;
  treeHash: string;
}

export interface BlameLine {
  /**
   * The checkpoint that introduced the line; null for a line not yet in any
   * checkpoint (`at: "@working"`).
   */
  entryId: string | null;
  kind: string;
  label?: string | null;
  /** 1-based. */
  line: number;
  text: string;
  timestamp: string | null;
  turnIndex: number;
}

export type ChangeReason = "restore" | "navigate" | "undo" | "reset" | "revert";

export interface CheckpointInfo {
  added: number;
  deleted: number;
  entryId: string;
  /**
   * The git branch the project was on when the checkpoint was taken
   * (absent outside a git repository, on a detached HEAD, or when the
   * checkpoint did not record it).
   */
  gitBranch?: string | null;
  kind: string;
  label?: string | null;
  modified: number;
  /** Paths present but not captured by this checkpoint; absent when 0. */
  notCaptured?: number;
  note?: string | null;
  onCurrentPath: boolean;
  parentId: string | null;
  timestamp: string;
  /**
   * The tool a `tool` checkpoint was taken around (`snapshot`'s
   * `tool.name`).
   */
  tool?: string | null;
  treeHash: string;
  turnIndex: number;
}

export interface Conflict {
  path: string;
  reason: ConflictReason;
}

export interface ConflictHunk {
  /** The lines as they were before the reverted entry. */
  before: string;
  /** The lines as they are now. */
  current: string;
  /** The lines as the reverted entry left them. */
  reverted: string;
}

/**
 * - "dirty": Changed on disk since the sidecar last recorded it.
 * - "untracked": Never captured (ignored, or reported in a snapshot's `untracked`) but standing where the target has a file.
 * - "unwritable": Could not be written or removed (permissions, in use).
 * - "merge": `revert`: later changes touched what the reverted entry changed.
 */
export type ConflictReason = "dirty" | "untracked" | "unwritable" | "merge";

export type ContentEncoding = "utf8" | "base64";

/**
 * One hunk of a unified diff; starts and counts as its `@@` header gives them (1-based;
 * an empty side names the line before it).
 */
export interface DiffHunk {
  /**
   * Hash of the hunk's text (header and lines), so that a selection made on a diff
   * that is no longer current is refused rather than misapplied.
   */
  hash: string;
  index: number;
  newLines: number;
  newStart: number;
  oldLines: number;
  oldStart: number;
}

export interface DiffLists {
  added: string[];
  deleted: string[];
  modified: string[];
  /**
   * Present but not captured by this checkpoint (their reasons are in
   * `stats.untracked`): neither added nor deleted. Absent when empty.
   */
  notCaptured?: string[];
  /**
   * Captured by this checkpoint, present but not captured by the
   * parent's: whether they changed is unknown. Absent when empty.
   */
  recaptured?: string[];
}

export type EmptyResult = Record<string, unknown>;

export interface EntryIdResult {
  entryId: string;
}

export interface FileBlameParams {
  /** An entry id, or `@working` (the default). */
  at?: string | null;
  path: string;
}

export interface FileBlameResult {
  /**
   * Some line diff ran out of its budget: lines of a stretch shown as replaced
   * wholesale are attributed to the later checkpoint.
   */
  isApproximate: boolean;
  lines: BlameLine[];
  path: string;
}

export interface FileDiff {
  additions: number;
  deletions: number;
  encoding: ContentEncoding;
  /**
   * The hunks of `unifiedDiff`, in order (empty for binary and too-large files): what a
   * hunk-level `restore_files` selects, by `index` and `hash`.
   */
  hunks: DiffHunk[];
  /**
   * The line diff ran out of its work or time budget, so some changed stretch is shown
   * as removed and re-added whole: `unifiedDiff` is still a correct patch, but not a
   * minimal one, and `additions`/`deletions` over-count.
   */
  isApproximate: boolean;
  isBinary: boolean;
  isTooLarge: boolean;
  newContent: string | null;
  newHash: string | null;
  /**
   * The new end held the path but did not capture it: there is no new
   * content, and no diff.
   */
  newNotCaptured?: UntrackedReason | null;
  oldContent: string | null;
  oldHash: string | null;
  /**
   * The old end held the path but did not capture it: there is no old
   * content, and no diff.
   */
  oldNotCaptured?: UntrackedReason | null;
  path: string;
  unifiedDiff: string;
}

export interface FileDiffParams {
  contextLines?: number | null;
  filePath: string;
  fromEntryId?: string | null;
  fromHash?: string | null;
  toEntryId?: string | null;
  toHash?: string | null;
}

export interface FileHistoryParams {
  filePath: string;
  scope?: Scope | null;
}

export interface FileHistoryResult {
  path: string;
  versions: FileVersion[];
}

export type FileStatus = "added" | "modified" | "deleted" | "notCaptured" | "recaptured";

export interface FileVersion {
  entryId: string;
  /** Content hash after this entry; null when deleted or not captured. */
  hash: string | null;
  kind: string;
  label?: string | null;
  /**
   * Why this entry's checkpoint (`notCaptured`) or its parent's
   * (`recaptured`) did not capture the file.
   */
  reason?: UntrackedReason | null;
  status: FileStatus;
  timestamp: string;
  turnIndex: number;
}

/**
 * `files_changed`: sent once per operation that changed the working
 * directory, before its response.
 */
export interface FilesChanged {
  deleted: string[];
  reason: ChangeReason;
  written: string[];
}

export interface GcParams {
  /** Remove the oldest unprotected sessions while the store is larger. */
  budgetBytes?: number | null;
  dryRun?: boolean | null;
  /** Keep the newest N sessions (plus protected ones). */
  keepLast?: number | null;
  /** Keep sessions younger than this many days (plus protected ones). */
  maxAgeDays?: number | null;
}

export interface GcResult {
  budgetMet: boolean;
  bytesBefore: number;
  bytesFreed: number;
  dryRun: boolean;
  objectsBefore: number;
  objectsRemoved: number;
  /** Session files removed (or, in a dry run, that would be). */
  prunedSessions: string[];
  sessionsPruned: number;
}

export interface GetTreeResult {
  entries: TreeEntryInfo[];
  leafId: string;
}

export interface GitInfo {
  branch: string | null;
  head: string | null;
}

export type HostEntryType = "message" | "custom";

export interface HunkRef {
  hash: string;
  index: number;
}

export interface HunkSelection {
  /**
   * The `contextLines` the diff was asked with (default 3): it decides how changes
   * group into hunks.
   */
  contextLines?: number | null;
  /** The hunks to take back, as `get_file_diff` numbered and hashed them. */
  hunks: HunkRef[];
  path: string;
}

export interface InitializeOptions {
  /** Exclude node_modules, target, .venv, ... (default true). */
  defaultExcludes?: boolean | null;
  /** Extra gitignore-style globs to exclude (even files git tracks). */
  extraIgnores?: string[] | null;
  /** fsync objects and session appends (default true). */
  fsync?: boolean | null;
  /**
   * Bytes; files git ignores (outside ignored directories) are captured
   * up to this size, so deleting `.env` can be undone; 0 captures none
   * (default 1 MiB).
   */
  ignoredMaxSize?: number | null;
  /**
   * At most this many ignored files are captured per directory; the rest
   * are untracked `ignoredOverCap` (default 32).
   */
  ignoredPerDirectory?: number | null;
  /** Bytes; files larger than this are untracked `tooLarge` (default 16 MiB). */
  maxFileSize?: number | null;
  /**
   * A remote to push the store's sessions to in the background after
   * each checkpoint (docs/remote.md "Continuous push"): a remote's name
   * in the store's config or a URL. Default: `REWIND_REMOTE`, else the
   * store's remote added with `--auto-push`, else none. A remote that
   * cannot be named or reached never fails a request: it is logged and
   * `rewind status` shows how far behind it is.
   */
  remote?: string | null;
  /** Honour .gitignore and .git/info/exclude (default true). */
  useGitignore?: boolean | null;
  /**
   * Watch the project for changes (inotify on Linux, FSEvents on macOS,
   * ReadDirectoryChangesW on Windows) so a snapshot looks
   * only at what changed since the last scan; it scans everything on
   * start, after a watcher overflow, or whenever an ignore file, the git
   * index or `.git/info/exclude` changed (default true).
   */
  watch?: boolean | null;
}

export interface InitializeParams {
  /** Project root (absolute). Default: `--cwd`, else the process cwd. */
  cwd?: string | null;
  options?: InitializeOptions | null;
  /** Resume this session file, or create it. Absolute. */
  sessionFile?: string | null;
  /** Store directory (absolute). Default: `$REWIND_HOME/projects/<hash>`. */
  storeDir?: string | null;
}

export interface InitializeResult {
  baseline: BaselineInfo;
  leafId: string;
  projectRoot: string;
  protocolVersion: number;
  recovered?: Recovered | null;
  resumed: boolean;
  serverVersion: string;
  sessionFile: string;
  sessionId: string;
  storeDir: string;
}

/** What recovery did, for `initialize`'s `recovered`. */
export interface InterruptedRestore {
  /**
   * `"completed"`: the restore was finished; `"discarded"`: it had not
   * started touching files, the journal was dropped.
   */
  action: string;
  deleted: string[];
  /**
   * Paths that held neither what the restore found nor what it meant
   * to leave (edited after the crash): left as they are.
   */
  kept: string[];
  restored: string[];
  unrevertEntryId: string;
}

export interface LabelParams {
  /** The label; null clears it. Required (send null to clear). */
  label: string;
  note?: string | null;
  targetId: string;
}

export interface ListCheckpointsParams {
  /** Case-insensitive substring searched in labels and notes. */
  query?: string | null;
  scope?: Scope | null;
}

export interface ListCheckpointsResult {
  checkpoints: CheckpointInfo[];
  initialEntryId: string;
}

export interface ModifiedFile {
  entryId: string | null;
  path: string;
  /** Why one end did not capture it (`notCaptured`, `recaptured`). */
  reason?: UntrackedReason | null;
  status: FileStatus;
  /**
   * Turn of the earliest tree-recording entry in the range that changed
   * the file; null when no recorded entry did (e.g. `@working` changes).
   */
  turnIndex: number | null;
}

export interface ModifiedFilesResult {
  files: ModifiedFile[];
  fromTreeHash: string;
  toTreeHash: string;
}

export interface NavigateTreeParams {
  label?: string | null;
  onConflict?: OnConflict | null;
  preview?: boolean | null;
  skipFiles?: boolean | null;
  summarize?: boolean | null;
  summary?: string | null;
  targetId: string;
}

export interface NavigateTreeResult {
  /**
   * The last entry of the chain appended below the target; null for a
   * preview.
   */
  newLeafId: string | null;
  /**
   * The tip of the branch left (its pre-restore snapshot when one was
   * taken).
   */
  oldLeafId: string;
  restore: RestoreResult | null;
  summaryEntryId?: string | null;
}

/**
 * - "skip": Leave dirty files as they are and report them (default).
 * - "overwrite": Write dirty files too (they stay listed in `dirty`).
 * - "abort": Change nothing and fail with 1002 when there is any conflict.
 */
export type OnConflict = "skip" | "overwrite" | "abort";

/**
 * `progress`: at most every 100 ms while a restore, navigation, undo or
 * reset writes files (`done` of `total` files), or while a long scan walks
 * the project (`operation: "scan"`; `total` is an estimate, never below
 * `done`).
 */
export interface Progress {
  done: number;
  /** `"restore"`, `"navigate"`, `"undo"`, `"reset"` or `"scan"`. */
  operation: string;
  total: number;
}

export interface RangeParams {
  /** Entry id or "@working". Default: the baseline. */
  fromEntryId?: string | null;
  fromHash?: string | null;
  /** Entry id or "@working". Default: the leaf. */
  toEntryId?: string | null;
  toHash?: string | null;
}

export interface Recovered {
  /** A restore a crash interrupted, and what recovery did with it. */
  interruptedRestore?: InterruptedRestore | null;
  /** The entry recording edits made while no sidecar was running. */
  outsideEntryId?: string | null;
  /**
   * The session file's last line was unterminated: `"completed"` (it
   * parsed and got its newline) or `"truncated"` (it did not parse).
   */
  tornTail?: string | null;
  /** Bytes removed when the torn tail was truncated. */
  truncatedBytes?: number | null;
}

export interface ResetParams {
  onConflict?: OnConflict | null;
  preview?: boolean | null;
}

export interface ResetResult {
  resetTo: string;
  restore: RestoreResult;
}

export interface RestoreFilesParams {
  /** Only these files (or directories: everything below). */
  files?: string[] | null;
  /**
   * Also move git's HEAD (`git reset --soft`) and index (`git update-index`) back to
   * the target checkpoint's, through the user's `git`. Refused (-32602, nothing
   * written) during a merge, rebase, cherry-pick or revert, on another branch, or when
   * a recorded commit or staged blob is gone. Default false: `.git` is never written.
   */
  git?: boolean | null;
  /**
   * Take back only some hunks of these files: the hunks of `get_file_diff` from the
   * restore's target to `@working`. Without `files`, only these files are touched.
   */
  hunks?: HunkSelection[] | null;
  onConflict?: OnConflict | null;
  preview?: boolean | null;
  /** Default: the leaf (discard changes since the last checkpoint). */
  targetEntryId?: string | null;
  treeHash?: string | null;
}

export interface RestoreResult {
  conflicts: Conflict[];
  /** Files removed. */
  deleted: string[];
  dirty: string[];
  /** With `git`: HEAD or the index moved (a preview: would move). Absent when false. */
  gitMoved?: boolean;
  /**
   * Paths the target checkpoint held but did not capture, with why: left
   * as they are (also in `skipped`). Absent when empty.
   */
  notCaptured?: Untracked[];
  preview: boolean;
  /** Files written (created or overwritten). */
  restored: string[];
  skipped: string[];
  unrevertEntryId: string | null;
  warnings: string[];
}

export interface RevertFile {
  /** What the revert does to the file: `write`, `delete` or `none`. */
  action: string;
  conflicts: ConflictHunk[];
  /**
   * Unified diff from the file now to what the revert writes (with conflict markers
   * for a conflict); empty when nothing is written or the file is binary.
   */
  diff: string;
  path: string;
  reason?: string | null;
  status: RevertStatus;
}

/**
 * - "abort": Write nothing if any file conflicts.
 * - "skip": Write the files that merge cleanly; leave the others as they are.
 * - "markers": Write the clean files, and conflicting text files with conflict markers (as git does).
 */
export type RevertOnConflict = "abort" | "skip" | "markers";

export interface RevertParams {
  /** The checkpoint whose changes (against the checkpoint before it) are taken out. */
  entryId: string;
  /** Only these files (or directories: everything below). */
  files?: string[] | null;
  onConflict?: RevertOnConflict | null;
  preview?: boolean | null;
  /**
   * The last checkpoint of a range starting at `entryId` (a descendant of it): the
   * changes of the whole range are taken out.
   */
  toEntryId?: string | null;
}

export interface RevertResult {
  /** Files removed. */
  deleted: string[];
  /**
   * Files that could not be touched at write time (changed under our feet,
   * unwritable).
   */
  failed: Conflict[];
  files: RevertFile[];
  preview: boolean;
  /** Files written (created or overwritten). */
  restored: string[];
  unrevertEntryId: string | null;
}

/**
 * - "clean": Reverts cleanly (or is already as the revert leaves it).
 * - "conflict": Later changes overlap the reverted ones.
 * - "skip": Left alone: see `reason`.
 */
export type RevertStatus = "clean" | "conflict" | "skip";

export type Scope = "path" | "all";

export type SnapshotKind = "turn" | "message" | "tool" | "manual";

export interface SnapshotParams {
  force?: boolean | null;
  kind?: SnapshotKind | null;
  label?: string | null;
  /** Default: the leaf. */
  parentId?: string | null;
  /**
   * Only these may have changed: re-check just them (files, missing
   * files, or directories re-checked recursively).
   */
  paths?: string[] | null;
  /**
   * The host's own id for this request: a snapshot sent again with the
   * id of one this session already recorded returns that checkpoint and
   * records nothing (a host retrying after a lost answer, a hook event
   * handed over twice). At most 64 characters, no whitespace.
   */
  requestId?: string | null;
  tool?: ToolInfo | null;
  turnIndex?: number | null;
}

export interface SnapshotResult {
  changed: boolean;
  diff: DiffLists;
  /** The new step-snapshot, or null when nothing changed. */
  entryId: string | null;
  git?: GitInfo | null;
  stats: SnapshotStats;
  treeHash: string;
  turnIndex: number;
}

export interface SnapshotStats {
  bytesHashed: number;
  durationMs: number;
  filesHashed: number;
  filesScanned: number;
  untracked: Untracked[];
}

export interface StageFilesParams {
  paths: string[];
}

export interface StageFilesResult {
  staged: string[];
}

export interface StatsResult {
  objects: number;
  projectRoot: string;
  sessions: number;
  snapshots: number;
  storeBytes: number;
  storeDir: string;
}

export interface StatusFile {
  additions: number;
  baseContent: string | null;
  deletions: number;
  diff: string | null;
  /** As in `get_file_diff`: `diff`, `additions` and `deletions` are not minimal. */
  isApproximate: boolean;
  isBinary: boolean;
  isTooLarge: boolean;
  path: string;
  /** Why one end did not capture it (`notCaptured`, `recaptured`). */
  reason?: UntrackedReason | null;
  status: FileStatus;
}

export interface StatusResult {
  approvedEntryId: string | null;
  changedFiles: StatusFile[];
  hasUnapproved: boolean;
  lastApprovedAt: string | null;
}

export interface ToolInfo {
  input?: unknown;
  name: string;
}

export interface TreeEntryInfo {
  customType?: string | null;
  id: string;
  label?: string | null;
  parentId: string | null;
  timestamp: string;
  type: string;
}

export interface UndoParams {
  /** An unrevert-point; default the latest on the current path. */
  entryId?: string | null;
  /**
   * Also put git's HEAD and index back as the undone restore found them (as
   * `restore_files`' `git`, refused the same way).
   */
  git?: boolean | null;
  onConflict?: OnConflict | null;
  preview?: boolean | null;
}

export interface Untracked {
  path: string;
  reason: UntrackedReason;
}

/**
 * Why a path found in the project is not in the checkpoint.
 * - "tooLarge": Larger than `maxFileSize`, and not in the parent checkpoint.
 * - "special": A FIFO, socket or device.
 * - "unreadable": Could not be read: permissions, an I/O error, a name that is not UTF-8, or a directory that could not be listed (nothing below it is captured).
 * - "pathTooLong": Its absolute path is longer than the system allows (PATH_MAX), so it cannot be opened by name; for a directory, nothing below it is captured.
 * - "unstable": Kept changing while it was read (a file rewritten in place), in every attempt: what was read would be a mix of versions that never existed as a whole.
 * - "ignoredOverCap": Ignored by git and small enough to be captured, but its directory holds more such files than `ignoredPerDirectory`.
 */
export type UntrackedReason = "tooLarge" | "special" | "unreadable" | "pathTooLong" | "unstable" | "ignoredOverCap";

export interface VerifyProblem {
  /** Who needs it (a session file, a stat cache, a tree) and the error. */
  detail: string;
  kind: VerifyProblemKind;
  /** The object id or the file the problem is about. */
  subject: string;
}

/**
 * What `verify` found wrong.
 * - "session": A session file that does not parse.
 * - "missingObject": An object a session, a journal or a stat cache names is not stored.
 * - "corruptObject": A stored object that does not decode to content with its id (or a tree that does not decode as a tree).
 */
export type VerifyProblemKind = "session" | "missingObject" | "corruptObject";

export interface VerifyResult {
  /** Distinct objects read and hashed (reachable ones and every other one stored). */
  objects: number;
  /** No problem found. */
  ok: boolean;
  problems: VerifyProblem[];
  sessions: number;
  statCaches: number;
}

// ---- methods ----

/** Every protocol method: its params (`undefined` when it takes none) and result. */
export interface MethodMap {
  append_entry: {
    params: AppendEntryParams;
    result: AppendEntryResult;
    paramsRequired: false;
    mutating: true;
  };
  approve: {
    params: ApproveParams;
    result: ApproveResult;
    paramsRequired: false;
    mutating: true;
  };
  gc: {
    params: GcParams;
    result: GcResult;
    paramsRequired: false;
    mutating: true;
  };
  get_file_blame: {
    params: FileBlameParams;
    result: FileBlameResult;
    paramsRequired: true;
    mutating: false;
  };
  get_file_diff: {
    params: FileDiffParams;
    result: FileDiff | null;
    paramsRequired: true;
    mutating: false;
  };
  get_file_history: {
    params: FileHistoryParams;
    result: FileHistoryResult;
    paramsRequired: true;
    mutating: false;
  };
  get_modified_files: {
    params: RangeParams;
    result: ModifiedFilesResult;
    paramsRequired: false;
    mutating: false;
  };
  get_status: {
    params: undefined;
    result: StatusResult;
    paramsRequired: false;
    mutating: false;
  };
  get_tree: {
    params: undefined;
    result: GetTreeResult;
    paramsRequired: false;
    mutating: false;
  };
  initialize: {
    params: InitializeParams;
    result: InitializeResult;
    paramsRequired: false;
    mutating: true;
  };
  label: {
    params: LabelParams;
    result: EntryIdResult;
    paramsRequired: true;
    mutating: true;
  };
  list_checkpoints: {
    params: ListCheckpointsParams;
    result: ListCheckpointsResult;
    paramsRequired: false;
    mutating: false;
  };
  navigate_tree: {
    params: NavigateTreeParams;
    result: NavigateTreeResult;
    paramsRequired: true;
    mutating: true;
  };
  reset: {
    params: ResetParams;
    result: ResetResult;
    paramsRequired: false;
    mutating: true;
  };
  restore_files: {
    params: RestoreFilesParams;
    result: RestoreResult;
    paramsRequired: false;
    mutating: true;
  };
  revert: {
    params: RevertParams;
    result: RevertResult;
    paramsRequired: true;
    mutating: true;
  };
  shutdown: {
    params: undefined;
    result: EmptyResult;
    paramsRequired: false;
    mutating: false;
  };
  snapshot: {
    params: SnapshotParams;
    result: SnapshotResult;
    paramsRequired: false;
    mutating: true;
  };
  stage_files: {
    params: StageFilesParams;
    result: StageFilesResult;
    paramsRequired: true;
    mutating: true;
  };
  stats: {
    params: undefined;
    result: StatsResult;
    paramsRequired: false;
    mutating: false;
  };
  undo: {
    params: UndoParams;
    result: RestoreResult;
    paramsRequired: false;
    mutating: true;
  };
  verify: {
    params: undefined;
    result: VerifyResult;
    paramsRequired: false;
    mutating: false;
  };
}

export type MethodName = keyof MethodMap;
export type MethodParams<M extends MethodName> = MethodMap[M]["params"];
export type MethodResult<M extends MethodName> = MethodMap[M]["result"];

/** Runtime metadata of every method. */
export const METHODS = {
  append_entry: { hasParams: true, paramsRequired: false, mutating: true },
  approve: { hasParams: true, paramsRequired: false, mutating: true },
  gc: { hasParams: true, paramsRequired: false, mutating: true },
  get_file_blame: { hasParams: true, paramsRequired: true, mutating: false },
  get_file_diff: { hasParams: true, paramsRequired: true, mutating: false },
  get_file_history: { hasParams: true, paramsRequired: true, mutating: false },
  get_modified_files: { hasParams: true, paramsRequired: false, mutating: false },
  get_status: { hasParams: false, paramsRequired: false, mutating: false },
  get_tree: { hasParams: false, paramsRequired: false, mutating: false },
  initialize: { hasParams: true, paramsRequired: false, mutating: true },
  label: { hasParams: true, paramsRequired: true, mutating: true },
  list_checkpoints: { hasParams: true, paramsRequired: false, mutating: false },
  navigate_tree: { hasParams: true, paramsRequired: true, mutating: true },
  reset: { hasParams: true, paramsRequired: false, mutating: true },
  restore_files: { hasParams: true, paramsRequired: false, mutating: true },
  revert: { hasParams: true, paramsRequired: true, mutating: true },
  shutdown: { hasParams: false, paramsRequired: false, mutating: false },
  snapshot: { hasParams: true, paramsRequired: false, mutating: true },
  stage_files: { hasParams: true, paramsRequired: true, mutating: true },
  stats: { hasParams: false, paramsRequired: false, mutating: false },
  undo: { hasParams: true, paramsRequired: false, mutating: true },
  verify: { hasParams: false, paramsRequired: false, mutating: false },
} as const;

// ---- notifications ----

/** Server-to-client notifications and their params. */
export interface NotificationMap {
  /** Sent once per operation that changed the working directory, before its response. */
  files_changed: FilesChanged;
  /** At most every 100 ms while a restore, navigation, undo or reset writes files. */
  progress: Progress;
}

export type NotificationName = keyof NotificationMap;
export const NOTIFICATIONS = ["files_changed", "progress"] as const;

// ---- typed client methods ----

/**
 * One typed method per protocol method. `RewindClient` (client.ts) supplies `call`,
 * which sends the request and resolves with the result.
 */
export abstract class RewindMethods extends EventEmitter {
  abstract call<M extends MethodName>(
    method: M,
    params?: MethodParams<M>,
    opts?: CallOptions,
  ): Promise<MethodResult<M>>;

  /**
   * Record a host conversation entry, with the host's own id.
   *
   * `append_entry` (mutating; applied in order)
   */
  appendEntry(params?: AppendEntryParams, opts?: CallOptions): Promise<AppendEntryResult> {
    return this.call("append_entry", params, opts);
  }

  /**
   * Lock in the current state as approved.
   *
   * `approve` (mutating; applied in order)
   */
  approve(params?: ApproveParams, opts?: CallOptions): Promise<ApproveResult> {
    return this.call("approve", params, opts);
  }

  /**
   * Prune old sessions (keep-rules) and collect unreferenced objects; dryRun reports only.
   *
   * `gc` (mutating; applied in order)
   */
  gc(params?: GcParams, opts?: CallOptions): Promise<GcResult> {
    return this.call("gc", params, opts);
  }

  /**
   * For each line of a file (at an entry or @working), the checkpoint that introduced it.
   *
   * `get_file_blame` (read-only)
   */
  getFileBlame(params: FileBlameParams, opts?: CallOptions): Promise<FileBlameResult> {
    return this.call("get_file_blame", params, opts);
  }

  /**
   * Old and new content, hashes and unified diff of one file between two points.
   *
   * `get_file_diff` (read-only)
   */
  getFileDiff(params: FileDiffParams, opts?: CallOptions): Promise<FileDiff | null> {
    return this.call("get_file_diff", params, opts);
  }

  /**
   * Every checkpoint that changed one file, oldest first.
   *
   * `get_file_history` (read-only)
   */
  getFileHistory(params: FileHistoryParams, opts?: CallOptions): Promise<FileHistoryResult> {
    return this.call("get_file_history", params, opts);
  }

  /**
   * Files changed between two points, with the entry that first changed each.
   *
   * `get_modified_files` (read-only)
   */
  getModifiedFiles(params?: RangeParams, opts?: CallOptions): Promise<ModifiedFilesResult> {
    return this.call("get_modified_files", params, opts);
  }

  /**
   * Working-directory changes since the last approval (or the baseline).
   *
   * `get_status` (read-only)
   */
  getStatus(opts?: CallOptions): Promise<StatusResult> {
    return this.call("get_status", undefined, opts);
  }

  /**
   * All entries of the session and the leaf.
   *
   * `get_tree` (read-only)
   */
  getTree(opts?: CallOptions): Promise<GetTreeResult> {
    return this.call("get_tree", undefined, opts);
  }

  /**
   * Open or resume a session; take the baseline snapshot.
   *
   * `initialize` (mutating; applied in order)
   */
  initialize(params?: InitializeParams, opts?: CallOptions): Promise<InitializeResult> {
    return this.call("initialize", params, opts);
  }

  /**
   * Name or annotate any entry; a null label clears it.
   *
   * `label` (mutating; applied in order)
   */
  label(params: LabelParams, opts?: CallOptions): Promise<EntryIdResult> {
    return this.call("label", params, opts);
  }

  /**
   * Tree-recording entries with kinds, labels and counts; query searches labels and notes.
   *
   * `list_checkpoints` (read-only)
   */
  listCheckpoints(params?: ListCheckpointsParams, opts?: CallOptions): Promise<ListCheckpointsResult> {
    return this.call("list_checkpoints", params, opts);
  }

  /**
   * Move the leaf to an entry and (unless skipFiles) restore its files.
   *
   * `navigate_tree` (mutating; applied in order)
   */
  navigateTree(params: NavigateTreeParams, opts?: CallOptions): Promise<NavigateTreeResult> {
    return this.call("navigate_tree", params, opts);
  }

  /**
   * Restore the last approved state (or the baseline); undoable.
   *
   * `reset` (mutating; applied in order)
   */
  reset(params?: ResetParams, opts?: CallOptions): Promise<ResetResult> {
    return this.call("reset", params, opts);
  }

  /**
   * Restore all or selected files to a checkpoint; preview returns the plan only.
   *
   * `restore_files` (mutating; applied in order)
   */
  restoreFiles(params?: RestoreFilesParams, opts?: CallOptions): Promise<RestoreResult> {
    return this.call("restore_files", params, opts);
  }

  /**
   * Take one checkpoint's changes (or a range's) out of the working directory, keeping later ones: a three-way merge per file; preview returns the plan only; undoable.
   *
   * `revert` (mutating; applied in order)
   */
  revert(params: RevertParams, opts?: CallOptions): Promise<RevertResult> {
    return this.call("revert", params, opts);
  }

  /**
   * Flush, release locks, exit after replying.
   *
   * `shutdown` (read-only)
   */
  shutdown(opts?: CallOptions): Promise<EmptyResult> {
    return this.call("shutdown", undefined, opts);
  }

  /**
   * Checkpoint the working directory now (turn end, before a tool, manual).
   *
   * `snapshot` (mutating; applied in order)
   */
  snapshot(params?: SnapshotParams, opts?: CallOptions): Promise<SnapshotResult> {
    return this.call("snapshot", params, opts);
  }

  /**
   * Force-include paths in every later snapshot while they exist, even if ignored.
   *
   * `stage_files` (mutating; applied in order)
   */
  stageFiles(params: StageFilesParams, opts?: CallOptions): Promise<StageFilesResult> {
    return this.call("stage_files", params, opts);
  }

  /**
   * Store size, object count, sessions and snapshots.
   *
   * `stats` (read-only)
   */
  stats(opts?: CallOptions): Promise<StatsResult> {
    return this.call("stats", undefined, opts);
  }

  /**
   * Revert the last restore/navigate/reset/revert/undo (an undo is itself undoable).
   *
   * `undo` (mutating; applied in order)
   */
  undo(params?: UndoParams, opts?: CallOptions): Promise<RestoreResult> {
    return this.call("undo", params, opts);
  }

  /**
   * Read and hash every session's trees and blobs, every object stat caches vouch for and every stored object; report problems, repair nothing.
   *
   * `verify` (read-only)
   */
  verify(opts?: CallOptions): Promise<VerifyResult> {
    return this.call("verify", undefined, opts);
  }
}
