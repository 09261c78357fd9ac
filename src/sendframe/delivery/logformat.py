"""Where the request, its arrival time and each parameter sit in callback log lines.

Everything here works on byte offsets into the lines' UTF-8 buffer (a pyarrow string array), so a
million lines are located without copying their text. One match-only regex (a DFA, no captures)
checks that an access line has the usual shape with the notificationUrl's parameters in order,
numpy finds every ``'&'`` and ``'?'`` byte once, and such a line is then cut by position; lines of
another shape go through the full combined-log regex and are searched by parameter name.
``span_texts`` cuts (start, end) offsets into a pyarrow string array, ready for ``dictionary_encode``.

    >>> lines = pa.array(["2026-01-01T00:00:00.000000+00:00\\tid=a1&status=DELIVRD"])
    >>> found = locate_requests(lines)
    >>> span_texts(found.data, found.query_start, found.query_end).to_pylist()
    ['id=a1&status=DELIVRD']
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_WORKERS = min(8, os.cpu_count() or 1)
RECEIVER_STAMP = 32  # the receiver writes a fixed-width ISO 8601 arrival time, a tab, the raw query

# access log (common / combined): ... [10/Oct/2026:13:55:36 +0000] "GET /dlr?a=1 HTTP/1.1" 200 ...
ACCESS_LINE = (
    r'^(?P<pre>\S+ \S+ \S+ \[)(?P<when_clf>[^\]]+)(?P<mid>\] "(?:GET|HEAD|POST) )(?P<apath>[^?" ]*)\?'
    r'(?P<aquery>[^" ]*) HTTP/[0-9.]+"'
)
# a narrower shape that ACCESS_LINE also matches, with the same captures, whose fields are found by
# position: no '&', '?' or '[' in the first three fields, a fixed-width timestamp, no '&' in the path,
# and (see _in_order_line) a query of the expected parameters whose values hold no '&' or '?'
_USUAL_ACCESS_LINE = (
    r'^[^\s&?\[]+ [^\s&?\[]+ [^\s&?\[]+ \[\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "(?:GET|HEAD|POST) '
    r'[^?"& ]*\?[^" ]* HTTP/[0-9.]+"'
)
COMPRESSED_ENDINGS = (".bz2", ".gz", ".lz4", ".zst")  # pyarrow's input_stream decompresses these
_CLF_TIME_WIDTH = 26  # 10/Oct/2026:13:55:36 +0000
_NO_VALUE = 0xFFFFFFFFFFFFFFFF  # the key of a missing value among keys (length << 56 | bytes) of short ones


def _in_order_line(order: list[str], path: str | None = None) -> str:
    """``_USUAL_ACCESS_LINE`` whose query is exactly ``order``'s parameters, in order, with no
    ``'?'`` in their values (so every separator in it is one of their ``'&'``); with ``path``
    (see ``_path_in_regex``), only requests to that path."""
    def literal(text: str) -> str:
        return "".join(c if c.isascii() and (c.isalnum() or c == "_") else f"\\x{{{ord(c):x}}}" for c in text)

    query = "&".join(literal(name) + '=[^&?" ]*' for name in order)
    line = _USUAL_ACCESS_LINE.replace(r'\?[^" ]* HTTP/', "\\?" + query + " HTTP/")
    return line.replace(r'[^?"& ]*\?', literal(path) + "\\?") if path is not None else line


def _path_in_regex(wanted_path: str | None) -> bool:
    """Whether the in-order regex can hold the wanted path itself: a path without ``' "?&'`` (a
    usual line's path never has one). Usual-shaped lines to another path then go through the full
    regex, which marks them ``other`` (they are never receiver lines, see ``locate_requests``)."""
    return wanted_path is not None and wanted_path != "" and not any(c in wanted_path for c in ' "?&')


@dataclass
class Requests:
    """Per line, byte offsets of its parts (``-1`` where a line has none); int32 below 2 GiB of lines."""

    data: pa.Buffer  # the lines' UTF-8 bytes (an empty buffer for no lines)
    line_start: np.ndarray
    line_end: np.ndarray
    receiver: np.ndarray  # the receiver's own line format
    stamp_end: np.ndarray  # receiver lines: the arrival time is line_start..stamp_end
    query_start: np.ndarray
    query_end: np.ndarray
    path_start: np.ndarray  # access lines only
    path_end: np.ndarray
    when_start: np.ndarray  # access lines only (%d/%b/%Y:%H:%M:%S %z)
    when_end: np.ndarray
    other: np.ndarray  # access lines to another path than the wanted one
    separators: np.ndarray  # sorted offsets of every '&' and '?' byte
    first_separator: np.ndarray  # per usual access line, the index in ``separators`` of its '?'; -1 elsewhere
    in_order: np.ndarray  # usual access lines (their query holds exactly the expected parameters in order)


def locate_requests(lines: pa.Array, order: list[str] | None = None, wanted_path: str | None = None) -> Requests:
    """Find each line's query, request path and arrival time (nulls in ``lines`` count as empty).

    ``order``: the parameters a query is expected to hold, in order (lines that do are cut fastest);
    ``wanted_path``: requests to another path are marked ``other``.
    """
    n = len(lines)
    if lines.null_count:
        lines = pc.fill_null(lines, "")
    width = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    data = lines.buffers()[2] if n else None
    if data is None or data.size == 0:
        data = pa.py_buffer(b"")
    raw = np.frombuffer(data, dtype=np.uint8)
    position = np.int32 if len(raw) < 2**31 - 16 else np.int64  # half the memory for offsets below 2 GiB
    offsets = np.frombuffer(lines.buffers()[1], dtype=width)[lines.offset:lines.offset + n + 1].astype(position)
    start, end = offsets[:-1], _without_line_break(raw, offsets[:-1], offsets[1:])
    none = np.full(n, -1, dtype=position)
    found = Requests(data, start, end, np.zeros(n, bool), none.copy(), none.copy(), none.copy(), none.copy(),
                     none.copy(),
                     none.copy(), none.copy(), np.zeros(n, bool), np.zeros(0, np.int64), none.copy(), np.zeros(n, bool))
    if n == 0:
        return found
    path = wanted_path if _path_in_regex(wanted_path) else None
    pattern = _in_order_line(order, path) if order else ""
    first_byte, last_byte = int(offsets[0]), int(offsets[-1])  # these lines' bytes: only they are scanned
    if n < 1 << 17:  # a block of a larger log (see callbacks): the caller runs blocks side by side
        usual = _to_numpy(pc.match_substring_regex(lines, pattern)) if order else np.zeros(n, bool)
        found.separators = _separators(raw[first_byte:last_byte], first_byte)
    else:
        with ThreadPoolExecutor(2) as pool:  # the regex and the byte scan both release the GIL
            usual_job = (pool.submit(_parallel, lambda part: pc.match_substring_regex(part, pattern), lines)
                         if order else None)
            found.separators = _separators(raw[first_byte:last_byte], first_byte)
            usual = _to_numpy(usual_job.result()) if usual_job else np.zeros(n, bool)
    found.in_order = usual
    _cut_usual_access_lines(found, lines, raw, np.flatnonzero(usual), order or [], wanted_path)
    # a usual access line is never a receiver line: its 33rd character is in the timestamp
    unusual = np.flatnonzero(~usual)
    non_ascii = np.zeros(n, bool)
    if len(unusual):
        found.receiver[unusual], non_ascii[unusual] = _receiver_lines(lines, raw, unusual, start[unusual], end[unusual])
    rest = np.flatnonzero(~found.receiver & ~usual)
    if len(rest):
        _cut_by_regex(found, lines, rest)
        if wanted_path:
            has_path = rest[found.path_start[rest] >= 0]
            found.other[has_path] = ~spans_equal(raw, found.path_start[has_path], found.path_end[has_path],
                                                 wanted_path.encode())
    receiver = np.flatnonzero(found.receiver)
    if len(receiver):
        found.stamp_end[receiver] = start[receiver] + _stamp_bytes(lines, receiver, non_ascii[receiver])
        found.query_start[receiver] = found.stamp_end[receiver] + 1
        found.query_end[receiver] = end[receiver]
    return found


def read_lines(path: str | os.PathLike[str]) -> pa.Array:
    """Every line of a file (``.gz``, ``.bz2``, ... decompressed by their ending), each with its line
    break, as one string array over the file's bytes as read: lines are found, never copied.
    ``locate_requests`` leaves the breaks out of every line; bytes that are not UTF-8 become U+FFFD.

        >>> import tempfile, pathlib
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "a.log"
        >>> _ = log.write_bytes(b"one\\r\\ntwo")
        >>> read_lines(log).to_pylist()
        ['one\\r\\n', 'two']
    """
    return lines_of_bytes(_file_bytes(os.fspath(path)))


def lines_of_bytes(data: pa.Buffer) -> pa.Array:
    """The lines of ``data`` (as ``read_lines``), over ``data`` itself when it is UTF-8."""
    lines = _lines_of(data)
    try:
        lines.validate(full=True)  # UTF-8
    except pa.ArrowInvalid:
        lines = _lines_of(pa.py_buffer(data.to_pybytes().decode("utf-8", errors="replace").encode()))
    return lines


def _file_bytes(name: str) -> pa.Buffer:
    """The file's bytes: a plain file is mapped (its pages are the page cache's: nothing is copied,
    no memory is taken), a compressed one is read and decompressed."""
    if not name.endswith(COMPRESSED_ENDINGS) and os.path.isfile(name) and os.path.getsize(name):
        with pa.memory_map(name) as mapped:
            return mapped.read_buffer()
    with pa.input_stream(name) as stream:
        return stream.read_buffer()


def _lines_of(data: pa.Buffer) -> pa.Array:
    raw = np.frombuffer(data, np.uint8)
    ends = byte_positions(raw, b"\n") + 1
    if len(raw) and raw[-1] != ord("\n"):
        ends = np.append(ends, len(raw))
    width, kind = (np.int32, pa.string()) if len(raw) < 2**31 else (np.int64, pa.large_string())
    offsets = np.zeros(len(ends) + 1, width)
    offsets[1:] = ends
    return pa.Array.from_buffers(kind, len(ends), [None, pa.py_buffer(offsets), data])


def _without_line_break(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Line ends before a trailing ``\\n`` or ``\\r\\n``."""
    end = end - ((end > start) & (byte_at(raw, end - 1) == ord("\n")))
    stripped: np.ndarray = end - ((end > start) & (byte_at(raw, end - 1) == ord("\r")))
    return stripped


