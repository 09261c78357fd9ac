"""How many SMS parts a text needs, and how it is split.

A text that fits in one message uses :data:`SINGLE_LIMIT` units; a longer one is sent as
concatenated parts of :data:`PART_LIMIT` units each (the rest of each part is taken by the User
Data Header; see docs/api-notes.md for the gsm-pt arithmetic). Splitting is greedy, and a part
never ends between the escape and the character of an extension sequence, nor between the two
halves of a surrogate pair, so a text can need one more part than plain ``ceil(units / limit)``.

    >>> sms_parts("a" * 160), sms_parts("a" * 161)
    (1, 2)
    >>> text = "a" * 152 + "€" + "a" * 152  # 306 septets, but the € cannot straddle septet 153
    >>> sms_parts(text), [len(p) for p in split_parts(text)]
    (3, [152, 152, 1])
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from sendframe.text.encodings import (
    char_units,
    check_encoding,
    has_double_arrow,
    int_series_by_encoding,
    message_units,
    units_arrow,
)

SINGLE_LIMIT: dict[str, int] = {"gsm": 160, "gsm-pt": 155, "utf-16": 70}
PART_LIMIT: dict[str, int] = {"gsm": 153, "gsm-pt": 149, "utf-16": 67}


def split_parts(text: str, encoding: str = "gsm") -> list[str]:
    """Split ``text`` into the pieces sent as SMS parts (one piece when it fits a single SMS).

    >>> [len(p) for p in split_parts("a" * 200)]
    [153, 47]
    >>> split_parts("")
    ['']
    """
    check_encoding(encoding)
    if message_units(text, encoding) <= SINGLE_LIMIT[encoding]:
        return [text]
    limit = PART_LIMIT[encoding]
    pieces: list[str] = []
    start = used = 0
    for i, char in enumerate(text):
        cost = char_units(char, encoding)
        if used + cost > limit:
            pieces.append(text[start:i])
            start, used = i, 0
        used += cost
    pieces.append(text[start:])
    return pieces


def sms_parts(text: str, encoding: str = "gsm") -> int:
    """Number of SMS parts needed for ``text`` (the empty text is 1 part).

    Unencodable characters count one septet each (they are sent as ``?``).

    >>> sms_parts("Hello"), sms_parts("x" * 71, "utf-16"), sms_parts("x" * 156, "gsm-pt")
    (1, 2, 2)
    """
    check_encoding(encoding)
    units = message_units(text, encoding)
    if units <= SINGLE_LIMIT[encoding]:
        return 1
    limit = PART_LIMIT[encoding]
    parts, used = 1, 0
    for char in text:
        cost = char_units(char, encoding)
        if used + cost > limit:
            parts += 1
            used = 0
        used += cost
    return parts


def parts_from_units(units: np.ndarray, encoding: str) -> np.ndarray:
    """Plain arithmetic: 1 part up to the single limit, else ``ceil(units / part limit)``.

    Exact for texts without 2-unit characters; see :func:`sms_parts` for the general case.

    >>> parts_from_units(np.array([0, 160, 161, 306, 307]), "gsm").tolist()
    [1, 1, 2, 2, 3]
    """
    units = np.asarray(units, dtype=np.int64)
    limit = PART_LIMIT[check_encoding(encoding)]
    return np.where(units <= SINGLE_LIMIT[encoding], 1, -(-units // limit))


def exact_parts_needed(units: np.ndarray, has_pair: np.ndarray, encoding: str) -> np.ndarray:
    """Rows whose exact part count may differ from :func:`parts_from_units`.

    Greedy splitting ends a part early only when a 2-unit character does not fit, so every part
    but the last holds at least ``L - 1`` units (``L`` the part limit): the count lies between
    ``ceil(units / L)`` and ``ceil(units / (L - 1))``, and is the arithmetic one when they agree.
    Only multi-part rows holding a 2-unit character where they differ need splitting.

    >>> exact_parts_needed(np.array([306, 307, 400, 459]), np.array([True, True, True, False]), "gsm").tolist()
    [True, False, False, False]
    """
    units = np.asarray(units, dtype=np.int64)
    limit = PART_LIMIT[check_encoding(encoding)]
    at_risk = -(-units // (limit - 1)) != -(-units // limit)
    needed: np.ndarray = at_risk & np.asarray(has_pair, dtype=bool) & (units > SINGLE_LIMIT[encoding])
    return needed


def sms_parts_series(series: pd.Series, encoding: str | pd.Series = "gsm") -> pd.Series:
    """Vectorised :func:`sms_parts`: an ``Int64`` Series with the same answers (missing text -> <NA>).

    ``encoding`` is one name for every row or a Series of names aligned on ``series`` (e.g. the
    output of ``cheapest_encoding_series``). Units are counted with pyarrow; only multi-part rows
    that hold an escape sequence or a surrogate pair and where a wasted unit per part could change
    the count (:func:`exact_parts_needed`) are split exactly.

    >>> sms_parts_series(pd.Series(["hi", "a" * 161, None])).tolist()
    [1, 2, <NA>]
    """
    def parts_of(sub: pa.Array, name: str) -> tuple[np.ndarray, np.ndarray]:
        units = units_arrow(sub, name)
        unit_values = units.fill_null(0).to_numpy(zero_copy_only=False)
        parts = parts_from_units(unit_values, name)
        # Look for pairs only in the rows whose count a pair could change (usually none).
        risky = np.flatnonzero(exact_parts_needed(unit_values, np.ones(len(unit_values), dtype=bool), name))
        if len(risky):
            candidates = sub.take(risky)
            has_pair = has_double_arrow(candidates, name).fill_null(False).to_numpy(zero_copy_only=False)
            exact = risky[has_pair]
            parts[exact] = [sms_parts(t, name) for t in candidates.filter(has_pair).to_pylist()]
        return parts, units.is_null().to_numpy(zero_copy_only=False)

    return int_series_by_encoding(series, encoding, parts_of)
