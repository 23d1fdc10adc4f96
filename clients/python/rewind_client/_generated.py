# generated from schema/rewind-protocol.json by clients/generate.py — do not edit
"""Typed models and methods of the rewind protocol (see schema/rewind-protocol.json)."""

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal, NotRequired, Required, TypeAlias, TypedDict, cast

#: Any JSON value (free-form ``data`` / ``input`` fields).
JsonValue: TypeAlias = Any

PROTOCOL_VERSION: Final = 1


HostEntryType: TypeAlias = Literal["message", "custom"]


class AppendEntryParams(TypedDict, total=False):
    """Used as: params of ``append_entry``."""
    customType: str | None
    data: JsonValue
    #: The host's own id for the entry (non-empty, no whitespace, ≤ 64 chars).
    entryId: str | None
    entryType: HostEntryType | None
    parentId: str | None
    role: str | None
    text: str | None


class AppendEntryResult(TypedDict):
    """Used as: result of ``append_entry``."""
    entryId: str
    existed: bool


class ApproveParams(TypedDict, total=False):
    """Used as: params of ``approve``."""
    message: str | None


class ApproveResult(TypedDict):
    """Used as: result of ``approve``."""
    approvedEntryId: str
    approvedTreeHash: str
    #: Step-snapshots taken since the previous approval (or the session
    #: start), the approve snapshot included.
    snapshotsApproved: int


class BaselineInfo(TypedDict):
    bytes: int
    entryId: str
    #: Captured regular files and symlinks.
    files: int
    treeHash: str


class BlameLine(TypedDict):
    #: The checkpoint that introduced the line; null for a line not yet in any
    #: checkpoint (`at: "@working"`).
    entryId: str | None
    kind: str
    label: NotRequired[str | None]
    #: 1-based.
    line: int
    text: str
    timestamp: str | None
    turnIndex: int


ChangeReason: TypeAlias = Literal["restore", "navigate", "undo", "reset", "revert"]


class CheckpointInfo(TypedDict):
    added: int
    deleted: int
    entryId: str
    #: The git branch the project was on when the checkpoint was taken
    #: (absent outside a git repository, on a detached HEAD, or when the
    #: checkpoint did not record it).
    gitBranch: NotRequired[str | None]
    kind: str
    label: NotRequired[str | None]
    modified: int
    #: Paths present but not captured by this checkpoint; absent when 0.
    notCaptured: NotRequired[int]
    note: NotRequired[str | None]
    onCurrentPath: bool
    parentId: str | None
    timestamp: str
    #: The tool a `tool` checkpoint was taken around (`snapshot`'s
    #: `tool.name`).
    tool: NotRequired[str | None]
    treeHash: str
    turnIndex: int


#: "dirty": Changed on disk since the sidecar last recorded it.
#:
#: "untracked": Never captured (ignored, or reported in a snapshot's `untracked`)
#: but standing where the target has a file.
#:
#: "unwritable": Could not be written or removed (permissions, in use).
#:
#: "merge": `revert`: later changes touched what the reverted entry changed.
ConflictReason: TypeAlias = Literal["dirty", "untracked", "unwritable", "merge"]


class Conflict(TypedDict):
    path: str
    reason: ConflictReason


class ConflictHunk(TypedDict):
    #: The lines as they were before the reverted entry.
    before: str
    #: The lines as they are now.
    current: str
    #: The lines as the reverted entry left them.
    reverted: str


ContentEncoding: TypeAlias = Literal["utf8", "base64"]


class DiffHunk(TypedDict):
    """One hunk of a unified diff; starts and counts as its `@@` header gives them (1-based;
    an empty side names the line before it).
    """
    #: Hash of the hunk's text (header and lines), so that a selection made on a diff
    #: that is no longer current is refused rather than misapplied.
    hash: str
    index: int
    newLines: int
    newStart: int
    oldLines: int
    oldStart: int


class DiffLists(TypedDict):
    added: list[str]
    deleted: list[str]
    modified: list[str]
    #: Present but not captured by this checkpoint (their reasons are in
    #: `stats.untracked`): neither added nor deleted. Absent when empty.
    notCaptured: NotRequired[list[str]]
    #: Captured by this checkpoint, present but not captured by the
    #: parent's: whether they changed is unknown. Absent when empty.
    recaptured: NotRequired[list[str]]


class EmptyResult(TypedDict):
    """Used as: result of ``shutdown``."""


class EntryIdResult(TypedDict):
    """Used as: result of ``label``."""
    entryId: str


class FileBlameParams(TypedDict, total=False):
    """Used as: params of ``get_file_blame``."""
    #: An entry id, or `@working` (the default).
    at: str | None
    path: Required[str]


class FileBlameResult(TypedDict):
    """Used as: result of ``get_file_blame``."""
    #: Some line diff ran out of its budget: lines of a stretch shown as replaced
    #: wholesale are attributed to the later checkpoint.
    isApproximate: bool
    lines: list[BlameLine]
    path: str


