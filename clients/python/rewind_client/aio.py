"""asyncio client: the same features as ``RewindClient``, on an event loop."""

from __future__ import annotations

import asyncio
import inspect
import logging
import subprocess
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any

from ._generated import AsyncMethods
from ._wire import (
    CHUNK_SIZE,
    STREAM_LIMIT,
    AnyNotificationCallback,
    Correlator,
    LineSplitter,
    NotificationCallback,
    StderrMode,
    StrPath,
    build_command,
    classify,
    decode_line,
    effective_timeout,
    encode_request,
    is_skip,
    response_value,
)
from .errors import RewindConnectionError, RewindException, RewindTimeout

log = logging.getLogger("rewind_client")


class AsyncRewindClient(AsyncMethods):
    """Drive a ``rewind serve`` sidecar from asyncio.

    Construct, then ``await client.start()`` (it returns the client) or use
    ``async with AsyncRewindClient(...) as client:``. The constructor takes the same
    arguments as ``RewindClient``. Every protocol method is a typed coroutine
    (``await client.snapshot()``); many may be in flight at once.

    The pipes are read in chunks and split on b"\\n" only, so no line length limit
    applies (responses carrying whole files can be tens of MiB); the StreamReader's
    ``limit`` is raised as well (``STREAM_LIMIT``).

    Notification callbacks run in the reader task, in order, before the response of the
    call that caused them is delivered; a callback returning an awaitable is awaited
    there. They must not await the client themselves (that would deadlock; it raises
    ``RuntimeError``) — use ``asyncio.create_task`` for that.
    """

    def __init__(
        self,
        binary: StrPath | None = None,
        *,
        cwd: StrPath | None = None,
        store: StrPath | None = None,
        session: StrPath | None = None,
        args: Sequence[str] = (),
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        process_cwd: StrPath | None = None,
        timeout: float | None = None,
        stderr: StderrMode = "capture",
    ) -> None:
        if stderr not in ("capture", "inherit", "discard"):
            raise ValueError(f"stderr must be 'capture', 'inherit' or 'discard', not {stderr!r}")
        self.command = build_command(
            binary, cwd=cwd, store=store, session=session, args=args, command=command
        )
        self.timeout = timeout
        self._env = dict(env) if env is not None else None
        self._process_cwd = process_cwd
        self._stderr_mode = stderr
        self._corr = Correlator()
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._dead: RewindConnectionError | None = None
        self._closing = False

    # ------------------------------------------------------------------ public API

    async def start(self) -> AsyncRewindClient:
        """Spawn the sidecar (once) and return the client."""
        if self._proc is not None:
            return self
        stderr_target = {
            "capture": subprocess.PIPE,
            "discard": subprocess.DEVNULL,
            "inherit": None,
        }[self._stderr_mode]
        self._proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_target,
            env=self._env,
            cwd=self._process_cwd,
            limit=STREAM_LIMIT,
        )
        if self._proc.stderr is not None:
            self._stderr_task = asyncio.create_task(
                self._drain_stderr(self._proc.stderr), name=f"rewind-stderr-{self._proc.pid}"
            )
        self._reader_task = asyncio.create_task(
            self._read_loop(), name=f"rewind-reader-{self._proc.pid}"
        )
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit status once the sidecar has exited, else None."""
        return self._proc.returncode if self._proc is not None else None

    @property
    def closed(self) -> bool:
        return self._closing or self._dead is not None

    @property
    def stderr_tail(self) -> str:
        """The last lines the sidecar wrote to stderr (with stderr="capture")."""
        return self._corr.stderr_tail()

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send any method by name (untyped); the typed methods are preferable."""
        return await self._call(method, params, timeout)

    def on_notification(self, callback: AnyNotificationCallback) -> Callable[[], None]:
        """Register ``callback(method, params)`` for every notification."""
        return self._corr.subscribe_any(callback)

    async def close(self, timeout: float = 10.0) -> int | None:
        """Send ``shutdown``, close stdin and wait for the process to exit.

        Kills it if it has not exited after ``timeout`` seconds. Returns the exit status
        (0 after a clean shutdown); None if it was never started. Idempotent.
        """
        proc = self._proc
        if proc is None:
            self._closing = True
            return None
        first = not self._closing
        self._closing = True
        if first and self._dead is None and proc.returncode is None:
            try:
                await self._send_and_wait("shutdown", None, timeout)
            except RewindException as exc:
                log.debug("shutdown during close failed: %s", exc)
        await self._close_stdin()
        try:
            returncode = await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            log.warning("rewind (pid %d) did not exit in %g s; killing it", proc.pid, timeout)
            proc.kill()
            returncode = await proc.wait()
        await self._join_readers(timeout)
        self._fail_all(self._corr.exited_error(returncode, closing=True))
        return returncode

    async def kill(self) -> None:
        """Kill the sidecar at once (no shutdown); pending calls fail."""
        self._closing = True
        if self._proc is None:
            return
        if self._proc.returncode is None:
            self._proc.kill()
        await self._proc.wait()
        await self._close_stdin()
        await self._join_readers(5.0)

    async def __aenter__(self) -> AsyncRewindClient:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ internals

    def _subscribe(self, method: str, callback: NotificationCallback) -> Callable[[], None]:
        return self._corr.subscribe(method, callback)

    async def _call(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> Any:
        if self._closing:
            raise RewindConnectionError("rewind client closed")
        return await self._send_and_wait(method, params, timeout)

    async def _send_and_wait(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> Any:
        proc = self._proc
        if proc is None:
            raise RuntimeError("AsyncRewindClient is not started; await client.start() first")
        if self._reader_task is not None and asyncio.current_task() is self._reader_task:
            raise RuntimeError(
                "rewind client awaited from a notification callback (the reader task); "
                "that would deadlock — schedule it with asyncio.create_task"
            )
        if self._dead is not None:
            raise self._dead
        effective = effective_timeout(self.timeout, timeout)
        request_id = self._corr.next_id()
        data = encode_request(request_id, method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        try:
            stdin = proc.stdin
            try:
                if stdin is None or stdin.is_closing():
                    raise BrokenPipeError("stdin is closed")
                stdin.write(data)
                await stdin.drain()
            except (OSError, RuntimeError) as exc:
                # The process is probably gone: give the reader a moment to see EOF so
                # the error carries the exit status and stderr.
                if self._dead is None and self._reader_task is not None:
                    try:
                        await asyncio.wait_for(asyncio.shield(self._reader_task), 2.0)
                    except Exception:
                        pass
                if self._dead is not None:
                    raise self._dead from exc
                raise RewindConnectionError(
                    f"cannot write to rewind: {exc}", stderr=self._corr.stderr_tail()
                ) from exc
            if effective is None:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), effective)
            except TimeoutError:
                if future.done() and not future.cancelled():
                    return future.result()
                raise RewindTimeout(method, effective) from None
        finally:
            self._pending.pop(request_id, None)

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        splitter = LineSplitter()
        try:
            while True:
                chunk = await stdout.read(CHUNK_SIZE)
                if not chunk:
                    break
                for line in splitter.feed(chunk):
                    await self._handle_line(line)
            tail = splitter.finish()
            if tail is not None:
                await self._handle_line(tail)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("rewind reader failed")
        finally:
            returncode: int | None
            try:
                returncode = await asyncio.wait_for(self._proc.wait(), 5.0)
            except TimeoutError:
                returncode = None
            self._fail_all(self._corr.exited_error(returncode, closing=self._closing))

    async def _handle_line(self, line: bytes) -> None:
        message = decode_line(line)
        if is_skip(message):
            return
        if isinstance(message, list):
            for member in message:
                await self._dispatch(member)
        else:
            await self._dispatch(message)

    async def _dispatch(self, message: object) -> None:
        kind, key, payload = classify(message)
        if kind == "notification":
            for call in self._corr.callbacks_for(str(key), payload):
                try:
                    outcome = call()
                    if inspect.isawaitable(outcome):
                        await outcome
                except Exception:
                    log.exception("rewind notification callback for %r failed", key)
        elif kind == "response":
            entry = self._pending.pop(key, None) if isinstance(key, int) else None
            if entry is None:
                if key is None and isinstance(payload.get("error"), dict):
                    log.warning("rewind reported an uncorrelated error: %s", payload["error"])
                else:
                    log.debug("dropping response to unknown or timed-out id %r", key)
                return
            method, future = entry
            if future.done():
                return
            ok, value = response_value(payload, method)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        else:
            log.debug("ignoring unexpected message from rewind: %r", message)

    def _fail_all(self, error: RewindConnectionError) -> None:
        if self._dead is None:
            self._dead = error
        pending = list(self._pending.values())
        self._pending.clear()
        for _method, future in pending:
            if not future.done():
                future.set_exception(self._dead)

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        splitter = LineSplitter()
        try:
            while True:
                chunk = await stream.read(CHUNK_SIZE)
                if not chunk:
                    break
                self._corr.feed_stderr(splitter, chunk)
            tail = splitter.finish()
            if tail is not None:
                self._corr.feed_stderr(splitter, tail + b"\n")
        except (OSError, ValueError):
            pass

    async def _close_stdin(self) -> None:
        if self._proc is None or self._proc.stdin is None:
            return
        stdin = self._proc.stdin
        if not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(stdin.wait_closed(), 1.0)
        except (OSError, TimeoutError):
            pass

    async def _join_readers(self, timeout: float) -> None:
        for task in (self._reader_task, self._stderr_task):
            if task is None or task is asyncio.current_task():
                continue
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except TimeoutError:
                task.cancel()
            except Exception:
                pass


__all__ = ["AsyncRewindClient"]
