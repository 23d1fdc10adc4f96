"""Synchronous client: a ``rewind serve`` subprocess and a reader thread."""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any

from ._generated import SyncMethods
from ._wire import (
    CHUNK_SIZE,
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


class _Pending:
    __slots__ = ("method", "event", "ok", "value")

    def __init__(self, method: str) -> None:
        self.method = method
        self.event = threading.Event()
        self.ok = False
        self.value: Any = None


class RewindClient(SyncMethods):
    """Drive a ``rewind serve`` sidecar over stdin/stdout (newline-delimited JSON-RPC 2.0).

    The process is started by the constructor. Every protocol method is a typed method
    (``client.snapshot({"kind": "tool"})``); errors raise ``RewindError`` subclasses.
    Calls are thread-safe and may run concurrently from several threads.

    Notification callbacks (``on_files_changed``, ``on_progress``, ``on_notification``)
    run on the reader thread, in order, before the response of the call that caused them
    is released. They must not call the client themselves (that would deadlock; it raises
    ``RuntimeError`` instead) — hand work to another thread if needed.

    Args:
        binary: the rewind executable (default ``$REWIND_BIN``, else ``rewind`` on PATH, else
            the one this package installed; see ``default_binary``).
        cwd / store / session: passed as ``--cwd`` / ``--store`` / ``--session``.
        args: extra arguments appended after ``serve`` and the options above.
        command: the whole argv instead (excludes binary/cwd/store/session).
        env: the child's environment (default: inherited).
        process_cwd: the child's working directory.
        timeout: default per-call timeout in seconds (None: wait indefinitely). Each
            method's ``timeout=`` overrides it.
        stderr: "capture" (default; the last lines are kept in ``stderr_tail`` and added
            to connection errors), "inherit" or "discard".
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
        self.command = build_command(
            binary, cwd=cwd, store=store, session=session, args=args, command=command
        )
        self.timeout = timeout
        self._corr = Correlator()
        self._lock = threading.Lock()  # pending, ids, state
        self._write_lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._dead: RewindConnectionError | None = None
        self._closing = False
        stderr_target: int | None
        if stderr == "capture":
            stderr_target = subprocess.PIPE
        elif stderr == "discard":
            stderr_target = subprocess.DEVNULL
        elif stderr == "inherit":
            stderr_target = None
        else:
            raise ValueError(f"stderr must be 'capture', 'inherit' or 'discard', not {stderr!r}")
        self._proc = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_target,
            bufsize=0,
            env=dict(env) if env is not None else None,
            cwd=process_cwd,
        )
        self._reader = threading.Thread(
            target=self._read_loop, name=f"rewind-reader-{self._proc.pid}", daemon=True
        )
        self._stderr_reader: threading.Thread | None = None
        if self._proc.stderr is not None:
            self._stderr_reader = threading.Thread(
                target=self._drain_stderr,
                args=(self._proc.stderr,),
                name=f"rewind-stderr-{self._proc.pid}",
                daemon=True,
            )
            self._stderr_reader.start()
        self._reader.start()

    # ------------------------------------------------------------------ public API

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the sidecar has exited, else None."""
        return self._proc.poll()

    @property
    def closed(self) -> bool:
        """True once the sidecar is gone or ``close()`` has begun."""
        return self._closing or self._dead is not None

    @property
    def stderr_tail(self) -> str:
        """The last lines the sidecar wrote to stderr (with stderr="capture")."""
        return self._corr.stderr_tail()

    def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send any method by name (untyped); the typed methods are preferable."""
        return self._call(method, params, timeout)

    def on_notification(self, callback: AnyNotificationCallback) -> Callable[[], None]:
        """Register ``callback(method, params)`` for every notification."""
        return self._corr.subscribe_any(callback)

    def close(self, timeout: float = 10.0) -> int | None:
        """Send ``shutdown``, close stdin and wait for the process to exit.

        Kills it if it has not exited after ``timeout`` seconds. Returns the exit status
        (0 after a clean shutdown). Idempotent. Pending calls fail with
        ``RewindConnectionError``.
        """
        with self._lock:
            first = not self._closing
            self._closing = True
        if first and self._dead is None and self._proc.poll() is None:
            try:
                self._send_and_wait("shutdown", None, timeout)
            except RewindException as exc:
                log.debug("shutdown during close failed: %s", exc)
        self._close_stdin()
        try:
            returncode = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("rewind (pid %d) did not exit in %g s; killing it", self._proc.pid, timeout)
            self._proc.kill()
            returncode = self._proc.wait()
        self._join_readers(timeout)
        self._fail_all(self._corr.exited_error(returncode, closing=True))
        return returncode

    def kill(self) -> None:
        """Kill the sidecar at once (no shutdown); pending calls fail."""
        with self._lock:
            self._closing = True
        self._proc.kill()
        self._proc.wait()
        self._close_stdin()
        self._join_readers(5.0)

    def __enter__(self) -> RewindClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _subscribe(self, method: str, callback: NotificationCallback) -> Callable[[], None]:
        return self._corr.subscribe(method, callback)

    def _call(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> Any:
        if self._closing:
            raise RewindConnectionError("rewind client closed")
        return self._send_and_wait(method, params, timeout)

    def _send_and_wait(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | None
    ) -> Any:
        if threading.current_thread() is self._reader:
            raise RuntimeError(
                "rewind client called from a notification callback (the reader thread); "
                "that would deadlock — call it from another thread"
            )
        effective = effective_timeout(self.timeout, timeout)
        pending = _Pending(method)
        with self._lock:
            if self._dead is not None:
                raise self._dead
            request_id = self._corr.next_id()
            data = encode_request(request_id, method, params)
            self._pending[request_id] = pending
        stdin = self._proc.stdin
        try:
            if stdin is None:
                raise BrokenPipeError("stdin is closed")
            with self._write_lock:
                stdin.write(data)
                stdin.flush()
        except (OSError, ValueError) as exc:
            with self._lock:
                self._pending.pop(request_id, None)
            # The process is probably gone: give the reader a moment to see EOF so the
            # error carries the exit status and stderr.
            self._reader.join(2.0)
            with self._lock:
                dead = self._dead
            if dead is not None:
                raise dead from exc
            raise RewindConnectionError(
                f"cannot write to rewind: {exc}", stderr=self._corr.stderr_tail()
            ) from exc
        if not pending.event.wait(effective):
            with self._lock:
                self._pending.pop(request_id, None)
            if not pending.event.is_set():
                raise RewindTimeout(method, effective if effective is not None else 0.0)
        if pending.ok:
            return pending.value
        raise pending.value

    def _read_loop(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        splitter = LineSplitter()
        try:
            while True:
                chunk = stdout.read(CHUNK_SIZE)
                if not chunk:
                    break
                for line in splitter.feed(chunk):
                    self._handle_line(line)
            tail = splitter.finish()
            if tail is not None:
                self._handle_line(tail)
        except Exception:  # never let the reader die silently with calls pending
            log.exception("rewind reader failed")
        finally:
            try:
                returncode: int | None = self._proc.wait(5.0)
            except subprocess.TimeoutExpired:
                returncode = None
            if self._stderr_reader is not None:
                self._stderr_reader.join(1.0)
            self._fail_all(self._corr.exited_error(returncode, closing=self._closing))

    def _handle_line(self, line: bytes) -> None:
        message = decode_line(line)
        if is_skip(message):
            return
        if isinstance(message, list):  # a batch: handle members in order
            for member in message:
                self._dispatch(member)
        else:
            self._dispatch(message)

    def _dispatch(self, message: object) -> None:
        kind, key, payload = classify(message)
        if kind == "notification":
            for call in self._corr.callbacks_for(str(key), payload):
                try:
                    call()
                except Exception:
                    log.exception("rewind notification callback for %r failed", key)
        elif kind == "response":
            with self._lock:
                pending = self._pending.pop(key, None) if isinstance(key, int) else None
            if pending is None:
                if key is None and isinstance(payload.get("error"), dict):
                    log.warning("rewind reported an uncorrelated error: %s", payload["error"])
                else:
                    log.debug("dropping response to unknown or timed-out id %r", key)
                return
            pending.ok, pending.value = response_value(payload, pending.method)
            pending.event.set()
        else:
            log.debug("ignoring unexpected message from rewind: %r", message)

    def _fail_all(self, error: RewindConnectionError) -> None:
        with self._lock:
            if self._dead is None:
                self._dead = error
            pending = list(self._pending.values())
            self._pending.clear()
        for p in pending:
            p.ok, p.value = False, self._dead
            p.event.set()

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        splitter = LineSplitter()
        try:
            while True:
                chunk = stream.read(CHUNK_SIZE)
                if not chunk:
                    break
                self._corr.feed_stderr(splitter, chunk)
            tail = splitter.finish()
            if tail is not None:
                self._corr.feed_stderr(splitter, tail + b"\n")
        except (OSError, ValueError):
            pass

    def _close_stdin(self) -> None:
        stdin = self._proc.stdin
        if stdin is None or stdin.closed:
            return
        # A writer blocked on a full pipe holds the lock; don't wait for it forever
        # (the process is killed later if it does not exit).
        if self._write_lock.acquire(timeout=1.0):
            try:
                stdin.close()
            except OSError:
                pass
            finally:
                self._write_lock.release()

    def _join_readers(self, timeout: float) -> None:
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout)
        if self._stderr_reader is not None:
            self._stderr_reader.join(timeout)
        readers = [(self._proc.stdout, self._reader), (self._proc.stderr, self._stderr_reader)]
        for stream, reader in readers:
            if stream is not None and (reader is None or not reader.is_alive()):
                try:
                    stream.close()
                except OSError:
                    pass


__all__ = ["RewindClient"]
