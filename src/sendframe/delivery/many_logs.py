"""Several callback logs as one frame: a folder, a glob or a list, receiver and access logs mixed.

``read_callbacks`` reads each log with its own parameters (a receiver log with its mapping, a web
server's access log with the ``notification_url``'s; the kind of each file is told from its first
line, plain or compressed) and keeps the same notification found in several logs (a retry that
reached two servers, a log copied twice) once, at its earliest arrival. Together larger than
:data:`LARGE_LOGS_BYTES`, the logs are read by the lazy engine instead (``dask=None``, the default;
see :mod:`sendframe.engines`), which uses the rules written here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from sendframe.delivery.parsing import stacked
from sendframe.engines import named_files, several_files
from sendframe.errors import InputError

__all__ = ["LARGE_LOGS_BYTES", "conformed", "deduplicated", "log_columns", "log_url", "read_many_logs",
           "wants_dask"]

LARGE_LOGS_BYTES = 1024 * 1024 * 1024
"""Logs larger than this together are read as a Dask frame unless ``dask=False``."""
_RECEIVER_LINE = re.compile(rb"^(#params\t|\d{4}-\d\d-\d\dT[^\t\n]*\t)")


def wants_dask(source: Any, dask: bool | None) -> bool:
    """Whether ``read_callbacks`` reads ``source`` as a Dask frame: ``dask`` when given; by default
    when it names several logs larger than :data:`LARGE_LOGS_BYTES` together.

        >>> wants_dask("callbacks.log", True), wants_dask("callbacks.log", None)
        (True, False)
    """
    if dask is not None or not several_files(source):
        return bool(dask)
    return sum(os.path.getsize(f) for f in named_files(source, "callback log")) > LARGE_LOGS_BYTES


def _head(path: str, size: int = 1 << 16) -> bytes:
    with pa.input_stream(path, compression="detect") as stream:
        head: bytes = stream.read(size)  # pyarrow is untyped: read answers bytes
    return head


def log_url(path: str, notification_url: str | None) -> str | None:
    """The notificationUrl the log at ``path`` is read with: none for a receiver's log (``sendframe receive``, told
    from its first line; its ``#params`` lines name its parameters), ``notification_url`` for a web server's access
    log, which cannot be read without it.

        >>> log_url("data/contacts.csv", "https://shop.example/dlr?mid=%i&st=%s")
        'https://shop.example/dlr?mid=%i&st=%s'
    """
    first = next((line for line in _head(path).splitlines() if line.strip()), b"")
    if _RECEIVER_LINE.match(first):
        return None
    if notification_url is None:
        raise InputError(f"{path} is a web server's access log: pass the notification_url the service was given "
                         "(e.g. 'https://shop.example/dlr?mid=%i&st=%s'), so its parameters can be read.")
    return notification_url


def deduplicated(frame: pd.DataFrame) -> pd.DataFrame:
    """Each notification once, at its earliest arrival (equal in every column but ``received_at``)."""
    if frame.empty:
        return frame
    same = [c for c in frame.columns if c != "received_at"]
    ordered = frame.sort_values("received_at", kind="stable", na_position="last")
    return ordered.drop_duplicates(subset=same, keep="first").sort_index(kind="stable")


def _attrs_of(frames: Sequence[pd.DataFrame], dropped: int) -> dict[Hashable | None, Any]:
    examples = [line for f in frames for line in f.attrs.get("junk_examples", [])]
    return {"junk_lines": sum(int(f.attrs.get("junk_lines", 0)) for f in frames), "junk_examples": examples[:5],
            "duplicates_dropped": sum(int(f.attrs.get("duplicates_dropped", 0)) for f in frames) + dropped,
            "other_requests": sum(int(f.attrs.get("other_requests", 0)) for f in frames), "files": len(frames)}


def log_columns(frames_columns: Iterable[Iterable[str]]) -> list[str]:
    """The columns of several logs' frames together, in order of first appearance, ``received_at`` last."""
    return [*dict.fromkeys(c for columns in frames_columns for c in columns if c != "received_at"), "received_at"]


def conformed(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` with ``columns`` in order, the missing ones as empty text."""
    missing = {c: pd.Series(pd.NA, index=frame.index, dtype="string") for c in columns if c not in frame}
    return frame.assign(**missing)[list(columns)] if missing else frame[list(columns)]


def read_many_logs(read: Callable[..., pd.DataFrame], source: Any, notification_url: str | None = None) -> pd.DataFrame:
    """Every notification of the logs ``source`` names, once, in the logs' order, with ``attrs`` summed over
    the logs (``junk_lines``, ``duplicates_dropped`` including repeats across logs, ``other_requests``, ``files``).

        >>> read_many_logs(sendframe.read_callbacks, "logs/*.log.gz")  # doctest: +SKIP
    """
    frames = [read(f, log_url(f, notification_url)) for f in named_files(source, "callback log")]
    columns = log_columns([f.columns for f in frames])
    together = stacked([conformed(f, columns) for f in frames])
    kept = deduplicated(together).reset_index(drop=True)
    kept.attrs = _attrs_of(frames, len(together) - len(kept))
    return kept
