"""Frequency caps: who was sent ``n`` messages in the last ``days`` days, by earlier campaigns.

The history is a frame with a ``recipient`` and a tz-aware ``sent_at`` per message sent, passed by
the analyst or read from earlier campaigns' ledgers with :func:`history_from_ledgers`. Pure
functions: nothing is sent or written.

A ledger has no time per row: a batch's rows share its ``intent_at`` (when the request was about to
leave), and a row the service scheduled for later (``scheduled_at``) counts at that time. Rows that
count are those the service accepted and those whose fate is unknown (they may have been sent;
counting them is the side that never messages anyone too often). Rejected and not-sent rows do not.

    >>> import pandas as pd
    >>> history = pd.DataFrame({"recipient": ["34600000001"] * 2 + ["34600000002"],
    ...                         "sent_at": pd.to_datetime(["2026-03-01", "2026-03-05", "2026-03-05"], utc=True)})
    >>> now = pd.Timestamp("2026-03-06", tz="UTC")
    >>> frequency_capped(pd.Series(["+34 600 000 001", "34600000002"]), history, 2, 7, now).tolist()
    [True, False]
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.campaign.ledger import SPENT_STATES, Ledger, is_ledger
from sendframe.errors import InputError

__all__ = ["aware_moment", "frequency_capped", "frequency_window", "history_from_ledgers", "recent_sends"]


def aware_moment(moment: object, name: str) -> pd.Timestamp:
    """``moment`` (a tz-aware datetime or its ISO text) in UTC; a naive one is refused with a hint to give a zone.

        >>> str(aware_moment("2026-03-06T13:00:00+01:00", "now"))
        '2026-03-06 12:00:00+00:00'
    """
    try:
        stamp = pd.Timestamp(moment) if isinstance(moment, (str, datetime)) else None
    except ValueError:
        stamp = None
    if stamp is None:
        raise InputError(f"{name} must be a date-time with a time zone, e.g. '2026-03-06T12:00:00+00:00'; "
                         f"got {moment!r}.")
    if stamp.tzinfo is None:
        raise InputError(f"{name}={stamp} has no time zone: give a zone, "
                         "e.g. pd.Timestamp('2026-03-06 12:00', tz='UTC').")
    return stamp.tz_convert("UTC")


def _checked_history(history: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(history, pd.DataFrame):
        raise InputError("The send history must be a DataFrame with 'recipient' and 'sent_at', "
                         f"not {type(history).__name__}.")
    missing = [c for c in ("recipient", "sent_at") if c not in history]
    if missing:
        raise InputError(f"The send history needs the columns 'recipient' and 'sent_at' (tz-aware); "
                         f"it lacks {missing}.")
    sent_at = history["sent_at"]
    if not isinstance(sent_at.dtype, pd.DatetimeTZDtype):
        raise InputError("The history's sent_at has no time zone: give a zone, e.g. history['sent_at'].dt.tz_localize("
                         "'UTC') when the times are UTC." if pd.api.types.is_datetime64_dtype(sent_at.dtype) else
                         f"The history's sent_at must hold tz-aware date-times, not {sent_at.dtype}.")
    return history


def frequency_window(n: object, days: object, option: str = "") -> tuple[int, float]:
    """A frequency cap's ``n`` messages and ``days``, checked: a whole number >= 1 and a number of days > 0
    (``option`` names where they were given, for the error).

        >>> frequency_window(2, 7), frequency_window(2.0, 0.5)
        ((2, 7.0), (2, 0.5))
    """
    said, number = f"{option}: " if option else "", (int, float, np.integer, np.floating)
    if isinstance(n, bool) or not isinstance(n, number) or not float(n).is_integer() or n < 1:
        raise InputError(f"{said}n, the number of messages allowed, must be a whole number >= 1; got {n!r}.")
    if isinstance(days, bool) or not isinstance(days, number) or not days > 0:
        raise InputError(f"{said}days must be a number of days > 0; got {days!r}.")
    return int(n), float(days)


def recent_sends(history: pd.DataFrame, days: float, now: datetime | str, *, default_region: str = "ES") -> pd.Series:
    """How many messages each recipient was sent after ``now - days`` (later scheduled ones included).

    Returns an ``Int64`` Series named ``sends``, indexed by the recipient (as :func:`recipient_keys`
    writes it), only recipients with at least one send.

        >>> history = pd.DataFrame({"recipient": ["34600000001", "34600000001"],
        ...                         "sent_at": pd.to_datetime(["2026-02-01", "2026-03-05"], utc=True)})
        >>> recent_sends(history, 7, "2026-03-06T00:00:00+00:00").to_dict()
        {'34600000001': 1}
    """
    history = _checked_history(history)
    frequency_window(1, days)
    start = aware_moment(now, "now") - pd.Timedelta(days=float(days))
    recent = history[(history["sent_at"] > start).to_numpy(dtype=bool)]
    keys = recipient_keys(recent["recipient"], "any", default_region=default_region).dropna()
    counts = keys.value_counts(sort=False).astype("Int64")
    counts.index.name = "recipient"
    return counts.rename("sends")


def frequency_capped(recipients: pd.Series | Iterable[Any], history: pd.DataFrame, n: int, days: float,
                     now: datetime | str, *, default_region: str = "ES") -> np.ndarray:
    """True for each recipient already sent ``n`` or more messages after ``now - days``: skip them.

    ``recipients`` is the column of the contacts that will be sent to (phones in any form
    ``read_contacts`` repairs, or emails); the answer is in its order. Missing recipients are not
    capped (they are not sent anyway).

        >>> history = pd.DataFrame({"recipient": ["a@example.com"],
        ...                         "sent_at": pd.to_datetime(["2026-03-05"], utc=True)})
        >>> frequency_capped(["A@example.com", "b@example.com"], history, 1, 30, "2026-03-06T00:00:00+00:00").tolist()
        [True, False]
    """
    frequency_window(n, days)
    series = recipients if isinstance(recipients, pd.Series) else pd.Series(list(recipients), dtype=object)
    counts = recent_sends(history, days, now, default_region=default_region)
    keys = recipient_keys(series, "any", default_region=default_region)
    return (keys.map(counts).fillna(0) >= int(n)).to_numpy(dtype=bool)


_HISTORY_COLUMNS = {"recipient": "string", "sent_at": "datetime64[us, UTC]", "state": "string", "ledger": "string",
                    "batch": "Int64"}


def _ledger_paths(folder_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    if isinstance(folder_or_paths, (str, os.PathLike)) and Path(folder_or_paths).is_dir():
        # is_ledger opens a file read-only: SQLite's -wal, -shm and -journal files and lock files are not ledgers
        return [path for path in sorted(Path(folder_or_paths).iterdir()) if path.is_file() and is_ledger(path)]
    named = [folder_or_paths] if isinstance(folder_or_paths, (str, os.PathLike)) else folder_or_paths
    paths = [Path(p) for p in named]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise InputError(f"The ledger {missing[0]!r} does not exist.")
    return paths


def history_from_ledgers(folder_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                         exclude: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The messages earlier campaigns sent, read from their ledgers (read-only), as a send history.

    ``folder_or_paths``: a folder (every SQLite file in it that is a ledger; other files are
    ignored), one ledger file, or a list of them. Columns: ``recipient``, ``sent_at`` (tz-aware
    UTC: the batch's intent time, or the time the service scheduled the message for), ``state``
    (``accepted`` or ``unknown``: the rows that count, see the module docstring), ``ledger`` (its
    path) and ``batch``. A row sent again in a later batch appears once per batch that counts.
    ``exclude``: a ledger left out (the running campaign's own, so resuming it never caps its rows).

        >>> history = history_from_ledgers("campaigns/")  # doctest: +SKIP
        >>> frequency_capped(contacts["phone"], history, n=2, days=7, now=now)  # doctest: +SKIP
    """
    left_out = Path(exclude).resolve() if isinstance(exclude, (str, os.PathLike)) else None
    frames = []
    for path in _ledger_paths(folder_or_paths):
        if left_out is None or path.resolve() != left_out:
            with Ledger(path, read_only=True) as ledger:  # one row per (row, batch), nothing written
                rows = ledger.batch_rows()
            scheduled = pd.to_datetime(rows["scheduled_at"], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
            sent_at = scheduled.fillna(rows["intent_at"].astype("datetime64[us, UTC]"))
            frames.append(pd.DataFrame({"recipient": rows["recipient"], "sent_at": sent_at, "state": rows["state"],
                                        "ledger": str(path), "batch": rows["batch"]})[rows["state"].isin(SPENT_STATES)])
    history = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(_HISTORY_COLUMNS))
    return history.astype(_HISTORY_COLUMNS)
