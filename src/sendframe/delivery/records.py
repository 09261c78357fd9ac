"""Message records (GET /api/rest/sms/<id>,<id>,...) back into two typed DataFrames.

    >>> records = fetch_records(results["id"])  # doctest: +SKIP
    >>> records.messages[["id", "is_delivered"]]  # doctest: +SKIP
    >>> records.events.groupby("type").size()  # doctest: +SKIP
    >>> records.unknown_ids  # ids the service does not know  # doctest: +SKIP

Lookups run ``concurrency`` at a time (threads sharing one sync ``Client``), each asking for at most
100 ids in a URL kept under ``MAX_URL_IDS_CHARS``. The answers are read a few thousand records at a
time, as they arrive, by pyarrow's JSON reader against a fixed schema (:func:`read_lookup_answers`),
and their bytes dropped: no Python object per record or event (a pydantic ``SmsRecord`` per message
cost as much as all the HTTP exchanges), and the answers of a million records are never all held at
once. The groups' Arrow tables become the frames without a copy. Custom fields, whose names are not
known in advance, are read by pyarrow as well, always as text.
"""

from __future__ import annotations

import collections
import dataclasses
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from sendframe.api import wire
from sendframe.api.client import Client
from sendframe.api.models import MAX_LOOKUP_IDS
from sendframe.errors import ApiError, InputError, NotFoundError
from sendframe.memory import release_unused_memory
from sendframe.options import keyword_checked

