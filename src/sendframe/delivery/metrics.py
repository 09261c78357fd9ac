"""Delivery metrics per campaign, sending, country, operator (country and MNC) or send hour.

    >>> delivery_summary(results, callbacks, records, by=("campaign_id", "country"))  # doctest: +SKIP

Built on ``outcomes.message_outcomes`` (one tidy row per recipient), so the dashboards and this
summary count a message the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from sendframe.errors import InputError
from sendframe.delivery.outcomes import FAILED_STATUSES, message_outcomes, operator_label
from sendframe.scale.callbacks import summary_partitions
from sendframe.scale.runtime import is_dask_frame

DIMENSIONS: tuple[str, ...] = ("campaign_id", "sending_id", "country", "operator", "mnc", "send_hour")
SUMMARY_COLUMNS: tuple[str, ...] = (
    "sent", "accepted", "rejected", "not_sent", "unknown_outcome", "delivered", "failed", "expired", "pending",
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


def delivery_summary(
    results: pd.DataFrame | None = None,
    callbacks: pd.DataFrame | None = None,
    records: Any = None,
    *,
    by: Sequence[str] | str = ("campaign_id",),
    estimate: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Sent, accepted, delivered, failed, expired, pending, delivery rate, time to delivery, clicks, cost.

    ``results`` is the send frame (``send_sms`` ...), ``callbacks`` the frame of ``read_callbacks``,
    ``records`` the value of ``fetch_records``, ``estimate`` the frame of ``sendframe.estimate``
    on the results' index (for ``estimated_cost``). ``by`` is any of campaign_id, sending_id,
    country, operator, mnc, send_hour. ``operator`` is country and MNC in one label (``"ES 01"``);
    an MNC is only unique within a country, so grouping by ``mnc`` also groups by ``country``
    (added just before it when not asked for). ``delivery_rate`` is delivered / accepted, and the
    column ``delivery_rate_denominator`` says so. Times are seconds from sending to delivery;
    the median and 95th percentile are over delivered messages. ``rejected`` counts rows the
    service refused, ``not_sent`` rows never attempted (the next run with the ledger sends them).
    Statuses come from ``message_outcomes``: a notification without a status counts by its
    delivery value.

    >>> delivery_summary(results, callbacks, by="country")[["accepted", "delivered", "delivery_rate"]]  # doctest: +SKIP
    """
    if is_dask_frame(results) or is_dask_frame(callbacks):  # a tree reduction; a small pandas answer (sendframe.scale)
        return summary_partitions(delivery_summary, message_outcomes, results, callbacks, by=by, records=records, estimate=estimate)
    keys = [by] if isinstance(by, str) else list(by)
    unknown = [key for key in keys if key not in DIMENSIONS]
    if unknown:
        raise InputError(f"delivery_summary cannot group by {unknown}; choose from {list(DIMENSIONS)}.")
    if "mnc" in keys and "country" not in keys:  # "01" in Spain and "01" in the UK are two operators
        keys.insert(keys.index("mnc"), "country")
    if results is None:
        results = _results_from(callbacks, records)
    recipients = next((results[c] for c in ("recipient", "to", "phone") if c in results), None)
    outcomes = message_outcomes(results, callbacks, records, estimate=estimate, recipients=recipients)
    send_time = next((results[c] for c in _SEND_TIME_COLUMNS if c in results), None)
    sent_at = pd.to_datetime(send_time, utc=True).fillna(outcomes["sent_at"]) if send_time is not None else outcomes["sent_at"]
    outcomes["send_hour"] = sent_at.dt.floor("h")
    outcomes["operator"] = operator_label(outcomes["country"], outcomes["mnc"])
    if send_time is not None:  # the send time from the results is the start of the clock when no sent event is known
        outcomes["seconds_to_delivery"] = outcomes["seconds_to_delivery"].fillna(
            (outcomes["delivered_at"] - sent_at).dt.total_seconds()
        )
    status = outcomes["status"].astype("string")
    outcome = outcomes["outcome"].astype("string")
    flags = pd.DataFrame({
        "sent": 1,
        "accepted": (outcome == "accepted").astype(int),
        "rejected": (outcome == "rejected").astype(int),
        "not_sent": (outcome == "not_sent").astype(int),  # never attempted: the next run with the ledger sends it
        "unknown_outcome": (outcome == "unknown").astype(int),
        "delivered": (status == "DELIVRD").astype(int),
        "failed": status.isin(_FAILED).astype(int),
        "expired": (status == "EXPIRED").astype(int),
        "pending": ((outcome == "accepted") & (status == "PENDING")).astype(int),
        "clicks": outcomes["clicked"].fillna(False).astype(int),
    }, index=outcomes.index)
    groups = outcomes[keys].copy()
    table = pd.concat([groups, flags, outcomes[["seconds_to_delivery", "estimated_cost", "billed_cost"]]], axis=1)
    grouped = table.groupby(keys, dropna=False, observed=True, sort=True)
    summary = grouped[list(flags.columns)].sum()
    summary["delivery_rate"] = (summary["delivered"] / summary["accepted"].where(summary["accepted"] > 0)).astype("Float64")
    summary["delivery_rate_denominator"] = "accepted"
    seconds = grouped["seconds_to_delivery"]
    summary["median_seconds_to_delivery"] = seconds.median()
    summary["p95_seconds_to_delivery"] = seconds.quantile(0.95)
    summary["estimated_cost"] = grouped["estimated_cost"].sum(min_count=1)
    summary["billed_cost"] = grouped["billed_cost"].sum(min_count=1)
    summary["delivery_rate_denominator"] = summary["delivery_rate_denominator"].astype("string")
    return summary[list(SUMMARY_COLUMNS)].reset_index()
