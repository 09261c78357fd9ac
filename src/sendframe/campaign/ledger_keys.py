"""How the ledger names a contact row: its index label as JSON text (:func:`row_key`, :func:`row_keys`),
and a short tag of (key, recipient) that the row's notificationUrl carries (:func:`row_tag`), read back
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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from datetime import timedelta
from typing import Any

import pandas as pd
import pyarrow as pa

from sendframe.delivery.callbacks import read_callbacks
from sendframe.errors import InputError

__all__ = ["GRACE", "ROW_TAG_PARAM", "row_key", "row_keys", "row_tag", "tag_url", "tags_from_callbacks"]

ROW_TAG_PARAM = "sf_row"  # the notificationUrl parameter that carries a row's tag (docs/api-notes.md)
GRACE = timedelta(minutes=10)
"""How long after its request a row's first notification (ACCEPTD at the latest) is expected."""
_KEY_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # what json.dumps(..., ensure_ascii=False) uses


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
