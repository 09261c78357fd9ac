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

import sqlite3
from collections import Counter
from typing import Any

from sendframe.sandbox.notifier import RETRY_DELAYS, Notifier

__all__ = ["NOTIFICATION_BATCH", "due_rows", "next_notification_due", "send_due_notifications"]

NOTIFICATION_BATCH = 4000
_DUE = ("SELECT seq, message_id, url, attempts, next_at FROM notifications "
        "WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, seq LIMIT ?")
# addressed by seq and message id: a reset starts seqs again at 1, and an attempt of a round that was in flight
# across it must not mark a new report (message ids are never reused)
_SENT = ("UPDATE notifications SET state = 'sent', attempts = attempts + 1, next_at = ?, last_status = ?, "
         "last_error = NULL WHERE seq = ? AND message_id IS ?")
_FAILED = ("UPDATE notifications SET state = ?, attempts = attempts + 1, next_at = ?, last_status = ?, "
           "last_error = ? WHERE seq = ? AND message_id IS ?")


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


async def send_due_notifications(db: sqlite3.Connection, notifier: Notifier, moment: float, *,
                                 since: float | None = None, cutoff: float | None = None) -> Counter[str]:
    """Send the reports due at ``cutoff`` (default ``moment``), one batch; return what happened to them.

    A failed report is retried a delay (``RETRY_DELAYS``) after its attempt, made at ``moment`` or, with
    ``since`` (a manual clock's advance from ``since``), at the report's own due time; a refused destination,
    or the last retry, is given up. Per message only its earliest due reports go out in one round, so
    ACCEPTD arrives before DELIVRD."""
    rows = due_rows(db, _DUE, moment if cutoff is None else cutoff, limit=NOTIFICATION_BATCH)
    if not rows:
        return Counter()
    first: dict[str, float] = {}
    chosen = [r for r in rows if first.setdefault(r[1], r[4]) == r[4]]
    attempts = await notifier.deliver_many([r[2] for r in chosen])
    sent: list[tuple[float, int | None, int, str]] = []  # (next_at, last_status, seq, message_id)
    # (state, next_at, last_status, last_error, seq, message_id) of each report that failed
    failed: list[tuple[str, float, int | None, str | None, int, str]] = []
    retried = given_up = 0
    last = len(RETRY_DELAYS)
    for (seq, message_id, _, tries, due), attempt in zip(chosen, attempts, strict=True):
        if attempt.ok:
            sent.append((moment, attempt.status, seq, message_id))
        elif attempt.refused or tries >= last:  # the policy refuses the destination: retrying cannot help
            failed.append(("failed", moment, attempt.status, attempt.error, seq, message_id))
            given_up += 1
        else:
            attempted = moment if since is None else max(due, since)
            failed.append(("pending", attempted + RETRY_DELAYS[tries], attempt.status, attempt.error, seq, message_id))
            retried += 1
    with db:  # every report sent counts one attempt more
        db.executemany(_SENT, sent)
        db.executemany(_FAILED, failed)
    done: Counter[str] = Counter()
    for key, count in (("notifications_sent", len(sent)), ("notifications_retried", retried),
                       ("notifications_failed", given_up)):
        if count:
            done[key] = count
    return done
