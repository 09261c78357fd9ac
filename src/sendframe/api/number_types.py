"""What kind of line each number is (mobile, fixed line, toll free, ...), as array work.

``number_types(series)`` gives, for every number in API form, what ``phonenumbers.number_type`` gives for
it (a test compares them on example and random numbers of every region), as lower-case names:
``mobile``, ``fixed_line``, ``fixed_line_or_mobile`` (the region's plan cannot tell them apart, as in the
US), ``toll_free``, ``premium_rate``, ``shared_cost``, ``voip``, ``personal_number``, ``pager``, ``uan``,
``voicemail``, ``unknown`` (a possible number in no allocated range); missing for invalid recipients.

``number_type`` costs a ``parse`` per number. Here each distinct number is typed once, as an int64 (what
``read_contacts`` already holds: :func:`types_of_numbers`); its region comes from
:func:`sendframe.api.countries.regions_of_numbers` (phonenumbers' own region rule as array work), and each
region's number-type patterns (phonenumbers' metadata, held as integer ranges by
:mod:`sendframe.api.pattern_ranges`: a binary search per number; the rare pattern that is no finite digit
language runs in ``pyarrow.compute``) are tried in ``number_type``'s order over the national numbers of that
region. A national part starting with a trunk prefix is stripped as ``parse`` strips it
(:func:`sendframe.api.numbering.national_significant`). What the arrays cannot settle (trunk prefixes that
rewrite digits or decide a shared code's region, patterns RE2 does not compile) is answered by
``phonenumbers`` itself, once per distinct number.

:data:`NOT_SMS_TYPES` are the types that cannot receive a text message (the preflight rule ``landline``).

    >>> import pandas as pd
    >>> number_types(pd.Series(["34600123456", "34912345678", "34900123456", "12025550123", "nope"])).tolist()
    ['mobile', 'fixed_line', 'toll_free', 'fixed_line_or_mobile', nan]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc
from phonenumbers import PhoneMetadata, PhoneNumberType
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE

from sendframe.api.countries import NumberRegions, regions_of_numbers
from sendframe.api.numbering import (
    Desc,
    compiles,
    digit_values,
    filled,
    lengths,
    match,
    matches_desc,
    national_significant,
    number_desc,
    tables,
    valid_digit_numbers,
)
from sendframe.api.pattern_ranges import RangeTable, in_ranges, union_ranges

__all__ = ["NOT_SMS_TYPES", "NUMBER_TYPES", "number_types", "receives_sms", "types_of_numbers"]

# names by PhoneNumberType value (FIXED_LINE=0, MOBILE=1, ...; UNKNOWN=99 last)
_BY_VALUE = {value: name.lower() for name, value in vars(PhoneNumberType).items()
             if name.isupper() and isinstance(value, int)}
NUMBER_TYPES: tuple[str, ...] = tuple(_BY_VALUE[v] for v in sorted(_BY_VALUE))
"""Every type name, in phonenumbers' order (the categories of :func:`number_types`' answer)."""
NOT_SMS_TYPES: frozenset[str] = frozenset({"fixed_line", "toll_free", "premium_rate", "shared_cost", "uan",
                                           "voicemail", "pager"})
"""Lines that cannot receive a text message. ``fixed_line_or_mobile`` (the plan cannot tell), ``personal_number``
(forwarded to a person's phone), ``voip`` (many take SMS) and ``unknown`` are given the benefit of the doubt."""
_CODE = {name: position for position, name in enumerate(NUMBER_TYPES)}
_MISSING = -1
# number_type's order: the first of these a number matches is its type; fixed line and mobile come after
_SPECIAL = ("premium_rate", "toll_free", "shared_cost", "voip", "personal_number", "pager", "uan", "voicemail")


@dataclass(frozen=True)
class _TypePlan:
    """One region's number-type descriptions, as ``_number_type_helper`` reads them."""

    general: Desc | None
    special: tuple[tuple[int, Desc], ...]  # (type code, description) in number_type's order
    fixed_line: Desc | None
    mobile: Desc | None
    same_mobile_and_fixed_line: bool
    compiles: bool
    special_screen: str | None
    special_ranges: RangeTable | None  # the specials' union as integer ranges, when each has them


@cache
def _type_plan(code: int, region: str) -> _TypePlan | None:
    metadata = PhoneMetadata.metadata_for_region_or_calling_code(code, region)
    if metadata is None:
        return None
    special = tuple((_CODE[kind], desc) for kind in _SPECIAL
                    if (desc := number_desc(getattr(metadata, kind))) is not None and desc.pattern is not None)
    general, fixed, mobile = (number_desc(d) for d in (metadata.general_desc, metadata.fixed_line, metadata.mobile))
    patterns = [d.pattern for d in (general, fixed, mobile) if d is not None] + [d.pattern for _, d in special]
    screen = _special_screen(special)
    return _TypePlan(general, special, fixed, mobile, bool(metadata.same_mobile_and_fixed_line_pattern),
                     compiles(*patterns, screen), screen, _special_ranges(special))


def _special_ranges(special: tuple[tuple[int, Desc], ...]) -> RangeTable | None:
    tables = [desc.ranges for _, desc in special]
    return None if any(table is None for table in tables) else union_ranges([t for t in tables if t is not None])


def _special_screen(special: tuple[tuple[int, Desc], ...]) -> str | None:
    # one pattern any special number matches (lengths aside): most numbers are ruled out in one pass
    patterns = [desc.pattern.removeprefix("^").removesuffix("$") for _, desc in special if desc.pattern]
    return f"^(?:{'|'.join(patterns)})$" if patterns else None


class _Tester:
    """``_is_number_matching_desc`` over one region's national numbers, cast to integers once for the
    descriptions held as ranges."""

    def __init__(self, national: pa.Array) -> None:
        self.national, self.sizes, self.values = national, lengths(national), digit_values(national)

    def matches(self, desc: Desc | None, rows: np.ndarray | None = None) -> np.ndarray:
        if rows is None:
            return matches_desc(self.national, self.sizes, desc, self.values)
        return matches_desc(self.national.take(pa.array(rows)), self.sizes[rows], desc, self.values[rows])

    def screen(self, plan: _TypePlan) -> np.ndarray:
        """The numbers that may be special (toll free, premium rate, ...): one pass, lengths aside."""
        if plan.special_ranges is None:
            return match(self.national, plan.special_screen)
        return in_ranges(self.values, self.sizes, plan.special_ranges)


def _types_of_region(national: pa.Array, plan: _TypePlan) -> np.ndarray:
    """``_number_type_helper`` over national numbers of one region: type codes.

    Each description is tested over the whole group (cheaper than taking the rows still open); the specials
    are screened in one pass, and only the few numbers it finds are tried type by type, in order.
    """
    answer = np.full(len(national), _CODE["unknown"], dtype=np.int8)
    test = _Tester(national)
    open_rows = test.matches(plan.general)
    screened = open_rows & test.screen(plan)
    if screened.any():
        rows = np.flatnonzero(screened)
        undecided = np.ones(len(rows), dtype=bool)
        for kind, desc in plan.special:
            claimed = undecided & test.matches(desc, rows)
            answer[rows[claimed]] = kind
            undecided &= ~claimed
        open_rows[rows[~undecided]] = False
    fixed = open_rows & test.matches(plan.fixed_line)
    if plan.same_mobile_and_fixed_line:
        answer[fixed] = _CODE["fixed_line_or_mobile"]
        return answer
    mobile = open_rows & test.matches(plan.mobile)
    answer[fixed] = np.where(mobile[fixed], _CODE["fixed_line_or_mobile"], _CODE["fixed_line"])
    answer[mobile & ~fixed] = _CODE["mobile"]
    return answer


def _settle(found: NumberRegions, rows: np.ndarray, code: int, region: str, codes: np.ndarray) -> np.ndarray:
    """Type codes of ``rows`` (one region's numbers) into ``codes``; returns which rows were settled."""
    plan = _type_plan(code, region)
    main = tables().main_plan[code]
    if plan is None or not plan.compiles or not main.compiles:
        return np.zeros(len(rows), dtype=bool)
    # parse strips a trunk prefix when what is left is a possible number ("49 0151..."), as normalise does
    national, unsettled = national_significant(found.national(rows), main)
    settled: np.ndarray = ~unsettled & filled(pc.is_valid(national))
    codes[rows[settled]] = _types_of_region(national.filter(pa.array(settled)), plan)
    return settled


def _scalar_type(number: str) -> int:
    return _CODE[_BY_VALUE[phonenumbers.number_type(phonenumbers.parse("+" + number))]]


def _type_codes(numbers: np.ndarray) -> np.ndarray:
    # the type code of each distinct valid number (int64, API form): regions, then each region's patterns
    found = regions_of_numbers(numbers)
    codes = np.full(len(numbers), _MISSING, dtype=np.int8)
    hard = found.hard.copy()
    valid = found.codes > 0
    codes[valid & ~hard] = _CODE["unknown"]  # claimed by no region of a shared code
    settled = valid & ~hard
    for code in np.unique(found.codes[settled]):
        in_code = np.flatnonzero(settled & (found.codes == code))
        if len(COUNTRY_CODE_TO_REGION_CODE[int(code)]) == 1:
            groups = [(found.regions[in_code[0]], in_code)]
        else:  # a shared code: its numbers by region (those no region claims stay unknown)
            which, names = pd.factorize(found.regions[in_code])
            groups = [(name, in_code[which == position]) for position, name in enumerate(names)]
        for region, rows in groups:
            hard[rows] = ~_settle(found, rows, int(code), str(region), codes)
    rows = np.flatnonzero(hard)  # distinct already: one parse each
    codes[rows] = [_scalar_type(value) for value in found.texts(rows).to_pylist()]
    return codes


def types_of_numbers(numbers: np.ndarray) -> pd.Categorical[str]:
    """:func:`number_types` of phones given as int64 (``phone_numbers``' answer: valid numbers in API form, -1
    for the rest), when their validity is already known (``read_contacts``). Each distinct number is typed once.

        >>> types_of_numbers(np.array([34600123456, -1, 34600123456, 34912345678])).tolist()
        ['mobile', nan, 'mobile', 'fixed_line']
    """
    positions, distinct = pd.factorize(np.asarray(numbers, dtype=np.int64))
    codes = _type_codes(np.asarray(distinct, dtype=np.int64))
    return pd.Categorical.from_codes(codes[positions], categories=pd.Index(NUMBER_TYPES))


def number_types(recipients: pd.Series) -> pd.Series:
    """``phonenumbers.number_type`` of every number in API form, as a categorical of :data:`NUMBER_TYPES`
    (missing for invalid recipients); same index and name, the input is not modified.

        >>> number_types(pd.Series(["447400123456", "442079460000", "80012345678"])).tolist()
        ['mobile', 'fixed_line', 'toll_free']
    """
    text = recipients if isinstance(recipients.dtype, pd.StringDtype) else recipients.astype("string")
    strings = pa.array(text, type=pa.large_string(), from_pandas=True)
    valid, numbers, _ = valid_digit_numbers(strings.combine_chunks() if isinstance(strings, pa.ChunkedArray)
                                            else strings)
    answer = types_of_numbers(np.where(valid, numbers, -1))
    return pd.Series(answer, index=recipients.index, name=recipients.name)


def receives_sms(types: pd.Series) -> np.ndarray:
    """False for the numbers whose type cannot receive a text message (:data:`NOT_SMS_TYPES`); True otherwise,
    missing types included (an invalid number is another rule's business).

        >>> receives_sms(pd.Series(["mobile", "fixed_line", None, "fixed_line_or_mobile"])).tolist()
        [True, False, True, True]
    """
    answer: np.ndarray = ~types.isin(NOT_SMS_TYPES).to_numpy(dtype=bool)
    return answer
