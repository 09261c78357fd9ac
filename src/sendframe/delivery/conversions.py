"""Conversions: which recipients did what the campaign asked (bought, signed up) within a window after it.

:func:`conversions` joins the per-recipient outcome table (:func:`~sendframe.delivery.outcomes.outcomes`)
with any table of events (an orders export, a web analytics export). The rules, in one place
(docs/api-notes.md, "Conversions"):

- **The same person.** An event's recipient and an outcome's are compared by
  :func:`~sendframe.api.recipient_columns.recipient_keys`, of the kind the campaign's recipients are
  (``"phone"`` when none is an email address, ``"email"`` when all are, else ``"any"``):
  ``+34 600 12 34 56`` in the orders is the ``34600123456`` the message went to; an email address
  matches case-insensitively.
- **The window.** Each recipient's window starts at its anchor (``sent``: ``sent_at``, ``delivered``:
  ``delivered_at``, ``clicked``: ``clicked_at``) and lasts ``window`` (a fixed length pandas reads as a
  Timedelta: ``"5D"``, ``"12h"``, ``pd.Timedelta(days=5)``): an event counts when
  ``anchor <= time < anchor + window``. A recipient without its anchor (not delivered, not clicked,
  not sent) has no window and does not convert. Events before the anchor never count.
- **The holdout.** Rows whose ``outcome`` is ``holdout`` were never sent; each is anchored at the
  campaign's first send time (the earliest ``sent_at`` of the table), whatever ``anchor`` is, so the
  holdout's window is the one a sent recipient's would have been and it is a fair control.
- **Once, then the sum.** The first counted event converts the recipient (``converted_at`` is its
  time); ``revenue`` is the sum of ``value`` over every counted event in the window (0 when none; a
  missing value adds nothing; without ``value`` the column is missing, NaN).
- **Time zones.** Event times must carry a zone (tz-aware, or ISO text with an offset); a naive time is
  refused with a hint, never guessed. Everything is compared as instants; ``converted_at`` is UTC.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"recipient": ["34600000001", "34600000002", "34600000003"],
    ...     "outcome": ["accepted", "accepted", "holdout"],
    ...     "sent_at": pd.to_datetime(["2026-11-20 10:00", "2026-11-20 10:00", None], utc=True),
    ...     "delivered_at": pd.to_datetime(["2026-11-20 10:01", None, None], utc=True)})
    >>> orders = pd.DataFrame({"phone": ["+34 600 00 00 01", "600000003", "34600000001"],
    ...     "time": pd.to_datetime(["2026-11-21 09:00", "2026-11-22 12:00", "2026-11-19 09:00"], utc=True),
    ...     "amount": [30.0, 12.5, 99.0]})
    >>> found = conversions(table, orders, window="5D", on="phone", value="amount")
    >>> found[["converted", "revenue"]].values.tolist()
    [[True, 30.0], [False, 0.0], [True, 12.5]]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.delivery.outcomes import positions_among, text_array
from sendframe.errors import InputError
from sendframe.options import keyword_checked

__all__ = ["ANCHORS", "CONVERSION_COLUMNS", "conversions"]

ANCHORS: dict[str, str] = {"sent": "sent_at", "delivered": "delivered_at", "clicked": "clicked_at"}
CONVERSION_COLUMNS: tuple[str, ...] = ("converted", "converted_at", "revenue")
HOLDOUT_OUTCOME = "holdout"


def _window(window: object) -> np.timedelta64:
    try:
        length = pd.Timedelta(window)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise InputError(f"window={window!r} is not a length of time; give e.g. '5D', '12h' or "
                         "pd.Timedelta(days=5).") from None
    if pd.isna(length) or length <= pd.Timedelta(0):
        raise InputError(f"window must be a positive length of time, e.g. '5D'; got {window!r}.")
    return np.timedelta64(length.value, "ns")


def _utc_nanoseconds(values: pd.Series, where: str) -> np.ndarray:
    """Each time as int64 nanoseconds since the epoch (UTC), NaT as the int64 minimum; naive times refused."""
    parsed: pd.Series
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        parsed = values
    elif pd.api.types.is_datetime64_dtype(values.dtype):
        raise InputError(f"{where} has no time zone: give a zone, e.g. .dt.tz_localize('UTC') when the times "
                         "are UTC, or .dt.tz_localize('Europe/Madrid') when they are Madrid's wall clock.")
    else:
        try:
            parsed = pd.to_datetime(values, format="ISO8601")
        except ValueError:  # offsets differ from row to row: the instants are still well defined
            try:
                parsed = pd.to_datetime(values, utc=True, format="ISO8601")
            except (ValueError, TypeError) as error:
                raise InputError(f"{where} must hold date-times with a time zone: {error}") from None
        except TypeError as error:
            raise InputError(f"{where} must hold date-times with a time zone: {error}") from None
        if not isinstance(parsed.dtype, pd.DatetimeTZDtype):
            raise InputError(f"{where} has times without a time zone (e.g. {values.dropna().iloc[0]!r}): give "
                             "an offset ('2026-11-21T09:00:00+01:00') or make the column tz-aware.")
    stamps = parsed.dt.tz_convert("UTC").astype("datetime64[ns, UTC]").dt.tz_localize(None)
    return np.asarray(stamps.to_numpy(dtype="datetime64[ns]")).view(np.int64)


def _chosen_events(events: pd.DataFrame, event: Mapping[str, object] | None) -> np.ndarray:
    """Which rows of ``events`` count: every row, or those whose columns hold one of the names given."""
    if event is None:
        return np.ones(len(events), dtype=bool)
    if not isinstance(event, Mapping) or not event:
        raise InputError(f"event must map an event-name column to the names to count, e.g. "
                         f"event={{'type': 'purchase'}} or {{'type': ['purchase', 'signup']}}; got {event!r}.")
    chosen = np.ones(len(events), dtype=bool)
    for column, names in event.items():
        if column not in events:
            raise InputError(f"event names the column {column!r}, which the events lack; "
                             f"their columns are: {', '.join(map(str, events.columns))}.")
        wanted = [names] if isinstance(names, str) or not isinstance(names, Iterable) else list(names)
        chosen &= events[column].isin(wanted).to_numpy(dtype=bool, na_value=False)
    return chosen


def _values(events: pd.DataFrame, value: str) -> np.ndarray:
    if value not in events:
        raise InputError(f"value={value!r} is not a column of the events; "
                         f"their columns are: {', '.join(map(str, events.columns))}.")
    numbers = pd.to_numeric(events[value], errors="coerce")
    bad = numbers.isna() & events[value].notna()
    if bad.any():
        position = int(np.argmax(bad.to_numpy()))
        raise InputError(f"The events' {value!r} must hold numbers (an order's amount); row {events.index[position]!r} "
                         f"has {events[value].iloc[position]!r}.")
    return numbers.to_numpy(dtype=float, na_value=0.0)


def _recipient_kind(recipients: pd.Series) -> str:
    """``phone`` when no recipient is an email address, ``email`` when all are, else ``any``."""
    emails = recipients.astype("string").str.contains("@", regex=False).to_numpy(dtype=bool, na_value=False)
    present = recipients.notna().to_numpy(dtype=bool)
    if not emails.any():
        return "phone"
    return "email" if emails[present].all() else "any"


def _anchors(outcomes: pd.DataFrame, anchor: str) -> np.ndarray:
    """Each row's window start (int64 ns, NaT where it has none); the holdout at the first send time."""
    if anchor not in ANCHORS:
        raise InputError(f"anchor={anchor!r} is not one of {list(ANCHORS)}.")
    column = ANCHORS[anchor]
    if column not in outcomes:
        hint = " (a click time per recipient; message_outcomes gives only whether it clicked)" \
            if anchor == "clicked" else ""
        raise InputError(f"anchor={anchor!r} needs the column {column!r}{hint}; the outcome table has: "
                         f"{', '.join(map(str, outcomes.columns))}.")
    starts = _utc_nanoseconds(outcomes[column], f"The outcome table's {column!r}")
    if "outcome" in outcomes:
        holdout = outcomes["outcome"].astype("string").eq(HOLDOUT_OUTCOME).to_numpy(dtype=bool, na_value=False)
        if holdout.any():
            sent = _utc_nanoseconds(outcomes["sent_at"], "The outcome table's 'sent_at'") \
                if "sent_at" in outcomes else np.array([], dtype=np.int64)
            sent = sent[sent != np.iinfo(np.int64).min]
            starts = starts.copy()
            starts[holdout] = sent.min() if len(sent) else np.iinfo(np.int64).min
    return starts


