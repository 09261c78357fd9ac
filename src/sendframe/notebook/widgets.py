"""ipywidgets shells: the campaign Composer and the delivery Monitor.

Both only wire widgets to the tested functions (``render``, ``estimate``, ``preflight``,
``send_campaign``, ``read_callbacks``, ``fetch_records``, the charts); the little logic of their
own lives in the pure functions at the top of this module.

    >>> composer = Composer(contacts, client=client)   # doctest: +SKIP
    >>> composer                                        # doctest: +SKIP
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

try:
    import ipywidgets as w
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("The notebook widgets need ipywidgets: pip install 'sendframe[notebook]'") from exc

from sendframe.errors import SendframeError

TEXT_CHANNELS = ("sms", "landingsms")
CHANNELS = ("sms", "landingsms", "voice", "mailing")
ENCODINGS = ("auto", "gsm", "gsm-pt", "utf-16")


# ---- pure functions the widgets show ---------------------------------------------------------

def highlight(text: str, characters: str | list[str] | None) -> str:
    """HTML of ``text`` with each of ``characters`` marked, everything escaped.

    >>> highlight("Olá ☺", "☺")
    'Olá <mark title="outside GSM-7">☺</mark>'
    """
    marked = set(characters or ())
    return "".join(f'<mark title="outside GSM-7">{html.escape(c)}</mark>' if c in marked else html.escape(c) for c in text)


def counter_figures(totals: Any) -> dict[str, Any]:
    """What the composer's counter shows, from :class:`~sendframe.campaign.counter.CounterTotals`."""
    return {
        "recipients": totals.rows,
        "encoding": ", ".join(f"{name} ×{count:,}" for name, count in totals.encodings.items()) or "—",
        "characters_max": totals.characters_max,
        "parts": totals.parts,
        "parts_max": totals.parts_max,
        "cost": totals.cost,
        "forced_by": totals.forced_by,
        "missing_text": totals.missing_text,
        "too_many_parts": totals.too_many_parts,
    }


def counter_html(figures: Mapping[str, Any]) -> str:
    """The counter line as HTML."""
    forced = f" · forced to utf-16 by <mark>{html.escape(figures['forced_by'])}</mark>" if figures["forced_by"] else ""
    warnings = "".join(
        f" · <span style='color:#c62828'>{figures[key]:,} {label}</span>"
        for key, label in (("missing_text", "rows miss a variable"), ("too_many_parts", "rows need more parts than allowed"))
        if figures.get(key)
    )
    return (f"<b>{figures['recipients']:,}</b> recipients · encoding {html.escape(figures['encoding'])} · "
            f"up to <b>{figures['characters_max']}</b> characters · <b>{figures['parts']:,}</b> parts "
            f"(max {figures['parts_max']} per message) · cost <b>{figures['cost']:,.4f}</b>{forced}{warnings}")


def problems_html(problems: pd.DataFrame, limit: int = 20) -> str:
    """The preflight frame as a short HTML table, or a go-ahead line when it is empty."""
    if problems.empty:
        return "<span style='color:#2e7d32'>✔ No problems: the campaign can go.</span>"
    head = f"<b>{len(problems)}</b> problem(s)" + (f", first {limit} shown" if len(problems) > limit else "")
    return head + problems.head(limit).to_html(index=False, border=0, escape=True)


def confirmation_html(figures: Mapping[str, Any], channel: str) -> str:
    """The question asked before sending."""
    return (f"Send this {html.escape(channel)} campaign to <b>{figures['recipients']:,}</b> recipients, "
            f"<b>{figures['parts']:,}</b> parts, estimated cost <b>{figures['cost']:,.4f}</b>?")


def _as_frame(table: pd.DataFrame | str | Path) -> pd.DataFrame:
    from sendframe.campaign.contacts import read_contacts

    return table if isinstance(table, pd.DataFrame) else read_contacts(table)


# ---- the composer ------------------------------------------------------------------------------

