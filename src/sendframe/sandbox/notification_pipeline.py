"""Overlapping rounds of delivery notifications, for the notifier process: the next round is claimed and
sent while the last one's answers come in and its attempts are written.

A round of :mod:`~sendframe.sandbox.notification_rounds` waits for its whole batch, then writes it; alone,
a notifier spent a third of its time on SQLite (the claim, the ``executemany``, the commit and its WAL
checkpoint) with nothing on the wire. Here up to ``depth`` rounds are in flight, and every SQLite call runs
on one thread of its own (SQLite lets go of the GIL while it works), one call at a time and in the order
they were made, so the event loop keeps sending and reading answers meanwhile.

The rules of a single round hold: a report is marked sent only once its receiver answered 2xx, in the
round's one short transaction (a process killed with rounds in flight leaves their reports pending: sent
again, at least once); and a message's reports never overtake one another, as a claim skips the reports
in flight (still pending in the database) and every report of a message with one in flight.

    rounds = RoundPipeline("sandbox.sqlite", notifier)
    await rounds.claim_and_send(time.time())   # how many reports went out in a new round
    await rounds.drain()                       # every round in flight answered and recorded
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from operator import itemgetter
from typing import Any, TypeVar

from sendframe.sandbox import store
from sendframe.sandbox.notification_rounds import (
    NOTIFICATION_BATCH,
    attempt_outcomes,
    claim_due,
    next_notification_due,
    record_attempts,
)
from sendframe.sandbox.notifier import Notifier

__all__ = ["OVERLAP_MINIMUM", "ROUNDS_IN_FLIGHT", "RoundPipeline", "log_failure"]

log = logging.getLogger("sendframe.sandbox.notifier_process")

# two: while one round's answers come in (and its attempts are written) the next is on the wire; the notifier's
# own bound (MAX_IN_FLIGHT unanswered requests) still holds across both
ROUNDS_IN_FLIGHT = 2
# a round beside one in flight takes at least this many reports, else the due ones wait for that round's end: many
# small rounds would cost a commit each, and each commit makes the worker's connection read its pages again
OVERLAP_MINIMUM = NOTIFICATION_BATCH // 4
T = TypeVar("T")


def log_failure(error: Exception, db_path: str) -> None:
    """Log why a round (or a claim) failed: one line naming the database for a full disk, else the traceback."""
    store.log_round_failure(log, "sandbox notifier", error, db_path)


class RoundPipeline:
    """Up to ``depth`` rounds of one sandbox database's due reports in flight; see the module docstring.

        >>> import asyncio, tempfile, os
        >>> async def demo(path):
        ...     store.create_schema(store.connect(path))
        ...     rounds = RoundPipeline(path, Notifier(allow_loopback=False))
        ...     try:
        ...         return await rounds.claim_and_send(0.0), await rounds.next_due()
        ...     finally:
        ...         await rounds.close()
        >>> asyncio.run(demo(os.path.join(tempfile.mkdtemp(), "s.sqlite")))
        (0, None)
    """

    def __init__(self, db_path: str, notifier: Notifier, *, depth: int = ROUNDS_IN_FLIGHT,
                 batch: int = NOTIFICATION_BATCH) -> None:
        if depth < 1 or batch < 1:
            raise ValueError("RoundPipeline needs depth >= 1 and batch >= 1.")
        self.db_path = db_path
        self.notifier = notifier
        self.depth = depth
        self.batch = batch
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sendframe-notifier-db")
        self._db = store.connect(db_path)  # used on that thread only, one call at a time
        self._seqs: set[int] = set()  # the reports in flight (pending in the database until recorded)
        self._messages: set[str] = set()  # the messages with a report in flight
        self._rounds: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"RoundPipeline(db_path={self.db_path!r}, depth={self.depth}, in_flight={len(self._seqs)})"

    @property
    def in_flight(self) -> int:
        """Rounds sent and not yet recorded."""
        return len(self._rounds)

    def full(self) -> bool:
        """Whether this pipeline's ``depth`` rounds are in flight already."""
        return len(self._rounds) >= self.depth

    async def _call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, lambda: function(self._db, *args, **kwargs))

    async def next_due(self) -> float | None:
        """The earliest due time of a pending report (those in flight included), or ``None``."""
        return await self._call(next_notification_due)

    async def claim_and_send(self, moment: float) -> int:
        """Claim the reports due at ``moment`` that no round in flight holds back, and send them as a new round
        (attempts made at ``moment``); how many (0 when fewer than ``OVERLAP_MINIMUM`` are
        due beside a round in flight: they wait for its end, :meth:`wait_for_a_round`). Does not wait for their
        answers. A claim writes nothing: the reports stay pending until their attempts are recorded."""
        claimed = await self._call(claim_due, moment, skip_seqs=list(self._seqs),
                                   skip_messages=frozenset(self._messages), limit=self.batch)
        if not claimed or (self._rounds and len(claimed) < min(OVERLAP_MINIMUM, self.batch)):
            return 0
        self._seqs.update(map(itemgetter(0), claimed))
        self._messages.update(map(itemgetter(1), claimed))
        task = asyncio.get_running_loop().create_task(self._round(claimed, moment))
        self._rounds.add(task)
        task.add_done_callback(self._rounds.discard)
        return len(claimed)

    async def _round(self, claimed: list[Any], moment: float) -> None:
        try:
            attempts = await self.notifier.deliver_many(list(map(itemgetter(2), claimed)))
            await self._call(record_attempts, attempt_outcomes(claimed, attempts, moment))
        except Exception as error:  # what was not recorded stays pending and is sent again
            log_failure(error, self.db_path)
        finally:  # only now may a later report of these messages go out
            self._seqs.difference_update(map(itemgetter(0), claimed))
            self._messages.difference_update(map(itemgetter(1), claimed))

    async def wait_for_a_round(self) -> None:
        """Wait until a round in flight is answered and recorded (at once when none is in flight)."""
        if self._rounds:
            await asyncio.wait(set(self._rounds), return_when=asyncio.FIRST_COMPLETED)

    async def drain(self) -> None:
        """Wait until every round in flight is answered and recorded."""
        while self._rounds:
            await asyncio.wait(set(self._rounds))

    async def close(self) -> None:
        """:meth:`drain`, then close the database connection and its thread."""
        try:
            await self.drain()
        finally:
            await self._call(lambda db: db.close())
            self._thread.shutdown(wait=True)
