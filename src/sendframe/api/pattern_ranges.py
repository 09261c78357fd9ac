"""phonenumbers' national-number patterns as integer ranges, so a number is tested by a binary search, not a regex.

A pattern of phonenumbers' metadata (``6\\d{8}|7[1-4]\\d{7}``) is a finite language over digits: literals,
digit classes, alternatives and bounded repeats. Read by Python's own regular-expression parser (the one
``phonenumbers`` matches with), it is expanded into digit sequences and, for each length, into sorted
``[start, end)`` ranges of the numbers as integers (a national number of length ``L`` with its leading zeros
is the integer it spells). A pattern with anything else, or one whose expansion would be too large, gives
None: it is run as a pattern, as before.

    >>> table = digit_ranges(r"6\\d{2}|7[1-4]\\d")
    >>> {size: list(zip(starts.tolist(), ends.tolist())) for size, (starts, ends) in table.items()}
    {3: [(600, 700), (710, 750)]}
    >>> in_ranges(np.array([612, 705, 745, 750, 61]), np.array([3, 3, 3, 3, 2]), table).tolist()
    [True, False, True, False, False]
"""

from __future__ import annotations

import re._constants as sre  # type: ignore[import-not-found]  # the parser's node names
import re._parser as sre_parse  # type: ignore[import-not-found]  # the parser phonenumbers' re.fullmatch uses
from typing import Any

import numpy as np

__all__ = ["MAX_SEQUENCES", "RangeTable", "digit_ranges", "in_ranges", "union_ranges"]

RangeTable = dict[int, tuple[np.ndarray, np.ndarray]]
"""By length: the sorted, disjoint ``[start, end)`` ranges of the numbers a pattern accepts."""
MAX_SEQUENCES = 20_000  # beyond this many digit sequences (or ranges), the pattern is run as a pattern
_ALL = (1 << 10) - 1  # a digit class as a 10-bit mask: \d
_Masks = tuple[int, ...]  # one digit sequence: the digits each position allows
_MAX_LENGTH = 17


class _TooLarge(Exception):
    pass


class _Unsupported(Exception):
    pass


def _mask(items: list[tuple[Any, Any]]) -> int:
    mask = 0
    for op, value in items:
        if op is sre.LITERAL and 48 <= value <= 57:
            mask |= 1 << (value - 48)
        elif op is sre.RANGE:
            low, high = value
            for code in range(max(low, 48), min(high, 57) + 1):
                mask |= 1 << (code - 48)
        elif op is sre.CATEGORY and value is sre.CATEGORY_DIGIT:
            mask |= _ALL
        else:  # negation, other characters, other categories
            raise _Unsupported
    return mask


def _concat(left: list[_Masks], right: list[_Masks]) -> list[_Masks]:
    if len(left) * len(right) > MAX_SEQUENCES:
        raise _TooLarge
    return [a + b for a in left for b in right if len(a) + len(b) <= _MAX_LENGTH]


def _expand(nodes: list[tuple[Any, Any]]) -> list[_Masks]:
    """Every sequence of digit masks the nodes accept (a sequence per alternative path)."""
    found: list[_Masks] = [()]
    part: list[_Masks]
    for op, value in nodes:
        if op is sre.AT:
            continue  # ^ and $ of an anchored pattern
        if op is sre.LITERAL or op is sre.IN:
            mask = _mask([(op, value)] if op is sre.LITERAL else value)
            if not mask:
                return []
            part = [(mask,)]
        elif op is sre.BRANCH:
            part = [seq for branch in value[1] for seq in _expand(branch)]
        elif op is sre.SUBPATTERN:
            part = _expand(value[-1])
        elif op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
            low, high, inner = value
            if high is sre.MAXREPEAT or high > _MAX_LENGTH:
                raise _Unsupported
            once = _expand(inner)
            power: list[_Masks] = [()]
            part = []
            for count in range(high + 1):
                if count >= low:
                    part.extend(power)
                if count < high:
                    power = _concat(power, once)
        else:
            raise _Unsupported
        found = _concat(found, part)
    return found


def _ranges(sequence: _Masks) -> list[tuple[int, int]]:
    # the numbers a sequence of digit masks spells, as [start, end) ranges: free trailing digits widen each range
    free = len(sequence)
    while free and sequence[free - 1] == _ALL:
        free -= 1
    width = 10 ** (len(sequence) - free)
    prefixes = [0]
    for mask in sequence[:free]:
        digits = [d for d in range(10) if mask >> d & 1]
        prefixes = [p * 10 + d for p in prefixes for d in digits]
        if len(prefixes) > MAX_SEQUENCES:
            raise _TooLarge
    return [(p * width, (p + 1) * width) for p in prefixes]


def digit_ranges(pattern: str | None) -> RangeTable | None:
    """The numbers ``re.fullmatch(pattern, ...)`` accepts, by length, as merged integer ranges; None when the
    pattern is not a finite digit language this reads, or is too large to expand."""
    if pattern is None:
        return None
    try:
        sequences = _expand(list(sre_parse.parse(pattern)))
        by_length: dict[int, list[tuple[int, int]]] = {}
        for sequence in set(sequences):
            by_length.setdefault(len(sequence), []).extend(_ranges(sequence))
            if len(by_length[len(sequence)]) > MAX_SEQUENCES:
                raise _TooLarge
    except (_TooLarge, _Unsupported, RecursionError):
        return None
    return {size: _merged(ranges) for size, ranges in by_length.items()}


def _merged(ranges: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    bounds = np.array(merged, dtype=np.int64).reshape(-1, 2)
    return bounds[:, 0].copy(), bounds[:, 1].copy()


def union_ranges(tables: list[RangeTable]) -> RangeTable:
    """The numbers any of the tables accepts, as one table.

        >>> union_ranges([digit_ranges(r"1\\d"), digit_ranges(r"2\\d|3")])[2][0].tolist()
        [10]
    """
    by_length: dict[int, list[tuple[int, int]]] = {}
    for table in tables:
        for size, (starts, ends) in table.items():
            by_length.setdefault(size, []).extend(zip(starts.tolist(), ends.tolist(), strict=True))
    return {size: _merged(ranges) for size, ranges in by_length.items()}


def in_ranges(values: np.ndarray, sizes: np.ndarray, table: RangeTable) -> np.ndarray:
    """Which numbers (digit strings of length ``sizes`` read as integers) the table's pattern accepts."""
    found = np.zeros(len(values), dtype=bool)
    for size, (starts, ends) in table.items():
        rows = np.flatnonzero(sizes == size) if len(table) > 1 or not (sizes == size).all() else None
        chosen = values if rows is None else values[rows]
        at = np.searchsorted(starts, chosen, side="right") - 1
        hit = (at >= 0) & (chosen < ends[np.maximum(at, 0)])
        if rows is None:
            found |= hit
        else:
            found[rows] = hit
    return found
