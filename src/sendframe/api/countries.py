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
  length and pattern; the patterns are phonenumbers' own, run by ``pyarrow.compute`` (RE2) over the
  national numbers; what no region claims gets the code's main country;
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
from phonenumbers import PhoneMetadata, PhoneNumberDesc
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, UNKNOWN_REGION

from sendframe.api.numbering import as_numbers, lengths, match, tables, valid_digit_strings
from sendframe.api.recipients import region_of

__all__ = ["recipient_countries"]

_NON_GEOGRAPHIC = "001"
_NUMBER_TYPES = ("premium_rate", "toll_free", "shared_cost", "voip", "personal_number", "pager", "uan", "voicemail",
                 "fixed_line")  # the mobile pattern counts too, unless it is the fixed-line one


@dataclass(frozen=True)
class _Desc:
    """One PhoneNumberDesc: its possible lengths (empty: any) and its pattern anchored for RE2."""

    lengths: tuple[int, ...]
    pattern: str | None


@dataclass(frozen=True)
class _Region:
    """How ``_region_code_for_number_from_list`` tests one region of a shared calling code."""

    name: str
    leading: str | None  # "^(?:...)": leading digits, when the region has them
    general: _Desc | None
    types: tuple[_Desc, ...]


@dataclass(frozen=True)
class _SharedCode:
    main: str | None  # the code's main country, for numbers no region claims
    trunk: str | None  # "^(?:...)": the trunk prefix parse may strip (such numbers go to region_of)
    regions: tuple[_Region, ...]
    compiles: bool


def _anchored(pattern: str | None, end: str = "") -> str | None:
    return f"^(?:{pattern}){end}" if pattern else None


def _desc(desc: PhoneNumberDesc | None) -> _Desc | None:
    if desc is None:
        return None
    return _Desc(tuple(desc.possible_length), _anchored(desc.national_number_pattern, "$"))


def _compiles(pattern: str | None) -> bool:
    try:
        if pattern is not None:
            pc.match_substring_regex(pa.array(["0"]), pattern=pattern)
    except pa.ArrowInvalid:
        return False
    return True


def _region(name: str) -> _Region | None:
    metadata = PhoneMetadata.metadata_for_region(name, None)
    if metadata is None:
        return None
    types = [_desc(getattr(metadata, kind)) for kind in _NUMBER_TYPES]
    if not metadata.same_mobile_and_fixed_line_pattern:
        types.append(_desc(metadata.mobile))
    leading = None if metadata.leading_digits is None else f"^(?:{metadata.leading_digits})"
    return _Region(name, leading, _desc(metadata.general_desc),
                   tuple(t for t in types if t is not None))


def _country(region: str | None) -> str | None:
    return None if region in (None, UNKNOWN_REGION, _NON_GEOGRAPHIC) else region


@cache
def _shared_code(code: int) -> _SharedCode:
    main = phonenumbers.region_code_for_country_code(code)
    metadata = PhoneMetadata.metadata_for_region_or_calling_code(code, main)
    trunk = _anchored(metadata.national_prefix_for_parsing) if metadata is not None else None
    regions = tuple(r for r in map(_region, COUNTRY_CODE_TO_REGION_CODE[code]) if r is not None)
    patterns = [trunk] + [p for r in regions for p in (r.leading, r.general.pattern if r.general else None,
                                                         *(t.pattern for t in r.types))]
    return _SharedCode(_country(main), trunk, regions, all(map(_compiles, patterns)))


@cache
def _code_countries() -> tuple[np.ndarray, list[str | None]]:
    """By calling code (0..999): an index into the names (0: no country), -1 where several countries share it."""
    names: list[str | None] = [None]
    index = np.zeros(1000, dtype=np.int32)
    for code, regions in COUNTRY_CODE_TO_REGION_CODE.items():
        if len(regions) > 1:
            index[code] = -1
        elif _country(regions[0]) is not None:
            names.append(regions[0])
            index[code] = len(names) - 1
    return index, names


def _matches(national: pa.Array, sizes: np.ndarray, desc: _Desc | None) -> np.ndarray:
    # phonenumbers' _is_number_matching_desc: a listed length, then the whole pattern
    if desc is None or desc.pattern is None:
        return np.zeros(len(national), dtype=bool)
    fits = np.isin(sizes, desc.lengths) if desc.lengths else np.ones(len(national), dtype=bool)
    if not fits.any():
        return fits
    found = np.zeros(len(national), dtype=bool)
    rows = np.flatnonzero(fits)
    found[rows] = match(national.take(pa.array(rows)), desc.pattern)
    return found


def _claimed_by(region: _Region, national: pa.Array, sizes: np.ndarray) -> np.ndarray:
    """The numbers ``region`` claims: by its leading digits, else by one of its number types."""
    if region.leading is not None:
        return match(national, region.leading)
    claimed = _matches(national, sizes, region.general)
    if not claimed.any():
        return claimed
    rows = np.flatnonzero(claimed)
    subset, subset_sizes = national.take(pa.array(rows)), sizes[rows]
    typed = np.zeros(len(rows), dtype=bool)
    for desc in region.types:
        typed |= _matches(subset, subset_sizes, desc)
    claimed[rows] = typed
    return claimed


def _settle_shared(code: int, national: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Countries (object array) of the valid numbers of one shared code, and which rows region_of must answer."""
    shared = _shared_code(code)
    answer = np.full(len(national), shared.main, dtype=object)
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


def recipient_countries(recipients: pd.Series) -> pd.Series:
    """``region_of`` of every recipient: its ISO 3166 country, missing for invalid numbers and non-geographic codes.

    Returns a ``string`` Series on the same index (and name); the input is not modified.

        >>> recipient_countries(pd.Series(["447400123456", "441481256789", "447624123456", "17875550123"])).tolist()
        ['GB', 'GG', 'IM', 'PR']
    """
    text = recipients if isinstance(recipients.dtype, pd.StringDtype) else recipients.astype("string")
    strings = pa.array(text, type=pa.large_string(), from_pandas=True)
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    size = len(strings)
    valid = valid_digit_strings(strings) if size else np.zeros(0, dtype=bool)
    sizes = lengths(strings)
    numbers = as_numbers(strings, valid)
    first3 = np.where(valid, numbers // (10 ** np.clip(sizes - 3, 0, 18)), 0).clip(0, 999)
    table = tables()
    code_size = table.code_length[first3].astype(np.int64)
    code = np.where(valid, table.code_value[first3], 0).astype(np.int64)
    index, names = _code_countries()
    answer = np.asarray(names, dtype=object)[np.maximum(index[code], 0)]
    hard = np.zeros(size, dtype=bool)
    shared = valid & (index[code] < 0)
    for one_code in np.unique(code[shared]):
        rows = np.flatnonzero(shared & (code == one_code))
        national = pc.utf8_slice_codeunits(strings.take(pa.array(rows)), int(code_size[rows[0]]))
        answer[rows], hard[rows] = _settle_shared(int(one_code), national)
    if hard.any():  # once per distinct value
        rows = np.flatnonzero(hard)
        encoded = pc.dictionary_encode(strings.take(pa.array(rows)))
        distinct = np.array([region_of(value) for value in encoded.dictionary.to_pylist()], dtype=object)
        answer[rows] = distinct[encoded.indices.to_numpy(zero_copy_only=False)]
    return pd.Series(pd.array(answer, dtype="string"), index=recipients.index, name=recipients.name)
