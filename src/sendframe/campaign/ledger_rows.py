"""A ledger's rows: how a contact row is named, which stored row and answer item it is, and the rows read back.

**Naming.** The ledger names a contact row by its index label as JSON text (:func:`row_key`, :func:`row_keys`),
and by a short tag of (key, recipient) that the row's notificationUrl carries (:func:`row_tag`), read back
from the notifications to settle unknown outcomes (:func:`tags_from_callbacks`).

A send with a notificationUrl gives each sms recipient its own URL, carrying the row's tag in the
``sf_row`` parameter. A notification only exists for a message the service accepted, so when a batch
ends unknown (the process was killed, a timeout, a 5xx, a connection dropped after the service
processed it), a later run given the notifications marks every row whose tag came back as accepted,
with the message id of ``%i`` (:meth:`sendframe.Ledger.settle`), and never sends it again. Rows of
unknown batches that no notification names after :data:`GRACE` are probably not sent; they are listed,
and sent again only with ``resend_unknown=True``.

    >>> row_keys(pd.Index([3, 4])).to_pylist(), row_key("a")
    (['3', '4'], '"a"')
    >>> tags_from_callbacks(pd.DataFrame({"id": ["m1", "m1"], "sf_row": ["t1", "t1"]}), None)
    {'t1': 'm1'}

**Matching.** The rules the ledger applies (its module docstring tells them in full):

- a send answer's item belongs to the row sent at its position only if its ``to`` names that row's
  recipient (:func:`same_recipient`); otherwise the row's fate is unknown;
- a contact row is the ledger row with the same (label, recipient), else the k-th unmatched row of its
  recipient is the k-th unmatched ledger row of that recipient (:func:`match_rows`).

Recipients are compared by their :func:`~sendframe.api.recipients.recipient_key` (in API form, so
``default_region=None``): numbers by their digits, emails case-folded.

    >>> match_rows(["0", "1"], ["447700900001", "447700900002"], ["1", "2"], ["447700900001", "447700900002"])
    [0, 1]

**Reading back.** A batch row of the ledger holds its rows' keys and recipients as JSON arrays and its answer as
JSON arrays of the result items' fields in request order (:data:`ANSWER_FIELDS`). :func:`row_columns` spreads them
out with each row's state, as Arrow columns of the types of :data:`ROW_DTYPES`; :func:`typed_frame` makes the
frame of :meth:`sendframe.Ledger.rows` of them.

    >>> batch = (1, "done", '["0"]', '["447700900001"]', '{"accepted": [true], "id": ["a1"]}', None, None, 7, 8)
    >>> typed_frame(row_columns([batch]))[["row_key", "state", "id"]].values.tolist()
    [['0', 'accepted', 'a1']]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

import pandas as pd
import pyarrow as pa

from sendframe.api.recipient_columns import recipient_keys
from sendframe.api.recipients import recipient_key
from sendframe.api.wire import SendAnswer
from sendframe.delivery.callbacks import read_callbacks
from sendframe.errors import InputError

__all__ = ["ANSWER_FIELDS", "GRACE", "ROW_DTYPES", "ROW_TAG_PARAM", "checked_columns", "fitted", "match_rows",
           "row_columns", "row_key", "row_keys", "row_tag", "same_recipient", "tag_url", "tags_from_callbacks",
           "typed_frame"]

ROW_TAG_PARAM = "sf_row"  # the notificationUrl parameter that carries a row's tag (docs/api-notes.md)
GRACE = timedelta(minutes=10)
"""How long after its request a row's first notification (ACCEPTD at the latest) is expected."""
_KEY_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # what json.dumps(..., ensure_ascii=False) uses
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


def row_key(label: object) -> str:
    """The text under which an index label is stored (JSON when possible, so ints stay ints).

        >>> row_key(3), row_key("a"), row_key(("x", 1))
        ('3', '"a"', '["x", 1]')
    """
    if hasattr(label, "item") and not isinstance(label, (str, bytes)):
        with contextlib.suppress(TypeError, ValueError):
            label = label.item()  # numpy scalars
    return _KEY_ENCODER.encode(label)


