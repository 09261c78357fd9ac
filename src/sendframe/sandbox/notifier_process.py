"""The notifier process: a real-clock sandbox on a database file sends its delivery notifications from a
process of its own, so the carrier's steps and the API never wait on a receiver (nor share a GIL with it).

The worker starts it (:class:`NotifierProcess`, a :class:`~sendframe.sandbox.child_process.ChildProcess`), and
the steps process wakes it through a pipe whenever a round may have made reports due; the process sends
overlapping rounds of due reports (:class:`~sendframe.sandbox.notification_pipeline.RoundPipeline`) on its own
connection to the same SQLite database (WAL: it reads while the others write) until nothing is due, then waits
for the next wake-up, a round's end or the next report's due time. The end of its standard input stops it once
the rounds in flight are recorded (see ``child_process`` for how it never outlives its sandbox).

    NotifierProcess("sandbox.sqlite", allow_networks=["10.0.0.0/8"]).start()   # in the worker's start
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence

from sendframe.sandbox.child_process import ChildProcess
from sendframe.sandbox.notification_pipeline import RoundPipeline, log_failure
from sendframe.sandbox.notifier import Notifier
from sendframe.sandbox.state import idle_wait, quiet_collector

__all__ = ["NotifierProcess", "main"]

log = logging.getLogger("sendframe.sandbox.notifier_process")

class NotifierProcess(ChildProcess):
    """The parent's handle on a notifier process: start, wake, stop (:class:`ChildProcess`). ``wake_fd``: the
    read end of a :func:`~sendframe.sandbox.child_process.wake_pipe` through which another helper (the steps
    process) wakes it too.

        >>> process = NotifierProcess("sandbox.sqlite", allow_networks=["10.0.0.0/8"])
        >>> process.command()[-4:]  # the arguments of main()
        ['--db', 'sandbox.sqlite', '--allow-network', '10.0.0.0/8']
    """

    name = "notifier"
    entry = "from sendframe.sandbox.notifier_process import main; raise SystemExit(main())"

    def __init__(self, db_path: str, *, allow_networks: Sequence[str] = (), wake_fd: int | None = None) -> None:
        super().__init__(db_path, pass_fds=() if wake_fd is None else (wake_fd,))
        self.allow_networks = [str(n) for n in allow_networks]
        self.wake_fd = wake_fd

    def arguments(self) -> list[str]:
        networks = [part for network in self.allow_networks for part in ("--allow-network", network)]
        woken = [] if self.wake_fd is None else ["--wake-fd", str(self.wake_fd)]
        return [*super().arguments(), *networks, *woken]


async def run(db_path: str, notifier: Notifier, wake_fd: int | None = None) -> None:
    """Send due reports in overlapping rounds (:class:`RoundPipeline`) until standard input ends, then wait
    for the rounds in flight to be recorded. A byte on standard input or on ``wake_fd`` wakes it."""
    loop = asyncio.get_running_loop()
    wake, ended = asyncio.Event(), asyncio.Event()

    def stop() -> None:
        ended.set()
        wake.set()

    def readable() -> None:
        try:
            data = os.read(sys.stdin.fileno(), 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(sys.stdin.fileno())
            stop()
        wake.set()

    def woken(fd: int) -> None:
        try:
            if not os.read(fd, 4096):  # every writer gone (the sandbox died: the end of stdin stops this process)
                loop.remove_reader(fd)
        except BlockingIOError:
            return
        wake.set()

    os.set_blocking(sys.stdin.fileno(), False)
    loop.add_reader(sys.stdin.fileno(), readable)
    if wake_fd is not None:
        os.set_blocking(wake_fd, False)
        loop.add_reader(wake_fd, woken, wake_fd)
    loop.add_signal_handler(signal.SIGTERM, stop)  # as the end of stdin: the rounds in flight are recorded first
    rounds = RoundPipeline(db_path, notifier)
    try:
        while not ended.is_set():
            wake.clear()  # before the claim: a wake-up during it ends the wait at once
            if rounds.full():
                await rounds.wait_for_a_round()
                continue
            upcoming: float | None
            try:
                if await rounds.claim_and_send(time.time()):
                    continue
                if rounds.in_flight:  # what is due waits for the round in flight (too few, or its messages')
                    await rounds.wait_for_a_round()
                    continue
                upcoming = await rounds.next_due()
            except Exception as error:  # keep going; what was not recorded stays pending and is sent again
                log_failure(error, db_path)
                upcoming = time.time() + 0.5
            timeout = idle_wait(upcoming, time.time())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await wake.wait()
    finally:
        await rounds.close()
        await notifier.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the notifier process (:meth:`NotifierProcess.command` runs this with ``--db PATH``)."""
    parser = argparse.ArgumentParser(prog="sendframe-sandbox-notifier",
                                     description="Send a sandbox's due delivery notifications until stdin ends.")
    parser.add_argument("--db", required=True, help="the sandbox's SQLite file")
    parser.add_argument("--allow-network", action="append", default=[], metavar="CIDR",
                        help="a private network notifications may reach (as the sandbox's --allow-callback-network)")
    parser.add_argument("--wake-fd", type=int, default=None, help="an inherited pipe end: each byte is a wake-up")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sandbox stops this process itself (the end of stdin)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    quiet_collector()  # its rounds make many short-lived rows too
    asyncio.run(run(args.db, Notifier(allow_loopback=True, allow_networks=args.allow_network), args.wake_fd))
    return 0
