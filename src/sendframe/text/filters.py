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


_ARROW_NUMBER = r"^(?P<sign>-?)(?P<digits>[0-9]+)(?P<decimals>(?:\.[0-9]+)?)$"
_NUMBER_SEPARATORS = {"formatDotComma": (".", ","), "formatCommaDot": (",", ".")}


def _format_number_arrow(arr: pa.Array, thousands: str, decimal: str) -> pa.Array:
    """Vectorised :func:`_format_number`: group the integer digits via the reversed string."""
    fields = pc.extract_regex(arr, _ARROW_NUMBER)  # null where the value is not a number
    reversed_digits = pc.utf8_reverse(pc.struct_field(fields, "digits"))
    grouped = pc.replace_substring_regex(reversed_digits, "([0-9]{3})", "\\1" + thousands)
    digits = pc.utf8_reverse(pc.utf8_rtrim(grouped, characters=thousands))
    decimals = pc.replace_substring(pc.struct_field(fields, "decimals"), ".", decimal)
    formatted = pc.binary_join_element_wise(pc.struct_field(fields, "sign"), digits, decimals, pa.scalar("", TEXT))
    return pc.coalesce(formatted.cast(TEXT), arr.cast(TEXT))


def apply_filter_arrow(name: str, arr: pa.Array) -> pa.Array:
    """Apply filter ``name`` (not ``shorten``) to a pyarrow text array, same answers as the scalar.

    ``lower``/``upper`` run as Arrow kernels on ASCII rows and number formats as Arrow regex
    kernels; the rest maps the distinct values through the scalar filter (campaign columns
    repeat, so this is a real vectorisation).

    >>> apply_filter_arrow("upper", pa.array(["ana", None, "straße"])).to_pylist()
    ['ANA', None, 'STRASSE']
    """
    func = FILTERS[name]
    if name in _NUMBER_SEPARATORS:
        return _format_number_arrow(arr, *_NUMBER_SEPARATORS[name])
    kernel = _ASCII_KERNELS.get(name)
    if kernel is None:
        return map_unique(arr, func)
    result = kernel(arr)
    non_ascii = pc.invert(pc.string_is_ascii(arr)).fill_null(False)
    if pc.any(non_ascii).as_py():
        fixed = map_unique(pc.filter(arr, non_ascii), func)
        result = pc.replace_with_mask(result.cast(TEXT), non_ascii, fixed)
    return result.cast(TEXT)
