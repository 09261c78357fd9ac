"""``sendframe report``: the delivery dashboard as one offline HTML file.

    sendframe report --results results.csv --callbacks callbacks.sqlite --campaign "Black Friday" --out report.html
    sendframe report --results results.csv --callbacks access.log \\
        --notification-url 'https://x/dlr?mid=%i&st=%s' --records

plotly is imported only when the report is drawn, so ``--help`` works without the notebook stack.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from sendframe.api.client import Client
from sendframe.campaign.ledger_rows import ROW_DTYPES
from sendframe.delivery.callbacks import read_callbacks
from sendframe.delivery.metrics import send_time_of, summarise_outcomes
from sendframe.delivery.outcomes import message_outcomes
from sendframe.delivery.records import fetch_records
from sendframe.notebook.charts import dashboard

_RECIPIENT_COLUMNS = ("to", "recipient", "phone")


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", required=True, help="send results CSV (written by `sendframe send --out`)")
    parser.add_argument("--callbacks", help="receiver log (SQLite) or web server access log with the notifications")
    parser.add_argument("--notification-url", help="the notificationUrl used, when --callbacks is an access log")
    parser.add_argument("--records", action="store_true",
                        help="also fetch the message records "
                             "(credentials from SENDFRAME_BASE_URL, SENDFRAME_USERNAME, SENDFRAME_API_PASSWORD)")
    parser.add_argument("--title", default="Delivery report", help="report title")
    parser.add_argument("--campaign",
                        help="the campaign's name, for the report's header (its ids come from the results)")
    parser.add_argument("--out", default="report.html", help="HTML file to write (default: report.html)")


def run(name: str, args: argparse.Namespace) -> int:
    """Read the results (and callbacks, and records), build the dashboard and write it."""
    results = pd.read_csv(args.results, dtype=ROW_DTYPES)  # the answer columns typed as the ledger types them
    callbacks = read_callbacks(args.callbacks, notification_url=args.notification_url) if args.callbacks else None
    records = None
    if args.records:
        with Client() as client:
            records = fetch_records(results["id"].dropna(), client=client)
    recipient_column = next((c for c in _RECIPIENT_COLUMNS if c in results), None)
    recipients = results[recipient_column].astype("string") if recipient_column else None
    outcomes = message_outcomes(results, callbacks, records, recipients=recipients)
    # the summary counts the same outcomes: built once (delivery_summary(results, ...) would build them again)
    summary = summarise_outcomes(outcomes, send_time=send_time_of(results))
    board = dashboard(outcomes, summary=summary, title=args.title, campaign=args.campaign)
    if callbacks is not None and callbacks.attrs.get("junk_lines"):
        board.notes.append(f"{callbacks.attrs['junk_lines']} lines of the callback log were not notifications "
                           "and were left out.")
    path = Path(args.out).resolve()
    board.write_html(str(path))
    print(f"Report written to {path}")
    return 0
