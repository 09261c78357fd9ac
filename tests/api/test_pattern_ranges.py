"""digit_ranges: phonenumbers' national-number patterns as integer ranges accept exactly what re.fullmatch accepts."""

from __future__ import annotations

import random
import re

import numpy as np
import phonenumbers
from phonenumbers import PhoneMetadata

from sendframe.api.pattern_ranges import digit_ranges, in_ranges, union_ranges

_DESCS = ("general_desc", "fixed_line", "mobile", "toll_free", "premium_rate", "shared_cost", "voip",
          "personal_number", "pager", "uan", "voicemail")


def _patterns() -> list[str]:
    found = set()
    for region in phonenumbers.SUPPORTED_REGIONS:
        metadata = PhoneMetadata.metadata_for_region(region)
        for name in _DESCS:
            desc = getattr(metadata, name)
            if desc is not None and desc.national_number_pattern is not None:
                found.add(desc.national_number_pattern)
    return sorted(found)


def _samples(table: dict, chooser: random.Random) -> list[str]:
    values = ["".join(chooser.choice("0123456789") for _ in range(size)) for size in range(1, 18) for _ in range(12)]
    for size, (starts, ends) in table.items():  # each range's edges and their neighbours
        picked = chooser.sample(range(len(starts)), min(len(starts), 25))
        for edge in [*starts[picked].tolist(), *ends[picked].tolist()]:
            values += [str(v).zfill(size) for v in (edge - 1, edge, edge + 1) if 0 <= v < 10**size]
    return values


def test_every_pattern_of_every_region_reads_as_ranges_that_accept_what_the_pattern_accepts():
    chooser = random.Random(7)
    patterns = _patterns()
    read = 0
    for pattern in patterns:
        table = digit_ranges(pattern)
        if table is None:
            continue
        read += 1
        values = _samples(table, chooser)
        numbers = np.array([int(v) for v in values], dtype=np.int64)
        sizes = np.array([len(v) for v in values])
        expected = [re.fullmatch(pattern, v) is not None for v in values]
        assert in_ranges(numbers, sizes, table).tolist() == expected, pattern
    assert read >= 0.98 * len(patterns) and read > 1000


def test_what_is_not_a_finite_digit_language_is_left_to_the_pattern():
    assert digit_ranges(r"\d+") is None  # unbounded
    assert digit_ranges(r"[^5]\d") is None  # a negated class
    assert digit_ranges(r"1(?=2)\d") is None  # a lookahead
    assert digit_ranges(None) is None
    assert digit_ranges(r"[0-9]{30}") is None  # longer than a national number


def test_leading_zeros_count_in_the_length_and_tables_unite():
    table = digit_ranges(r"0[67]\d{2}|5\d")
    assert in_ranges(np.array([612, 799, 812, 55, 55]), np.array([4, 4, 4, 2, 3]), table).tolist() == [
        True, True, False, True, False]
    both = union_ranges([digit_ranges(r"1\d"), digit_ranges(r"2\d|3")])
    assert {size: (s.tolist(), e.tolist()) for size, (s, e) in both.items()} == {2: ([10], [30]), 1: ([3], [4])}
