"""The vectorised core of ``read_callbacks``: callback log lines into one typed frame.

The work is done with numpy and pyarrow: ``logformat`` finds every line's query and each
parameter's value as byte offsets, a block of lines at a time, each column is cut and
dictionary-encoded once, and percent-decoding, number and date parsing run once per distinct
value, never once per line. No copy of the log's text is made.

    >>> lines = pa.array(["2026-01-01T00:00:00.000000+00:00\\tid=a1&status=DELIVRD"])
    >>> parse_lines(lines, {"id": "id", "status": "status"}, [])["status"].tolist()
    ['DELIVRD']
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import parse_qsl, unquote_plus, urlsplit

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.notifications import DELIVERY_MEANINGS, ESCAPE_CODES, STATUSES
from sendframe.delivery.logformat import (
    Requests,
    byte_at,
    encoded,
    items_by_name,
    locate_requests,
    regular_items,
    repeated,
    short_keys,
    span_digests,
    span_texts,
)
from sendframe.errors import InputError

# the columns every callback frame has, in this order; the analyst's own parameters follow, then received_at
CALLBACK_COLUMNS: tuple[str, ...] = (
    "id", "delivery", "delivery_meaning", "status", "sender", "recipient", "sent_at", "reported_at",
    "cost", "mnc", "part", "campaign_id", "sending_id",
)
# the receiver's notificationUrl names each parameter after its column (id=%i&delivery=%d&...)
RECEIVER_MAPPING: dict[str, str] = {column: column for column in ESCAPE_CODES.values()}
PARAMS_LINE_PREFIX = "#params\t"
JUNK_EXAMPLES = 5

_STATUS_TYPE = pd.CategoricalDtype(list(STATUSES), ordered=True)
# a categorical of the four meanings: the same dtype in every read, so frames put end to end keep it (as text the
# column was about 40 bytes a notification)
_MEANING_TYPE = pd.CategoricalDtype(list(dict.fromkeys(DELIVERY_MEANINGS.values())))
# the spec's range of each integer column: delivery is 1, 2, 4, 8 or 16, a message has at most 255 parts (the
# one-byte count of a concatenated SMS's header); a value outside it is not a valid one (<NA>, as text is)
_INTEGER_TYPES = {"delivery": "int8", "part": "int16", "campaign_id": "int64", "sending_id": "int64"}
# columns of a few distinct values (a campaign's sender, the networks' codes): a code per row, not a text; their
# categories are the values read (sorted)
TEXT_CATEGORIES = ("sender", "mnc")
_DATE_COLUMNS = ("sent_at", "reported_at")
_NOTIFICATION_DATE = "%Y-%m-%d %H:%M"


def mapping_from_url(notification_url: str) -> tuple[dict[str, str], list[str]]:
    """Learn which query parameter carries which column from a notificationUrl.

    Returns ``({parameter: column}, [own parameter names])``.

    >>> mapping_from_url("https://x/dlr?mid=%i&st=%s&ref=crm")
    ({'mid': 'id', 'st': 'status'}, ['ref'])
    """
    mapping: dict[str, str] = {}
    own: list[str] = []
    for name, value in parse_qsl(urlsplit(notification_url).query, keep_blank_values=True):
        if len(value) == 2 and value[0] == "%" and value[1] in ESCAPE_CODES:
            mapping[name] = ESCAPE_CODES[value[1]]
        elif name not in own:
            own.append(name)
    if "id" not in mapping.values():
        raise InputError(
            f"The notificationUrl {_redacted(notification_url)!r} has no %i parameter, so notifications "
            "cannot be matched to messages; add e.g. 'id=%i' to it."
        )
    return mapping, own


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(netloc=parts.hostname or "", path=parts.path[:40]).geturl()


def _own_params_of_receiver_log(templates: list[str]) -> list[str]:
    own: list[str] = []
    for line in templates:
        for name, _ in parse_qsl(line[len(PARAMS_LINE_PREFIX):], keep_blank_values=True):
            if name not in own and name not in RECEIVER_MAPPING:
                own.append(name)
    return own


@dataclass(frozen=True)
class QueryDigests:
    """The :func:`span_digests` of rows' raw queries that finding the retries made (``made``: which rows have
    one; a row whose id no other row has needed none): a reader that keeps them (``tailing``) makes only the rest.

        >>> data = pa.py_buffer(b"id=a&st=1 id=b&st=1")
        >>> begin, end = np.array([0, 10]), np.array([9, 19])
        >>> first = span_digests(data, begin[:1], end[:1])[0]
        >>> half = QueryDigests(np.array([first, 0], np.uint64), np.array([True, False]))
        >>> bool((half.completed(data, begin, end) == span_digests(data, begin, end)).all())
        True
    """

    values: np.ndarray
    made: np.ndarray

    def taken(self, rows: np.ndarray) -> QueryDigests:
        return QueryDigests(self.values[rows], self.made[rows])

    def completed(self, data: pa.Buffer, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Every row's digest: those made, and those not made yet made now (``begin``/``end``: the rows' queries)."""
        missing = np.flatnonzero(~self.made)
        if not len(missing):
            return self.values
        values = self.values.copy()
        values[missing] = span_digests(data, begin[missing], end[missing])
        return values


