"""Numbering plans as lookup tables, and the steps of ``phonenumbers.parse`` the recipient rule needs, as array work.

Everything here is read from ``phonenumbers``' own metadata, once per process (:func:`tables`,
:func:`region_plan`): the calling codes (prefix-free, so the first three digits of a number name its code),
each code's main region, and per region the possible and local-only lengths, the national number
pattern, the international (IDD) prefix and the national trunk prefix patterns. The patterns are run by
``pyarrow.compute`` (RE2); a region whose pattern RE2 would not compile is left to the scalar rule.

:func:`parse_international` and :func:`parse_national` redo, over arrays of ASCII digit runs, what
``phonenumbers.parse`` does with such input (the only input the scalar rule hands it, see
:mod:`sendframe.api.recipient_columns`): strip an IDD prefix, take the calling code, drop the region's own
code written without ``+`` when that gives a better national number, strip a trunk prefix unless the
number was viable as written or the rest would be too short, refuse more than 17 national digits. They
put the valid ``code + national number`` answers into an :class:`Answers` and flag the rows they cannot
settle (trunk prefixes that rewrite digits, uncompiled patterns) for the scalar rule.

    >>> import pyarrow as pa
    >>> valid_digit_strings(pa.array(["34600123456", "4407700900123", "123"])).tolist()
    [True, False, False]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc
from phonenumbers import PhoneMetadata, PhoneNumberDesc, ValidationResult
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE

from sendframe.api.pattern_ranges import RangeTable, digit_ranges, in_ranges
from sendframe.api.recipients import MAX_PHONE_DIGITS, MIN_PHONE_DIGITS

__all__ = ["MAX_INT_DIGITS", "Answers", "Desc", "Plan", "Tables", "anchored", "as_numbers", "ascii_digits",
           "calling_codes", "compiles", "digit_values", "filled", "length_answers", "lengths", "match", "matches_desc",
           "national_significant", "number_desc", "parse_international", "parse_national", "re2_class",
           "region_plan", "tables", "valid_digit_numbers", "valid_digit_strings", "valid_numbers", "where"]

_MAX_INPUT = 250  # phonenumbers refuses longer input
_MAX_NSN = 17  # ... and national numbers longer than this
MAX_INT_DIGITS = 18  # digit runs this long still fit an int64; longer ones go to the scalar rule
_LENGTHS = 256  # length tables cover 0..255; anything longer is TOO_LONG for every region
_POSSIBLE, _LOCAL_ONLY = ValidationResult.IS_POSSIBLE, ValidationResult.IS_POSSIBLE_LOCAL_ONLY
_TOO_SHORT, _TOO_LONG = ValidationResult.TOO_SHORT, ValidationResult.TOO_LONG
_INVALID_LENGTH = ValidationResult.INVALID_LENGTH
# the length answers after which parse keeps a trunk prefix (the rest would not be a full number)
_NOT_PARSED_WHEN = np.isin(np.arange(8), [_TOO_SHORT, _LOCAL_ONLY, _INVALID_LENGTH])


@dataclass(frozen=True)
class Plan:
    """One region's numbering facts as ``parse`` uses them (patterns anchored for RE2)."""

    code: str
    idd: str | None  # "^(?:00)"
    trunk: str | None  # "^(?:0)"
    rewrites: bool  # a transform rule: the trunk prefix is replaced, not removed (scalar rule decides)
    national: str | None  # "^(?:...)$": the general national number pattern
    lengths: np.ndarray  # _test_number_length's answer for each length 0..255
    compiles: bool  # RE2 compiles every pattern


@dataclass(frozen=True)
class Tables:
    code_length: np.ndarray  # by the first three digits (100..999): length of the calling code they start with
    code_value: np.ndarray  # ... and that code as a number
    possible: np.ndarray  # [code, national length] -> the full number is valid in API form
    main_plan: dict[int, Plan]  # by calling code: the plan of the code's main region
    whitespace: str  # the characters of Python's \s (what str.strip removes)
    whitespace_class: str  # ... as the body of a RE2 character class
    separators_class: str  # the scalar rule's separators (\s - ( ) . NBSP /), ditto


