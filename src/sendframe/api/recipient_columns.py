"""The recipient rule over whole columns: the answers of :mod:`sendframe.api.recipients`, as array work.

``normalise_phones(series, region)`` gives, for every value, exactly what ``normalise_phone(value, region)``
gives, ``valid_phones`` / ``valid_emails`` exactly what ``is_valid_phone`` / ``is_valid_email`` give, and
``recipient_keys`` what ``recipient_key`` gives: the one rule for "the same recipient" (property tests compare
them on generated messy values). A million messy phones take about half a second instead of 15.

Why parts of it are written by hand:

- ``phonenumbers`` has no column interface: ``parse`` takes one string at a time (about 20 us each). Its
  facts, though, are data: :mod:`sendframe.api.numbering` turns its metadata (calling codes, possible
  lengths, IDD and trunk prefix patterns) into lookup tables once, and redoes the few steps of ``parse``
  that matter for what the scalar rule hands it (a run of ASCII digits, after ``+`` or not) as array
  operations. Nothing about numbering plans is typed here.
- The cleaning before that (strip, repair ``34600123456.0``, drop separators, read ``+`` and ``00``) is a
  numpy pass over the UTF-8 bytes of the column for ASCII text: one table lookup per byte and sums per
  value, instead of a chain of regular-expression rewrites. Text with other characters (a non-breaking
  space, Arabic digits) goes through ``pyarrow.compute`` regular expressions that spell out Python's
  whitespace (RE2's ``\\s`` knows less), so both give Python's answers.
- What the tables cannot settle is answered by the scalar rule itself, once per distinct value: regions
  whose trunk prefix rewrites digits (Argentina, Brazil, Japan, ...), digit runs longer than 18.

    >>> import pandas as pd
    >>> phones, valid = normalise_phones(pd.Series(["+34 600 12 34 56", "600123456", "+44 (0)7700 900123", "nope"]))
    >>> phones.tolist(), valid.tolist()
    (['34600123456', '34600123456', '447700900123', nan], [True, True, True, False])
    >>> valid_emails(pd.Series(["ana@example.com", "ana@localhost", None])).tolist()
    [True, False, False]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.api.numbering import (
    MAX_INT_DIGITS,
    Answers,
    as_numbers,
    ascii_digits,
    filled,
    lengths,
    match,
    parse_international,
    parse_national,
    re2_class,
    region_plan,
    tables,
    valid_digit_strings,
    valid_numbers,
    where,
)
from sendframe.api.recipients import (
    MAX_EMAIL_LENGTH,
    check_kind,
    is_valid_email,
    is_valid_phone,
    normalise_phone,
)

__all__ = ["clean_emails", "email_keys", "normalise_phones", "phone_numbers", "phone_texts", "recipient_keys",
           "sendable_keys", "valid_emails", "valid_phones"]

_ROWS_AT_ONCE = 1 << 18
# byte classes of the ASCII cleaning kernel
_DIGIT, _SEPARATOR, _PLUS, _OTHER = 0, 1, 2, 3
_BYTE_CLASS = np.full(256, _OTHER, dtype=np.uint8)  # "e", "E" and every non-ASCII byte are _OTHER
_BYTE_CLASS[ord("0"): ord("9") + 1] = _DIGIT
_BYTE_CLASS[[ord(c) for c in map(chr, range(128)) if c.isspace() or c in "-()./"]] = _SEPARATOR
_BYTE_CLASS[ord("+")] = _PLUS


def _arrow_strings(series: pd.Series) -> pa.Array | None:
    # a text column as one Arrow array, or None when it is not one (or cannot be: lone surrogates)
    dtype = series.dtype
    arrow_text = isinstance(dtype, pd.ArrowDtype) and (pa.types.is_string(dtype.pyarrow_dtype)
                                                       or pa.types.is_large_string(dtype.pyarrow_dtype))
    if isinstance(dtype, pd.StringDtype) or arrow_text:
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


def _running(flags: np.ndarray) -> np.ndarray:
    # running[i] = how many of flags[:i] are set, so the count in a slice a:b is running[b] - running[a]
    running = np.zeros(len(flags) + 1, dtype=np.int32 if len(flags) < 2**31 else np.int64)
    np.cumsum(flags, out=running[1:])
    return running


def _ascii_digits(texts: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The scalar rule's cleaning for ASCII text (after the float repair): digits, ok, international."""
    size = len(texts)
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset: texts.offset + size + 1]
    data = texts.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8)[offsets[0]: offsets[-1]] if data is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1] - offsets[0], offsets[1:] - offsets[0]
    kind = _BYTE_CLASS[raw]
    is_digit = kind == _DIGIT
    digits_so_far = _running(is_digit)
    digit_count = digits_so_far[ends] - digits_so_far[starts]
    # + and other bytes are few: counted by the value each one sits in
    plus_at = np.flatnonzero(kind == _PLUS)
    plus_in = np.searchsorted(ends, plus_at, side="right")
    plus_count = np.bincount(plus_in, minlength=size)
    other_count = np.bincount(np.searchsorted(ends, np.flatnonzero(kind == _OTHER), side="right"), minlength=size)
    ok = filled(pc.is_valid(texts)) & (other_count == 0) & (plus_count <= 1) & (digit_count > 0)
    # a + is read only before every digit ("(+34) 600" yes, "34+600" no)
    ok[plus_in[digits_so_far[plus_at] != digits_so_far[starts[plus_in]]]] = False
    kept = raw[is_digit]
    new_offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(digit_count, out=new_offsets[1:])
    digits = pa.LargeStringArray.from_buffers(size, pa.py_buffer(new_offsets), pa.py_buffer(kept))
    first = new_offsets[:-1]
    two = np.flatnonzero(digit_count >= 2)
    zeros = np.zeros(size, dtype=bool)
    zeros[two] = (kept[first[two]] == ord("0")) & (kept[first[two] + 1] == ord("0"))
    zeros &= ok & (plus_count == 0)
    if zeros.any():  # "0034...": 00 is the international prefix
        after_zeros = pc.utf8_slice_codeunits(digits.filter(pa.array(zeros)), 2)
        digits = pc.replace_with_mask(digits, pa.array(zeros), after_zeros)
        ok &= ~zeros | (digit_count > 2)
    return digits, ok, (plus_count == 1) | zeros