# parse_with_queries' answer: the frame, its rows' raw queries (start, end) and their digests made on the way
Parsed = tuple[pd.DataFrame, np.ndarray, np.ndarray, QueryDigests]


@dataclass(frozen=True)
class LogParams:
    """How to read a log's queries: ``{parameter: column}``, the analyst's own parameters (each a
    column), the path requests must have (access logs) and the notificationUrl's parameter order."""

    mapping: dict[str, str]
    own: list[str]
    wanted_path: str | None = None
    order: list[str] = field(default_factory=list)


def log_params(lines: pa.Array, notification_url: str | None = None) -> LogParams:
    """The parameters of a notificationUrl, or without one those the receiver's ``#params`` lines name.

    >>> log_params(pa.array([]), "https://x/dlr?mid=%i&ref=crm")
    LogParams(mapping={'mid': 'id'}, own=['ref'], wanted_path='/dlr', order=['mid', 'ref'])
    """
    if notification_url is not None:
        mapping, own = mapping_from_url(notification_url)
        order = [name for name, _ in parse_qsl(urlsplit(notification_url).query, keep_blank_values=True)]
        return LogParams(mapping, own, urlsplit(notification_url).path or "/", order)
    templates = receiver_templates(lines)
    last = templates[-1][len(PARAMS_LINE_PREFIX):] if templates else ""
    order = [name for name, _ in parse_qsl(last, keep_blank_values=True)]
    return LogParams(dict(RECEIVER_MAPPING), _own_params_of_receiver_log(templates), None, order)


def receiver_templates(lines: pa.Array) -> list[str]:
    """The receiver's ``#params`` lines, without their line break."""
    return [line.rstrip("\r\n") for line in pc.filter(lines, pc.starts_with(lines, PARAMS_LINE_PREFIX)).to_pylist()]


def parse_lines(
    lines: pa.Array,
    mapping: dict[str, str],
    own: list[str],
    wanted_path: str | None = None,
    *,
    order: list[str] | None = None,
) -> pd.DataFrame:
    """Parse log lines (a pyarrow string array) with a ``{parameter: column}`` mapping.

    The vectorised core of ``read_callbacks``; ``order`` is the parameter order of the
    notificationUrl (queries in that order take a fast path, any other order still parses).

    >>> lines = pa.array(["2026-01-01T00:00:00.000000+00:00\\tid=a1&status=DELIVRD"])
    >>> parse_lines(lines, {"id": "id", "status": "status"}, [])["status"].tolist()
    ['DELIVRD']
    """
    return parse_with_queries(lines, LogParams(mapping, own, wanted_path, list(order or [])))[0]