MESSAGE_COLUMNS: tuple[str, ...] = (
    "id", "sender", "recipient", "message", "campaign_id", "sending_id", "is_delivered", "is_clicked",
)
EVENT_COLUMNS: tuple[str, ...] = ("id", "type", "date", "is_mobile", "browser", "os")
MAX_URL_IDS_CHARS = 2048  # keep lookup URLs short whatever the id length
_GROUP_RECORDS = 2_000  # records read into Arrow at a time (see fetch_records)

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
# columns of a few distinct values, held as categoricals (a code per row, not a text)
_CATEGORICAL = ("sender", "type", "browser", "os")
_PANDAS_TYPES = {pa.large_string(): pd.StringDtype(), pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
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


def _clean_ids(ids: str | Iterable[object]) -> pa.Array:
    """The ids to look up, each once, in the order first met: missing and blank ones left out, each stripped.
    Arrow text, not a Python string per id: a million of them, held while the lookups ran, were 130 MiB.

        >>> _clean_ids(pd.Series([" a1", None, "b2", "a1", ""])).to_pylist()
        ['a1', 'b2']
    """
    texts = _id_texts(ids)
    texts = pc.utf8_trim_whitespace(texts.drop_null())
    texts = texts.filter(pc.greater(pc.binary_length(texts), 0))
    wrong = pc.or_(pc.match_substring(texts, ","), pc.match_substring(texts, "/"))
    if pc.any(wrong).as_py():
        raise InputError(f"The message id {texts.filter(wrong)[0].as_py()!r} contains ',' or '/', which no message "
                         "id has.")
    ordered: pa.Array = pc.unique(texts)  # in the order of first occurrence
    return ordered


def _id_texts(ids: str | Iterable[object]) -> pa.Array | pa.ChunkedArray:
    """``ids`` as Arrow text: a text column's own array (no Python string per id), else each value's ``str``."""
    if isinstance(ids, str):
        return pa.array([ids], pa.large_string())
    if isinstance(ids, (pd.Series, pd.Index)) and pd.api.types.is_string_dtype(ids.dtype) \
            and hasattr(ids.array, "__arrow_array__"):
        return pa.array(ids.array).cast(pa.large_string())
    return pa.array([str(value) for value in pd.Series(ids, dtype="object").dropna()], pa.large_string())


def _chunks(ids: pa.Array, chunk_size: int) -> list[tuple[int, int]]:
    """Where ``ids`` are cut into runs (start, end) of at most ``chunk_size`` whose comma-joined text stays within
    ``MAX_URL_IDS_CHARS`` (an id longer than that alone), as a lookup sends them.

        >>> _chunks(pa.array(["a1", "b2", "c3"]), 2)
        [(0, 2), (2, 3)]
    """
    ends = np.cumsum(pc.utf8_length(ids).to_numpy(zero_copy_only=False) + 1)  # each id with its comma
    starts = np.concatenate([[0], ends])
    chunks: list[tuple[int, int]] = []
    start = 0
    while start < len(ids):
        fits = int(np.searchsorted(ends, starts[start] + MAX_URL_IDS_CHARS, side="right"))  # ids within the URL
        end = min(start + chunk_size, max(fits, start + 1))
        chunks.append((start, end))
        start = end
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
    if not len(wanted):
        return read_lookup_answers([])
    chunks = _chunks(wanted, chunk_size)
    # a few thousand records per group: enough for pyarrow to read them at speed, few enough that the answers
    # of a million records are never all held as bytes at once (each group is read into Arrow as it arrives)
    per_group = max(1, min(_GROUP_RECORDS // chunk_size, -(-len(chunks) // (4 * concurrency))))
    groups = [chunks[start:start + per_group] for start in range(0, len(chunks), per_group)]
    records = _frames(_fetch_all(wanted, groups, client, concurrency))
    release_unused_memory()
    return records


def _fetch_all(ids: pa.Array, groups: list[list[tuple[int, int]]], client: Any, concurrency: int) -> list[_Read]:
    """Each group of chunks (runs of ``ids``) looked up (one GET per chunk) and read into Arrow, in group order.

    ``concurrency`` threads share one sync ``Client`` (httpx's is thread-safe), made from the given
    client's configuration (or the environment's): it costs about a fifth less CPU per request than
    ``AsyncClient`` (no anyio layer), and threads work the same inside a notebook's running event loop.
    The caller's own client is not used, so it may be an ``AsyncClient`` or already closed. The threads
    only fetch; this thread reads each group's answers into Arrow in order as they come (pyarrow parses
    on its own long-lived threads) and drops the bytes, with at most two groups per thread fetched ahead.
    Read in the short-lived lookup threads, the tables were allocated in heaps of theirs that pyarrow's
    pool kept after they ended: about 80 MiB more resident at 170k records, and 140 MiB more at the peak.
    """
    lookup = Client(config=getattr(client, "config", None) or wire.WireConfig.resolve())
    stop = threading.Event()  # set when a lookup failed (or the caller was interrupted): the others stop early

    def fetch(index: int) -> list[tuple[list[str], bytes | None]]:
        chunks = [ids[start:end].to_pylist() for start, end in groups[index]]  # Python strings a group at a time
        return [(chunk, _lookup(lookup, chunk)) for chunk in chunks if not stop.is_set()]

    reads: list[_Read] = []
    threads = min(concurrency, len(groups))
    try:
        with ThreadPoolExecutor(threads, thread_name_prefix="sendframe-records") as pool:
            ahead = collections.deque(pool.submit(fetch, index) for index in range(min(len(groups), 2 * threads)))
            try:
                while ahead:
                    answers = ahead.popleft().result()
                    if len(reads) + len(ahead) + 1 < len(groups):
                        ahead.append(pool.submit(fetch, len(reads) + len(ahead) + 1))
                    reads.append(_read_answers(answers))
            except BaseException:
                stop.set()
                for waiting in ahead:
                    waiting.cancel()
                raise
    finally:
        lookup.close()
    return reads


def _lookup(lookup: Client, chunk: list[str]) -> bytes | None:
    """One chunk's answer body (get_sms's call, its retries and errors), None when none of its ids is known."""
    try:
        return lookup.get_sms_body(chunk)
    except NotFoundError:
        return None


@dataclasses.dataclass(frozen=True)
class _Read:
    """Lookup answers read into Arrow, in request order: the records (messages and events columns), their
    customFields (None when none has any) and the ids asked for that have no record."""

    messages: pa.Table
    events: pa.Table
    custom: pa.Table | None
    unknown: list[str]


def read_lookup_answers(answers: Sequence[tuple[Sequence[str], bytes | None]]) -> Records:
    """The records of lookup answers as frames: ``answers`` holds, per lookup, the ids asked for and the
    answer's body (``{"data": [record, ...]}``), or None when the service knew none of them (404).

    Rows follow the order of the ids asked; records of ids not asked for, and repeats, are left out.
    Raises ``ApiError`` when an answer cannot be read (not JSON, a field missing or of the wrong type).
    The answers are read a group at a time, so the bytes are copied only a group at a time.

        >>> body = (b'{"data": [{"id": "b2", "from": "Shop", "to": "447700900001", "message": "Hi",'
        ...         b' "campaignId": 1, "sendingId": 1, "isDelivered": true, "isClicked": false, "events": [],'
        ...         b' "customFields": {"name": "Ana"}, "links": {"self": "..."}}]}')
        >>> records = read_lookup_answers([(["a1", "b2"], body), (["c3"], None)])
        >>> records.messages[["id", "name"]].to_dict("records"), records.unknown_ids
        ([{'id': 'b2', 'name': 'Ana'}], ['a1', 'c3'])
    """
    per_group = max(1, _GROUP_RECORDS // MAX_LOOKUP_IDS)
    return _frames([_read_answers(answers[start:start + per_group])
                    for start in range(0, max(len(answers), 1), per_group)])


def _read_answers(answers: Sequence[tuple[Sequence[str], bytes | None]]) -> _Read:
    """One group of answers read into Arrow tables (see :func:`read_lookup_answers`)."""
    found = [(list(ids), body) for ids, body in answers if body is not None]
    unknown_by_answer: dict[int, list[str]] = {}
    try:
        bodies = [body for _, body in found]
        records, offsets = _parse(bodies)
        positions = _positions(records.field("id"), offsets, found, unknown_by_answer)
        custom = _custom_fields(bodies, offsets)
        if positions is not None:
            taken = pa.array(positions, pa.int64())
            records, custom = records.take(taken), None if custom is None else custom.take(taken)
        read = _Read(_messages_table(records), _events_table(records), _custom_table(custom), [])
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError) as exc:
        raise ApiError(200, f"SMS lookup: the answer could not be read ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''})", 200) from None
    found_index = 0
    for ids, body in answers:  # unknown ids in request order
        if body is None:
            read.unknown.extend(ids)
        else:
            read.unknown.extend(unknown_by_answer.get(found_index, ()))
            found_index += 1
    return read


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
        # the parse's scratch freed to malloc, not to mimalloc's heaps of the lookup threads (which keep it: a fifth
        # of fetch_records' resident growth at 100k records)
        memory_pool=pa.system_memory_pool(),
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


def _positions(got: pa.Array, offsets: list[int], found: list[tuple[list[str], bytes]],
               unknown_by_answer: dict[int, list[str]]) -> list[int] | None:
    """Which records to keep, in request order (None when the answers are already that: the usual case);
    fills ``unknown_by_answer`` with each answer's ids that have no record."""
    asked = pa.array([message_id for ids, _ in found for message_id in ids], pa.string())
    if len(asked) == len(got) and (not len(got) or pc.all(pc.equal(got, asked)).as_py()):
        return None  # every id answered, in the order asked: compared in Arrow, no Python string per record
    answered_ids = got.to_pylist()
    positions: list[int] = []
    reordered = False
    for index, (ids, _) in enumerate(found):
        start, end = offsets[index], offsets[index + 1]
        answered = answered_ids[start:end]
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


def _messages_table(records: pa.StructArray) -> pa.Table:
    return _stored(pa.table([records.field(name) for name in _MESSAGE_FIELDS], names=list(_MESSAGE_FIELDS.values())),
                   _CATEGORICAL)


def _custom_table(custom: pa.StructArray | None) -> pa.Table | None:
    if custom is None or not custom.type.num_fields:
        return None
    # flatten: a null customFields gives nulls
    return _stored(pa.table(custom.flatten(), names=[field.name for field in custom.type]))


def _events_table(records: pa.StructArray) -> pa.Table:
    events = records.field("events")
    flat = events.flatten()
    columns = {"id": records.field("id").take(pc.list_parent_indices(events))}
    for name, column in _EVENT_FIELDS.items():
        columns[column] = flat.field(name)
    columns["date"] = columns["date"].cast(_UTC)  # ISO 8601 with an offset; a date without one is an error
    return _stored(pa.table(columns).select(list(EVENT_COLUMNS)), _CATEGORICAL)


def _stored(table: pa.Table, categorical: Sequence[str] = ()) -> pa.Table:
    """A group's table as the frames hold it: text as pandas' ``string`` holds it (large_string), the
    ``categorical`` columns dictionary-encoded. Made as each group is read, so that its raw texts go a group at a
    time: done over the whole answer at the end, it was about 250 bytes a record at fetch_records' peak."""
    for position, field in enumerate(table.schema):
        column = table.column(position)
        if field.name in categorical:
            table = table.set_column(position, field.name, pc.dictionary_encode(column))
        elif pa.types.is_string(field.type):  # the texts stay where they are: only the offsets are widened
            table = table.set_column(position, field.name, column.cast(pa.large_string()))
    return table


def _frames(reads: list[_Read]) -> Records:
    """The groups' tables put end to end (no copy: pandas keeps Arrow's chunks) as the two frames; the
    events' ``type``, ``browser`` and ``os`` and the messages' ``sender`` are categoricals. ``reads`` is emptied:
    then each column's Arrow numbers are let go as pandas' copy of them is made, not all at the end (held together,
    the two copies of the number, date and code columns are about 55 bytes a record more at fetch_records' end)."""
    messages_pieces, events_pieces = [read.messages for read in reads], [read.events for read in reads]
    customs = [(len(read.messages), read.custom) for read in reads]
    unknown = [message_id for read in reads for message_id in read.unknown]
    reads.clear()
    messages = _to_pandas(messages_pieces)
    names = list(dict.fromkeys(name for _, custom in customs if custom is not None for name in custom.column_names))
    if names:  # the custom fields of every group, a column per name in order of first appearance (text)
        pieces = [pa.table([custom.column(name) if custom is not None and name in custom.column_names
                            else pa.nulls(rows, pa.large_string()) for name in names], names=names)
                  for rows, custom in customs]
        extra = _to_pandas(pieces)
        extra.columns = [f"custom_{name}" if name in MESSAGE_COLUMNS else name for name in names]
        messages = pd.concat([messages, extra.set_axis(messages.index)], axis=1)
    return Records(messages, _to_pandas(events_pieces), unknown)


def _to_pandas(pieces: list[pa.Table]) -> pd.DataFrame:
    """The tables end to end as one frame, ``pieces`` emptied: each column's Arrow memory is let go once converted
    (the joined table is then its only owner); the groups' dictionaries made one, so each column is one categorical."""
    table = pa.concat_tables(pieces).unify_dictionaries()
    pieces.clear()
    frame: pd.DataFrame = table.to_pandas(types_mapper=_PANDAS_TYPES.get, self_destruct=True,  # pyarrow is untyped
                                          split_blocks=True)
    return frame
