"""One measurement of an SMS campaign's texts, shared by the calls an analyst makes in a row.

``preflight`` and then ``estimate`` (or ``msg.preflight`` then ``msg.estimate``) of the same table with the
same message render and measure the same texts: at 1M rows that pass is most of each call. The text
engine's answer (:func:`~sendframe.text.measure.measure_frame`, with the unencodable characters) is kept for
the last table measured, keyed by the message's settings and a fingerprint of the table's content: its index
and every column the template reads, hashed buffer by buffer (BLAKE2b, about 1 GB/s), so any changed value,
row or order gives a new key and a fresh measurement. One entry is kept, so memory holds at most one table's
texts. :mod:`sendframe.campaign.prepared` keeps its last prepared frame here the same way (:func:`last`,
:func:`store`), so ``msg.estimate(df)`` then ``msg.send(df)`` prepares once. Hand-written because ``functools`` caches
key on the arguments' equality, which a DataFrame lacks.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"name": ["ana", "luís"]})
    >>> first = measure_texts(frame, "Hola {name|capitalize}", encoding="auto")
    >>> again = measure_texts(frame.copy(), "Hola {name|capitalize}", encoding="auto")
    >>> again["text"].tolist(), again is not first
    (['Hola Ana', 'Hola Luís'], True)
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sendframe.campaign.preview import placeholders
from sendframe.errors import InputError
from sendframe.text.encodings import ENCODINGS
from sendframe.text.measure import measure_frame
from sendframe.text.templates import Template, parse

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["forget", "frame_fingerprint", "last", "measure_texts", "store"]

# kind -> (key, value): the last measurement ("sms") and the last prepared frame ("prepared")
_LAST: dict[str, Any] = {}
_LOCK = threading.Lock()


def forget() -> None:
    """Drop the kept measurement (its memory, or to time a first measurement again).

        >>> forget()
    """
    with _LOCK:
        _LAST.clear()


def last(kind: str) -> Any:
    """What :func:`store` kept last under ``kind`` (None when nothing is kept).

        >>> store("example", "key", 1); last("example")
        ('key', 1)
    """
    with _LOCK:
        return _LAST.get(kind)


def store(kind: str, key: Any, value: Any) -> None:
    """Keep ``value``, made for ``key``, as the last of ``kind`` (one per kind, replacing the one before); a None
    key keeps nothing (the one before is dropped)."""
    with _LOCK:
        _LAST.pop(kind, None)
        if key is not None:
            _LAST[kind] = (key, value)


def _hash_series(digest: Any, series: pd.Series) -> bool:
    """Add ``series`` to ``digest``; False for a column whose content cannot be hashed exactly and cheaply
    (Python objects: ``1`` and ``"1"``, ``True`` and ``"True"`` would look alike), which is then not cached.
    A categorical is hashed as its codes and its categories (``read_contacts`` gives ``phone_type`` as one)."""
    digest.update(f"{series.name!r}:{series.dtype}:{len(series)}".encode())
    values = series.array
    if isinstance(series.dtype, np.dtype):
        if series.dtype.kind not in "biufcmM":
            return False
        digest.update(np.ascontiguousarray(series.to_numpy()).view(np.uint8))
        return True
    if isinstance(series.dtype, pd.CategoricalDtype):  # its codes and its categories, each as they are
        digest.update(f"ordered:{series.dtype.ordered}".encode())
        return (_hash_series(digest, pd.Series(series.array.codes, name="codes"))
                and _hash_series(digest, pd.Series(series.dtype.categories, name="categories")))
    if not hasattr(values, "__arrow_array__"):
        return False
    arrow = values.__arrow_array__()  # Arrow-backed (or masked, as Int64): the buffers as they are
    for chunk in arrow.chunks if isinstance(arrow, pa.ChunkedArray) else [arrow]:
        digest.update(f"{chunk.type}:{chunk.offset}:{len(chunk)}".encode())
        for buffer in chunk.buffers():
            if buffer is not None:
                digest.update(memoryview(buffer))
    return True


def frame_fingerprint(frame: pd.DataFrame, columns: list[str]) -> bytes | None:
    """A digest of ``frame``'s index and ``columns`` (those present): equal only for equal content; None when
    a column holds Python objects (not fingerprinted).

    >>> a = pd.DataFrame({"x": ["1", "2"]})
    >>> frame_fingerprint(a, ["x"]) == frame_fingerprint(a.copy(), ["x"])
    True
    >>> frame_fingerprint(a, ["x"]) == frame_fingerprint(a.assign(x=["1", "3"]), ["x"])
    False
    """
    digest = hashlib.blake2b(digest_size=32)
    index = frame.index
    if isinstance(index, pd.RangeIndex):
        digest.update(f"range:{index.start}:{index.stop}:{index.step}".encode())
    elif not _hash_series(digest, index.to_series(index=pd.RangeIndex(len(index)))):
        return None
    for name in columns:
        if name in frame.columns:
            column: pd.Series | pd.DataFrame = frame[name]
            if not _hash_series(digest, column.iloc[:, 0] if isinstance(column, pd.DataFrame) else column):
                return None
        else:
            digest.update(f"absent:{name!r}".encode())
    return digest.digest()


def measure_texts(frame: pd.DataFrame, template: str | Template, *, encoding: str, link_base: str | None = None,
                  otp_config: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """``measure_frame`` of an SMS template over ``frame`` with the unencodable characters (``encoding``
    ``"auto"``: the cheapest per row), reusing the last answer when the settings and the table are the same.
    Returns a new frame each time."""
    parsed = template if isinstance(template, Template) else parse(template)
    columns = sorted(parsed.variables)
    fingerprint = frame_fingerprint(frame, columns)
    key = None if fingerprint is None else (parsed.source, encoding, link_base, repr(otp_config), fingerprint)
    previous = last("sms")
    if key is not None and previous is not None and previous[0] == key:
        return previous[1].copy(deep=False)  # type: ignore[no-any-return]
    specials, shorten = placeholders(link_base, otp_config)
    measured = measure_frame(frame, parsed, specials=specials, shorten=shorten,
                             encoding=None if encoding == "auto" else encoding, unencodable=True)
    store("sms", key, measured)
    return measured.copy(deep=False)


def asked_encoding(encoding: str | None) -> str:
    """The encoding asked for, checked: ``"auto"`` or a name (``None`` is what a request without one gets: gsm).

        >>> asked_encoding(None), asked_encoding("auto")
        ('gsm', 'auto')
    """
    if encoding is None:
        return "gsm"
    if encoding != "auto" and encoding not in ENCODINGS:
        raise InputError(f"Unknown encoding {encoding!r}: use one of {', '.join(ENCODINGS)} "
                         "or 'auto' (the cheapest per row).")
    return encoding


def measure_sms(frame: pd.DataFrame, msg: Message, *, measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """The measurement of an SMS's rows as its send makes them: the message's arguments checked (``render`` on no
    rows), the texts measured by :func:`measure_texts`, or under ``trans`` translated and measured as they are;
    ``measured`` (the caller's, of the same rows and message) is taken as it is.

        >>> import sendframe
        >>> msg = sendframe.sms("Olá {name}", sender="Shop", encoding="auto", trans=1)
        >>> measure_sms(pd.DataFrame({"name": ["Zoë"]}), msg)["text"].tolist()
        ['Ola Zoë']
    """
    encoding = asked_encoding(msg.encoding)
    msg.render(frame.iloc[:0])  # the message's arguments checked, on no rows
    if measured is not None:
        return measured
    if int(msg.fields.get("trans", 0)) == 0:
        return measure_texts(frame, msg.template or "", encoding=encoding, link_base=msg.link_base,
                             otp_config=msg.fields.get("otpConfig"))
    text = msg.render(frame)
    return measure_texts(pd.DataFrame({"text": text}, index=text.index), "{text}", encoding=encoding)
