"""The recipient rule over whole columns: the answers of :mod:`sendframe.api.recipients`, as array work.

``normalise_phones(series, region)`` gives, for every value, exactly what ``normalise_phone(value, region)``
gives, and ``valid_emails`` / ``valid_phones`` exactly what ``is_valid_email`` / ``is_valid_phone`` give
(a property test compares them on generated messy values). A million phones take about half a second
instead of 15.

What comes from ``phonenumbers`` and what is written here:

- Every fact about numbering plans is read from ``phonenumbers``' own metadata, once per process, into
  lookup tables (:func:`_tables`): the calling codes, each code's main region, each region's possible and
  local-only lengths, national number pattern, international (IDD) prefix and national trunk prefix
  patterns. Nothing of those is typed here.
- ``phonenumbers`` has no column interface: ``parse`` works on one string at a time (about 20 us each).
  The steps of ``parse`` that the scalar rule relies on are therefore written again here as array
  operations (numpy over the tables, ``pyarrow.compute`` regular expressions with the metadata's own
  patterns): strip the IDD prefix, take the calling code, strip the trunk prefix when the metadata says the
  rest still fits, check the length. The scalar rule only ever hands ``parse`` a run of ASCII digits
  (after ``+`` or not), which is what makes these few steps the whole of ``parse`` for our inputs.
- What these steps do not settle is answered by the scalar rule itself, once per distinct value: regions
  whose trunk prefix rewrites digits (``national_prefix_transform_rule``: Argentina, Brazil, Japan, ...),
  digit runs longer than 18, patterns the regex engine of ``pyarrow`` (RE2) would not compile.
- Python's ``\\s`` and ``str.strip`` know more whitespace than RE2's ``\\s``; the exact character set is
  taken from Python's ``re`` once and spelled out in the patterns.

    >>> import pandas as pd
    >>> phones, valid = normalise_phones(pd.Series(["+34 600 12 34 56", "600123456", "+44 (0)7700 900123", "nope"]))
    >>> phones.tolist(), valid.tolist()
    (['34600123456', '34600123456', '447700900123', nan], [True, True, True, False])
    >>> valid_emails(pd.Series(["ana@example.com", "ana@localhost", None])).tolist()
    [True, False, False]
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc
from phonenumbers import PhoneMetadata, ValidationResult
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, REGION_CODE_FOR_NON_GEO_ENTITY

from sendframe.api.recipients import (
    MAX_EMAIL_LENGTH,
    MAX_PHONE_DIGITS,
    MIN_PHONE_DIGITS,
    is_valid_email,
    is_valid_phone,
    normalise_phone,
)

__all__ = ["clean_emails", "email_keys", "normalise_phones", "phone_texts", "valid_emails", "valid_phones"]

_MAX_INPUT = 250  # phonenumbers refuses longer input
_MAX_NSN = 17  # ... and national numbers longer than this
_MAX_INT_DIGITS = 18  # digit runs this long still fit an int64; longer ones go to the scalar rule
_LENGTHS = 256  # length tables cover 0..255; anything longer is TOO_LONG for every region
_TOO_SHORT, _POSSIBLE, _LOCAL_ONLY = ValidationResult.TOO_SHORT, ValidationResult.IS_POSSIBLE, ValidationResult.IS_POSSIBLE_LOCAL_ONLY
_TOO_LONG, _INVALID_LENGTH = ValidationResult.TOO_LONG, ValidationResult.INVALID_LENGTH
# the length answers after which parse keeps a trunk prefix (the rest would not be a full number)
_NOT_PARSED_WHEN = np.isin(np.arange(8), [_TOO_SHORT, _LOCAL_ONLY, _INVALID_LENGTH])


@dataclass(frozen=True)
class _Plan:
    """One region's numbering facts as ``parse`` uses them (patterns anchored for RE2)."""

    code: str
    idd: str | None  # "^(?:00)"
    trunk: str | None  # "^(?:0)"
    rewrites: bool  # a transform rule: the trunk prefix is replaced, not removed (scalar rule decides)
    national: str | None  # "^(?:...)$": the general national number pattern
    lengths: np.ndarray  # _test_number_length's answer for each length 0..255
    compiles: bool  # RE2 compiles every pattern


