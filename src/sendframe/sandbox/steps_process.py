"""The steps process: a real-clock sandbox on a database file runs its carrier's rounds (planning each
accepted request's messages, applying the steps that fall due) in a process of its own, so they use the
machine's other core while the API accepts, instead of taking turns with it in one process.

The worker starts it (:class:`StepsProcess`, a :class:`~sendframe.sandbox.child_process.ChildProcess`) and
hands it the carrier's configuration on its standard input; then each byte there is a wake-up (a request
was accepted), and its end the order to stop once the round under way is written. The process runs
:class:`~sendframe.sandbox.steps.StepRunner` rounds on its own connection to the same SQLite database (WAL) until
nothing is due, then waits for a wake-up or the next step's due time; after each round that did something it
wakes the notifier process through a pipe (``--notifier-wake-fd``), as reports may have fallen due. It is the
only writer of steps (the API only adds ``plans`` rows), so a step is applied once.

Back-pressure (docs/sandbox.md): while wake-ups keep coming (a request accepted within ``BUSY_WINDOW``), it takes
only steps overdue by ``MAX_DEFERRAL``, so its rounds stay full (about ``STEP_BATCH`` messages, not one request's:
half the cost per message); and it runs at a lower priority than the API (``NICENESS``).

    StepsProcess("sandbox.sqlite", CarrierConfig.default(), notifier_wake_fd=fd).start()   # in the worker's start
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import select
import signal
import sqlite3
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sendframe.pricing import load_prices
from sendframe.sandbox import store
from sendframe.sandbox.carrier import CarrierConfig
from sendframe.sandbox.child_process import ChildProcess, write_wake
from sendframe.sandbox.state import DEFER_SLEEP, busy_since, due_cutoff, idle_wait, quiet_collector
from sendframe.sandbox.steps import StepRunner

__all__ = ["StepsProcess", "main"]

log = logging.getLogger("sendframe.sandbox.steps_process")

# below the API's priority: the steps use what accepting leaves of the machine while requests arrive, and all of it
# after (1M rehearsal, alternated: 70.6 / 73.5 s end to end at 10, 74.8 s at 0 with deferring, 84.5 s at 0 without)
NICENESS = 10
_LENGTH = struct.Struct("!I")  # the greeting: the pickled carrier configuration, after its length


@dataclass
class _StepsState:
    """What the rounds read (``steps.StepState``): the process serves no request, so it has no notifier, accounts
    or clock of a sandbox."""

    db: sqlite3.Connection
    carrier: CarrierConfig
    prices: Any


class StepsProcess(ChildProcess):
    """The parent's handle on a steps process: start, wake, stop (:class:`ChildProcess`).

        >>> process = StepsProcess("sandbox.sqlite", CarrierConfig.default(), notifier_wake_fd=9)
        >>> process.command()[-4:]  # the arguments of main()
        ['--db', 'sandbox.sqlite', '--notifier-wake-fd', '9']
    """

    name = "steps"
    entry = "from sendframe.sandbox.steps_process import main; raise SystemExit(main())"

    def __init__(self, db_path: str, carrier: CarrierConfig, *, notifier_wake_fd: int | None = None) -> None:
        super().__init__(db_path, pass_fds=() if notifier_wake_fd is None else (notifier_wake_fd,))
        self.carrier = carrier
        self.notifier_wake_fd = notifier_wake_fd

    def arguments(self) -> list[str]:
        woken = [] if self.notifier_wake_fd is None else ["--notifier-wake-fd", str(self.notifier_wake_fd)]
        return [*super().arguments(), *woken]

    def greeting(self) -> bytes:
        # the configuration as this process holds it (from a file or built in Python); a private pipe from the parent
        blob = pickle.dumps(self.carrier)
        return _LENGTH.pack(len(blob)) + blob


def _read_greeting(fd: int) -> CarrierConfig:
    def exactly(count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = os.read(fd, count - len(data))
            if not chunk:
                raise SystemExit(0)  # the sandbox stopped before this process began
            data += chunk
        return data

    (length,) = _LENGTH.unpack(exactly(_LENGTH.size))
    config = pickle.loads(exactly(length))  # noqa: S301  written by the parent sandbox on a private pipe
    if not isinstance(config, CarrierConfig):
        raise TypeError(f"the steps process expected a CarrierConfig, not {type(config).__name__}")
    return config


def run(db_path: str, carrier: CarrierConfig, notifier_wake_fd: int | None = None) -> None:
    """Run rounds of due steps on ``db_path`` until standard input ends (see the module docstring)."""
    state = _StepsState(store.connect(db_path), carrier, load_prices())
    runner = StepRunner(state)
    os.nice(NICENESS)
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))  # as the end of stdin: the round is written first
    pause, woken = 0.0, float("-inf")
    try:
        while not stopping:
            readable, _, _ = select.select([stdin], [], [], pause)
            if readable:
                try:
                    if not os.read(stdin, 4096):
                        return
                    woken = time.monotonic()
                except BlockingIOError:
                    pass
            moment, busy = time.time(), busy_since(woken)
            try:
                done = runner.apply(moment, due_cutoff(moment, busy))
            except Exception as error:  # keep going: the round was rolled back whole, its steps stay due
                store.log_round_failure(log, "sandbox steps", error, db_path)
                pause = 0.5
                continue
            if done:
                if notifier_wake_fd is not None:
                    write_wake(notifier_wake_fd)
                pause = 0.0
            elif busy:
                pause = DEFER_SLEEP
            else:
                pause = idle_wait(runner.next_due(), time.time())
    finally:
        state.db.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the steps process (:meth:`StepsProcess.command` runs this with ``--db PATH``)."""
    parser = argparse.ArgumentParser(prog="sendframe-sandbox-steps",
                                     description="Run a sandbox's carrier steps until stdin ends.")
    parser.add_argument("--db", required=True, help="the sandbox's SQLite file")
    parser.add_argument("--notifier-wake-fd", type=int, default=None,
                        help="an inherited pipe end: a byte written there wakes the notifier process")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sandbox stops this process itself (the end of stdin)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    carrier = _read_greeting(sys.stdin.fileno())
    quiet_collector()  # its rounds make many short-lived rows
    run(args.db, carrier, args.notifier_wake_fd)
    return 0
