"""Outcomes, summary, dashboard and report of a 1,000,000-recipient campaign, from its send results and callbacks.

    python benchmarks/bench_outcomes.py             # 1,000,000 results, ~2,000,000 callbacks
    python benchmarks/bench_outcomes.py --quick     # 50,000 results, smoke run
    python benchmarks/bench_outcomes.py --rows 2000000

What it measures, each phase timed on its own as a user runs it, on data shaped like a real campaign:
results as a send returns them (one unique recipient per row, valid numbers of ~45 countries in the
shares of a European campaign, among them the shared calling codes 1, 7, 44 and 39; unique ids and
texts; rejected, skipped and held-out rows) and the receiver's log of its notifications (an ACCEPTD and
a final one per accepted message, read with ``read_callbacks``):

- ``message_outcomes(results, callbacks)`` and ``sendframe.outcomes(results, callbacks)``;
- ``delivery_summary(results, callbacks)`` (which builds the outcomes itself) and
  ``delivery_summary(outcomes)`` of the table already built;
- ``charts.dashboard(outcomes, summary=...)`` and ``Dashboard.write_html``;
- ``sendframe report --results results.csv --callbacks callbacks.log`` end to end, in this process
  (reading both files included; plotly's import is warmed up first, as in ``bench_dashboard.py``).

Building the data and writing the files is not timed. The goals (issue 12): outcomes in a few seconds,
dashboard + report.html of 1M outcomes in at most 10 s end to end.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.csv as pa_csv

import sendframe
from sendframe.delivery.callbacks import read_callbacks
from sendframe.delivery.metrics import delivery_summary
from sendframe.delivery.outcomes import message_outcomes
from sendframe.delivery.receiver import receiver_query
from sendframe.notebook import charts
from sendframe.notebook import command as report_command
from sendframe.send_outcomes import OUTCOMES

# region, share of recipients (a European campaign: a few big countries and a long tail)
_REGIONS: tuple[tuple[str, float], ...] = (
    ("ES", 30.0), ("GB", 11.0), ("PT", 9.0), ("FR", 8.0), ("DE", 7.0), ("IT", 6.0), ("US", 5.0), ("MX", 4.0),
    ("BR", 4.0), ("NL", 3.0), ("AR", 2.0), ("CO", 2.0), ("CA", 1.5), ("RU", 0.5), ("KZ", 0.2), ("JE", 0.1),
    ("GG", 0.1), ("IM", 0.1), ("PR", 0.2), ("DO", 0.2), ("JM", 0.1),
    *((region, 0.2) for region in (
        "IE", "BE", "CH", "AT", "PL", "SE", "NO", "DK", "FI", "GR", "RO", "HU", "CZ", "MA", "ZA", "IN", "PH",
        "AU", "NZ", "JP", "CL", "PE", "UY", "EC", "TR", "IL", "AE", "SA")),
)
_FINAL = (("DELIVRD", 1, 88.0), ("UNDELIV", 2, 4.0), ("EXPIRED", 2, 2.0), ("REJECTD", 16, 2.5), ("DELETED", 2, 0.5))
_OUTCOMES = (("accepted", 94.9), ("rejected", 1.0), ("unknown", 0.1), ("not_sent", 0.4), ("skipped_invalid", 0.8),
             ("skipped_duplicate", 0.5), ("skipped_suppressed", 0.3), ("holdout", 2.0))
_START = pd.Timestamp("2026-11-21 09:00", tz="UTC")


def _mobile_numbers(region: str, count: int, offset: int) -> np.ndarray:
    """``count`` distinct numbers in API form like the region's example mobile number (its last 7 digits vary)."""
    example = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    national = phonenumbers.national_significant_number(example)
    head = f"{example.country_code}{national[:-7]}"
    tails = pd.Series((np.arange(count) + offset) % 10_000_000).astype(str).str.zfill(7)
    return (head + tails).to_numpy(dtype=object)


