"""Message records (GET /api/rest/sms/<id>,<id>,...) back into two typed DataFrames.

    >>> records = fetch_records(results["id"])  # doctest: +SKIP
    >>> records.messages[["id", "is_delivered"]]  # doctest: +SKIP
    >>> records.events.groupby("type").size()  # doctest: +SKIP
    >>> records.unknown_ids  # ids the service does not know  # doctest: +SKIP

Lookups run ``concurrency`` at a time (threads sharing one sync ``Client``), each asking for at most
100 ids in a URL kept under ``MAX_URL_IDS_CHARS``. The answers are kept as bytes while they arrive and
read into columns at the end by pyarrow's JSON reader against a fixed schema
(:func:`read_lookup_answers`): no Python object per record or event (a pydantic ``SmsRecord`` per
message cost as much as all the HTTP exchanges). Custom fields, whose names are not known in
advance, are read by pyarrow as well, always as text.
"""

from __future__ import annotations

import dataclasses
import queue
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import httpx
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from sendframe.api import wire
from sendframe.api.client import Client
from sendframe.api.models import MAX_LOOKUP_IDS
from sendframe.errors import ApiError, InputError, NotFoundError
from sendframe.options import keyword_checked

MESSAGE_COLUMNS: tuple[str, ...] = (
    "id", "sender", "recipient", "message", "campaign_id", "sending_id", "is_delivered", "is_clicked",
)
EVENT_COLUMNS: tuple[str, ...] = ("id", "type", "date", "is_mobile", "browser", "os")
MAX_URL_IDS_CHARS = 2048  # keep lookup URLs short whatever the id length

# the record's fields the frames need, by wire name, and their frame column; "links" is not read
_MESSAGE_FIELDS = {"id": "id", "from": "sender", "to": "recipient", "message": "message", "campaignId": "campaign_id",
                   "sendingId": "sending_id", "isDelivered": "is_delivered", "isClicked": "is_clicked"}
_EVENT_FIELDS = {"type": "type", "date": "date", "isMobile": "is_mobile", "browser": "browser", "os": "os"}
_WIRE_TYPES = {"campaignId": pa.int64(), "sendingId": pa.int64(), "isDelivered": pa.bool_(), "isClicked": pa.bool_(),
               "isMobile": pa.bool_()}  # every other field is text; the event date is read as text, then cast
_EVENT = pa.struct([(name, _WIRE_TYPES.get(name, pa.string())) for name in _EVENT_FIELDS])
_RECORD = pa.struct([(name, _WIRE_TYPES.get(name, pa.string())) for name in _MESSAGE_FIELDS]
                    + [("events", pa.list_(_EVENT))])
