"""The ledger: a SQLite journal that makes a campaign resumable without sending anything twice.

Before a batch is POSTed its *intent* is committed (which rows, which recipients, a fingerprint
of the request) with ``synchronous=FULL``; after the answer its *result* is committed. So, whenever
the process dies:

- no intent for a row: it was never sent, and the next run sends it;
- an intent with a result: the next run skips it and returns the stored result;
- an intent without a result (or a recorded unknown outcome): the row is *unknown*. It is listed by
  :meth:`Ledger.unknown_rows` and only sent again when the analyst asks (``resend_unknown=True``).

    >>> ledger = Ledger(":memory:")
    >>> ledger.bind({"channel": "sms", "message": "Hi {name}", "sender": "Shop"})
    >>> ledger.record_intent(1, "f1", [(row_key(0), "447700900001")])
    >>> ledger.unknown_rows()["recipient"].tolist()
    ['447700900001']
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from sendframe.api.errors import InputError

__all__ = ["Ledger", "LedgerMismatchError", "row_key"]

# batch states: intent (written, no answer yet), done (answered), unknown (fate unknown), not_sent (provably not sent)
BATCH_STATES = ("intent", "done", "unknown", "not_sent")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS campaign (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
    batch INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, size INTEGER NOT NULL, state TEXT NOT NULL,
    http_status INTEGER, error_code INTEGER, error_description TEXT, campaign_id INTEGER, sending_id INTEGER,
    intent_at TEXT NOT NULL, result_at TEXT);
CREATE TABLE IF NOT EXISTS rows (
    batch INTEGER NOT NULL, position INTEGER NOT NULL, row_key TEXT NOT NULL, recipient TEXT NOT NULL,
    accepted INTEGER, id TEXT, parts INTEGER, scheduled_at TEXT, expires_at TEXT,
    error_code INTEGER, error_description TEXT, PRIMARY KEY (batch, position));
CREATE INDEX IF NOT EXISTS rows_by_key ON rows (row_key, recipient, batch);
"""

ROW_COLUMNS = ("row_key", "recipient", "batch", "state", "accepted", "id", "parts", "scheduled_at", "expires_at",
               "error_code", "error_description", "campaign_id", "sending_id")


class LedgerMismatchError(InputError):
    """The ledger belongs to a campaign with other parameters (channel, template or sender)."""


def row_key(label: object) -> str:
    """The text under which an index label is stored (JSON when possible, so ints stay ints).

        >>> row_key(3), row_key("a"), row_key(("x", 1))
        ('3', '"a"', '["x", 1]')
    """
    if hasattr(label, "item") and not isinstance(label, (str, bytes)):
        try:
            label = label.item()  # numpy scalars
        except (TypeError, ValueError):
            pass
    return json.dumps(label, default=str, ensure_ascii=False)


