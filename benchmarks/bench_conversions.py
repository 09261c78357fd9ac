"""Conversions of a 1,000,000-recipient campaign from 5,000,000 order events: conversions vs merge-then-filter.

    python benchmarks/bench_conversions.py            # 1,000,000 recipients, 5,000,000 events
    python benchmarks/bench_conversions.py --quick    # 50,000 recipients, 250,000 events, smoke run

Setup (not timed): an outcome table as ``sendframe.outcomes`` gives it (recipients in API form, 10% holdout,
90% of the sent delivered a few seconds after a send spread over an hour) and an orders export whose phones
are typed as people type them (``+34 6..`` with spaces, ``0034...``, national ``6...``), with times in
Madrid's zone from a day before the campaign to nine days after it, and an amount per order.

Timed, in this one run, both giving ``converted``, ``converted_at`` and ``revenue`` in a 5-day window after
delivery (the holdout from the first send):

- ``sendframe.conversions(outcomes, orders, window="5D", on="phone", at="time", value="amount")``;
- the analyst's pandas: the phones keyed with the same ``recipient_keys`` (so both answer the same question),
  ``merge`` of every order with its recipient's row, a filter to the window, ``groupby`` for the first time
  and the sum, joined back. Its answer is checked equal to ``conversions``'.

Prints the seconds of each and the ratio (after an untimed warm-up of both on a few rows: the numbering
tables load once per process). The goal (issue 20): at most 10 s for 1M recipients and 5M events.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

import sendframe
from sendframe.api.recipient_columns import recipient_keys

GOAL_SECONDS = 10.0


def campaign(recipients: int, events: int, seed: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    national = 600_000_000 + rng.choice(99_999_999, recipients, replace=False)
    start = pd.Timestamp("2026-11-20 10:00", tz="UTC")
    holdout = rng.random(recipients) < 0.1
    sent = start + pd.to_timedelta(rng.integers(0, 3600, recipients), unit="s")
    delivered = pd.Series(sent + pd.to_timedelta(rng.integers(1, 30, recipients), unit="s"))
    delivered[(rng.random(recipients) < 0.1) | holdout] = pd.NaT
    outcomes = pd.DataFrame({
        "recipient": pd.Series(np.char.add("34", national.astype(str)), dtype="str"),
        "outcome": np.where(holdout, "holdout", "accepted"),
        "sent_at": pd.Series(sent).where(~holdout),
        "delivered_at": delivered,
        "variant": np.where(holdout, "holdout", "A"),
    })
    who = pd.Series(national[rng.integers(0, recipients, events)].astype(str))
    style = rng.integers(0, 3, events)
    spaced = "+34 " + who.str[:3] + " " + who.str[3:6] + " " + who.str[6:]
    phones = np.where(style == 0, spaced, np.where(style == 1, "0034" + who, who))
    times = (start - pd.Timedelta("1D") + pd.to_timedelta(rng.integers(0, 10 * 86400, events), unit="s"))
    orders = pd.DataFrame({"phone": phones, "time": times.tz_convert("Europe/Madrid"),
                           "amount": rng.lognormal(3.4, 1.0, events).round(2)})
    return outcomes, orders


def merge_then_filter(outcomes: pd.DataFrame, orders: pd.DataFrame) -> pd.DataFrame:
    """What an analyst writes: key both sides, merge every order with its recipient, filter, group, join back."""
    first_send = outcomes["sent_at"].min()
    rows = outcomes.assign(key=recipient_keys(outcomes["recipient"], "phone", default_region=None),
                           anchor=outcomes["delivered_at"].where(outcomes["outcome"] != "holdout", first_send),
                           row=np.arange(len(outcomes)))
    keyed = orders.assign(key=recipient_keys(orders["phone"], "phone", default_region="ES"))
    pairs = rows[["row", "key", "anchor"]].merge(keyed[["key", "time", "amount"]], on="key")
    inside = pairs[(pairs["time"] >= pairs["anchor"]) & (pairs["time"] < pairs["anchor"] + pd.Timedelta("5D"))]
    per_row = inside.groupby("row").agg(converted_at=("time", "min"), revenue=("amount", "sum"))
    out = outcomes.copy()
    out["converted_at"] = per_row["converted_at"].reindex(range(len(outcomes))).dt.tz_convert("UTC").to_numpy()
    out["converted"] = out["converted_at"].notna()
    out["revenue"] = per_row["revenue"].reindex(range(len(outcomes)), fill_value=0.0).to_numpy()
    return out


def timed(label: str, work: object) -> tuple[float, pd.DataFrame]:
    started = time.perf_counter()
    answer = work()  # type: ignore[operator]
    seconds = time.perf_counter() - started
    print(f"  {label:<62} {seconds:7.2f} s")
    return seconds, answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 recipients and 250,000 events")
    parser.add_argument("--recipients", type=int, default=1_000_000)
    args = parser.parse_args()
    recipients = 50_000 if args.quick else args.recipients
    outcomes, orders = campaign(recipients, 5 * recipients)
    print(f"{recipients:,} recipients, {len(orders):,} order events, a 5-day window after delivery")
    # the numbering tables and Arrow's kernels load once per process, whichever way runs first: warm both untimed
    merge_then_filter(outcomes.head(1000), orders.head(5000))
    sendframe.conversions(outcomes.head(1000), orders.head(5000), window="5D", on="phone", value="amount")
    fast, found = timed('sendframe.conversions(..., window="5D", value="amount")', lambda: sendframe.conversions(
        outcomes, orders, window="5D", on="phone", at="time", value="amount"))
    slow, expected = timed("merge of keyed orders with recipients, filter, groupby, join", lambda: merge_then_filter(
        outcomes, orders))
    assert (found["converted"].to_numpy() == expected["converted"].to_numpy()).all()
    assert np.allclose(found["revenue"].to_numpy(), expected["revenue"].to_numpy())
    print(f"  converted: {int(found['converted'].sum()):,}; the same answer both ways")
    print(f"ratio: {slow / fast:.1f}x the merge-then-filter")
    if not args.quick:
        print(f"goal (at most {GOAL_SECONDS:g} s): {'met' if fast <= GOAL_SECONDS else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
