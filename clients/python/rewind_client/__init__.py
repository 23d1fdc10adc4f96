"""Python client for the rewind checkpoint/rollback sidecar.

    from rewind_client import RewindClient

    with RewindClient(cwd="/path/to/project") as rw:
        rw.initialize()
        rw.snapshot({"kind": "turn"})

``AsyncRewindClient`` is the asyncio twin. The typed models (``SnapshotParams``,
``RestoreResult``, ...) are TypedDicts generated from schema/rewind-protocol.json: plain
dicts at runtime, with the exact camelCase keys of the wire.
"""

from ._generated import *  # noqa: F403 (the generated models; see _generated.__all__)
from ._generated import __all__ as _generated_all
from ._wire import STREAM_LIMIT, LineSplitter, build_command, default_binary, packaged_binary
from .aio import AsyncRewindClient
from .client import RewindClient
from .paths import decode_path, encode_path
from .errors import (
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    RestoreAbortedError,
    RewindConnectionError,
    RewindError,
    RewindException,
    RewindIOError,
    StaleHunkError,
    RewindTimeout,
    SessionLockedError,
    StoreCorruptionError,
    UnknownEntryError,
)

__version__ = "0.1.0"

__all__ = [
    *_generated_all,
    "AsyncRewindClient",
    "decode_path",
    "encode_path",
    "InvalidParamsError",
    "InvalidRequestError",
    "LineSplitter",
    "MethodNotFoundError",
    "ParseError",
    "RestoreAbortedError",
    "RewindClient",
    "RewindConnectionError",
    "RewindError",
    "RewindException",
    "RewindIOError",
    "StaleHunkError",
    "RewindTimeout",
    "STREAM_LIMIT",
    "SessionLockedError",
    "StoreCorruptionError",
    "UnknownEntryError",
    "build_command",
    "default_binary",
    "packaged_binary",
]
