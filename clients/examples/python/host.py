#!/usr/bin/env python3
"""A minimal agent host driving the rewind sidecar (Python client).

It plays a scripted conversation with a fake "agent" the way AgentSmithy-style hosts use
rewind:

* a checkpoint before each user message (``snapshot`` kind "message", forced, labelled),
  and the message itself recorded with the host's own id (``append_entry``);
* a fast-path snapshot before each tool call (``paths``: just the file the tool touches)
  and a turn-end snapshot after the agent's reply;
* ``/approve`` locks the current state in, ``/reset`` goes back to it (and ``/undo``
  reverts a reset, restore or rewind); ``/restore N`` puts the files back as they were
  before user message N, ``/rewind N`` moves the conversation there (``navigate_tree``);
* ``files_changed`` notifications are printed (a real host would reindex those files).

Run it with one command (it makes a throw-away demo project when --project is omitted):

    python3 clients/examples/python/host.py [--project DIR] [--store DIR] [--script FILE|-]

The agent understands messages of the form ``write PATH: TEXT``, ``append PATH: TEXT`` and
``delete PATH``, joined with `` && ``; anything else it just acknowledges.
Slash commands: /approve [message], /reset, /undo, /restore N, /rewind N, /status, /files,
/diff PATH, /log.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2] if len(HERE.parents) > 2 else HERE

try:
    import rewind_client
except ImportError:  # not installed: use the package from this repository
    sys.path.insert(0, str(REPO_ROOT / "clients" / "python"))
    import rewind_client

from rewind_client import FilesChanged, RestoreResult, RewindClient, RewindError

DEMO_SCRIPT = """\
write notes.md: first draft
/approve first draft is good
write notes.md: second draft && write scratch.txt: temporary
/status
/reset
/undo
/reset
write plan.md: step one && append notes.md: with a footnote
/files
/restore 3
/rewind 2
/log
"""


def find_binary(explicit: str | None) -> str | None:
    """--rewind, else $REWIND_BIN, else this repository's build (when the host runs from
    the repository), else None: the client's default, ``rewind`` on PATH or the binary the
    ``rewind-sidecar`` package installed."""
    if explicit:
        return explicit
    if os.environ.get("REWIND_BIN"):
        return os.environ["REWIND_BIN"]
    if not (REPO_ROOT / "Cargo.toml").is_file():
        return None
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO_ROOT / "target")
    for profile in ("release", "debug"):
        candidate = target / profile / "rewind"
        if candidate.is_file():
            return str(candidate)
    return None


class Host:
    def __init__(self, client: RewindClient, project: Path) -> None:
        self.rw = client
        self.project = project
        self.messages = 0
        #: checkpoint (entry id) taken before each user message, by message number
        self.checkpoints: dict[int, str] = {}
        client.on_files_changed(self.on_files_changed)
        client.on_progress(lambda p: self.say(f"[progress] {p['operation']} {p['done']}/{p['total']}"))

    @staticmethod
    def say(line: str) -> None:
        print(line, flush=True)

    def on_files_changed(self, event: FilesChanged) -> None:
        # Runs on the client's reader thread, before the call that caused it returns.
        self.say(
            f"[files_changed] {event['reason']}: wrote {sorted(event['written'])}, "
            f"deleted {sorted(event['deleted'])} (reindexing)"
        )

    # -------------------------------------------------------------- conversation

    def user_message(self, text: str) -> None:
        self.messages += 1
        n = self.messages
        # The checkpoint before the message records the state the previous turn left.
        checkpoint = self.rw.snapshot(
            {"kind": "message", "force": True, "turnIndex": n - 1,
             "label": f"before message {n}: {text[:40]}"}
        )
        assert checkpoint["entryId"] is not None  # force: always appended
        self.checkpoints[n] = checkpoint["entryId"]
        self.rw.append_entry(
            {"entryId": f"user-{n}", "entryType": "message", "role": "user", "text": text}
        )
        self.say(f"user #{n}: {text}")
        reply = self.run_agent(text, n)
        turn = self.rw.snapshot({"kind": "turn", "turnIndex": n})
        self.rw.append_entry(
            {"entryId": f"assistant-{n}", "entryType": "message", "role": "assistant",
             "text": reply}
        )
        diff = turn["diff"]
        self.say(
            f"agent: {reply}  [turn {turn['turnIndex']}: +{len(diff['added'])} "
            f"~{len(diff['modified'])} -{len(diff['deleted'])}]"
        )

    def run_agent(self, text: str, turn: int) -> str:
        """A stand-in for the model: tool calls parsed from the message."""
        done: list[str] = []
        for action in (part.strip() for part in text.split(" && ")):
            verb, _, rest = action.partition(" ")
            path, _, body = rest.partition(": ")
            if verb not in ("write", "append", "delete") or not path:
                done.append("noted")
                continue
            # Fast path before the tool runs: only this file may have changed.
            self.rw.snapshot(
                {"kind": "tool", "paths": [path], "turnIndex": turn,
                 "tool": {"name": verb, "input": {"path": path}}}
            )
            target = self.project / path
            if verb == "delete":
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("a" if verb == "append" else "w", encoding="utf-8") as f:
                    f.write(body.replace("\\n", "\n") + "\n")
            done.append(f"{verb} {path}")
        return ", ".join(done)

    # -------------------------------------------------------------- commands

    def command(self, line: str) -> None:
        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        self.say(f"> {line}")
        if name == "approve":
            approved = self.rw.approve({"message": arg or None})
            self.say(f"approved {approved['approvedTreeHash'][:12]} "
                     f"({approved['snapshotsApproved']} snapshot(s))")
        elif name == "reset":
            self.report(self.rw.reset()["restore"])
        elif name == "undo":
            self.report(self.rw.undo())
        elif name == "restore":
            self.report(self.rw.restore_files({"targetEntryId": self.checkpoint(arg)}))
        elif name == "rewind":
            nav = self.rw.navigate_tree({"targetId": self.checkpoint(arg)})
            restore = nav.get("restore")
            if restore is not None:
                self.report(restore)
            self.say(f"conversation rewound before message {arg} (was at {nav['oldLeafId']})")
        elif name == "status":
            status = self.rw.get_status()
            files = ", ".join(f"{f['status']} {f['path']}" for f in status["changedFiles"])
            self.say(f"unapproved changes: {files or 'none'}")
        elif name == "files":
            modified = self.rw.get_modified_files({"toEntryId": "@working"})
            for f in modified["files"]:
                self.say(f"  {f['status']:<8} {f['path']} (turn {f.get('turnIndex')})")
        elif name == "diff":
            diff = self.rw.get_file_diff({"filePath": arg, "toEntryId": "@working"})
            self.say(diff["unifiedDiff"] if diff else f"{arg}: no such file")
        elif name == "log":
            for cp in self.rw.list_checkpoints()["checkpoints"]:
                label = f" {cp['label']}" if cp.get("label") else ""
                self.say(f"  {cp['entryId']} turn {cp['turnIndex']} {cp['kind']}{label}")
        else:
            self.say(f"unknown command /{name}")

    def checkpoint(self, arg: str) -> str:
        try:
            return self.checkpoints[int(arg)]
        except (ValueError, KeyError):
            raise LookupError(f"no user message #{arg} (have {sorted(self.checkpoints)})") from None

    def report(self, result: RestoreResult) -> None:
        self.say(
            f"restored {sorted(result['restored'])}, deleted {sorted(result['deleted'])}"
            + (f", skipped (edited outside the agent) {result['skipped']}" if result["skipped"] else "")
        )

    def run(self, lines: Iterable[str]) -> None:
        for raw in lines:
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                if line.startswith("/"):
                    self.command(line.strip())
                else:
                    self.user_message(line.strip())
            except RewindError as exc:
                self.say(f"error {exc.code}: {exc.message}")
            except LookupError as exc:
                self.say(f"error: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--project", type=Path, help="project directory (default: a demo one)")
    parser.add_argument("--store", type=Path, help="rewind store directory")
    parser.add_argument("--rewind", help="rewind binary (default: $REWIND_BIN, repo build, PATH, the packaged one)")
    parser.add_argument("--script", help="file with one message or /command per line; - for stdin")
    args = parser.parse_args(argv)

    scratch: Path | None = None
    project: Path = args.project
    store: Path | None = args.store
    if project is None:
        scratch = Path(tempfile.mkdtemp(prefix="rewind-demo-"))
        project = scratch / "project"
        project.mkdir()
        (project / "README.md").write_text("# demo project\n", encoding="utf-8")
        store = store or scratch / "store"
        print(f"demo project: {project}", flush=True)
    project = project.resolve()
    project.mkdir(parents=True, exist_ok=True)

    if args.script is None:
        lines: Iterable[str] = DEMO_SCRIPT.splitlines()
    elif args.script == "-":
        lines = sys.stdin
    else:
        lines = Path(args.script).read_text(encoding="utf-8").splitlines()

    try:
        with RewindClient(find_binary(args.rewind), timeout=120) as client:
            init = client.initialize(
                {"cwd": str(project), "storeDir": str(store.resolve()) if store else None}
            )
            print(f"session {init['sessionId']} ({init['baseline']['files']} files in baseline)",
                  flush=True)
            Host(client, project).run(lines)
        print(f"rewind exited with {client.returncode}", flush=True)
        return 0 if client.returncode == 0 else 1
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
