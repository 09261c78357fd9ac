"""Reading a growing callback log: each read parses only what was appended since the last one.

Per log (and notificationUrl) the last read is kept: the file's identity (``st_dev``, ``st_ino``),
how many bytes of whole lines were parsed, samples of the bytes read (all of them in a small log), the frame, and
where each row's raw query lies in the file. The next read parses the bytes appended since,
drops retries of rows already read (the same raw query again, as a full read does) and appends
the rest, so polling a log of millions of lines costs what the new lines cost. A file that was
replaced (rotated: another inode), truncated or rewritten (the bytes before the point changed)
is read again from the start; so is a receiver log whose restart names new own parameters.
A last line without its line break (being written) is parsed every time until it is whole.
A large read (a first one, or a poll after a long pause) is read and parsed in pieces (``PARSE_CHUNK``), each one
appended as a poll's lines are, so its parsing needs memory for one piece at a time.

    >>> reads = LogReads()
    >>> snapshot = reads.read("callbacks.log")  # doctest: +SKIP
    >>> snapshot.frame, snapshot.bytes_read  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa

from sendframe.delivery.logformat import COMPRESSED_ENDINGS, lines_of_bytes, read_lines, text_digests
from sendframe.delivery.parsing import (
    JUNK_EXAMPLES,
    PARAMS_LINE_PREFIX,
    LogParams,
    Parsed,
    log_params,
    parse_with_queries,
    receiver_templates,
    stacked,
)

CACHED_LOGS = 4           # logs whose last read is kept (each holds its frame)
PARSE_CHUNK = 32 << 20    # bytes of lines read and parsed at once (see _pieces)
_CHECKED_ENDS = 4096      # bytes at the start and just before the read point compared to notice a rewritten file
_CHECKED_SAMPLES = 16     # and this many samples of 64 bytes between them


@dataclass
class Snapshot:
    """A read: the frame; ``generation`` changes whenever the log was read again from the start;
    ``stable_rows`` leading rows stay as they are in later reads of the same generation;
    ``bytes_read`` is what this read parsed."""

    frame: pd.DataFrame
    generation: int
    stable_rows: int
    bytes_read: int


@dataclass
class _Read:
    identity: tuple[int, int]
    consumed: int             # bytes of whole lines parsed
    fingerprint: bytes        # sampled bytes of the part read (see ``_fingerprint``)
    params: LogParams
    frame: pd.DataFrame
    query_start: np.ndarray   # each row's raw query in the file; -1 when unknown (a block that was not UTF-8)
    query_length: np.ndarray  # and its length (int32: kept for every row, as the digests below)
    query_digests: np.ndarray  # each row's raw query's digest (``span_digests``): a retry has its row's digest
    generation: int
    ids: _IdDigests
    tail: tuple[pd.DataFrame, ...] = ()  # rows after ``frame``, not stacked onto it yet (the pieces of one read)

    @property
    def rows(self) -> int:
        return len(self.frame) + sum(len(part) for part in self.tail)

    def row(self, at: int) -> pd.Series:
        """Row ``at`` (counting the tail's rows after the frame's)."""
        for part in (self.frame, *self.tail):
            if at < len(part):
                return part.iloc[at]
            at -= len(part)
        raise IndexError(at)

    def stacked(self) -> _Read:
        """This read with its tail stacked onto its frame (one concatenation for all the pieces of a read)."""
        return replace(self, frame=_appended(self.frame, self.tail), tail=()) if self.tail else self


@dataclass(frozen=True)
class _IdDigests:
    """The rows' ids as sorted 64-bit digests, with the row of each: where a new row's id was seen before is
    found by binary search, in time that follows the new rows, not the rows read before."""

    digests: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(cls, ids: pd.Series, first_row: int = 0) -> _IdDigests:
        texts = pa.array(ids, from_pandas=True)  # the frame's own Arrow text: nothing copied
        texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
        if not pa.types.is_string(texts.type) and not pa.types.is_large_string(texts.type):
            texts = texts.cast(pa.large_string())
        present = np.flatnonzero(np.asarray(texts.is_valid()))  # a missing id matches nothing
        digests = text_digests(texts)[present]
        order = np.argsort(digests)  # equal digests in any order: pairs() takes them all
        return cls(digests[order], (present[order] + first_row).astype(np.int32))  # a row's position: 32 bits

    def plus(self, more: _IdDigests) -> _IdDigests:
        """Both, still sorted: ``more`` merged in after the equal digests already there (no sort of them all, and
        no order array as long as every row read)."""
        at = np.searchsorted(self.digests, more.digests, "right")
        return _IdDigests(np.insert(self.digests, at, more.digests), np.insert(self.rows, at, more.rows))

    def pairs(self, new: _IdDigests) -> tuple[np.ndarray, np.ndarray]:
        """(old row, new row) of every old and new row whose ids have the same digest."""
        start = np.searchsorted(self.digests, new.digests, "left")
        count = np.searchsorted(self.digests, new.digests, "right") - start
        new_rows = np.repeat(new.rows, count)
        at = np.repeat(start - np.cumsum(count) + count, count) + np.arange(len(new_rows))
        return self.rows[at], new_rows


class LogReads:
    """The last read of a few logs, so that the next read of each parses only what was appended."""

    def __init__(self, size: int = CACHED_LOGS) -> None:
        self.size = size
        self._reads: OrderedDict[tuple[str, str | None], _Read] = OrderedDict()
        self._lock = threading.Lock()
        self._generations = itertools.count(1)

    def clear(self) -> None:
        with self._lock:
            self._reads.clear()

    def read(self, path: str | os.PathLike[str], notification_url: str | None = None) -> Snapshot:
        """The log's notifications, parsing only the bytes appended since the last read of it."""
        name = os.fspath(path)
        status = os.stat(name)
        if name.endswith(COMPRESSED_ENDINGS) or not os.path.isfile(name):
            lines = read_lines(name)
            frame = parse_with_queries(lines, log_params(lines, notification_url))[0]
            frame.attrs["bytes_read"] = status.st_size
            return Snapshot(frame, next(self._generations), 0, status.st_size)
        key = (os.path.realpath(name), notification_url)
        with self._lock:
            known = self._reads.pop(key, None)
            read, partial, parsed = self._update(name, status, known, notification_url)
            self._reads[key] = read
            while len(self._reads) > self.size:
                self._reads.popitem(last=False)
        whole = read.frame if partial is None else _appended(read.frame, [partial])
        frame = whole.copy(deep=False)  # copy-on-write: the caller's changes never reach the kept frame
        frame.attrs = {**whole.attrs, "junk_examples": list(whole.attrs["junk_examples"]), "bytes_read": parsed}
        return Snapshot(frame, read.generation, len(read.frame), parsed)

    def _update(self, name: str, status: os.stat_result, known: _Read | None, notification_url: str | None, *,
                every_params: bool = False) -> tuple[_Read, pd.DataFrame | None, int]:
        """The log's read brought up to date, the rows of an unfinished last line, the bytes parsed.
        ``every_params``: a first read with the own parameters of every ``#params`` line of the log."""
        identity = (status.st_dev, status.st_ino)
        with open(name, "rb") as handle:
            fd = handle.fileno()
            if known is not None and not _continues(fd, known, identity, status.st_size):
                known = None
            start = known.consumed if known is not None else 0
            size = status.st_size
            whole = _last_line_end(fd, start, size)
            # a first read takes the own parameters its first piece names, unless the log's later lines name more (a
            # receiver restarted with other ones): then it is read again with those of all its #params lines
            params = known.params if known is not None else _all_params(fd, whole) if every_params else None
            read = known
            for offset, piece in _pieces(fd, start, whole):
                lines, mapped = _lines(piece)
                if read is None:
                    read = self._first(identity, fd, lines, mapped, piece.size,
                                       params or log_params(lines, notification_url))
                    continue
                if not every_params and _new_own_params(lines, read):  # a restart named new own parameters
                    return self._update(name, status, None, notification_url, every_params=known is None)
                read = _extended(read, fd, lines, mapped, offset, piece.size)
            if read is None:  # not one whole line yet
                empty = pa.array([], pa.string())
                read = self._first(identity, fd, empty, True, 0, params or log_params(empty, notification_url))
            read = read.stacked()
            partial = None
            if whole < size:  # a line being written: read now, and again next time until it is whole
                rest, rest_mapped = _lines(pa.py_buffer(os.pread(fd, size - whole, whole)))
                parsed = parse_with_queries(rest, read.params)
                partial = _without_retries(read, parsed, rest, rest_mapped, fd, _query_digests(rest, parsed))
        return read, partial, size - start


    def _first(self, identity: tuple[int, int], fd: int, lines: pa.Array, mapped: bool, length: int,
               params: LogParams) -> _Read:
        """A new read of a file from its start: its first ``lines`` (its first ``length`` bytes) parsed."""
        parsed = parse_with_queries(lines, params)
        frame, begin, end, _ = parsed
        # the ids' digests made now, with the rest of the whole read: the polls that follow stay small
        return _Read(identity, length, _fingerprint(fd, length), params, frame, *_in_file(begin, end, 0, mapped),
                     _query_digests(lines, parsed), next(self._generations), _IdDigests.of(frame["id"]))


