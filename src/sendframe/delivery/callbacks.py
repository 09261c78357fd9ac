"""Delivery notifications back into one typed DataFrame.

``read_callbacks`` reads the receiver's own log (``sendframe receive`` / ``Receiver``) and the
access logs of a web server the analyst already runs (nginx / Apache *combined* or *common*
format). The work is vectorised with pyarrow: one regex pulls the request's query out of every
line, one regex per parameter pulls each value, and percent-decoding runs once per distinct
value, never once per line.

    >>> frame = read_callbacks("callbacks.log")  # doctest: +SKIP
    >>> latest_status(frame)[["id", "part", "status"]]  # doctest: +SKIP

The receiver's log is one line per notification: ``<arrival time ISO 8601 UTC>\\t<raw query>``,
plus ``#params\\t<query>`` lines naming the analyst's own parameters of the notificationUrl.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qsl, unquote_plus, urlsplit

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from sendframe.api.errors import InputError
from sendframe.api.notifications import DELIVERY_MEANINGS, ESCAPE_CODES, FINAL_STATUSES, STATUSES

# the columns every callback frame has, in this order; the analyst's own parameters follow, then received_at
CALLBACK_COLUMNS: tuple[str, ...] = (
    "id", "delivery", "delivery_meaning", "status", "sender", "recipient", "sent_at", "reported_at",
    "cost", "mnc", "part", "campaign_id", "sending_id",
)
# the receiver's notificationUrl names each parameter after its column (id=%i&delivery=%d&...)
RECEIVER_MAPPING: dict[str, str] = {column: column for column in ESCAPE_CODES.values()}
PARAMS_LINE_PREFIX = "#params\t"
JUNK_EXAMPLES = 5
_WORKERS = min(8, os.cpu_count() or 1)

_STATUS_TYPE = pd.CategoricalDtype(list(STATUSES), ordered=True)
_INTEGER_COLUMNS = ("delivery", "part", "campaign_id", "sending_id")
_DATE_COLUMNS = ("sent_at", "reported_at")
_NOTIFICATION_DATE = "%Y-%m-%d %H:%M"

# access log (common / combined): ... [10/Oct/2026:13:55:36 +0000] "GET /dlr?a=1 HTTP/1.1" 200 ...
_ACCESS_LINE = (
    r'^\S+ \S+ \S+ \[(?P<when_clf>[^\]]+)\] "(?:GET|HEAD|POST) (?P<apath>[^?" ]*)\?(?P<aquery>[^" ]*) HTTP/[0-9.]+"'
)


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


def read_callbacks(path: str | os.PathLike[str], notification_url: str | None = None) -> pd.DataFrame:
    """Read a callback log into one typed frame, one row per distinct notification.

    ``notification_url`` is the address the analyst gave the service (e.g.
    ``https://x/dlr?mid=%i&st=%s&ref=crm``); it says which parameter carries which escape code and
    which parameters are the analyst's own (each becomes a column). Without it the receiver's
    mapping is used (parameters named after the columns) with the own parameters its log records.
    Only requests to the notificationUrl's path are read from an access log.

    Junk lines are counted in ``frame.attrs["junk_lines"]`` with the first few in
    ``attrs["junk_examples"]``; requests to other paths in ``attrs["other_requests"]``.

    >>> frame = read_callbacks("access.log", "https://shop.example/dlr?mid=%i&st=%s&ref=crm")  # doctest: +SKIP
    >>> frame[["id", "status", "ref"]]  # doctest: +SKIP
    """
    lines, unreadable = _read_lines(Path(path))
    if notification_url is not None:
        mapping, own = mapping_from_url(notification_url)
        wanted_path: str | None = urlsplit(notification_url).path or "/"
        order = [name for name, _ in parse_qsl(urlsplit(notification_url).query, keep_blank_values=True)]
    else:
        templates = pc.filter(lines, pc.starts_with(lines, PARAMS_LINE_PREFIX)).to_pylist()
        mapping, own, order = dict(RECEIVER_MAPPING), _own_params_of_receiver_log(templates), []
        if templates:
            order = [name for name, _ in parse_qsl(templates[-1][len(PARAMS_LINE_PREFIX):], keep_blank_values=True)]
        wanted_path = None
    frame = parse_lines(lines, mapping, own, wanted_path, order=order)
    frame.attrs["junk_lines"] += len(unreadable)
    frame.attrs["junk_examples"] = (unreadable + frame.attrs["junk_examples"])[:JUNK_EXAMPLES]
    return frame


def _read_lines(path: Path) -> tuple[pa.Array, list[str]]:
    """Every line of the file as a pyarrow string array (fast CSV reader; Python fallback)."""
    if path.stat().st_size == 0:
        return pa.array([], type=pa.string()), []
    unreadable: list[str] = []

    def skip(row: object) -> str:
        unreadable.append(str(getattr(row, "text", row))[:200])
        return "skip"

    try:
        table = pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=["line"]),
            parse_options=pa_csv.ParseOptions(
                delimiter="\x01", quote_char=False, escape_char=False, ignore_empty_lines=True, invalid_row_handler=skip
            ),
            convert_options=pa_csv.ConvertOptions(column_types={"line": pa.string()}, strings_can_be_null=False),
        )
        return table.column("line").combine_chunks(), unreadable
    except (pa.ArrowInvalid, UnicodeDecodeError):  # invalid UTF-8 somewhere: decode with replacement
        text = path.read_bytes().decode("utf-8", errors="replace")
        return pa.array([line for line in text.splitlines() if line], type=pa.string()), []


def _own_params_of_receiver_log(templates: list[str]) -> list[str]:
    own: list[str] = []
    for line in templates:
        for name, _ in parse_qsl(line[len(PARAMS_LINE_PREFIX):], keep_blank_values=True):
            if name not in own and name not in RECEIVER_MAPPING:
                own.append(name)
    return own


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
    n = len(lines)
    query, received_at, request_path = _queries(lines)
    is_comment = pc.starts_with(lines, "#")
    other = pc.fill_null(pc.not_equal(request_path, wanted_path), False) if wanted_path else pa.repeat(False, n)
    candidate = pc.and_(pc.and_(pc.invert(is_comment), pc.invert(other)), pc.is_valid(query))
    wanted = {param: column for param, column in mapping.items()} | {name: name for name in own}
    keys = list(wanted)
    key_order = [k for k in (order or []) if k in wanted] + [k for k in keys if k not in (order or [])]
    values = _param_values(query, key_order, order or key_order)
    id_param = next((p for p, c in mapping.items() if c == "id"), None)
    has_id = pc.fill_null(pc.not_equal(values[id_param], ""), False) if id_param else pa.repeat(False, n)
    junk = pc.and_(candidate, pc.invert(has_id))
    junk = pc.or_(junk, pc.and_(pc.invert(pc.or_(is_comment, other)), pc.is_null(query)))
    rows = np.flatnonzero(np.logical_and(candidate.to_numpy(zero_copy_only=False), has_id.to_numpy(zero_copy_only=False)))
    keep_mask = _first_arrivals(query, values[id_param] if id_param else None, rows, n)
    duplicates = int(len(rows) - keep_mask.sum())
    keep = pa.array(keep_mask)

    columns: dict[str, object] = {}
    by_column = {column: param for param, column in mapping.items()}
    for column in CALLBACK_COLUMNS:
        if column == "delivery_meaning":
            continue
        param = by_column.get(column)
        raw = pc.filter(values[param], keep) if param else pa.nulls(int(keep_mask.sum()), pa.string())
        needs_decoding = column not in _INTEGER_COLUMNS and column not in _DATE_COLUMNS and column != "cost"
        columns[column] = _typed(column, _decoded(raw) if needs_decoding else raw)
    frame = pd.DataFrame(columns)
    frame.insert(2, "delivery_meaning", frame["delivery"].map(DELIVERY_MEANINGS).astype("string"))
    for name in own:
        frame[name] = _as_text(_decoded(pc.filter(values[name], keep)))
    frame["received_at"] = pd.Series(pc.filter(received_at, keep).to_pandas(), dtype="datetime64[us, UTC]")
    junk_count = int(pc.sum(junk).as_py() or 0)
    frame.attrs["junk_lines"] = junk_count
    frame.attrs["junk_examples"] = pc.filter(lines, junk).slice(0, JUNK_EXAMPLES).to_pylist() if junk_count else []
    frame.attrs["duplicates_dropped"] = duplicates
    frame.attrs["other_requests"] = int(pc.sum(other).as_py() or 0)
    return frame


def _first_arrivals(query: pa.Array, ids: pa.Array | None, rows: np.ndarray, n: int) -> np.ndarray:
    """Mask of ``rows`` whose query is seen there for the first time (exact duplicates are retries).

    Equal queries carry equal ids, so only rows whose id repeats need their whole query compared.
    """
    first = np.zeros(n, dtype=bool)
    first[rows] = True
    if ids is None or len(rows) < 2:
        return first
    id_codes = pc.dictionary_encode(pc.take(ids, rows)).indices.to_numpy(zero_copy_only=False)
    shared = rows[np.bincount(id_codes)[id_codes] > 1]
    if len(shared):
        codes = pc.dictionary_encode(pc.take(query, shared)).indices.to_numpy(zero_copy_only=False)
        first[shared] = False
        first[shared[np.unique(codes, return_index=True)[1]]] = True
    return first


def _queries(lines: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Per line: the raw query string, the arrival time, the request path (access logs); null where none."""
    n = len(lines)
    # receiver line: fixed-width arrival time (32 characters), a tab, the query
    receiver = pc.fill_null(pc.and_(pc.equal(pc.utf8_slice_codeunits(lines, 32, 33), "\t"), pc.starts_with(lines, "2")), False)
    receiver_rows = receiver.to_numpy(zero_copy_only=False)
    query: pa.Array = pa.nulls(n, pa.string())
    received: pa.Array = pa.nulls(n, pa.timestamp("us", tz="UTC"))
    if receiver_rows.any():
        stamps = pc.if_else(receiver, pc.utf8_slice_codeunits(lines, 0, 32), None)
        try:
            received = pc.cast(stamps, pa.timestamp("us", tz="UTC"))
        except pa.ArrowInvalid:
            received = pa.array(pd.to_datetime(stamps.to_pandas(), errors="coerce", utc=True, format="ISO8601"),
                                type=pa.timestamp("us", tz="UTC"))
        query = pc.if_else(receiver, pc.utf8_slice_codeunits(lines, 33), None)
    request_path = pa.nulls(n, pa.string())
    access_rows = np.flatnonzero(~receiver_rows)
    if len(access_rows):
        subset = lines if len(access_rows) == n else pc.take(lines, access_rows)
        access = _parallel_regex(subset, _ACCESS_LINE)
        if len(access_rows) == n:
            positions = None
        else:
            spread = np.full(n, -1, dtype=np.int64)
            spread[access_rows] = np.arange(len(access_rows))
            positions = pa.array(spread, mask=spread < 0)

        def spread_back(values: pa.Array) -> pa.Array:
            return values if positions is None else pc.take(values, positions)

        access_query = spread_back(pc.struct_field(access, "aquery"))
        request_path = spread_back(pc.struct_field(access, "apath"))
        when = spread_back(_parse_times(pc.struct_field(access, "when_clf"), "%d/%b/%Y:%H:%M:%S %z"))
        query = pc.coalesce(query, access_query) if receiver_rows.any() else access_query
        received = pc.coalesce(received, when) if receiver_rows.any() else when
    return query, received, request_path


def _parallel_regex(lines: pa.Array, pattern: str) -> pa.Array:
    """``pc.extract_regex`` over slices of the array on several threads (pyarrow releases the GIL)."""
    workers = min(_WORKERS, max(1, len(lines) // 50_000))
    if workers == 1:
        return pc.extract_regex(lines, pattern)
    step = -(-len(lines) // workers)
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(lambda start: pc.extract_regex(lines.slice(start, step), pattern), range(0, len(lines), step)))
    return pa.concat_arrays(parts)


def _param_values(query: pa.Array, keys: list[str], order: list[str]) -> dict[str, pa.Array]:
    """Raw (still percent-encoded) value of each parameter per query; null where absent.

    Queries holding exactly the notificationUrl's parameters in its order (as the service fills
    them) are cut up with numpy on one ``&`` split; any other query is searched by name.
    """
    n = len(query)
    split = pc.split_pattern(query, "&")
    list_offsets = np.frombuffer(split.buffers()[1], dtype=np.int32)[split.offset:split.offset + n + 1]
    flat = split.values
    item_offsets = np.frombuffer(flat.buffers()[1], dtype=np.int32)[flat.offset:flat.offset + len(flat) + 1]
    data = flat.buffers()[2]
    regular = _items_named(list_offsets, item_offsets, data, order)
    present = pc.is_valid(query).to_numpy(zero_copy_only=False)
    irregular = present & ~regular
    first_item = item_offsets[list_offsets[:-1]] if len(item_offsets) > 1 else np.zeros(n, dtype=np.int32)
    take_even = pa.array(np.arange(0, 2 * n, 2, dtype=np.int64), mask=~regular)
    values: dict[str, pa.Array] = {}
    for name in keys:
        if name not in order or not regular.any():
            values[name] = pa.nulls(n, pa.string())
        else:
            item = np.where(regular, list_offsets[:-1] + order.index(name), 0)
            bounds = np.empty(2 * n + 1, dtype=np.int32)  # values interleaved with the bytes between them
            bounds[0:-1:2] = np.where(regular, item_offsets[item] + len((name + "=").encode()), first_item)
            bounds[1::2] = np.where(regular, item_offsets[item + 1], first_item)
            bounds[-1] = bounds[-2]
            spans = pa.Array.from_buffers(pa.string(), 2 * n, [None, pa.py_buffer(bounds), data])
            values[name] = pc.take(spans, take_even)
    if irregular.any():
        slow = _param_values_by_name(pc.filter(query, pa.array(irregular)), keys, order)
        values = {name: pc.replace_with_mask(values[name], pa.array(irregular), slow[name]) for name in keys}
    return values


def _items_named(list_offsets: np.ndarray, item_offsets: np.ndarray, data: pa.Buffer | None, order: list[str]) -> np.ndarray:
    """Per query: does it hold exactly ``len(order)`` items, the k-th starting with ``order[k] + "="``?"""
    n = len(list_offsets) - 1
    regular = np.diff(list_offsets) == len(order)
    if not order or data is None:
        return np.zeros(n, dtype=bool)
    first_item = item_offsets[list_offsets[:-1]] if len(item_offsets) > 1 else np.zeros(n, dtype=np.int32)
    for k, name in enumerate(order):
        if not regular.any():
            break
        prefix = name + "="
        item = np.where(regular, list_offsets[:-1] + k, 0)
        begin = np.where(regular, item_offsets[item], first_item)
        bounds = np.empty(2 * n + 1, dtype=np.int32)  # the first len(prefix) bytes of each item, and the rest between
        bounds[0:-1:2] = begin
        bounds[1::2] = np.minimum(begin + len(prefix.encode()), np.where(regular, item_offsets[item + 1], first_item))
        bounds[-1] = bounds[-2]
        heads = pa.Array.from_buffers(pa.binary(), 2 * n, [None, pa.py_buffer(bounds), data])
        regular &= pc.equal(heads, pa.scalar(prefix.encode(), pa.binary())).to_numpy(zero_copy_only=False)[0::2]
    return regular


def _param_values_by_name(query: pa.Array, keys: list[str], order: list[str]) -> dict[str, pa.Array]:
    """``_param_values`` for irregular queries: each parameter at its ``order`` position, else by name."""
    n = len(query)
    split = pc.split_pattern(query, "&")
    flat = pc.list_flatten(split)
    offsets = split.offsets.to_numpy()[:n + 1] if n else np.zeros(1, dtype=np.int32)
    starts = offsets[:-1].astype(np.int64)
    counts = np.diff(offsets)
    parents = pc.list_parent_indices(split).to_numpy()

    def value_of(name: str) -> pa.Array:
        prefix = name + "="
        where = np.full(n, -1, dtype=np.int64)
        misplaced = counts > 0
        if name in order:
            k = order.index(name)
            present = counts > k
            positions = starts + k
            candidate = pc.take(flat, positions if present.all() else pa.array(np.where(present, positions, 0), mask=~present))
            found = pc.fill_null(pc.starts_with(candidate, prefix), False).to_numpy(zero_copy_only=False)
            if found.all():
                return pc.utf8_slice_codeunits(candidate, len(prefix))
            where[found] = positions[found]
            misplaced &= ~found
        if misplaced.any():
            items = np.flatnonzero(misplaced[parents])
            hits = items[pc.starts_with(pc.take(flat, items), prefix).to_numpy(zero_copy_only=False)][::-1]
            where[parents[hits]] = hits  # reversed: the first occurrence wins
        taken = pc.take(flat, pa.array(where, mask=where < 0))
        return pc.utf8_slice_codeunits(taken, len(prefix))

    with ThreadPoolExecutor(_WORKERS) as pool:
        return dict(zip(keys, pool.map(value_of, keys)))


@lru_cache(maxsize=1 << 16)
def _unquote(value: str) -> str:
    return unquote_plus(value)


def _decoded(raw: pa.Array) -> pa.Array:
    """Percent-decode a column, once per distinct value and only when some value needs it."""
    if len(raw) == 0 or not (pc.any(pc.match_substring(raw, "%")).as_py() or pc.any(pc.match_substring(raw, "+")).as_py()):
        return raw
    encoded = pc.dictionary_encode(raw)
    dictionary = pa.array([_unquote(v) for v in encoded.dictionary.to_pylist()], type=pa.string())
    return pc.take(dictionary, encoded.indices)


def _parse_times(raw: pa.Array, form: str, *, percent_encoded: bool = False) -> pa.Array:
    """Parse date-times once per distinct value (notification dates repeat a lot); UTC, null if invalid."""
    encoded = pc.dictionary_encode(raw)
    texts = _decoded(encoded.dictionary) if percent_encoded else encoded.dictionary
    stamps = pc.strptime(texts, format=form, unit="us", error_is_null=True)
    stamps = stamps.cast(pa.timestamp("us", tz="UTC")) if stamps.type.tz is None else stamps.cast(pa.timestamp("us", tz="UTC"))
    return pc.take(stamps, encoded.indices)


def _as_text(raw: pa.Array) -> pd.Series:
    return raw.to_pandas(types_mapper=pd.ArrowDtype).astype("string")


def _typed(column: str, raw: pa.Array) -> pd.Series:
    if column in _INTEGER_COLUMNS or column == "cost":
        target = pa.float64() if column == "cost" else pa.int64()
        blank = pc.if_else(pc.equal(raw, ""), None, raw)
        try:
            number = pc.cast(blank, target)
        except pa.ArrowInvalid:  # a value that is not a number becomes <NA>
            number = pa.array(pd.to_numeric(blank.to_pandas(), errors="coerce"), type=pa.float64())
            number = number if column == "cost" else pc.cast(pc.if_else(pc.equal(pc.floor(number), number), number, None), pa.int64())
        series = number.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
        return series.astype("float64") if column == "cost" else series.astype("Int64")
    if column in _DATE_COLUMNS:
        stamps = _parse_times(raw, _NOTIFICATION_DATE, percent_encoded=True)
        return pd.Series(stamps.to_pandas(), dtype="datetime64[us, UTC]")
    text = _as_text(raw)
    if column == "status":
        return text.astype(_STATUS_TYPE)
    return text


def latest_status(callbacks: pd.DataFrame) -> pd.DataFrame:
    """One row per message and part: the final status when one arrived, else the latest intermediate.

    Arrival order does not matter: a final notification (DELIVRD, UNDELIV, EXPIRED, REJECTD,
    DELETED) is never overridden by an intermediate one (ACCEPTD, ...), whenever it arrived.
    Among notifications of the same kind the latest ``reported_at`` wins.

    >>> latest = latest_status(read_callbacks("callbacks.log"))  # doctest: +SKIP
    >>> latest["status"].value_counts()  # doctest: +SKIP
    """
    if callbacks.empty:
        return callbacks.copy()
    frame = callbacks.loc[callbacks["id"].notna()].copy()
    frame["_final"] = frame["status"].astype("string").isin(FINAL_STATUSES).fillna(False)
    order = ["_final", "reported_at"] + (["received_at"] if "received_at" in frame else [])
    frame = frame.sort_values(order, kind="stable", na_position="first")
    last = frame.groupby(["id", "part"], dropna=False, sort=False).tail(1)
    last = last.drop(columns="_final").sort_values(["id", "part"], kind="stable").reset_index(drop=True)
    last.attrs = {}
    return last
