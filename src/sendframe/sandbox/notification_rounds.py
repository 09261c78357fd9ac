"""One durable round of delivery notifications: take the due reports, send them, record the attempts.

The one place that decides what an attempt does to a report, whoever runs the round: the worker in the
server's event loop (manual clock, in-memory database), or the notifier process of a real-clock sandbox
on a database file (:mod:`sendframe.sandbox.notifier_process`). A round reads at most
``NOTIFICATION_BATCH`` due reports in one query, sends them as one batch (``Notifier.deliver_many``) and
records every attempt in one transaction (``executemany``), so a report is marked sent only once its
receiver answered 2xx: a round cut short (the process killed) leaves its reports pending, and they go
out again (at least once, docs/api-notes.md).

    >>> from sendframe.sandbox import store
    >>> db = store.connect(":memory:"); store.create_schema(db)
    >>> due_rows(db, "SELECT seq FROM notifications WHERE next_at <= ? LIMIT ?", 0.0, limit=10)
    []
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

from sendframe.sandbox.notifier import RETRY_DELAYS, Attempt, Notifier

__all__ = ["NOTIFICATION_BATCH", "Outcomes", "attempt_outcomes", "claim_due", "due_rows", "next_notification_due",
           "record_attempts", "send_due_notifications"]

NOTIFICATION_BATCH = 4000
_DUE = ("SELECT seq, message_id, url, attempts, next_at FROM notifications "
        "WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, seq LIMIT ?")
# addressed by seq and message id: a reset starts seqs again at 1, and an attempt of a round that was in flight
# across it must not mark a new report (message ids are never reused)
# the reports in flight, and every report of their messages, are skipped before the limit counts
_DUE_SKIPPING = ("SELECT seq, message_id, url, attempts, next_at FROM notifications WHERE state = 'pending' "
                 "AND next_at <= ? AND seq NOT IN (SELECT value FROM json_each(?)) AND (message_id IS NULL "
                 "OR message_id NOT IN (SELECT value FROM json_each(?))) ORDER BY next_at, seq LIMIT ?")
_SENT = ("UPDATE notifications SET state = 'sent', attempts = attempts + 1, next_at = ?, last_status = ?, "
         "last_error = NULL WHERE seq = ? AND message_id IS ?")
_FAILED = ("UPDATE notifications SET state = ?, attempts = attempts + 1, next_at = ?, last_status = ?, "
           "last_error = ? WHERE seq = ? AND message_id IS ?")


class Outcomes(NamedTuple):
    """What a round's attempts write (``sent`` and ``failed`` rows of the ``UPDATE`` statements) and their counts."""

    sent: list[tuple[float, int | None, int, str]]
    failed: list[tuple[str, float, int | None, str | None, int, str]]
    done: Counter[str]


def due_rows(db: sqlite3.Connection, query: str, at: float, *, limit: int) -> list[Any]:
    """The rows of ``query`` (its two parameters: a due time and a row limit) due at ``at``, at most ``limit``."""
    return db.execute(query, (at, limit)).fetchall()


def next_notification_due(db: sqlite3.Connection) -> float | None:
    """The earliest due time (epoch seconds) of a pending report, or ``None``.

        >>> from sendframe.sandbox import store
        >>> db = store.connect(":memory:"); store.create_schema(db); next_notification_due(db) is None
        True
    """
    return db.execute("SELECT MIN(next_at) FROM notifications WHERE state = 'pending'").fetchone()[0]  # type: ignore[no-any-return]