def _decode_key(text: str) -> object:
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Ledger:
    """A campaign's journal in one SQLite file (WAL, ``synchronous=FULL``). Thread-safe.

        >>> with Ledger(":memory:") as ledger:
        ...     ledger.unknown_rows().empty
        True
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"Ledger({self.path!r})"

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (everything is already committed)."""
        with self._lock:
            self._db.close()

    def _write(self, statements: Iterable[tuple[str, Sequence[Any] | Iterable[Sequence[Any]], bool]]) -> None:
        """Run statements in one transaction: committed together or not at all."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for sql, params, many in statements:
                    if many:
                        self._db.executemany(sql, params)  # type: ignore[arg-type]
                    else:
                        self._db.execute(sql, params)  # type: ignore[arg-type]
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # ------------------------------------------------------------------ campaign parameters

    def parameters(self) -> dict[str, str]:
        """The campaign parameters this ledger was started with ({} for a new ledger)."""
        return {key: json.loads(value) for key, value in self._query("SELECT key, value FROM campaign")}

    def bind(self, parameters: Mapping[str, Any]) -> None:
        """Tie the ledger to a campaign; refuse one whose parameters differ.

            >>> ledger = Ledger(); ledger.bind({"channel": "sms"}); ledger.bind({"channel": "voice"})  # doctest: +ELLIPSIS +IGNORE_EXCEPTION_DETAIL
            Traceback (most recent call last):
            ...
            sendframe.campaign.ledger.LedgerMismatchError: ...
        """
        stored = self.parameters()
        wanted = {key: value for key, value in parameters.items()}
        if not stored:
            self._write([("INSERT INTO campaign (key, value) VALUES (?, ?)",
                          [(k, json.dumps(v, ensure_ascii=False)) for k, v in wanted.items()], True)])
            return
        differences = [f"{key}: the ledger has {stored.get(key)!r}, this send has {wanted.get(key)!r}"
                       for key in sorted(set(stored) | set(wanted)) if stored.get(key) != wanted.get(key)]
        if differences:
            raise LedgerMismatchError(
                f"The ledger {self.path} belongs to another campaign, so it cannot be resumed with these parameters:\n  - "
                + "\n  - ".join(differences) + "\nUse a new ledger file for a new campaign.")

    # ------------------------------------------------------------------ batches

    def next_batch(self) -> int:
        """The number the next batch should take (1 for a new ledger)."""
        return int(self._query("SELECT COALESCE(MAX(batch), 0) + 1 FROM batches")[0][0])

    def record_intent(self, batch: int, fingerprint: str, rows: Sequence[tuple[str, str]]) -> None:
        """Commit, durably, that ``batch`` is about to be sent to these (row key, recipient) pairs."""
        self._write([
            ("INSERT INTO batches (batch, fingerprint, size, state, intent_at) VALUES (?, ?, ?, 'intent', ?)",
             (batch, fingerprint, len(rows), _now()), False),
            ("INSERT INTO rows (batch, position, row_key, recipient) VALUES (?, ?, ?, ?)",
             [(batch, i, key, recipient) for i, (key, recipient) in enumerate(rows)], True),
        ])

    def record_answer(self, batch: int, answer: Mapping[str, Any], http_status: int | None = None) -> None:
        """Commit the service's answer (a send response as on the wire): item by item, in order."""
        items = list(answer.get("result") or [])
        updates = []
        for position, item in enumerate(items):
            error = item.get("error") or {}
            updates.append((1 if item.get("accepted") else 0, item.get("id"), item.get("parts"), item.get("scheduledAt"),
                            item.get("expiresAt"), error.get("code"), error.get("description"), batch, position))
        self._write([
            ("UPDATE batches SET state='done', http_status=?, campaign_id=?, sending_id=?, result_at=? WHERE batch=?",
             (http_status, answer.get("campaignId"), answer.get("sendingId"), _now(), batch), False),
            ("UPDATE rows SET accepted=?, id=?, parts=?, scheduled_at=?, expires_at=?, error_code=?, error_description=? "
             "WHERE batch=? AND position=?", updates, True),
        ])

    def record_failure(self, batch: int, state: str, code: int | None, description: str,
                       http_status: int | None = None) -> None:
        """Commit a batch-level outcome: ``done`` (rejected as a whole), ``unknown`` or ``not_sent``."""
        if state not in BATCH_STATES[1:]:
            raise ValueError(f"state must be one of {BATCH_STATES[1:]}, got {state!r}")
        statements: list[tuple[str, Any, bool]] = [
            ("UPDATE batches SET state=?, http_status=?, error_code=?, error_description=?, result_at=? WHERE batch=?",
             (state, http_status, code, description, _now(), batch), False)]
        if state == "done":  # a whole-request rejection: every row rejected with the same error
            statements.append(("UPDATE rows SET accepted=0, error_code=?, error_description=? WHERE batch=?",
                               (code, description, batch), False))
        self._write(statements)

    # ------------------------------------------------------------------ reading

    def rows(self) -> pd.DataFrame:
        """Every (row, recipient) with its latest batch and what is known of it, as a frame.

        ``state`` is ``accepted``, ``rejected``, ``unknown`` or ``not_sent``.
        """
        records = self._query(
            "SELECT r.row_key, r.recipient, r.batch, b.state, r.accepted, r.id, r.parts, r.scheduled_at, r.expires_at, "
            "COALESCE(r.error_code, b.error_code), COALESCE(r.error_description, b.error_description), "
            "b.campaign_id, b.sending_id FROM rows r JOIN batches b ON b.batch = r.batch ORDER BY r.batch, r.position")
        frame = pd.DataFrame.from_records(records, columns=list(ROW_COLUMNS))
        frame = frame.drop_duplicates(["row_key", "recipient"], keep="last")
        state = frame["state"].map({"intent": "unknown", "unknown": "unknown", "not_sent": "not_sent"})
        answered = frame["state"] == "done"
        state = state.where(~answered, frame["accepted"].map({1: "accepted", 0: "rejected"}))
        frame = frame.assign(state=state.fillna("unknown"), accepted=frame["accepted"].map({1: True, 0: False}))
        return frame.reset_index(drop=True)

    def unknown_rows(self) -> pd.DataFrame:
        """Rows whose fate is unknown: sent or not, nobody knows. Check them before sending again.

        Columns: row (the index label), recipient, batch, reason, intent_at.

            >>> Ledger().unknown_rows().columns.tolist()
            ['row', 'recipient', 'batch', 'reason', 'intent_at']
        """
        rows = self.rows()
        rows = rows[rows["state"] == "unknown"]
        intents = dict(self._query("SELECT batch, intent_at FROM batches"))
        reason = rows["error_description"].fillna("the process stopped after the request was prepared, before an answer")
        return pd.DataFrame({
            "row": [_decode_key(k) for k in rows["row_key"]],
            "recipient": rows["recipient"].astype("string"),
            "batch": rows["batch"].astype("Int64"),
            "reason": reason.astype("string"),
            "intent_at": pd.to_datetime(rows["batch"].map(intents), utc=True),
        }).reset_index(drop=True)
