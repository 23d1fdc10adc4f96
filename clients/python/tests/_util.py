"""Helpers shared by the test modules."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Content exercising the framing: line/paragraph separators, multi-byte characters,
#: CRLF and a lone CR — all must round-trip byte for byte.
TRICKY_TEXT = (
    "plain line\n"
    "line\u2028separator and paragraph\u2029separator\n"
    "multi-byte: é ß 日本語 🎉 \U0001f600\n"
    "crlf line\r\n"
    "lone\rcarriage return\n"
    'quotes " and backslash \\ and tab \t\n'
)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def big_text(seed: str, megabytes: float) -> str:
    """Distinct numbered lines adding up to about ``megabytes`` MiB."""
    line_count = int(megabytes * 1024 * 1024 / 64)
    return "".join(f"{seed} {i:08d} {'x' * 40}\u2028é\n" for i in range(line_count))


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """SIGSTOP the process for the duration (it reads and answers nothing)."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
