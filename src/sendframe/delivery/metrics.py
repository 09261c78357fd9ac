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

import pandas as pd

from sendframe.delivery.outcomes import (
    FAILED_STATUSES,
    OUTCOME_COLUMNS,
    SKIPPED_OUTCOMES,
    message_outcomes,
    operator_label,
    outcomes,
)
from sendframe.errors import InputError
from sendframe.options import keyword_checked
from sendframe.scale.callbacks import summary_partitions
from sendframe.scale.runtime import is_dask_frame

# the columns derived here for grouping, besides those of the outcome table and the contacts
DIMENSIONS: tuple[str, ...] = ("campaign_id", "sending_id", "country", "operator", "mnc", "send_hour")
SUMMARY_COLUMNS: tuple[str, ...] = (
    "sent", "skipped", "accepted", "rejected", "not_sent", "unknown_outcome", "delivered", "failed", "expired",
    "pending",
    "delivery_rate", "delivery_rate_denominator", "median_seconds_to_delivery", "p95_seconds_to_delivery",
    "clicks", "estimated_cost", "billed_cost",
)
_SEND_TIME_COLUMNS = ("sent_at", "send_time", "created_at")
_FAILED = tuple(sorted(FAILED_STATUSES - {"EXPIRED"}))  # expired has its own column


def _results_from(callbacks: pd.DataFrame | None, records: Any) -> pd.DataFrame:
    """A send-result-like frame when no results are at hand: every message seen counts as accepted."""
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


def _is_outcome_table(frame: pd.DataFrame) -> bool:
    return set(OUTCOME_COLUMNS) <= set(frame.columns)