#: Why a path found in the project is not in the checkpoint.
#:
#: "tooLarge": Larger than `maxFileSize`, and not in the parent checkpoint.
#:
#: "special": A FIFO, socket or device.
#:
#: "unreadable": Could not be read: permissions, an I/O error, a name that is not
#: UTF-8, or a directory that could not be listed (nothing below it is
#: captured).
#:
#: "pathTooLong": Its absolute path is longer than the system allows (PATH_MAX), so it
#: cannot be opened by name; for a directory, nothing below it is
#: captured.
#:
#: "unstable": Kept changing while it was read (a file rewritten in place), in
#: every attempt: what was read would be a mix of versions that never
#: existed as a whole.
#:
#: "ignoredOverCap": Ignored by git and small enough to be captured, but its directory
#: holds more such files than `ignoredPerDirectory`.
UntrackedReason: TypeAlias = Literal["tooLarge", "special", "unreadable", "pathTooLong", "unstable", "ignoredOverCap"]


class FileDiff(TypedDict):
    """Used as: result of ``get_file_diff``."""
    additions: int
    deletions: int
    encoding: ContentEncoding
    #: The hunks of `unifiedDiff`, in order (empty for binary and too-large files): what a
    #: hunk-level `restore_files` selects, by `index` and `hash`.
    hunks: list[DiffHunk]
    #: The line diff ran out of its work or time budget, so some changed stretch is shown
    #: as removed and re-added whole: `unifiedDiff` is still a correct patch, but not a
    #: minimal one, and `additions`/`deletions` over-count.
    isApproximate: bool
    isBinary: bool
    isTooLarge: bool
    newContent: str | None
    newHash: str | None
    #: The new end held the path but did not capture it: there is no new
    #: content, and no diff.
    newNotCaptured: NotRequired[UntrackedReason | None]
    oldContent: str | None
    oldHash: str | None
    #: The old end held the path but did not capture it: there is no old
    #: content, and no diff.
    oldNotCaptured: NotRequired[UntrackedReason | None]
    path: str
    unifiedDiff: str


class FileDiffParams(TypedDict, total=False):
    """Used as: params of ``get_file_diff``."""
    contextLines: int | None
    filePath: Required[str]
    fromEntryId: str | None
    fromHash: str | None
    toEntryId: str | None
    toHash: str | None


Scope: TypeAlias = Literal["path", "all"]


class FileHistoryParams(TypedDict, total=False):
    """Used as: params of ``get_file_history``."""
    filePath: Required[str]
    scope: Scope | None


FileStatus: TypeAlias = Literal["added", "modified", "deleted", "notCaptured", "recaptured"]


class FileVersion(TypedDict):
    entryId: str
    #: Content hash after this entry; null when deleted or not captured.
    hash: str | None
    kind: str
    label: NotRequired[str | None]
    #: Why this entry's checkpoint (`notCaptured`) or its parent's
    #: (`recaptured`) did not capture the file.
    reason: NotRequired[UntrackedReason | None]
    status: FileStatus
    timestamp: str
    turnIndex: int


class FileHistoryResult(TypedDict):
    """Used as: result of ``get_file_history``."""
    path: str
    versions: list[FileVersion]


class FilesChanged(TypedDict):
    """`files_changed`: sent once per operation that changed the working
    directory, before its response.

    Used as: params of the ``files_changed`` notification.
    """
    deleted: list[str]
    reason: ChangeReason
    written: list[str]


class GcParams(TypedDict, total=False):
    """Used as: params of ``gc``."""
    #: Remove the oldest unprotected sessions while the store is larger.
    budgetBytes: int | None
    dryRun: bool | None
    #: Keep the newest N sessions (plus protected ones).
    keepLast: int | None
    #: Keep sessions younger than this many days (plus protected ones).
    maxAgeDays: float | None


class GcResult(TypedDict):
    """Used as: result of ``gc``."""
    budgetMet: bool
    bytesBefore: int
    bytesFreed: int
    dryRun: bool
    objectsBefore: int
    objectsRemoved: int
    #: Session files removed (or, in a dry run, that would be).
    prunedSessions: list[str]
    sessionsPruned: int


class TreeEntryInfo(TypedDict):
    customType: NotRequired[str | None]
    id: str
    label: NotRequired[str | None]
    parentId: str | None
    timestamp: str
    type: str


class GetTreeResult(TypedDict):
    """Used as: result of ``get_tree``."""
    entries: list[TreeEntryInfo]
    leafId: str


class GitInfo(TypedDict):
    branch: str | None
    head: str | None


class HunkRef(TypedDict, total=False):
    hash: Required[str]
    index: Required[int]


class HunkSelection(TypedDict, total=False):
    #: The `contextLines` the diff was asked with (default 3): it decides how changes
    #: group into hunks.
    contextLines: int | None
    #: The hunks to take back, as `get_file_diff` numbered and hashed them.
    hunks: Required[list[HunkRef]]
    path: Required[str]