@keyword_checked
def conversions(
    outcomes: pd.DataFrame,
    events: pd.DataFrame,
    *,
    window: str | pd.Timedelta,
    anchor: str = "delivered",
    on: str = "recipient",
    at: str = "time",
    event: Mapping[str, object] | None = None,
    value: str | None = None,
    default_region: str | None = "ES",
) -> pd.DataFrame:
    """The outcome table with ``converted``, ``converted_at`` and ``revenue``: who acted within ``window``.

    ``outcomes`` is :func:`sendframe.outcomes`' table (``recipient``, ``outcome``, ``sent_at``,
    ``delivered_at``; a ``clicked_at`` column for ``anchor="clicked"``). ``events`` is any frame with a
    recipient column ``on`` (phones in any form, or emails; ``default_region``, the region the contacts were
    sent with, reads national numbers on both sides),
    a tz-aware time column ``at``, optionally the event-name columns and the names to count
    (``event={"type": "purchase"}``) and a numeric ``value`` column summed into ``revenue``. The rules
    (window ``[anchor, anchor + window)``, holdout anchored at the first send time, first event
    converts once, events before the anchor never count) are those of the module docstring. Array work:
    the events are sorted once by (recipient, time) and each window is found by binary search, so a
    million recipients and millions of events take seconds. Returns a new frame; the inputs are not
    modified, and ``attrs`` gains ``conversion_window``, ``conversion_anchor``.

        >>> import pandas as pd
        >>> table = pd.DataFrame({"recipient": ["34600000001"], "outcome": ["accepted"],
        ...     "sent_at": pd.to_datetime(["2026-11-20 10:00"], utc=True),
        ...     "delivered_at": pd.to_datetime(["2026-11-20 10:01"], utc=True)})
        >>> events = pd.DataFrame({"recipient": ["600000001", "600000001"], "type": ["visit", "purchase"],
        ...     "time": ["2026-11-20T12:00:00+01:00", "2026-11-24T09:00:00+01:00"]})
        >>> found = conversions(table, events, window="5D", event={"type": "purchase"})
        >>> bool(found["converted"].iloc[0]), str(found["converted_at"].iloc[0])
        (True, '2026-11-24 08:00:00+00:00')
    """
    if not isinstance(outcomes, pd.DataFrame) or not isinstance(events, pd.DataFrame):
        raise InputError("conversions needs the outcome table and the events as pandas DataFrames.")
    length = _window(window)
    for column, where in ((on, "on"), (at, "at")):
        if column not in events:
            raise InputError(f"{where}={column!r} is not a column of the events; their columns are: "
                             f"{', '.join(map(str, events.columns))}.")
    if "recipient" not in outcomes:
        raise InputError("The outcome table needs a 'recipient' column (sendframe.outcomes gives it).")
    missing = np.iinfo(np.int64).min
    starts = _anchors(outcomes, anchor)
    chosen = _chosen_events(events, event)
    event_times = _utc_nanoseconds(events[at], f"The events' {at!r}")
    amounts = _values(events, value) if value is not None else np.zeros(len(events))

    # one integer per person, shared by both tables, both keyed the way the campaign's recipients are (phones,
    # emails, or each value by what it is); the outcome's recipient is the contact's value as the send got it
    # (a national number among them), so both sides read national numbers in default_region
    kind = _recipient_kind(outcomes["recipient"])
    row_keys = recipient_keys(outcomes["recipient"], kind, default_region=default_region)
    event_keys = recipient_keys(events[on], kind, default_region=default_region)
    row_codes, people = pd.factorize(row_keys)
    event_codes = positions_among(text_array(event_keys), text_array(pd.Series(people, dtype="str")))
    kept = chosen & (event_codes >= 0) & (event_times != missing)
    event_codes, event_times, amounts = event_codes[kept], event_times[kept], amounts[kept]
    has_window = (row_codes >= 0) & (starts != missing)
    ends = np.where(has_window, starts + length.astype(np.int64), missing)

    # (person, time) as one sortable integer: the time's rank among every time in play, so one binary
    # search per window bound finds its events without a Python loop or a merge of every pair
    ranks = np.unique(np.concatenate([event_times, starts[has_window], ends[has_window]]), return_inverse=True)[1]
    scale = np.int64(ranks.max(initial=0) + 1)
    n_events = len(event_times)
    event_order = np.argsort(event_codes * scale + ranks[:n_events], kind="stable")
    sorted_keys = (event_codes * scale + ranks[:n_events])[event_order]
    start_keys = row_codes[has_window] * scale + ranks[n_events:n_events + has_window.sum()]
    end_keys = row_codes[has_window] * scale + ranks[n_events + has_window.sum():]
    first = np.searchsorted(sorted_keys, start_keys, side="left")
    after = np.searchsorted(sorted_keys, end_keys, side="left")
    totals = np.concatenate([[0.0], np.cumsum(amounts[event_order])])

    converted = np.zeros(len(outcomes), dtype=bool)
    converted[has_window] = after > first
    converted_at = np.full(len(outcomes), missing, dtype=np.int64)
    sorted_times = event_times[event_order]
    hit = np.flatnonzero(has_window)[after > first]
    converted_at[hit] = sorted_times[first[after > first]]
    revenue = np.zeros(len(outcomes))
    revenue[has_window] = totals[after] - totals[first]

    out = outcomes.copy()
    out["converted"] = converted
    out["converted_at"] = pd.Series(converted_at.view("datetime64[ns]"), index=outcomes.index).dt.tz_localize("UTC")
    out["revenue"] = revenue if value is not None else np.nan
    out.attrs = {**outcomes.attrs, "conversion_window": pd.Timedelta(length), "conversion_anchor": anchor}
    return out