@dataclass(frozen=True)
class _Tables:
    code_length: np.ndarray  # by the first three digits (100..999): length of the calling code they start with
    code_value: np.ndarray  # ... and that code as a number
    possible: np.ndarray  # [code, national length] -> the full number is valid in API form
    main_plan: dict[int, _Plan]  # by calling code: the plan of the code's main region
    whitespace: str  # the characters of Python's \s (what str.strip removes)
    whitespace_class: str  # ... as the body of a RE2 character class
    separators_class: str  # the scalar rule's separators (\s - ( ) . NBSP /), ditto


def _re2_class(characters: str) -> str:
    return "".join(f"\\x{{{ord(c):x}}}" for c in characters)


def _length_answers(metadata: PhoneMetadata) -> np.ndarray:
    # phonenumbers' _test_number_length for the general description, for every length
    possible = list(metadata.general_desc.possible_length)
    local = set(metadata.general_desc.possible_length_local_only)
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


def _compiles(*patterns: str | None) -> bool:
    try:
        for pattern in patterns:
            if pattern is not None:
                pc.match_substring_regex(pa.array(["0"]), pattern=pattern)
    except pa.ArrowInvalid:
        return False
    return True


def _plan(metadata: PhoneMetadata) -> _Plan:
    def anchored(pattern: str | None, end: str = "") -> str | None:
        return f"^(?:{pattern}){end}" if pattern else None

    idd = anchored(metadata.international_prefix)
    trunk = anchored(metadata.national_prefix_for_parsing)
    national = anchored(metadata.general_desc.national_number_pattern, "$")
    return _Plan(code=str(metadata.country_code), idd=idd, trunk=trunk, rewrites=bool(metadata.national_prefix_transform_rule),
                 national=national, lengths=_length_answers(metadata), compiles=_compiles(idd, trunk, national))


def _metadata_of_code(code: int) -> PhoneMetadata:
    region = phonenumbers.region_code_for_country_code(code)
    return PhoneMetadata.metadata_for_region_or_calling_code(code, region)


@cache
def _region_plan(region: str) -> _Plan | None:
    metadata = PhoneMetadata.metadata_for_region(region, None)
    return None if metadata is None else _plan(metadata)


@cache
def _tables() -> _Tables:
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
    every_character = "".join(map(chr, range(sys.maxunicode + 1)))
    whitespace = "".join(re.findall(r"\s", every_character))
    return _Tables(code_length=code_length, code_value=code_value, possible=possible, main_plan=main_plan,
                   whitespace=whitespace, whitespace_class=_re2_class(whitespace),
                   separators_class=_re2_class(whitespace + "-()./\u00a0"))


# ---- small array helpers ------------------------------------------------------------------------------

def _np(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool) if len(mask) else np.zeros(0, dtype=bool)