def claim_due(db: sqlite3.Connection, at: float, *, skip_seqs: Collection[int] = (),
              skip_messages: Collection[str] = (), limit: int = NOTIFICATION_BATCH) -> list[Any]:
    """The reports due at ``at`` that one round may send (at most ``limit``): per message only its earliest
    due ones, so ACCEPTD goes before DELIVRD; none of ``skip_seqs`` (reports in flight, still pending in the
    database) and none of a message in ``skip_messages`` (one with a report in flight: its later reports
    wait until that attempt is recorded, so a message's reports never overtake one another).

        >>> from sendframe.sandbox import store
        >>> db = store.connect(":memory:"); store.create_schema(db)
        >>> _ = db.executemany("INSERT INTO notifications (message_id, url, next_at) VALUES (?, ?, ?)",
        ...                    [("m1", "http://r/1", 1.0), ("m1", "http://r/2", 2.0), ("m2", "http://r/3", 1.5)])
        >>> [row[2] for row in claim_due(db, 5.0)]
        ['http://r/1', 'http://r/3']
        >>> [row[2] for row in claim_due(db, 5.0, skip_seqs=[1], skip_messages={"m1"})]  # m1's first in flight
        ['http://r/3']
    """
    if skip_seqs or skip_messages:
        rows = db.execute(_DUE_SKIPPING, (at, json.dumps(list(skip_seqs)), json.dumps(list(skip_messages)),
                                          limit)).fetchall()
    else:
        rows = due_rows(db, _DUE, at, limit=limit)
    first: dict[str, float] = {}
    return [r for r in rows if first.setdefault(r[1], r[4]) == r[4]]


def attempt_outcomes(claimed: Sequence[Any], attempts: Sequence[Attempt], moment: float,
                     since: float | None = None) -> Outcomes:
    """What the ``attempts`` of the ``claimed`` reports (made at ``moment``) do to them, as :func:`record_attempts`
    writes it, and the counts: a 2xx is sent; a failure is retried a delay (``RETRY_DELAYS``) after its attempt
    (at ``moment`` or, with ``since``, a manual clock's advance from ``since``, at the report's own due time);
    a refused destination, or the last retry, is given up."""
    # (next_at, last_status, seq, message_id) of each report sent
    sent = [(moment, attempt.status, row[0], row[1]) for row, attempt in zip(claimed, attempts, strict=True)
            if attempt.ok]
    # (state, next_at, last_status, last_error, seq, message_id) of each report that failed
    failed: list[tuple[str, float, int | None, str | None, int, str]] = []
    retried = given_up = 0
    last = len(RETRY_DELAYS)
    unanswered = zip(claimed, attempts, strict=True) if len(sent) < len(claimed) else ()
    for (seq, message_id, _, tries, due), attempt in unanswered:
        if attempt.ok:
            continue
        if attempt.refused or tries >= last:  # the policy refuses the destination: retrying cannot help
            failed.append(("failed", moment, attempt.status, attempt.error, seq, message_id))
            given_up += 1
        else:
            attempted = moment if since is None else max(due, since)
            failed.append(("pending", attempted + RETRY_DELAYS[tries], attempt.status, attempt.error, seq, message_id))
            retried += 1
    done: Counter[str] = Counter()
    for key, count in (("notifications_sent", len(sent)), ("notifications_retried", retried),
                       ("notifications_failed", given_up)):
        if count:
            done[key] = count
    return Outcomes(sent, failed, done)


def record_attempts(db: sqlite3.Connection, outcomes: Outcomes) -> None:
    """Write ``outcomes`` in one short transaction: every report attempted counts one attempt more."""
    with db:
        db.executemany(_SENT, outcomes.sent)
        db.executemany(_FAILED, outcomes.failed)


async def send_due_notifications(db: sqlite3.Connection, notifier: Notifier, moment: float, *,
                                 since: float | None = None, cutoff: float | None = None) -> Counter[str]:
    """Send the reports due at ``cutoff`` (default ``moment``), one batch (:func:`claim_due`), and record
    the attempts (:func:`attempt_outcomes`); return what happened to them."""
    claimed = claim_due(db, moment if cutoff is None else cutoff)
    if not claimed:
        return Counter()
    attempts = await notifier.deliver_many([r[2] for r in claimed])
    outcomes = attempt_outcomes(claimed, attempts, moment, since)
    record_attempts(db, outcomes)
    return outcomes.done
