"""The value filters of ``{variable|filter}``, scalar and vectorised.

Semantics (docs/api-notes.md):

- ``lower`` / ``upper``: the whole value in lower / upper case (Python's Unicode case mapping).
- ``capitalize``: the first character of the first word upper-cased; everything else unchanged.
- ``capitalizeAll``: the first character of every whitespace-separated word upper-cased.
- ``formatDotComma`` / ``formatCommaDot``: a number written with ``.`` as decimal point and an
  optional leading ``-`` gets its integer part grouped in thousands; decimals are kept as written,
  never rounded. Anything that is not such a number passes through unchanged.
- ``shorten``: replaced by a short link; it needs a link maker, so it lives in
  :mod:`sendframe.text.templates`. :func:`is_shortenable` is the rule for its value.

    >>> FILTERS["capitalizeAll"]("ana de la  fuente")
    'Ana De La  Fuente'
    >>> FILTERS["formatDotComma"]("-1234567.50")
    '-1.234.567,50'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.text._arrow import TEXT, map_unique

FILTER_NAMES: tuple[str, ...] = (
    "lower", "upper", "capitalize", "capitalizeAll", "formatDotComma", "formatCommaDot", "shorten",
)  # fmt: skip

_NUMBER = re.compile(r"(-?)([0-9]+)(\.[0-9]+)?")
_FIRST_NON_SPACE = re.compile(r"\S")
_WORD_START = re.compile(r"(?<!\S)\S")


def lower(value: str) -> str:
    """``{x|lower}``.

    >>> lower("ÁLVARO")
    'álvaro'
    """
    return value.lower()


def upper(value: str) -> str:
    """``{x|upper}``.

    >>> upper("Málaga")
    'MÁLAGA'
    """
    return value.upper()


def capitalize(value: str) -> str:
    """``{x|capitalize}``: upper-case the first character of the first word, nothing else.

    >>> capitalize("  maría JOSÉ")
    '  María JOSÉ'
    """
    match = _FIRST_NON_SPACE.search(value)
    if match is None:
        return value
    i = match.start()
    return value[:i] + value[i].upper() + value[i + 1 :]


def capitalize_all(value: str) -> str:
    """``{x|capitalizeAll}``: upper-case the first character of every whitespace-separated word.

    >>> capitalize_all("josé  de\\tla o'neil")
    "José  De\\tLa O'neil"
    """
    return _WORD_START.sub(lambda m: m.group().upper(), value)


def is_number(value: str) -> bool:
    """Whether the format filters read ``value`` as a number: digits, an optional leading ``-``
    and optional ``.`` decimals (anything else passes through ``formatDotComma`` unchanged).

    >>> is_number("-1234.50"), is_number("12"), is_number("1,5"), is_number("1e3"), is_number(".5")
    (True, True, False, False, False)
    """
    return _NUMBER.fullmatch(value) is not None


def _format_number(value: str, thousands: str, decimal: str) -> str:
    match = _NUMBER.fullmatch(value)
    if match is None:
        return value
    sign, digits, decimals = match.groups()
    head = len(digits) % 3 or 3
    groups = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    return sign + thousands.join(groups) + (decimal + decimals[1:] if decimals else "")


def format_dot_comma(value: str) -> str:
    """``{x|formatDotComma}``: dot thousands separator, comma decimal separator.

    >>> format_dot_comma("1234567.5"), format_dot_comma("12"), format_dot_comma("n/a")
    ('1.234.567,5', '12', 'n/a')
    """
    return _format_number(value, ".", ",")


def format_comma_dot(value: str) -> str:
    """``{x|formatCommaDot}``: comma thousands separator, dot decimal separator.

    >>> format_comma_dot("-1234567.25")
    '-1,234,567.25'
    """
    return _format_number(value, ",", ".")


FILTERS: dict[str, Callable[[str], str]] = {
    "lower": lower,
    "upper": upper,
    "capitalize": capitalize,
    "capitalizeAll": capitalize_all,
    "formatDotComma": format_dot_comma,
    "formatCommaDot": format_comma_dot,
}

def _capitalize_arrow(arr: pa.Array) -> pa.Array:
    """Vectorised :func:`capitalize`: the first character upper-cased by Python once per distinct first character
    (a few hundred), joined to the rest; the rows starting with whitespace (rare) go through the scalar filter."""
    first = pc.dictionary_encode(pc.utf8_slice_codeunits(arr, 0, 1))
    chars = first.dictionary.to_pylist()
    upper = pa.array([c.upper() for c in chars], type=TEXT).take(first.indices)
    result = pc.binary_join_element_wise(upper, pc.utf8_slice_codeunits(arr, 1), pa.scalar("", TEXT))
    # isspace is what ``\s`` of a Python regex matches
    spaced = pa.array([c.isspace() for c in chars], type=pa.bool_()).take(first.indices).fill_null(False)
    if pc.any(spaced).as_py():
        result = pc.replace_with_mask(result, spaced, map_unique(pc.filter(arr, spaced), capitalize))
    return result


# Arrow kernels that agree with Python's case mapping on ASCII text (not beyond: "ß".upper()).
_ASCII_KERNELS: dict[str, Callable[[pa.Array], pa.Array]] = {"lower": pc.ascii_lower, "upper": pc.ascii_upper}


def is_shortenable(value: str) -> bool:
    """Whether ``value`` can be given to ``shorten``: an ``http``/``https`` URL with a host.

    >>> is_shortenable("https://shop.example/p?id=3"), is_shortenable("shop.example")
    (True, False)
    """
    if not value or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


_ARROW_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
_NUMBER_SEPARATORS = {"formatDotComma": (".", ","), "formatCommaDot": (",", ".")}


def _format_number_arrow(arr: pa.Array, thousands: str, decimal: str) -> pa.Array:
    """Vectorised :func:`_format_number`, written straight into a new UTF-8 buffer with numpy.

    Number rows are pure ASCII, so byte positions are character positions: ``thousands`` is inserted into the
    buffer before every third byte left of each number's integer end and the decimal point becomes ``decimal``.
    Other rows are copied unchanged.
    """
    if arr.offset:
        arr = pa.concat_arrays([arr])  # start at offset 0 so the buffers line up
    is_number = pc.match_substring_regex(arr, _ARROW_NUMBER).fill_null(False).to_numpy(zero_copy_only=False)
    if not is_number.any():
        return arr
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[: n + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    starts, lengths = offsets[:-1] - offsets[0], np.diff(offsets)
    rows = np.flatnonzero(is_number)
    sign = (data[starts[rows]] == ord("-")).astype(np.int64)
    dot = pc.find_substring(arr, ".").to_numpy(zero_copy_only=False)[rows].astype(np.int64)
    int_end = np.where(dot >= 0, dot, lengths[rows])  # inside the row
    separators = np.maximum(int_end - sign - 1, 0) // 3
    # A separator goes before the bytes at int_end - 3 * k (k = separators .. 1) of the row, ascending over the
    # buffer; a row's decimal point moves right by the separators of that row and the rows before it.
    which = np.repeat(np.arange(len(rows)), separators)
    step = np.arange(len(which)) - np.repeat(np.cumsum(separators) - separators, separators)
    before = starts[rows][which] + int_end[which] - 3 * (separators[which] - step)  # ascending
    # each separator's place in the new buffer: its byte's, moved by the separators before it (np.insert would
    # sort these places again, which at 2M rows took three times as long as at 1M)
    placed = before + np.arange(len(before))
    out = np.empty(len(data) + len(placed), dtype=np.uint8)
    kept = np.ones(len(out), dtype=bool)
    kept[placed] = False
    out[kept] = data
    out[placed] = ord(thousands)
    has_dot = dot >= 0
    out[(starts[rows] + dot + np.cumsum(separators))[has_dot]] = ord(decimal)
    added = np.zeros(n, dtype=np.int64)
    added[rows] = separators
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths + added, out=new_offsets[1:])
    return pa.LargeStringArray.from_buffers(
        n, pa.py_buffer(new_offsets), pa.py_buffer(out), arr.buffers()[0], arr.null_count
    )


def apply_filter_arrow(name: str, arr: pa.Array) -> pa.Array:
    """Apply filter ``name`` (not ``shorten``) to a pyarrow text array, same answers as the scalar.

    ``lower``/``upper`` run as Arrow kernels on ASCII rows, ``capitalize`` once per distinct first character and
    number formats as Arrow regex kernels (numpy on the UTF-8 buffer); the rest maps the distinct values through
    the scalar filter (campaign columns repeat, so this is a real vectorisation).

    >>> apply_filter_arrow("upper", pa.array(["ana", None, "straße"])).to_pylist()
    ['ANA', None, 'STRASSE']
    """
    func = FILTERS[name]
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(TEXT)
    if name in _NUMBER_SEPARATORS:
        return _format_number_arrow(arr, *_NUMBER_SEPARATORS[name])
    if name == "capitalize":
        return _capitalize_arrow(arr)
    kernel = _ASCII_KERNELS.get(name)
    if kernel is None:
        return map_unique(arr, func)
    result = kernel(arr)
    non_ascii = pc.invert(pc.string_is_ascii(arr)).fill_null(False)
    if pc.any(non_ascii).as_py():
        fixed = map_unique(pc.filter(arr, non_ascii), func)
        result = pc.replace_with_mask(result.cast(TEXT), non_ascii, fixed)
    return result.cast(TEXT)
