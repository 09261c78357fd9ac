"""The HTML the Composer and the Monitor show, as pure functions of plain values (no widgets here).

Everything shown is escaped; errors are said in plain English with any credential taken out.

    >>> highlight("Olá ☺", "☺")
    'Olá <mark title="outside GSM-7">☺</mark>'
    >>> progress_html(250, 1000)
    '<b>250</b> of <b>1,000</b> sent'
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from sendframe.api.wire import redact_url
from sendframe.campaign.policy import skipped_summary
from sendframe.errors import SendframeError
from sendframe.notebook.charts import SENT_OUTCOMES
from sendframe.send_outcomes import OUTCOME_LABELS
from sendframe.text.encodings import unencodable_characters

__all__ = ["confirmation_html", "counter_figures", "counter_html", "counts_line", "error_html", "highlight",
           "ledger_html", "outcome_counts", "plain_error", "preview_html", "problems_html", "progress_html",
           "result_html", "without_credentials"]

_RED, _GREEN, _GREY = "#c62828", "#2e7d32", "#757575"
# the counter's warnings: a figure of CounterTotals -> what its rows are said to do
_COUNTER_WARNINGS = {"missing_text": "rows miss a variable", "too_many_parts": "rows need more parts than allowed"}


def highlight(text: str, characters: str | Iterable[str] | None) -> str:
    """HTML of ``text`` with each of ``characters`` marked, everything escaped.

        >>> highlight("<b>é☺", ["☺"])
        '&lt;b&gt;é<mark title="outside GSM-7">☺</mark>'
    """
    marked = set(characters or ())
    return "".join(f'<mark title="outside GSM-7">{html.escape(c)}</mark>' if c in marked else html.escape(c)
                   for c in text)


def counter_figures(totals: Any) -> dict[str, Any]:
    """What the composer's counter shows, from :class:`~sendframe.campaign.counter.CounterTotals`: its fields,
    the encodings as one line.

        >>> from sendframe import sms
        >>> from sendframe.campaign.counter import MessageCounter
        >>> counter = MessageCounter(pd.DataFrame({"phone": ["34600123456"]}))
        >>> figures = counter_figures(counter.count(sms("Hi", sender="Shop")))
        >>> figures["recipients"], figures["encoding"]
        (1, 'gsm ×1')
    """
    encoding = ", ".join(f"{name} ×{count:,}" for name, count in totals.encodings.items()) or "—"
    return {**dataclasses.asdict(totals), "encoding": encoding}


def counter_html(figures: Mapping[str, Any], sms: bool = True) -> str:
    """The counter line as HTML: recipients and cost, and for SMS encoding, characters and parts.

        >>> counter_html({"recipients": 2, "cost": 0.5, "missing_text": 1}, sms=False)
        "<b>2</b> recipients · cost <b>0.5000</b> · <span style='color:#c62828'>1 rows miss a variable</span>"
    """
    warnings = "".join(f" · <span style='color:{_RED}'>{figures[key]:,} {label}</span>"
                       for key, label in _COUNTER_WARNINGS.items() if figures.get(key))
    if not sms:
        return f"<b>{figures['recipients']:,}</b> recipients · cost <b>{figures['cost']:,.4f}</b>{warnings}"
    forced = f" · forced to utf-16 by <mark>{html.escape(figures['forced_by'])}</mark>" if figures["forced_by"] else ""
    return (f"<b>{figures['recipients']:,}</b> recipients · encoding {html.escape(figures['encoding'])} · "
            f"up to <b>{figures['characters_max']}</b> characters · <b>{figures['parts']:,}</b> parts "
            f"(max {figures['parts_max']} per message) · cost <b>{figures['cost']:,.4f}</b>{forced}{warnings}")


def preview_html(rows: Iterable[tuple[Any, Any]], sms: bool = False, heading: str = "as received") -> str:
    """A table of (row label, text) pairs; a missing text says so; ``sms``: the characters outside GSM-7 are marked.

        >>> preview_html([(0, "Hi"), (1, None)]).count("<tr>"), "<i>missing variable</i>" in preview_html([(1, None)])
        (3, True)
    """
    def cell(text: Any) -> str:
        if not isinstance(text, str):
            return "<i>missing variable</i>"
        return highlight(text, unencodable_characters(text, "gsm") if sms else ())

    cells = "".join(f"<tr><td>{html.escape(str(label))}</td><td style='text-align:left'>{cell(text)}</td></tr>"
                    for label, text in rows)
    return f"<table><tr><th>row</th><th>{html.escape(heading)}</th></tr>{cells}</table>"


def problems_html(problems: pd.DataFrame, limit: int = 20, skipped: str | None = None) -> str:
    """The preflight frame as a short HTML table (or a go-ahead line), then what the send will skip.

        >>> problems_html(pd.DataFrame(columns=["row", "column", "rule", "message"]))
        "<span style='color:#2e7d32'>✔ No problems: the campaign can go.</span>"
    """
    note = f"<div>{html.escape(skipped)}</div>" if skipped else ""
    if problems.empty:
        return f"<span style='color:{_GREEN}'>✔ No problems: the campaign can go.</span>{note}"
    head = f"<b>{len(problems)}</b> problem(s)" + (f", first {limit} shown" if len(problems) > limit else "")
    return head + note + problems.head(limit).to_html(index=False, border=0, escape=True)


def ledger_html(path: str | Path | None) -> str:
    """The ledger line: which file keeps the campaign from sending twice.

        >>> ledger_html("spring-1a2b3c4d.ledger.sqlite")[:49]
        'Ledger <code>spring-1a2b3c4d.ledger.sqlite</code>'
    """
    if path is None:
        return f"<span style='color:{_GREY}'>Ledger: chosen when the message is complete</span>"
    return (f"Ledger <code>{html.escape(str(path))}</code> "
            f"<span style='color:{_GREY}'>(rows already answered in it are never sent again)</span>")


def confirmation_html(channel: str, estimate: pd.DataFrame, ledger: str | Path | None) -> str:
    """The question asked before sending, from :meth:`sendframe.Message.estimate` (what the send will spend).

        >>> est = pd.DataFrame({"action": ["send", "skipped_invalid"], "billable": [True, False], "parts": [1, 1],
        ...                     "cost": [0.05, 0.0]})
        >>> est.attrs = {"totals": {"billable": 1, "messages": 1, "cost": 0.05, "currency": "EUR"}}
        >>> print(confirmation_html("sms", est, None).replace("<br>", "\\n")[:129])
        Send this sms campaign to <b>1</b> recipients (<b>1</b> messages charged), estimated cost <b>0.0500 EUR</b>?
        1 of 2 rows not sent
    """
    totals = estimate.attrs["totals"]
    sending = int((estimate["action"] == "send").sum())
    skipped = skipped_summary(estimate)
    return (f"Send this {html.escape(channel)} campaign to <b>{sending:,}</b> recipients "
            f"(<b>{totals['messages']:,}</b> messages charged), estimated cost "
            f"<b>{totals['cost']:,.4f} {html.escape(str(totals['currency']))}</b>?"
            + (f"<br>{html.escape(skipped)}" if skipped else "")
            + (f"<br>{ledger_html(ledger)}" if ledger is not None else ""))


def progress_html(done: int, total: int | None) -> str:
    """How far a send is.

        >>> progress_html(0, None)
        'preparing…'
    """
    if total is None:
        return "preparing…"
    return f"<b>{done:,}</b> of <b>{total:,}</b> sent"


def outcome_counts(results: pd.DataFrame) -> dict[str, int]:
    """Rows per outcome of a send result (skipped ones under their own ``skipped_*`` outcome), in the outcomes' order.

        >>> outcome_counts(pd.DataFrame({"outcome": ["accepted", "skipped_duplicate", "accepted"]}))
        {'accepted': 2, 'skipped_duplicate': 1}
    """
    outcome = results["outcome"].astype("str")
    counts = outcome.value_counts()
    order = [*OUTCOME_LABELS, *(name for name in counts.index if name not in OUTCOME_LABELS)]
    return {name: int(counts[name]) for name in order if name in counts.index}


def counts_line(counts: Iterable[tuple[str, int]]) -> str:
    """``label: count`` pairs on one line, the counts bold.

        >>> counts_line([("delivered", 1200), ("pending", 3)])
        'delivered: <b>1,200</b> · pending: <b>3</b>'
    """
    return " · ".join(f"{html.escape(label)}: <b>{count:,}</b>" for label, count in counts)


def result_html(results: pd.DataFrame, sent_now: int, ledger: str | Path | None, cancelled: bool = False) -> str:
    """The line shown when a send ends: rows per outcome, what this run sent, what to do next.

        >>> results = pd.DataFrame({"outcome": ["accepted", "skipped_invalid"]})
        >>> print(result_html(results, 0, "x").replace("<br>", "\\n"))
        accepted: <b>1</b> · skipped: invalid recipient: <b>1</b>
        Nothing new was sent: every row already has its answer in the ledger <code>x</code>.
    """
    counts = outcome_counts(results)
    line = counts_line((OUTCOME_LABELS.get(name, name), count) for name, count in counts.items())
    sent_ever = sum(counts.get(name, 0) for name in SENT_OUTCOMES)
    notes = []
    if cancelled:
        notes.append(f"Cancelled: {sent_now:,} sent in this run; no new batch was started.")
    elif sent_now == 0 and sent_ever:
        where = f" in the ledger <code>{html.escape(str(ledger))}</code>" if ledger is not None else ""
        notes.append(f"Nothing new was sent: every row already has its answer{where}.")
    if counts.get("not_sent"):
        notes.append(f"<span style='color:{_RED}'>{counts['not_sent']:,} row(s) were not sent: press Send again to "
                     "send them (the ledger skips those already answered).</span>")
    if counts.get("unknown"):
        notes.append(f"<span style='color:{_RED}'>{counts['unknown']:,} row(s) have an unknown outcome: they may have "
                     "been sent. Check them before sending again.</span>")
    return line + "".join(f"<br>{note}" for note in notes)


def plain_error(error: BaseException, secrets: Iterable[str] = ()) -> str:
    """An error in plain English, without any credential: sendframe's own message, else what kind of failure it was.

        >>> plain_error(ValueError("token s3cret refused"), secrets=["s3cret"])
        'Something went wrong: ValueError: token *** refused'
    """
    text = str(error) if isinstance(error, SendframeError) else f"Something went wrong: {type(error).__name__}: {error}"
    return without_credentials(text, secrets)


def without_credentials(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` and the user information of any address replaced by ``***``.

        >>> without_credentials("see https://bob:pw@host/x and pw", ["pw"])
        'see https://***@host/x and ***'
    """
    text = " ".join(redact_url(word) if "@" in word and "//" in word else word for word in text.split(" "))
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def error_html(prefix: str, error: BaseException, secrets: Iterable[str] = ()) -> str:
    """:func:`plain_error` as a red line, escaped.

        >>> error_html("Not sent", ValueError("x"))
        "<span style='color:#c62828'>Not sent: Something went wrong: ValueError: x</span>"
    """
    text = html.escape(plain_error(error, secrets)).replace("\n", "<br>")
    return f"<span style='color:{_RED}'>{html.escape(prefix)}: {text}</span>"

