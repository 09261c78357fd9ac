"""The problem table preflight returns: its rules as data, and the frame built as column work.

:data:`RULES` holds each rule's severity and message (a ``str.format`` template over the fields the
rule's check gives), in the order a row's problems are listed. :class:`Problems` collects the rows
each check finds and turns them into the frame :func:`~sendframe.campaign.preflight.preflight`
returns: campaign-wide problems first, then by row, each row's rules in :data:`RULES` order.
Messages are made only for the rows with a problem, by :func:`filled`: Arrow joins the per-row
values, and a value shown as ``!r`` is written once per distinct value, so a million rows cost
array work, not a Python loop.

    >>> import numpy as np
    >>> found = Problems(pd.Index(["a", "b"]))
    >>> found.add("opted_out", "phone", np.array([False, True]), value=pd.Series(["34600123456"]))
    >>> found.frame()[["row", "rule", "severity"]].to_dict("records")
    [{'row': 'b', 'rule': 'opted_out', 'severity': 'error'}]
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["PROBLEM_COLUMNS", "RULES", "Problems", "Rule", "filled"]

PROBLEM_COLUMNS: tuple[str, ...] = ("row", "column", "rule", "message", "severity")


class Rule(NamedTuple):
    severity: str
    message: str


RULES: dict[str, Rule] = {
    "invalid_template": Rule("error", "{error} The service would reject the request (100)."),
    "malformed_placeholder": Rule("error", (
        "{written} is not a variable (a name holds letters, digits, _ . - and no spaces; a filter follows one |), so "
        "it would be sent as written. Rename the column, e.g. contacts.rename(columns={{{name!r}: {snake!r}}}) or "
        "read them with read_contacts(..., names='snake'), and write {{{snake}}}.")),
    "whatsapp_template": Rule("error", (
        "WhatsApp template {template!r} is not known (known: {known}); the service would answer 140.")),
    "invalid_recipient": Rule("error", (
        "{column}: {value!r} is not a valid {kind}{hint}; the service would reject this row (102).")),
    "landline": Rule("error", (
        "{column}: {value} is a {line} number, which cannot receive {what}; a send leaves it out (skipped_landline) "
        "unless keep='landline'.")),
    "duplicate_recipient": Rule("warning", (
        "{column}: {value} already appears in row {first!r}; it would receive the message twice.")),
    "opted_out": Rule("error", "{column}: {value} is on the suppression list (opted out); do not send to it."),
    "missing_variable": Rule("error", "{{{column}}} has no value in this row; the service would not send it (107)."),
    "whatsapp_field_missing": Rule("error", (
        "{wire} column {column!r} has no value in this row; the service would reject it (141).")),
    "shorten_not_url": Rule("error", (
        "{column}: {value!r} is not an http(s) URL, so {{{column}|shorten}} cannot shorten it; the service would "
        "reject this row (100).")),
    "format_not_number": Rule("warning", (
        "{column}: {value!r} is not a number (digits with an optional - and . decimals), so {{{column}|{filter}}} "
        "leaves it unchanged.")),
    "too_many_parts": Rule("error", (
        "the text needs {needed} parts in {encoding} but parts={parts}; the service would answer 105 for this row.")),
    "unencodable_characters": Rule("warning", (
        "{encoding} cannot carry {characters}: sent as '?'. Use encoding='utf-16' or trans=1.")),
}
"""Each rule's severity and message template, in the order a row's problems are listed."""
_RANK = {rule: rank for rank, rule in enumerate(RULES)}
_TEXT = pa.large_string()
_FORMAT = string.Formatter()
_PER_ROW = (pd.Series, pd.Index, np.ndarray, pa.Array)


@dataclass(frozen=True)
class _Found:
    positions: np.ndarray  # row positions; -1 for a campaign-wide problem
    column: str
    rule: str
    messages: pa.Array  # one per position


class Problems:
    """Collects problems rule by rule as column arrays; messages are built only for the rows with a problem."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self.found: list[_Found] = []

    def add(self, rule: str, column: str, rows: np.ndarray | None = None, message: str | None = None,
            **fields: Any) -> None:
        """Problems of the rows where ``rows`` holds (None: one campaign-wide problem), each with the rule's message
        (or ``message``) filled from ``column`` and ``fields`` (one value for all, or one per such row)."""
        positions = np.array([-1]) if rows is None else np.flatnonzero(rows)
        if len(positions):
            texts = filled(message or RULES[rule].message, len(positions), column=column, **fields)
            self.found.append(_Found(positions, str(column), rule, texts))

    def frame(self) -> pd.DataFrame:
        if not self.found:
            empty = {name: pd.Series([], dtype=object if name == "row" else "str") for name in PROBLEM_COLUMNS}
            return pd.DataFrame(empty)
        sizes = [len(f.positions) for f in self.found]
        positions = np.concatenate([f.positions for f in self.found])
        ranks = np.repeat(np.array([_RANK[f.rule] for f in self.found]), sizes)
        # campaign problems first, then by row, each row's rules in RULES order (ties keep their order)
        order = np.argsort((positions + 1) * len(RULES) + ranks, kind="stable")
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
            "severity": per_problem([RULES[f.rule].severity for f in self.found]),
        })


def filled(template: str, count: int, /, **fields: Any) -> pa.Array:
    """``template.format(**fields)`` for each of ``count`` rows: a field is one value for all rows, or one per row
    (a Series, Index or array), written as ``astype("str")`` writes it, or once per distinct value when the
    template converts it (``{value!r}``).

        >>> filled("{value!r} in row {row}", 2, value=pd.Series(["a", "b"]), row=np.array([1, 2])).to_pylist()
        ["'a' in row 1", "'b' in row 2"]
    """
    pieces: list[pa.Scalar | pa.Array] = []
    for literal, name, spec, conversion in _FORMAT.parse(template):
        pieces.append(pa.scalar(literal, _TEXT))
        if name is None:
            continue
        value = fields[name]
        if not isinstance(value, _PER_ROW):
            pieces.append(pa.scalar(_formatted(value, conversion, spec), _TEXT))
            continue
        values = value.to_pandas() if isinstance(value, pa.Array) else pd.Series(value)
        if conversion == "r" and values.dtype.kind in "iu":  # an integer's repr is its digits
            conversion = None
        if conversion or spec:
            pieces.append(_per_distinct(values, lambda v: _formatted(v, conversion, spec)))  # noqa: B023
        else:
            array = pa.array(values.astype("str").array)
            pieces.append((array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array).cast(_TEXT))
    if not any(isinstance(p, pa.Array) for p in pieces):
        return pa.repeat(pa.scalar("".join(p.as_py() for p in pieces), _TEXT), count)
    return pc.binary_join_element_wise(*pieces, pa.scalar("", _TEXT))


def _formatted(value: Any, conversion: str | None, spec: str | None) -> str:
    return str(_FORMAT.format_field(_FORMAT.convert_field(value, conversion) if conversion else value, spec or ""))


def _per_distinct(values: pd.Series, make: Callable[[Any], str]) -> pa.Array:
    codes, distinct = pd.factorize(values)
    return pa.array([make(v) for v in distinct], type=_TEXT).take(pa.array(codes))