def _continues(fd: int, known: _Read, identity: tuple[int, int], size: int) -> bool:
    """Whether the file is the one read before, grown or as it was (not replaced, cut or rewritten)."""
    same = identity == known.identity and size >= known.consumed
    return same and _fingerprint(fd, known.consumed) == known.fingerprint


def _fingerprint(fd: int, length: int) -> bytes:
    """The first and last few KiB of the file's first ``length`` bytes and samples between them:
    a log rewritten in place (same name, same inode) differs there, one that grew does not."""
    if length <= 2 * _CHECKED_ENDS:
        return os.pread(fd, length, 0)
    samples = [os.pread(fd, _CHECKED_ENDS, 0), os.pread(fd, _CHECKED_ENDS, length - _CHECKED_ENDS)]
    step = (length - 2 * _CHECKED_ENDS) // (_CHECKED_SAMPLES + 1)
    samples += [os.pread(fd, 64, _CHECKED_ENDS + step * k) for k in range(1, _CHECKED_SAMPLES + 1)]
    return b"".join(samples)


def _last_line_end(fd: int, start: int, size: int) -> int:
    """The file offset just after the last line break in its bytes ``[start, size)`` (``start`` when none)."""
    end = size
    while end > start:
        begin = max(start, end - (1 << 16))
        found = os.pread(fd, end - begin, begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        end = begin
    return start


def _pieces(fd: int, start: int, end: int) -> Iterator[tuple[int, pa.Buffer]]:
    """The file's whole lines ``[start, end)`` (``end`` just after a line break) read in pieces of about
    ``PARSE_CHUNK`` bytes, each cut after a line break: ``(file offset, bytes)``. Read, not mapped, and parsed one
    at a time: a first read of a log of 1.7M lines (420 MB) mapped whole and parsed at once took 1.4 GB beside
    the frame it made."""
    for offset, block, cut in _blocks(fd, start, end):
        yield offset, pa.py_buffer(memoryview(block)[:cut])


def _blocks(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes, int]]:
    """:func:`_pieces` as ``(file offset, bytes read, length of their whole lines)``."""
    offset = start
    while offset < end:
        block = os.pread(fd, min(PARSE_CHUNK, end - offset), offset)
        cut = len(block) if offset + len(block) == end else block.rfind(b"\n") + 1
        while not cut:  # one line longer than a piece: read on to its end
            block += os.pread(fd, min(PARSE_CHUNK, end - offset - len(block)), offset + len(block))
            cut = len(block) if offset + len(block) == end else block.rfind(b"\n") + 1
        yield offset, block, cut
        offset += cut


