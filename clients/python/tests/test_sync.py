"""The synchronous client against the real rewind binary."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _util import TRICKY_TEXT, big_text, read, stopped, write

from rewind_client import (
    PROTOCOL_VERSION,
    FileDiff,
    FilesChanged,
    InitializeParams,
    InvalidParamsError,
    MethodNotFoundError,
    RestoreAbortedError,
    RewindClient,
    RewindConnectionError,
    RewindError,
    RewindTimeout,
    SessionLockedError,
    StaleHunkError,
    UnknownEntryError,
)


def baseline_id(client: RewindClient) -> str:
    return client.list_checkpoints()["initialEntryId"]


def test_initialize(rewind_bin: Path, init_params: InitializeParams, project: Path,
                    store: Path) -> None:
    with RewindClient(rewind_bin, timeout=60) as c:
        r = c.initialize(init_params)
        assert r["protocolVersion"] == PROTOCOL_VERSION
        assert r["projectRoot"] == str(project)
        assert r["storeDir"] == str(store)
        assert r["resumed"] is False
        assert r["baseline"]["files"] == 3
        assert r["leafId"] == r["baseline"]["entryId"]
        assert Path(r["sessionFile"]).is_file()
        assert c.get_tree()["leafId"] == r["leafId"]
    assert c.returncode == 0


def test_snapshot_modified_files_and_diff(client: RewindClient, project: Path) -> None:
    write(project / "notes.txt", "one\n2\nthree\nfour\n")
    write(project / "src" / "new.py", "x = 1\n")
    (project / "README.md").unlink()
    snap = client.snapshot({"kind": "turn", "label": "turn 1"})
    assert snap["changed"] is True
    assert snap["entryId"]
    assert snap["turnIndex"] == 1
    assert snap["diff"] == {
        "added": ["src/new.py"],
        "modified": ["notes.txt"],
        "deleted": ["README.md"],
    }

    unchanged = client.snapshot()
    assert unchanged["changed"] is False
    assert unchanged.get("entryId") is None

    modified = client.get_modified_files()
    assert {f["path"]: f["status"] for f in modified["files"]} == {
        "src/new.py": "added",
        "notes.txt": "modified",
        "README.md": "deleted",
    }
    assert {f.get("entryId") for f in modified["files"]} == {snap["entryId"]}
    assert {f.get("turnIndex") for f in modified["files"]} == {1}
    assert modified["toTreeHash"] == snap["treeHash"]

    diff = client.get_file_diff({"filePath": "notes.txt"})
    assert diff is not None
    assert diff["oldContent"] == "one\ntwo\nthree\n"
    assert diff["newContent"] == "one\n2\nthree\nfour\n"
    assert diff["encoding"] == "utf8"
    assert "--- a/notes.txt" in diff["unifiedDiff"]
    assert "+++ b/notes.txt" in diff["unifiedDiff"]
    assert (diff["additions"], diff["deletions"]) == (2, 1)
    assert client.get_file_diff({"filePath": "never-existed.txt"}) is None

    history = client.get_file_history({"filePath": "notes.txt"})
    assert [v["status"] for v in history["versions"]] == ["added", "modified"]
    assert history["versions"][-1]["entryId"] == snap["entryId"]


def test_restore_files_fires_files_changed_before_returning(
    client: RewindClient, project: Path
) -> None:
    base = baseline_id(client)
    write(project / "notes.txt", "changed\n")
    write(project / "extra.txt", "new file\n")
    client.snapshot()

    order: list[str] = []
    events: list[FilesChanged] = []
    reader_threads: set[str] = set()

    def on_changed(event: FilesChanged) -> None:
        events.append(event)
        order.append("files_changed")
        reader_threads.add(threading.current_thread().name)

    unsubscribe = client.on_files_changed(on_changed)

    preview = client.restore_files({"targetEntryId": base, "preview": True})
    assert preview["preview"] is True
    assert events == []
    assert read(project / "notes.txt") == "changed\n"

    result = client.restore_files({"targetEntryId": base})
    order.append("returned")
    assert order == ["files_changed", "returned"]
    assert reader_threads and threading.current_thread().name not in reader_threads
    assert result["restored"] == ["notes.txt"]
    assert result["deleted"] == ["extra.txt"]
    assert result["unrevertEntryId"]
    assert events == [{"reason": "restore", "written": ["notes.txt"], "deleted": ["extra.txt"]}]
    assert read(project / "notes.txt") == "one\ntwo\nthree\n"
    assert not (project / "extra.txt").exists()

    unsubscribe()
    undone = client.undo()
    assert sorted(undone["restored"]) == ["extra.txt", "notes.txt"]
    assert len(events) == 1  # unsubscribed
    assert read(project / "notes.txt") == "changed\n"


def test_navigate_tree_and_back(client: RewindClient, project: Path) -> None:
    base = baseline_id(client)
    reasons: list[str] = []
    client.on_files_changed(lambda e: reasons.append(e["reason"]))
    write(project / "notes.txt", "branch A\n")
    s1 = client.snapshot()

    nav = client.navigate_tree({"targetId": base, "label": "back to start"})
    assert nav["oldLeafId"] == s1["entryId"]
    assert nav.get("newLeafId")
    restore = nav.get("restore")
    assert restore is not None and restore["restored"] == ["notes.txt"]
    assert read(project / "notes.txt") == "one\ntwo\nthree\n"
    assert client.get_tree()["leafId"] == nav["newLeafId"]

    client.navigate_tree({"targetId": nav["oldLeafId"]})
    assert read(project / "notes.txt") == "branch A\n"
    assert reasons == ["navigate", "navigate"]


def test_undo_and_redo(client: RewindClient, project: Path) -> None:
    base = baseline_id(client)
    write(project / "notes.txt", "work\n")
    client.snapshot()
    client.restore_files({"targetEntryId": base})
    assert read(project / "notes.txt") == "one\ntwo\nthree\n"
    client.undo()
    assert read(project / "notes.txt") == "work\n"
    client.undo()  # an undo is itself undoable
    assert read(project / "notes.txt") == "one\ntwo\nthree\n"


def test_approve_and_reset(client: RewindClient, project: Path) -> None:
    events: list[FilesChanged] = []
    client.on_files_changed(events.append)
    write(project / "notes.txt", "approved\n")
    approved = client.approve({"message": "looks good"})
    assert approved["approvedEntryId"]
    assert approved["snapshotsApproved"] >= 1
    status = client.get_status()
    assert status["hasUnapproved"] is False
    assert status.get("approvedEntryId") == approved["approvedEntryId"]

    # The agent's turn: edits, recorded by the turn-end snapshot.
    write(project / "notes.txt", "unapproved\n")
    write(project / "junk.txt", "junk\n")
    client.snapshot()
    status = client.get_status()
    assert status["hasUnapproved"] is True
    changed = {f["path"]: f for f in status["changedFiles"]}
    assert set(changed) == {"notes.txt", "junk.txt"}
    assert changed["notes.txt"].get("baseContent") == "approved\n"
    assert "+unapproved" in (changed["notes.txt"].get("diff") or "")

    reset = client.reset()
    assert reset["resetTo"] == approved["approvedTreeHash"]
    assert read(project / "notes.txt") == "approved\n"
    assert not (project / "junk.txt").exists()
    assert events[-1]["reason"] == "reset"
    assert client.get_status()["hasUnapproved"] is False

    # A file edited behind the sidecar's back is dirty: skipped by default,
    # written with onConflict "overwrite".
    write(project / "notes.txt", "agent again\n")
    client.snapshot()
    write(project / "notes.txt", "user edit\n")
    skipped = client.reset()
    assert skipped["restore"]["dirty"] == ["notes.txt"]
    assert skipped["restore"]["skipped"] == ["notes.txt"]
    assert read(project / "notes.txt") == "user edit\n"
    client.reset({"onConflict": "overwrite"})
    assert read(project / "notes.txt") == "approved\n"


def test_errors(client: RewindClient, project: Path) -> None:
    with pytest.raises(UnknownEntryError) as unknown:
        client.navigate_tree({"targetId": "deadbeef"})
    assert unknown.value.code == 1001
    assert isinstance(unknown.value, RewindError)
    assert unknown.value.method == "navigate_tree"
    assert "deadbeef" in unknown.value.message

    for bad in ("../outside.txt", "/etc/passwd", "src/../../x"):
        with pytest.raises(InvalidParamsError) as invalid:
            client.get_file_diff({"filePath": bad})
        assert invalid.value.code == -32602
    with pytest.raises(InvalidParamsError):
        client.restore_files({"files": ["../notes.txt"]})

    with pytest.raises(MethodNotFoundError) as missing:
        client.request("no_such_method")
    assert missing.value.code == -32601

    # 1002: a dirty file blocks a restore with onConflict "abort"; nothing changes.
    base = baseline_id(client)
    write(project / "notes.txt", "agent\n")
    client.snapshot()
    write(project / "notes.txt", "user edit\n")
    with pytest.raises(RestoreAbortedError) as aborted:
        client.restore_files({"targetEntryId": base, "onConflict": "abort"})
    assert aborted.value.code == 1002
    assert aborted.value.conflicts == [{"path": "notes.txt", "reason": "dirty"}]
    assert isinstance(aborted.value.data, dict)
    assert aborted.value.data["conflicts"] == aborted.value.conflicts
    assert read(project / "notes.txt") == "user edit\n"

    assert client.stats()["projectRoot"] == str(project)  # still serving


def test_unicode_round_trip(client: RewindClient, project: Path) -> None:
    name = "dïr/naïve 日本.txt"
    write(project / name, TRICKY_TEXT)
    first = client.snapshot()
    assert first["diff"]["added"] == [name]
    changed = TRICKY_TEXT.replace("plain line", "plain\u2028line") + "added \u2029 🎉\n"
    write(project / name, changed)
    second = client.snapshot()
    assert second["diff"]["modified"] == [name]

    diff = client.get_file_diff(
        {"filePath": name, "fromEntryId": first["entryId"], "toEntryId": second["entryId"]}
    )
    assert diff is not None
    assert diff["path"] == name
    assert diff["encoding"] == "utf8"
    assert diff["oldContent"] == TRICKY_TEXT
    assert diff["newContent"] == changed
    assert "+plain\u2028line" in diff["unifiedDiff"]
    assert "+added \u2029 🎉" in diff["unifiedDiff"]

    assert [f["path"] for f in client.get_modified_files()["files"]] == [name]
    client.restore_files({"targetEntryId": first["entryId"]})
    assert (project / name).read_bytes() == TRICKY_TEXT.encode("utf-8")


def test_large_diff(client: RewindClient, project: Path) -> None:
    old = big_text("old", 3)
    lines = old.splitlines(keepends=True)
    new = "".join(
        line.replace("old", "new") if i % 50 == 0 else line for i, line in enumerate(lines)
    )
    write(project / "big.txt", old)
    s1 = client.snapshot()
    write(project / "big.txt", new)
    s2 = client.snapshot()

    added: FileDiff | None = client.get_file_diff(
        {"filePath": "big.txt", "toEntryId": s1["entryId"]}
    )
    assert added is not None
    assert added.get("oldContent") is None
    assert added["newContent"] == old
    assert len(added["unifiedDiff"]) > len(old)

    diff = client.get_file_diff(
        {"filePath": "big.txt", "fromEntryId": s1["entryId"], "toEntryId": s2["entryId"]}
    )
    assert diff is not None
    assert diff["oldContent"] == old
    assert diff["newContent"] == new
    changed_lines = len(range(0, len(lines), 50))
    assert (diff["additions"], diff["deletions"]) == (changed_lines, changed_lines)


def test_per_call_timeout(client: RewindClient) -> None:
    with stopped(client.pid):
        started = time.monotonic()
        with pytest.raises(RewindTimeout) as timed_out:
            client.stats(timeout=0.3)
        assert 0.25 <= time.monotonic() - started < 10
        assert timed_out.value.method == "stats"
        assert isinstance(timed_out.value, TimeoutError)

        client.timeout = 0.2  # the client-wide default applies when timeout= is omitted
        with pytest.raises(RewindTimeout):
            client.get_tree()
    # Resumed: the late responses are dropped; new calls get their own.
    assert client.get_tree(timeout=math.inf)["leafId"]  # inf: no limit for this call
    client.timeout = 60
    assert client.stats()["objects"] >= 1


def test_concurrent_calls_are_correlated(client: RewindClient, project: Path) -> None:
    for i in range(10):
        write(project / f"f{i}.txt", f"file {i}\n")
    client.snapshot()

    def diff(i: int) -> str | None:
        d = client.get_file_diff({"filePath": f"f{i % 10}.txt"})
        assert d is not None
        return d.get("newContent")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(diff, range(60)))
    assert results == [f"file {i % 10}\n" for i in range(60)]


def test_callback_cannot_call_the_client(client: RewindClient, project: Path) -> None:
    caught: list[BaseException] = []

    def reenter(_event: FilesChanged) -> None:
        try:
            client.get_tree()
        except RuntimeError as exc:
            caught.append(exc)

    client.on_files_changed(reenter)
    write(project / "notes.txt", "x\n")
    client.snapshot()
    client.restore_files({"targetEntryId": baseline_id(client)})
    assert len(caught) == 1 and "deadlock" in str(caught[0])


def test_on_notification_sees_every_notification(client: RewindClient, project: Path) -> None:
    seen: list[str] = []
    client.on_notification(lambda method, params: seen.append(method))
    write(project / "notes.txt", "x\n")
    client.snapshot()
    client.restore_files({"targetEntryId": baseline_id(client)})
    assert "files_changed" in seen
    assert set(seen) <= {"files_changed", "progress"}


def test_clean_close(rewind_bin: Path, init_params: InitializeParams) -> None:
    c = RewindClient(rewind_bin, timeout=60)
    session = c.initialize(init_params)["sessionFile"]
    assert c.close() == 0
    assert c.close() == 0  # idempotent
    assert c.closed
    with pytest.raises(RewindConnectionError):
        c.stats()
    # The session lock was released: a new sidecar resumes the same file.
    resume: InitializeParams = {**init_params, "sessionFile": session}
    with RewindClient(rewind_bin, timeout=60) as again:
        assert again.initialize(resume)["resumed"] is True
    assert again.returncode == 0


def test_session_locked(rewind_bin: Path, init_params: InitializeParams) -> None:
    with RewindClient(rewind_bin, timeout=60) as first:
        session = first.initialize(init_params)["sessionFile"]
        with RewindClient(rewind_bin, timeout=60) as second:
            with pytest.raises(SessionLockedError) as locked:
                second.initialize({**init_params, "sessionFile": session})
            assert locked.value.code == 1004


def test_pending_calls_fail_when_the_process_dies(
    rewind_bin: Path, init_params: InitializeParams
) -> None:
    c = RewindClient(rewind_bin, timeout=60)
    c.initialize(init_params)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            c.stats()
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    with stopped(c.pid):
        worker = threading.Thread(target=call)
        worker.start()
        time.sleep(0.2)
        os.kill(c.pid, signal.SIGKILL)
    worker.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], RewindConnectionError)
    assert outcome[0].returncode == -signal.SIGKILL
    with pytest.raises(RewindConnectionError):
        c.get_tree()
    assert c.close() == -signal.SIGKILL


def test_binary_and_args_are_configurable(rewind_bin: Path, project: Path, store: Path) -> None:
    # --cwd / --store on the command line; no initialize: the first request initializes.
    with RewindClient(rewind_bin, cwd=project, store=store, timeout=60) as c:
        assert c.command[:2] == [str(rewind_bin), "serve"]
        assert c.stats()["projectRoot"] == str(project)
    with pytest.raises(FileNotFoundError):
        RewindClient(project / "no-such-binary")


def test_revert_blame_and_hunks(client: RewindClient, project: Path) -> None:
    write(project / "notes.txt", "ONE\ntwo\nthree\n")
    t1 = client.snapshot({"kind": "turn", "label": "turn 1"})["entryId"]
    assert t1 is not None
    write(project / "notes.txt", "ONE\ntwo\nTHREE\n")
    t2 = client.snapshot({"kind": "turn", "label": "turn 2"})["entryId"]
    assert t2 is not None
    blame = client.get_file_blame({"path": "notes.txt"})
    assert [line["entryId"] for line in blame["lines"]][::2] == [t1, t2]
    assert [line["text"] for line in blame["lines"]] == ["ONE", "two", "THREE"]

    plan = client.revert({"entryId": t1, "preview": True})
    assert [(f["path"], f["status"], f["action"]) for f in plan["files"]] == [
        ("notes.txt", "clean", "write")
    ]
    assert read(project / "notes.txt") == "ONE\ntwo\nTHREE\n"
    done = client.revert({"entryId": t1})
    assert read(project / "notes.txt") == "one\ntwo\nTHREE\n"
    assert done["unrevertEntryId"]
    client.undo()
    assert read(project / "notes.txt") == "ONE\ntwo\nTHREE\n"

    diff = client.get_file_diff({"filePath": "notes.txt", "fromEntryId": t1,
                                 "toEntryId": "@working"})
    assert diff is not None
    hunk = diff["hunks"][0]
    with pytest.raises(StaleHunkError) as e:
        client.restore_files({"targetEntryId": t1, "hunks": [
            {"path": "notes.txt", "hunks": [{"index": 0, "hash": "0" * 16}]}]})
    assert e.value.path == "notes.txt"
    client.restore_files({"targetEntryId": t1, "hunks": [
        {"path": "notes.txt", "hunks": [{"index": hunk["index"], "hash": hunk["hash"]}]}]})
    assert read(project / "notes.txt") == "ONE\ntwo\nthree\n"