def _filled(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return _np(pc.fill_null(mask, False))


def _lengths(strings: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.binary_length(strings), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _match(strings: pa.Array, pattern: str | None) -> np.ndarray:
    if pattern is None:
        return np.zeros(len(strings), dtype=bool)
    return _filled(pc.match_substring_regex(strings, pattern=pattern))


def _strip(strings: pa.Array, pattern: str) -> pa.Array:
    return pc.replace_substring_regex(strings, pattern=pattern, replacement="", max_replacements=1)


def _where(mask: np.ndarray, yes: pa.Array, no: pa.Array) -> pa.Array:
    return pc.if_else(pa.array(mask, pa.bool_()), yes, no)


def _first3(digits: pa.Array) -> np.ndarray:
    # the first three digits as a number (0 when there are not three digits)
    head = pc.utf8_slice_codeunits(digits, 0, 3)
    head = pc.if_else(pc.match_substring_regex(head, pattern="^[0-9]{3}$"), head, pa.scalar(None, head.type))
    return np.asarray(pc.fill_null(pc.cast(head, pa.int16()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _valid_digits(digits: pa.Array, sizes: np.ndarray) -> np.ndarray:
    """is_valid_phone over ASCII digit strings of known length (nulls and non-digits must be excluded by the caller)."""
    tables = _tables()
    first3 = _first3(digits)
    code_size = tables.code_length[first3].astype(np.int64)
    national_size = np.clip(sizes - code_size, 0, MAX_PHONE_DIGITS)
    in_range = (sizes >= MIN_PHONE_DIGITS) & (sizes <= MAX_PHONE_DIGITS) & (code_size > 0)
    return in_range & tables.possible[tables.code_value[first3], national_size]


# ---- the answer being built, one group of distinct values at a time ------------------------------------

class _Answers:
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


def _without_trunk(national: pa.Array, plan: _Plan) -> tuple[pa.Array, np.ndarray]:
    """phonenumbers' _maybe_strip_national_prefix_carrier_code; also which rows only the scalar rule can answer."""
    if plan.trunk is None or len(national) == 0:
        return national, np.zeros(len(national), dtype=bool)
    matched = _match(national, plan.trunk) & (_lengths(national) > 0)
    stripped = _strip(national, plan.trunk)
    keep = _match(national, plan.national) & ~_match(stripped, plan.national)  # a viable number stays as written
    unsettled = matched if plan.rewrites else np.zeros(len(national), dtype=bool)
    return _where(matched & ~keep, stripped, national), unsettled


def _national_significant(national: pa.Array, plan: _Plan) -> tuple[pa.Array, np.ndarray]:
    """The end of phonenumbers.parse once the calling code is known: trunk prefix, length checks.

    Returns the national significant number (missing where parse fails) and the rows left to the scalar rule.
    """
    sizes = _lengths(national)
    potential, unsettled = _without_trunk(national, plan)
    potential_sizes = _lengths(potential)
    taken = ~_NOT_PARSED_WHEN[plan.lengths[np.minimum(potential_sizes, _LENGTHS - 1)]]
    result_sizes = np.where(taken, potential_sizes, sizes)
    ok = (sizes >= 2) & (result_sizes <= _MAX_NSN)
    result = _where(taken & ok, potential, _where(ok, national, pa.nulls(len(national), national.type)))
    return result, unsettled


def _put_candidates(code: str, national: pa.Array, plan: _Plan, answers: _Answers, positions: np.ndarray,
                    unsettled: np.ndarray) -> None:
    # code + national significant number, where that is a valid recipient
    if not plan.compiles:
        unsettled[positions] = True
        return
    nsn, hard = _national_significant(national, plan)
    candidates = pc.binary_join_element_wise(pa.scalar(code, pa.large_string()), nsn.cast(pa.large_string()),
                                            pa.scalar("", pa.large_string()))
    good = _valid_digits(candidates, _lengths(candidates)) & ~hard
    unsettled[positions[hard]] = True
    answers.put(positions[good], candidates.filter(pa.array(good)))


def _after_international_prefix(rest: pa.Array, answers: _Answers, positions: np.ndarray, unsettled: np.ndarray) -> None:
    """parse("+" + rest): the calling code from the tables, the rest by the code's main region."""
    tables = _tables()
    first3 = _first3(rest)
    code_size = tables.code_length[first3].astype(np.int64)
    usable = (_lengths(rest) > 2) & (code_size > 0)
    codes = tables.code_value[first3]
    for code in np.unique(codes[usable]):
        rows = np.flatnonzero(usable & (codes == code))
        plan = tables.main_plan[int(code)]
        national = pc.utf8_slice_codeunits(rest.take(pa.array(rows)), int(code_size[rows[0]]))
        _put_candidates(plan.code, national, plan, answers, positions[rows], unsettled)


def _national(digits: pa.Array, plan: _Plan, region: str, answers: _Answers, positions: np.ndarray,
              unsettled: np.ndarray) -> None:
    """parse(digits, region) for digit runs written without + or 00; valid answers go to ``answers``."""
    if not plan.compiles:
        unsettled[positions] = True
        return
    viable = _lengths(digits) >= 2
    if plan.idd is not None:  # e.g. 011 in the US: an international prefix other than 00
        rest = _strip(digits, plan.idd)
        idd = viable & _match(digits, plan.idd) & ~_filled(pc.starts_with(rest, "0"))
        if idd.any():
            _after_international_prefix(rest.filter(pa.array(idd)), answers, positions[idd], unsettled)
        viable &= ~idd
    rows = np.flatnonzero(viable)
    group = digits.take(pa.array(rows))
    # the region's own calling code written without + (phonenumbers' _maybe_extract_country_code):
    # dropped when the rest is a better national number, or the whole is too long
    starts = _filled(pc.starts_with(group, plan.code))
    after_code, hard = _without_trunk(pc.utf8_slice_codeunits(group, len(plan.code)), plan)
    too_long = plan.lengths[np.minimum(_lengths(group), _LENGTHS - 1)] == _TOO_LONG
    dropped = starts & ((~_match(group, plan.national) & _match(after_code, plan.national)) | too_long)
    unsettled[positions[rows[starts & hard]]] = True
    national = _where(dropped, after_code, group)
    # parse then uses the code's main region (US for a Canadian default) for the dropped ones
    main = phonenumbers.region_code_for_country_code(int(plan.code))
    switched = dropped if main != region else np.zeros(len(rows), dtype=bool)
    for subset, chosen in ((~switched, plan), (switched, _tables().main_plan[int(plan.code)])):
        if subset.any():
            _put_candidates(plan.code, national.filter(pa.array(subset)), chosen, answers, positions[rows[subset]],
                            unsettled)


# ---- cleaning ----------------------------------------------------------------------------------------

def _arrow_strings(series: pd.Series) -> pa.Array | None:
    # a text column as one Arrow array, or None when it is not one (or cannot be: lone surrogates)
    dtype = series.dtype
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, pd.ArrowDtype) and pa.types.is_string(dtype.pyarrow_dtype)
                                             or isinstance(dtype, pd.ArrowDtype) and pa.types.is_large_string(dtype.pyarrow_dtype)):
        try:
            array = pa.array(series, type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
            return None
        return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    return None


def _text_of(value: object) -> str | None:
    # the scalar rule's reading of one cell, before its float-text repair (done on arrays afterwards)
    if value is None or value is pd.NA or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if math.isfinite(value) and value.is_integer() and value > 0 else None
    return value if isinstance(value, str) else None


def phone_texts(series: pd.Series) -> pa.Array:
    """The cells of a phone column as text, as the scalar rule reads them: whole numbers from a float
    column without ``.0``, anything that is neither text nor a number missing.

        >>> phone_texts(pd.Series([34600123456.0, None, 1.5])).to_pylist()
        ['34600123456', None, None]
    """
    strings = _arrow_strings(series)
    if strings is not None:
        return strings
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(values) & (values > 0) & (np.floor(values) == values) & (values < 2.0**63)
        numbers = pc.cast(pa.array(np.where(whole, values, 0).astype(np.int64)), pa.large_string())
        return pc.if_else(pa.array(whole), numbers, pa.scalar(None, pa.large_string()))
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return pc.cast(pa.array(series.to_numpy()), pa.large_string())
    texts = [_text_of(value) for value in series.to_numpy(dtype=object)]
    try:
        return pa.array(texts, type=pa.large_string())
    except (pa.ArrowInvalid, UnicodeEncodeError):  # lone surrogates: no digits to find in them anyway
        return pa.array([t if t is None or _encodable(t) else "\ufffd" for t in texts], type=pa.large_string())


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _digits(texts: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The scalar rule's cleaning: strip, float repair, separators, + or 00. Returns digits, ok, international."""
    tables = _tables()
    text = pc.utf8_trim(texts, characters=tables.whitespace)
    text = pc.replace_substring_regex(text, pattern=r"^(\+?[0-9]+)\.0+$", replacement=r"\1")
    lost = _match(text, "[Ee]")  # "3.46001e+10": the digits are gone (only E and e lower to an "e")
    bare = pc.replace_substring_regex(text, pattern=f"[{tables.separators_class}]", replacement="")
    plus = _filled(pc.starts_with(bare, "+"))
    zeros = ~plus & _filled(pc.starts_with(bare, "00"))
    digits = _where(plus, pc.utf8_slice_codeunits(bare, 1), _where(zeros, pc.utf8_slice_codeunits(bare, 2), bare))
    ok = ~lost & (_lengths(text) > 0) & _match(digits, "^[0-9]+$")
    return digits, ok, plus | zeros


def _normalise_distinct(texts: pa.Array, region: str) -> pa.Array:
    """normalise_phone for each text (the distinct values of a column)."""
    answers = _Answers(len(texts))
    if len(texts) == 0:
        return answers.array()
    digits, ok, international = _digits(texts)
    sizes = _lengths(digits)
    unsettled = ok & (sizes > _MAX_INT_DIGITS)
    ok &= ~unsettled
    valid = ok & _valid_digits(digits, sizes)
    plan = _region_plan(region) if phonenumbers.country_code_for_region(region) else None
    home = _filled(pc.starts_with(digits, plan.code)) if plan is not None else np.ones(len(texts), dtype=bool)
    first = valid & (international | home)
    answers.put(np.flatnonzero(first), digits.filter(pa.array(first)))
    rest = ok & international & ~valid
    if rest.any():
        _after_international_prefix(digits.filter(pa.array(rest)), answers, np.flatnonzero(rest), unsettled)
    rest = ok & ~international & ~first
    if plan is not None and rest.any():
        _national(digits.filter(pa.array(rest)), plan, region, answers, np.flatnonzero(rest), unsettled)
    as_written = valid & ~answers.done & ~unsettled  # a national number parse made nothing valid of
    answers.put(np.flatnonzero(as_written), digits.filter(pa.array(as_written)))
    hard = np.flatnonzero(unsettled & ~answers.done)
    if len(hard):
        scalar = [normalise_phone(text, region) for text in texts.take(pa.array(hard)).to_pylist()]
        answers.put(hard, pa.array(scalar, type=pa.large_string()))
    return answers.array()


def _series(values: pa.Array, like: pd.Series) -> pd.Series:
    return pd.Series(values.to_pandas().array, index=like.index, name=like.name).astype("str")


def normalise_phones(series: pd.Series, default_region: str | None = "ES") -> tuple[pd.Series, np.ndarray]:
    """:func:`~sendframe.api.recipients.normalise_phone` over a column, as array work.

    Returns the numbers in API form (a ``str`` Series on the same index and name, missing where a value
    cannot be repaired) and a boolean array saying which rows are valid (the non-missing ones).
    Each distinct value is worked out once. The input is not modified.

        >>> phones, valid = normalise_phones(pd.Series(["0044 7700-900123", "07700 900123", 34600123456.0]), "GB")
        >>> phones.tolist(), valid.tolist()
        (['447700900123', '447700900123', '34600123456'], [True, True, True])
    """
    region = (default_region or "").upper()
    encoded = pc.dictionary_encode(phone_texts(series))
    normalised = _normalise_distinct(encoded.dictionary, region).take(encoded.indices)
    return _series(normalised, series), _filled(pc.is_valid(normalised))


def _text_array(series: pd.Series, rule: Callable[[object], bool]) -> tuple[pa.Array, np.ndarray | None]:
    # (the str values of a column as Arrow, the scalar rule's answers when Arrow cannot hold them)
    strings = _arrow_strings(series)
    if strings is not None:
        return strings, None
    values = series.to_numpy(dtype=object)
    kept = [v if type(v) is str and _encodable(v) else None for v in values]
    odd = np.fromiter((type(v) is str and k is None for v, k in zip(values, kept, strict=True)), dtype=bool,
                      count=len(values))
    fixes = np.fromiter((rule(v) if o else False for v, o in zip(values, odd, strict=True)), dtype=bool,
                        count=len(values)) if odd.any() else None
    return pa.array(kept, type=pa.large_string()), fixes


def valid_phones(series: pd.Series) -> np.ndarray:
    """:func:`~sendframe.api.recipients.is_valid_phone` over a column: only text in API form is valid.

        >>> valid_phones(pd.Series(["34600123456", "+34600123456", None, "4407700900123"])).tolist()
        [True, False, False, False]
    """
    strings, fixes = _text_array(series, is_valid_phone)
    digits = _match(strings, "^[0-9]+$")
    answer = digits & _valid_digits(strings, _lengths(strings))
    return answer | fixes if fixes is not None else answer


def valid_emails(series: pd.Series) -> np.ndarray:
    """:func:`~sendframe.api.recipients.is_valid_email` over a column (one regular expression over the array).

        >>> valid_emails(pd.Series(["ana@example.com", "ana@x.", "a b@x.es", " ana@example.com"])).tolist()
        [True, False, False, False]
    """
    strings, fixes = _text_array(series, is_valid_email)
    ws = _tables().whitespace_class
    pattern = f"^[^@{ws}]+@[^@{ws}.][^@{ws}]*\\.[^@{ws}]*[^@{ws}.]$"
    answer = _filled(pc.less_equal(pc.utf8_length(strings), MAX_EMAIL_LENGTH)) & _match(strings, pattern)
    return answer | fixes if fixes is not None else answer


def clean_emails(series: pd.Series) -> pd.Series:
    """Email addresses as text without surrounding whitespace (what ``str.strip`` removes); same index and name.

        >>> clean_emails(pd.Series([" ana@example.com ", None])).tolist()
        ['ana@example.com', nan]
    """
    text = series if isinstance(series.dtype, pd.StringDtype) else series.astype("str")
    strings = _arrow_strings(text)
    if strings is None:  # lone surrogates: Python's own strip
        return text.map(lambda v: v.strip() if isinstance(v, str) else v).astype("str")
    return _series(pc.utf8_trim(strings, characters=_tables().whitespace), series)


def email_keys(series: pd.Series) -> pd.Series:
    """The form in which two addresses are the same recipient: stripped and in lower case (``str.lower``).

    ASCII addresses are lowered as an array; others with Python's ``str.lower``, once per distinct value.

        >>> email_keys(pd.Series([" Ana@Example.COM", "ÀNA@x.es"])).tolist()
        ['ana@example.com', 'àna@x.es']
    """
    cleaned = clean_emails(series)
    strings = _arrow_strings(cleaned)
    if strings is None:
        return cleaned.str.lower()
    lowered = pc.ascii_lower(strings)
    other = np.flatnonzero(~_filled(pc.string_is_ascii(strings)) & _filled(pc.is_valid(strings)))
    if len(other):
        encoded = pc.dictionary_encode(strings.take(pa.array(other)))
        distinct = pa.array([v.lower() for v in encoded.dictionary.to_pylist()], type=pa.large_string())
        take = np.arange(len(strings), dtype=np.int64)
        take[other] = len(strings) + np.asarray(encoded.indices.to_numpy(), dtype=np.int64)
        lowered = pa.concat_arrays([lowered.cast(pa.large_string()), distinct]).take(pa.array(take))
    return _series(lowered, series)
