"""The sandbox's handle on a helper process of its own (the notifier process, the steps process): start it,
wake it, start it again if it ended, stop it.

A helper's standard input is a pipe from the sandbox: each byte written to it is a wake-up ("work may be
due"), and its end is the order to stop (the helper finishes what it is doing and exits). The sandbox
closes it when it stops, and the system closes it when the sandbox dies however it dies, so a helper never
outlives its sandbox. A helper runs in a process group of its own and ignores SIGINT: Ctrl+C in a terminal
stops the sandbox, which stops it.

    process = NotifierProcess("sandbox.sqlite"); process.start(); process.wake(); await process.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence

__all__ = ["RESTART_EVERY", "STOP_TIMEOUT", "WAKE", "ChildProcess", "wake_pipe", "write_wake"]

log = logging.getLogger("sendframe.sandbox.child_process")

STOP_TIMEOUT = 10.0  # s: a round in flight ends within the notifier's 5 s timeout, then the process exits
RESTART_EVERY = 1.0  # s: a process that keeps ending is started again at most this often
WAKE = b"w"  # what a wake-up writes


def wake_pipe() -> tuple[int, int]:
    """A pipe (read end, write end), both non-blocking: one helper wakes another through it (the steps process
    wakes the notifier process when a round made reports), and a wake-up never blocks (a full pipe already
    holds one)."""
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    return read, write


def write_wake(fd: int) -> None:
    """Write a wake-up to ``fd``: never blocks, and a reader gone is no error."""
    with contextlib.suppress(BlockingIOError, BrokenPipeError, OSError):
        os.write(fd, WAKE)


class ChildProcess:
    """A helper process run as ``python -c ENTRY ARGUMENTS``; subclasses name the entry point and arguments.

    ``pass_fds`` are file descriptors it inherits (a wake pipe's end); ``greeting`` is written to its
    standard input before anything else (what cannot go on a command line), once per start.
    """

    name = "helper"  # as the sandbox's log calls it
    entry = ""  # not ``-m``: the package imports its modules before ``-m`` would run one again as ``__main__``

    def __init__(self, db_path: str, *, pass_fds: Sequence[int] = ()) -> None:
        self.db_path = db_path
        self.pass_fds = tuple(pass_fds)
        self.process: subprocess.Popen[bytes] | None = None
        self.started = float("-inf")  # time.monotonic() of the latest start

    def __repr__(self) -> str:
        return f"{type(self).__name__}(db_path={self.db_path!r}, pid={self.pid})"

    def arguments(self) -> list[str]:
        """The arguments of the helper's ``main``."""
        return ["--db", self.db_path]

    def greeting(self) -> bytes:
        """What the helper reads from its standard input first (nothing by default)."""
        return b""

    def command(self) -> list[str]:
        """The command line of the process."""
        return [sys.executable, "-c", self.entry, *self.arguments()]

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        """Start the process (its standard input a pipe from this one, its output this one's)."""
        self.started = time.monotonic()
        # its own process group: a terminal's Ctrl+C reaches the sandbox, which then stops this process itself
        self.process = subprocess.Popen(self.command(), stdin=subprocess.PIPE, close_fds=True, process_group=0,
                                        pass_fds=self.pass_fds)
        stdin = self.process.stdin
        if stdin is not None:
            greeting = self.greeting()
            if greeting:  # small, into an empty pipe: written whole before the process reads anything else
                with contextlib.suppress(BrokenPipeError):
                    stdin.write(greeting)
                    stdin.flush()
            os.set_blocking(stdin.fileno(), False)

    def wake(self) -> None:
        """Tell the process work may be due (never blocks: a full pipe already holds a wake-up)."""
        stdin = self.process.stdin if self.process is not None else None
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(ValueError):
                write_wake(stdin.fileno())

    def restart_if_ended(self) -> int | None:
        """Start the process again if it ended (at most once per ``RESTART_EVERY`` s); its exit status, or None."""
        process = self.process
        if process is None or process.poll() is None or time.monotonic() - self.started < RESTART_EVERY:
            return None
        self.start()
        return process.returncode

    async def stop(self) -> None:
        """Close its standard input and wait for it to finish and exit (killed after ``STOP_TIMEOUT``)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        deadline = time.monotonic() + STOP_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if process.poll() is None:
            log.warning("the sandbox's %s process %s did not stop in %g s: killed (its round is done again)",
                        self.name, process.pid, STOP_TIMEOUT)
            process.kill()
            process.wait()
