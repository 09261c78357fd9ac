"""The ledger's file format: its tables and the ``rows`` view, the JSON a batch row keeps of an answer,
and the typed frame :meth:`~sendframe.campaign.ledger.Ledger.rows` makes of stored batches.

    >>> typed_frame({name: [] for name in ROW_COLUMNS}).dtypes["accepted"]
    BooleanDtype
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
from pydantic_core import to_json

from sendframe.api.wire import send_answer
from sendframe.campaign.matching import checked_columns

__all__ = ["ANSWER_FIELDS", "BATCH_STATES", "ROW_COLUMNS", "ROW_DTYPES", "SCHEMA_VERSION"]

# batch states: intent (written, no answer yet), done (answered), unknown (fate unknown), not_sent (provably not sent)
BATCH_STATES = ("intent", "done", "unknown", "not_sent")
SCHEMA_VERSION = 1

# the fields of a result item kept per row: (key in a batch's stored answer, column of rows())
ANSWER_FIELDS = (("accepted", "accepted"), ("id", "id"), ("parts", "parts"), ("scheduledAt", "scheduled_at"),
                 ("expiresAt", "expires_at"), ("errorCode", "error_code"), ("errorDescription", "error_description"))

# one statement each: executescript would commit the transaction the schema is written in
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS campaign (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE batches ("
    " batch INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, size INTEGER NOT NULL, state TEXT NOT NULL,"
    " http_status INTEGER, error_code INTEGER, error_description TEXT, campaign_id INTEGER, sending_id INTEGER,"
    " intent_at TEXT NOT NULL, result_at TEXT, row_keys TEXT NOT NULL, recipients TEXT NOT NULL, answer TEXT)",
    "CREATE VIEW rows AS SELECT b.batch AS batch, CAST(k.key AS INTEGER) AS position, k.value AS row_key,"
    " json_extract(b.recipients, '$[' || k.key || ']') AS recipient, "
    + ", ".join(f"json_extract(b.answer, '$.{key}[' || k.key || ']') AS {column}" for key, column in ANSWER_FIELDS)
    + " FROM batches b, json_each(b.row_keys) k",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
# rows of unknown batches whose delivery notification came back: accepted, with the notification's message id
SETTLED_SCHEMA = ("CREATE TABLE IF NOT EXISTS settled (batch INTEGER NOT NULL, row_key TEXT NOT NULL,"
                  " recipient TEXT NOT NULL, id TEXT, settled_at TEXT NOT NULL,"
                  " PRIMARY KEY (batch, row_key, recipient))")

ROW_COLUMNS = ("row_key", "recipient", "batch", "state", "accepted", "id", "parts", "scheduled_at", "expires_at",
               "error_code", "error_description", "campaign_id", "sending_id")
ROW_DTYPES: dict[str, Any] = {
    "row_key": "string", "recipient": "string", "batch": "Int64", "state": "string", "accepted": "boolean",
    "id": "string", "parts": "Int64", "scheduled_at": "string", "expires_at": "string", "error_code": "Int64",
    "error_description": "string", "campaign_id": "Int64", "sending_id": "Int64"}
_ARROW_TYPES = {"string": pa.string(), "Int64": pa.int64(), "boolean": pa.bool_()}

def json_text(value: Any) -> str:
    """Compact JSON of lists and dicts of plain values, as stored in a batch row (pydantic's serialiser: fast)."""
    return to_json(value).decode("utf-8")


def answer_json(answer: Any, sent: Sequence[str]) -> tuple[Any, Any, str, int]:
    """(campaign id, sending id, the answer's columns as the JSON kept in the batch row, rows left unknown).

    A column without any value (no errors, no schedule: the usual answer) is kept as one ``null``.
    """
    columns = send_answer(answer)  # a SendResponse or wire dict is read through the same rules
    kept, unknown = checked_columns(columns, sent, ANSWER_FIELDS)
    return columns.campaign_id, columns.sending_id, json_text(
        {key: values if values.count(None) < len(values) else None for key, values in kept.items()}), unknown


def fitted(values: list[Any] | None, n: int) -> list[Any]:
    """``values`` cut or padded with None to ``n`` items (an answer holds one item per recipient, in order)."""
    if values is None:
        return [None] * n
    return values if len(values) == n else (values + [None] * n)[:n]


def row_states(state: str, accepted: list[Any]) -> list[str]:
    if state != "done":
        return ["not_sent" if state == "not_sent" else "unknown"] * len(accepted)
    return ["accepted" if value is True else "rejected" if value is False else "unknown" for value in accepted]


@functools.cache
def _pandas_dtype(name: str) -> Any:
    return pd.api.types.pandas_dtype(name)  # a StringDtype takes a while to build: once per name


def arrow_columns(columns: dict[str, list[Any]]) -> dict[str, pa.Array]:
    """Stored rows' columns as Arrow arrays of the types of the rows() frame."""
    return {name: pa.array(values, _ARROW_TYPES[ROW_DTYPES[name]]) for name, values in columns.items()}


def typed_frame(columns: dict[str, pa.Array] | dict[str, list[Any]], positions: Sequence[int | None] | None = None,
                **given: list[Any] | pa.Array) -> pd.DataFrame:
    """The rows() frame of ``columns`` (Arrow arrays or lists; taken at ``positions``, None giving <NA>), ``given``
    columns as they are."""
    indices = None if positions is None else pa.array(positions, pa.int64())
    nothing = indices is not None and not len(columns["row_key"])  # an empty ledger: every value <NA>
    data = {}
    for name in ROW_COLUMNS:
        dtype = _pandas_dtype(ROW_DTYPES[name])
        kind = _ARROW_TYPES[ROW_DTYPES[name]]
        if name in given:
            array = given[name] if isinstance(given[name], pa.Array) else pa.array(given[name], kind)
        elif nothing:
            array = pa.nulls(len(indices), kind)  # type: ignore[arg-type]
        else:
            values = columns[name]
            array = values if isinstance(values, pa.Array) else pa.array(values, kind)
            array = array if indices is None else array.take(indices)
        data[name] = dtype.__from_arrow__(array)
    return pd.DataFrame(data)

