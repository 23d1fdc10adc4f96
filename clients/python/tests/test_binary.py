"""How the client finds the rewind binary when none is given (``default_binary``)."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest

from rewind_client import default_binary, packaged_binary


def executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_rewind_bin_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REWIND_BIN", "/somewhere/rewind")
    monkeypatch.setenv("PATH", str(tmp_path))
    executable(tmp_path / "rewind")
    assert default_binary() == "/somewhere/rewind"


def test_path_before_packaged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REWIND_BIN", raising=False)
    on_path, scripts = tmp_path / "path", tmp_path / "scripts"
    on_path.mkdir()
    scripts.mkdir()
    executable(on_path / "rewind")
    executable(scripts / "rewind")
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(scripts))
    assert default_binary() == "rewind"


def test_packaged_when_not_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REWIND_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(scripts))
    assert packaged_binary() is None
    assert default_binary() == "rewind"  # nothing anywhere: the spawn error names it
    exe = executable(scripts / "rewind")
    assert packaged_binary() == os.fspath(exe)
    assert default_binary() == os.fspath(exe)
