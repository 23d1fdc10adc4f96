"""Framing and dispatch, against a scripted fake sidecar (exact control of the bytes)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from rewind_client import (
    AsyncRewindClient,
    LineSplitter,
    Progress,
    RewindClient,
    RewindConnectionError,
    RewindError,
)

# Answers "echo" with: a progress notification ending in \r\n, a blank line, a line that is
# not JSON, a response to an id nobody asked for, a custom error for "fail", then the echo
# itself (U+2028/U+2029 raw in the JSON text) ending in \r\n. "last" is answered without a
# trailing newline, and the process exits.
FAKE_SIDECAR = r"""
import json, sys
out = sys.stdout.buffer
def send(obj, end=b"\n"):
    out.write(json.dumps(obj, ensure_ascii=False).encode("utf-8") + end)
for raw in sys.stdin.buffer:
    req = json.loads(raw)
    rid, method = req["id"], req["method"]
    if method == "echo":
        send({"jsonrpc": "2.0", "method": "progress",
              "params": {"operation": "scan", "done": 1, "total": 2}}, b"\r\n")
        out.write(b"\n")
        out.write(b"this is not json\n")
        send({"jsonrpc": "2.0", "id": 424242, "result": {}})
        send({"jsonrpc": "2.0", "id": rid, "result": req.get("params")}, b"\r\n")
    elif method == "fail":
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": 4242, "message": "custom", "data": {"why": "test"}}})
    elif method == "last":
        send({"jsonrpc": "2.0", "id": rid, "result": {"final": "no newline\u2028"}}, b"")
        out.flush()
        sys.exit(0)
    out.flush()
"""

TEXT = "a\u2028b\u2029c\r\nd \u00e9 \u65e5\u672c \U0001f389 \\ \" end"


def test_line_splitter_splits_on_newline_only() -> None:
    splitter = LineSplitter()
    data = "one\u2028still one\rstill\u2029 one\nläst\n{\"x\":1}".encode("utf-8")
    lines: list[bytes] = []
    for i in range(len(data)):  # byte by byte: multi-byte characters straddle chunks
        lines += splitter.feed(data[i : i + 1])
    assert [line.decode("utf-8") for line in lines] == [
        "one\u2028still one\rstill\u2029 one",
        "läst",
    ]
    assert splitter.finish() == b'{"x":1}'
    assert splitter.finish() is None
    assert splitter.feed(b"a\n\nb\n") == [b"a", b"", b"b"]


def test_sync_framing() -> None:
    progress: list[Progress] = []
    with RewindClient(command=[sys.executable, "-c", FAKE_SIDECAR], timeout=30) as client:
        client.on_progress(progress.append)
        params: dict[str, Any] = {"text": TEXT, "nested": [1, None, True, {"k": "\u2029"}]}
        assert client.request("echo", params) == params
        assert progress == [{"operation": "scan", "done": 1, "total": 2}]
        with pytest.raises(RewindError) as failed:
            client.request("fail")
        assert (failed.value.code, failed.value.message, failed.value.data) == (
            4242, "custom", {"why": "test"}
        )
        assert type(failed.value) is RewindError  # no subclass for an unknown code
        assert client.request("last") == {"final": "no newline\u2028"}
        with pytest.raises(RewindConnectionError):
            client.request("echo")
    assert client.returncode == 0


def test_async_framing() -> None:
    async def main() -> None:
        progress: list[Progress] = []
        async with AsyncRewindClient(
            command=[sys.executable, "-c", FAKE_SIDECAR], timeout=30
        ) as client:
            client.on_progress(progress.append)
            params: dict[str, Any] = {"text": TEXT}
            assert await client.request("echo", params) == params
            assert progress == [{"operation": "scan", "done": 1, "total": 2}]
            with pytest.raises(RewindError) as failed:
                await client.request("fail")
            assert failed.value.code == 4242
            assert await client.request("last") == {"final": "no newline\u2028"}
            with pytest.raises(RewindConnectionError):
                await client.request("echo")
        assert client.returncode == 0

    asyncio.run(main())


def test_stderr_tail_in_connection_errors() -> None:
    script = "import sys; sys.stderr.write('boom: it broke\\n'); sys.exit(3)"
    client = RewindClient(command=[sys.executable, "-c", script])
    with pytest.raises(RewindConnectionError) as died:
        client.request("anything", timeout=30)
    assert died.value.returncode == 3
    assert "boom: it broke" in str(died.value)
    assert client.close() == 3