def parse_with_queries(lines: pa.Array, how: LogParams) -> Parsed:
    """``parse_lines``, and where each row's raw query lies: (start, end) byte offsets into the lines'
    data buffer (``lines.buffers()[2]``), so that a later read can tell a retry of a row from another
    notification, with the queries' digests made on the way."""
    mapping, own, wanted_path, order = how.mapping, how.own, how.wanted_path, how.order
    wanted = {param: column for param, column in mapping.items()} | {name: name for name in own}
    keys = list(wanted)
    key_order = [k for k in (order or []) if k in wanted] + [k for k in keys if k not in (order or [])]
    id_param = next((p for p, c in mapping.items() if c == "id"), None)
    found = _locate_notifications(lines, key_order, order or key_order, wanted_path, id_param)
    values = found.values
    names = [c for c in CALLBACK_COLUMNS if c != "delivery_meaning"] + own + ["received_at"]
    by_column = {column: param for param, column in mapping.items()}

    def param_of(index: int) -> str | None:
        """The parameter a column's values are encoded from (None: no such parameter, or the id)."""
        own_column = index >= len(CALLBACK_COLUMNS) - 1
        param = names[index] if own_column else by_column.get(names[index])
        return None if param is not None and param == id_param and not own_column else param

    params = [param for param in dict.fromkeys(param_of(index) for index in range(len(names) - 1)) if param is not None]
    with ThreadPoolExecutor(1) as side:  # the values' keys while retries are found
        keys_job = side.submit(short_keys, found.data, [values[param] for param in params])
        ids = span_texts(found.data, *values[id_param]) if id_param else pa.array([], pa.string())
        keep_mask, digests = _first_arrivals(found, ids)
        every_key = keys_job.result()
    duplicates = int(len(found.lines) - keep_mask.sum())
    kept = np.flatnonzero(keep_mask)  # positions in ``found``
    nothing = (pa.array([], pa.string()), np.full(len(kept), -1, np.int64))

    def build(index: int) -> pd.Series:
        column = names[index]
        if index == len(names) - 1:
            return pd.Series(_arrival_times(found, kept).to_pandas(), dtype="datetime64[us, UTC]")
        own_column = index >= len(CALLBACK_COLUMNS) - 1
        param = param_of(index)
        if param is None and by_column.get(column) is not None and not own_column:  # ids: nearly all distinct
            return _as_text(_decoded(ids.filter(pa.array(keep_mask)) if duplicates else ids))
        texts, codes = nothing
        if param is not None:
            start, end = cut[param]
            texts, codes = encoded(found.data, start, end, key=short[param])
        if own_column:
            return _as_text(pc.take(_decoded(texts), pa.array(codes, mask=codes < 0)))
        return _column(column, texts, codes)

    whole = len(kept) == len(found.lines)  # then ``kept`` is every position
    cut = {param: values[param] if whole else (values[param][0][kept], values[param][1][kept]) for param in params}
    # a key is the row's own value: the kept rows' keys are theirs among all (when all are short, so are these)
    short = {param: key if whole or key is None else key[kept] for param, key in zip(params, every_key, strict=True)}
    with ThreadPoolExecutor(2) as pool:  # cutting and encoding release the GIL
        # the arrival times (the longest job) first, so that no thread is left with it at the end
        built = list(pool.map(build, [len(names) - 1, *range(len(names) - 1)]))
        built = built[1:] + built[:1]
    # built here: no copy needed
    frame = pd.DataFrame(dict(zip(names[:len(CALLBACK_COLUMNS) - 1], built, strict=False)), copy=False)
    frame.insert(2, "delivery_meaning", frame["delivery"].map(DELIVERY_MEANINGS).astype(_MEANING_TYPE))
    for name, series in zip(names[len(CALLBACK_COLUMNS) - 1:], built[len(CALLBACK_COLUMNS) - 1:], strict=True):
        frame[name] = series
    frame.attrs["junk_lines"] = len(found.junk)
    examples = lines.take(found.junk[:JUNK_EXAMPLES]).to_pylist() if len(found.junk) else []
    frame.attrs["junk_examples"] = [line.rstrip("\r\n") for line in examples]
    frame.attrs["duplicates_dropped"] = duplicates
    frame.attrs["other_requests"] = found.other_requests
    return (frame, found.query_start[kept].astype(np.int64), found.query_end[kept].astype(np.int64),
            digests.taken(kept))