class InitializeOptions(TypedDict, total=False):
    #: Exclude node_modules, target, .venv, ... (default true).
    defaultExcludes: bool | None
    #: Extra gitignore-style globs to exclude (even files git tracks).
    extraIgnores: list[str] | None
    #: fsync objects and session appends (default true).
    fsync: bool | None
    #: Bytes; files git ignores (outside ignored directories) are captured
    #: up to this size, so deleting `.env` can be undone; 0 captures none
    #: (default 1 MiB).
    ignoredMaxSize: int | None
    #: At most this many ignored files are captured per directory; the rest
    #: are untracked `ignoredOverCap` (default 32).
    ignoredPerDirectory: int | None
    #: Bytes; files larger than this are untracked `tooLarge` (default 16 MiB).
    maxFileSize: int | None
    #: A remote to push the store's sessions to in the background after
    #: each checkpoint (docs/remote.md "Continuous push"): a remote's name
    #: in the store's config or a URL. Default: `REWIND_REMOTE`, else the
    #: store's remote added with `--auto-push`, else none. A remote that
    #: cannot be named or reached never fails a request: it is logged and
    #: `rewind status` shows how far behind it is.
    remote: str | None
    #: Honour .gitignore and .git/info/exclude (default true).
    useGitignore: bool | None
    #: Watch the project for changes (inotify on Linux, FSEvents on macOS,
    #: ReadDirectoryChangesW on Windows) so a snapshot looks
    #: only at what changed since the last scan; it scans everything on
    #: start, after a watcher overflow, or whenever an ignore file, the git
    #: index or `.git/info/exclude` changed (default true).
    watch: bool | None


class InitializeParams(TypedDict, total=False):
    """Used as: params of ``initialize``."""
    #: Project root (absolute). Default: `--cwd`, else the process cwd.
    cwd: str | None
    options: InitializeOptions | None
    #: Resume this session file, or create it. Absolute.
    sessionFile: str | None
    #: Store directory (absolute). Default: `$REWIND_HOME/projects/<hash>`.
    storeDir: str | None


class InterruptedRestore(TypedDict):
    """What recovery did, for `initialize`'s `recovered`."""
    #: `"completed"`: the restore was finished; `"discarded"`: it had not
    #: started touching files, the journal was dropped.
    action: str
    deleted: list[str]
    #: Paths that held neither what the restore found nor what it meant
    #: to leave (edited after the crash): left as they are.
    kept: list[str]
    restored: list[str]
    unrevertEntryId: str


class Recovered(TypedDict):
    #: A restore a crash interrupted, and what recovery did with it.
    interruptedRestore: NotRequired[InterruptedRestore | None]
    #: The entry recording edits made while no sidecar was running.
    outsideEntryId: NotRequired[str | None]
    #: The session file's last line was unterminated: `"completed"` (it
    #: parsed and got its newline) or `"truncated"` (it did not parse).
    tornTail: NotRequired[str | None]
    #: Bytes removed when the torn tail was truncated.
    truncatedBytes: NotRequired[int | None]


class InitializeResult(TypedDict):
    """Used as: result of ``initialize``."""
    baseline: BaselineInfo
    leafId: str
    projectRoot: str
    protocolVersion: int
    recovered: NotRequired[Recovered | None]
    resumed: bool
    serverVersion: str
    sessionFile: str
    sessionId: str
    storeDir: str


class LabelParams(TypedDict, total=False):
    """Used as: params of ``label``."""
    #: The label; null clears it. Required (send null to clear).
    label: Required[str]
    note: str | None
    targetId: Required[str]


class ListCheckpointsParams(TypedDict, total=False):
    """Used as: params of ``list_checkpoints``."""
    #: Case-insensitive substring searched in labels and notes.
    query: str | None
    scope: Scope | None


class ListCheckpointsResult(TypedDict):
    """Used as: result of ``list_checkpoints``."""
    checkpoints: list[CheckpointInfo]
    initialEntryId: str


class ModifiedFile(TypedDict):
    entryId: str | None
    path: str
    #: Why one end did not capture it (`notCaptured`, `recaptured`).
    reason: NotRequired[UntrackedReason | None]
    status: FileStatus
    #: Turn of the earliest tree-recording entry in the range that changed
    #: the file; null when no recorded entry did (e.g. `@working` changes).
    turnIndex: int | None


class ModifiedFilesResult(TypedDict):
    """Used as: result of ``get_modified_files``."""
    files: list[ModifiedFile]
    fromTreeHash: str
    toTreeHash: str


#: "skip": Leave dirty files as they are and report them (default).
#:
#: "overwrite": Write dirty files too (they stay listed in `dirty`).
#:
#: "abort": Change nothing and fail with 1002 when there is any conflict.
OnConflict: TypeAlias = Literal["skip", "overwrite", "abort"]


class NavigateTreeParams(TypedDict, total=False):
    """Used as: params of ``navigate_tree``."""
    label: str | None
    onConflict: OnConflict | None
    preview: bool | None
    skipFiles: bool | None
    summarize: bool | None
    summary: str | None
    targetId: Required[str]