_ANSWER = pa.schema([("data", pa.list_(_RECORD))])
_UTC = pa.timestamp("us", tz="UTC")
_PANDAS_TYPES = {pa.string(): pd.StringDtype(), pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
# customFields, empty or not; quotes inside JSON texts are escaped, so these only match the key itself
_NO_CUSTOM_FIELDS = b'"customFields":{}'
_SOME_CUSTOM_FIELDS = re.compile(rb'"customFields"\s*:\s*\{\s*"')
# customFields' names are guessed; the other fields are declared, so nothing else is guessed
_CUSTOM_GUESS = pa.schema([("data", pa.list_(pa.struct([*_RECORD, ("customFields", pa.struct([])),
                                                         ("links", pa.struct([("self", pa.string())]))])))])


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


@keyword_checked
def fetch_records(
    ids: str | Iterable[object], *, client: Any = None, chunk_size: int = 100, concurrency: int = 8
) -> Records:
    """Look up message records by id, many per request and several requests at once.

    ``ids`` may be any iterable (a Series from a send result is fine): missing values are dropped
    and repeats looked up once. ``client`` is a ``Client`` or ``AsyncClient`` (its address and
    credentials are used) or None for the environment's (``SENDFRAME_BASE_URL``, ...).
    Ids the service does not know end up in ``unknown_ids``; they are not an error. ``chunk_size`` ids
    per request (fewer when the URL would grow past ``MAX_URL_IDS_CHARS``), ``concurrency`` requests at once.

    >>> records = fetch_records(["3f2a9c0d1e2b3a4c5d6e"], client=Client())  # doctest: +SKIP
    >>> records.messages.columns[:4].tolist()  # doctest: +SKIP
    ['id', 'sender', 'recipient', 'message']
    """
    if not 1 <= chunk_size <= MAX_LOOKUP_IDS:
        raise InputError(f"chunk_size must be between 1 and {MAX_LOOKUP_IDS} (ids per lookup request), "
                         f"not {chunk_size}.")
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, not {concurrency}.")
    wanted = _clean_ids(ids)
    if not wanted:
        return read_lookup_answers([])
    chunks = _chunks(wanted, chunk_size)
    return read_lookup_answers(list(zip(chunks, _fetch_all(chunks, client, concurrency), strict=True)))


def _body(response: httpx.Response) -> bytes:
    return response.content


def _fetch_all(chunks: list[list[str]], client: Any, concurrency: int) -> list[bytes | None]:
    """The answer body of each chunk's lookup, in chunk order (None when none of its ids is known).

    ``concurrency`` threads share one sync ``Client`` (httpx's is thread-safe), made from the given
    client's configuration (or the environment's): it costs about a fifth less CPU per request than
    ``AsyncClient`` (no anyio layer), and threads work the same inside a notebook's running event loop.
    The caller's own client is not used, so it may be an ``AsyncClient`` or already closed.
    """
    lookup = Client(config=getattr(client, "config", None) or wire.WireConfig.resolve())
    bodies: list[bytes | None] = [None] * len(chunks)
    pending: queue.SimpleQueue[int] = queue.SimpleQueue()
    for index in range(len(chunks)):
        pending.put(index)
    stop = threading.Event()  # set when a lookup failed (or the caller was interrupted): the others stop early

    def worker() -> None:
        while not stop.is_set():
            try:
                index = pending.get_nowait()
            except queue.Empty:
                return
            # get_sms's call, driven by the client as get_sms is (retries, errors), but the answer is
            # kept as bytes: read_lookup_answers reads them all at once
            call = dataclasses.replace(wire.lookup_call(chunks[index]), parse=_body)
            try:
                bodies[index] = lookup._run(call)  # noqa: SLF001  get_sms's own call, its answer kept as bytes
            except NotFoundError:  # none of this chunk is known
                pass
            except BaseException:
                stop.set()
                raise

    threads = min(concurrency, len(chunks))
    try:
        with ThreadPoolExecutor(threads, thread_name_prefix="sendframe-records") as pool:
            workers = [pool.submit(worker) for _ in range(threads)]
            try:
                for done in workers:
                    done.result()
            except BaseException:
                stop.set()
                raise
    finally:
        lookup.close()
    return bodies


def read_lookup_answers(answers: Sequence[tuple[Sequence[str], bytes | None]]) -> Records:
    """The records of lookup answers as frames: ``answers`` holds, per lookup, the ids asked for and the
    answer's body (``{"data": [record, ...]}``), or None when the service knew none of them (404).

    Rows follow the order of the ids asked; records of ids not asked for, and repeats, are left out.
    Raises ``ApiError`` when an answer cannot be read (not JSON, a field missing or of the wrong type).

        >>> body = (b'{"data": [{"id": "b2", "from": "Shop", "to": "447700900001", "message": "Hi",'
        ...         b' "campaignId": 1, "sendingId": 1, "isDelivered": true, "isClicked": false, "events": [],'
        ...         b' "customFields": {"name": "Ana"}, "links": {"self": "..."}}]}')
        >>> records = read_lookup_answers([(["a1", "b2"], body), (["c3"], None)])
        >>> records.messages[["id", "name"]].to_dict("records"), records.unknown_ids
        ([{'id': 'b2', 'name': 'Ana'}], ['a1', 'c3'])
    """
    found = [(list(ids), body) for ids, body in answers if body is not None]
    unknown_by_answer: dict[int, list[str]] = {}
    try:
        bodies = [body for _, body in found]
        records, offsets = _parse(bodies)
        positions = _positions(records.field("id").to_pylist(), offsets, found, unknown_by_answer)
        custom = _custom_fields(bodies, offsets)
        if positions is not None:
            taken = pa.array(positions, pa.int64())
            records, custom = records.take(taken), None if custom is None else custom.take(taken)
        messages, events = _messages_frame(records, custom), _events_frame(records)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError) as exc:
        raise ApiError(200, f"SMS lookup: the answer could not be read ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''})", 200) from None
    unknown: list[str] = []
    found_index = 0
    for ids, body in answers:  # unknown ids in request order
        if body is None:
            unknown.extend(ids)
        else:
            unknown.extend(unknown_by_answer.get(found_index, ()))
            found_index += 1
    return Records(messages, events, unknown)


def _parse(bodies: list[bytes]) -> tuple[pa.StructArray, list[int]]:
    """Every record of the bodies (one StructArray of ``_RECORD``) and where each body's records start."""
    if not bodies:
        return pa.array([], _RECORD), [0]
    data = _read_data(bodies, _ANSWER, "ignore")
    records = data.flatten()
    _check_complete(records, "record")
    events = records.field("events").flatten()
    _check_complete(events, "event")
    offsets = data.offsets.to_pylist()
    if offsets[0]:  # a sliced array: make the record positions start at 0
        offsets = [offset - offsets[0] for offset in offsets]
    return records, offsets


