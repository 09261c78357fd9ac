"""Render a template over a frame and measure every text (encoding, units, parts) in one pass.

The characters of a rendered text are those of its pieces, so the cheapest encoding of a row is
the most demanding encoding among its pieces, and its units are the sum of its pieces' units.
Each placeholder column is measured once per *distinct* value (dictionary-encoded, unless its first
rows are all distinct), the literals once, and each row's text is joined in one pass; only multi-part
rows holding an escape sequence or a surrogate pair, whose count could change by a wasted unit per
part, are split exactly. Answers are identical to ``render`` + ``cheapest_encoding`` + ``sms_parts``
per row.

    >>> df = pd.DataFrame({"name": ["ana", "joão", None]})
    >>> out = measure_frame(df, "Olá {name|capitalize}")
    >>> out["encoding"].tolist(), out["units"].tolist(), out["parts"].tolist()
    (['gsm-pt', 'gsm-pt', <NA>], [8, 10, <NA>], [1, 1, <NA>])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.text._arrow import int_series, text_series
from sendframe.text.encodings import ENCODINGS, check_encoding, unencodable_characters, unencodable_codes
from sendframe.text.parts import exact_parts_needed, parts_from_units, sms_parts
from sendframe.text.scan import DOUBLE_FLAG, FOREIGN_FLAG, TextStats, encoding_rank, scan_text
from sendframe.text.templates import CodedPiece, Template, join_pieces, parse, piece_codes


def _unencodable(pieces: list[str | CodedPiece], stats: dict[int, TextStats], missing: np.ndarray,
                 encoding: str) -> pd.Categorical:
    """Per row, the characters ``encoding`` cannot carry (unique, in order of appearance, joined)
    as a categorical: worked out once per literal, once per distinct value of each placeholder, then
    once per distinct combination of the pieces' answers."""
    flag = FOREIGN_FLAG[ENCODINGS.index(encoding)]
    rows = np.zeros(len(missing), dtype=np.int64)
    table = [""]
    for piece in pieces:
        if isinstance(piece, str):
            lost = "".join(unencodable_characters(piece, encoding))
            table = [_unique_chars(known + lost) for known in table] if lost else table
            continue
        measured = stats.get(id(piece))
        flagged = np.flatnonzero(measured.flags & flag) if measured is not None else np.zeros(0, dtype=np.intp)
        if not len(flagged):
            continue
        ids, distinct = unencodable_codes(piece.values.take(flagged), encoding)
        value_ids = np.zeros(len(piece.values), dtype=np.int64)  # 0: nothing unencodable
        value_ids[flagged] = ids + 1
        width = len(distinct) + 1
        keys, combos = pd.factorize(rows * width + value_ids[np.where(piece.codes < 0, 0, piece.codes)])
        mine = [""] + distinct
        table = [_unique_chars(table[k // width] + mine[k % width]) for k in combos]
        rows = keys
    remap, categories = pd.factorize(np.asarray(table, dtype=object))
    return pd.Categorical.from_codes(np.where(missing, -1, remap[rows]), categories=pd.Index(categories, dtype=object))


@dataclass(frozen=True)
class RowMeasures:
    """Per row: its encoding (a position in ``ENCODINGS``), its message units in it, its parts, and whether it
    misses a variable (then the other three mean nothing)."""

    chosen: np.ndarray
    units: np.ndarray
    parts: np.ndarray
    missing: np.ndarray


def piece_rows(piece: CodedPiece, scans: dict[int, TextStats]) -> TextStats:
    """A placeholder piece's measurement per row: its values scanned once per distinct value (kept in ``scans`` by
    the piece's ``id``), then taken per row; ``missing`` where the row has no value (its numbers mean nothing).

    >>> frame = pd.DataFrame({"name": ["ana", "joão", "ana"]})
    >>> piece_rows(piece_codes(frame, parse("{name}"))[0], {}).units[0].tolist()  # in gsm
    [3, 4, 3]
    """
    gone = piece.codes < 0
    if not len(piece.values):  # no row has a value
        return TextStats(np.zeros((len(ENCODINGS), len(gone)), dtype=np.int64), np.zeros(len(gone), np.uint8), gone)
    if id(piece) not in scans:
        scans[id(piece)] = scan_text(piece.values)
    codes = np.where(gone, 0, piece.codes)
    return TextStats(scans[id(piece)].units[:, codes], scans[id(piece)].flags[codes], gone)


def measure_pieces(pieces: list[str | CodedPiece], n: int, encoding: str | None = None,
                   rows_of: Callable[[CodedPiece], TextStats] | None = None) -> RowMeasures:
    """:func:`measure_frame`'s numbers for ``n`` rows of :func:`~sendframe.text.templates.piece_codes` pieces.

    The literals are measured at once, each placeholder piece by ``rows_of`` (default :func:`piece_rows`): a
    caller measuring template after template over the same pieces (the Composer's counter) keeps their rows.

    >>> frame = pd.DataFrame({"name": ["ana", "joão", None]})
    >>> measured = measure_pieces(piece_codes(frame, parse("Olá {name}")), 3)
    >>> measured.units.tolist()[:2], measured.parts.tolist()[:2], measured.missing.tolist()
    ([8, 10], [1, 1], [False, False, True])
    """
    scans: dict[int, TextStats] = {}
    rows_of = rows_of or (lambda piece: piece_rows(piece, scans))
    literal = scan_text(pa.array(["".join(p for p in pieces if isinstance(p, str))], type=pa.large_string()))
    units = np.repeat(literal.units, n, axis=1)
    flags = np.full(n, literal.flags[0], dtype=np.uint8)
    missing = np.zeros(n, dtype=bool)
    for piece in pieces:
        if not isinstance(piece, str):
            rows = rows_of(piece)
            units += rows.units
            flags |= rows.flags
            missing |= rows.missing
    chosen = np.full(n, ENCODINGS.index(encoding), dtype=np.int8) if encoding else encoding_rank(flags)
    row_units = np.take_along_axis(units, chosen[None].astype(np.intp), axis=0)[0]
    parts = np.ones(n, dtype=np.int64)
    for i, name in enumerate(ENCODINGS):
        mine = chosen == i
        if not mine.any():
            continue
        parts[mine] = parts_from_units(row_units[mine], name)
        has_pair = (flags & DOUBLE_FLAG[i]) != 0
        exact = np.flatnonzero(mine & ~missing & exact_parts_needed(row_units, has_pair, name))
        if len(exact):
            parts[exact] = [sms_parts(t, name) for t in _row_texts(pieces, exact)]
    return RowMeasures(chosen, row_units, parts, missing)


def _row_texts(pieces: list[str | CodedPiece], rows: np.ndarray) -> list[str]:
    # the texts of these rows (none misses a variable), each piece's value taken per row
    picked: list[str | CodedPiece] = [
        p if isinstance(p, str) else CodedPiece(p.values.take(p.codes[rows]), np.arange(len(rows))) for p in pieces]
    texts: list[str] = join_pieces(picked, len(rows)).to_pylist()
    return texts


def _unique_chars(text: str) -> str:
    return "".join(dict.fromkeys(text))


def measure_frame(
    frame: pd.DataFrame,
    template: str | Template,
    *,
    specials: Mapping[str, str | pd.Series] | None = None,
    shorten: Callable[[str], str] | None = None,
    encoding: str | None = None,
    unencodable: bool = False,
) -> pd.DataFrame:
    """Columns ``text``, ``encoding``, ``units``, ``parts`` per row, on ``frame.index``.

    ``encoding=None`` picks the cheapest encoding per row; a name forces it for every row. Rows
    missing a variable get <NA> everywhere. Same arguments and answers as ``render_frame``.
    ``unencodable=True`` adds categorical columns ``unencodable_gsm`` and ``unencodable_gsm_pt``:
    the characters gsm / gsm-pt cannot carry, as :func:`~sendframe.text.encodings.unencodable_series`
    gives them.

    >>> measure_frame(pd.DataFrame({"n": ["a" * 200]}), "{n}", encoding="utf-16")["parts"].tolist()
    [3]
    """
    parsed = template if isinstance(template, Template) else parse(template)
    if encoding is not None:
        check_encoding(encoding)
    n = len(frame)
    pieces = piece_codes(frame, parsed, specials=specials, shorten=shorten)
    scans: dict[int, TextStats] = {}
    measured = measure_pieces(pieces, n, encoding, lambda piece: piece_rows(piece, scans))
    missing = measured.missing
    chosen = pa.array(measured.chosen.astype(np.int64), mask=missing)
    columns = {
        "text": text_series(join_pieces(pieces, n), frame.index),
        "encoding": text_series(pc.take(pa.array(ENCODINGS, type=pa.large_string()), chosen), frame.index),
        "units": int_series(measured.units, missing, frame.index),
        "parts": int_series(measured.parts, missing, frame.index),
    }
    if unencodable:
        for name in ("gsm", "gsm-pt"):
            found = _unencodable(pieces, scans, missing, name)
            columns["unencodable_" + name.replace("-", "_")] = pd.Series(found, index=frame.index)
    return pd.DataFrame(columns, index=frame.index)
