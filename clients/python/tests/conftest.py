"""Fixtures: the rewind binary, a temporary project and store, a started client.

The binary comes from ``$REWIND_BIN`` when set; otherwise target/release/rewind, else
target/debug/rewind (``$CARGO_TARGET_DIR`` is honoured); if neither exists it is built
with ``cargo build --release``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_client import InitializeParams, RewindClient

CLIENTS_DIR = Path(__file__).resolve().parents[2]
REPO_ROOT = CLIENTS_DIR.parent


def _locate_binary() -> Path:
    env = os.environ.get("REWIND_BIN")
    if env:
        path = Path(env)
        if not path.is_file():
            raise pytest.UsageError(f"REWIND_BIN={env} does not exist")
        return path.resolve()
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO_ROOT / "target")
    if not target.is_absolute():
        target = REPO_ROOT / target
    release = target / "release" / "rewind"
    debug = target / "debug" / "rewind"
    for candidate in (release, debug):
        if candidate.is_file():
            return candidate
    cargo = shutil.which("cargo")
    if cargo is None:
        raise pytest.UsageError(
            "no rewind binary: set REWIND_BIN, or build it (cargo build --release)"
        )
    subprocess.run([cargo, "build", "--release", "--bin", "rewind"], cwd=REPO_ROOT, check=True)
    return release


@pytest.fixture(scope="session")
def rewind_bin() -> Path:
    return _locate_binary()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every store the tests create under tmp_path."""
    monkeypatch.setenv("REWIND_HOME", str(tmp_path / "rewind-home"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = (tmp_path / "project").resolve()
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    (root / "src" / "main.py").write_text("print('hello')\n", encoding="utf-8")
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return root


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return (tmp_path / "store").resolve()


@pytest.fixture
def init_params(project: Path, store: Path) -> InitializeParams:
    return {"cwd": str(project), "storeDir": str(store), "options": {"fsync": False}}


@pytest.fixture
def client(rewind_bin: Path, init_params: InitializeParams) -> Iterator[RewindClient]:
    c = RewindClient(rewind_bin, timeout=60)
    try:
        c.initialize(init_params)
        yield c
    finally:
        assert c.close() == 0

