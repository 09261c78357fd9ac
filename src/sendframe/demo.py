"""``make demo``: the sample campaign end to end against the embedded sandbox.

It starts the sandbox and a callback receiver, checks and sends the sample campaign of
``data/contacts.csv``, waits for the delivery notifications, fetches the message records,
prints a delivery summary and writes ``report.html`` in the current folder.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from importlib import resources
from pathlib import Path

import httpx
import pandas as pd

import sendframe
from sendframe.campaign.message import Message, sms
from sendframe.errors import RowsSkippedWarning
from sendframe.sandbox import Sandbox

DATA = resources.files("sendframe") / "data"  # package data: the demo runs from an installed wheel too
TEMPLATE = ("Hi {name|capitalize}, your {city|upper} order of {amount|formatDotComma} EUR is on its way. "
            "Track it: {tracking|shorten}")
SENDER = "SendFrame"
# gsm-pt carries the accents of Spanish and Portuguese names in 7 bits (gsm would send them as ?)
ENCODING = "gsm-pt"


def add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contacts", default=str(DATA / "contacts.csv"), help="contact table (CSV)")
    parser.add_argument("--out", default="report.html", help="where to write the HTML report")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for delivery notifications at most")


_USER_AGENTS = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
)


def _simulate_clicks(records_text: pd.DataFrame, share: float = 0.3) -> int:
    """Some recipients open their tracking link, so the report has clicks to show."""
    links = records_text["message"].astype(str).str.extract(r"(https?://\S+/s/\w+)", expand=False).dropna()
    chosen = links.sample(frac=share, random_state=1)
    with httpx.Client(follow_redirects=False, timeout=5) as http:
        for n, link in enumerate(chosen):
            http.get(link, headers={"User-Agent": _USER_AGENTS[n % len(_USER_AGENTS)]})
    return len(chosen)


def demo_message(notification_url: str | None = None) -> Message:
    """The demo campaign's message: the same one is checked, priced and sent."""
    return sms(TEMPLATE, sender=SENDER, parts=3, encoding=ENCODING, campaign_name="Demo campaign",
               suppression=DATA / "suppression.csv", notification_url=notification_url)


def run(name: str, args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="sendframe-demo-"))
    contacts = sendframe.read_contacts(args.contacts)
    # each order has its tracking page; the {tracking|shorten} filter turns it into a short link
    orders = pd.Series(range(1000, 1000 + len(contacts)), index=contacts.index).astype(str)
    contacts = contacts.assign(tracking="https://shop.example.org/orders/" + orders)
    print(f"Contacts: {len(contacts)} rows from {args.contacts}")

    checking = demo_message()
    problems = checking.preflight(contacts)
    plan = checking.plan(contacts)
    left_out = plan["action"].value_counts().drop("send", errors="ignore")
    print(f"Preflight: {len(problems)} problems ({int((problems['severity'] == 'error').sum())} errors); "
          f"left out of the send: {', '.join(f'{n} {k}' for k, n in left_out.items()) or 'none'}")
    if not problems.empty:
        print(problems.groupby(["rule", "severity"]).size().to_string())
    costs = checking.estimate(contacts)
    totals = costs.attrs["totals"]
    print(f"Estimate: {totals['billable']} recipients, {totals['messages']} parts, cost {totals['cost']:.4f}")

    with Sandbox(db=str(work / "sandbox.sqlite")) as sb, sendframe.Receiver(work / "callbacks.log") as receiver:
        print(f"Sandbox: {sb.base_url}   Receiver: http://{receiver.host}:{receiver.port}")
        client = sendframe.Client(sb.base_url, sb.username, sb.api_password)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RowsSkippedWarning)  # said above, with the preflight
            results = demo_message(receiver.notification_url).send(contacts, client=client,
                                                                   ledger=work / "ledger.sqlite", progress=False)
        outcome = results["outcome"].astype("str")
        print(f"Sent: {int((outcome == 'accepted').sum())} accepted, {int((outcome == 'rejected').sum())} rejected")
        callbacks = receiver.wait_for(results, timeout=args.wait, progress=False)
        accepted = results.loc[outcome == "accepted", "id"]
        _simulate_clicks(records_text=sendframe.fetch_records(accepted, client=client).messages)
        records = sendframe.fetch_records(accepted, client=client)
        client.close()

    outcomes = sendframe.outcomes(results, callbacks, records, contacts, estimate=costs)
    summary = sendframe.delivery_summary(results, callbacks, records, estimate=costs)
    pd.set_option("display.width", 140)
    print("\nDelivery summary")
    print(summary.T.to_string())
    board = sendframe.dashboard(outcomes, summary=summary, title="sendframe demo campaign")
    path = Path(args.out).resolve()
    board.write_html(str(path))
    print(f"\nReport written to {path}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="sendframe demo")
    add_arguments("demo", parser)
    return run("demo", parser.parse_args())
