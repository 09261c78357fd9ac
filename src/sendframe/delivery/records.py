"""Message records (GET /api/rest/sms/<id>,<id>,...) back into two typed DataFrames.

    >>> records = fetch_records(results["id"])  # doctest: +SKIP
    >>> records.messages[["id", "is_delivered"]]  # doctest: +SKIP
    >>> records.events.groupby("type").size()  # doctest: +SKIP
    >>> records.unknown_ids  # ids the service does not know  # doctest: +SKIP

Each lookup answer is read straight into column lists (:func:`read_lookup_answer`): pydantic checks a
lean shape of the records (plain dicts and lists, no model objects) and pyarrow reads the event dates
of all answers at once. Building an ``SmsRecord`` per message cost as much as the HTTP exchanges.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import httpx
import pandas as pd
import pyarrow as pa
from typing_extensions import TypedDict  # pydantic needs it for TypedDicts before Python 3.12

from sendframe.api import wire
from sendframe.api.errors import ApiError, InputError, NotFoundError
from sendframe.api.models import MAX_LOOKUP_IDS

MESSAGE_COLUMNS: tuple[str, ...] = (
    "id", "sender", "recipient", "message", "campaign_id", "sending_id", "is_delivered", "is_clicked",
)
EVENT_COLUMNS: tuple[str, ...] = ("id", "type", "date", "is_mobile", "browser", "os")
MAX_URL_IDS_CHARS = 2048  # keep lookup URLs short whatever the id length

_MESSAGE_DTYPES = {
    "id": "string", "sender": "string", "recipient": "string", "message": "string",
    "campaign_id": "Int64", "sending_id": "Int64", "is_delivered": "boolean", "is_clicked": "boolean",
}
_EVENT_DTYPES = {"id": "string", "type": "string", "is_mobile": "boolean", "browser": "string", "os": "string"}
_UTC_MICROSECONDS = pa.timestamp("us", tz="UTC")


class _LeanEvent(TypedDict):
    type: str
    date: str  # ISO 8601 with an offset, read by pyarrow for the whole column (pydantic's datetime is 2x slower)
    isMobile: bool
    browser: str
    os: str


# the fields of an SmsRecord the frames need, by wire name ("from" is a keyword: functional form)
_LeanRecord = TypedDict("_LeanRecord", {
    "id": str, "from": str, "to": str, "message": str, "campaignId": int, "sendingId": int,
    "isDelivered": bool, "isClicked": bool, "events": list[_LeanEvent], "customFields": dict[str, str],
})


class _LeanAnswer(TypedDict):
    data: list[_LeanRecord]


@functools.cache
def _lean_answer() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(_LeanAnswer)


class Records(NamedTuple):
    """What ``fetch_records`` found: ``messages`` (one row per record), ``events`` (one row per event),
    ``unknown_ids`` (asked for, not known to the service)."""

    messages: pd.DataFrame
    events: pd.DataFrame
    unknown_ids: list[str]


@dataclasses.dataclass
class LookupColumns:
    """Records as column lists, values as on the wire (event dates still text): ``messages`` and
    ``events`` keyed by frame column, ``custom_fields`` one dict per message, ``unknown_ids``."""

    messages: dict[str, list[Any]] = dataclasses.field(default_factory=lambda: {n: [] for n in MESSAGE_COLUMNS})
    events: dict[str, list[Any]] = dataclasses.field(default_factory=lambda: {n: [] for n in EVENT_COLUMNS})
    custom_fields: list[dict[str, str]] = dataclasses.field(default_factory=list)
    unknown_ids: list[str] = dataclasses.field(default_factory=list)

    def extend(self, other: LookupColumns) -> None:
        """Append ``other``'s rows after these."""
        for name, values in other.messages.items():
            self.messages[name].extend(values)
        for name, values in other.events.items():
            self.events[name].extend(values)
        self.custom_fields.extend(other.custom_fields)
        self.unknown_ids.extend(other.unknown_ids)


