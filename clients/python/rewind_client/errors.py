"""Exceptions raised by the rewind clients.

``RewindException`` is the root of everything the clients raise on purpose:

* ``RewindError`` — the server answered with a JSON-RPC error; carries ``code``,
  ``message`` and ``data``. Known codes map to subclasses (``UnknownEntryError`` for 1001,
  ``RestoreAbortedError`` for 1002, ...), so ``except UnknownEntryError`` works, and so does
  ``except RewindError as e: if e.code == 1001``.
* ``RewindTimeout`` — no response within the call's timeout (also a ``TimeoutError``).
* ``RewindConnectionError`` — the sidecar exited, or the client was closed, before the
  response arrived (also a ``ConnectionError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

from ._generated import ERROR_CODES, Conflict


class RewindException(Exception):
    """Base class of every exception the rewind clients raise."""


class RewindError(RewindException):
    """The server answered a request with an error object."""

    #: The code this subclass stands for (None on ``RewindError`` itself).
    code_value: ClassVar[int | None] = None
    _by_code: ClassVar[dict[int, type[RewindError]]] = {}

    def __init__(
        self, code: int, message: str, data: Any = None, *, method: str | None = None
    ) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data
        self.method = method

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.code_value is not None:
            RewindError._by_code[cls.code_value] = cls

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, data={self.data!r})"

    @property
    def meaning(self) -> str | None:
        """What the protocol says the code means (from the schema's error table)."""
        return ERROR_CODES.get(self.code)

    @staticmethod
    def from_wire(error: object, method: str | None = None) -> RewindError:
        """Build the most specific exception for a JSON-RPC error object."""
        if not isinstance(error, Mapping):
            return RewindError(-32603, f"malformed error object: {error!r}", None, method=method)
        raw_code = error.get("code")
        code = raw_code if isinstance(raw_code, int) else -32603
        message = error.get("message")
        if not isinstance(message, str):
            message = ERROR_CODES.get(code, "error")
        cls = RewindError._by_code.get(code, RewindError)
        return cls(code, message, error.get("data"), method=method)


class ParseError(RewindError):
    """-32700: the server could not parse a line."""

    code_value = -32700


class InvalidRequestError(RewindError):
    """-32600: not a valid request."""

    code_value = -32600


class MethodNotFoundError(RewindError):
    """-32601: unknown method."""

    code_value = -32601


class InvalidParamsError(RewindError):
    """-32602: invalid params, including bad project paths (absolute, ``..``, outside)."""

    code_value = -32602


class UnknownEntryError(RewindError):
    """1001: unknown entry id or tree hash (also: ``undo`` with nothing to undo)."""

    code_value = 1001


class RestoreAbortedError(RewindError):
    """1002: a restore with ``onConflict: "abort"`` met conflicts; nothing was changed."""

    code_value = 1002

    @property
    def conflicts(self) -> list[Conflict]:
        """``data["conflicts"]``: the files that blocked the restore."""
        if isinstance(self.data, Mapping):
            found = self.data.get("conflicts")
            if isinstance(found, list):
                return cast("list[Conflict]", found)
        return []


class StoreCorruptionError(RewindError):
    """1003: store corruption detected (hash mismatch); ``data["object"]`` names it."""

    code_value = 1003

    @property
    def object_name(self) -> str | None:
        """``data["object"]``: the corrupt object."""
        value = self.data.get("object") if isinstance(self.data, Mapping) else None
        return value if isinstance(value, str) else None


class SessionLockedError(RewindError):
    """1004: the session file is held by another sidecar."""

    code_value = 1004


class RewindIOError(RewindError):
    """1005: I/O error; ``data["path"]`` names the file."""

    code_value = 1005

    @property
    def path(self) -> str | None:
        value = self.data.get("path") if isinstance(self.data, Mapping) else None
        return value if isinstance(value, str) else None


class StaleHunkError(RewindError):
    """1006: a ``restore_files`` hunk selection no longer matches the file's diff (the file
    changed since ``get_file_diff``); ``data["path"]`` and ``data["index"]`` name it."""

    code_value = 1006

    @property
    def path(self) -> str | None:
        value = self.data.get("path") if isinstance(self.data, Mapping) else None
        return value if isinstance(value, str) else None


class RewindTimeout(RewindException, TimeoutError):
    """No response within the call's timeout.

    The request may still be carried out by the sidecar (mutations are applied in order);
    its late response is dropped.
    """

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"{method}: no response within {timeout:g} s")
        self.method = method
        self.timeout = timeout


class RewindConnectionError(RewindException, ConnectionError):
    """The sidecar is gone (exited, killed, or the client was closed)."""

    def __init__(
        self, message: str, *, returncode: int | None = None, stderr: str = ""
    ) -> None:
        full = message
        if stderr.strip():
            full += "\n--- rewind stderr (last lines) ---\n" + stderr.rstrip()
        super().__init__(full)
        self.returncode = returncode
        self.stderr = stderr


__all__ = [
    "InvalidParamsError",
    "InvalidRequestError",
    "MethodNotFoundError",
    "ParseError",
    "RestoreAbortedError",
    "RewindConnectionError",
    "RewindError",
    "RewindException",
    "RewindIOError",
    "RewindTimeout",
    "SessionLockedError",
    "StaleHunkError",
    "StoreCorruptionError",
    "UnknownEntryError",
]
