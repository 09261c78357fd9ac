"""Render a template over a frame and measure every text (encoding, units, parts) in one pass.

The characters of a rendered text are those of its pieces, so the cheapest encoding of a row is
the most demanding encoding among its pieces, and its units are the sum of its pieces' units.
Each placeholder column is measured once per *distinct* value (dictionary-encoded), literals once;
only multi-part rows holding an escape sequence or a surrogate pair, whose count could
change by a wasted unit per part, are split exactly. Answers
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
from sendframe.text.encodings import ENCODINGS, check_encoding
from sendframe.text.parts import exact_parts_needed, parts_from_units, sms_parts
from sendframe.text.scan import DOUBLE_FLAG, encoding_rank, scan_text
from sendframe.text.templates import Template, join_codes, merge_pieces, parse, piece_codes


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
    pieces = merge_pieces(piece_codes(frame, parsed, specials=specials, shorten=shorten), n)
    units = np.zeros((len(ENCODINGS), n), dtype=np.int64)
    flags = np.zeros(n, dtype=np.uint8)
    missing = np.zeros(n, dtype=bool)
    for piece in pieces:
        gone = piece.codes < 0
        missing |= gone
        if not len(piece.values):
            continue  # no row has a value: every row is <NA> anyway
        stats = scan_text(piece.values)
        codes = np.where(gone, 0, piece.codes)
        units += stats.units[:, codes]
        flags |= stats.flags[codes]
    text = join_codes(pieces)
    chosen = np.full(n, ENCODINGS.index(encoding), dtype=np.int8) if encoding else encoding_rank(flags)
    row_units = np.choose(chosen, units)
    parts = np.ones(n, dtype=np.int64)
    for i, name in enumerate(ENCODINGS):
        mine = chosen == i
        if not mine.any():
            continue
        parts[mine] = parts_from_units(row_units[mine], name)
        has_pair = (flags & DOUBLE_FLAG[i]) != 0
        exact = np.flatnonzero(mine & ~missing & exact_parts_needed(row_units, has_pair, name))
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
