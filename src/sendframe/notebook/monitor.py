"""The Monitor: delivery figures of a sent campaign, refreshed from callbacks and records while it delivers.

Rows a send skipped (``skipped_invalid``, ``skipped_duplicate``, ...) were never sent: they are
counted under their own outcome, read from the send result, and left out of the delivery charts.

    >>> monitor = Monitor(composer.results, receiver=receiver, client=client)   # doctest: +SKIP
    >>> monitor.start(interval=5)                                               # doctest: +SKIP

A split test's result (``sendframe.variants(...).send``, with its ``variant`` column) can be watched live:
``Monitor(results, ..., compare="delivered")`` adds the variants' comparison with anytime-valid intervals
and p-values (``compare_variants(..., sequential=True)``), right to read at every refresh.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pandas as pd

from sendframe.delivery.experiments import compare_variants
from sendframe.delivery.outcomes import message_outcomes
from sendframe.delivery.records import fetch_records
from sendframe.errors import InputError
from sendframe.notebook.charts import CHARTS, STATUS_LABELS
from sendframe.notebook.report import optional_import
from sendframe.notebook.sending import BackgroundJob
from sendframe.notebook.widget_html import counts_line, error_html, outcome_counts
from sendframe.send_outcomes import SKIP_LABELS

w = optional_import("ipywidgets", "The notebook widgets need ipywidgets")
display = optional_import("IPython.display", "The notebook widgets need IPython").display

__all__ = ["Monitor", "comparison_html", "monitor_summary_html"]


def monitor_summary_html(statuses: pd.Series, skipped: dict[str, int]) -> str:
    """The Monitor's line: messages per delivery status (of the rows sent), then the skipped rows per reason.

        >>> monitor_summary_html(pd.Series(["DELIVRD", "PENDING", "DELIVRD"]), {"skipped_invalid": 1})
        'delivered: <b>2</b> · pending: <b>1</b> · skipped (invalid recipient): <b>1</b>'
    """
    counts = statuses.value_counts(sort=False)
    return counts_line([*((label, int(counts[s])) for s, label in STATUS_LABELS.items() if counts.get(s, 0)),
                        *((f"skipped ({SKIP_LABELS.get(name, name)})", n) for name, n in skipped.items())])


def comparison_html(comparison: pd.DataFrame) -> str:
    """The Monitor's table of a sequential comparison: each variant's rate and difference with their intervals.

        >>> frame = pd.DataFrame({"variant": ["A"] * 50 + ["B"] * 50, "clicked": [True, False] * 25 + [True] * 50})
        >>> "anytime-valid" in comparison_html(compare_variants(frame, "clicked", sequential=True))
        True
    """
    drawn = comparison[comparison["rate"].notna()]
    versus = ["control" if r.test == "control" else f"{r.difference:+.1%} [{r.difference_low:+.1%}, "
              f"{r.difference_high:+.1%}], p = {r.p_value:.3g} (adjusted {r.p_value_adjusted:.3g})"
              for r in drawn.itertuples()]
    table = pd.DataFrame({
        "variant": drawn["variant"].astype(str).to_numpy(),
        f"{comparison.attrs.get('metric', '')} rate": [f"{r.rate:.1%} [{r.rate_low:.1%}, {r.rate_high:.1%}]"
                                                       for r in drawn.itertuples()],
        "difference from the control": versus})
    return table.to_html(index=False, border=0) + ("<small>anytime-valid intervals and p-values: read them at every "
                                                   "refresh and stop when an interval leaves 0</small>")


class Monitor:
    """Refreshes delivery figures from the receiver's log and the record lookups while a campaign delivers.

    ``results`` is a send result (``Message.send``, ``send_sms``, ``composer.results``); its
    ``recipient`` column is used when ``recipients`` is not given. ``compare``: a metric
    (``"delivered"``, ``"clicked"``) to compare the results' variants on at every refresh, with
    anytime-valid intervals (``self.comparison``, shown under the summary).
    """

    def __init__(self, results: pd.DataFrame, *, receiver: Any = None, client: Any = None,
                 recipients: pd.Series | None = None,
                 charts: tuple[str, ...] = ("funnel", "status_over_time", "time_to_delivery"),
                 compare: str | None = None) -> None:
        if compare is not None and "variant" not in results:
            raise InputError("Monitor(compare=...) compares the variants of a split test: the results need their "
                             "'variant' column (sendframe.variants(...).send gives it).")
        self.results, self.receiver, self.client = results, receiver, client
        self.compare = compare
        self.comparison: pd.DataFrame | None = None
        self.comparison_view = w.HTML()
        self.recipients = recipients  # None: message_outcomes reads the results' recipient column
        self.chart_names = charts
        self.summary = w.HTML()
        self.charts = w.Output()
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.auto = w.ToggleButton(value=False, description="Auto refresh", icon="clock-o")
        self.auto.observe(lambda change: self.start() if change["new"] else self.stop(), names="value")
        self.outcomes: pd.DataFrame | None = None
        self.refreshes = 0
        self._job: BackgroundJob | None = None
        self.widget = w.VBox([w.HBox([self.refresh_button, self.auto]), self.summary, self.comparison_view,
                              self.charts])

    def start(self, interval: float = 5.0) -> None:
        """Refresh every ``interval`` seconds in the background until every message is final or :meth:`stop`."""
        if self._job is None or not self._job.running:
            self._job = BackgroundJob(lambda _, stop: self._loop(interval, stop), on_done=self._ended,
                                      name="sendframe-monitor").start()

    def stop(self) -> None:
        """Stop refreshing in the background."""
        if self._job is not None:
            self._job.cancel()
            self._job.wait(30)
        self.auto.value = False  # already False: no change, so no second stop()

    def _loop(self, interval: float, stop: threading.Event) -> None:
        while not stop.is_set():
            outcomes = self.refresh()
            if not (outcomes["outcome"].eq("accepted") & outcomes["status"].eq("PENDING")).any():
                self.summary.value += " <b>· all messages have a final status</b>"
                return
            stop.wait(interval)

    def _ended(self, job: BackgroundJob) -> None:
        if job.error is not None:  # said under the figures, which stay as last drawn
            self.summary.value += f"<br>{error_html('Refreshing stopped', job.error)}"

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a front end
        display(self.widget)

    def refresh(self) -> pd.DataFrame:
        """Fetch callbacks and records now and redraw; returns the outcomes frame (every row of the results)."""
        callbacks = self.receiver.callbacks() if self.receiver is not None else None
        records = fetch_records(self.results["id"].dropna(), client=self.client) if self.client is not None else None
        self.outcomes = message_outcomes(self.results, callbacks, records, recipients=self.recipients)
        counts = outcome_counts(self.results) if "outcome" in self.results else {}
        skipped = {name: n for name, n in counts.items() if name in SKIP_LABELS}  # never sent: not in the charts
        was_sent = ~self.results["outcome"].astype("str").isin(list(skipped)) if skipped else slice(None)
        delivering = self.outcomes.loc[was_sent]
        self.summary.value = monitor_summary_html(delivering["status"], skipped) + \
            f" <span style='color:#757575'>(updated {time.strftime('%H:%M:%S')})</span>"
        if self.compare is not None:
            split = self.outcomes.assign(variant=self.results["variant"])
            self.comparison = compare_variants(split, self.compare, sequential=True)
            self.comparison_view.value = comparison_html(self.comparison)
        self.refreshes += 1
        self.charts.clear_output(wait=True)
        with self.charts:
            for name in self.chart_names:
                display(CHARTS[name](delivering))
        return self.outcomes
