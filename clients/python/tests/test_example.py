"""The example agent host (clients/examples/python/host.py), run end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import CLIENTS_DIR

HOST = CLIENTS_DIR / "examples" / "python" / "host.py"


def run_host(rewind_bin: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "REWIND_BIN": str(rewind_bin)}
    done = subprocess.run(
        [sys.executable, str(HOST), *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_demo_script_on_a_project(rewind_bin: Path, project: Path, store: Path) -> None:
    out = run_host(rewind_bin, "--project", str(project), "--store", str(store))
    # approve, then reset / undo / reset, then restore to before message 3.
    assert "[files_changed] reset: wrote ['notes.md'], deleted ['scratch.txt']" in out
    assert "[files_changed] undo: wrote ['notes.md', 'scratch.txt'], deleted []" in out
    assert "[files_changed] restore: wrote ['notes.md'], deleted ['plan.md']" in out
    assert "unapproved changes: modified notes.md, added scratch.txt" in out
    assert "error" not in out
    assert out.rstrip().endswith("rewind exited with 0")
    assert (project / "notes.md").read_text(encoding="utf-8") == "first draft\n"
    assert not (project / "scratch.txt").exists()
    assert not (project / "plan.md").exists()
    assert (project / "README.md").read_text(encoding="utf-8") == "# demo\n"  # untouched


def test_script_from_stdin(rewind_bin: Path, project: Path, store: Path) -> None:
    script = "\n".join(
        [
            "write docs/a.md: hello \u2028 wörld",
            "write b.txt: bye",
            "/restore 2",
            "/rewind 1",
            "/undo",
            "/restore 7",
        ]
    )
    out = run_host(
        rewind_bin, "--project", str(project), "--store", str(store), "--script", "-",
        stdin=script,
    )
    assert "[files_changed] restore: wrote [], deleted ['b.txt']" in out
    assert "[files_changed] navigate: wrote [], deleted ['docs/a.md']" in out
    assert "[files_changed] undo: wrote ['docs/a.md'], deleted []" in out
    assert "error: no user message #7" in out
    assert (project / "docs" / "a.md").read_text(encoding="utf-8") == "hello \u2028 wörld\n"
    assert not (project / "b.txt").exists()


def test_runs_with_no_arguments(rewind_bin: Path) -> None:
    out = run_host(rewind_bin)
    assert out.startswith("demo project: ")
    assert "rewind exited with 0" in out