def re2_class(characters: str) -> str:
    """The body of a RE2 character class holding exactly ``characters`` (each as ``\\x{...}``)."""
    return "".join(f"\\x{{{ord(c):x}}}" for c in characters)


def length_answers(metadata: PhoneMetadata) -> np.ndarray:
    """phonenumbers' ``_test_number_length`` answer (a ``ValidationResult``) for every length 0..255."""
    general = metadata.general_desc
    possible = list(general.possible_length) if general is not None else [-1]
    local = set(general.possible_length_local_only) if general is not None else set()
    answers = np.empty(_LENGTHS, dtype=np.int8)
    for size in range(_LENGTHS):
        if size in local:
            answers[size] = _LOCAL_ONLY
        elif size == possible[0]:
            answers[size] = _POSSIBLE
        elif size < possible[0]:
            answers[size] = _TOO_SHORT
        elif size > possible[-1]:
            answers[size] = _TOO_LONG
        else:
            answers[size] = _POSSIBLE if size in possible[1:] else _INVALID_LENGTH
    return answers


def anchored(pattern: str | None, end: str = "") -> str | None:
    """A metadata pattern anchored for RE2 (``"^(?:...)"`` + ``end``), None when there is none."""
    return f"^(?:{pattern}){end}" if pattern else None


def compiles(*patterns: str | None) -> bool:
    """Whether RE2 compiles every pattern (the few it refuses are left to the scalar rule)."""
    try:
        for pattern in patterns:
            if pattern is not None:
                pc.match_substring_regex(pa.array(["0"]), pattern=pattern)
    except pa.ArrowInvalid:
        return False
    return True


def _plan(metadata: PhoneMetadata) -> Plan:
    idd = anchored(metadata.international_prefix)
    trunk = anchored(metadata.national_prefix_for_parsing)
    national = anchored(metadata.general_desc.national_number_pattern if metadata.general_desc else None, "$")
    rewrites = bool(metadata.national_prefix_transform_rule)
    return Plan(code=str(metadata.country_code), idd=idd, trunk=trunk, rewrites=rewrites,
                 national=national, lengths=length_answers(metadata), compiles=compiles(idd, trunk, national))


def _metadata_of_code(code: int) -> PhoneMetadata:
    region = phonenumbers.region_code_for_country_code(code)
    metadata = PhoneMetadata.metadata_for_region_or_calling_code(code, region)
    if metadata is None:  # every code of COUNTRY_CODE_TO_REGION_CODE has metadata
        raise LookupError(f"phonenumbers has no metadata for calling code {code}")
    return metadata


@cache
def region_plan(region: str) -> Plan | None:
    metadata = PhoneMetadata.metadata_for_region(region, None)
    return None if metadata is None else _plan(metadata)


@cache
def tables() -> Tables:
    """The lookup tables, built once from phonenumbers' metadata (a few milliseconds)."""
    codes = sorted(COUNTRY_CODE_TO_REGION_CODE)
    code_length = np.zeros(1000, dtype=np.int8)
    code_value = np.zeros(1000, dtype=np.int16)
    for first3 in range(100, 1000):
        text = str(first3)
        for size in (1, 2, 3):  # calling codes are prefix-free: at most one matches
            if int(text[:size]) in COUNTRY_CODE_TO_REGION_CODE:
                code_length[first3], code_value[first3] = size, int(text[:size])
                break
    main_plan = {code: _plan(_metadata_of_code(code)) for code in codes}
    possible = np.zeros((1000, MAX_PHONE_DIGITS + 1), dtype=bool)
    for code, plan in main_plan.items():
        possible[code] = plan.lengths[: MAX_PHONE_DIGITS + 1] == _POSSIBLE
    every_character = "".join(map(chr, range(0x10000)))  # all of Unicode's whitespace is in the BMP (a test checks)
    whitespace = "".join(re.findall(r"\s", every_character))
    return Tables(code_length=code_length, code_value=code_value, possible=possible, main_plan=main_plan,
                   whitespace=whitespace, whitespace_class=re2_class(whitespace),
                   separators_class=re2_class(whitespace + "-()./\u00a0"))


