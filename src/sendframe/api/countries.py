"""The recipient's country for a whole column: ``region_of``'s answers, as array work.

``recipient_countries(series)`` gives, for every value, what :func:`sendframe.api.recipients.region_of`
gives (a test compares them on messy and valid numbers of every region). ``region_of`` costs tens of
microseconds per number (a ``phonenumbers.parse`` and its region lookup); a million distinct recipients
took over ten seconds. Here:

- validity and the calling code come from the lookup tables of :mod:`sendframe.api.numbering` (built
  from phonenumbers' metadata), so a code with one country (34, 351, ...) is answered by a table;
- a code several countries share (1, 7, 44, 39, ...) is settled as ``phonenumbers`` settles it: its
  regions in phonenumbers' order, each claiming the numbers its leading digits match or, without
  leading digits, the numbers one of its number types (fixed line, mobile, toll free, ...) matches,
  length and pattern; the patterns are phonenumbers' own, searched as integer ranges
  (:mod:`sendframe.api.pattern_ranges`) or run by ``pyarrow.compute`` (RE2) over the national numbers;
  what no region claims gets the code's main country;
- what the tables cannot settle goes to ``region_of`` itself, once per distinct value: numbers whose
  national part starts with a trunk prefix (``parse`` may strip it), regions whose patterns RE2 does
  not compile.

    >>> recipient_countries(pd.Series(["34600123456", "14165550123", "447700900123", "123", None])).tolist()
    ['ES', 'CA', 'GB', <NA>, <NA>]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc
from phonenumbers import PhoneMetadata
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, UNKNOWN_REGION

from sendframe.api.numbering import (
    Desc,
    anchored,
    calling_codes,
    compiles,
    lengths,
    match,
    matches_desc,
    number_desc,
    valid_digit_numbers,
)
from sendframe.api.recipients import region_of

__all__ = ["NumberRegions", "number_regions", "recipient_countries", "regions_of_numbers"]

_NON_GEOGRAPHIC = "001"
_NUMBER_TYPES = ("premium_rate", "toll_free", "shared_cost", "voip", "personal_number", "pager", "uan", "voicemail",
                 "fixed_line")  # the mobile pattern counts too, unless it is the fixed-line one


@dataclass(frozen=True)
class _Region:
    """How ``_region_code_for_number_from_list`` tests one region of a shared calling code."""

    name: str
    leading: str | None  # "^(?:...)": leading digits, when the region has them
    general: Desc | None
    types: tuple[Desc, ...]


@dataclass(frozen=True)
class _SharedCode:
    main: str | None  # the code's main country, for numbers no region claims
    trunk: str | None  # "^(?:...)": the trunk prefix parse may strip (such numbers go to region_of)
    regions: tuple[_Region, ...]
    compiles: bool


@dataclass(frozen=True)
class NumberRegions:
    """phonenumbers' ``region_code_for_number`` of numbers in API form, as arrays (one entry per number)."""

    numbers: np.ndarray  # int64: the numbers (-1: invalid)
    regions: np.ndarray  # object: the region ("001" for non-geographic codes); None: invalid, or no region claims it
    codes: np.ndarray  # the calling code (0: invalid)
    code_sizes: np.ndarray  # its length in digits
    hard: np.ndarray  # the rows only the scalar rule answers (a national part starting with a trunk prefix, ...)

    def texts(self, rows: np.ndarray) -> pa.Array:
        """The numbers of ``rows`` as text (made for the rows asked only: most rows never need it)."""
        return pc.cast(pa.array(self.numbers[rows]), pa.large_string())

    def national(self, rows: np.ndarray) -> pa.Array:
        """The national significant numbers of ``rows`` (which share one calling code)."""
        return pc.utf8_slice_codeunits(self.texts(rows), int(self.code_sizes[rows[0]]))


def _region(name: str) -> _Region | None:
    metadata = PhoneMetadata.metadata_for_region(name, None)
    if metadata is None:
        return None
    types = [number_desc(getattr(metadata, kind)) for kind in _NUMBER_TYPES]
    if not metadata.same_mobile_and_fixed_line_pattern:
        types.append(number_desc(metadata.mobile))
    leading = None if metadata.leading_digits is None else f"^(?:{metadata.leading_digits})"
    return _Region(name, leading, number_desc(metadata.general_desc),
                   tuple(t for t in types if t is not None))


def _country(region: str | None) -> str | None:
    return None if region in (None, UNKNOWN_REGION, _NON_GEOGRAPHIC) else region


@cache
def _shared_code(code: int) -> _SharedCode:
    main = phonenumbers.region_code_for_country_code(code)
    metadata = PhoneMetadata.metadata_for_region_or_calling_code(code, main)
    trunk = anchored(metadata.national_prefix_for_parsing) if metadata is not None else None
    regions = tuple(r for r in map(_region, COUNTRY_CODE_TO_REGION_CODE[code]) if r is not None)
    patterns = [trunk] + [p for r in regions for p in (r.leading, r.general.pattern if r.general else None,
                                                         *(t.pattern for t in r.types))]
    return _SharedCode(_country(main), trunk, regions, compiles(*patterns))