# lines located at a time: their temporaries stay small, warm in memory and in cache (at 1 << 16 the two
# blocks' temporaries were 1.3 times the whole located result at 340k lines: 105 MiB)
BLOCK_LINES = 1 << 14


@dataclass
class _Notifications:
    """The requests that carry an id, in log order: their line, where each parameter's value lies,
    and where their query and arrival time are (byte offsets into ``data``); and the rest counted."""

    data: pa.Buffer
    lines: np.ndarray  # line number of each notification
    values: dict[str, tuple[np.ndarray, np.ndarray]]  # parameter -> (start, end) of its encoded value, -1 if absent
    query_start: np.ndarray
    query_end: np.ndarray
    receiver: np.ndarray  # written by the receiver (arrival time line_start..stamp_end) or an access log (when_*)
    line_start: np.ndarray
    stamp_end: np.ndarray
    when_start: np.ndarray
    when_end: np.ndarray
    junk: np.ndarray  # line numbers of junk lines (not comments, not requests to another path)
    other_requests: int


def _locate_notifications(lines: pa.Array, keys: list[str], order: list[str], wanted_path: str | None,
                          id_param: str | None) -> _Notifications:
    """Locate every notification of ``lines``, a block of lines at a time on two threads."""
    n = len(lines)
    blocks = [(at, min(at + BLOCK_LINES, n)) for at in range(0, n, BLOCK_LINES)] or [(0, 0)]

    def locate(bounds: tuple[int, int]) -> tuple[pa.Buffer, list[np.ndarray], np.ndarray, int]:
        first, stop = bounds
        found = locate_requests(lines.slice(first, stop - first), order, wanted_path)
        raw = np.frombuffer(found.data, dtype=np.uint8)
        counted = found.line_end > found.line_start  # empty lines and nulls are nothing, not junk
        is_comment = counted & (byte_at(raw, found.line_start) == ord("#"))
        has_query = found.query_start >= 0
        candidate = np.flatnonzero(~is_comment & ~found.other & has_query & counted)
        values = _param_spans(found, candidate, keys, order)
        has_id = values[id_param][1] > values[id_param][0] if id_param else np.zeros(len(candidate), bool)
        junk = ~is_comment & ~found.other & ~has_query & counted
        junk[candidate[~has_id]] = True
        rows = candidate[has_id]
        located = [first + rows, *(part[has_id] for name in keys for part in values[name])]
        located += [field[rows] for field in (found.query_start, found.query_end, found.receiver, found.line_start,
                                               found.stamp_end, found.when_start, found.when_end)]
        return found.data, located, first + np.flatnonzero(junk), int(found.other.sum())

    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(locate, blocks))
    blocks_located = [located for _, located, _, _ in parts]
    columns = []
    for _ in range(len(blocks_located[0])):  # each column's blocks let go as it is joined: never all held twice
        columns.append(np.concatenate([located.pop(0) for located in blocks_located]))
    line, spans = columns[0], columns[1:1 + 2 * len(keys)]
    query_start, query_end, receiver, line_start, stamp_end, when_start, when_end = columns[1 + 2 * len(keys):]
    values = {name: (spans[2 * i], spans[2 * i + 1]) for i, name in enumerate(keys)}
    return _Notifications(parts[0][0], line, values, query_start, query_end, receiver, line_start, stamp_end,
                          when_start, when_end, np.concatenate([junk for _, _, junk, _ in parts]),
                          sum(other for *_, other in parts))


