"""How the ledger names a contact row: its index label as JSON text (:func:`row_key`, :func:`row_keys`),
and a short tag of (key, recipient) that the row's notificationUrl carries (:func:`row_tag`).

    >>> row_keys(pd.Index([3, 4])).to_pylist(), row_key("a")
    (['3', '4'], '"a"')
"""

from __future__ import annotations

import contextlib
import hashlib
import json

import pandas as pd
import pyarrow as pa

__all__ = ["ROW_TAG_PARAM", "row_key", "row_keys", "row_tag", "tag_url"]

ROW_TAG_PARAM = "sf_row"  # the notificationUrl parameter that carries a row's tag (docs/api-notes.md)
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
