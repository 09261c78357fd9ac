"""SMS encodings: which characters each one carries and what they cost.

Three encodings, as in the spec's ``encoding`` parameter:

- ``gsm``: the GSM 03.38 default alphabet (3GPP TS 23.038 6.2.1) plus its default extension
  table; an extension character is sent as ESC + code, so it costs 2 septets.
- ``gsm-pt``: the same default alphabet plus the Portuguese National Language *Single Shift*
  table (3GPP TS 23.038 A.2.3) in place of the default extension table; a shift character
  costs 2 septets (ESC + code).
- ``utf-16``: every character, counted in UTF-16 code units (a character outside the Basic
  Multilingual Plane, such as most emoji, is a surrogate pair: 2 units).

A character the chosen encoding cannot carry is sent as ``?`` (one septet), as operators do
(docs/api-notes.md). Scalar functions take a ``str``; the ``*_series`` functions take a pandas
Series of text and are vectorised with pyarrow compute.

    >>> message_units("Price: 5€", "gsm")
    10
    >>> cheapest_encoding("Olá, São Paulo")
    'gsm-pt'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.errors import InputError
from sendframe.text._arrow import int_series, regex_class, series_to_arrow, text_series

ENCODINGS: tuple[str, ...] = ("gsm", "gsm-pt", "utf-16")

# GSM 03.38 default alphabet, code 0x00..0x7F in order (3GPP TS 23.038 6.2.1). Code 0x1B is the
# escape to the extension / single shift table, not a character: it is written here as U+FFFF
# and left out of the character set below.
GSM_BASIC_TABLE = (
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\uffffÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)

# GSM 03.38 default alphabet extension table (3GPP TS 23.038 6.2.1.1): code -> character.
GSM_EXTENSION_TABLE: dict[int, str] = {
    0x0A: "\f", 0x14: "^", 0x28: "{", 0x29: "}", 0x2F: "\\",
    0x3C: "[", 0x3D: "~", 0x3E: "]", 0x40: "|", 0x65: "€",
}  # fmt: skip

# Portuguese National Language Single Shift table (3GPP TS 23.038 A.2.3): code -> character.
# Checked against Android's com.android.internal.telephony.GsmAlphabet, sLanguageShiftTables[3]
# (the Portuguese entry; AOSP frameworks/opt/telephony, GsmAlphabet.java).
GSM_PT_SHIFT_TABLE: dict[int, str] = {
    0x05: "ê", 0x09: "ç", 0x0A: "\f", 0x0B: "Ô", 0x0C: "ô", 0x0E: "Á", 0x0F: "á",
    0x12: "Φ", 0x13: "Γ", 0x14: "^", 0x15: "Ω", 0x16: "Π", 0x17: "Ψ", 0x18: "Σ", 0x19: "Θ",
    0x1F: "Ê", 0x28: "{", 0x29: "}", 0x2F: "\\", 0x3C: "[", 0x3D: "~", 0x3E: "]",
    0x40: "|", 0x41: "À", 0x49: "Í", 0x4F: "Ó", 0x55: "Ú", 0x5B: "Ã", 0x5C: "Õ",
    0x61: "Â", 0x65: "€", 0x69: "í", 0x6F: "ó", 0x75: "ú", 0x7B: "ã", 0x7C: "õ", 0x7F: "â",
}  # fmt: skip

BASIC_CHARS: frozenset[str] = frozenset(GSM_BASIC_TABLE) - {"\uffff"}
# Characters that cost two septets: those of the shift table not already in the basic table.
DOUBLE_CHARS: dict[str, frozenset[str]] = {
    "gsm": frozenset(GSM_EXTENSION_TABLE.values()) - BASIC_CHARS,
    "gsm-pt": frozenset(GSM_PT_SHIFT_TABLE.values()) - BASIC_CHARS,
}
CHARSETS: dict[str, frozenset[str]] = {name: BASIC_CHARS | extra for name, extra in DOUBLE_CHARS.items()}

_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")
_ARROW_ASTRAL = r"[\x{10000}-\x{10FFFF}]"
_ARROW_DOUBLE = {name: regex_class("".join(chars)) for name, chars in DOUBLE_CHARS.items()}
_ARROW_FOREIGN = {name: regex_class("".join(chars), negate=True) for name, chars in CHARSETS.items()}


def check_encoding(encoding: object) -> str:
    """Return ``encoding`` if it is one of :data:`ENCODINGS`, else raise ``InputError`` listing them.

    >>> check_encoding("gsm-pt")
    'gsm-pt'
    """
    if encoding not in ENCODINGS:
        raise InputError(f"Unknown encoding {encoding!r}: use one of {', '.join(ENCODINGS)}.")
    return encoding


def char_units(char: str, encoding: str) -> int:
    """Units one character costs: 2 for an escape sequence or a surrogate pair, else 1.

    >>> char_units("€", "gsm"), char_units("€", "utf-16"), char_units("😀", "utf-16")
    (2, 1, 2)
    """
    if encoding == "utf-16":
        return 2 if ord(char) > 0xFFFF else 1
    return 2 if char in DOUBLE_CHARS[check_encoding(encoding)] else 1


def message_units(text: str, encoding: str = "gsm") -> int:
    """Septets (gsm, gsm-pt) or UTF-16 code units (utf-16) needed for ``text``.

    An unencodable character counts 1 (it is sent as ``?``).

    >>> message_units("{hi}", "gsm")
    6
    >>> message_units("ok 👍", "utf-16")
    5
    """
    check_encoding(encoding)
    if encoding == "utf-16":
        return len(text) + len(_ASTRAL_RE.findall(text))
    double = DOUBLE_CHARS[encoding]
    if double.isdisjoint(text):  # the common case, checked in C
        return len(text)
    return len(text) + sum(1 for c in text if c in double)


def unencodable_characters(text: str, encoding: str = "gsm") -> list[str]:
    """Characters of ``text`` the encoding cannot carry: unique, in order of appearance.

    >>> unencodable_characters("Olá Ñandú 😀", "gsm")
    ['á', 'ú', '😀']
    """
    check_encoding(encoding)
    if encoding == "utf-16":
        return []
    charset = CHARSETS[encoding]
    return list(dict.fromkeys(c for c in text if c not in charset))


def cheapest_encoding(text: str) -> str:
    """The first of gsm, gsm-pt, utf-16 that carries every character of ``text``.

    >>> cheapest_encoding("Hello"), cheapest_encoding("Olá"), cheapest_encoding("Привет")
    ('gsm', 'gsm-pt', 'utf-16')
    """
    if CHARSETS["gsm"].issuperset(text):
        return "gsm"
    if CHARSETS["gsm-pt"].issuperset(text):
        return "gsm-pt"
    return "utf-16"


def to_deliverable(text: str, encoding: str = "gsm") -> str:
    """``text`` as delivered: every character the encoding cannot carry becomes ``?``.

    >>> to_deliverable("Olá 😀", "gsm")
    'Ol? ?'
    """
    check_encoding(encoding)
    if encoding == "utf-16":
        return text
    charset = CHARSETS[encoding]
    if charset.issuperset(text):  # the common case, checked in C
        return text
    return "".join(c if c in charset else "?" for c in text)


# --- vectorised versions -------------------------------------------------------------------


def _encoding_groups(encoding: str | pd.Series, index: pd.Index) -> list[tuple[str, np.ndarray | None]]:
    """Split rows by encoding: ``[(encoding, positions or None for all rows), ...]``."""
    if not isinstance(encoding, pd.Series):
        return [(check_encoding(encoding), None)]
    if not encoding.index.equals(index):
        encoding = encoding.reindex(index)
    codes, uniques = pd.factorize(encoding, use_na_sentinel=True)  # rows without an encoding get <NA>
    groups: list[tuple[str, np.ndarray | None]] = []
    for k, name in enumerate(uniques):
        positions = np.flatnonzero(codes == k)
        if name not in ENCODINGS:
            raise InputError(
                f"Unknown encoding {name!r} in row {index[positions[0]]!r}: use one of {', '.join(ENCODINGS)}."
            )
        if len(positions) == len(codes):
            return [(name, None)]
        groups.append((name, positions))
    return groups


def units_arrow(arr: pa.Array, encoding: str) -> pa.Array:
    """Message units per value of a pyarrow text array (null stays null)."""
    length = pc.utf8_length(arr)
    pattern = _ARROW_ASTRAL if encoding == "utf-16" else _ARROW_DOUBLE[encoding]
    return pc.add(length, pc.count_substring_regex(arr, pattern))


def has_double_arrow(arr: pa.Array, encoding: str) -> pa.Array:
    """Whether each value holds a 2-unit character (escape sequence or surrogate pair)."""
    pattern = _ARROW_ASTRAL if encoding == "utf-16" else _ARROW_DOUBLE[encoding]
    return pc.match_substring_regex(arr, pattern)


def foreign_arrow(arr: pa.Array, encoding: str) -> pa.Array:
    """Whether each value holds a character the encoding cannot carry (always false for utf-16)."""
    if encoding == "utf-16":
        return pc.and_(pc.is_valid(arr), pa.scalar(False))
    return pc.match_substring_regex(arr, _ARROW_FOREIGN[encoding])


def int_series_by_encoding(series: pd.Series, encoding: str | pd.Series,
                           compute: Callable[[pa.Array, str], tuple[np.ndarray, np.ndarray]]) -> pd.Series:
    """An ``Int64`` Series from ``compute(texts, encoding_name) -> (values, missing)``, run once per encoding
    on that encoding's rows (``encoding`` is one name or a Series of names aligned on ``series``).

    >>> def lengths(arr, name):
    ...     return pc.utf8_length(arr).fill_null(0).to_numpy(), arr.is_null().to_numpy(zero_copy_only=False)
    >>> int_series_by_encoding(pd.Series(["ab", None]), "gsm", lengths).tolist()
    [2, <NA>]
    """
    arr = series_to_arrow(series)
    values = np.zeros(len(arr), dtype=np.int64)
    missing = np.ones(len(arr), dtype=bool)
    for name, positions in _encoding_groups(encoding, series.index):
        sub = arr if positions is None else arr.take(positions)
        where = slice(None) if positions is None else positions
        values[where], missing[where] = compute(sub, name)
    return int_series(values, missing, series.index, series.name)


def message_units_series(series: pd.Series, encoding: str | pd.Series = "gsm") -> pd.Series:
    """Vectorised :func:`message_units`: an ``Int64`` Series (missing text -> <NA>).

    ``encoding`` is one name for every row or a Series of names aligned on ``series``.

    >>> message_units_series(pd.Series(["a€", "b"])).tolist()
    [3, 1]
    """
    def units(sub: pa.Array, name: str) -> tuple[np.ndarray, np.ndarray]:
        counted = units_arrow(sub, name)
        return counted.fill_null(0).to_numpy(zero_copy_only=False), counted.is_null().to_numpy(zero_copy_only=False)

    return int_series_by_encoding(series, encoding, units)


def cheapest_encoding_series(series: pd.Series) -> pd.Series:
    """Vectorised :func:`cheapest_encoding`: a ``string`` Series (missing text -> <NA>).

    >>> cheapest_encoding_series(pd.Series(["Hi", "Olá", "Привет"])).tolist()
    ['gsm', 'gsm-pt', 'utf-16']
    """
    arr = series_to_arrow(series)
    not_gsm = foreign_arrow(arr, "gsm")
    not_pt = foreign_arrow(arr, "gsm-pt")
    result = pc.if_else(not_gsm, pc.if_else(not_pt, pa.scalar("utf-16"), pa.scalar("gsm-pt")), pa.scalar("gsm"))
    return text_series(result, series.index, series.name)


@functools.cache
def _carried_code_points(encoding: str) -> np.ndarray:
    """A table over every code point: True where ``encoding`` carries the character."""
    table = np.zeros(0x110000, dtype=bool)
    table[[ord(c) for c in CHARSETS[encoding]]] = True
    return table


def unencodable_per_value(values: pa.Array | pa.ChunkedArray, encoding: str) -> pa.Array:
    """:func:`unencodable_characters` of every value of a text array, joined (``""`` for none and for null), as a
    text array: array work on the values' code points (one decode per block of values), no loop per value.

        >>> unencodable_per_value(pa.array(["añá€→á", "ok", None, "→"]), "gsm").to_pylist()
        ['á→', '', '', '→']
    """
    check_encoding(encoding)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if encoding == "utf-16":
        return pa.array([""], type=pa.large_string()).take(np.zeros(len(values), dtype=np.int64))
    blocks = [_unencodable_block(values.slice(start, _VALUES_PER_BLOCK), encoding)  # blocks bound the memory
              for start in range(0, len(values), _VALUES_PER_BLOCK)]
    return pa.concat_arrays(blocks) if blocks else pa.array([], type=pa.large_string())


def unencodable_codes(values: pa.Array, encoding: str) -> tuple[np.ndarray, list[str]]:
    """:func:`unencodable_per_value` factorized: each value's index into the distinct answers (in order of first
    appearance), and those answers.

        >>> codes, distinct = unencodable_codes(pa.array(["→á", "á", "ñ→á"]), "gsm")
        >>> codes.tolist(), distinct
        ([0, 1, 0], ['→á', 'á'])
    """
    encoded = pc.dictionary_encode(unencodable_per_value(values, encoding))
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()


_VALUES_PER_BLOCK = 65_536
_UTF8_STEPS = np.array([0x80, 0x800, 0x10000], dtype=np.uint32)


def _unencodable_block(values: pa.Array, encoding: str) -> pa.Array:
    values = pa.concat_arrays([values.cast(pa.large_string())])  # starts at offset 0, buffers line up
    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[: n + 1]
    data = values.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]] if values.buffers()[2] is not None else b""
    points = np.frombuffer(data.decode("utf-8").encode("utf-32-le"), dtype=np.uint32)
    ends = np.cumsum(pc.utf8_length(values).fill_null(0).to_numpy(zero_copy_only=False))  # code points, per value
    foreign = np.flatnonzero(~_carried_code_points(encoding)[points])
    rows = np.searchsorted(ends, foreign, side="right")
    # the first appearance of each (value, character), kept in the order of the text
    _, first = np.unique(rows * 0x110000 + points[foreign], return_index=True)
    kept = np.sort(first)
    found = points[foreign[kept]]
    text = found.tobytes().decode("utf-32-le").encode("utf-8")
    sizes = 1 + np.searchsorted(_UTF8_STEPS, found, side="right")  # UTF-8 bytes of each character
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[kept], weights=sizes, minlength=n).astype(np.int64), out=new_offsets[1:])
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(new_offsets), pa.py_buffer(text))


def unencodable_series(series: pd.Series, encoding: str = "gsm") -> pd.Series:
    """Vectorised :func:`unencodable_characters`, one joined string per row ("" when none).

    Each row holds the unencodable characters, unique, in order of appearance, joined without a
    separator (``"áú"``); ``list(value)`` gives back the list. Missing text gives <NA>.

    >>> unencodable_series(pd.Series(["Olá Ñandú", "ok"])).tolist()
    ['áú', '']
    """
    check_encoding(encoding)
    arr = series_to_arrow(series)
    flagged = foreign_arrow(arr, encoding).fill_null(False).to_numpy(zero_copy_only=False)
    result = pc.if_else(pc.is_null(arr), pa.scalar(None, pa.large_string()), pa.scalar(""))
    if flagged.any():
        result = pc.replace_with_mask(result, pa.array(flagged), unencodable_per_value(arr.filter(flagged), encoding))
    return text_series(result, series.index, series.name)


def to_deliverable_series(series: pd.Series, encoding: str = "gsm") -> pd.Series:
    """Vectorised :func:`to_deliverable`: unencodable characters replaced by ``?``.

    >>> to_deliverable_series(pd.Series(["Olá"])).tolist()
    ['Ol?']
    """
    check_encoding(encoding)
    arr = series_to_arrow(series)
    if encoding != "utf-16":
        arr = pc.replace_substring_regex(arr, _ARROW_FOREIGN[encoding], "?")
    return text_series(arr, series.index, series.name)