def _read_data(bodies: list[bytes], schema: pa.Schema, unexpected: str, *, one_block: bool = False) -> pa.ListArray:
    """The "data" list of each body (one row per body), read by pyarrow against ``schema``."""
    multiline = any(b"\n" in body for body in bodies)  # a pretty-printed answer: objects span lines
    block = max(1 << 20, max(map(len, bodies)) + 1)  # an answer never straddles two blocks
    if one_block:
        block = sum(map(len, bodies)) + len(bodies)
    table = pajson.read_json(
        pa.BufferReader(b"\n".join(bodies)),
        read_options=pajson.ReadOptions(block_size=block),
        parse_options=pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior=unexpected,
                                          newlines_in_values=multiline),
    )
    if table.num_rows != len(bodies):
        raise ValueError(f"{len(bodies)} answers held {table.num_rows} JSON objects")
    data = table.column("data").combine_chunks()
    if data.null_count:
        raise ValueError('an answer has no "data" list')
    return data


def _check_complete(items: pa.StructArray, what: str) -> None:
    if items.null_count:
        raise ValueError(f"an answer has a null {what}")
    for index in range(items.type.num_fields):
        if items.field(index).null_count:
            raise ValueError(f"a {what} has no {items.type.field(index).name!r} (or it is null)")


def _positions(got: list[str], offsets: list[int], found: list[tuple[list[str], bytes]],
               unknown_by_answer: dict[int, list[str]]) -> list[int] | None:
    """Which records to keep, in request order (None when the answers are already that: the usual case);
    fills ``unknown_by_answer`` with each answer's ids that have no record."""
    positions: list[int] = []
    reordered = False
    for index, (ids, _) in enumerate(found):
        start, end = offsets[index], offsets[index + 1]
        answered = got[start:end]
        if answered == ids:
            positions.extend(range(start, end))
            continue
        first: dict[str, int] = {}
        for offset, message_id in enumerate(answered, start):
            first.setdefault(message_id, offset)
        unknown_by_answer[index] = [message_id for message_id in ids if message_id not in first]
        kept = [first[message_id] for message_id in ids if message_id in first]
        reordered = reordered or kept != list(range(start, end))
        positions.extend(kept)
    return positions if reordered else None


def _custom_fields(bodies: list[bytes], offsets: list[int]) -> pa.StructArray | None:
    """Each record's customFields, one text column per name in order of first appearance (None when no
    answer has any). pyarrow finds the names but guesses types (a date-like text becomes a timestamp), so
    when it guessed anything but text the answers are read again with every name declared text."""
    if not any(_has_custom_fields(body, offsets[index + 1] - offsets[index]) for index, body in enumerate(bodies)):
        return None
    # one block: a single guess for the whole answer set, never two that disagree
    custom = _read_data(bodies, _CUSTOM_GUESS, "infer", one_block=True).flatten().field("customFields")
    if any(field.type != pa.string() for field in custom.type):
        texts = pa.struct([(field.name, pa.string()) for field in custom.type])
        schema = pa.schema([("data", pa.list_(pa.struct([("customFields", texts)])))])
        custom = _read_data(bodies, schema, "ignore").flatten().field("customFields")
    return custom


def _has_custom_fields(body: bytes, records: int) -> bool:
    # the count recognises the usual compact answer without any, and is quicker than the search
    return body.count(_NO_CUSTOM_FIELDS) != records and _SOME_CUSTOM_FIELDS.search(body) is not None


def _messages_frame(records: pa.StructArray, custom: pa.StructArray | None) -> pd.DataFrame:
    table = pa.table([records.field(name) for name in _MESSAGE_FIELDS], names=list(_MESSAGE_FIELDS.values()))
    frame: pd.DataFrame = table.to_pandas(types_mapper=_PANDAS_TYPES.get)  # pyarrow is untyped
    if custom is None or not custom.type.num_fields:
        return frame
    columns: dict[str, pa.Array] = {}
    for field, values in zip(custom.type, custom.flatten(), strict=True):  # flatten: a null customFields gives nulls
        columns[f"custom_{field.name}" if field.name in MESSAGE_COLUMNS else field.name] = values
    extra: pd.DataFrame = pa.table(list(columns.values()), names=list(columns)).to_pandas(
        types_mapper=_PANDAS_TYPES.get)
    return pd.concat([frame, extra.set_axis(frame.index)], axis=1)


def _events_frame(records: pa.StructArray) -> pd.DataFrame:
    events = records.field("events")
    flat = events.flatten()
    columns = {"id": records.field("id").take(pc.list_parent_indices(events))}
    for name, column in _EVENT_FIELDS.items():
        columns[column] = flat.field(name)
    columns["date"] = columns["date"].cast(_UTC)  # ISO 8601 with an offset; a date without one is an error
    frame: pd.DataFrame = pa.table(columns).select(list(EVENT_COLUMNS)).to_pandas(types_mapper=_PANDAS_TYPES.get)
    return frame