def row_keys(index: pd.Index) -> pa.Array:
    """:func:`row_key` of every label of ``index``, as Arrow text (integer labels without a Python object each).

        >>> row_keys(pd.RangeIndex(2)).to_pylist(), row_keys(pd.Index(["a", "b"])).to_pylist()
        (['0', '1'], ['"a"', '"b"'])
    """
    if index.dtype.kind in "iu":
        return pa.array(index.to_numpy()).cast(pa.string())  # an integer's JSON is its decimal text
    labels = index.tolist()
    encode = _KEY_ENCODER.encode if all(type(label) is str for label in labels) else row_key
    return pa.array(map(encode, labels), pa.string(), size=len(labels))


def tag_url(url: str) -> str:
    """``url`` ready for a row's tag: each row's notificationUrl is it followed by :func:`row_tag`.

        >>> tag_url("https://h.example/n"), tag_url("https://h.example/n?c=1")
        ('https://h.example/n?sf_row=', 'https://h.example/n?c=1&sf_row=')
    """
    return f"{url}{'&' if '?' in url else '?'}{ROW_TAG_PARAM}="


def row_tag(key: str, recipient: str) -> str:
    """A short tag of a ledger row, carried by its notificationUrl so its notification names the row.

        >>> row_tag(row_key(7), "447700900001")
        '44c4f5ed222ceb60'
    """
    return hashlib.blake2b(f"{key}\x1f{recipient}".encode(), digest_size=8).hexdigest()


def tags_from_callbacks(callbacks: Any, notification_url: str | None) -> dict[str, str]:
    """``{row tag: message id}`` from a callbacks frame, a log path or a ``Receiver``.

    A log (or a Receiver's log) is read with the message's ``notification_url`` plus the tag
    parameter, so the tag becomes a column.
    """
    if callbacks is None:
        return {}
    if isinstance(callbacks, pd.DataFrame):
        frame = callbacks
    elif isinstance(callbacks, (str, os.PathLike)) or hasattr(callbacks, "log"):
        path = callbacks.log if hasattr(callbacks, "log") else callbacks
        if not notification_url or not notification_url.startswith(("http://", "https://")):
            raise InputError("callbacks= settles unknown rows from their notifications, so the message needs the "
                             "notification_url the send used.")
        frame = read_callbacks(path, notification_url=f"{tag_url(notification_url)}tag")
    else:
        raise InputError(f"callbacks= takes a Receiver, a callback log path or a callbacks frame, "
                         f"not {type(callbacks).__name__}.")
    if ROW_TAG_PARAM not in frame.columns or "id" not in frame.columns:
        raise InputError(f"The callbacks have no {ROW_TAG_PARAM!r} and 'id' columns, so no notification names a row: "
                         "read the log with the notificationUrl the send used, or pass the Receiver or log path.")
    found = frame[[ROW_TAG_PARAM, "id"]].dropna().drop_duplicates(ROW_TAG_PARAM)
    return dict(zip(found[ROW_TAG_PARAM].astype(str), found["id"].astype(str), strict=True))



def same_recipient(sent: str, answered: str | None) -> bool:
    """Whether a result item's ``to`` names the recipient sent at its position.

    The spec says ``to`` is the recipient as sent; a service that reformats it is still recognised:
    both are compared by their recipient key (numbers in API form, whatever ``+``, ``00`` or separators
    the answer writes; emails trimmed and case-folded). A value that is no valid recipient only matches
    itself.

        >>> same_recipient("447700900001", "+44 7700 900001"), same_recipient("a@b.co", "A@B.CO ")
        (True, True)
        >>> same_recipient("447700900001", "447700900002")
        False
    """
    if answered is None:
        return False
    if sent == answered:
        return True
    key = recipient_key(sent, "any", default_region=None)
    return key is not None and key == recipient_key(answered, "any", default_region=None)


