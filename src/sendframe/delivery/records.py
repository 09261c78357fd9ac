"""Message records (GET /api/rest/sms/<id>,<id>,...) back into two typed DataFrames.

    >>> records = fetch_records(results["id"])  # doctest: +SKIP
    >>> records.messages[["id", "is_delivered"]]  # doctest: +SKIP
    >>> records.events.groupby("type").size()  # doctest: +SKIP
    >>> records.unknown_ids  # ids the service does not know  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Any, NamedTuple

import httpx
import pandas as pd

from sendframe.api.errors import InputError, NotFoundError
from sendframe.api.models import MAX_LOOKUP_IDS

MESSAGE_COLUMNS: tuple[str, ...] = (
    "id", "sender", "recipient", "message", "campaign_id", "sending_id", "is_delivered", "is_clicked",
)
EVENT_COLUMNS: tuple[str, ...] = ("id", "type", "date", "is_mobile", "browser", "os")
MAX_URL_IDS_CHARS = 2048  # keep lookup URLs short whatever the id length


class Records(NamedTuple):
    """What ``fetch_records`` found: ``messages`` (one row per record), ``events`` (one row per event),
    ``unknown_ids`` (asked for, not known to the service)."""

    messages: pd.DataFrame
    events: pd.DataFrame
    unknown_ids: list[str]


def _clean_ids(ids: str | Iterable[object]) -> list[str]:
    values = [ids] if isinstance(ids, str) else list(pd.Series(ids, dtype="object").dropna())
    seen: dict[str, None] = {}
    for value in values:
        text = str(value).strip()
        if not text:
            continue
        if "," in text or "/" in text:
            raise InputError(f"The message id {text!r} contains ',' or '/', which no message id has.")
        seen.setdefault(text, None)
    return list(seen)


def _chunks(ids: list[str], chunk_size: int) -> list[list[str]]:
    chunks: list[list[str]] = []
    current: list[str] = []
    length = 0
    for value in ids:
        if current and (len(current) >= chunk_size or length + len(value) + 1 > MAX_URL_IDS_CHARS):
            chunks.append(current)
            current, length = [], 0
        current.append(value)
        length += len(value) + 1
    if current:
        chunks.append(current)
    return chunks


def fetch_records(
    ids: str | Iterable[object], *, client: Any = None, chunk_size: int = 100, concurrency: int = 8
) -> Records:
    """Look up message records by id, many per request and several requests at once.

    ``ids`` may be any iterable (a Series from a send result is fine): missing values are dropped
    and repeats looked up once. ``client`` is a ``Client`` or ``AsyncClient`` (its address and
    credentials are used) or None for the environment's (``SENDFRAME_BASE_URL``, ...).
    Ids the service does not know end up in ``unknown_ids``; they are not an error.

    >>> records = fetch_records(["3f2a9c0d1e2b3a4c5d6e"], client=Client())  # doctest: +SKIP
    >>> records.messages.columns[:4].tolist()  # doctest: +SKIP
    ['id', 'sender', 'recipient', 'message']
    """
    if not 1 <= chunk_size <= MAX_LOOKUP_IDS:
        raise InputError(f"chunk_size must be between 1 and {MAX_LOOKUP_IDS} (ids per lookup request), not {chunk_size}.")
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, not {concurrency}.")
    wanted = _clean_ids(ids)
    if not wanted:
        return Records(_messages_frame([]), _events_frame([]), [])
    records = _run(_fetch_all(_chunks(wanted, chunk_size), client, concurrency))
    by_id = {record.id: record for record in records}
    ordered = [by_id[value] for value in wanted if value in by_id]
    unknown = [value for value in wanted if value not in by_id]
    return Records(_messages_frame(ordered), _events_frame(ordered), unknown)


def _run(coroutine: Any) -> Any:
    """Run a coroutine to completion, also from inside a running loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="sendframe-fetch-records")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _fetch_all(chunks: list[list[str]], client: Any, concurrency: int) -> list[Any]:
    from sendframe.api.client import AsyncClient

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    config = getattr(client, "config", None)
    async with AsyncClient(config=config, limits=limits) as lookup:
        queue: asyncio.Queue[list[str]] = asyncio.Queue()
        for chunk in chunks:
            queue.put_nowait(chunk)
        found: list[Any] = []

        async def worker() -> None:
            while not queue.empty():
                chunk = queue.get_nowait()
                try:
                    found.extend(await lookup.get_sms(chunk))
                except NotFoundError:  # none of this chunk is known
                    pass

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(chunks)))))
    return found


def _messages_frame(records: list[Any]) -> pd.DataFrame:
    rows = [
        {
            "id": r.id, "sender": r.sender, "recipient": r.to, "message": r.message, "campaign_id": r.campaign_id,
            "sending_id": r.sending_id, "is_delivered": r.is_delivered, "is_clicked": r.is_clicked,
        }
        for r in records
    ]
    frame = pd.DataFrame(rows, columns=list(MESSAGE_COLUMNS))
    frame = frame.astype({
        "id": "string", "sender": "string", "recipient": "string", "message": "string",
        "campaign_id": "Int64", "sending_id": "Int64", "is_delivered": "boolean", "is_clicked": "boolean",
    })
    custom = pd.DataFrame([r.custom_fields for r in records], index=frame.index)
    for name in custom.columns:
        column = f"custom_{name}" if name in MESSAGE_COLUMNS else str(name)
        frame[column] = custom[name].astype("string")
    return frame


def _events_frame(records: list[Any]) -> pd.DataFrame:
    rows = [
        {"id": r.id, "type": e.type, "date": e.date, "is_mobile": e.is_mobile, "browser": e.browser, "os": e.os}
        for r in records
        for e in r.events
    ]
    frame = pd.DataFrame(rows, columns=list(EVENT_COLUMNS))
    frame["date"] = pd.to_datetime(frame["date"], utc=True).astype("datetime64[us, UTC]")
    return frame.astype({"id": "string", "type": "string", "is_mobile": "boolean", "browser": "string", "os": "string"})
