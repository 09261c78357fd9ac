"""The carrier process: a real-clock sandbox on a database file applies its carrier's steps in a process of its
own, so planning, events, statuses and report URLs take the machine's other core while the API accepts.

The worker starts it (a :class:`~sendframe.sandbox.notifier_process.HelperProcess`, with the carrier's
configuration) beside the notifier process and writes a byte to its standard input whenever a request stored new
work. While the API is busy accepting (the worker tells it so), it takes only work overdue by ``MAX_DEFERRAL``:
the steps of a message are then all due when it is planned and applied at once, none stored and read again, and
the rounds take fuller batches (the reports' dates are their due times all the same; only the moment their
notifications go out moves, as the notifier process's own deferral moves it). The process runs rounds of due steps
(:meth:`~sendframe.sandbox.worker.Worker.apply_steps`) on its own connection to the same SQLite database until
nothing is due, writing a byte to its standard output after each round (the worker then wakes the notifier
process), and waits for the next byte or the next step's due time. A
round that finds its ``work`` rows gone when it writes (a reset meanwhile, or another carrier process of the same
database) writes nothing. The end of its standard input stops it after its round: the worker closes it when the
sandbox stops, and the system when the sandbox dies, so the process never outlives its sandbox. It ignores
SIGINT (Ctrl+C in a terminal stops the sandbox, which stops it).

    python -c "from sendframe.sandbox.carrier_process import main; raise SystemExit(main())" \\
        --db sandbox.sqlite --config "$(CarrierConfig.to_text())"       # as the worker starts it
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import select
import signal
import sys
import time
from collections.abc import Sequence

from sendframe.errors import full_disk_error
from sendframe.sandbox import store
from sendframe.sandbox.carrier import CarrierConfig
from sendframe.sandbox.notifier_process import BUSY, IDLE_WAIT
from sendframe.sandbox.state import BUSY_WINDOW, DEFER_SLEEP, MAX_DEFERRAL, SandboxState, quiet_collector
from sendframe.sandbox.worker import Worker

__all__ = ["main", "run"]

log = logging.getLogger("sendframe.sandbox.carrier_process")

_ROUND_DONE = b"r"  # what the process writes to its standard output after a round that did something


def run(worker: Worker) -> None:
    """Apply due steps until standard input ends (see the module docstring)."""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    os.set_blocking(stdout, False)
    db = worker.state.db
    busy_until = 0.0  # time.monotonic() until which the API counts as busy
    while True:
        busy = time.monotonic() < busy_until
        lag = MAX_DEFERRAL if busy else 0.0
        moment = time.time()
        try:
            if worker.apply_steps(moment, moment - lag):
                wait = 0.0
                with contextlib.suppress(BlockingIOError):  # a full pipe already says a round was done
                    os.write(stdout, _ROUND_DONE)
            else:
                upcoming = db.execute("SELECT MIN(due) FROM work").fetchone()[0]
                longest = DEFER_SLEEP if busy else IDLE_WAIT
                wait = longest if upcoming is None else min(max(upcoming + lag - time.time(), 0.005), longest)
        except Exception as error:  # keep going; the round was rolled back whole and its work stays due
            full = full_disk_error(error, worker.state.db_path, store.FULL_DISK_ADVICE)
            if full is not None:
                log.error("sandbox carrier: %s", full)
            else:
                log.exception("sandbox carrier round failed")
            wait = 0.5
        heard = _listen(stdin, wait, woken_early=not busy)  # while busy, a request's wake-up does not cut the wait
        if heard is None:
            return  # the end of standard input: the sandbox stopped or died
        if BUSY in heard:
            busy_until = time.monotonic() + BUSY_WINDOW


def _listen(stdin: int, seconds: float, *, woken_early: bool) -> bytes | None:
    """What comes on standard input within ``seconds`` (until the first of it with ``woken_early``); None at its end."""
    deadline = time.monotonic() + seconds
    heard = b""
    while True:
        readable = select.select([stdin], [], [], max(deadline - time.monotonic(), 0.0))[0]
        if readable:
            data = os.read(stdin, 4096)
            if not data:
                return None
            heard += data
        if (readable and woken_early) or time.monotonic() >= deadline:
            return heard


def main(argv: Sequence[str] | None = None) -> int:
    """Run the carrier process (``--config``: :meth:`CarrierConfig.to_text` of the sandbox's carrier)."""
    parser = argparse.ArgumentParser(prog="sendframe-sandbox-carrier",
                                     description="Apply a sandbox's due carrier steps until stdin ends.")
    parser.add_argument("--db", required=True, help="the sandbox's SQLite file")
    parser.add_argument("--config", required=True, help="the carrier configuration, as the sandbox wrote it")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sandbox stops this process itself (the end of stdin)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    state = SandboxState.create(db=args.db, clock="real", carrier_config=CarrierConfig.from_text(args.config))
    quiet_collector()  # its rounds make many short-lived rows
    try:
        run(Worker(state))
    finally:
        state.db.close()
    return 0