class Untracked(TypedDict):
    path: str
    reason: UntrackedReason


class RestoreResult(TypedDict):
    """Used as: result of ``restore_files``; result of ``undo``."""
    conflicts: list[Conflict]
    #: Files removed.
    deleted: list[str]
    dirty: list[str]
    #: With `git`: HEAD or the index moved (a preview: would move). Absent when false.
    gitMoved: NotRequired[bool]
    #: Paths the target checkpoint held but did not capture, with why: left
    #: as they are (also in `skipped`). Absent when empty.
    notCaptured: NotRequired[list[Untracked]]
    preview: bool
    #: Files written (created or overwritten).
    restored: list[str]
    skipped: list[str]
    unrevertEntryId: str | None
    warnings: list[str]


class NavigateTreeResult(TypedDict):
    """Used as: result of ``navigate_tree``."""
    #: The last entry of the chain appended below the target; null for a
    #: preview.
    newLeafId: str | None
    #: The tip of the branch left (its pre-restore snapshot when one was
    #: taken).
    oldLeafId: str
    restore: RestoreResult | None
    summaryEntryId: NotRequired[str | None]


class Progress(TypedDict):
    """`progress`: at most every 100 ms while a restore, navigation, undo or
    reset writes files (`done` of `total` files), or while a long scan walks
    the project (`operation: "scan"`; `total` is an estimate, never below
    `done`).

    Used as: params of the ``progress`` notification.
    """
    done: int
    #: `"restore"`, `"navigate"`, `"undo"`, `"reset"` or `"scan"`.
    operation: str
    total: int


class RangeParams(TypedDict, total=False):
    """Used as: params of ``get_modified_files``."""
    #: Entry id or "@working". Default: the baseline.
    fromEntryId: str | None
    fromHash: str | None
    #: Entry id or "@working". Default: the leaf.
    toEntryId: str | None
    toHash: str | None


class ResetParams(TypedDict, total=False):
    """Used as: params of ``reset``."""
    onConflict: OnConflict | None
    preview: bool | None


class ResetResult(TypedDict):
    """Used as: result of ``reset``."""
    resetTo: str
    restore: RestoreResult


class RestoreFilesParams(TypedDict, total=False):
    """Used as: params of ``restore_files``."""
    #: Only these files (or directories: everything below).
    files: list[str] | None
    #: Also move git's HEAD (`git reset --soft`) and index (`git update-index`) back to
    #: the target checkpoint's, through the user's `git`. Refused (-32602, nothing
    #: written) during a merge, rebase, cherry-pick or revert, on another branch, or when
    #: a recorded commit or staged blob is gone. Default false: `.git` is never written.
    git: bool | None
    #: Take back only some hunks of these files: the hunks of `get_file_diff` from the
    #: restore's target to `@working`. Without `files`, only these files are touched.
    hunks: list[HunkSelection] | None
    onConflict: OnConflict | None
    preview: bool | None
    #: Default: the leaf (discard changes since the last checkpoint).
    targetEntryId: str | None
    treeHash: str | None


#: "clean": Reverts cleanly (or is already as the revert leaves it).
#:
#: "conflict": Later changes overlap the reverted ones.
#:
#: "skip": Left alone: see `reason`.
RevertStatus: TypeAlias = Literal["clean", "conflict", "skip"]


class RevertFile(TypedDict):
    #: What the revert does to the file: `write`, `delete` or `none`.
    action: str
    conflicts: list[ConflictHunk]
    #: Unified diff from the file now to what the revert writes (with conflict markers
    #: for a conflict); empty when nothing is written or the file is binary.
    diff: str
    path: str
    reason: NotRequired[str | None]
    status: RevertStatus


#: "abort": Write nothing if any file conflicts.
#:
#: "skip": Write the files that merge cleanly; leave the others as they are.
#:
#: "markers": Write the clean files, and conflicting text files with conflict markers (as git
#: does).
RevertOnConflict: TypeAlias = Literal["abort", "skip", "markers"]


class RevertParams(TypedDict, total=False):
    """Used as: params of ``revert``."""
    #: The checkpoint whose changes (against the checkpoint before it) are taken out.
    entryId: Required[str]
    #: Only these files (or directories: everything below).
    files: list[str] | None
    onConflict: RevertOnConflict | None
    preview: bool | None
    #: The last checkpoint of a range starting at `entryId` (a descendant of it): the
    #: changes of the whole range are taken out.
    toEntryId: str | None


class RevertResult(TypedDict):
    """Used as: result of ``revert``."""
    #: Files removed.
    deleted: list[str]
    #: Files that could not be touched at write time (changed under our feet,
    #: unwritable).
    failed: list[Conflict]
    files: list[RevertFile]
    preview: bool
    #: Files written (created or overwritten).
    restored: list[str]
    unrevertEntryId: str | None


SnapshotKind: TypeAlias = Literal["turn", "message", "tool", "manual"]