@keyword_checked
def delivery_summary(
    results: pd.DataFrame | None = None,
    callbacks: pd.DataFrame | None = None,
    records: Any = None,
    *,
    by: Sequence[str] | str = ("campaign_id",),
    estimate: pd.DataFrame | None = None,
    contacts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Sent, skipped, accepted, delivered, failed, expired, pending, delivery rate, time to delivery, clicks, cost.

    ``results`` is the send frame (``send_sms`` ...) or the outcome table of ``sendframe.outcomes``
    (then given alone: ``delivery_summary(outcomes, by="city")``), ``callbacks`` the frame of ``read_callbacks``,
    ``records`` the value of ``fetch_records``, ``estimate`` the frame of ``msg.estimate``
    on the results' index (for ``estimated_cost``), ``contacts`` the contact table the results
    were sent from. ``by`` is one column or a list of them: any column of the outcome table
    (``sendframe.outcomes``: campaign_id, sending_id, country, mnc, status, outcome, ...), any
    column of ``contacts`` (a segment, a city, ...), ``operator`` or ``send_hour``.
    ``operator`` is country and MNC in one label (``"ES 01"``); an MNC is only unique within a
    country, so grouping by ``mnc`` also groups by ``country`` (added just before it when not
    asked for). ``delivery_rate`` is delivered / accepted, and the column
    ``delivery_rate_denominator`` says so. Times are seconds from sending to delivery; the median
    and 95th percentile are over delivered messages. ``sent`` counts the rows handed to the send
    (all but the skipped ones), ``skipped`` the rows a send left out (``skipped_*`` outcomes),
    ``rejected`` rows the service refused, ``not_sent`` rows never attempted (the next run with
    the ledger sends them). Statuses come from ``message_outcomes``: a notification without a
    status counts by its delivery value.

    >>> delivery_summary(results, callbacks, by="country")[["accepted", "delivered", "delivery_rate"]]  # doctest: +SKIP
    """
    if is_dask_frame(results) or is_dask_frame(callbacks):  # a tree reduction; a small pandas answer (sendframe.scale)
        if contacts is not None:
            raise InputError("delivery_summary of Dask frames takes no contacts=: join the contact columns to the "
                             "results first (results.join(contacts[[...]])) and group by them.")
        return summary_partitions(delivery_summary, message_outcomes, results, callbacks, by=by, records=records,
                                  estimate=estimate)
    keys = [by] if isinstance(by, str) else list(by)
    if results is None:
        if contacts is not None:
            raise InputError("delivery_summary needs the send results to join contacts to: pass results= too.")
        results = _results_from(callbacks, records)
    if _is_outcome_table(results):  # already sendframe.outcomes(...): summarise it as it is
        if callbacks is not None or records is not None or estimate is not None:
            raise InputError("delivery_summary(outcomes) takes the outcome table alone: its callbacks, records and "
                             "estimate are already in it.")
        table = results if contacts is None else results.join(contacts, rsuffix="_contact")
    else:
        table = outcomes(results, callbacks, records, contacts, estimate=estimate)
    return summarise_outcomes(table, by=keys, send_time=send_time_of(results))


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

    >>> table = message_outcomes(pd.DataFrame({"id": ["a1", None], "outcome": ["accepted", "rejected"]}))
    >>> summarise_outcomes(table, by="outcome")[["outcome", "sent", "accepted", "rejected"]].values.tolist()
    [['accepted', 1, 1, 0], ['rejected', 1, 0, 1]]
    """
    keys = [by] if isinstance(by, str) else list(by)
    sent_at = table["sent_at"]
    if send_time is not None:
        sent_at = pd.to_datetime(send_time, utc=True).reindex(table.index).fillna(sent_at)
    table = table.assign(send_hour=sent_at.dt.floor("h"), operator=operator_label(table["country"], table["mnc"]))
    _check_keys(keys, table)
    if "mnc" in keys and "country" not in keys:  # "01" in Spain and "01" in the UK are two operators
        keys.insert(keys.index("mnc"), "country")
    if send_time is not None:  # the send time from the results is the start of the clock when no sent event is known
        from_send = (table["delivered_at"] - sent_at).dt.total_seconds()
        table = table.assign(seconds_to_delivery=table["seconds_to_delivery"].fillna(from_send))
    status = table["status"].astype("string")
    outcome = table["outcome"].astype("string")

    def count(mask: pd.Series) -> pd.Series:
        return mask.fillna(False).astype(int)

    skipped = outcome.isin(list(SKIPPED_OUTCOMES))
    flags = pd.DataFrame({
        "sent": count(outcome.notna() & ~skipped),
        "skipped": count(skipped),
        "accepted": count(outcome == "accepted"),
        "rejected": count(outcome == "rejected"),
        "not_sent": count(outcome == "not_sent"),  # never attempted: the next run with the ledger sends it
        "unknown_outcome": count(outcome == "unknown"),
        "delivered": count(status == "DELIVRD"),
        "failed": count(status.isin(_FAILED)),
        "expired": count(status == "EXPIRED"),
        "pending": count((outcome == "accepted") & (status == "PENDING")),
        "clicks": count(table["clicked"]),
    }, index=table.index)
    groups = table[keys].copy()
    groups.columns = names = [f"_by{n}" for n in range(len(keys))]  # a key may be named like a count
    counted = pd.concat([groups, flags, table[["seconds_to_delivery", "estimated_cost", "billed_cost"]]], axis=1)
    grouped = counted.groupby(names, dropna=False, observed=True, sort=True)
    summary = grouped[list(flags.columns)].sum()
    rate = summary["delivered"] / summary["accepted"].where(summary["accepted"] > 0)
    summary["delivery_rate"] = rate.astype("Float64")
    summary["delivery_rate_denominator"] = "accepted"
    seconds = grouped["seconds_to_delivery"]
    summary["median_seconds_to_delivery"] = seconds.median()
    summary["p95_seconds_to_delivery"] = seconds.quantile(0.95)
    summary["estimated_cost"] = grouped["estimated_cost"].sum(min_count=1)
    summary["billed_cost"] = grouped["billed_cost"].sum(min_count=1)
    summary["delivery_rate_denominator"] = summary["delivery_rate_denominator"].astype("string")
    summary = summary[list(SUMMARY_COLUMNS)]
    summary.index = summary.index.set_names(keys)
    return summary.reset_index()


def _check_keys(keys: list[str], table: pd.DataFrame) -> None:
    """Every key is a column of the outcome table (with the contacts' columns and the derived ones)."""
    if not keys:
        raise InputError("delivery_summary needs at least one column to group by (by=...).")
    columns = [str(c) for c in table.columns]
    for key in keys:
        if key in SUMMARY_COLUMNS:
            raise InputError(f"delivery_summary cannot group by {key!r}: the summary has a column of that name; "
                             f"rename it first (e.g. contacts.rename(columns={{{key!r}: 'my_{key}'}})).")
        if key not in table.columns:
            close = difflib.get_close_matches(str(key), columns, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InputError(f"delivery_summary cannot group by {key!r}: it is not a column of the outcomes or the "
                             f"contacts.{hint} Columns: {', '.join(columns)}.")
