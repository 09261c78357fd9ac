"""The notifier process: a real-clock sandbox on a database file sends its delivery notifications from a
process of its own, so the carrier's steps and the API never wait on a receiver (nor share a GIL with it).

The worker starts it (:class:`NotifierProcess`) and writes a byte to its standard input whenever a round may
have made reports due; the process sends overlapping rounds of due reports
(:class:`~sendframe.sandbox.notification_pipeline.RoundPipeline`) on its own connection to the same SQLite
database (WAL: it reads while the worker writes) until nothing is due, then waits for the next byte, a round's
end or the next report's due time. It never waits for a busy API: it shares no GIL with it, and what is due while
the API accepts is only what the worker's own back-pressure let through. The end of its standard input stops it
once the rounds in flight are recorded: the worker closes it when the sandbox stops, and the system closes it when
the sandbox dies however it dies, so the process never outlives its sandbox. It runs in a process group of its
own and ignores SIGINT: Ctrl+C in a terminal stops the sandbox, which stops it.

    NotifierProcess("sandbox.sqlite", allow_networks=["10.0.0.0/8"]).start()   # in the worker's start
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from sendframe.sandbox.notification_pipeline import RoundPipeline, log_failure
from sendframe.sandbox.notifier import Notifier
from sendframe.sandbox.state import quiet_collector

__all__ = ["NotifierProcess", "main"]

log = logging.getLogger("sendframe.sandbox.notifier_process")

STOP_TIMEOUT = 10.0  # s: a round in flight ends within the notifier's 5 s timeout, then the process exits
RESTART_EVERY = 1.0  # s: a process that keeps ending is started again at most this often
IDLE_WAIT = 1.0  # s: the longest wait without a wake-up (a report due later than that is looked for again)
# not ``-m``: the package imports this module before ``-m`` would run it again as ``__main__``
_ENTRY = "from sendframe.sandbox.notifier_process import main; raise SystemExit(main())"
_WAKE = b"w"  # what the worker writes to the process's standard input


class NotifierProcess:
    """The parent's handle on a notifier process: start, wake, stop.

        >>> process = NotifierProcess("sandbox.sqlite", allow_networks=["10.0.0.0/8"])
        >>> process.command()[-4:]  # the arguments of main()
        ['--db', 'sandbox.sqlite', '--allow-network', '10.0.0.0/8']
    """

    def __init__(self, db_path: str, *, allow_networks: Sequence[str] = ()) -> None:
        self.db_path = db_path
        self.allow_networks = [str(n) for n in allow_networks]
        self.process: subprocess.Popen[bytes] | None = None
        self.started = float("-inf")  # time.monotonic() of the latest start

    def __repr__(self) -> str:
        pid = self.process.pid if self.process is not None else None
        return f"NotifierProcess(db_path={self.db_path!r}, pid={pid})"

    def command(self) -> list[str]:
        """The command line of the process."""
        networks = [part for network in self.allow_networks for part in ("--allow-network", network)]
        return [sys.executable, "-c", _ENTRY, "--db", self.db_path, *networks]

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        """Start the process (its standard input a pipe from this one, its output this one's)."""
        self.started = time.monotonic()
        # its own process group: a terminal's Ctrl+C reaches the sandbox, which then stops this process itself
        self.process = subprocess.Popen(self.command(), stdin=subprocess.PIPE, close_fds=True, process_group=0)
        if self.process.stdin is not None:
            os.set_blocking(self.process.stdin.fileno(), False)

    def wake(self) -> None:
        """Tell the process reports may be due (never blocks: a full pipe already holds a wake-up)."""
        stdin = self.process.stdin if self.process is not None else None
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(BlockingIOError, BrokenPipeError, ValueError):
                os.write(stdin.fileno(), _WAKE)

    def restart_if_ended(self) -> int | None:
        """Start the process again if it ended (at most once per ``RESTART_EVERY`` s); its exit status, or None."""
        process = self.process
        if process is None or process.poll() is None or time.monotonic() - self.started < RESTART_EVERY:
            return None
        self.start()
        return process.returncode

    async def stop(self) -> None:
        """Close its standard input and wait for it to record its round and exit (killed after ``STOP_TIMEOUT``)."""
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
            log.warning("the notifier process %s did not stop in %g s: killed (its round is sent again)",
                        process.pid, STOP_TIMEOUT)
            process.kill()
            process.wait()


async def run(db_path: str, notifier: Notifier) -> None:
    """Send due reports in overlapping rounds (:class:`RoundPipeline`) until standard input ends, then wait
    for the rounds in flight to be recorded."""
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

    os.set_blocking(sys.stdin.fileno(), False)
    loop.add_reader(sys.stdin.fileno(), readable)
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
            timeout = IDLE_WAIT if upcoming is None else min(max(upcoming - time.time(), 0.005), IDLE_WAIT)
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
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sandbox stops this process itself (the end of stdin)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    quiet_collector()  # its rounds make many short-lived rows too
    asyncio.run(run(args.db, Notifier(allow_loopback=True, allow_networks=args.allow_network)))
    return 0