class ToolInfo(TypedDict, total=False):
    input: JsonValue
    name: Required[str]


class SnapshotParams(TypedDict, total=False):
    """Used as: params of ``snapshot``."""
    force: bool | None
    kind: SnapshotKind | None
    label: str | None
    #: Default: the leaf.
    parentId: str | None
    #: Only these may have changed: re-check just them (files, missing
    #: files, or directories re-checked recursively).
    paths: list[str] | None
    #: The host's own id for this request: a snapshot sent again with the
    #: id of one this session already recorded returns that checkpoint and
    #: records nothing (a host retrying after a lost answer, a hook event
    #: handed over twice). At most 64 characters, no whitespace.
    requestId: str | None
    tool: ToolInfo | None
    turnIndex: int | None


class SnapshotStats(TypedDict):
    bytesHashed: int
    durationMs: int
    filesHashed: int
    filesScanned: int
    untracked: list[Untracked]


class SnapshotResult(TypedDict):
    """Used as: result of ``snapshot``."""
    changed: bool
    diff: DiffLists
    #: The new step-snapshot, or null when nothing changed.
    entryId: str | None
    git: NotRequired[GitInfo | None]
    stats: SnapshotStats
    treeHash: str
    turnIndex: int


class StageFilesParams(TypedDict, total=False):
    """Used as: params of ``stage_files``."""
    paths: Required[list[str]]


class StageFilesResult(TypedDict):
    """Used as: result of ``stage_files``."""
    staged: list[str]


class StatsResult(TypedDict):
    """Used as: result of ``stats``."""
    objects: int
    projectRoot: str
    sessions: int
    snapshots: int
    storeBytes: int
    storeDir: str


class StatusFile(TypedDict):
    additions: int
    baseContent: str | None
    deletions: int
    diff: str | None
    #: As in `get_file_diff`: `diff`, `additions` and `deletions` are not minimal.
    isApproximate: bool
    isBinary: bool
    isTooLarge: bool
    path: str
    #: Why one end did not capture it (`notCaptured`, `recaptured`).
    reason: NotRequired[UntrackedReason | None]
    status: FileStatus


class StatusResult(TypedDict):
    """Used as: result of ``get_status``."""
    approvedEntryId: str | None
    changedFiles: list[StatusFile]
    hasUnapproved: bool
    lastApprovedAt: str | None


class UndoParams(TypedDict, total=False):
    """Used as: params of ``undo``."""
    #: An unrevert-point; default the latest on the current path.
    entryId: str | None
    #: Also put git's HEAD and index back as the undone restore found them (as
    #: `restore_files`' `git`, refused the same way).
    git: bool | None
    onConflict: OnConflict | None
    preview: bool | None


#: What `verify` found wrong.
#:
#: "session": A session file that does not parse.
#:
#: "missingObject": An object a session, a journal or a stat cache names is not stored.
#:
#: "corruptObject": A stored object that does not decode to content with its id (or a
#: tree that does not decode as a tree).
VerifyProblemKind: TypeAlias = Literal["session", "missingObject", "corruptObject"]


class VerifyProblem(TypedDict):
    #: Who needs it (a session file, a stat cache, a tree) and the error.
    detail: str
    kind: VerifyProblemKind
    #: The object id or the file the problem is about.
    subject: str


class VerifyResult(TypedDict):
    """Used as: result of ``verify``."""
    #: Distinct objects read and hashed (reachable ones and every other one stored).
    objects: int
    #: No problem found.
    ok: bool
    problems: list[VerifyProblem]
    sessions: int
    statCaches: int


#: Every protocol method, sorted.
METHOD_NAMES: Final[tuple[str, ...]] = (
    "append_entry",
    "approve",
    "gc",
    "get_file_blame",
    "get_file_diff",
    "get_file_history",
    "get_modified_files",
    "get_status",
    "get_tree",
    "initialize",
    "label",
    "list_checkpoints",
    "navigate_tree",
    "reset",
    "restore_files",
    "revert",
    "shutdown",
    "snapshot",
    "stage_files",
    "stats",
    "undo",
    "verify",
)

#: Every server-to-client notification, sorted.
NOTIFICATION_NAMES: Final[tuple[str, ...]] = (
    "files_changed",
    "progress",
)

#: Error codes the server uses, with their meaning.
ERROR_CODES: Final[Mapping[int, str]] = {
    -32700: "parse error",
    -32602: "invalid params (including bad paths)",
    -32601: "unknown method",
    -32600: "invalid request",
    1001: "unknown entry id or tree hash",
    1002: "restore aborted: conflicts; data.conflicts lists them",
    1003: "store corruption detected (hash mismatch); data.object names it",
    1004: "session locked by another process",
    1005: "I/O error; data.path names the file",
    1006: "a hunk selection no longer matches the file's diff; data.path and data.index name it",
}


