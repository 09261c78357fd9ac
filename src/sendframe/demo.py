"""``make demo``: the sample campaign end to end against the embedded sandbox.

It starts the sandbox and a callback receiver, checks and sends the sample campaign of
``data/contacts.csv``, waits for the delivery notifications, fetches the message records,
prints a delivery summary and writes ``report.html`` in the current folder.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from importlib import resources
from pathlib import Path

import pandas as pd

DATA = resources.files("sendframe") / "data"  # package data: the demo runs from an installed wheel too
TEMPLATE = "Hi {name|capitalize}, your {city|upper} order of {amount|formatDotComma} EUR is on its way. Track it: {tracking|shorten}"
SENDER = "SendFrame"
# gsm-pt carries the accents of Spanish and Portuguese names in 7 bits (gsm would send them as ?)
ENCODING = "gsm-pt"


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contacts", default=str(DATA / "contacts.csv"), help="contact table (CSV)")
    parser.add_argument("--out", default="report.html", help="where to write the HTML report")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for delivery notifications at most")


def _wait_for_callbacks(receiver, expected_ids: set[str], timeout: float):
    from sendframe.api.notifications import FINAL_STATUSES

    deadline = time.monotonic() + timeout
    callbacks = receiver.callbacks()
    while time.monotonic() < deadline:
        callbacks = receiver.callbacks()
        final = set(callbacks.loc[callbacks["status"].isin(FINAL_STATUSES), "id"].dropna())
        if expected_ids <= final:
            break
        time.sleep(0.5)
    return callbacks


_USER_AGENTS = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
)


def _simulate_clicks(records_text: pd.DataFrame, share: float = 0.3) -> int:
    """Some recipients open their tracking link, so the report has clicks to show."""

    import httpx

    links = records_text["message"].astype(str).str.extract(r"(https?://\S+/s/\w+)", expand=False).dropna()
    chosen = links.sample(frac=share, random_state=1)
    with httpx.Client(follow_redirects=False, timeout=5) as http:
        for n, link in enumerate(chosen):
            http.get(link, headers={"User-Agent": _USER_AGENTS[n % len(_USER_AGENTS)]})
    return len(chosen)


def run(name: str, args: argparse.Namespace) -> int:
    import sendframe
    from sendframe.delivery.outcomes import message_outcomes
    from sendframe.notebook.charts import dashboard
    from sendframe.sandbox import Sandbox

    work = Path(tempfile.mkdtemp(prefix="sendframe-demo-"))
    contacts = sendframe.read_contacts(args.contacts)
    # each order has its tracking page; the {tracking|shorten} filter turns it into a short link
    contacts = contacts.assign(tracking="https://shop.example.org/orders/" + pd.Series(range(1000, 1000 + len(contacts)), index=contacts.index).astype(str))
    print(f"Contacts: {len(contacts)} rows from {args.contacts}")

    problems = sendframe.preflight(contacts, "sms", TEMPLATE, sender=SENDER, parts=3, encoding=ENCODING,
                                   suppression=DATA / "suppression.csv")
    errors = problems[problems["severity"] == "error"] if "severity" in problems else problems
    # a repeated recipient would get the message twice: its later rows are left out too
    left_out = problems[(problems["severity"] == "error") | (problems["rule"] == "duplicate_recipient")]
    print(f"Preflight: {len(problems)} problems ({len(errors)} errors); rows with errors or a repeated recipient "
          "are left out:")
    if not problems.empty:
        print(problems.groupby(["rule", "severity"] if "severity" in problems else ["rule"]).size().to_string())
    sendable = contacts.drop(index=left_out["row"].unique(), errors="ignore")

    costs = sendframe.estimate(sendable, TEMPLATE, encoding=ENCODING, parts=3)
    print(f"Estimate: {len(sendable)} recipients, {int(costs['parts'].sum())} parts, cost {float(costs['cost'].sum()):.4f}")

    with Sandbox(db=str(work / "sandbox.sqlite")) as sb, sendframe.Receiver(work / "callbacks.sqlite") as receiver:
        print(f"Sandbox: {sb.base_url}   Receiver: http://{receiver.host}:{receiver.port}")
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        results = sendframe.send_sms(
            sendable, TEMPLATE, SENDER, client=client, parts=3, encoding=ENCODING, campaign="Demo campaign",
            notification_url=receiver.notification_url, ledger=work / "ledger.sqlite", progress=False,
        )
        accepted = results[results["outcome"] == "accepted"]
        print(f"Sent: {len(accepted)} accepted, {int((results['outcome'] == 'rejected').sum())} rejected")
        callbacks = _wait_for_callbacks(receiver, set(accepted["id"]), args.wait)
        _simulate_clicks(records_text=sendframe.fetch_records(accepted["id"], client=client).messages)
        records = sendframe.fetch_records(accepted["id"], client=client)
        client.close()

    summary = sendframe.delivery_summary(results.assign(recipient=sendable["phone"]), callbacks, records, estimate=costs)
    pd.set_option("display.width", 140)
    print("\nDelivery summary")
    print(summary.T.to_string())
    outcomes = message_outcomes(results, callbacks, records, estimate=costs, recipients=sendable["phone"])
    board = dashboard(outcomes, summary=summary, title="sendframe demo campaign")
    path = Path(args.out).resolve()
    board.write_html(str(path))
    print(f"\nReport written to {path}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="sendframe demo")
    add_arguments("demo", parser)
    return run("demo", parser.parse_args())
