"""Render a template over a frame and measure every text (encoding, units, parts) in one pass.

The characters of a rendered text are those of its pieces, so the cheapest encoding of a row is
the most demanding encoding among its pieces, and its units are the sum of its pieces' units.
Each placeholder column is measured once per *distinct* value (dictionary-encoded), literals once;
only multi-part rows holding an escape sequence or a surrogate pair are split exactly. Answers
are identical to ``render`` + ``cheapest_encoding`` + ``sms_parts`` per row.

    >>> df = pd.DataFrame({"name": ["ana", "joão", None]})
    >>> out = measure_frame(df, "Olá {name|capitalize}")
    >>> out["encoding"].tolist(), out["units"].tolist(), out["parts"].tolist()
    (['gsm-pt', 'gsm-pt', <NA>], [8, 10, <NA>], [1, 1, <NA>])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.text._arrow import int_series, text_series
from sendframe.text.encodings import ENCODINGS, check_encoding, foreign_arrow, has_double_arrow, units_arrow
from sendframe.text.parts import SINGLE_LIMIT, parts_from_units, sms_parts
from sendframe.text.templates import Template, join_pieces, parse, piece_arrays


def _stats(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per value: encoding rank (0 gsm, 1 gsm-pt, 2 utf-16), units and has-pair per encoding."""
    rank = np.zeros(len(values), dtype=np.int8)
    for i, name in enumerate(ENCODINGS[:2]):
        rank = np.maximum(rank, np.where(foreign_arrow(values, name).fill_null(False).to_numpy(zero_copy_only=False), i + 1, 0))
    units = np.stack([units_arrow(values, e).fill_null(0).to_numpy(zero_copy_only=False) for e in ENCODINGS])
    pairs = np.stack([has_double_arrow(values, e).fill_null(False).to_numpy(zero_copy_only=False) for e in ENCODINGS])
    return rank, units, pairs


def measure_frame(
    frame: pd.DataFrame,
    template: str | Template,
    *,
    specials: Mapping[str, str | pd.Series] | None = None,
    shorten: Callable[[str], str] | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Columns ``text``, ``encoding``, ``units``, ``parts`` per row, on ``frame.index``.

    ``encoding=None`` picks the cheapest encoding per row; a name forces it for every row. Rows
    missing a variable get <NA> everywhere. Same arguments and answers as ``render_frame``.

    >>> measure_frame(pd.DataFrame({"n": ["a" * 200]}), "{n}", encoding="utf-16")["parts"].tolist()
    [3]
    """
    parsed = template if isinstance(template, Template) else parse(template)
    if encoding is not None:
        check_encoding(encoding)
    n = len(frame)
    arrays = piece_arrays(frame, parsed, specials=specials, shorten=shorten)
    rank = np.zeros(n, dtype=np.int8)
    units = np.zeros((len(ENCODINGS), n), dtype=np.int64)
    pairs = np.zeros((len(ENCODINGS), n), dtype=bool)
    for piece in arrays:
        if isinstance(piece, pa.Scalar):
            r, u, p = _stats(pa.array([piece.as_py()], type=piece.type))
            rank, units, pairs = np.maximum(rank, r[0]), units + u[:, :1], pairs | p[:, :1]
            continue
        encoded = pc.dictionary_encode(piece)
        r, u, p = _stats(encoded.dictionary)
        codes = encoded.indices.fill_null(0).to_numpy(zero_copy_only=False)
        if len(encoded.dictionary) == 0:
            continue  # every row is null: the row is <NA> anyway
        rank = np.maximum(rank, r[codes])
        units += u[:, codes]
        pairs |= p[:, codes]
    text = join_pieces(arrays, n)
    missing = text.is_null().to_numpy(zero_copy_only=False)
    chosen = np.full(n, ENCODINGS.index(encoding), dtype=np.int8) if encoding else rank
    rows = np.arange(n)
    row_units = units[chosen, rows]
    parts = np.ones(n, dtype=np.int64)
    for i, name in enumerate(ENCODINGS):
        mine = chosen == i
        parts[mine] = parts_from_units(row_units[mine], name)
        exact = np.flatnonzero(mine & pairs[i] & (row_units > SINGLE_LIMIT[name]) & ~missing)
        if len(exact):
            parts[exact] = [sms_parts(t, name) for t in text.take(exact).to_pylist()]
    names = pc.take(pa.array(ENCODINGS, type=pa.large_string()), pa.array(chosen.astype(np.int64), mask=missing))
    return pd.DataFrame(
        {
            "text": text_series(text, frame.index),
            "encoding": text_series(names, frame.index),
            "units": int_series(row_units, missing, frame.index),
            "parts": int_series(parts, missing, frame.index),
        },
        index=frame.index,
    )