def _all_params(fd: int, end: int) -> LogParams:
    """The parameters of a receiver's log named by every ``#params`` line among the file's first ``end`` bytes
    (found by a byte search, nothing parsed)."""
    prefix, found = PARAMS_LINE_PREFIX.encode(), []
    for _, block, cut in _blocks(fd, 0, end):
        at = block.find(prefix, 0, cut)
        while at >= 0:
            if at == 0 or block[at - 1] == ord("\n"):
                found.append(block[at:block.find(b"\n", at, cut)].decode("utf-8", errors="replace"))
            at = block.find(prefix, at + 1, cut)
    return log_params(pa.array(found, pa.string()))


def _lines(data: pa.Buffer) -> tuple[pa.Array, bool]:
    """The lines of ``data`` and whether they lie over it as it is (not re-encoded to valid UTF-8)."""
    lines = lines_of_bytes(data)
    buffer = lines.buffers()[2] if len(lines) else None
    return lines, buffer is None or buffer.address == data.address


def _in_file(begin: np.ndarray, end: np.ndarray, base: int, mapped: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each query's start in the file (``begin`` + ``base``; -1 when unknown) and its length."""
    length = (end - begin).astype(np.int32)
    if not mapped:
        return np.full(len(begin), -1, np.int64), length
    return begin + base, length


def _new_own_params(lines: pa.Array, known: _Read) -> bool:
    """A receiver log restarted with own parameters the kept frame has no column for."""
    if known.params.wanted_path is not None or not len(lines):
        return False
    templates = receiver_templates(lines)
    return bool(templates) and any(name not in known.params.own for name in log_params(pa.array(templates)).own)


def _extended(known: _Read, fd: int, lines: pa.Array, mapped: bool, start: int, whole: int) -> _Read:
    """``known`` with the whole lines appended since it was read, their new rows in its tail."""
    if not len(lines):
        return known
    parsed = parse_with_queries(lines, known.params)
    digests = _query_digests(lines, parsed)
    fresh = _without_retries(known, parsed, lines, mapped, fd, digests)
    begin, length = _in_file(parsed[1], parsed[2], start, mapped)
    keep = fresh.attrs.pop("_kept_positions")
    ids = known.ids.plus(_IdDigests.of(fresh["id"], known.rows))
    return _Read(known.identity, start + whole, _fingerprint(fd, start + whole), known.params, known.frame,
                 np.concatenate([known.query_start, begin[keep]]), np.concatenate([known.query_length, length[keep]]),
                 np.concatenate([known.query_digests, digests[keep]]), known.generation, ids, (*known.tail, fresh))


def _query_digests(lines: pa.Array, parsed: Parsed) -> np.ndarray:
    """The digest of each parsed row's raw query: those the parse made for its retries, and the others."""
    _, begin, end, made = parsed
    if not len(begin):
        return np.zeros(0, np.uint64)
    return made.completed(lines.buffers()[2], begin, end)


def _without_retries(known: _Read, parsed: Parsed, lines: pa.Array,
                     mapped: bool, fd: int, digests: np.ndarray) -> pd.DataFrame:
    """The new rows (their raw queries' ``digests``) that are not a retry of a row already read (the same
    raw query), with the counts of what they add in ``attrs`` and their positions in ``attrs["_kept_positions"]``."""
    frame, begin, end, _ = parsed
    retry = np.zeros(len(frame), bool)
    if len(frame) and known.rows:
        # rows whose ids have the same digest: most are an id's other notifications, told apart by their queries'
        # lengths and digests; a pair of equal digests is compared byte for byte (so a collision of either is harmless)
        old_rows, new_rows = known.ids.pairs(_IdDigests.of(frame["id"]))
        if len(old_rows):
            raw = np.frombuffer(lines.buffers()[2], np.uint8)
            retry = _same_queries(known, frame, old_rows, new_rows, raw, begin, end, mapped, fd, digests)
    kept = np.flatnonzero(~retry)
    fresh = frame.iloc[kept].reset_index(drop=True) if retry.any() else frame
    fresh.attrs = {**frame.attrs, "duplicates_dropped": frame.attrs["duplicates_dropped"] + int(retry.sum()),
                   "_kept_positions": kept}
    return fresh


def _same_queries(known: _Read, frame: pd.DataFrame, old_rows: np.ndarray, new_rows: np.ndarray, raw: np.ndarray,
                  begin: np.ndarray, end: np.ndarray, mapped: bool, fd: int, digests: np.ndarray) -> np.ndarray:
    """Mask of new rows whose raw query equals that of their paired old row (read back from the file, only
    for pairs of equal length and digest: an id's other notifications are told apart without a read)."""
    retry = np.zeros(len(frame), bool)
    known_at = known.query_start[old_rows]
    old_length = known.query_length[old_rows]
    alike = (old_length == end[new_rows] - begin[new_rows]) & (known.query_digests[old_rows] == digests[new_rows])
    check = alike | (known_at < 0) | (not mapped)
    values = [c for c in frame.columns if c != "received_at"]
    for old_row, new_row in zip(old_rows[check].tolist(), new_rows[check].tolist(), strict=True):
        if retry[new_row]:
            continue
        at = int(known.query_start[old_row])
        if at >= 0 and mapped:
            query = raw[begin[new_row]:end[new_row]].tobytes()
            retry[new_row] = os.pread(fd, len(query), at) == query
        else:  # a row of a block that was not UTF-8: its parsed values decide
            retry[new_row] = known.row(old_row)[values].equals(frame.iloc[new_row][values])
    return retry


def _appended(frame: pd.DataFrame, more: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """``frame`` with the rows of ``more`` after it (one concatenation) and the counts of all in ``attrs``."""
    parts = [part for part in more if len(part)]
    out = stacked([frame, *parts]) if parts else frame.copy(deep=False)
    every = [frame.attrs, *(part.attrs for part in more)]
    out.attrs = {
        "junk_lines": sum(attrs["junk_lines"] for attrs in every),
        "junk_examples": [example for attrs in every for example in attrs["junk_examples"]][:JUNK_EXAMPLES],
        "duplicates_dropped": sum(attrs["duplicates_dropped"] for attrs in every),
        "other_requests": sum(attrs["other_requests"] for attrs in every),
    }
    return out