@cache
def _code_regions() -> tuple[np.ndarray, list[str | None]]:
    """By calling code (0..999): an index into the region names (0: none), -1 where several regions share it."""
    names: list[str | None] = [None]
    index = np.zeros(1000, dtype=np.int32)
    for code, regions in COUNTRY_CODE_TO_REGION_CODE.items():
        if len(regions) > 1:
            index[code] = -1
        else:
            names.append(regions[0])
            index[code] = len(names) - 1
    return index, names


def _claimed_by(region: _Region, national: pa.Array, sizes: np.ndarray) -> np.ndarray:
    """The numbers ``region`` claims: by its leading digits, else by one of its number types."""
    if region.leading is not None:
        return match(national, region.leading)
    claimed = matches_desc(national, sizes, region.general)
    if not claimed.any():
        return claimed
    rows = np.flatnonzero(claimed)
    subset, subset_sizes = national.take(pa.array(rows)), sizes[rows]
    typed = np.zeros(len(rows), dtype=bool)
    for desc in region.types:
        typed |= matches_desc(subset, subset_sizes, desc)
    claimed[rows] = typed
    return claimed


def _settle_shared(code: int, national: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Regions (object array, None where none claims the number) of the valid numbers of one shared code, and
    which rows only the scalar rule can answer."""
    shared = _shared_code(code)
    answer = np.full(len(national), None, dtype=object)
    if not shared.compiles:
        return answer, np.ones(len(national), dtype=bool)
    hard = match(national, shared.trunk)
    open_rows = np.flatnonzero(~hard)
    for region in shared.regions:
        if not len(open_rows):
            break
        subset = national.take(pa.array(open_rows))
        claimed = _claimed_by(region, subset, lengths(subset))
        answer[open_rows[claimed]] = region.name
        open_rows = open_rows[~claimed]
    return answer, hard


def number_regions(recipients: pd.Series) -> NumberRegions:
    """The region phonenumbers gives each number in API form (``region_code_for_number``), as array work.

        >>> number_regions(pd.Series(["34600123456", "14165550123", "80012345678", "123"])).regions.tolist()
        ['ES', 'CA', '001', None]
    """
    text = recipients if isinstance(recipients.dtype, pd.StringDtype) else recipients.astype("string")
    strings = pa.array(text, type=pa.large_string(), from_pandas=True)
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    valid, numbers, _ = valid_digit_numbers(strings)
    return regions_of_numbers(np.where(valid, numbers, -1))


def regions_of_numbers(numbers: np.ndarray) -> NumberRegions:
    """:func:`number_regions` of phones given as int64 (``phone_numbers``' answer: valid numbers in API form,
    -1 for the rest), when their validity is already known.

        >>> regions_of_numbers(np.array([34600123456, 14165550123, -1])).regions.tolist()
        ['ES', 'CA', None]
    """
    numbers = np.asarray(numbers, dtype=np.int64)
    valid = numbers > 0
    code, code_size = calling_codes(numbers)
    index, names = _code_regions()
    regions = np.asarray(names, dtype=object)[np.maximum(index[code], 0)]
    found = NumberRegions(numbers, regions, code, code_size, np.zeros(len(numbers), dtype=bool))
    shared = valid & (index[code] < 0)
    for one_code in np.unique(code[shared]):
        rows = np.flatnonzero(shared & (code == one_code))
        regions[rows], found.hard[rows] = _settle_shared(int(one_code), found.national(rows))
    return found


def recipient_countries(recipients: pd.Series) -> pd.Series:
    """``region_of`` of every recipient: its ISO 3166 country, missing for invalid numbers and non-geographic codes.

    Returns a ``string`` Series on the same index (and name); the input is not modified.

        >>> recipient_countries(pd.Series(["447400123456", "441481256789", "447624123456", "17875550123"])).tolist()
        ['GB', 'GG', 'IM', 'PR']
    """
    found = number_regions(recipients)
    answer = found.regions  # found is this function's own
    unclaimed = np.flatnonzero((found.codes > 0) & pd.isna(answer) & ~found.hard)
    answer[answer == _NON_GEOGRAPHIC] = None
    for one_code in np.unique(found.codes[unclaimed]):  # what no region claims gets the code's main country
        answer[unclaimed[found.codes[unclaimed] == one_code]] = _shared_code(int(one_code)).main
    hard = found.hard
    if hard.any():  # once per distinct value
        rows = np.flatnonzero(hard)
        encoded = pc.dictionary_encode(found.texts(rows))
        distinct = np.array([region_of(value) for value in encoded.dictionary.to_pylist()], dtype=object)
        answer[rows] = distinct[encoded.indices.to_numpy(zero_copy_only=False)]
    return pd.Series(pd.array(answer, dtype="string"), index=recipients.index, name=recipients.name)
