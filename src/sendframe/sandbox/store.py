"""Durable sandbox state in SQLite (WAL): messages, events, pending work, notifications, campaigns.

The store knows nothing of HTTP. Every function takes the open connection; writes go through one
transaction per call (``with db:``), many rows at a time (``executemany``). On a full disk a write fails
and its transaction is rolled back whole: the routes answer 507 (``web``), the worker tries again later.

    >>> db = connect(":memory:")
    >>> create_schema(db)
    >>> campaign_and_sending(db, "demo", None)
    (1, 1)
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, overload

from sendframe.errors import ConfigurationError, full_disk_error

__all__ = [
    "FULL_DISK_ADVICE",
    "SCHEMA",
    "SENDING_DETAILS",
    "campaign_and_sending",
    "connect",
    "create_schema",
    "is_file",
    "iso",
    "lookup_records",
    "message_rows",
    "reset",
    "table_names",
]

SCHEMA: tuple[str, ...] = (
    # What every message of a request shares lives in its sending; a message row holds only its own values.
    # A NULL sender, notification_url or extra means the sending's. What the carrier's steps change (status,
    # delivered, mnc, the date of the sent event) lives in a narrow row of message_progress (by the message's
    # rowid), written from its plan on: a round of steps touches a few rows of many messages, and narrow rows put
    # them on a few pages instead of one page each. No progress row (or a NULL status) means the sending's status.
    # Read messages through message_view, which puts the three together.
    """CREATE TABLE IF NOT EXISTS messages (
        id TEXT PRIMARY KEY, sending_id INTEGER NOT NULL, recipient TEXT, message TEXT, parts INTEGER,
        is_clicked INTEGER DEFAULT 0, is_opened INTEGER DEFAULT 0,
        custom_fields TEXT, cost REAL, sender TEXT, notification_url TEXT, extra TEXT)""",
    "CREATE INDEX IF NOT EXISTS messages_by_sending ON messages (sending_id)",
    """CREATE TABLE IF NOT EXISTS message_progress (
        row INTEGER PRIMARY KEY, status TEXT, is_delivered INTEGER NOT NULL DEFAULT 0, mnc TEXT, sent_at TEXT)""",
    # events and notifications are never deleted but by a reset, so a plain rowid gives each row a new seq as
    # AUTOINCREMENT would, without updating sqlite_sequence for every row inserted (a third of an insert's CPU)
    """CREATE TABLE IF NOT EXISTS events (
        message_id TEXT, seq INTEGER PRIMARY KEY, type TEXT, date TEXT,
        is_mobile INTEGER DEFAULT 0, browser TEXT DEFAULT '', os TEXT DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS events_by_message ON events (message_id, seq)",
    """CREATE TABLE IF NOT EXISTS work (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, due REAL NOT NULL, message_id TEXT NOT NULL,
        kind TEXT NOT NULL, payload TEXT NOT NULL DEFAULT '{}')""",
    "CREATE INDEX IF NOT EXISTS work_by_due ON work (due, seq)",
    """CREATE TABLE IF NOT EXISTS notifications (
        seq INTEGER PRIMARY KEY, message_id TEXT, url TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
        last_status INTEGER, last_error TEXT, created_at TEXT)""",
    # only pending reports are looked for by due time: a report sent leaves this index (not moved within it)
    "CREATE INDEX IF NOT EXISTS notifications_due ON notifications (next_at, seq) WHERE state = 'pending'",
    """CREATE TABLE IF NOT EXISTS campaigns (
        id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, name TEXT, created_at TEXT)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS campaigns_by_name ON campaigns (account, name) WHERE name IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS sendings (
        id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, campaign_id INTEGER NOT NULL,
        channel TEXT, tags TEXT, created_at TEXT, sender TEXT, status TEXT, notification_url TEXT,
        scheduled_at TEXT, expires_at TEXT, extra TEXT)""",
    """CREATE VIEW IF NOT EXISTS message_view AS SELECT
        m.rowid AS row_number, m.id, s.account, s.channel, s.campaign_id, m.sending_id,
        COALESCE(m.sender, s.sender) AS sender, m.recipient, m.message, m.parts, COALESCE(p.status, s.status) AS status,
        COALESCE(p.is_delivered, 0) AS is_delivered, m.is_clicked, m.is_opened, m.custom_fields,
        COALESCE(m.notification_url, s.notification_url) AS notification_url, m.cost, p.mnc,
        s.scheduled_at, s.expires_at, s.created_at, COALESCE(m.extra, s.extra) AS extra, p.sent_at
    FROM messages AS m JOIN sendings AS s ON s.id = m.sending_id LEFT JOIN message_progress AS p ON p.row = m.rowid""",
)

