"""The ledger: a SQLite journal that makes a campaign resumable without sending anything twice.

Before a batch is POSTed its *intent* is committed (which rows, which recipients, a fingerprint
of the request) with ``synchronous=FULL``, on disk before the request leaves; after the answer its
*result* is committed with ``synchronous=NORMAL`` (it survives the process being killed; a power cut
could lose it, and then the rows are only *unknown*, never sent twice). So, whenever the process dies:

- no intent for a row: it was never sent, and the next run sends it;
- an intent with a result: the next run skips it and returns the stored result;
- an intent without a result (or a recorded unknown outcome): the row is *unknown*. It is listed by
  :meth:`Ledger.unknown_rows` and only sent again when the analyst asks (``resend_unknown=True``);
- a batch recorded ``not_sent`` (the service provably processed nothing: 401/403, 413, a lasting 429,
  no connection): its rows are sent by the next run.

Which contact row is which ledger row (:meth:`Ledger.lookup`). A row is recorded under its index label
*and* its recipient. A contacts table exported again may have moved every label (a row inserted at the
top), so a resumed run matches its rows to the ledger's in two steps:

1. the same (label, recipient) pair: that ledger row;
2. otherwise by recipient and rank: the k-th still unmatched row with recipient R in the table matches
   the k-th still unmatched ledger row for R (ledger rows in the order they were first recorded).

A row left without a match is new and is sent. So a recipient the ledger has answered (accepted or
rejected) or marked unknown is never sent again because its label moved, and a table with more rows
for R than the ledger knows sends the extra ones. A matched row that is sent again (``not_sent``, or
unknown with ``resend_unknown=True``) is recorded under the ledger's label for it, the label it had
when first recorded, so the ledger keeps one row per contact; the send's result stays on the new
table's index.

The answer to a batch is checked item by item: each result item's ``to`` must name the recipient sent
at that position (see :func:`~sendframe.campaign.ledger_rows.same_recipient`). An item that does not, and a
missing item, leave the row *unknown* with a reason, never the answer of another recipient.

A full disk stops the write with ``DiskFullError`` naming the file, the transaction rolled back:
at an intent the batch is not sent; at an answer the batch was sent and its rows stay unknown, so the
next run (once there is space) does not send them again.

Two runs on one ledger at once could send a row twice: a send holds :meth:`Ledger.exclusive` (:func:`hold`), a
``filelock`` lock on the sibling file ``<ledger>.lock``, from before it reads the ledger until its last answer is
recorded, and a second run fails at once with :class:`LedgerInUseError`. The lock belongs to the process (an OS
lock, ``flock`` on POSIX): a run that is killed never leaves the ledger locked, and the ``.lock`` file left on
disk means nothing by itself.

A batch is one row of the ``batches`` table: its rows' keys and recipients are JSON arrays, and its
answer is JSON arrays of the result items' fields in request order, ``null`` for a field no item has
(one write per intent and one per answer, however big the batch). The ``rows`` view spreads them out one
row per recipient, for anyone reading the file with SQL.

    >>> ledger = Ledger(":memory:")
    >>> ledger.bind({"channel": "sms", "message": "Hi {name}", "sender": "Shop"})
    >>> ledger.record_intent(1, "f1", [("0", "447700900001")])
    >>> ledger.unknown_rows()["recipient"].tolist()
    ['447700900001']
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from filelock import FileLock, Timeout
from pydantic_core import to_json

from sendframe.api.wire import send_answer
from sendframe.campaign import ledger_rows
from sendframe.errors import InputError, LedgerInUseError, LedgerMismatchError, full_disk_error, naming_full_disk

__all__ = ["SCHEMA_VERSION", "SPENT_STATES", "Ledger", "hold", "is_ledger"]

# batch states: intent (written, no answer yet), done (answered), unknown (fate unknown), not_sent (provably not sent)
BATCH_STATES = ("intent", "done", "unknown", "not_sent")
# row states of a message that may have gone out: what a budget or a frequency cap counts as sent
SPENT_STATES = ("accepted", "unknown")
SCHEMA_VERSION = 1
# one statement each: executescript would commit the transaction the schema is written in
SCHEMA = (
    "CREATE TABLE campaign (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE batches ("
    " batch INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, size INTEGER NOT NULL, state TEXT NOT NULL,"
    " http_status INTEGER, error_code INTEGER, error_description TEXT, campaign_id INTEGER, sending_id INTEGER,"
    " intent_at TEXT NOT NULL, result_at TEXT, row_keys TEXT NOT NULL, recipients TEXT NOT NULL, answer TEXT)",
    "CREATE VIEW rows AS SELECT b.batch AS batch, CAST(k.key AS INTEGER) AS position, k.value AS row_key,"
    " json_extract(b.recipients, '$[' || k.key || ']') AS recipient, "
    + ", ".join(f"json_extract(b.answer, '$.{key}[' || k.key || ']') AS {column}"
                for key, column in ledger_rows.ANSWER_FIELDS)
    + " FROM batches b, json_each(b.row_keys) k",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

_FULL_DISK_ADVICE = ("free space and run again with the same ledger (nothing unrecorded was sent; a batch sent "
                     "whose answer could not be written stays unknown and is not sent again).")
_LEDGER_TABLES = {"batches", "rows", "campaign"}


def _json_text(value: Any) -> str:
    """Compact JSON of lists and dicts of plain values, as stored in a batch row (pydantic's serialiser: fast)."""
    return to_json(value).decode("utf-8")


def _texts(values: Sequence[str] | pa.Array) -> pa.Array:
    return values.cast(pa.string()) if isinstance(values, pa.Array) else pa.array(values, pa.string())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _tables(db: sqlite3.Connection) -> set[str]:
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def _connect(path: str, read_only: bool) -> sqlite3.Connection:
    target = f"file:{quote(str(Path(path).resolve()))}?mode=ro" if read_only else path
    return sqlite3.connect(target, uri=read_only, check_same_thread=False, isolation_level=None, timeout=30.0)


def is_ledger(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` is a sendframe ledger (an SQLite file with its tables), read without writing.

        >>> is_ledger(__file__)
        False
    """
    try:
        with contextlib.closing(_connect(os.fspath(path), read_only=True)) as db:
            return _tables(db) >= _LEDGER_TABLES
    except sqlite3.Error:  # not an SQLite file (a log, a -wal or -journal file), or none at all
        return False


def _holder(lock_path: str) -> str:
    """' (process N)' when the lock file names the process holding it, else ''."""
    with contextlib.suppress(OSError), open(lock_path, "rb") as file:
        text = file.read(32).decode("ascii", "replace").strip()
        return f" (process {text})" if text.isdigit() else ""
    return ""


@contextlib.contextmanager
def hold(ledger_path: str) -> Iterator[None]:
    """Hold the lock of the ledger at ``ledger_path`` while the block runs (see the module docstring); nothing for
    ``:memory:``. Raises :class:`LedgerInUseError` at once when another run (another process, or another thread
    of this one) holds it, naming the ledger, and an ``OSError`` naming the lock file when it cannot be created
    (a read-only folder, a full disk, a folder that does not exist).

        >>> with hold(":memory:"):
        ...     pass
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "c.sqlite")
        >>> with hold(path):
        ...     with hold(path):  # doctest: +ELLIPSIS +IGNORE_EXCEPTION_DETAIL
        ...         pass
        Traceback (most recent call last):
        ...
        sendframe.errors.LedgerInUseError: The ledger ... is in use by another run ...
    """
    if ledger_path == ":memory:" or ledger_path.startswith("file::memory:") or not ledger_path:
        yield
        return
    lock_path = ledger_path + ".lock"
    lock = FileLock(lock_path, blocking=False)
    try:
        if not os.path.isdir(os.path.dirname(os.path.abspath(lock_path))):  # filelock would create it: a typo
            raise FileNotFoundError(errno.ENOENT, "no such folder")
        held = lock.acquire()
        with open(lock_path, "r+b") as file:  # filelock does not truncate it: the holder is readable to a second run
            file.truncate(0)
            file.write(str(os.getpid()).encode("ascii"))
    except Timeout:
        raise LedgerInUseError(
            f"The ledger {ledger_path} is in use by another run{_holder(lock_path)}: two runs sending with one "
            "ledger at once could send a row twice. Wait for the other run to finish (or stop it), then run again "
            f"(the lock is held on {lock_path}).") from None
    except OSError as exc:
        lock.release()
        advice = f"the lock file of the ledger {ledger_path} cannot be written, so nothing was sent; free space and " \
                 "run again with the same ledger."
        raise full_disk_error(exc, lock_path, advice) or type(exc)(
            exc.errno, f"The lock file {lock_path} of the ledger {ledger_path} cannot be created or written "
            f"({exc.strerror or exc}): the ledger's folder must be writable and have free space", lock_path) from exc
    with held:
        yield


class Ledger:
    """A campaign's journal in one SQLite file (WAL; intents ``synchronous=FULL``). Thread-safe.

        >>> with Ledger(":memory:") as ledger:
        ...     ledger.unknown_rows().empty
        True
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, read_only: bool = False) -> None:
        """``read_only``: read an existing ledger (an earlier campaign's) without writing to its file;
        a file that is no ledger, or of another format, is refused with ``InputError``."""
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._durable = True
        if read_only and not is_ledger(self.path):
            raise InputError(f"The file {self.path!r} is not a sendframe ledger (it has no batches table).")
        with naming_full_disk(self.path, _FULL_DISK_ADVICE):
            self._db = _connect(self.path, read_only)
            try:
                if read_only:
                    self._checked_schema()
                else:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("PRAGMA synchronous=FULL")
                    self._write(self._checked_schema)
            except BaseException:
                self._db.close()
                raise

    def _checked_schema(self) -> None:
        """Refuse a newer ledger or an SQLite file of other tables; write the schema into an empty file."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise InputError(f"The ledger {self.path} was written by a newer sendframe (ledger format {version}, "
                             f"this one reads up to {SCHEMA_VERSION}); upgrade sendframe to resume it.")
        tables = _tables(self._db)
        if version < SCHEMA_VERSION and tables:
            raise InputError(f"{self.path} is a SQLite file but not a sendframe ledger (it holds the tables "
                             f"{', '.join(sorted(tables))}); give the send a new file name.")
        if not tables:
            for statement in SCHEMA:
                self._db.execute(statement)

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

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """Hold this ledger for one run: an OS lock on ``<ledger>.lock`` (see :func:`hold`).

        Another run (process or thread) asking for it meanwhile gets :class:`LedgerInUseError` at once,
        naming the file. An in-memory ledger needs no lock.

            >>> with Ledger(":memory:").exclusive():
            ...     pass
        """
        return hold(self.path)

    def _write(self, work: Any, *args: Any, durable: bool = True) -> None:
        """Run ``work(*args)`` (statements on ``self._db``) in one transaction: committed together or not at all.

        ``durable``: the commit waits until it is on disk (``synchronous=FULL``); otherwise it survives the
        process dying but not a power cut (``NORMAL``), which is enough for what only turns unknown into known.

        A full disk raises ``DiskFullError`` naming the ledger; nothing of the transaction is kept."""
        with self._lock, naming_full_disk(self.path, _FULL_DISK_ADVICE):
            if durable != self._durable:
                self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
                self._durable = durable
            self._db.execute("BEGIN IMMEDIATE")
            try:
                work(*args)
                self._db.execute("COMMIT")  # on a full disk the commit itself fails (the WAL cannot grow)
            except BaseException:
                if self._db.in_transaction:  # SQLite rolls back some failed commits itself
                    self._db.execute("ROLLBACK")
                raise

    def _execute(self, sql: str, params: Sequence[Any] = (), *, durable: bool = True) -> None:
        self._write(self._db.execute, sql, params, durable=durable)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # ------------------------------------------------------------------ campaign parameters

    def parameters(self) -> dict[str, str]:
        """The campaign parameters this ledger was started with ({} for a new ledger)."""
        return {key: json.loads(value) for key, value in self._query("SELECT key, value FROM campaign")}

    def bind(self, parameters: Mapping[str, Any]) -> None:
        """Tie the ledger to a campaign; refuse one whose parameters differ.

            >>> ledger = Ledger(); ledger.bind({"channel": "sms"})
            >>> ledger.bind({"channel": "voice"})  # doctest: +ELLIPSIS +IGNORE_EXCEPTION_DETAIL
            Traceback (most recent call last):
            ...
            sendframe.campaign.ledger.LedgerMismatchError: ...
        """
        stored = self.parameters()
        if not stored:
            self._write(self._db.executemany, "INSERT INTO campaign (key, value) VALUES (?, ?)",
                        [(k, json.dumps(v, ensure_ascii=False)) for k, v in parameters.items()])
            return
        differences = [f"{key}: the ledger has {stored.get(key)!r}, this send has {parameters.get(key)!r}"
                       for key in sorted(set(stored) | set(parameters)) if stored.get(key) != parameters.get(key)]
        if differences:
            raise LedgerMismatchError(f"The ledger {self.path} belongs to another campaign, so it cannot be resumed "
                                      "with these parameters:\n  - " + "\n  - ".join(differences)
                                      + "\nUse a new ledger file for a new campaign.")

    # ------------------------------------------------------------------ batches

    def next_batch(self) -> int:
        """The number the next batch should take (1 for a new ledger)."""
        return int(self._query("SELECT COALESCE(MAX(batch), 0) + 1 FROM batches")[0][0])

    def record_intent(self, batch: int, fingerprint: str, rows: Sequence[tuple[str, str]]) -> None:
        """Commit, durably, that ``batch`` is about to be sent to these (row key, recipient) pairs.

            >>> Ledger().record_intent(1, "f1", [('"a"', "447700900001")])
        """
        keys, recipients = _json_text([key for key, _ in rows]), _json_text([recipient for _, recipient in rows])
        self._execute("INSERT INTO batches (batch, fingerprint, size, state, intent_at, row_keys, recipients) "
                      "VALUES (?, ?, ?, 'intent', ?, ?, ?)", (batch, fingerprint, len(rows), _now(), keys, recipients))

    def record_answer(self, batch: int, answer: Any, http_status: int | None = None, *,
                      sent: Sequence[str] | None = None) -> int:
        """Commit the service's answer, item by item in request order; return how many rows it leaves unknown.

        ``answer`` is a send response as on the wire (a dict), a ``SendResponse`` or a ``wire.SendAnswer``.
        Each item's ``to`` is checked against the recipient sent at its position (``sent``, read from the
        batch's intent when not given): an item for another recipient, or a missing item, leaves its row
        unknown rather than giving it someone else's answer.

            >>> ledger = Ledger(); ledger.record_intent(1, "f1", [("0", "447700900001")])
            >>> answer = {"campaignId": 1, "sendingId": 2, "result": [{"accepted": True, "to": "447700900001"}]}
            >>> ledger.record_answer(1, answer)
            0
            >>> ledger.rows()["state"].tolist()
            ['accepted']
        """
        if sent is None:
            found = self._query("SELECT recipients FROM batches WHERE batch=?", (batch,))
            if not found:
                raise ValueError(f"batch {batch} has no intent in the ledger {self.path}; record_intent comes first.")
            sent = json.loads(found[0][0])
        answered = send_answer(answer)  # a SendResponse or wire dict is read through the same rules
        kept, unknown = ledger_rows.checked_columns(answered, sent)
        # a column without any value (no errors, no schedule: the usual answer) is kept as one null
        columns = _json_text({key: values if values.count(None) < len(values) else None
                              for key, values in kept.items()})
        campaign_id, sending_id = answered.campaign_id, answered.sending_id
        self._execute("UPDATE batches SET state='done', http_status=?, campaign_id=?, sending_id=?, result_at=?, "
                      "answer=? WHERE batch=?", (http_status, campaign_id, sending_id, _now(), columns, batch),
                      durable=False)
        return unknown

    def record_failure(self, batch: int, state: str, code: int | None, description: str,
                       http_status: int | None = None) -> None:
        """Commit a batch-level outcome: ``done`` (rejected as a whole), ``unknown`` or ``not_sent``.

            >>> ledger = Ledger(); ledger.record_intent(1, "f1", [("0", "447700900001")])
            >>> ledger.record_failure(1, "done", 100, "from: not a valid sender", 400)
            >>> ledger.rows()["state"].tolist()
            ['rejected']
        """
        if state not in BATCH_STATES[1:]:
            raise ValueError(f"state must be one of {BATCH_STATES[1:]}, got {state!r}")
        # a whole-request rejection drops any answer: every row is rejected with the batch's error
        answer = "answer" if state != "done" else "NULL"
        self._execute(f"UPDATE batches SET state=?, http_status=?, error_code=?, error_description=?, result_at=?, "
                      f"answer={answer} WHERE batch=?", (state, http_status, code, description, _now(), batch),
                      durable=False)

    # ------------------------------------------------------------------ reading

    def _row_columns(self, batches: Sequence[int] | None = None) -> dict[str, pa.Array]:
        """Every stored (row, recipient) of every batch (or of ``batches``), in batch and request order, by column
        (:func:`~sendframe.campaign.ledger_rows.row_columns`)."""
        only = "" if batches is None else " WHERE batch IN (SELECT value FROM json_each(?))"
        params = () if batches is None else (_json_text([int(b) for b in batches]),)
        stored = self._query("SELECT batch, state, row_keys, recipients, answer, error_code, error_description, "
                             f"campaign_id, sending_id FROM batches{only} ORDER BY batch", params)
        return ledger_rows.row_columns(stored)

    def rows(self) -> pd.DataFrame:
        """Every (row, recipient) with its latest batch and what is known of it, as a frame.

        ``state`` is ``accepted``, ``rejected``, ``unknown`` or ``not_sent``. Texts are ``string``, numbers
        ``Int64`` and ``accepted`` ``boolean`` (missing values ``<NA>``); times are the wire's text.

            >>> Ledger().rows().columns.tolist()[:4]
            ['row_key', 'recipient', 'batch', 'state']
        """
        columns = self._row_columns()
        pairs = pd.DataFrame({"row_key": columns["row_key"].to_pandas(), "recipient": columns["recipient"].to_pandas()})
        latest = ~pairs.duplicated(keep="last").to_numpy()  # a row sent again: its last batch wins
        return ledger_rows.typed_frame(columns, None if latest.all() else np.flatnonzero(latest).tolist())

    def batch_rows(self) -> pd.DataFrame:
        """Every (row, recipient) once per batch that carried it (a row sent again appears again), with the
        columns of :meth:`rows` and the batch's ``intent_at`` (tz-aware UTC): what a send history reads.

            >>> ledger = Ledger(); ledger.record_intent(1, "f1", [("0", "447700900001")])
            >>> ledger.record_intent(2, "f2", [("0", "447700900001")])
            >>> ledger.batch_rows()[["batch", "state"]].values.tolist()
            [[1, 'unknown'], [2, 'unknown']]
        """
        frame = ledger_rows.typed_frame(self._row_columns())
        frame["intent_at"] = self._intent_times(frame["batch"])
        return frame

    def _intent_times(self, batches: pd.Series) -> pd.Series:
        """When each of ``batches`` had its intent recorded (tz-aware UTC)."""
        intents = dict(self._query("SELECT batch, intent_at FROM batches"))
        return pd.to_datetime(batches.map(intents), utc=True, format="ISO8601")

    def key_spans(self) -> dict[int, tuple[int, int]]:
        """Each batch's smallest and largest row key read as a whole number (0 for a key that is not one),
        in one SQL pass: where a send keyed by position (0, 1, ...) finds the batches a range of rows is in.

            >>> ledger = Ledger(); ledger.record_intent(1, "f1", [("7", "447700900001"), ("3", "4477")])
            >>> ledger.key_spans()
            {1: (3, 7)}
        """
        return {batch: (low, high) for batch, low, high in self._query(
            "SELECT b.batch, MIN(CAST(k.value AS INTEGER)), MAX(CAST(k.value AS INTEGER)) "
            "FROM batches b, json_each(b.row_keys) k GROUP BY b.batch")}

    def lookup(self, keys: Sequence[str] | pa.Array, recipients: Sequence[str] | pa.Array, *,
               batches: Sequence[int] | None = None) -> pd.DataFrame:
        """What is known of each (row key, recipient) pair, in their order: the columns of :meth:`rows`,
        ``<NA>`` (state included) for a row the ledger has no record of. The pairs are expected unique.

        Rows are matched as the module docstring says: the same (key, recipient) pair first, then by
        recipient and rank, so a table whose labels moved still finds its rows. ``row_key`` is the
        ledger's key of the matched row (the given key for a row without a match): the key under
        which the row is recorded if it is sent again.

            >>> ledger = Ledger(); ledger.record_intent(1, "f1", [("0", "447700900001")])
            >>> ledger.lookup(["1", "0"], ["447700900002", "447700900001"])["state"].tolist()
            [<NA>, 'unknown']
            >>> moved = ledger.lookup(["0", "1"], ["447700900002", "447700900001"])
            >>> moved["state"].tolist(), moved["row_key"].tolist()
            ([<NA>, 'unknown'], ['0', '0'])

        ``batches``: only these batches are read (the caller knows its rows are in no other one, e.g.
        from :meth:`key_spans`), so a lookup of a few rows in a big ledger reads only theirs.
        """
        columns = self._row_columns(batches)
        keys, recipients = _texts(keys), _texts(recipients)
        if columns["row_key"].equals(keys) and columns["recipient"].equals(recipients):
            return ledger_rows.typed_frame(columns)  # the usual case: every row sent once, in order
        positions = ledger_rows.match_rows(columns["row_key"], columns["recipient"], keys, recipients)
        matched = columns["row_key"].take(pa.array(positions, pa.int64()))
        return ledger_rows.typed_frame(columns, positions, row_key=pc.coalesce(matched, keys), recipient=recipients)

    def settle(self, tags: Mapping[str, str]) -> int:
        """Mark rows of unknown batches accepted when a delivery notification carried their tag.

        ``tags`` maps a row's :func:`~sendframe.campaign.ledger_rows.row_tag` (the ``sf_row`` parameter of its
        notificationUrl) to the message id the notification gave (``%i``). The row's item of its batch's answer
        becomes an accepted one with that id. Returns how many rows were settled.

            >>> ledger = Ledger(); ledger.record_intent(1, "f1", [("0", "447700900001")])
            >>> ledger.settle({ledger_rows.row_tag("0", "447700900001"): "a1b2"}), ledger.rows()["id"].tolist()
            (1, ['a1b2'])
        """
        if not tags:
            return 0
        rows = self.rows()
        unknown = rows[rows["state"] == "unknown"]
        tagged = unknown.assign(tag=[ledger_rows.row_tag(key, recipient) for key, recipient in
                                     zip(unknown["row_key"], unknown["recipient"], strict=True)])
        found = tagged[tagged["tag"].isin(list(tags))]
        if len(found):
            self._write(self._accept, found, tags, durable=False)
        return len(found)

    def _accept(self, found: pd.DataFrame, tags: Mapping[str, str]) -> None:
        for batch in found["batch"].unique().tolist():
            rows = found[found["batch"] == batch]
            keys, recipients, stored = self._db.execute("SELECT row_keys, recipients, answer FROM batches "
                                                        "WHERE batch=?", (batch,)).fetchone()
            position = {pair: i for i, pair in enumerate(zip(json.loads(keys), json.loads(recipients), strict=True))}
            answer = json.loads(stored or "{}")
            items = {name: ledger_rows.fitted(answer.get(name), len(position)) for name, _ in ledger_rows.ANSWER_FIELDS}
            for key, recipient, tag in zip(rows["row_key"], rows["recipient"], rows["tag"], strict=True):
                at = position[(key, recipient)]
                items["errorCode"][at] = items["errorDescription"][at] = None
                items["accepted"][at], items["id"][at] = True, tags[tag]
            self._db.execute("UPDATE batches SET answer=? WHERE batch=?", (_json_text(items), batch))

    def unknown_rows(self) -> pd.DataFrame:
        """Rows whose fate is unknown: sent or not, nobody knows. Check them before sending again.

        Columns: row (the index label), recipient, batch, reason, intent_at.

            >>> Ledger().unknown_rows().columns.tolist()
            ['row', 'recipient', 'batch', 'reason', 'intent_at']
        """
        rows = self.rows()
        rows = rows[rows["state"] == "unknown"].reset_index(drop=True)
        reason = rows["error_description"].fillna("the process stopped after the request was prepared, before an "
                                                  "answer")
        return pd.DataFrame({"row": [tuple(v) if isinstance(v := json.loads(k), list) else v for k in rows["row_key"]],
                             "recipient": rows["recipient"], "batch": rows["batch"], "reason": reason,
                             "intent_at": self._intent_times(rows["batch"])})