def _unicode_digits(texts: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The same cleaning for any text, as regular expressions that spell out Python's whitespace."""
    table = tables()
    text = pc.utf8_trim(texts, characters=table.whitespace)
    text = pc.replace_substring_regex(text, pattern=r"^(\+?[0-9]+)\.0+$", replacement=r"\1")
    lost = match(text, "[Ee]")  # "3.46001e+10": the digits are gone (only E and e lower to an "e")
    bare = pc.replace_substring_regex(text, pattern=f"[{table.separators_class}]", replacement="")
    plus = filled(pc.starts_with(bare, "+"))
    zeros = ~plus & filled(pc.starts_with(bare, "00"))
    digits = where(plus, pc.utf8_slice_codeunits(bare, 1), where(zeros, pc.utf8_slice_codeunits(bare, 2), bare))
    ok = ~lost & (lengths(text) > 0) & ascii_digits(digits)
    return digits.cast(pa.large_string()), ok, plus | zeros


def _digits(texts: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The scalar rule's cleaning: strip, float repair, separators, + or 00. Returns digits, ok, international."""
    table = tables()
    dotted = filled(pc.match_substring(texts, ".0"))
    if dotted.any():  # "34600123456.0" went through a float column: only the part before the dot counts
        ws = table.whitespace_class
        float_text = f"^[{ws}]*(\\+?[0-9]+)\\.0+[{ws}]*$"
        repaired = pc.replace_substring_regex(texts.filter(pa.array(dotted)), pattern=float_text, replacement=r"\1")
        texts = pc.replace_with_mask(texts, pa.array(dotted), repaired.cast(texts.type))
    digits, ok, international = _ascii_digits(texts)
    other = ~filled(pc.fill_null(pc.string_is_ascii(texts), True))
    if other.any():
        mask = pa.array(other)
        some, some_ok, some_international = _unicode_digits(texts.filter(mask))
        digits = pc.replace_with_mask(digits, mask, some)
        ok[other], international[other] = some_ok, some_international
    return digits, ok, international


def _normalise(texts: pa.Array, region: str) -> pa.Array:
    """normalise_phone for each text, a slice of rows at a time: the cleaning's byte arrays are several times
    the column's size, so its memory stays bounded however long the column."""
    if len(texts) <= _ROWS_AT_ONCE:
        return _normalise_rows(texts, region)
    return pa.concat_arrays([_normalise_rows(texts.slice(start, _ROWS_AT_ONCE), region)
                             for start in range(0, len(texts), _ROWS_AT_ONCE)])


def _normalise_rows(texts: pa.Array, region: str) -> pa.Array:
    """normalise_phone for each text, as array work; the scalar rule only for what that cannot settle."""
    answers = Answers(len(texts))
    if len(texts) == 0:
        return answers.array()
    digits, ok, international = _digits(texts)
    sizes = lengths(digits)
    unsettled = ok & (sizes > MAX_INT_DIGITS)
    ok &= ~unsettled
    valid = ok & valid_numbers(as_numbers(digits, ok), sizes)
    plan = region_plan(region) if phonenumbers.country_code_for_region(region) else None
    home = filled(pc.starts_with(digits, plan.code)) if plan is not None else np.ones(len(texts), dtype=bool)
    first = valid & (international | home)  # already in API form
    answers.put(np.flatnonzero(first), digits.filter(pa.array(first)))
    rest = ok & international & ~valid
    if rest.any():
        parse_international(digits.filter(pa.array(rest)), answers=answers, positions=np.flatnonzero(rest),
                            unsettled=unsettled)
    rest = ok & ~international & ~first
    if plan is not None and rest.any():
        parse_national(digits.filter(pa.array(rest)), plan, region, answers=answers, positions=np.flatnonzero(rest),
                       unsettled=unsettled)
    as_written = valid & ~answers.done & ~unsettled  # a national number parse made nothing valid of
    answers.put(np.flatnonzero(as_written), digits.filter(pa.array(as_written)))
    hard = np.flatnonzero(unsettled & ~answers.done)
    if len(hard):  # once per distinct value
        encoded = pc.dictionary_encode(texts.take(pa.array(hard)))
        distinct = encoded.dictionary.to_pylist()
        scalar = pa.array([normalise_phone(text, region) for text in distinct], type=pa.large_string())
        answers.put(hard, scalar.take(encoded.indices))
    return answers.array()


def _series(values: pa.Array, like: pd.Series) -> pd.Series:
    return pd.Series(values.to_pandas().array, index=like.index, name=like.name).astype("str")


def normalise_phones(series: pd.Series, default_region: str | None = "ES") -> tuple[pd.Series, np.ndarray]:
    """:func:`~sendframe.api.recipients.normalise_phone` over a column, as array work.

    Returns the numbers in API form (a ``str`` Series on the same index and name, missing where a value
    cannot be repaired) and a boolean array saying which rows are valid (the non-missing ones). The input
    is not modified.

        >>> phones, valid = normalise_phones(pd.Series(["0044 7700-900123", "07700 900123", 34600123456.0]), "GB")
        >>> phones.tolist(), valid.tolist()
        (['447700900123', '447700900123', '34600123456'], [True, True, True])
    """
    normalised = _normalise(phone_texts(series), (default_region or "").upper())
    return _series(normalised, series), filled(pc.is_valid(normalised))


def phone_numbers(series: pd.Series, valid: np.ndarray) -> np.ndarray:
    """Valid phones in API form as int64 (-1 for the rest): a key to compare numbers fast (no leading zeros).

        >>> phone_numbers(pd.Series(["34600123456", None]), np.array([True, False])).tolist()
        [34600123456, -1]
    """
    strings = _arrow_strings(series)
    if strings is None:
        strings = pa.array([v if type(v) is str and v.isascii() else None for v in series], pa.large_string())
    usable = np.asarray(valid, dtype=bool) & ascii_digits(strings) & (lengths(strings) <= MAX_INT_DIGITS)
    numbers: np.ndarray = np.where(usable, as_numbers(strings, usable), -1)
    return numbers


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
    answer = valid_digit_strings(strings)
    return answer | fixes if fixes is not None else answer


def valid_emails(series: pd.Series) -> np.ndarray:
    """:func:`~sendframe.api.recipients.is_valid_email` over a column (one regular expression over the array).

        >>> valid_emails(pd.Series(["ana@example.com", "ana@x.", "a b@x.es", " ana@example.com"])).tolist()
        [True, False, False, False]
    """
    strings, fixes = _text_array(series, is_valid_email)
    ws = tables().whitespace_class
    pattern = f"^[^@{ws}]+@[^@{ws}.][^@{ws}]*\\.[^@{ws}]*[^@{ws}.]$"
    answer: np.ndarray = filled(pc.less_equal(pc.utf8_length(strings), MAX_EMAIL_LENGTH)) & match(strings, pattern)
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
    return _series(pc.utf8_trim(strings, characters=tables().whitespace), series)


@cache
def _folded_apart() -> str:
    """A RE2 character class of the characters Python's ``casefold`` and Arrow's ``utf8_lower`` answer apart
    (``ß``, ``ς``, ``İ``, Cherokee, ...; every character beyond the BMP, to be safe): text without them is
    case-folded by Arrow, one array pass. Built once, from every character of the BMP (about 50 ms)."""
    characters = [chr(c) for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000]
    lowered = pc.utf8_lower(pa.array(characters, type=pa.large_string()))
    agree = filled(pc.equal(lowered, pa.array([c.casefold() for c in characters], type=pa.large_string())))
    apart = "".join(c for c, same in zip(characters, agree, strict=True) if not same)
    return f"[{re2_class(apart)}\\x{{10000}}-\\x{{10ffff}}]"


def email_keys(series: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """:func:`recipient_keys` of an email column (stripped, case-folded valid addresses, missing for the rest)
    and which values are valid addresses (:func:`valid_emails` of the stripped text), worked out together.

        >>> keys, valid = email_keys(pd.Series([" Ana@Example.COM", "ana@localhost"]))
        >>> keys.tolist(), valid.tolist()
        (['ana@example.com', nan], [True, False])
    """
    keys, valid = _email_keys(series)
    return _series(keys, series), valid


def _email_keys(series: pd.Series) -> tuple[pa.Array, np.ndarray]:
    # email_key over a column: (keys, which values are valid addresses)
    cleaned = clean_emails(series)
    valid = valid_emails(cleaned)
    strings = _arrow_strings(cleaned)
    if strings is None:  # lone surrogates: Python's own casefold, keeping what Arrow can hold
        folded = [v.casefold() if ok and _encodable(v) else None for v, ok in zip(cleaned, valid, strict=True)]
        return pa.array(folded, type=pa.large_string()), valid
    data = strings.buffers()[2]
    if data is None or np.frombuffer(data, dtype=np.uint8).max(initial=0) < 0x80:  # ASCII text: Arrow's ASCII kernel
        keys = pc.ascii_lower(strings)
    else:
        keys = pc.utf8_lower(strings)  # casefold and lower agree, but for the few characters _folded_apart lists
        other = valid & match(strings, _folded_apart())
        if other.any():  # casefold, once per distinct address
            mask = pa.array(other)
            encoded = pc.dictionary_encode(strings.filter(mask))
            folded = pa.array([t.casefold() for t in encoded.dictionary.to_pylist()], type=pa.large_string())
            keys = pc.replace_with_mask(keys, mask, folded.take(encoded.indices))
    return pc.if_else(pa.array(valid, pa.bool_()), keys, pa.scalar(None, pa.large_string())), valid


def recipient_keys(values: pd.Series, kind: str, *, default_region: str | None = "ES") -> pd.Series:
    """:func:`~sendframe.api.recipients.recipient_key` over a column: the form under which two recipients are
    the same, missing where a value is no valid recipient.

    ``"phone"``: API form as :func:`normalise_phones` gives it (``default_region=None`` for values already in
    API form, e.g. a ledger's: a digit run is then read as international); ``"email"``: stripped and
    case-folded valid addresses; ``"any"``: valid addresses as emails, everything else as phones. Every
    comparison of recipients (duplicates, suppression, plan, ledger, variants, caps, Dask) goes through this.
    Returns a ``str`` Series (Arrow-backed, like ``read_contacts``' columns) on the same index and name;
    the input is not modified. About as fast as :func:`normalise_phones`: array work, no per-row Python.

        >>> recipient_keys(pd.Series(["+34 600 12 34 56", "0034600123456", "600123456", "nope"]), "phone").tolist()
        ['34600123456', '34600123456', '34600123456', nan]
        >>> recipient_keys(pd.Series([" Ana@Example.COM", "ana@example.com", "ana@localhost"]), "email").tolist()
        ['ana@example.com', 'ana@example.com', nan]
        >>> recipient_keys(pd.Series(["Ana@Example.com", "+44 7700 900123"]), "any").tolist()
        ['ana@example.com', '447700900123']
    """
    kind = check_kind(kind)
    region = (default_region or "").upper()
    if kind == "phone":
        return _series(_phone_keys(values, region), values)
    keys, valid = _email_keys(values)
    if kind == "any" and not valid.all():
        keys = pc.replace_with_mask(keys, pa.array(~valid), _phone_keys(values.iloc[np.flatnonzero(~valid)], region))
    return _series(keys, values)


def _phone_keys(values: pd.Series, region: str) -> pa.Array:
    # normalise_phone of each value; without a region, text already in API form is its own answer, found by
    # one cheap check (a column read_contacts wrote, a ledger's recipients), and only the rest is cleaned
    strings = _arrow_strings(values) if not region else None
    if strings is None:
        return _normalise(phone_texts(values), region)
    own = valid_digit_strings(strings)
    if own.all():
        return strings
    rest = ~own
    kept = pc.if_else(pa.array(own, pa.bool_()), strings, pa.scalar(None, pa.large_string()))
    return pc.replace_with_mask(kept, pa.array(rest), _normalise(strings.filter(pa.array(rest)), region))


def sendable_keys(values: pd.Series, kind: str) -> pd.Series:
    """The recipient key of each value a send can send as it is written (a phone in API form, an address
    without surrounding spaces), missing for every other value: a row is a valid recipient exactly when it
    has a key, so preflight, the plan and the Composer's counter cannot disagree. A whole number in an
    integer or float column is read as the send writes it (``34600123456.0`` is ``34600123456``).

        >>> sendable_keys(pd.Series([34600123456, 600123456]), "phone").tolist()
        ['34600123456', nan]
        >>> sendable_keys(pd.Series([34600123456.0, None]), "phone").tolist()
        ['34600123456', nan]
        >>> sendable_keys(pd.Series(["Ana@Example.com", " ana@example.com"]), "email").tolist()
        ['ana@example.com', nan]
    """
    if check_kind(kind) == "email":
        keys, valid = _email_keys(values)[0], valid_emails(values)
    else:
        keys = phone_texts(values)
        valid = valid_digit_strings(keys)
    return _series(pc.if_else(pa.array(valid, pa.bool_()), keys, pa.scalar(None, pa.large_string())), values)