# what a full disk under the database means, in the sandbox's log (a refused request is answered 507)
FULL_DISK_ADVICE = ("the sandbox refuses the requests it cannot store (507, nothing of them kept) and its worker "
                    "waits; free space and both go on.")



def log_round_failure(log: logging.Logger, who: str, error: Exception, db_path: str) -> None:
    """Log why a background round failed (it was rolled back whole and is done again): one line naming the
    database when its disk is full, else the traceback.

        >>> log_round_failure(logging.getLogger("doc"), "sandbox worker", OSError(28, "No space left"), "s.sqlite")
    """
    full = full_disk_error(error, db_path, FULL_DISK_ADVICE)
    if full is not None:
        log.error("%s: %s", who, full)
    else:
        log.exception("%s round failed", who)


_TABLE_NAME = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`]?(\w+)", re.IGNORECASE)


@overload
def iso(moment: datetime) -> str: ...
@overload
def iso(moment: None) -> None: ...
def iso(moment: datetime | None) -> str | None:
    """A datetime as the wire's ISO 8601 form in UTC, seconds precision; ``None`` stays ``None``.

        >>> iso(datetime(2026, 11, 21, 9, 30, 4, 500, tzinfo=UTC))
        '2026-11-21T09:30:04+00:00'
    """
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def is_file(path: str) -> bool:
    """Whether ``path`` names a database file another process can open too (not ``:memory:``, nor a URI).

        >>> is_file("sandbox.sqlite"), is_file(":memory:")
        (True, False)
    """
    return path not in (":memory:", "") and not path.startswith("file:")


def connect(path: str) -> sqlite3.Connection:
    """Open the sandbox database: ``":memory:"`` (one private connection) or a file in WAL mode.

    A new file is created readable and writable by its owner only (0600), whatever the umask: it holds
    message texts (OTP codes included), notification URLs with their receivers' tokens, and unsubscribe
    tokens. SQLite gives its ``-wal`` and ``-shm`` files the same mode.

        >>> connect(":memory:").execute("select 1").fetchone()
        (1,)
    """
    if is_file(path):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))  # created 0600, or left as the owner set it
    db = sqlite3.connect(path, check_same_thread=False, isolation_level="DEFERRED")
    if path != ":memory:":
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        # checkpoint every 40 MB of WAL, not every 4 MB: a message's row, its work rows and its notifications'
        # pages are written several times within seconds, and a page rewritten between checkpoints is copied
        # (and fsynced) to the database file once
        db.execute("PRAGMA wal_autocheckpoint=10000")
    db.execute("PRAGMA busy_timeout=5000")
    db.execute("PRAGMA cache_size=-65536")
    db.execute("PRAGMA temp_store=MEMORY")
    return db


SCHEMA_VERSION = 5  # 2: what a request's messages share moved to sendings; 3: the carrier's changes to
# message_progress; 4: the due index holds pending reports only; 5: events and notifications without AUTOINCREMENT


def create_schema(db: sqlite3.Connection, extra: Iterable[str | Sequence[str]] = ()) -> None:
    """Create our tables and the ``extra`` ``SCHEMA`` statements of other modules (idempotent).

    A database written by an older sandbox (another layout) is refused with a clear error."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION and db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages'").fetchone():
        where = db.execute("PRAGMA database_list").fetchone()[2] or "this database"
        raise ConfigurationError(f"The sandbox database {where} was written by another version of sendframe (layout "
                                 f"{version}, this one reads layout {SCHEMA_VERSION}); delete it or start the sandbox "
                                 "with a new --db file.")
    with db:
        for statement in [*SCHEMA, *_flatten(extra)]:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _flatten(items: Iterable[str | Sequence[str]]) -> list[str]:
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        else:
            out.extend(_flatten(item))
    return out


def table_names(extra: Iterable[str | Sequence[str]] = ()) -> list[str]:
    """Names of the tables created by our ``SCHEMA`` and the ``extra`` statements.

        >>> table_names()
        ['messages', 'message_progress', 'events', 'work', 'notifications', 'campaigns', 'sendings']
    """
    return [m.group(1) for s in [*SCHEMA, *_flatten(extra)] if (m := _TABLE_NAME.search(s))]


def reset(db: sqlite3.Connection, extra: Iterable[str | Sequence[str]] = ()) -> None:
    """Delete every row of every sandbox table (ids start again at 1)."""
    names = table_names(extra)
    with db:
        for name in names:
            db.execute(f'DELETE FROM "{name}"')
        if db.execute("SELECT 1 FROM sqlite_master WHERE name='sqlite_sequence'").fetchone():
            db.execute("DELETE FROM sqlite_sequence")


SENDING_DETAILS = ("sender", "status", "notification_url", "scheduled_at", "expires_at", "extra")


def campaign_and_sending(db: sqlite3.Connection, account: str, campaign_name: str | None,
                         *, channel: str = "sms", tags: Sequence[str] | None = None, now: datetime | None = None,
                         details: Mapping[str, Any] | None = None) -> tuple[int, int]:
    """Find or create the campaign (a known ``campaign_name`` is reused per account) and create a sending.

    ``details`` are what the sending's messages share (keys of :data:`SENDING_DETAILS`; a message row
    leaves them NULL unless its own value differs). Runs inside the caller's transaction when there is one.
    """
    created = iso(now or datetime.now(UTC))
    row = None
    if campaign_name is not None:
        row = db.execute("SELECT id FROM campaigns WHERE account=? AND name=?", (account, campaign_name)).fetchone()
    if row is None:
        campaign_id = _inserted_id(db.execute("INSERT INTO campaigns (account, name, created_at) VALUES (?, ?, ?)",
                                              (account, campaign_name, created)))
    else:
        campaign_id = row[0]
    shared = [(details or {}).get(name) for name in SENDING_DETAILS]
    sending_id = _inserted_id(db.execute(
        f"INSERT INTO sendings (account, campaign_id, channel, tags, created_at, {', '.join(SENDING_DETAILS)}) "
        f"VALUES (?, ?, ?, ?, ?, {', '.join('?' * len(SENDING_DETAILS))})",
        (account, campaign_id, channel, json.dumps(list(tags or [])), created, *shared)))
    return int(campaign_id), sending_id


def _inserted_id(cursor: sqlite3.Cursor) -> int:
    # sqlite3 types lastrowid as optional; after a successful single-row INSERT it is the new row's id
    if cursor.lastrowid is None:
        raise sqlite3.DatabaseError("the INSERT stored no row")
    return cursor.lastrowid


_MESSAGE_COLUMNS = ("id", "account", "channel", "campaign_id", "sending_id", "sender", "recipient", "message", "parts",
                    "status", "is_delivered", "is_clicked", "is_opened", "custom_fields", "notification_url", "cost",
                    "mnc", "scheduled_at", "expires_at", "created_at", "extra")


def message_rows(db: sqlite3.Connection, where: str = "", params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Messages (all columns) with their events as a list under ``events`` and their delivery notifications
    under ``notifications`` (url, state, attempts, last_status, last_error), oldest message first."""
    cursor = db.execute(f"SELECT {', '.join(_MESSAGE_COLUMNS)} FROM message_view {where} ORDER BY row_number",
                        tuple(params))
    rows = [dict(zip(_MESSAGE_COLUMNS, r, strict=True)) for r in cursor.fetchall()]
    ids = [r["id"] for r in rows]
    events, notifications = _events_of(db, ids), _notifications_of(db, ids)
    for row in rows:
        row["events"] = events.get(row["id"], [])
        row["notifications"] = notifications.get(row["id"], [])
    return rows


def _notifications_of(db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    # one scan in seq order (no index by message: it would slow every notification insert for this view's sake)
    wanted = set(ids)
    out: dict[str, list[dict[str, Any]]] = {}
    for message_id, url, state, attempts, status, error in db.execute(
            "SELECT message_id, url, state, attempts, last_status, last_error FROM notifications ORDER BY seq"):
        if message_id in wanted:
            out.setdefault(message_id, []).append({"url": url, "state": state, "attempts": attempts,
                                                   "last_status": status, "last_error": error})
    return out


def _events_of(db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for message_id, kind, date, mobile, browser, os_name in db.execute(
            # message_id, seq: the index (message_id, seq) gives the order, no temporary B-tree sort
            f"SELECT message_id, type, date, is_mobile, browser, os FROM events WHERE message_id IN ({marks}) "
            "ORDER BY message_id, seq", chunk
        ):
            out.setdefault(message_id, []).append(
                {"type": kind, "date": date, "isMobile": bool(mobile), "browser": browser or "", "os": os_name or ""})
    return out


# One lookup record as JSON text, built by SQLite (json1) straight from the row and its events (by the
# (message_id, seq) index, in seq order): no per-record dicts or json.dumps in Python. Same shape as the
# spec's record: booleans as true/false, customFields the stored JSON object, links.self the full address.
_RECORD_JSON = """SELECT m.id, json_object(
    'id', m.id, 'from', COALESCE(m.sender, s.sender), 'to', m.recipient, 'message', m.message,
    'campaignId', s.campaign_id, 'sendingId', m.sending_id,
    'isDelivered', json(CASE WHEN p.is_delivered THEN 'true' ELSE 'false' END),
    'isClicked', json(CASE WHEN m.is_clicked THEN 'true' ELSE 'false' END),
    'events', (SELECT json_group_array(json_object(
                   'type', e.type, 'date', e.date,
                   'isMobile', json(CASE WHEN e.is_mobile THEN 'true' ELSE 'false' END),
                   'browser', coalesce(e.browser, ''), 'os', coalesce(e.os, '')))
               FROM (SELECT type, date, is_mobile, browser, os FROM events WHERE message_id = m.id ORDER BY seq) AS e),
    'customFields', json(coalesce(nullif(m.custom_fields, ''), '{{}}')),
    'links', json_object('self', ? || m.id))
FROM messages AS m JOIN sendings AS s ON s.id = m.sending_id LEFT JOIN message_progress AS p ON p.row = m.rowid
WHERE m.id IN ({marks}) AND s.account = ? AND s.channel IN ('sms', 'landingsms')"""


def lookup_records(db: sqlite3.Connection, account: str, ids: Sequence[str], base_url: str) -> list[str]:
    """SMS and landing SMS records of ``account`` for the known ``ids`` (request order, each once), each as
    the JSON text of its wire form (``{"id", "from", "to", ..., "events", "customFields", "links"}``)."""
    wanted = list(dict.fromkeys(ids))
    marks = ",".join("?" * len(wanted))
    query = _RECORD_JSON.format(marks=marks)
    found = dict(db.execute(query, [f"{base_url}/api/rest/sms/", *wanted, account]).fetchall())
    return [found[message_id] for message_id in wanted if message_id in found]
