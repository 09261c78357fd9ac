"""Delivery notifications back into one typed DataFrame.

``read_callbacks`` reads the receiver's own log (``sendframe receive`` / ``Receiver``) and the
access logs of a web server the analyst already runs (nginx / Apache *combined* or *common*
format). The work is vectorised (see ``parsing``): a plain file is read and parsed in pieces of
32 MB (compressed ones are read whole), and a log read before is only read from where the last
read stopped (see ``tailing``), so polling a growing log costs what its new lines cost.

    >>> frame = read_callbacks("callbacks.log")  # doctest: +SKIP
    >>> latest_status(frame)[["id", "part", "status"]]  # doctest: +SKIP

The receiver's log is one line per notification: ``<arrival time ISO 8601 UTC>\\t<raw query>``,
plus ``#params\\t<query>`` lines naming the analyst's own parameters of the notificationUrl.
"""

from __future__ import annotations

import os

import pandas as pd

from sendframe.api.notifications import deciding_notifications
from sendframe.delivery.many_logs import read_many_logs, wants_dask
from sendframe.delivery.parsing import (  # noqa: F401  (re-exported: the names callers know)
    CALLBACK_COLUMNS,
    JUNK_EXAMPLES,
    PARAMS_LINE_PREFIX,
    RECEIVER_MAPPING,
    mapping_from_url,
    parse_lines,
)
from sendframe.delivery.tailing import LogReads
from sendframe.engines import dispatched, several_files
from sendframe.memory import release_unused_memory
from sendframe.options import keyword_checked

# the last read of the few logs read lately: the next read of each parses only what was appended
LOG_READS = LogReads()


@keyword_checked
@dispatched("path", named_by=lambda arguments: "dask" if wants_dask(arguments["path"], arguments["dask"]) else None)
def read_callbacks(path: str | os.PathLike[str], notification_url: str | None = None, *,
                   dask: bool | None = None) -> pd.DataFrame:
    """Read a callback log into one typed frame, one row per distinct notification.

    ``notification_url`` is the address the analyst gave the service (e.g.
    ``https://x/dlr?mid=%i&st=%s&ref=crm``); it says which parameter carries which escape code and
    which parameters are the analyst's own (each becomes a column). Without it the receiver's
    mapping is used (parameters named after the columns) with the own parameters its log records.
    Only requests to the notificationUrl's path are read from an access log.

    A log read before (one of the last few) is read only from where that read stopped: the lines
    appended since are parsed and added, so polling a growing log every few seconds costs little.
    A log that was rotated (another file under the name), truncated or rewritten is read again
    from the start. ``frame.attrs["bytes_read"]`` says how many bytes this call parsed.

    ``status`` and ``delivery_meaning`` (what ``delivery``, the ``%d`` value, means) are categoricals of
    their few values, ``sender`` and ``mnc`` categoricals of the values read (sorted; text in a Dask read);
    ``delivery`` (Int8), ``part`` (Int16), ``campaign_id`` and ``sending_id`` nullable integers (a value outside
    the spec's range is ``<NA>``, as a value that is not a number is); ``cost`` a float; the times UTC; the other
    columns text (``string``).

    Junk lines are counted in ``frame.attrs["junk_lines"]`` with the first few in
    ``attrs["junk_examples"]``; requests to other paths in ``attrs["other_requests"]``; retries
    (the same raw query again; the first arrival is kept) in ``attrs["duplicates_dropped"]``.

    A plain file is read and parsed in pieces of 32 MB (a log being appended to is fine), so the memory a
    read takes beside the frame it returns stays about the same however long the log: a first read of a
    420 MB log of 1.7M notifications peaks at about 0.5 GB above the interpreter, its frame 0.17 GB of it.
    ``.gz``, ``.bz2``, ``.lz4`` and ``.zst`` files are decompressed into memory (and read whole each time).

    >>> frame = read_callbacks("access.log", "https://shop.example/dlr?mid=%i&st=%s&ref=crm")  # doctest: +SKIP
    >>> frame[["id", "status", "ref"]]  # doctest: +SKIP

    ``path`` may also name several logs (a folder, a glob, a list; receiver and access logs mixed:
    :mod:`sendframe.delivery.many_logs`), and ``dask=True`` (by default: several logs over 1 GB
    together) reads them as a Dask frame (:mod:`sendframe.scale.callbacks`, through :mod:`sendframe.engines`).
    """
    if several_files(path):
        return read_many_logs(read_callbacks, path, notification_url)
    frame = LOG_READS.read(path, notification_url).frame
    release_unused_memory()
    return frame


@keyword_checked
@dispatched("callbacks")
def latest_status(callbacks: pd.DataFrame) -> pd.DataFrame:
    """One row per message and part: the final status when one arrived, else the latest intermediate.

    Arrival order does not matter: a final notification (DELIVRD, UNDELIV, EXPIRED, REJECTD,
    DELETED) is never overridden by an intermediate one (ACCEPTD, ...), whenever it arrived.
    Without a known status the delivery value decides (1, 2, 16 final; 4 intermediate).
    Among notifications of the same kind the latest ``reported_at`` wins (a missing one counts as latest):
    the rule of ``sendframe.api.notifications.deciding_order``, which ``message_outcomes`` follows too.

    >>> latest = latest_status(read_callbacks("callbacks.log"))  # doctest: +SKIP
    >>> latest["status"].value_counts()  # doctest: +SKIP
    """
    if callbacks.empty:
        return callbacks.copy()
    frame = callbacks.loc[callbacks["id"].notna()]
    groups = frame.groupby(["id", "part"], dropna=False, sort=False).ngroup().to_numpy()
    last = frame.iloc[deciding_notifications(frame, groups)]
    last = last.sort_values(["id", "part"], kind="stable").reset_index(drop=True)
    last.attrs = {}
    return last