def checked_columns(columns: SendAnswer, sent: Sequence[str]) -> tuple[dict[str, list[Any]], int]:
    """The answer's :data:`ANSWER_FIELDS` (wire key, ``SendAnswer`` attribute) in request order, untrustworthy
    items blanked.

    An item whose ``to`` is not the recipient sent at its position, and a missing item, leave that row
    unknown (``accepted`` null) with a reason in ``errorDescription``; the ``to`` of every item is then
    kept as ``answeredTo``. Returns (columns by wire key, how many rows were left unknown).

        >>> from sendframe.api.wire import send_answer
        >>> answer = send_answer({"campaignId": 1, "sendingId": 2,
        ...                       "result": [{"accepted": True, "to": "447700900002"}]})
        >>> kept, unknown = checked_columns(answer, ["447700900001"])
        >>> kept["accepted"], unknown
        ([None], 1)
    """
    answered, n = columns.to, len(sent)
    if answered == list(sent):  # the usual answer: one item per recipient, in order
        return {key: getattr(columns, column) for key, column in ANSWER_FIELDS}, 0
    bad = [i for i in range(n) if i >= len(answered) or not same_recipient(sent[i], answered[i])]
    kept = {key: fitted(list(getattr(columns, column)), n) for key, column in ANSWER_FIELDS}
    for i in bad:
        for key, _ in ANSWER_FIELDS:
            kept[key][i] = None
        kept["errorDescription"][i] = (
            f"the service's answer has no item for recipient {i + 1} ({sent[i]}); {len(answered)} items "
            f"answered {n} recipients, so it is not known whether it was sent" if i >= len(answered) else
            f"the service's answer item {i + 1} is for {answered[i]!r}, not for {sent[i]!r} sent at that position, "
            "so it is not known whether it was sent")
    # items beyond the recipients sent belong to no row: the rows whose item matches keep it
    kept["answeredTo"] = list(answered)
    return kept, len(bad)


def match_rows(stored_keys: Sequence[str] | pa.Array, stored_recipients: Sequence[str] | pa.Array,
               keys: Sequence[str] | pa.Array, recipients: Sequence[str] | pa.Array) -> list[int | None]:
    """For each given (key, recipient), the position in the stored rows of the ledger row it is, or None.

    Stored rows repeat a (key, recipient) pair sent again: its last entry holds what is known. Recipients
    are compared by their recipient key (``"Ana@x.es"`` is ``"ana@x.es"``). First the same pair, then the
    k-th unmatched given row of a recipient takes the k-th unmatched ledger row of that recipient, in the
    order the ledger first recorded them.

        >>> match_rows(["0", "1"], ["A", "B"], ["0", "1", "2"], ["X", "A", "B"])  # a row inserted at the top
        [None, 0, 1]
    """
    if not len(stored_keys):  # a new ledger knows no row: nothing to key
        return [None] * len(keys)
    stored = pd.DataFrame({"key": stored_keys, "recipient": _keyed(stored_recipients)}, dtype="str")
    # each pair's last entry, the pairs in the order the ledger first recorded them
    latest = stored.assign(at=range(len(stored))).groupby(["key", "recipient"], sort=False, as_index=False)["at"].last()
    given = pd.DataFrame({"key": keys, "recipient": _keyed(recipients)}, dtype="str")
    at = given.merge(latest, how="left", on=["key", "recipient"])["at"].mask(given.duplicated())
    spare, unmatched = latest[~latest["at"].isin(at)], given[at.isna().to_numpy()]
    # the k-th unmatched given row of a recipient takes the k-th spare ledger row of that recipient
    nth = spare.assign(n=spare.groupby("recipient").cumcount())
    taken = unmatched.assign(n=unmatched.groupby("recipient").cumcount()).merge(nth, how="left", on=["recipient", "n"])
    at[at.isna().to_numpy()] = taken["at"].to_numpy()
    return [None if pd.isna(value) else int(value) for value in at]


def _keyed(recipients: Sequence[str] | pa.Array) -> pd.Series:
    # each recipient's key; a value that is no valid recipient stands for itself
    given = pd.Series(recipients, dtype="str")
    return recipient_keys(given, "any", default_region=None).fillna(given)




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