class Composer:
    """Write a message with a live preview and counter, check it, and send it.

    ``tables`` maps a name to a contact frame or a CSV path (read with ``read_contacts``).
    The preview shows ``sample_size`` recipients as they would receive the message.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame | str | Path] | pd.DataFrame, *, client: Any = None,
                 sender: str = "SendFrame", template: str = "", sample_size: int = 5, ledger: Any = None,
                 notification_url: str | None = None, campaign: str | None = None) -> None:
        self._tables = {"contacts": tables} if isinstance(tables, pd.DataFrame) else dict(tables)
        self._frames: dict[str, pd.DataFrame] = {}
        self.client, self.ledger, self.notification_url, self.campaign = client, ledger, notification_url, campaign
        self.sample_size = sample_size
        self.results: pd.DataFrame | None = None
        self.last_update_seconds = 0.0
        self._figures: dict[str, Any] | None = None

        self.table = w.Dropdown(options=list(self._tables), description="Contacts")
        self.channel = w.Dropdown(options=CHANNELS, value="sms", description="Channel")
        self.sender = w.Text(value=sender, description="From")
        self.encoding = w.Dropdown(options=ENCODINGS, value="auto", description="Encoding")
        self.parts = w.BoundedIntText(value=3, min=1, max=15, description="Max parts")
        self.template = w.Textarea(value=template, placeholder="Hi {name|capitalize}, ...", description="Message",
                                   continuous_update=True, layout=w.Layout(width="100%", height="90px"))
        self.counter = w.HTML()
        self.preview = w.HTML()
        self.check_button = w.Button(description="Check (preflight)", icon="check")
        self.problems = w.HTML()
        self.send_button = w.Button(description="Send…", button_style="primary", icon="paper-plane")
        self.confirmation = w.HTML()
        self.confirm_button = w.Button(description="Yes, send", button_style="danger", layout=w.Layout(display="none"))
        self.cancel_button = w.Button(description="Cancel", layout=w.Layout(display="none"))
        self.output = w.Output()
        self.status = w.HTML()

        for control in (self.table, self.channel, self.encoding, self.parts, self.template):
            control.observe(self._on_change, names="value")
        self.check_button.on_click(lambda _: self.check())
        self.send_button.on_click(lambda _: self.ask_to_send())
        self.confirm_button.on_click(lambda _: self.send())
        self.cancel_button.on_click(lambda _: self._hide_confirmation("Sending cancelled."))
        self.widget = w.VBox([
            w.HBox([self.table, self.channel, self.sender]),
            w.HBox([self.encoding, self.parts]),
            self.template, self.counter, w.HTML("<b>Preview</b>"), self.preview,
            w.HBox([self.check_button, self.send_button]), self.problems,
            w.HBox([self.confirmation, self.confirm_button, self.cancel_button]), self.status, self.output,
        ])
        self.update()

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a front end
        from IPython.display import display

        display(self.widget)

    @property
    def contacts(self) -> pd.DataFrame:
        name = self.table.value
        if name not in self._frames:
            self._frames[name] = _as_frame(self._tables[name])
        return self._frames[name]

    def _options(self) -> dict[str, Any]:
        encoding = self.encoding.value
        return {"channel": self.channel.value, "encoding": encoding, "parts": self.parts.value}

    def _on_change(self, _change: Any) -> None:
        self.update()

    def _counter(self) -> Any:
        from sendframe.campaign.counter import MessageCounter

        key = (self.table.value, self.channel.value)
        if getattr(self, "_counter_key", None) != key:
            self._counter_key, self._counter_value = key, MessageCounter(self.contacts, channel=self.channel.value)
        return self._counter_value

    def update(self) -> None:
        """Recompute the preview and the counter from the current template."""
        from sendframe.campaign.preview import render
        from sendframe.text.encodings import unencodable_characters

        started = time.perf_counter()
        self._hide_confirmation("")
        template = self.template.value
        if not template:
            self.counter.value, self.preview.value, self._figures = "<i>Write a message to see the counter.</i>", "", None
            return
        options = self._options()
        try:
            totals = self._counter().count(template, options["encoding"], parts=options["parts"])
            sample = render(self.contacts.head(self.sample_size), template, channel=options["channel"])
        except SendframeError as exc:
            self.counter.value = f"<span style='color:#c62828'>{html.escape(str(exc))}</span>"
            self.preview.value, self._figures = "", None
            return
        self._figures = counter_figures(totals)
        self.counter.value = counter_html(self._figures)
        rows = "".join(
            f"<tr><td>{html.escape(str(label))}</td><td style='text-align:left'>"
            + (highlight(text, unencodable_characters(text, "gsm")) if isinstance(text, str) else "<i>missing variable</i>")
            + "</td></tr>"
            for label, text in sample.items()
        )
        self.preview.value = f"<table><tr><th>row</th><th>as received</th></tr>{rows}</table>"
        self.last_update_seconds = time.perf_counter() - started

    def check(self) -> pd.DataFrame:
        """Run preflight and show its problems."""
        from sendframe.campaign.preflight import preflight

        options = self._options()
        encoding = "gsm" if options["encoding"] == "auto" else options["encoding"]
        problems = preflight(self.contacts, options["channel"], self.template.value, sender=self.sender.value or None,
                             parts=options["parts"], encoding=encoding)
        self.problems.value = problems_html(problems)
        return problems

    def ask_to_send(self) -> None:
        """Show the confirmation with recipients, parts and cost."""
        if self._figures is None:
            self.status.value = "Write a message first."
            return
        self.confirmation.value = confirmation_html(self._figures, self.channel.value)
        self.confirm_button.layout.display = self.cancel_button.layout.display = None

    def _hide_confirmation(self, message: str) -> None:
        self.confirmation.value = ""
        self.confirm_button.layout.display = self.cancel_button.layout.display = "none"
        if message:
            self.status.value = message

    def send(self) -> pd.DataFrame | None:
        """Send the campaign (the confirm button calls this); the result frame is kept in ``results``."""
        from sendframe.campaign.shortcuts import send_campaign

        self._hide_confirmation("Sending…")
        options = self._options()
        fields: dict[str, Any] = {"message": self.template.value}
        if options["channel"] in TEXT_CHANNELS:
            fields.update(sender=self.sender.value, parts=options["parts"])
            if options["encoding"] != "auto":
                fields["encoding"] = options["encoding"]
        with self.output:
            try:
                self.results = send_campaign(self.contacts, options["channel"], client=self.client, ledger=self.ledger,
                                             notification_url=self.notification_url, campaign=self.campaign, **fields)
            except SendframeError as exc:
                self.status.value = f"<span style='color:#c62828'>Not sent: {html.escape(str(exc))}</span>"
                return None
        counts = self.results["outcome"].value_counts()
        self.status.value = " · ".join(f"{name}: <b>{count}</b>" for name, count in counts.items())
        return self.results


# ---- the monitor -------------------------------------------------------------------------------

class Monitor:
    """Refreshes delivery figures from the receiver's log and the record lookups while a campaign delivers."""

    def __init__(self, results: pd.DataFrame, *, receiver: Any = None, client: Any = None,
                 recipients: pd.Series | None = None, charts: tuple[str, ...] = ("funnel", "status_over_time", "time_to_delivery")) -> None:
        self.results, self.receiver, self.client, self.recipients = results, receiver, client, recipients
        self.chart_names = charts
        self.summary = w.HTML()
        self.charts = w.Output()
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.auto = w.ToggleButton(value=False, description="Auto refresh", icon="clock-o")
        self.auto.observe(lambda change: self.start() if change["new"] else self.stop(), names="value")
        self.outcomes: pd.DataFrame | None = None
        self.refreshes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.widget = w.VBox([w.HBox([self.refresh_button, self.auto]), self.summary, self.charts])

    def start(self, interval: float = 5.0) -> None:
        """Refresh every ``interval`` seconds in the background until every message is final or :meth:`stop`."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(interval,), name="sendframe-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop refreshing in the background."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        self._thread = None
        if self.auto.value:
            self.auto.value = False

    def _loop(self, interval: float) -> None:
        while not self._stop.is_set():
            outcomes = self.refresh()
            accepted = outcomes["outcome"] == "accepted"
            if not (outcomes.loc[accepted, "status"] == "PENDING").any():
                self.summary.value += " <b>· all messages have a final status</b>"
                break
            self._stop.wait(interval)
        self._stop.set()

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a front end
        from IPython.display import display

        display(self.widget)

    def refresh(self) -> pd.DataFrame:
        """Fetch callbacks and records now and redraw; returns the outcomes frame."""
        from sendframe.delivery.outcomes import message_outcomes
        from sendframe.notebook import charts

        callbacks = self.receiver.callbacks() if self.receiver is not None else None
        records = None
        if self.client is not None:
            from sendframe.delivery.records import fetch_records

            records = fetch_records(self.results["id"], client=self.client)
        self.outcomes = message_outcomes(self.results, callbacks, records, recipients=self.recipients)
        counts = self.outcomes["status"].value_counts(sort=False)
        self.summary.value = " · ".join(f"{charts.STATUS_LABELS[s]}: <b>{n}</b>" for s, n in counts.items() if n) + \
            f" <span style='color:#757575'>(updated {time.strftime('%H:%M:%S')})</span>"
        self.refreshes += 1
        self.charts.clear_output(wait=True)
        with self.charts:
            from IPython.display import display

            for name in self.chart_names:
                display(charts.CHARTS[name](self.outcomes))
        return self.outcomes
