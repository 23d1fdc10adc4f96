"""Framing, encoding and process-spawning helpers shared by both clients."""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sys
import sysconfig
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeAlias

from .errors import RewindConnectionError, RewindError

log = logging.getLogger("rewind_client")

StrPath: TypeAlias = "str | os.PathLike[str]"
StderrMode: TypeAlias = Literal["capture", "inherit", "discard"]
NotificationCallback: TypeAlias = Callable[[Any], object]
AnyNotificationCallback: TypeAlias = Callable[[str, Any], object]

#: asyncio StreamReader limit for the sidecar's pipes. The clients split lines themselves
#: (so no line length limit applies), but asyncio's default 64 KiB would also throttle the
#: transport; responses carrying whole files can be tens of MiB.
STREAM_LIMIT = 256 * 1024 * 1024
#: How much to read from the pipe at a time.
CHUNK_SIZE = 1 << 16
#: Lines of the sidecar's stderr kept for error messages (stderr="capture").
STDERR_TAIL_LINES = 200

_SKIP = object()


class LineSplitter:
    """pi's strict JSONL framing: records end at b"\\n" only.

    Nothing else is a separator: U+2028/U+2029 and lone b"\\r" are ordinary characters
    (never use ``str.splitlines``). The caller strips one trailing b"\\r" per record.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no b"\n"

    def feed(self, data: bytes) -> list[bytes]:
        """Add bytes; return the complete lines they finish (without the b"\\n")."""
        self._buf += data
        lines: list[bytes] = []
        start = 0
        pos = self._scanned
        while True:
            nl = self._buf.find(b"\n", pos)
            if nl < 0:
                break
            lines.append(bytes(self._buf[start:nl]))
            start = pos = nl + 1
        if start:
            del self._buf[:start]
        self._scanned = len(self._buf)
        return lines

    def finish(self) -> bytes | None:
        """At EOF: the final line that had no b"\\n", if any."""
        rest = bytes(self._buf)
        self._buf.clear()
        self._scanned = 0
        return rest or None


def decode_line(line: bytes) -> object:
    """Parse one record; ``_SKIP`` for blank or unparsable lines (logged)."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line.strip():
        return _SKIP
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        log.warning("rewind sent a line that is not JSON: %r", line[:200])
        return _SKIP


def is_skip(value: object) -> bool:
    return value is _SKIP


def encode_request(request_id: int, method: str, params: Mapping[str, Any] | None) -> bytes:
    """One JSON-RPC request as a compact JSON line (UTF-8, U+2028/U+2029 left raw)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def effective_timeout(default: float | None, per_call: float | None) -> float | None:
    """The call's timeout in seconds: ``per_call``, else the client default; None (or
    ``math.inf``) waits indefinitely."""
    value = default if per_call is None else per_call
    if value is not None and math.isinf(value):
        return None
    if value is not None and value < 0:
        raise ValueError(f"timeout must not be negative, got {value}")
    return value


def packaged_binary() -> str | None:
    """The ``rewind`` the ``rewind-sidecar`` wheel installed next to this environment's
    scripts (``sysconfig.get_path("scripts")``, i.e. the venv's ``bin/``), if it is there."""
    scripts = sysconfig.get_path("scripts")
    if not scripts:
        return None
    exe = "rewind.exe" if sys.platform == "win32" else "rewind"
    candidate = os.path.join(scripts, exe)
    return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def default_binary() -> str:
    """The binary to run when none is given: ``$REWIND_BIN`` if set, else ``rewind`` on
    ``PATH``, else the one installed with this package (the environment's scripts
    directory, which is not on ``PATH`` when the venv is not activated), else ``rewind``
    (so starting it fails with ``FileNotFoundError`` naming it)."""
    env = os.environ.get("REWIND_BIN")
    if env:
        return env
    if shutil.which("rewind") is not None:
        return "rewind"
    return packaged_binary() or "rewind"


def build_command(
    binary: StrPath | None,
    *,
    cwd: StrPath | None = None,
    store: StrPath | None = None,
    session: StrPath | None = None,
    args: Sequence[str] = (),
    command: Sequence[str] | None = None,
) -> list[str]:
    """The argv that runs the sidecar: ``binary serve [--cwd] [--store] [--session] *args``.

    ``command`` replaces all of it (e.g. to run the sidecar through a wrapper).
    """
    if command is not None:
        if binary is not None or cwd is not None or store is not None or session is not None:
            raise ValueError("command= replaces binary/cwd/store/session; pass one or the other")
        return [os.fspath(part) for part in command]
    argv = [os.fspath(binary) if binary is not None else default_binary(), "serve"]
    if cwd is not None:
        argv += ["--cwd", os.fspath(cwd)]
    if store is not None:
        argv += ["--store", os.fspath(store)]
    if session is not None:
        argv += ["--session", os.fspath(session)]
    argv += list(args)
    return argv


class Correlator:
    """What both clients share: id allocation, subscriptions, message classification."""

    def __init__(self) -> None:
        self._next_id = 0
        self._subscribers: dict[str, tuple[NotificationCallback, ...]] = {}
        self._any_subscribers: tuple[AnyNotificationCallback, ...] = ()
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def subscribe(self, method: str, callback: NotificationCallback) -> Callable[[], None]:
        self._subscribers[method] = (*self._subscribers.get(method, ()), callback)

        def unsubscribe() -> None:
            current = list(self._subscribers.get(method, ()))
            if callback in current:
                current.remove(callback)
                self._subscribers[method] = tuple(current)

        return unsubscribe

    def subscribe_any(self, callback: AnyNotificationCallback) -> Callable[[], None]:
        self._any_subscribers = (*self._any_subscribers, callback)

        def unsubscribe() -> None:
            current = list(self._any_subscribers)
            if callback in current:
                current.remove(callback)
                self._any_subscribers = tuple(current)

        return unsubscribe

    def callbacks_for(self, method: str, params: Any) -> list[Callable[[], object]]:
        """The calls to make for one notification, in registration order."""
        calls: list[Callable[[], object]] = [
            partial(cb, params) for cb in self._subscribers.get(method, ())
        ]
        calls += [partial(cb, method, params) for cb in self._any_subscribers]
        return calls

    def stderr_tail(self) -> str:
        return "\n".join(self.stderr_lines)

    def feed_stderr(self, splitter: LineSplitter, chunk: bytes) -> None:
        for raw in splitter.feed(chunk):
            self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\r"))

    def exited_error(self, returncode: int | None, closing: bool) -> RewindConnectionError:
        if closing:
            what = "rewind client closed"
        elif returncode is None:
            what = "rewind closed its output"
        else:
            what = f"rewind exited with code {returncode}"
        return RewindConnectionError(what, returncode=returncode, stderr=self.stderr_tail())


def classify(message: object) -> tuple[str, Any, Any]:
    """("response", id, message) | ("notification", method, params) | ("other", None, message)."""
    if isinstance(message, dict):
        if "method" in message and "id" not in message:
            return ("notification", message.get("method"), message.get("params"))
        if "id" in message and ("result" in message or "error" in message):
            return ("response", message.get("id"), message)
    return ("other", None, message)


def response_value(message: Mapping[str, Any], method: str) -> tuple[bool, Any]:
    """(True, result) or (False, RewindError) for a response message."""
    if "error" in message and message["error"] is not None:
        return (False, RewindError.from_wire(message["error"], method))
    return (True, message.get("result"))
