"""The asyncio client against the real rewind binary (plain pytest: asyncio.run per test)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from _util import TRICKY_TEXT, big_text, read, stopped, write

from rewind_client import (
    PROTOCOL_VERSION,
    AsyncRewindClient,
    FilesChanged,
    InitializeParams,
    InvalidParamsError,
    MethodNotFoundError,
    RestoreAbortedError,
    RewindConnectionError,
    RewindError,
    RewindTimeout,
    SessionLockedError,
    UnknownEntryError,
)

Scenario = Callable[[AsyncRewindClient], Awaitable[None]]


@pytest.fixture
def run_with_client(
    rewind_bin: Path, init_params: InitializeParams
) -> Callable[[Scenario], None]:
    """Run a scenario against a started, initialized client; check it closes with 0."""

    def run(scenario: Scenario) -> None:
        async def main() -> None:
            client = await AsyncRewindClient(rewind_bin, timeout=60).start()
            try:
                await client.initialize(init_params)
                await scenario(client)
            finally:
                assert await client.close() == 0

        asyncio.run(main())

    return run


@asynccontextmanager
async def started(rewind_bin: Path) -> AsyncIterator[AsyncRewindClient]:
    async with AsyncRewindClient(rewind_bin, timeout=60) as client:
        yield client


async def baseline_id(client: AsyncRewindClient) -> str:
    return (await client.list_checkpoints())["initialEntryId"]


def test_initialize(rewind_bin: Path, init_params: InitializeParams, project: Path) -> None:
    async def main() -> None:
        async with started(rewind_bin) as c:
            r = await c.initialize(init_params)
            assert r["protocolVersion"] == PROTOCOL_VERSION
            assert r["projectRoot"] == str(project)
            assert r["baseline"]["files"] == 3
            assert r["leafId"] == r["baseline"]["entryId"]
        assert c.returncode == 0

    asyncio.run(main())


def test_snapshot_modified_files_and_diff(
    run_with_client: Callable[[Scenario], None], project: Path
) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        write(project / "notes.txt", "one\n2\nthree\nfour\n")
        write(project / "src" / "new.py", "x = 1\n")
        (project / "README.md").unlink()
        snap = await client.snapshot({"kind": "turn"})
        assert snap["diff"] == {
            "added": ["src/new.py"],
            "modified": ["notes.txt"],
            "deleted": ["README.md"],
        }
        modified = await client.get_modified_files()
        assert {f["path"]: f["status"] for f in modified["files"]} == {
            "src/new.py": "added",
            "notes.txt": "modified",
            "README.md": "deleted",
        }
        assert {f.get("entryId") for f in modified["files"]} == {snap["entryId"]}
        diff = await client.get_file_diff({"filePath": "notes.txt", "contextLines": 0})
        assert diff is not None
        assert diff["oldContent"] == "one\ntwo\nthree\n"
        assert diff["newContent"] == "one\n2\nthree\nfour\n"
        assert "--- a/notes.txt" in diff["unifiedDiff"]
        assert (diff["additions"], diff["deletions"]) == (2, 1)
        assert await client.get_file_diff({"filePath": "never-existed.txt"}) is None

    run_with_client(scenario)


def test_restore_files_fires_files_changed_before_returning(
    run_with_client: Callable[[Scenario], None], project: Path
) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        base = await baseline_id(client)
        write(project / "notes.txt", "changed\n")
        write(project / "extra.txt", "new file\n")
        await client.snapshot()
        order: list[str] = []
        events: list[FilesChanged] = []

        def plain(event: FilesChanged) -> None:
            events.append(event)
            order.append("plain callback")

        async def awaited(event: FilesChanged) -> None:
            await asyncio.sleep(0.05)  # awaited before the response is delivered
            order.append("async callback")

        client.on_files_changed(plain)
        unsubscribe = client.on_files_changed(awaited)
        result = await client.restore_files({"targetEntryId": base})
        order.append("returned")
        assert order == ["plain callback", "async callback", "returned"]
        assert result["restored"] == ["notes.txt"]
        assert result["deleted"] == ["extra.txt"]
        assert events == [
            {"reason": "restore", "written": ["notes.txt"], "deleted": ["extra.txt"]}
        ]
        assert read(project / "notes.txt") == "one\ntwo\nthree\n"

        unsubscribe()
        await client.undo()
        assert order[-1] == "plain callback"
        assert read(project / "notes.txt") == "changed\n"

    run_with_client(scenario)


def test_navigate_tree_undo_approve_reset(
    run_with_client: Callable[[Scenario], None], project: Path
) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        base = await baseline_id(client)
        reasons: list[str] = []
        client.on_files_changed(lambda e: reasons.append(e["reason"]))
        write(project / "notes.txt", "branch A\n")
        s1 = await client.snapshot()
        nav = await client.navigate_tree({"targetId": base})
        assert nav["oldLeafId"] == s1["entryId"]
        assert read(project / "notes.txt") == "one\ntwo\nthree\n"
        await client.undo()
        assert read(project / "notes.txt") == "branch A\n"

        approved = await client.approve()
        write(project / "notes.txt", "later\n")
        await client.snapshot()
        assert (await client.get_status())["hasUnapproved"] is True
        reset = await client.reset()
        assert reset["resetTo"] == approved["approvedTreeHash"]
        assert read(project / "notes.txt") == "branch A\n"
        assert reasons == ["navigate", "undo", "reset"]

    run_with_client(scenario)


def test_errors(run_with_client: Callable[[Scenario], None], project: Path) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        with pytest.raises(UnknownEntryError) as unknown:
            await client.navigate_tree({"targetId": "deadbeef"})
        assert unknown.value.code == 1001 and isinstance(unknown.value, RewindError)
        with pytest.raises(InvalidParamsError) as invalid:
            await client.get_file_diff({"filePath": "../outside.txt"})
        assert invalid.value.code == -32602
        with pytest.raises(MethodNotFoundError):
            await client.request("no_such_method")

        base = await baseline_id(client)
        write(project / "notes.txt", "agent\n")
        await client.snapshot()
        write(project / "notes.txt", "user edit\n")
        with pytest.raises(RestoreAbortedError) as aborted:
            await client.restore_files({"targetEntryId": base, "onConflict": "abort"})
        assert aborted.value.code == 1002
        assert aborted.value.conflicts == [{"path": "notes.txt", "reason": "dirty"}]
        assert read(project / "notes.txt") == "user edit\n"

    run_with_client(scenario)


def test_unicode_round_trip(run_with_client: Callable[[Scenario], None], project: Path) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        name = "dïr/naïve 日本.txt"
        write(project / name, TRICKY_TEXT)
        first = await client.snapshot()
        changed = TRICKY_TEXT + "added \u2029 🎉\n"
        write(project / name, changed)
        second = await client.snapshot()
        diff = await client.get_file_diff(
            {"filePath": name, "fromEntryId": first["entryId"], "toEntryId": second["entryId"]}
        )
        assert diff is not None
        assert diff["oldContent"] == TRICKY_TEXT
        assert diff["newContent"] == changed
        assert "+added \u2029 🎉" in diff["unifiedDiff"]

    run_with_client(scenario)


def test_large_diff_exceeds_asyncio_default_limit(
    run_with_client: Callable[[Scenario], None], project: Path
) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        old = big_text("old", 3)
        lines = old.splitlines(keepends=True)
        new = "".join(
            line.replace("old", "new") if i % 50 == 0 else line for i, line in enumerate(lines)
        )
        write(project / "big.txt", old)
        s1 = await client.snapshot()
        write(project / "big.txt", new)
        s2 = await client.snapshot()
        diff = await client.get_file_diff(
            {"filePath": "big.txt", "fromEntryId": s1["entryId"], "toEntryId": s2["entryId"]}
        )
        assert diff is not None
        assert diff["oldContent"] == old  # one response line of well over 6 MB
        assert diff["newContent"] == new
        changed_lines = len(range(0, len(lines), 50))
        assert (diff["additions"], diff["deletions"]) == (changed_lines, changed_lines)

    run_with_client(scenario)


def test_per_call_timeout(run_with_client: Callable[[Scenario], None]) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        assert client.pid is not None
        with stopped(client.pid):
            started_at = time.monotonic()
            with pytest.raises(RewindTimeout) as timed_out:
                await client.stats(timeout=0.3)
            assert 0.25 <= time.monotonic() - started_at < 10
            assert timed_out.value.method == "stats"
        assert (await client.get_tree(timeout=30))["leafId"]

    run_with_client(scenario)


def test_concurrent_calls_are_correlated(
    run_with_client: Callable[[Scenario], None], project: Path
) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        for i in range(10):
            write(project / f"f{i}.txt", f"file {i}\n")
        await client.snapshot()
        diffs = await asyncio.gather(
            *(client.get_file_diff({"filePath": f"f{i % 10}.txt"}) for i in range(60))
        )
        assert [d.get("newContent") if d else None for d in diffs] == [
            f"file {i % 10}\n" for i in range(60)
        ]

    run_with_client(scenario)


def test_callback_cannot_await_the_client(
    run_with_client: Callable[[Scenario], None], project: Path
) -> None:
    async def scenario(client: AsyncRewindClient) -> None:
        caught: list[BaseException] = []

        async def reenter(_event: FilesChanged) -> None:
            try:
                await client.get_tree()
            except RuntimeError as exc:
                caught.append(exc)

        client.on_files_changed(reenter)
        write(project / "notes.txt", "x\n")
        await client.snapshot()
        await client.restore_files({"targetEntryId": await baseline_id(client)})
        assert len(caught) == 1 and "deadlock" in str(caught[0])

    run_with_client(scenario)


def test_clean_close_and_session_lock(
    rewind_bin: Path, init_params: InitializeParams
) -> None:
    async def main() -> None:
        first = await AsyncRewindClient(rewind_bin, timeout=60).start()
        session = (await first.initialize(init_params))["sessionFile"]
        async with started(rewind_bin) as second:
            with pytest.raises(SessionLockedError):
                await second.initialize({**init_params, "sessionFile": session})
        assert second.returncode == 0
        assert await first.close() == 0
        assert await first.close() == 0
        assert first.closed
        with pytest.raises(RewindConnectionError):
            await first.stats()
        async with started(rewind_bin) as third:
            resumed = await third.initialize({**init_params, "sessionFile": session})
            assert resumed["resumed"] is True

    asyncio.run(main())


def test_pending_calls_fail_when_the_process_dies(
    rewind_bin: Path, init_params: InitializeParams
) -> None:
    async def main() -> None:
        c = await AsyncRewindClient(rewind_bin, timeout=60).start()
        await c.initialize(init_params)
        assert c.pid is not None
        with stopped(c.pid):
            pending = asyncio.create_task(c.stats())
            await asyncio.sleep(0.2)
            os.kill(c.pid, signal.SIGKILL)
        with pytest.raises(RewindConnectionError) as died:
            await asyncio.wait_for(pending, 10)
        assert died.value.returncode == -signal.SIGKILL
        with pytest.raises(RewindConnectionError):
            await c.get_tree()
        assert await c.close() == -signal.SIGKILL

    asyncio.run(main())


def test_not_started_is_an_error(rewind_bin: Path) -> None:
    async def main() -> None:
        client = AsyncRewindClient(rewind_bin)
        with pytest.raises(RuntimeError, match="not started"):
            await client.stats()
        assert await client.close() is None

    asyncio.run(main())