def campaign(n: int, seed: int = 7) -> tuple[pd.DataFrame, list[str]]:
    """The send results of ``n`` recipients and the receiver log lines of their notifications."""
    rng = np.random.default_rng(seed)
    shares = np.array([share for _, share in _REGIONS])
    which = rng.choice(len(_REGIONS), size=n, p=shares / shares.sum())
    recipient = np.empty(n, dtype=object)
    for k, (region, _) in enumerate(_REGIONS):
        rows = np.flatnonzero(which == k)
        recipient[rows] = _mobile_numbers(region, len(rows), int(rng.integers(0, 10_000_000)))
    names = [o for o, _ in _OUTCOMES]
    weights = np.array([w for _, w in _OUTCOMES])
    outcome = rng.choice(np.array(names, dtype=object), size=n, p=weights / weights.sum())
    accepted = outcome == "accepted"
    ids = pd.Series([f"{i:012x}{s:08x}" for i, s in zip(range(n), rng.integers(0, 2**32, n), strict=True)],
                    dtype="string").where(accepted)
    parts = rng.choice([1, 2, 3], size=n, p=[0.8, 0.18, 0.02])
    rejected = outcome == "rejected"
    results = pd.DataFrame({
        "recipient": pd.Series(recipient, dtype="str"),
        "text": pd.Series(recipient, dtype="str").str[-4:].radd("Hi ") + ", your order ships today: https://s.example/"
        + pd.Series(np.arange(n)).astype("str"),
        "accepted": pd.array(accepted, dtype="boolean"),
        "id": ids,
        "parts": pd.Series(parts, dtype="Int64").where(accepted),
        "scheduled_at": pd.Series(pd.NaT, index=range(n), dtype="datetime64[us, UTC]"),
        "expires_at": pd.Series(pd.NaT, index=range(n), dtype="datetime64[us, UTC]"),
        "error_code": pd.Series(102, index=range(n), dtype="Int64").where(rejected),
        "error_description": pd.Series("not a valid phone number", index=range(n), dtype="string").where(rejected),
        "campaign_id": pd.array(np.full(n, 4711), dtype="Int64"),
        "sending_id": pd.array(90_000 + np.arange(n) // 1000, dtype="Int64"),
        "batch": pd.array(np.arange(n) // 1000, dtype="Int64"),
        "outcome": pd.Categorical(outcome, categories=list(OUTCOMES)),
        "reason": pd.Series(pd.NA, index=range(n), dtype="str"),
    })
    return results, _notification_lines(results, rng)


def _notification_lines(results: pd.DataFrame, rng: np.random.Generator) -> list[str]:
    """The receiver's log of the campaign: an ACCEPTD per accepted message, then its final one (3% stay pending)."""
    sent = results[results["outcome"] == "accepted"]
    m = len(sent)
    offsets = np.sort(rng.uniform(0, 45 * 60, size=m))
    sent_at = _START + pd.to_timedelta(offsets.round(), unit="s")
    weights = np.array([w for *_, w in _FINAL] + [3.0])  # the last: no final notification yet
    finals = rng.choice(len(_FINAL) + 1, size=m, p=weights / weights.sum())
    delay = pd.to_timedelta(np.exp(rng.normal(np.log(4.0), 1.3, size=m)).round() + 60, unit="s")
    minute = "%Y-%m-%d+%H%%3A%M"
    common = ("&sender=Shop&recipient=" + sent["recipient"].to_numpy(dtype=object)
              + "&sent_at=" + pd.Series(sent_at.strftime(minute)).to_numpy(dtype=object))
    cost = pd.Series(0.045 * sent["parts"].to_numpy(dtype=float)).map("{:.4f}".format).to_numpy(dtype=object)
    tail = ("&part=1&campaign_id=4711&sending_id=" + sent["sending_id"].astype(str).to_numpy(dtype=object))
    mnc = np.char.zfill(rng.integers(1, 8, size=m).astype(str), 2).astype(object)
    lines: list[str] = []
    for kind in ("ACCEPTD", "final"):
        if kind == "ACCEPTD":
            keep = np.ones(m, dtype=bool)
            status = np.full(m, "ACCEPTD", dtype=object)
            delivery = np.full(m, "4", dtype=object)
            reported = sent_at + pd.Timedelta(seconds=1)
        else:
            keep = finals < len(_FINAL)
            status = np.array([s for s, _, _ in _FINAL] + [""], dtype=object)[finals]
            delivery = np.array([str(d) for _, d, _ in _FINAL] + [""], dtype=object)[finals]
            reported = sent_at + delay
        arrival = pd.Series(reported.strftime("%Y-%m-%dT%H:%M:%S.000000+00:00")).to_numpy(dtype=object)
        query = ("id=" + sent["id"].to_numpy(dtype=object) + "&delivery=" + delivery + common + "&cost=" + cost
                 + "&status=" + status + "&mnc=" + mnc + "&reported_at="
                 + pd.Series(reported.strftime(minute)).to_numpy(dtype=object) + tail)
        lines.extend((arrival + "\t" + query)[keep].tolist())
    order = rng.permutation(len(lines))  # notifications arrive interleaved
    return [lines[i] for i in order]


def timed(label: str, work: Callable[[], Any], times: dict[str, float]) -> Any:
    start = time.perf_counter()
    value = work()
    times[label] = time.perf_counter() - start
    print(f"  {label:58} {times[label]:7.2f} s", flush=True)
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 results (smoke run)")
    parser.add_argument("--rows", type=int, default=None, help="send results (default 1,000,000)")
    args = parser.parse_args(argv)
    rows = args.rows or (50_000 if args.quick else 1_000_000)

    start = time.perf_counter()
    results, lines = campaign(rows)
    charts.dashboard(message_outcomes(results.head(1000))).to_html()  # plotly loads its modules once, untimed
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "callbacks.log"
        log.write_text(f"#params\t{receiver_query()}\n" + "\n".join(lines) + "\n", encoding="utf-8")
        notifications = len(lines)
        del lines  # two million Python strings: not kept through the timed phases
        csv = Path(tmp) / "results.csv"
        pa_csv.write_csv(pa.Table.from_pandas(results.drop(columns=["text"]), preserve_index=False), csv)
        print(f"{rows:,} send results, {notifications:,} notifications in the receiver's log "
              f"({log.stat().st_size / 1e6:.0f} MB); data built and written in {time.perf_counter() - start:.1f} s "
              "(not timed)")
        times: dict[str, float] = {}
        callbacks = timed("read_callbacks(log)  (for reference)", lambda: read_callbacks(log), times)
        timed("message_outcomes(results, callbacks)", lambda: message_outcomes(results, callbacks), times)
        table = timed("sendframe.outcomes(results, callbacks)", lambda: sendframe.outcomes(results, callbacks), times)
        timed("delivery_summary(results, callbacks)  (builds outcomes)",
              lambda: delivery_summary(results, callbacks), times)
        summary = timed("delivery_summary(outcomes)", lambda: delivery_summary(table), times)
        board = timed("charts.dashboard(outcomes, summary=summary)",
                      lambda: charts.dashboard(table, summary=summary), times)
        timed("Dashboard.write_html(report.html)", lambda: board.write_html(Path(tmp) / "report.html"), times)
        size = (Path(tmp) / "report.html").stat().st_size
        log_size = log.stat().st_size
        fresh = Path(tmp) / "callbacks-copy.log"  # a log read_callbacks has not read yet: the command reads it whole
        fresh.write_bytes(log.read_bytes())
        cli = argparse.Namespace(results=str(csv), callbacks=str(fresh), notification_url=None, records=False,
                                 title="Delivery report", campaign="Black Friday", out=str(Path(tmp) / "cli.html"))
        timed("sendframe report --results --callbacks  (end to end)", lambda: report_command.run("report", cli), times)
    path = times["sendframe.outcomes(results, callbacks)"] + times["delivery_summary(outcomes)"]
    path += times["charts.dashboard(outcomes, summary=summary)"] + times["Dashboard.write_html(report.html)"]
    cli_time = times["sendframe report --results --callbacks  (end to end)"]
    print(f"\noutcomes + summary + dashboard + report.html: {path:.2f} s; report {size / 1e6:.1f} MB")
    print(f"sendframe report end to end: {cli_time:.2f} s, of which reading the {log_size / 1e6:.0f} MB callback log "
          f"is about {times['read_callbacks(log)  (for reference)']:.1f} s")
    goal = times["sendframe.outcomes(results, callbacks)"] <= 5 and path <= 10
    print(f"goal (issue 12: outcomes in a few seconds, outcomes to report.html <= 10 s at 1M): "
          f"{'met' if goal else 'NOT met'} at {rows:,} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