class SyncMethods:
    """Typed protocol methods of the synchronous client (mixed into the hand-written
    client, which provides ``_call`` and ``_subscribe``).
    """

    __slots__ = ()

    def _call(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> Any:
        raise NotImplementedError

    def _subscribe(
        self, method: str, callback: Callable[[Any], object]
    ) -> Callable[[], None]:
        raise NotImplementedError

    def append_entry(
        self, params: AppendEntryParams | None = None, *, timeout: float | None = None
    ) -> AppendEntryResult:
        """Record a host conversation entry, with the host's own id.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("AppendEntryResult", self._call("append_entry", params, timeout))

    def approve(
        self, params: ApproveParams | None = None, *, timeout: float | None = None
    ) -> ApproveResult:
        """Lock in the current state as approved.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ApproveResult", self._call("approve", params, timeout))

    def gc(
        self, params: GcParams | None = None, *, timeout: float | None = None
    ) -> GcResult:
        """Prune old sessions (keep-rules) and collect unreferenced objects; dryRun reports only.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("GcResult", self._call("gc", params, timeout))

    def get_file_blame(
        self, params: FileBlameParams, *, timeout: float | None = None
    ) -> FileBlameResult:
        """For each line of a file (at an entry or @working), the checkpoint that introduced it.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("FileBlameResult", self._call("get_file_blame", params, timeout))

    def get_file_diff(
        self, params: FileDiffParams, *, timeout: float | None = None
    ) -> FileDiff | None:
        """Old and new content, hashes and unified diff of one file between two points.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("FileDiff | None", self._call("get_file_diff", params, timeout))

    def get_file_history(
        self, params: FileHistoryParams, *, timeout: float | None = None
    ) -> FileHistoryResult:
        """Every checkpoint that changed one file, oldest first.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("FileHistoryResult", self._call("get_file_history", params, timeout))

    def get_modified_files(
        self, params: RangeParams | None = None, *, timeout: float | None = None
    ) -> ModifiedFilesResult:
        """Files changed between two points, with the entry that first changed each.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ModifiedFilesResult", self._call("get_modified_files", params, timeout))

    def get_status(self, *, timeout: float | None = None) -> StatusResult:
        """Working-directory changes since the last approval (or the baseline).

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("StatusResult", self._call("get_status", None, timeout))

    def get_tree(self, *, timeout: float | None = None) -> GetTreeResult:
        """All entries of the session and the leaf.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("GetTreeResult", self._call("get_tree", None, timeout))

    def initialize(
        self, params: InitializeParams | None = None, *, timeout: float | None = None
    ) -> InitializeResult:
        """Open or resume a session; take the baseline snapshot.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("InitializeResult", self._call("initialize", params, timeout))

    def label(
        self, params: LabelParams, *, timeout: float | None = None
    ) -> EntryIdResult:
        """Name or annotate any entry; a null label clears it.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("EntryIdResult", self._call("label", params, timeout))

    def list_checkpoints(
        self, params: ListCheckpointsParams | None = None, *, timeout: float | None = None
    ) -> ListCheckpointsResult:
        """Tree-recording entries with kinds, labels and counts; query searches labels and notes.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ListCheckpointsResult", self._call("list_checkpoints", params, timeout))

    def navigate_tree(
        self, params: NavigateTreeParams, *, timeout: float | None = None
    ) -> NavigateTreeResult:
        """Move the leaf to an entry and (unless skipFiles) restore its files.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("NavigateTreeResult", self._call("navigate_tree", params, timeout))

    def reset(
        self, params: ResetParams | None = None, *, timeout: float | None = None
    ) -> ResetResult:
        """Restore the last approved state (or the baseline); undoable.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ResetResult", self._call("reset", params, timeout))

    def restore_files(
        self, params: RestoreFilesParams | None = None, *, timeout: float | None = None
    ) -> RestoreResult:
        """Restore all or selected files to a checkpoint; preview returns the plan only.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("RestoreResult", self._call("restore_files", params, timeout))

    def revert(
        self, params: RevertParams, *, timeout: float | None = None
    ) -> RevertResult:
        """Take one checkpoint's changes (or a range's) out of the working directory, keeping later ones: a three-way merge per file; preview returns the plan only; undoable.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("RevertResult", self._call("revert", params, timeout))

    def shutdown(self, *, timeout: float | None = None) -> EmptyResult:
        """Flush, release locks, exit after replying.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("EmptyResult", self._call("shutdown", None, timeout))

    def snapshot(
        self, params: SnapshotParams | None = None, *, timeout: float | None = None
    ) -> SnapshotResult:
        """Checkpoint the working directory now (turn end, before a tool, manual).

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("SnapshotResult", self._call("snapshot", params, timeout))

    def stage_files(
        self, params: StageFilesParams, *, timeout: float | None = None
    ) -> StageFilesResult:
        """Force-include paths in every later snapshot while they exist, even if ignored.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("StageFilesResult", self._call("stage_files", params, timeout))

    def stats(self, *, timeout: float | None = None) -> StatsResult:
        """Store size, object count, sessions and snapshots.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("StatsResult", self._call("stats", None, timeout))

    def undo(
        self, params: UndoParams | None = None, *, timeout: float | None = None
    ) -> RestoreResult:
        """Revert the last restore/navigate/reset/revert/undo (an undo is itself undoable).

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("RestoreResult", self._call("undo", params, timeout))

    def verify(self, *, timeout: float | None = None) -> VerifyResult:
        """Read and hash every session's trees and blobs, every object stat caches vouch for and every stored object; report problems, repair nothing.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("VerifyResult", self._call("verify", None, timeout))

    def on_files_changed(
        self, callback: Callable[[FilesChanged], object]
    ) -> Callable[[], None]:
        """Sent once per operation that changed the working directory, before its response.

        Register ``callback`` for this notification; it runs before the response of
        the call that caused it is delivered. Returns a function that unregisters it.
        """
        return self._subscribe("files_changed", callback)

    def on_progress(
        self, callback: Callable[[Progress], object]
    ) -> Callable[[], None]:
        """At most every 100 ms while a restore, navigation, undo or reset writes files.

        Register ``callback`` for this notification; it runs before the response of
        the call that caused it is delivered. Returns a function that unregisters it.
        """
        return self._subscribe("progress", callback)


