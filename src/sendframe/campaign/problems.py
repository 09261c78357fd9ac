"""The problem table preflight returns, and the text of its messages, built as column work.

:class:`Problems` collects problems rule by rule (the rows' positions and one message each) and
turns them into the frame :func:`~sendframe.campaign.preflight.preflight` returns, sorted the way it promises:
campaign-wide problems first, then by row, each row's rules in :data:`RULE_ORDER`. Messages are
made only for the rows with a problem, once per distinct value (:func:`messages`), or joined from
Arrow arrays (:func:`joined`), so a million rows cost array work, not a Python loop.

    >>> import numpy as np
    >>> found = Problems(pd.Index(["a", "b"]))
    >>> found.rows(np.array([False, True]), "phone", "invalid_recipient", ["bad"])
    >>> found.frame()[["row", "rule", "message"]].to_dict("records")
    [{'row': 'b', 'rule': 'invalid_recipient', 'message': 'bad'}]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sendframe.text.templates import column_to_arrow

__all__ = ["PROBLEM_COLUMNS", "RULE_ORDER", "Problems", "joined", "key_codes", "label_texts", "messages",
           "text_array"]

PROBLEM_COLUMNS: tuple[str, ...] = ("row", "column", "rule", "message", "severity")
RULE_ORDER: tuple[str, ...] = (
    "invalid_template", "malformed_placeholder", "whatsapp_template",
    "invalid_recipient", "landline", "duplicate_recipient", "opted_out", "missing_variable", "whatsapp_field_missing",
    "shorten_not_url", "format_not_number", "too_many_parts", "unencodable_characters",
)  # fmt: skip
_RANK = {rule: rank for rank, rule in enumerate(RULE_ORDER)}
_TEXT = pa.large_string()


@dataclass(frozen=True)
class _Found:
    positions: np.ndarray  # row positions; -1 for a campaign-wide problem
    column: str
    rule: str
    messages: pa.Array  # one per position
    severity: str


class Problems:
    """Collects problems rule by rule as column arrays; messages are built only for the rows with a problem."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self.found: list[_Found] = []

    def rows(self, mask: np.ndarray, column: str, rule: str, text: str | pa.Array | Sequence[str],
             severity: str = "error") -> None:
        """Problems of the rows where ``mask`` holds: one message ``text`` for all, or one per such row."""
        positions = np.flatnonzero(mask)
        if not len(positions):
            return
        if isinstance(text, str):
            texts = pa.repeat(pa.scalar(text, _TEXT), len(positions))
        elif isinstance(text, pa.Array):
            texts = text.cast(_TEXT)
        else:
            texts = pa.array(list(text), type=_TEXT)
        self.found.append(_Found(positions, str(column), rule, texts, severity))

    def campaign(self, column: str, rule: str, message: str, severity: str = "error") -> None:
        self.found.append(_Found(np.array([-1]), column, rule, pa.array([message], type=_TEXT), severity))

    def frame(self) -> pd.DataFrame:
        if not self.found:
            empty = {name: pd.Series([], dtype=object if name == "row" else "str") for name in PROBLEM_COLUMNS}
            return pd.DataFrame(empty)
        sizes = [len(f.positions) for f in self.found]
        positions = np.concatenate([f.positions for f in self.found])
        ranks = np.repeat(np.array([_RANK[f.rule] for f in self.found]), sizes)
        # campaign problems first, then by row, each row's rules in RULE_ORDER (ties keep their order)
        order = np.argsort((positions + 1) * len(RULE_ORDER) + ranks, kind="stable")
        which = pa.array(np.repeat(np.arange(len(sizes)), sizes)[order])

        def per_problem(values: list[str]) -> pd.Series:
            return pd.Series(pd.array(pa.array(values, type=_TEXT).take(which), dtype="str"))

        positions = positions[order]
        rows = np.full(len(order), None, dtype=object)
        inside = positions >= 0
        rows[inside] = self.index[positions[inside]].to_numpy(dtype=object)
        messages = pa.chunked_array([f.messages for f in self.found], type=_TEXT).take(pa.array(order))
        # labels as pandas infers them (text labels make a str column), object when a campaign problem has none
        return pd.DataFrame({
            "row": pd.Series(rows, dtype=object if not inside.all() else None),
            "column": per_problem([f.column for f in self.found]),
            "rule": per_problem([f.rule for f in self.found]),
            "message": pd.array(messages.combine_chunks(), dtype="str"),
            "severity": per_problem([f.severity for f in self.found]),
        })


def key_codes(values: pd.Series | np.ndarray) -> np.ndarray:
    """A code per value counting up in order of first appearance, equal for equal values (-1: missing).

        >>> key_codes(pd.Series(["b", None, "a", "b"], dtype="str")).tolist()
        [0, -1, 1, 0]
    """
    values = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(values.dtype, pd.StringDtype):  # hashed by Arrow
        codes: np.ndarray = pc.dictionary_encode(column_to_arrow(values)).indices.fill_null(-1).to_numpy(
            zero_copy_only=False)
        return codes.astype(np.int64)
    found, _ = pd.factorize(values, use_na_sentinel=True)
    return np.asarray(found, dtype=np.int64)


def text_array(series: pd.Series) -> pa.Array:
    """The values as ``astype("str")`` writes them, as one Arrow array."""
    array = pa.array(series.astype("str").array)
    return (array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array).cast(_TEXT)


def messages(values: pd.Series | pa.Array, make: Callable[[Any], str]) -> pa.Array:
    """``make(value)`` for each value (those of the rows with a problem, none missing), once per distinct value.

        >>> messages(pd.Series(["a", "b", "a"]), str.upper).to_pylist()
        ['A', 'B', 'A']
    """
    codes, distinct = pd.factorize(values.to_pandas() if isinstance(values, pa.Array) else values)
    return pa.array([make(v) for v in distinct], type=_TEXT).take(pa.array(codes))


def joined(*pieces: str | pa.Array) -> pa.Array:
    """Row by row, the pieces (arrays of one value per row, or one text for every row) joined."""
    arrays = [pa.scalar(p, _TEXT) if isinstance(p, str) else p.cast(_TEXT) for p in pieces]
    return pc.binary_join_element_wise(*arrays, pa.scalar("", _TEXT))


def label_texts(index: pd.Index, positions: np.ndarray) -> pa.Array:
    """``repr`` of the index labels at ``positions``, as the messages show a row."""
    if index.dtype.kind in "iu":  # an integer label's repr is its digits
        return pc.cast(pa.array(np.asarray(index[positions])), _TEXT)
    distinct, where = np.unique(positions, return_inverse=True)
    return pa.array([repr(label) for label in index[distinct]], type=_TEXT).take(pa.array(where.ravel()))
