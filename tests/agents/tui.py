#!/usr/bin/env python3
"""Run an agent's terminal UI in a pseudo-terminal, type one prompt, and wait
for what the screen must show.

    python3 tui.py --cwd DIR --prompt TEXT --until TEXT [--timeout S] -- AGENT ARGV...

The agent runs in DIR with this process's environment, in a 120x40 terminal.
Once its screen has been quiet for a moment (it is waiting for input), the
prompt is typed and Enter pressed; the agent is then watched until its screen
shows --until (compared without ANSI escapes or whitespace, since a terminal UI
moves its text about) and then is quiet again (its turn's end hooks done), and stopped (SIGTERM to its process group, SIGKILL
after 5 s). Exit 0 when the text appeared, 1 when it did not in time (the
screen's last 3000 characters on stderr). Anything it starts, it stops.

Node has no pseudo-terminal without a native module (tests/agents does not
build node-pty), so this is Python's standard library.
"""

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

ANSI = re.compile(rb"\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def plain(screen: bytes) -> str:
    text = ANSI.sub(b"", screen).decode("utf-8", "replace")
    return re.sub(r"\s+", "", text)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cwd", required=True)
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--until", required=True)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--quiet", type=float, default=2.0, help="seconds of silence that mean the UI waits for input")
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
    if not argv:
        ap.error("no agent command")

    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(a.cwd)
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen = bytearray()
    deadline = time.monotonic() + a.timeout

    last_output = [time.monotonic()]

    def pump(secs: float) -> None:
        """Read what the agent writes for up to `secs`."""
        end = min(time.monotonic() + secs, deadline)
        while time.monotonic() < end:
            r, _, _ = select.select([fd], [], [], 0.1)
            if not r:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                # The agent is gone (its side of the terminal closed).
                time.sleep(0.05)
                return
            screen.extend(data)
            last_output[0] = time.monotonic()

    def until_quiet() -> None:
        """Until nothing was written for `quiet` seconds."""
        while time.monotonic() < deadline and time.monotonic() - last_output[0] < a.quiet:
            pump(0.2)

    def stop() -> None:
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                return
            end = time.monotonic() + wait
            while time.monotonic() < end:
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done:
                    return
                pump(0.1)

    try:
        # Waiting for input: no output for `quiet` seconds (3 s in at least).
        pump(3.0)
        until_quiet()
        for ch in a.prompt:
            os.write(fd, ch.encode())
            time.sleep(0.005)
        pump(1.0)
        os.write(fd, b"\r")
        want = re.sub(r"\s+", "", a.until)
        while time.monotonic() < deadline:
            pump(0.5)
            if want in plain(bytes(screen)):
                # Then quiet again: the turn's end (its Stop hook) done.
                until_quiet()
                return 0
        sys.stderr.write(ANSI.sub(b"", bytes(screen)).decode("utf-8", "replace")[-3000:] + "\n")
        sys.stderr.write(f"tui.py: {a.until!r} did not appear in {a.timeout:.0f} s\n")
        return 1
    finally:
        stop()


if __name__ == "__main__":
    sys.exit(main())
