"""The ``trans = 1`` translation table of the spec, applied before encoding.

Exactly the spec's table (``ç`` becomes ``Ç``, which GSM 03.38 carries; ``º`` and ``ª`` are
removed); every other character is left as it is.

    >>> translate("Ação nº 3, ª")
    'AÇao n 3, '
"""

from __future__ import annotations

import pandas as pd
import pyarrow.compute as pc

from sendframe.text._arrow import TEXT, regex_class, series_to_arrow, text_series

# Source -> target; "" means the character is removed. Order as in the spec.
TRANSLATION_TABLE: dict[str, str] = {
    "á": "a", "í": "i", "ó": "o", "ú": "u", "ç": "Ç", "Á": "A", "Í": "I", "Ó": "O", "Ú": "U",
    "À": "A", "È": "E", "Ì": "I", "Ò": "O", "Ù": "U", "º": "", "ª": "", "Õ": "O", "õ": "o",
    "â": "a", "ê": "e", "î": "i", "ô": "o", "û": "u", "Â": "A", "Ê": "E", "Î": "I", "Ô": "O",
    "Û": "U", "ã": "a", "Ã": "A",
}  # fmt: skip

_TABLE = str.maketrans({source: target or None for source, target in TRANSLATION_TABLE.items()})
_ARROW_SOURCES = regex_class("".join(TRANSLATION_TABLE))


def translate(text: str) -> str:
    """Apply the trans=1 table to ``text``.

    >>> translate("Olá, João")
    'Ola, Joao'
    """
    return text.translate(_TABLE)


def translate_series(series: pd.Series) -> pd.Series:
    """Vectorised :func:`translate` (missing text stays <NA>); only rows that need it are touched.

    >>> translate_series(pd.Series(["Olá", "Hi"])).tolist()
    ['Ola', 'Hi']
    """
    arr = series_to_arrow(series)
    affected = pc.match_substring_regex(arr, _ARROW_SOURCES).fill_null(False)
    if pc.any(affected).as_py():
        changed = pc.filter(arr, affected)
        for source, target in TRANSLATION_TABLE.items():
            changed = pc.replace_substring(changed, source, target)
        arr = pc.replace_with_mask(arr, affected, changed.cast(TEXT))
    return text_series(arr, series.index, series.name)