def _param_spans(found: Requests, rows: np.ndarray, keys: list[str],
                 order: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per parameter, the (start, end) offsets of its still percent-encoded value in each of ``rows``.

    Queries holding exactly the notificationUrl's parameters in its order (as the service fills
    them) are cut by position; any other query is searched by name. ``-1`` where absent.
    """
    regular, item = regular_items(found, rows, order)
    every = bool(regular.all())  # then nothing below writes into the spans: ``end`` may be a view
    spans = {}
    for name in keys:
        if name in order:
            start, end = item(order.index(name))
            start = start + len((name + "=").encode())
            spans[name] = (start, end) if every else (np.where(regular, start, -1), np.where(regular, end, -1))
        else:
            spans[name] = (np.full(len(rows), -1, np.int64), np.full(len(rows), -1, np.int64))
    irregular = np.flatnonzero(~regular)
    if len(irregular):
        for name, (start, end) in items_by_name(found, rows[irregular], keys, order).items():
            spans[name][0][irregular] = start
            spans[name][1][irregular] = end
    return spans


def _first_arrivals(found: _Notifications, ids: pa.Array) -> tuple[np.ndarray, QueryDigests]:
    """Mask of the notifications whose query is seen there for the first time (exact duplicates are retries),
    and the digests of the queries it looked at.

    Equal queries carry equal ids, so only lines whose id may repeat need their query looked at; of
    those, a query whose digest (:func:`span_digests`) no other has is a first arrival, and only queries
    sharing a digest (retries, and the rare collision) are compared as texts.
    """
    first = np.ones(len(ids), dtype=bool)
    digests = QueryDigests(np.zeros(len(ids), np.uint64), np.zeros(len(ids), bool))
    if len(ids) < 2:
        return first, digests
    shared = np.flatnonzero(repeated(ids))
    if len(shared):
        digests.values[shared] = span_digests(found.data, found.query_start[shared], found.query_end[shared])
        digests.made[shared] = True
        shared = shared[pd.Index(digests.values[shared]).duplicated(keep=False)]
    if len(shared):
        _, codes = encoded(found.data, found.query_start[shared], found.query_end[shared])
        first[shared] = False
        first[shared[np.unique(codes, return_index=True)[1]]] = True
    return first, digests


def _arrival_times(found: _Notifications, rows: np.ndarray) -> pa.Array:
    """The arrival time of each of ``rows``: the receiver's ISO stamp or the access log's %t."""
    utc = pa.timestamp("us", tz="UTC")
    micros = np.zeros(len(rows), np.int64)
    valid = np.zeros(len(rows), bool)
    receiver = found.receiver[rows]
    if receiver.any():
        stamps = span_texts(found.data, found.line_start[rows[receiver]], found.stamp_end[rows[receiver]])
        try:
            parsed = pc.cast(stamps, utc)
        except pa.ArrowInvalid:
            parsed = pa.array(pd.to_datetime(stamps.to_pandas(), errors="coerce", utc=True, format="ISO8601"), type=utc)
        micros[receiver], valid[receiver] = _micros(parsed)
    access = ~receiver
    if access.any():
        texts, codes = encoded(found.data, found.when_start[rows[access]], found.when_end[rows[access]])
        parsed = _strptime(texts, "%d/%b/%Y:%H:%M:%S %z")
        micros[access], valid[access] = _micros(pc.take(parsed, pa.array(codes, mask=codes < 0)))
    return pa.Array.from_buffers(utc, len(rows), [pa.array(valid).buffers()[1] if not valid.all() else None,
                                                   pa.py_buffer(micros)])


def _micros(stamps: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    valid = stamps.is_valid().to_numpy(zero_copy_only=False)
    return pc.fill_null(stamps.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), valid


def _column(column: str, texts: pa.Array, codes: np.ndarray) -> pd.Series:
    """One output column from the distinct raw texts and each row's code (-1: absent)."""
    indices = pa.array(codes, mask=codes < 0)
    if column in _DATE_COLUMNS:
        stamps = _strptime(_decoded(texts), _NOTIFICATION_DATE)
        return pd.Series(pc.take(stamps, indices).to_pandas(), dtype="datetime64[us, UTC]")
    if column in _INTEGER_TYPES or column == "cost":
        return _typed(column, texts, indices)
    texts = _decoded(texts)
    if column == "status":
        known = {status: code for code, status in enumerate(STATUSES)}
        categories = np.array([known.get(text, -1) for text in texts.to_pylist()] + [-1], dtype=np.int8)
        return pd.Series(pd.Categorical.from_codes(categories[codes], dtype=_STATUS_TYPE))
    if column in TEXT_CATEGORIES:  # decoded texts may repeat ('a+b', 'a%20b'): their codes are merged
        merged, distinct = pd.factorize(_as_text(texts), sort=True)  # sorted: the same dtype whatever the order read
        return pd.Series(pd.Categorical.from_codes(np.append(merged, -1)[codes], categories=distinct.astype("str")))
    return _as_text(pc.take(texts, indices))


def stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Callback frames end to end (``pd.concat``, a new index); a categorical column whose categories differ
    between them (another sender, a new network's mnc) becomes one categorical of all their categories (sorted,
    as ``parse_lines`` sorts them), not text.

    >>> first, then = (pd.DataFrame({"mnc": pd.Categorical([mnc])}) for mnc in ("01", "07"))
    >>> stacked([first, then])["mnc"].cat.categories.tolist()
    ['01', '07']
    """
    changed = {}
    for column in frames[0].columns:
        kinds = [frame[column].dtype for frame in frames if column in frame]
        categorical = [kind for kind in kinds if isinstance(kind, pd.CategoricalDtype)]
        if len(categorical) == len(kinds) and len(set(kinds)) > 1:
            categories = categorical[0].categories.append([kind.categories for kind in categorical[1:]]).unique()
            ordered = categorical[0].ordered
            changed[column] = pd.CategoricalDtype(categories if ordered else categories.sort_values(), ordered)
    if changed:
        frames = [frame.astype(changed) for frame in frames]
    return pd.concat(frames, ignore_index=True)


@lru_cache(maxsize=1 << 16)
def _unquote(value: str) -> str:
    return unquote_plus(value)


def _decoded(texts: pa.Array) -> pa.Array:
    """Percent-decode distinct values, only when some value needs it."""
    if len(texts) == 0 or not any(pc.any(pc.match_substring(texts, sign)).as_py() for sign in ("%", "+")):
        return texts
    return pa.array([None if v is None else _unquote(v) for v in texts.to_pylist()], type=pa.string())


def _strptime(texts: pa.Array, form: str) -> pa.Array:
    """Parse date-times (distinct values: notification dates repeat a lot); UTC, null if invalid."""
    stamps = pc.strptime(texts, format=form, unit="us", error_is_null=True)
    return stamps.cast(pa.timestamp("us", tz="UTC"))


def _as_text(raw: pa.Array) -> pd.Series:
    values: pd.Series = raw.to_pandas(types_mapper=pd.ArrowDtype)  # pyarrow is untyped: the Series it makes
    return values.astype("string")


def _typed(column: str, texts: pa.Array, indices: pa.Array) -> pd.Series:
    """A numeric column: its distinct ``texts`` are cast (whether one fails decides for them all),
    then taken per row by ``indices``."""
    target = pa.float64() if column == "cost" else pa.int64()

    def numbers(texts: pa.Array) -> pa.Array:
        blank = pc.if_else(pc.equal(texts, ""), None, texts)
        try:
            return pc.cast(blank, target)
        except pa.ArrowInvalid:  # a value that is not a number becomes <NA>
            number = pa.array(pd.to_numeric(blank.to_pandas(), errors="coerce"), type=pa.float64())
            if column == "cost":
                return number
            return pc.cast(pc.if_else(pc.equal(pc.floor(number), number), number, None), pa.int64())

    number = numbers(texts)
    if column == "cost":
        return pd.Series(pc.take(number, indices).to_pandas(), dtype="float64")
    integer = np.dtype(_INTEGER_TYPES[column])
    bounds, held = np.iinfo(integer), pa.from_numpy_dtype(integer)
    number = pc.if_else(pc.and_(pc.greater_equal(number, bounds.min), pc.less_equal(number, bounds.max)), number, None)
    nullable = pd.api.types.pandas_dtype(integer.name.capitalize())  # Int8, Int16, Int64
    series: pd.Series = pc.take(number.cast(held), indices).to_pandas(types_mapper={held: nullable}.get)
    return series.astype(nullable)
