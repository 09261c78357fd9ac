"""``sendframe report``: the delivery dashboard as one offline HTML file.

    sendframe report --results results.csv --callbacks callbacks.sqlite --out report.html
    sendframe report --results results.csv --callbacks access.log --notification-url 'https://x/dlr?mid=%i&st=%s' --records
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

_RECIPIENT_COLUMNS = ("to", "recipient", "phone")


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", required=True, help="send results CSV (written by `sendframe send --out`)")
    parser.add_argument("--callbacks", help="receiver log (SQLite) or web server access log with the notifications")
    parser.add_argument("--notification-url", help="the notificationUrl used, when --callbacks is an access log")
    parser.add_argument("--records", action="store_true",
                        help="also fetch the message records (credentials from SENDFRAME_BASE_URL, SENDFRAME_USERNAME, SENDFRAME_API_PASSWORD)")
    parser.add_argument("--title", default="Delivery report", help="report title")
    parser.add_argument("--out", default="report.html", help="HTML file to write (default: report.html)")


def read_results(path: str | Path) -> pd.DataFrame:
    """Read a results CSV written by ``sendframe send --out`` back with its types."""
    frame = pd.read_csv(path, dtype={"id": "string", "error_description": "string"}, keep_default_na=True)
    for column in ("parts", "error_code", "campaign_id", "sending_id", "batch"):
        if column in frame:
            frame[column] = frame[column].astype("Int64")
    if "accepted" in frame:
        frame["accepted"] = frame["accepted"].astype("boolean")
    return frame


def run(name: str, args: argparse.Namespace) -> int:
    import sendframe
    from sendframe.delivery.outcomes import message_outcomes
    from sendframe.notebook.charts import dashboard

    results = read_results(args.results)
    callbacks = sendframe.read_callbacks(args.callbacks, notification_url=args.notification_url) if args.callbacks else None
    records = None
    if args.records:
        ids = results["id"].dropna()
        with sendframe.Client() as client:
            records = sendframe.fetch_records(ids, client=client)
    recipient_column = next((c for c in _RECIPIENT_COLUMNS if c in results), None)
    recipients = results[recipient_column].astype("string") if recipient_column else None
    summary = sendframe.delivery_summary(results, callbacks, records)
    board = dashboard(message_outcomes(results, callbacks, records, recipients=recipients), summary=summary, title=args.title)
    if callbacks is not None and callbacks.attrs.get("junk_lines"):
        board.notes.append(f"{callbacks.attrs['junk_lines']} lines of the callback log were not notifications and were left out.")
    path = Path(args.out).resolve()
    board.write_html(str(path))
    print(f"Report written to {path}")
    return 0