# ---- small array helpers ------------------------------------------------------------------------------

def _as_bool(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool) if len(mask) else np.zeros(0, dtype=bool)


def filled(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return _as_bool(pc.fill_null(mask, False))


def lengths(strings: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.binary_length(strings), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def ascii_digits(strings: pa.Array) -> np.ndarray:
    """Which values are a run of ASCII digits (``^[0-9]+$``; Arrow's byte test, several times faster than RE2)."""
    return filled(pc.ascii_is_decimal(strings))


def match(strings: pa.Array, pattern: str | None) -> np.ndarray:
    if pattern is None:
        return np.zeros(len(strings), dtype=bool)
    return filled(pc.match_substring_regex(strings, pattern=pattern))


def _strip(strings: pa.Array, pattern: str) -> pa.Array:
    return pc.replace_substring_regex(strings, pattern=pattern, replacement="", max_replacements=1)


def where(mask: np.ndarray, yes: pa.Array, no: pa.Array) -> pa.Array:
    return pc.if_else(pa.array(mask, pa.bool_()), yes, no)


_POWERS = 10 ** np.arange(19, dtype=np.int64)


def valid_numbers(numbers: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """is_valid_phone for digit runs given as int64 values and their lengths (leading zeros counted in ``sizes``)."""
    table = tables()
    sizes = np.asarray(sizes, dtype=np.int64)
    in_range = (sizes >= MIN_PHONE_DIGITS) & (sizes <= MAX_PHONE_DIGITS)
    shift = _POWERS[np.clip(sizes - 3, 0, 18)]
    leading_zero = numbers < _POWERS[np.clip(sizes - 1, 0, 18)]
    first3 = np.where(in_range & ~leading_zero, numbers // shift, 0).clip(0, 999)
    code_size = table.code_length[first3].astype(np.int64)
    national_size = np.clip(sizes - code_size, 0, MAX_PHONE_DIGITS)
    valid: np.ndarray = in_range & (code_size > 0) & table.possible[table.code_value[first3], national_size]
    return valid


def calling_codes(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The calling code of each valid phone given as int64 (API form; 0 or less for the rest: code 0) and its
    length in digits.

        >>> [a.tolist() for a in calling_codes(np.array([34600123456, 14165550123, -1]))]
        [[34, 1, 0], [2, 1, 0]]
    """
    table = tables()
    numbers = np.asarray(numbers, dtype=np.int64)
    sizes = np.searchsorted(_POWERS, numbers, side="right")  # digits (valid numbers have no leading zero)
    first3 = np.where(numbers > 0, numbers // _POWERS[np.clip(sizes - 3, 0, 18)], 0).clip(0, 999)
    return table.code_value[first3].astype(np.int64), table.code_length[first3].astype(np.int64)


def as_numbers(digits: pa.Array, usable: np.ndarray) -> np.ndarray:
    """The ``usable`` digit runs (ASCII digits, at most 18) as int64; 0 elsewhere."""
    chosen = pc.if_else(pa.array(usable, pa.bool_()), digits, pa.scalar(None, digits.type))
    return np.asarray(pc.fill_null(pc.cast(chosen, pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def valid_digit_numbers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """is_valid_phone over an Arrow text array, with the work done on the way: (valid, numbers as int64, lengths)."""
    sizes = lengths(strings)
    usable = (sizes >= MIN_PHONE_DIGITS) & (sizes <= MAX_PHONE_DIGITS) & ascii_digits(strings)
    numbers = as_numbers(strings, usable)
    return usable & valid_numbers(numbers, sizes), numbers, sizes


def valid_digit_strings(strings: pa.Array) -> np.ndarray:
    """is_valid_phone over an Arrow text array (missing and non-digit values are not valid)."""
    return valid_digit_numbers(strings)[0]


def _first3(digits: pa.Array) -> np.ndarray:
    # the first three digits as a number (0 when there are not three digits)
    head = pc.utf8_slice_codeunits(digits, 0, 3)
    head = where(ascii_digits(head) & (lengths(head) == 3), head, pa.nulls(len(head), head.type))
    return np.asarray(pc.fill_null(pc.cast(head, pa.int16()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass(frozen=True)
class Desc:
    """One PhoneNumberDesc (a number type's or the general one): its possible lengths (empty: any), its
    pattern anchored for RE2 and, when it is a finite digit language, the same as integer ranges by length
    (:mod:`sendframe.api.pattern_ranges`: a binary search per number instead of a regex pass)."""

    lengths: tuple[int, ...]
    pattern: str | None
    ranges: RangeTable | None = field(default=None, compare=False)


def number_desc(desc: PhoneNumberDesc | None) -> Desc | None:
    if desc is None:
        return None
    return Desc(tuple(desc.possible_length), anchored(desc.national_number_pattern, "$"),
                digit_ranges(desc.national_number_pattern))


def digit_values(national: pa.Array) -> np.ndarray:
    """National numbers (digit runs of at most 18) as int64: what :class:`Desc` ranges are searched with."""
    return np.asarray(pc.fill_null(pc.cast(national, pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def matches_desc(national: pa.Array, sizes: np.ndarray, desc: Desc | None, values: np.ndarray | None = None
                 ) -> np.ndarray:
    """phonenumbers' ``_is_number_matching_desc`` over national numbers: a listed length, then the whole pattern
    (by its ranges when it has them; ``values``: the numbers as :func:`digit_values` gives them, when known)."""
    if desc is None or desc.pattern is None:
        return np.zeros(len(national), dtype=bool)
    fits = np.isin(sizes, desc.lengths) if desc.lengths else np.ones(len(national), dtype=bool)
    if not fits.any():
        return fits
    if desc.ranges is not None:
        found: np.ndarray = fits & in_ranges(digit_values(national) if values is None else values, sizes, desc.ranges)
        return found
    if fits.all():
        return match(national, desc.pattern)
    matched = np.zeros(len(national), dtype=bool)
    rows = np.flatnonzero(fits)
    matched[rows] = match(national.take(pa.array(rows)), desc.pattern)
    return matched


# ---- the answer being built, one group of distinct values at a time ------------------------------------

class Answers:
    """Positions (into the distinct values) and their answers, gathered from several groups."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.done = np.zeros(size, dtype=bool)
        self._parts: list[tuple[np.ndarray, pa.Array]] = []

    def put(self, positions: np.ndarray, values: pa.Array) -> None:
        self.done[positions] = True
        self._parts.append((positions, values))

    def array(self) -> pa.Array:
        values = [v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v for _, v in self._parts]
        flat = pa.concat_arrays([v.cast(pa.large_string()) for v in values] + [pa.nulls(1, pa.large_string())])
        take = np.full(self.size, len(flat) - 1, dtype=np.int64)
        offset = 0
        for positions, value in self._parts:
            take[positions] = np.arange(offset, offset + len(value))
            offset += len(value)
        return flat.take(pa.array(take))


def _without_trunk(national: pa.Array, plan: Plan) -> tuple[pa.Array, np.ndarray]:
    """phonenumbers' _maybe_strip_national_prefix_carrier_code; also which rows only the scalar rule can answer.

    The stripping and the two national-pattern passes run only over the numbers the trunk prefix matches
    (few, in API form), not over the whole group."""
    nothing = np.zeros(len(national), dtype=bool)
    if plan.trunk is None or len(national) == 0:
        return national, nothing
    matched = match(national, plan.trunk) & (lengths(national) > 0)
    if not matched.any():
        return national, nothing
    rows = np.flatnonzero(matched)
    written = national.take(pa.array(rows))
    stripped = _strip(written, plan.trunk)
    keep = match(written, plan.national) & ~match(stripped, plan.national)  # a viable number stays as written
    strip = np.zeros(len(national), dtype=bool)
    strip[rows[~keep]] = True
    if strip.any():
        national = pc.replace_with_mask(national, pa.array(strip), stripped.filter(pa.array(~keep)).cast(national.type))
    return national, matched if plan.rewrites else nothing


def national_significant(national: pa.Array, plan: Plan) -> tuple[pa.Array, np.ndarray]:
    """The end of phonenumbers.parse once the calling code is known: trunk prefix, length checks.

    Returns the national significant number (missing where parse fails) and the rows left to the scalar rule.
    """
    sizes = lengths(national)
    potential, unsettled = _without_trunk(national, plan)
    potential_sizes = lengths(potential) if potential is not national else sizes
    taken = ~_NOT_PARSED_WHEN[plan.lengths[np.minimum(potential_sizes, _LENGTHS - 1)]]
    result_sizes = np.where(taken, potential_sizes, sizes)
    ok = (sizes >= 2) & (result_sizes <= _MAX_NSN)
    if potential is national and ok.all():  # nothing stripped, every length fine: as written
        return national, unsettled
    result = where(taken & ok, potential, where(ok, national, pa.nulls(len(national), national.type)))
    return result, unsettled


def _put_candidates(code: str, national: pa.Array, plan: Plan, *, answers: Answers, positions: np.ndarray,
                    unsettled: np.ndarray) -> None:
    # code + national significant number, where that is a valid recipient
    if not plan.compiles:
        unsettled[positions] = True
        return
    nsn, hard = national_significant(national, plan)
    candidates = pc.binary_join_element_wise(pa.scalar(code, pa.large_string()), nsn.cast(pa.large_string()),
                                            pa.scalar("", pa.large_string()))
    good = valid_digit_strings(candidates) & ~hard
    unsettled[positions[hard]] = True
    answers.put(positions[good], candidates.filter(pa.array(good)))


def parse_international(rest: pa.Array, *, answers: Answers, positions: np.ndarray, unsettled: np.ndarray) -> None:
    """parse("+" + rest): the calling code from the tables, the rest by the code's main region."""
    table = tables()
    first3 = _first3(rest)
    code_size = table.code_length[first3].astype(np.int64)
    usable = (lengths(rest) > 2) & (code_size > 0)
    codes = table.code_value[first3]
    for code in np.unique(codes[usable]):
        rows = np.flatnonzero(usable & (codes == code))
        plan = table.main_plan[int(code)]
        national = pc.utf8_slice_codeunits(rest.take(pa.array(rows)), int(code_size[rows[0]]))
        _put_candidates(plan.code, national, plan, answers=answers, positions=positions[rows], unsettled=unsettled)


def parse_national(digits: pa.Array, plan: Plan, region: str, *, answers: Answers, positions: np.ndarray,
                   unsettled: np.ndarray) -> None:
    """parse(digits, region) for digit runs written without + or 00; valid answers go to ``answers``."""
    if not plan.compiles:
        unsettled[positions] = True
        return
    viable = lengths(digits) >= 2
    if plan.idd is not None:  # e.g. 011 in the US: an international prefix other than 00
        rest = _strip(digits, plan.idd)
        idd = viable & match(digits, plan.idd) & ~filled(pc.starts_with(rest, "0"))
        if idd.any():
            parse_international(rest.filter(pa.array(idd)), answers=answers, positions=positions[idd],
                                unsettled=unsettled)
        viable &= ~idd
    rows = np.flatnonzero(viable)
    group = digits.take(pa.array(rows))
    # the region's own calling code written without + (phonenumbers' _maybe_extract_country_code):
    # dropped when the rest is a better national number, or the whole is too long
    starts = filled(pc.starts_with(group, plan.code))
    after_code, hard = _without_trunk(pc.utf8_slice_codeunits(group, len(plan.code)), plan)
    too_long = plan.lengths[np.minimum(lengths(group), _LENGTHS - 1)] == _TOO_LONG
    dropped = starts & ((~match(group, plan.national) & match(after_code, plan.national)) | too_long)
    unsettled[positions[rows[starts & hard]]] = True
    national = where(dropped, after_code, group)
    # parse then uses the code's main region (US for a Canadian default) for the dropped ones
    main = phonenumbers.region_code_for_country_code(int(plan.code))
    switched = dropped if main != region else np.zeros(len(rows), dtype=bool)
    for subset, chosen in ((~switched, plan), (switched, tables().main_plan[int(plan.code)])):
        if subset.any():
            _put_candidates(plan.code, national.filter(pa.array(subset)), chosen, answers=answers,
                            positions=positions[rows[subset]], unsettled=unsettled)