def _parallel(kernel: Callable[[pa.Array], pa.Array], lines: pa.Array) -> pa.Array:
    """Run a pyarrow kernel over slices of ``lines`` on several threads."""
    workers = min(_WORKERS, max(1, len(lines) // 50_000))
    if workers == 1:
        return kernel(lines)
    step = -(-len(lines) // workers)
    with ThreadPoolExecutor(workers) as pool:
        return pa.concat_arrays(list(pool.map(lambda at: kernel(lines.slice(at, step)), range(0, len(lines), step))))


def _separators(raw: np.ndarray, offset: int = 0) -> np.ndarray:
    """Offsets (plus ``offset``) of every '&' and '?' byte."""
    positions = byte_positions(raw, b"&?")
    positions += offset
    return positions


def byte_positions(raw: np.ndarray, wanted: bytes) -> np.ndarray:
    """Sorted offsets of every byte of ``raw`` that is one of ``wanted`` (int32 below 2 GiB).

    Counted first, then written straight into one array (cache-sized pieces, two threads): per-piece
    results and their concatenation would take four times the memory (fresh memory is slow).

        >>> byte_positions(np.frombuffer(b"a&b?c&", np.uint8), b"&?").tolist()
        [1, 3, 5]
    """
    step = 1 << 20
    pieces = [(at, min(at + step, len(raw))) for at in range(0, len(raw), step)]

    def hits(piece: tuple[int, int]) -> np.ndarray:
        part = raw[piece[0]:piece[1]]
        hit: np.ndarray = part == wanted[0]
        for other in wanted[1:]:
            hit |= part == other
        return hit

    def each(work: Callable[[int], object]) -> list[object]:
        if len(pieces) < 32:
            return [work(index) for index in range(len(pieces))]
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(work, range(len(pieces))))

    counts = np.array(each(lambda index: np.count_nonzero(hits(pieces[index]))), np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    positions = np.empty(int(starts[-1]), np.int32 if len(raw) < 2**31 else np.int64)

    def fill(index: int) -> None:
        found = np.flatnonzero(hits(pieces[index]))
        np.add(found, pieces[index][0], out=positions[starts[index]:starts[index + 1]], casting="unsafe")

    each(fill)
    return positions


def _search(positions: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted`` with ``values`` of the positions' type (a mixed search would copy them)."""
    return np.searchsorted(positions, values.astype(positions.dtype, copy=False))


def _to_numpy(mask: pa.Array) -> np.ndarray:
    filled: np.ndarray = pc.fill_null(mask, False).to_numpy(zero_copy_only=False).copy()
    return filled


def _receiver_lines(lines: pa.Array, raw: np.ndarray, rows: np.ndarray, start: np.ndarray,
                    end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lines whose 33rd character is a tab and whose first is '2' (bytes, unless non-ASCII comes
    first); and which lines have non-ASCII bytes there."""
    long_enough = end - start > RECEIVER_STAMP
    at = np.where(long_enough, start, 0)
    receiver = long_enough & (byte_at(raw, at + RECEIVER_STAMP) == ord("\t")) & (byte_at(raw, at) == ord("2"))
    head = np.minimum(end - start, RECEIVER_STAMP + 1)
    non_ascii = np.zeros(len(start), bool)
    for word in range(0, RECEIVER_STAMP + 1, 8):
        non_ascii |= (words(raw, start + word) & _low_bytes(head - word) & 0x8080808080808080) != 0
    odd = np.flatnonzero(non_ascii)
    if len(odd):  # characters and bytes differ: decide as the characters say
        subset = pc.take(lines, rows[odd])
        by_chars = pc.and_(pc.equal(pc.utf8_slice_codeunits(subset, RECEIVER_STAMP, RECEIVER_STAMP + 1), "\t"),
                           pc.starts_with(subset, "2"))
        receiver[odd] = _to_numpy(by_chars)
    return receiver, non_ascii


def _stamp_bytes(lines: pa.Array, rows: np.ndarray, non_ascii: np.ndarray) -> np.ndarray:
    """Byte length of the first 32 characters of each of ``rows``."""
    size = np.full(len(rows), RECEIVER_STAMP, dtype=np.int64)
    odd = np.flatnonzero(non_ascii)
    if len(odd):
        stamps = pc.utf8_slice_codeunits(pc.take(lines, rows[odd]), 0, RECEIVER_STAMP)
        size[odd] = pc.binary_length(stamps).to_numpy(zero_copy_only=False)
    return size


def _cut_usual_access_lines(found: Requests, lines: pa.Array, raw: np.ndarray, rows: np.ndarray, order: list[str],
                            wanted_path: str | None) -> None:
    """Positions in lines of the usual shape: their first separator is the '?', the next ones the
    query's '&'; the query ends at the first space after the last parameter's name."""
    if not len(rows):
        return
    seps = found.separators
    first = _search(seps, found.line_start[rows])
    question = seps[first]
    last_item = seps[first + len(order) - 1] + 1
    found.first_separator[rows] = first
    found.query_start[rows] = question + 1
    found.query_end[rows] = _first_space(raw, last_item + len((order[-1] + "=").encode()))
    found.path_end[rows] = question
    if wanted_path:  # the path is the wanted one if it stands between a space and the '?'
        path = wanted_path.encode()
        if not _path_in_regex(wanted_path):  # such a path is never one of these lines' paths
            found.other[rows] = True
            return
        found.path_start[rows] = question - len(path)
        quote = found.path_start[rows] - 5  # '"GET ' or '"HEAD ' / '"POST '
        quote = np.where(byte_at(raw, quote) == ord('"'), quote, quote - 1)
        found.when_end[rows] = quote - 2
        found.when_start[rows] = quote - 2 - _CLF_TIME_WIDTH
    else:
        bracket = found.line_start[rows] + pc.find_substring(pc.take(lines, rows), "[").to_numpy(zero_copy_only=False)
        found.when_start[rows] = bracket + 1
        found.when_end[rows] = bracket + 1 + _CLF_TIME_WIDTH


def _first_space(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The offset of the first ' ' at or after each of ``at`` (there must be one), 8 bytes a step."""
    result = np.empty(len(at), np.int64)
    rows = np.arange(len(at))
    spaces, ones, highs = (np.uint64(0x2020202020202020), np.uint64(0x0101010101010101), np.uint64(0x8080808080808080))
    while len(rows):
        word = words(raw, at) ^ spaces  # a space becomes a zero byte
        zero = (word - ones) & ~word & highs  # the lowest set bit marks the first zero byte
        hit = zero != 0
        lowest = zero[hit] & (~zero[hit] + np.uint64(1))
        result[rows[hit]] = at[hit] + (np.log2(lowest.astype(np.float64)).astype(np.int64) >> 3)
        rows, at = rows[~hit], at[~hit] + 8
    return result


def _cut_by_regex(found: Requests, lines: pa.Array, rows: np.ndarray) -> None:
    """Lines of any other shape: the full access-line regex (lines it does not match keep -1)."""
    subset = lines if len(rows) == len(lines) else pc.take(lines, rows)
    parts = _parallel(lambda part: pc.extract_regex(part, ACCESS_LINE), subset)
    matched = _to_numpy(pc.is_valid(parts))
    rows = rows[matched]
    parts = parts.filter(pa.array(matched))
    size = {name: pc.binary_length(pc.struct_field(parts, name)).to_numpy(zero_copy_only=False).astype(np.int64)
            for name in ("pre", "when_clf", "mid", "apath", "aquery")}
    begin = found.line_start[rows]
    found.when_start[rows] = begin + size["pre"]
    found.when_end[rows] = found.when_start[rows] + size["when_clf"]
    found.path_start[rows] = found.when_end[rows] + size["mid"]
    found.path_end[rows] = found.path_start[rows] + size["apath"]
    found.query_start[rows] = found.path_end[rows] + 1
    found.query_end[rows] = found.query_start[rows] + size["aquery"]


def regular_items(found: Requests, rows: np.ndarray,
                  order: list[str]) -> tuple[np.ndarray, Callable[[int], tuple[np.ndarray, np.ndarray]]]:
    """Of ``rows`` (lines with a query), those whose query is exactly ``order``'s parameters in its
    order; and a function giving the (start, end) of the k-th item of each (meaningless for the others)."""
    raw = np.frombuffer(found.data, dtype=np.uint8)
    seps = found.separators
    k, n = len(order), len(rows)
    regular = found.in_order[rows] if k else np.zeros(n, bool)
    query_start, query_end = found.query_start[rows], found.query_end[rows]
    last = len(seps) - 1
    first = np.zeros(n, np.int64)  # the index of the first separator inside the query
    if k and n and len(seps):
        first = np.where(regular, found.first_separator[rows] + 1, 0)
        check = np.flatnonzero(~regular)  # the lines the in-order regex did not already vouch for
        if len(check):
            first[check] = _search(seps, query_start[check])
            amps = seps[np.minimum(first[check, None] + np.arange(k - 1), last)]
            ends = query_end[check]
            fits = np.all(byte_at(raw, amps) == ord("&"), axis=1) & np.all(amps < ends[:, None], axis=1)
            fits &= _search(seps, ends) - first[check] == k - 1
            for column, name in enumerate(order):
                if not fits.any():
                    break
                begin = query_start[check] if column == 0 else amps[:, column - 1] + 1
                end = ends if column == k - 1 else amps[:, column]
                fits &= spans_start_with(raw, begin, end, (name + "=").encode())
            regular[check] = fits

    # the query's '&' offsets, one row per line: a line's separators are neighbours in ``seps``, so
    # each row is a window of them, fetched together; an item's column is a strided view
    ampersands = np.zeros((n, max(k - 1, 0)), seps.dtype)
    if k > 1 and len(seps) >= k - 1:
        windows = np.lib.stride_tricks.sliding_window_view(seps, k - 1)
        ampersands = windows[first if regular.all() else np.clip(first, 0, len(windows) - 1)]

    def item(column: int) -> tuple[np.ndarray, np.ndarray]:
        begin = query_start if column == 0 else ampersands[:, column - 1] + 1
        end = query_end if column == k - 1 else ampersands[:, column]
        return begin, end

    return regular, item


def byte_at(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``raw[at]``, 0 where ``at`` is out of range."""
    inside = (at >= 0) & (at < len(raw))
    return np.where(inside, raw[np.where(inside, at, 0)] if len(raw) else 0, 0)


def _low_bytes(count: np.ndarray) -> np.ndarray:
    """A mask of the ``count`` (clipped to 0..8) low bytes of a 64-bit word."""
    count = np.clip(count, 0, 8).astype(np.uint64)
    return np.where(count >= 8, np.uint64(0xFFFFFFFFFFFFFFFF), (np.uint64(1) << (count * np.uint64(8))) - np.uint64(1))


def words(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The 8 bytes from each offset as a little-endian uint64 (zero past the end of ``raw``)."""
    at = np.asarray(at, dtype=np.int64)
    limit = len(raw) - 8
    if limit < 0:
        raw, limit = np.concatenate([raw, np.zeros(8, np.uint8)]), 0
    body = np.ndarray(shape=(limit + 1,), dtype="<u8", buffer=raw, strides=(1,))
    near_end = np.flatnonzero((at > limit) | (at < 0))
    if not len(near_end):
        found: np.ndarray = body[at]
        return found
    result: np.ndarray = body[np.clip(at, 0, limit)]
    tail = np.concatenate([raw[limit:limit + 8], np.zeros(16, np.uint8)])
    for row in near_end:  # at most a few offsets in the last 8 bytes
        offset = int(at[row]) - limit
        result[row] = int.from_bytes(tail[offset:offset + 8].tobytes(), "little") if 0 <= offset <= 16 else 0
    return result


def spans_start_with(raw: np.ndarray, start: np.ndarray, end: np.ndarray, prefix: bytes) -> np.ndarray:
    """Per span ``raw[start:end]``: does it start with ``prefix``?"""
    same: np.ndarray = end - start >= len(prefix)
    for at in range(0, len(prefix), 8):
        chunk = prefix[at:at + 8]
        expected = np.uint64(int.from_bytes(chunk, "little"))
        same &= (words(raw, start + at) & _low_bytes(np.full(1, len(chunk)))[0]) == expected
    return same


def spans_equal(raw: np.ndarray, start: np.ndarray, end: np.ndarray, text: bytes) -> np.ndarray:
    """Per span ``raw[start:end]``: is it exactly ``text``?"""
    equal: np.ndarray = (end - start == len(text)) & spans_start_with(raw, start, end, text)
    return equal


def span_strings(data: pa.Buffer, start: np.ndarray, end: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """``data[start:end]`` per row as a pyarrow ``string_view`` array, without copying the text.

    Rows where ``valid`` is False (or ``start`` is negative) are null.
    """
    n = len(start)
    valid = (start >= 0) if valid is None else (valid & (start >= 0))
    raw = np.frombuffer(data, dtype=np.uint8)
    length = np.where(valid, end - start, 0).astype(np.uint64)
    at = np.where(valid, start, 0)
    head = words(raw, at)
    short = length < 8
    if short.any():
        head &= _low_bytes(length.astype(np.int64))
    views = np.empty((n, 2), np.uint64)  # [length, first 4 bytes] + [bytes 4..11 inline | buffer 0, offset]
    views[:, 0] = length | (head << np.uint64(32))
    views[:, 1] = np.where(length <= 12, head >> np.uint64(32), at.astype(np.uint64) << np.uint64(32))
    middle = np.flatnonzero((length > 8) & (length <= 12))
    if len(middle):  # inline values of 9 to 12 bytes: their last bytes come from the next word
        rest = words(raw, at[middle] + 8) & _low_bytes(length[middle].astype(np.int64) - 8)
        views[middle, 1] |= rest << np.uint64(32)
    validity = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.string_view(), n, [validity, pa.py_buffer(views), data])


def span_texts(data: pa.Buffer, start: np.ndarray, end: np.ndarray) -> pa.Array:
    """``data[start:end]`` per row as a pyarrow string array (null where ``start`` is negative).

    Spans in increasing order (as a log's lines are) are cut with one ``take`` of the even rows of
    ``_interleaved``; others go through ``string_view``.
    """
    spans = _interleaved(data, start, end)
    if spans is None:
        return span_strings(data, start, end).cast(pa.string())
    n = len(start)
    valid = start >= 0
    validity = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    evens = pa.Array.from_buffers(pa.int32(), n, [validity, pa.py_buffer(np.arange(0, 2 * n, 2, dtype=np.int32))])
    return pc.take(spans, evens)


def _interleaved(data: pa.Buffer, start: np.ndarray, end: np.ndarray) -> pa.Array | None:
    """A string array over ``data`` whose rows are the spans (even rows; null where ``start`` is
    negative) and the bytes between them (odd rows, null): nothing is copied. None when the spans
    are not in increasing order or reach past 2 GiB."""
    n = len(start)
    valid = start >= 0
    every = bool(valid.all())
    if not every:  # a missing value becomes an empty span at the end of the previous one, keeping the order
        previous_end = np.maximum.accumulate(np.where(valid, end, 0))
        start, end = np.where(valid, start, previous_end), np.where(valid, end, previous_end)
    if n and (np.any(end < start) or np.any(start[1:] < end[:-1]) or end[-1] > 2**31 - 1):
        return None
    bounds = np.empty(2 * n + 1, np.int32)
    bounds[0:-1:2] = start
    bounds[1::2] = end
    bounds[-1] = bounds[-2] if n else 0
    if every:  # bits 0, 2, 4, ... set
        validity = np.full(-(-2 * n // 8), 0x55, np.uint8)
    else:
        validity = np.packbits(np.repeat(valid, 2) & np.tile([True, False], n), bitorder="little")
    return pa.Array.from_buffers(pa.string(), 2 * n, [pa.py_buffer(validity), pa.py_buffer(bounds), data])


def span_digests(data: pa.Buffer, start: np.ndarray, end: np.ndarray, step: int = 8192) -> np.ndarray:
    """A 64-bit digest of each span's bytes (``start`` >= 0): equal spans have equal digests, and unequal
    ones almost never do, so only the few with a shared digest need their texts compared. The spans are
    read 8 bytes at a time with numpy (no string is built, nothing is hashed into a table), a block of rows
    at a time so a block's words stay in the cache, in two threads (numpy lets go of the GIL).

        >>> data = pa.py_buffer(b"id=a&st=1 id=a&st=1 id=a&st=2")
        >>> digests = span_digests(data, np.array([0, 10, 20]), np.array([9, 19, 29]))
        >>> bool(digests[0] == digests[1]), bool(digests[0] == digests[2])
        (True, False)
        >>> bool(span_digests(data, np.array([0, 0]), np.array([9, 29]))[0] == digests[0])  # whatever its neighbours
        True
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    start = np.asarray(start, dtype=np.int64)
    length = np.asarray(end, dtype=np.int64) - start
    digest = np.empty(len(start), np.uint64)
    mix, shift = np.uint64(0x9E3779B97F4A7C15), np.uint64(29)

    def stir(block: np.ndarray, word: np.ndarray, scratch: np.ndarray) -> None:
        np.bitwise_xor(block, word, out=block)
        np.multiply(block, mix, out=block)
        np.right_shift(block, shift, out=scratch)
        np.bitwise_xor(block, scratch, out=block)

    def fill(bounds: tuple[int, int]) -> None:
        for at in range(bounds[0], bounds[1], step):
            stop = min(at + step, bounds[1])
            begin, size = start[at:stop], length[at:stop]
            block = (size.astype(np.uint64) + np.uint64(1)) * mix
            scratch = np.empty_like(block)
            whole = int(size.min(initial=0)) // 8 * 8  # every span of the block has these bytes: no mask
            for offset in range(0, whole, 8):
                stir(block, words(raw, begin + offset), scratch)
            for offset in range(whole, int(size.max(initial=0)), 8):
                left = size - offset
                going = left > 0  # a span that has ended keeps its digest: it must not depend on longer neighbours
                stirred = block.copy()
                stir(stirred, words(raw, np.where(going, begin + offset, 0)) & _low_bytes(left), scratch)
                np.copyto(block, stirred, where=going)
            digest[at:stop] = block

    n = len(start)
    halves = [(0, n // 2), (n // 2, n)] if n >= 1 << 16 else [(0, n)]
    with ThreadPoolExecutor(len(halves)) as pool:
        list(pool.map(fill, halves))
    return digest


def text_digests(texts: pa.Array) -> np.ndarray:
    """:func:`span_digests` of each text of a ``string`` or ``large_string`` array (a null's: an empty text's).

        >>> digests = text_digests(pa.array(["a1", "b2", "a1"]))
        >>> bool(digests[0] == digests[2]), bool(digests[0] == digests[1]), len(text_digests(pa.array([], pa.string())))
        (True, False, 0)
    """
    if not len(texts):
        return np.zeros(0, np.uint64)
    width = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    offsets = np.frombuffer(texts.buffers()[1], width)[texts.offset:texts.offset + len(texts) + 1]
    return span_digests(texts.buffers()[2] or pa.py_buffer(b""), offsets[:-1], offsets[1:])


def _short(start: np.ndarray, end: np.ndarray) -> bool:
    """Whether every present value of the spans is under 8 bytes (``encoded`` then hashes words)."""
    return bool(len(start)) and int(np.max(end - start, where=start >= 0, initial=0)) < 8


def short_keys(data: pa.Buffer, spans: list[tuple[np.ndarray, np.ndarray]],
               step: int = 8192) -> list[np.ndarray | None]:
    """For each (start, end) pair of equally long arrays, the keys ``encoded`` hashes when its
    values are short (None otherwise), fetched for all of them a few thousand rows at a time: the
    values of one line share its cache lines, so they come from memory once, not once per column."""
    raw = np.frombuffer(data, dtype=np.uint8)
    keys: list[np.ndarray | None] = [np.empty(len(start), np.uint64) if _short(start, end) else None
                                     for start, end in spans]
    parts = [(start, end, key) for (start, end), key in zip(spans, keys, strict=True) if key is not None]
    if parts:
        n = len(parts[0][0])

        def fill(bounds: tuple[int, int]) -> None:
            for at in range(bounds[0], bounds[1], step):
                stop = min(at + step, bounds[1])
                for start, end, key in parts:
                    begin = start[at:stop]
                    length = end[at:stop] - begin
                    valid = begin >= 0
                    part = ((words(raw, np.where(valid, begin, 0)) & _low_bytes(length))
                            | (length.astype(np.uint64) << np.uint64(56)))
                    part[~valid] = np.uint64(_NO_VALUE)
                    key[at:stop] = part

        halves = [(0, n // 2), (n // 2, n)] if n >= 1 << 16 else [(0, n)]
        with ThreadPoolExecutor(len(halves)) as pool:
            list(pool.map(fill, halves))
    return keys


def encoded(data: pa.Buffer, start: np.ndarray, end: np.ndarray,
            key: np.ndarray | None = None) -> tuple[pa.Array, np.ndarray]:
    """Distinct texts of the spans (a string array) and each row's code into them (-1 or a null text
    for a missing value). ``key``: the spans' ``short_keys`` when already computed."""
    if key is not None or _short(start, end):  # short values: hash 8 bytes with numpy
        if key is None:
            length = end - start
            valid = start >= 0
            raw = np.frombuffer(data, dtype=np.uint8)
            key = ((words(raw, np.where(valid, start, 0)) & _low_bytes(length))
                   | (length.astype(np.uint64) << np.uint64(56)))
            key[~valid] = np.uint64(_NO_VALUE)
        codes, distinct = pd.factorize(key)
        dictionary = pa.array([None if k == _NO_VALUE
                               else (k & 0xFFFFFFFFFFFFFF).to_bytes(8, "little")[:k >> 56].decode()
                               for k in distinct.tolist()], pa.string())
        return dictionary, codes.astype(np.int64)
    spans = _interleaved(data, start, end)
    if spans is None:
        encoding = pc.dictionary_encode(span_texts(data, start, end))
        return encoding.dictionary, pc.fill_null(encoding.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    encoding = pc.dictionary_encode(spans)  # the values are hashed where they lie; the null gaps are skipped
    codes = np.frombuffer(encoding.indices.buffers()[1], np.int32)[0:2 * len(start):2].astype(np.int64)
    if not (start >= 0).all():
        codes[start < 0] = -1
    return encoding.dictionary, codes


def repeated(texts: pa.Array) -> np.ndarray:
    """Mask of the texts (no nulls) that occur more than once."""
    n = len(texts)
    if n < 2:
        return np.zeros(n, bool)
    offsets = np.frombuffer(texts.buffers()[1], np.int32)[texts.offset:texts.offset + n + 1]
    width = int(offsets[1] - offsets[0])
    if width and np.all(np.diff(offsets) == width):  # fixed-width ids (hex, uuids): hash their bytes
        table = np.frombuffer(texts.buffers()[2], np.uint8)[offsets[0]:offsets[-1]].reshape(n, width)
        padded = np.zeros((n, -(-width // 8) * 8), np.uint8)
        padded[:, :width] = table
        digest = np.zeros(n, np.uint64)
        for word in padded.view("<u8").T:
            digest = (digest ^ word) * np.uint64(0x9E3779B97F4A7C15)
            digest ^= digest >> np.uint64(29)
        maybe = np.flatnonzero(pd.Index(digest).duplicated(keep=False))
        if len(maybe) < n:
            result = np.zeros(n, bool)
            if len(maybe):  # equal digests: compare the texts themselves
                result[maybe] = repeated(pc.take(texts, maybe))
            return result
    codes = pc.dictionary_encode(texts).indices.to_numpy(zero_copy_only=False)
    many: np.ndarray = np.bincount(codes)[codes] > 1
    return many


def items_by_name(found: Requests, rows: np.ndarray, keys: list[str],
                  order: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Value spans of queries in another order: each parameter at its ``order`` position when it is
    there, else its first occurrence; ``-1`` where a query lacks it."""
    raw = np.frombuffer(found.data, dtype=np.uint8)
    n = len(rows)
    query_start = found.query_start[rows]
    split = pc.split_pattern(span_texts(found.data, query_start, found.query_end[rows]), "&")
    offsets = split.offsets.to_numpy().astype(np.int64)
    item_offsets = np.frombuffer(split.values.buffers()[1], np.int32)[:len(split.values) + 1].astype(np.int64)
    parents = pc.list_parent_indices(split).to_numpy().astype(np.int64)
    items = np.arange(len(parents))
    item_start = query_start[parents] + item_offsets[:-1] - item_offsets[offsets[parents]] + items - offsets[parents]
    item_end = item_start + np.diff(item_offsets)
    starts, counts = offsets[:-1], np.diff(offsets)
    spans: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in keys:
        prefix = (name + "=").encode()
        where = np.full(n, -1, dtype=np.int64)
        misplaced = counts > 0
        if name in order:
            positions = starts + order.index(name)
            present = counts > order.index(name)
            at = np.where(present, positions, 0)
            hit = present & spans_start_with(raw, item_start[at], item_end[at], prefix) if len(items) else present
            where[hit] = positions[hit]
            misplaced &= ~hit
        if misplaced.any():
            candidates = np.flatnonzero(misplaced[parents])
            hits = candidates[spans_start_with(raw, item_start[candidates], item_end[candidates], prefix)][::-1]
            where[parents[hits]] = hits  # reversed: the first occurrence wins
        found_at = where >= 0
        value_start = np.where(found_at, item_start[np.maximum(where, 0)] + len(prefix), -1) if len(items) else where
        value_end = np.where(found_at, item_end[np.maximum(where, 0)], -1) if len(items) else where
        spans[name] = (value_start, value_end)
    return spans