def read_lookup_answer(body: bytes | str, ids: Sequence[str]) -> LookupColumns:
    """The records of one lookup answer (``{"data": [record, ...]}``) as columns, in the order of ``ids``.

    Records of ids not asked for and repeats are dropped; ids without a record are ``unknown_ids``.
    Raises ``pydantic.ValidationError`` (a ``ValueError``) when a record lacks a field or has the
    wrong type.

        >>> body = ('{"data": [{"id": "b2", "from": "Shop", "to": "447700900001", "message": "Hi",'
        ...         ' "campaignId": 1, "sendingId": 1, "isDelivered": true, "isClicked": false, "events": [],'
        ...         ' "customFields": {"name": "Ana"}, "links": {"self": "..."}}]}')
        >>> columns = read_lookup_answer(body, ["a1", "b2"])
        >>> columns.messages["recipient"], columns.custom_fields, columns.unknown_ids
        (['447700900001'], [{'name': 'Ana'}], ['a1'])
    """
    data = _lean_answer().validate_json(body)["data"]
    got = [record["id"] for record in data]
    known = set(got)
    if len(known) < len(ids) or got != list(ids):
        wanted = [value for value in ids if value in known]
        if got != wanted:  # not the service's usual answer (request order, each id once): put it in that order
            first: dict[str, Any] = {}
            for record in data:
                first.setdefault(record["id"], record)
            data, got = [first[value] for value in wanted], wanted
    columns = LookupColumns()
    columns.unknown_ids = [value for value in ids if value not in known]
    messages = columns.messages
    messages["id"] = got
    messages["sender"] = [record["from"] for record in data]
    messages["recipient"] = [record["to"] for record in data]
    messages["message"] = [record["message"] for record in data]
    messages["campaign_id"] = [record["campaignId"] for record in data]
    messages["sending_id"] = [record["sendingId"] for record in data]
    messages["is_delivered"] = [record["isDelivered"] for record in data]
    messages["is_clicked"] = [record["isClicked"] for record in data]
    columns.custom_fields = [record["customFields"] for record in data]
    pairs = [(record["id"], event) for record in data for event in record["events"]]
    events = columns.events
    events["id"] = [message_id for message_id, _ in pairs]
    events["type"] = [event["type"] for _, event in pairs]
    events["date"] = [event["date"] for _, event in pairs]
    events["is_mobile"] = [event["isMobile"] for _, event in pairs]
    events["browser"] = [event["browser"] for _, event in pairs]
    events["os"] = [event["os"] for _, event in pairs]
    return columns


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
        return records_from_columns(LookupColumns())
    return records_from_columns(_run(_fetch_all(_chunks(wanted, chunk_size), client, concurrency)))


def records_from_columns(columns: LookupColumns) -> Records:
    """The typed frames of ``columns`` (see :func:`read_lookup_answer`).

        >>> records = records_from_columns(LookupColumns())
        >>> records.events.dtypes["date"]
        datetime64[us, UTC]
    """
    return Records(_messages_frame(columns), _events_frame(columns), columns.unknown_ids)


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


async def _fetch_all(chunks: list[list[str]], client: Any, concurrency: int) -> LookupColumns:
    from sendframe.api.client import AsyncClient

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    config = getattr(client, "config", None)
    answers: list[LookupColumns | None] = [None] * len(chunks)
    async with AsyncClient(config=config, limits=limits) as lookup:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in range(len(chunks)):
            queue.put_nowait(index)

        async def worker() -> None:
            while not queue.empty():
                index = queue.get_nowait()
                chunk = chunks[index]
                # get_sms's own call, read into columns instead of SmsRecord models; the client's _run
                # drives it (retries, errors) as it drives get_sms
                call = dataclasses.replace(wire.lookup_call(chunk), parse=lambda answer: read_lookup_answer(answer.content, chunk))
                try:
                    answers[index] = await lookup._run(call)
                except NotFoundError:  # none of this chunk is known
                    answers[index] = LookupColumns(unknown_ids=list(chunk))

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(chunks)))))
    columns = LookupColumns()
    for answer in answers:  # chunk order is request order
        if answer is not None:
            columns.extend(answer)
    return columns


def _messages_frame(columns: LookupColumns) -> pd.DataFrame:
    data = {name: pd.array(columns.messages[name], dtype=dtype) for name, dtype in _MESSAGE_DTYPES.items()}
    custom = columns.custom_fields
    names = dict.fromkeys(name for fields in custom if fields for name in fields)  # order of first appearance
    for name in names:
        column = f"custom_{name}" if name in MESSAGE_COLUMNS else name
        data[column] = pd.array([fields.get(name) for fields in custom], dtype="string")
    return pd.DataFrame(data, columns=list(data))


def _events_frame(columns: LookupColumns) -> pd.DataFrame:
    events = columns.events
    try:
        dates = pa.array(events["date"], pa.string()).cast(_UTC_MICROSECONDS)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ApiError(200, f"SMS lookup: an event date could not be read as a date-time with an offset ({exc})", 200) from None
    data = {name: pd.array(events[name], dtype=_EVENT_DTYPES[name]) for name in ("id", "type")}
    data["date"] = pd.array(dates.to_pandas())
    data.update({name: pd.array(events[name], dtype=_EVENT_DTYPES[name]) for name in ("is_mobile", "browser", "os")})
    return pd.DataFrame(data, columns=list(EVENT_COLUMNS))
