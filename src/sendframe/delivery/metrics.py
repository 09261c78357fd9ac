"""Delivery metrics grouped by any column: campaign, country, operator, send hour, or the contacts' own.

    >>> delivery_summary(results, callbacks, records, by=("campaign_id", "country"))  # doctest: +SKIP
    >>> delivery_summary(results, callbacks, contacts=contacts, by="segment")  # doctest: +SKIP

Built on ``outcomes.outcomes`` (one tidy row per recipient), so the dashboards and this summary
count a message the same way.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sendframe.delivery.outcomes import (
    FAILED_STATUSES,
    OUTCOME_COLUMNS,
    operator_label,
    outcomes,
)
from sendframe.delivery.statistics import wilson_intervals
from sendframe.engines import dispatched
from sendframe.errors import InputError
from sendframe.memory import release_unused_memory
from sendframe.options import keyword_checked
from sendframe.send_outcomes import SKIPPED_OUTCOMES

# the columns derived here for grouping, besides those of the outcome table and the contacts
DIMENSIONS: tuple[str, ...] = ("campaign_id", "sending_id", "country", "operator", "mnc", "send_hour")
DERIVED_KEYS: tuple[str, ...] = ("send_hour", "operator")  # made from the outcome table when grouped by
# counts per group, added up as they are (the Dask summary adds up the partitions' counts)
COUNT_COLUMNS: tuple[str, ...] = (
    "sent", "skipped", "accepted", "rejected", "not_sent", "unknown_outcome", "delivered", "failed", "expired",
    "pending", "clicks", "unsubscribes",
)
COST_COLUMNS: tuple[str, ...] = ("estimated_cost", "billed_cost")
# delivered messages whose time to delivery is known, and those of them delivered within FAST_SECONDS: counts too
TIMED, FAST = "_timed", "_fast"
FAST_SECONDS = 5.0
LATENCY_QUANTILES: dict[str, float] = {
    "seconds_to_delivery_p50": 0.5, "seconds_to_delivery_p90": 0.9, "seconds_to_delivery_p95": 0.95,
    "seconds_to_delivery_p99": 0.99,
}
INTERVAL_ALPHA = 0.05  # the Wilson intervals are 95% intervals
# each rate: its numerator and denominator counts; each gets a Wilson interval (<rate>_low, <rate>_high)
RATES: dict[str, tuple[str, str]] = {
    "delivery_rate": ("delivered", "accepted"),
    "delivered_within_5s": (FAST, TIMED),
    "unsubscribe_rate": ("unsubscribes", "accepted"),
}
SUMMARY_COLUMNS: tuple[str, ...] = (
    "sent", "skipped", "accepted", "rejected", "not_sent", "unknown_outcome", "delivered", "failed", "expired",
    "pending",
    "delivery_rate", "delivery_rate_low", "delivery_rate_high", "delivery_rate_denominator",
    *LATENCY_QUANTILES,
    "delivered_within_5s", "delivered_within_5s_low", "delivered_within_5s_high",
    "clicks", "unsubscribes", "unsubscribe_rate", "unsubscribe_rate_low", "unsubscribe_rate_high",
    "estimated_cost", "billed_cost", "cost_per_delivered",
)
_SEND_TIME_COLUMNS = ("sent_at", "send_time", "created_at")
_FAILED = tuple(sorted(FAILED_STATUSES - {"EXPIRED"}))  # expired has its own column


def results_from(callbacks: pd.DataFrame | None, records: Any) -> pd.DataFrame:
    """A send-result-like frame when no results are at hand: every message seen counts as accepted.

    >>> results_from(pd.DataFrame({"id": ["a1", "a1"], "campaign_id": 7, "sending_id": 1}), None)["outcome"].tolist()
    ['accepted']
    """
    frames = []
    if callbacks is not None and not callbacks.empty:
        frames.append(callbacks[["id", "campaign_id", "sending_id"]])
    messages = getattr(records, "messages", None)
    if messages is not None and not messages.empty:
        frames.append(messages[["id", "campaign_id", "sending_id"]])
    if not frames:
        raise InputError("delivery_summary needs at least one of results, callbacks or records.")
    seen = pd.concat(frames, ignore_index=True).dropna(subset=["id"]).drop_duplicates("id").reset_index(drop=True)
    return seen.assign(accepted=True, outcome="accepted")


def is_outcome_table(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is already an outcome table (``sendframe.outcomes``): summarised as it is."""
    return set(OUTCOME_COLUMNS) <= set(frame.columns)