class AsyncMethods:
    """Typed protocol methods of the asyncio client (mixed into the hand-written
    client, which provides ``_call`` and ``_subscribe``).
    """

    __slots__ = ()

    async def _call(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> Any:
        raise NotImplementedError

    def _subscribe(
        self, method: str, callback: Callable[[Any], object]
    ) -> Callable[[], None]:
        raise NotImplementedError

    async def append_entry(
        self, params: AppendEntryParams | None = None, *, timeout: float | None = None
    ) -> AppendEntryResult:
        """Record a host conversation entry, with the host's own id.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("AppendEntryResult", await self._call("append_entry", params, timeout))

    async def approve(
        self, params: ApproveParams | None = None, *, timeout: float | None = None
    ) -> ApproveResult:
        """Lock in the current state as approved.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ApproveResult", await self._call("approve", params, timeout))

    async def gc(
        self, params: GcParams | None = None, *, timeout: float | None = None
    ) -> GcResult:
        """Prune old sessions (keep-rules) and collect unreferenced objects; dryRun reports only.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("GcResult", await self._call("gc", params, timeout))

    async def get_file_blame(
        self, params: FileBlameParams, *, timeout: float | None = None
    ) -> FileBlameResult:
        """For each line of a file (at an entry or @working), the checkpoint that introduced it.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("FileBlameResult", await self._call("get_file_blame", params, timeout))

    async def get_file_diff(
        self, params: FileDiffParams, *, timeout: float | None = None
    ) -> FileDiff | None:
        """Old and new content, hashes and unified diff of one file between two points.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("FileDiff | None", await self._call("get_file_diff", params, timeout))

    async def get_file_history(
        self, params: FileHistoryParams, *, timeout: float | None = None
    ) -> FileHistoryResult:
        """Every checkpoint that changed one file, oldest first.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("FileHistoryResult", await self._call("get_file_history", params, timeout))

    async def get_modified_files(
        self, params: RangeParams | None = None, *, timeout: float | None = None
    ) -> ModifiedFilesResult:
        """Files changed between two points, with the entry that first changed each.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ModifiedFilesResult", await self._call("get_modified_files", params, timeout))

    async def get_status(self, *, timeout: float | None = None) -> StatusResult:
        """Working-directory changes since the last approval (or the baseline).

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("StatusResult", await self._call("get_status", None, timeout))

    async def get_tree(self, *, timeout: float | None = None) -> GetTreeResult:
        """All entries of the session and the leaf.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("GetTreeResult", await self._call("get_tree", None, timeout))

    async def initialize(
        self, params: InitializeParams | None = None, *, timeout: float | None = None
    ) -> InitializeResult:
        """Open or resume a session; take the baseline snapshot.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("InitializeResult", await self._call("initialize", params, timeout))

    async def label(
        self, params: LabelParams, *, timeout: float | None = None
    ) -> EntryIdResult:
        """Name or annotate any entry; a null label clears it.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("EntryIdResult", await self._call("label", params, timeout))

    async def list_checkpoints(
        self, params: ListCheckpointsParams | None = None, *, timeout: float | None = None
    ) -> ListCheckpointsResult:
        """Tree-recording entries with kinds, labels and counts; query searches labels and notes.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ListCheckpointsResult", await self._call("list_checkpoints", params, timeout))

    async def navigate_tree(
        self, params: NavigateTreeParams, *, timeout: float | None = None
    ) -> NavigateTreeResult:
        """Move the leaf to an entry and (unless skipFiles) restore its files.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("NavigateTreeResult", await self._call("navigate_tree", params, timeout))

    async def reset(
        self, params: ResetParams | None = None, *, timeout: float | None = None
    ) -> ResetResult:
        """Restore the last approved state (or the baseline); undoable.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("ResetResult", await self._call("reset", params, timeout))

    async def restore_files(
        self, params: RestoreFilesParams | None = None, *, timeout: float | None = None
    ) -> RestoreResult:
        """Restore all or selected files to a checkpoint; preview returns the plan only.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("RestoreResult", await self._call("restore_files", params, timeout))

    async def revert(
        self, params: RevertParams, *, timeout: float | None = None
    ) -> RevertResult:
        """Take one checkpoint's changes (or a range's) out of the working directory, keeping later ones: a three-way merge per file; preview returns the plan only; undoable.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("RevertResult", await self._call("revert", params, timeout))

    async def shutdown(self, *, timeout: float | None = None) -> EmptyResult:
        """Flush, release locks, exit after replying.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("EmptyResult", await self._call("shutdown", None, timeout))

    async def snapshot(
        self, params: SnapshotParams | None = None, *, timeout: float | None = None
    ) -> SnapshotResult:
        """Checkpoint the working directory now (turn end, before a tool, manual).

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("SnapshotResult", await self._call("snapshot", params, timeout))

    async def stage_files(
        self, params: StageFilesParams, *, timeout: float | None = None
    ) -> StageFilesResult:
        """Force-include paths in every later snapshot while they exist, even if ignored.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("StageFilesResult", await self._call("stage_files", params, timeout))

    async def stats(self, *, timeout: float | None = None) -> StatsResult:
        """Store size, object count, sessions and snapshots.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("StatsResult", await self._call("stats", None, timeout))

    async def undo(
        self, params: UndoParams | None = None, *, timeout: float | None = None
    ) -> RestoreResult:
        """Revert the last restore/navigate/reset/revert/undo (an undo is itself undoable).

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("RestoreResult", await self._call("undo", params, timeout))

    async def verify(self, *, timeout: float | None = None) -> VerifyResult:
        """Read and hash every session's trees and blobs, every object stat caches vouch for and every stored object; report problems, repair nothing.

        ``timeout`` (seconds) overrides the client's default for this call.
        """
        return cast("VerifyResult", await self._call("verify", None, timeout))

    def on_files_changed(
        self, callback: Callable[[FilesChanged], Awaitable[object] | object]
    ) -> Callable[[], None]:
        """Sent once per operation that changed the working directory, before its response.

        Register ``callback`` for this notification; it runs before the response of
        the call that caused it is delivered. Returns a function that unregisters it.
        A callback returning an awaitable is awaited before reading on.
        """
        return self._subscribe("files_changed", callback)

    def on_progress(
        self, callback: Callable[[Progress], Awaitable[object] | object]
    ) -> Callable[[], None]:
        """At most every 100 ms while a restore, navigation, undo or reset writes files.

        Register ``callback`` for this notification; it runs before the response of
        the call that caused it is delivered. Returns a function that unregisters it.
        A callback returning an awaitable is awaited before reading on.
        """
        return self._subscribe("progress", callback)


__all__ = [
    "AppendEntryParams",
    "AppendEntryResult",
    "ApproveParams",
    "ApproveResult",
    "AsyncMethods",
    "BaselineInfo",
    "BlameLine",
    "ChangeReason",
    "CheckpointInfo",
    "Conflict",
    "ConflictHunk",
    "ConflictReason",
    "ContentEncoding",
    "DiffHunk",
    "DiffLists",
    "ERROR_CODES",
    "EmptyResult",
    "EntryIdResult",
    "FileBlameParams",
    "FileBlameResult",
    "FileDiff",
    "FileDiffParams",
    "FileHistoryParams",
    "FileHistoryResult",
    "FileStatus",
    "FileVersion",
    "FilesChanged",
    "GcParams",
    "GcResult",
    "GetTreeResult",
    "GitInfo",
    "HostEntryType",
    "HunkRef",
    "HunkSelection",
    "InitializeOptions",
    "InitializeParams",
    "InitializeResult",
    "InterruptedRestore",
    "JsonValue",
    "LabelParams",
    "ListCheckpointsParams",
    "ListCheckpointsResult",
    "METHOD_NAMES",
    "ModifiedFile",
    "ModifiedFilesResult",
    "NOTIFICATION_NAMES",
    "NavigateTreeParams",
    "NavigateTreeResult",
    "OnConflict",
    "PROTOCOL_VERSION",
    "Progress",
    "RangeParams",
    "Recovered",
    "ResetParams",
    "ResetResult",
    "RestoreFilesParams",
    "RestoreResult",
    "RevertFile",
    "RevertOnConflict",
    "RevertParams",
    "RevertResult",
    "RevertStatus",
    "Scope",
    "SnapshotKind",
    "SnapshotParams",
    "SnapshotResult",
    "SnapshotStats",
    "StageFilesParams",
    "StageFilesResult",
    "StatsResult",
    "StatusFile",
    "StatusResult",
    "SyncMethods",
    "ToolInfo",
    "TreeEntryInfo",
    "UndoParams",
    "Untracked",
    "UntrackedReason",
    "VerifyProblem",
    "VerifyProblemKind",
    "VerifyResult",
]
