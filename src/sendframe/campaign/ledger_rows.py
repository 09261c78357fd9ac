"""The ledger's rows read back: each stored batch spread out one row per (row key, recipient), typed.

A batch row of the ledger holds its rows' keys and recipients as JSON arrays and its answer as JSON arrays
of the result items' fields in request order (:data:`ANSWER_FIELDS`). :func:`row_columns` spreads them out
with each row's state, as Arrow columns of the types of :data:`ROW_DTYPES`; :func:`typed_frame` makes the
frame of :meth:`sendframe.Ledger.rows` of them.

    >>> batch = (1, "done", '["0"]', '["447700900001"]', '{"accepted": [true], "id": ["a1"]}', None, None, 7, 8)
    >>> typed_frame(row_columns([batch]))[["row_key", "state", "id"]].values.tolist()
    [['0', 'accepted', 'a1']]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

__all__ = ["ANSWER_FIELDS", "ROW_DTYPES", "fitted", "row_columns", "typed_frame"]

# the fields of a result item kept per row: (key in a batch's stored answer, column of rows())
ANSWER_FIELDS = (("accepted", "accepted"), ("id", "id"), ("parts", "parts"), ("scheduledAt", "scheduled_at"),
                 ("expiresAt", "expires_at"), ("errorCode", "error_code"), ("errorDescription", "error_description"))
# the columns of rows() and their types (Arrow's while reading, pandas' in the frame)
ROW_DTYPES: dict[str, Any] = {
    "row_key": "string", "recipient": "string", "batch": "Int64", "state": "string", "accepted": "boolean",
    "id": "string", "parts": "Int64", "scheduled_at": "string", "expires_at": "string", "error_code": "Int64",
    "error_description": "string", "campaign_id": "Int64", "sending_id": "Int64"}
_ARROW_TYPES = {"string": pa.string(), "Int64": pa.int64(), "boolean": pa.bool_()}
_PANDAS_TYPES = {arrow: pd.api.types.pandas_dtype(name) for name, arrow in _ARROW_TYPES.items()}
_ROWS_AT_A_TIME = 1 << 16  # rows read back as Python lists before they become Arrow arrays


def row_columns(batches: Iterable[Sequence[Any]]) -> dict[str, pa.Array]:
    """Every (row, recipient) of the stored ``batches`` (rows of the ledger's ``batches`` table: batch, state,
    row_keys, recipients, answer, error_code, error_description, campaign_id, sending_id), in their order, by
    column: Arrow arrays of the types of :data:`ROW_DTYPES` (a few batches at a time are Python lists, never a
    whole campaign's).

        >>> batch = (1, "done", '["0", "1"]', '["447700900001", "447700900002"]', '{"accepted": [true, false]}',
        ...          None, None, 7, 8)
        >>> row_columns([batch])["state"].to_pylist()
        ['accepted', 'rejected']
    """
    columns: dict[str, list[Any]] = {name: [] for name in ROW_DTYPES}
    pieces: list[dict[str, pa.Array]] = []
    for (batch, state, keys_text, recipients_text, answer_text, code, description, campaign_id,
         sending_id) in batches:
        keys = json.loads(keys_text)
        n = len(keys)
        answer = json.loads(answer_text) if answer_text else {}
        accepted = [False] * n if state == "done" and not answer else fitted(answer.get("accepted"), n)
        columns["row_key"] += keys
        columns["recipient"] += fitted(json.loads(recipients_text), n)
        columns["batch"] += [batch] * n
        # a row's state is its answer's (no item: unknown; a row of an unknown batch a notification settled is
        # accepted), but for a batch provably not sent
        columns["state"] += ["not_sent"] * n if state == "not_sent" else [
            "accepted" if value is True else "rejected" if value is False else "unknown" for value in accepted]
        columns["accepted"] += accepted
        for key, column in ANSWER_FIELDS[1:5]:
            columns[column] += fitted(answer.get(key), n)
        for (key, column), fallback in zip(ANSWER_FIELDS[5:], (code, description), strict=True):
            values = fitted(answer.get(key), n)
            # the batch's error is each row's, but for a row a notification settled (accepted)
            columns[column] += values if fallback is None else [
                fallback if v is None and a is not True else v for v, a in zip(values, accepted, strict=True)]
        columns["campaign_id"] += [campaign_id] * n
        columns["sending_id"] += [sending_id] * n
        if len(columns["row_key"]) >= _ROWS_AT_A_TIME:
            pieces.append(_arrow_columns(columns))
            columns = {name: [] for name in ROW_DTYPES}
    return {name: pa.concat_arrays([*(piece[name] for piece in pieces), array])
            for name, array in _arrow_columns(columns).items()}


def fitted(values: list[Any] | None, n: int) -> list[Any]:
    """``values`` cut or padded with None to ``n`` items (an answer holds one item per recipient, in order).

        >>> fitted(None, 2), fitted([1, 2, 3], 2), fitted([1], 2)
        ([None, None], [1, 2], [1, None])
    """
    if values is None:
        return [None] * n
    return values if len(values) == n else (values + [None] * n)[:n]


def _arrow_columns(columns: dict[str, list[Any]]) -> dict[str, pa.Array]:
    return {name: pa.array(values, _ARROW_TYPES[ROW_DTYPES[name]]) for name, values in columns.items()}


def typed_frame(columns: dict[str, pa.Array], positions: Sequence[int | None] | None = None,
                **given: pa.Array) -> pd.DataFrame:
    """The rows() frame of ``columns`` (taken at ``positions``, None giving <NA>), ``given`` columns as they are.

        >>> typed_frame(row_columns([]), [None])[["row_key", "state"]].values.tolist()
        [[<NA>, <NA>]]
    """
    indices = None if positions is None else pa.array(positions, pa.int64())
    taken = {name: given[name] if name in given else columns[name] if indices is None else columns[name].take(indices)
             for name in ROW_DTYPES}
    frame: pd.DataFrame = pa.table(taken).to_pandas(types_mapper=_PANDAS_TYPES.get)  # pyarrow is untyped
    return frame