@keyword_checked
@dispatched("results", "callbacks")
def delivery_summary(
    results: pd.DataFrame | None = None,
    callbacks: pd.DataFrame | None = None,
    records: Any = None,
    *,
    by: Sequence[str] | str = ("campaign_id",),
    estimate: pd.DataFrame | None = None,
    contacts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per group of ``by``: what was sent, what became of it, how fast, what it cost, with an interval for each rate.

    ``results`` is the send frame (``send_sms`` ...) or the outcome table of ``sendframe.outcomes``
    (then given alone: ``delivery_summary(outcomes, by="city")``), ``callbacks`` the frame of ``read_callbacks``,
    ``records`` the value of ``fetch_records``, ``estimate`` the frame of ``msg.estimate``
    on the results' index (for ``estimated_cost``), ``contacts`` the contact table the results
    were sent from. ``by`` is one column or a list of them: any column of the outcome table
    (``sendframe.outcomes``: campaign_id, sending_id, country, mnc, status, outcome, ...), any
    column of ``contacts`` (a segment, a city, ...), ``operator`` or ``send_hour``.
    ``operator`` is country and MNC in one label (``"ES 01"``); an MNC is only unique within a
    country, so grouping by ``mnc`` also groups by ``country`` (added just before it when not
    asked for). The groups are the index (named by ``by``, one level per column, sorted), as
    ``DataFrame.groupby`` gives them, so ``summary[["delivered", "delivery_rate"]]`` keeps them.
    Statuses come from ``message_outcomes``: a notification without a status counts by its delivery value.

    The columns, per group:

    - ``sent``: rows handed to the send (every row but the skipped ones); ``skipped``: rows the send
      left out (``skipped_*`` outcomes, the holdout); ``accepted``, ``rejected``: rows the service took,
      refused; ``not_sent``: rows never attempted (the next run with the ledger sends them);
      ``unknown_outcome``: rows whose answer never came.
    - ``delivered``, ``failed`` (UNDELIV, REJECTD, DELETED), ``expired``, ``pending`` (accepted, no final status yet).
    - ``delivery_rate``: delivered / accepted (``delivery_rate_denominator`` says so), with its 95% Wilson
      score interval ``delivery_rate_low``, ``delivery_rate_high`` (statsmodels' ``proportion_confint``;
      every rate is missing where its denominator is 0).
    - ``seconds_to_delivery_p50``, ``_p90``, ``_p95``, ``_p99``: percentiles (linear interpolation, as
      ``Series.quantile``) of the seconds from sending (the sent event, else the results' send time) to the
      delivered notification or event, over the delivered messages whose both times are known.
    - ``delivered_within_5s``: the share of those messages delivered at most 5 s after sending, with its
      Wilson interval (``_low``, ``_high``). Notifications carry whole minutes: with records (whose events
      carry seconds) the times are exact.
    - ``clicks``: messages whose link was clicked (records); ``unsubscribes``: messages whose recipient
      confirmed the ``{UNSUB_URL}`` page (the record's ``unsubscribed`` event); ``unsubscribe_rate``:
      unsubscribes / accepted, with its Wilson interval. Over accepted, as the delivery rate: an
      unsubscribe proves its message arrived even where no delivery report did.
    - ``estimated_cost`` (the estimate's, of the group's rows), ``billed_cost`` (billed once per message,
      as the notifications say); each missing where no row has one. ``cost_per_delivered``: billed cost /
      delivered, or estimated cost / delivered where nothing is billed yet; missing when none was delivered.

    >>> delivery_summary(results, callbacks, by="country")[["accepted", "delivered", "delivery_rate"]]  # doctest: +SKIP
    """
    keys = [by] if isinstance(by, str) else list(by)
    if results is None:
        if contacts is not None:
            raise InputError("delivery_summary needs the send results to join contacts to: pass results= too.")
        results = results_from(callbacks, records)
    if is_outcome_table(results):  # already sendframe.outcomes(...): summarise it as it is
        if callbacks is not None or records is not None or estimate is not None:
            raise InputError("delivery_summary(outcomes) takes the outcome table alone: its callbacks, records and "
                             "estimate are already in it.")
        # suffixes=: pandas 3 deprecates rsuffix=, and pandas-stubs do not know suffixes yet
        table = results if contacts is None else results.join(contacts, suffixes=("", "_contact"))  # type: ignore[call-arg]
        send_time = None  # its clock is its own sent_at, already in its seconds_to_delivery
    else:
        table = outcomes(results, callbacks, records, contacts, estimate=estimate)
        send_time = send_time_of(results)
    summary = summarise_outcomes(table, by=keys, send_time=send_time)
    # the grouping's temporaries (about 200 bytes a row) leave freed pages that the next step would add to
    release_unused_memory()
    return summary


def send_time_of(results: pd.DataFrame) -> pd.Series | None:
    """The send time a results frame carries (``sent_at``, ``send_time`` or ``created_at``), or None.

    >>> send_time_of(pd.DataFrame({"id": ["a1"]})) is None
    True
    """
    return next((results[c] for c in _SEND_TIME_COLUMNS if c in results), None)


def summarise_outcomes(
    table: pd.DataFrame,
    *,
    by: Sequence[str] | str = ("campaign_id",),
    send_time: pd.Series | None = None,
) -> pd.DataFrame:
    """``delivery_summary`` of an outcome table already built (``sendframe.outcomes``, ``message_outcomes``).

    ``send_time`` is the send results' own send time (``send_time_of(results)``), the start of the clock
    where no sent event is known. The table is not modified.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> table = message_outcomes(pd.DataFrame({"id": ["a1", None], "outcome": ["accepted", "rejected"]}))
    >>> summary = summarise_outcomes(table, by="outcome")
    >>> summary.index.tolist(), summary["accepted"].tolist(), summary["rejected"].tolist()
    (['accepted', 'rejected'], [1, 0], [0, 1])
    """
    table, keys = grouping_table(table, by=by, send_time=send_time)
    # one grouping after the other, each one's freed pages handed back before the next step (the intervals'
    # first call imports statsmodels): at a million rows grouped by a city the summary's peak was 170 MiB above
    # its start, the three on top of each other; one after the other it is 90
    sums = group_sums(table, keys)
    release_unused_memory()
    latency = latency_quantiles(table, keys)
    release_unused_memory()
    return finished_summary(sums, latency)


def latency_quantiles(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys`` (the index): the ``LATENCY_QUANTILES`` of the known seconds to delivery.

    >>> table = pd.DataFrame({"country": ["ES", "ES", "GB"], "seconds_to_delivery": [1.0, 3.0, None]})
    >>> latency_quantiles(table, ["country"])["seconds_to_delivery_p50"].tolist()
    [2.0]
    """
    seconds = table["seconds_to_delivery"]
    timed = seconds.notna().to_numpy()  # the quantiles skip missing times: grouped, only the known ones
    grouped = seconds[timed].groupby([table[key][timed] for key in keys], dropna=False, observed=True, sort=True)
    levels = np.array(list(LATENCY_QUANTILES.values()))
    quantiles = grouped.quantile(levels)  # one sort for all four
    # reindexed: an empty table has no quantile columns to unstack
    latency = quantiles.unstack(level=-1).reindex(columns=levels).set_axis(list(LATENCY_QUANTILES), axis=1)
    latency.index = latency.index.set_names(keys)
    return latency


def grouping_table(table: pd.DataFrame, *, by: Sequence[str] | str,
                   send_time: pd.Series | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The outcome table with the derived columns a summary groups by (``send_hour``, ``operator``: only those
    asked for), and the keys.

    Each key is checked (a column of the table or a derived one, not named like a summary column); ``country``
    goes just before ``mnc`` when not asked for. Where ``send_time`` is given it starts the clock of a message
    without a sent event (its ``seconds_to_delivery``) and gives its ``send_hour``.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> table = message_outcomes(pd.DataFrame({"id": ["a1"], "outcome": ["accepted"]}))
    >>> grouping_table(table, by="mnc")[1]
    ['country', 'mnc']
    """
    keys = [by] if isinstance(by, str) else list(by)
    _check_keys(keys, [*table.columns, *(name for name in DERIVED_KEYS if name not in table)])
    if "mnc" in keys and "country" not in keys:  # "01" in Spain and "01" in the UK are two operators
        keys.insert(keys.index("mnc"), "country")
    sent_at = table["sent_at"]
    if send_time is not None:
        sent_at = pd.to_datetime(send_time, utc=True).reindex(table.index).fillna(sent_at)
    # each made only when grouped by: the operator's text was about 100 bytes a row at the summary's peak
    derived: dict[str, pd.Series] = {}
    if "send_hour" in keys:
        derived["send_hour"] = sent_at.dt.floor("h")
    if "operator" in keys:
        derived["operator"] = operator_label(table["country"], table["mnc"]).astype("string")  # groups as text
    table = table.assign(**derived)
    if send_time is not None:  # the send time from the results is the start of the clock when no sent event is known
        from_send = (table["delivered_at"] - sent_at).dt.total_seconds()
        table = table.assign(seconds_to_delivery=table["seconds_to_delivery"].fillna(from_send))
    return table, keys


def group_sums(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys`` (the index): the counts of ``COUNT_COLUMNS``, the costs, and the delivered messages
    with a known time (``_timed``) and those delivered within 5 s (``_fast``); all of them add up across parts.

    ``table`` is :func:`grouping_table`'s. A cost is missing where no row of the group has one.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> table = message_outcomes(pd.DataFrame({"id": ["a1", None], "outcome": ["accepted", "rejected"]}))
    >>> group_sums(table, ["outcome"])["accepted"].tolist()
    [1, 0]
    """
    status, outcome, seconds = table["status"], table["outcome"], table["seconds_to_delivery"]

    def flag(mask: pd.Series) -> np.ndarray:
        # one byte per row (a bool sums as a count): as int64 the 14 flags were 112 MB per million rows, twice
        return mask.to_numpy(dtype=bool, na_value=False)

    skipped = outcome.isin(list(SKIPPED_OUTCOMES))
    flags = pd.DataFrame({
        "sent": flag(outcome.notna() & ~skipped),
        "skipped": flag(skipped),
        "accepted": flag(outcome == "accepted"),
        "rejected": flag(outcome == "rejected"),
        "not_sent": flag(outcome == "not_sent"),  # never attempted: the next run with the ledger sends it
        "unknown_outcome": flag(outcome == "unknown"),
        "delivered": flag(status == "DELIVRD"),
        "failed": flag(status.isin(_FAILED)),
        "expired": flag(status == "EXPIRED"),
        "pending": flag((outcome == "accepted") & (status == "PENDING")),
        "clicks": flag(table["clicked"]),
        "unsubscribes": flag(table["unsubscribed"]),
        TIMED: flag(seconds.notna()),  # a time to delivery is known only of messages delivered
        FAST: flag(seconds <= FAST_SECONDS),
    }, index=table.index)
    counted = pd.concat([flags, table[list(COST_COLUMNS)].astype(float)], axis=1)
    # grouped by the key columns themselves (not copied beside the counts, which a key may be named like)
    grouped = counted.groupby([table[key] for key in keys], dropna=False, observed=True, sort=True)
    # a column at a time: summed together, the flags were first made 8-byte numbers, 112 bytes a row
    sums = pd.DataFrame({name: grouped[name].sum() for name in flags.columns})
    for cost in COST_COLUMNS:
        sums[cost] = grouped[cost].sum(min_count=1)
    sums.index = sums.index.set_names(keys)
    return sums


def finished_summary(sums: pd.DataFrame, latency: pd.DataFrame) -> pd.DataFrame:
    """The summary of :func:`group_sums`' counts and costs and each group's ``LATENCY_QUANTILES`` (on the same
    index): the rates, their Wilson intervals and the cost per delivered message, in ``SUMMARY_COLUMNS``' order.

    >>> sums = pd.DataFrame({c: [0] for c in COUNT_COLUMNS} | {TIMED: [4], FAST: [3], "estimated_cost": [1.0],
    ...     "billed_cost": [None]}, index=pd.Index([7], name="campaign_id")).assign(accepted=5, delivered=4)
    >>> row = finished_summary(sums, pd.DataFrame(index=sums.index)).iloc[0]
    >>> [round(float(row[c]), 4) for c in ("delivery_rate", "delivery_rate_low", "delivered_within_5s",
    ...                                    "cost_per_delivered")]
    [0.8, 0.3755, 0.75, 0.25]
    """
    out = sums[list(COUNT_COLUMNS)].astype("int64")
    for rate, (part, whole) in RATES.items():
        successes, size = sums[part].to_numpy(dtype=float), sums[whole].to_numpy(dtype=float)
        low, high = wilson_intervals(successes, size, INTERVAL_ALPHA)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(size > 0, successes / size, np.nan)
        for name, values in ((rate, share), (f"{rate}_low", low), (f"{rate}_high", high)):
            out[name] = pd.array(values, dtype="Float64")  # NaN (nothing to divide) becomes <NA>
    out["delivery_rate_denominator"] = pd.Series("accepted", index=out.index, dtype="string")
    for name in LATENCY_QUANTILES:
        out[name] = latency[name].reindex(out.index) if name in latency else np.nan
    for cost in COST_COLUMNS:
        out[cost] = sums[cost].astype(float)
    spent = out["billed_cost"].where(out["billed_cost"].notna(), out["estimated_cost"])
    out["cost_per_delivered"] = spent / out["delivered"].where(out["delivered"] > 0)
    return out[list(SUMMARY_COLUMNS)]


def _check_keys(keys: list[str], columns: Sequence[Any]) -> None:
    """Every key is one of ``columns`` (the outcome table's, with the contacts' and the derived ones)."""
    if not keys:
        raise InputError("delivery_summary needs at least one column to group by (by=...).")
    names = [str(c) for c in columns]
    for key in keys:
        if key in SUMMARY_COLUMNS:
            raise InputError(f"delivery_summary cannot group by {key!r}: the summary has a column of that name; "
                             f"rename it first (e.g. contacts.rename(columns={{{key!r}: 'my_{key}'}})).")
        if key not in columns:
            close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InputError(f"delivery_summary cannot group by {key!r}: it is not a column of the outcomes or the "
                             f"contacts.{hint} Columns: {', '.join(names)}.")
