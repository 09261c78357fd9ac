"""What the sandbox's carrier steps cost: planning, applying due steps and filling notification URLs.

    python benchmarks/bench_steps.py            # 20,000 messages
    python benchmarks/bench_steps.py 100000
    python benchmarks/bench_steps.py --quick    # smoke run (2,000)
    python benchmarks/bench_steps.py 40000 --late   # planned 600 s late: every step applied while planning

Measures the CPU the sandbox's ``StepRunner`` spends on carrier steps, the part of the notification phase
that is not the notifier: planning each message with the simulated carrier, applying its due steps
(events, statuses, mnc, costs), filling each report's notificationUrl and writing all of it to SQLite,
one transaction per round, exactly as ``StepRunner.apply`` runs in the steps process. No notification is
sent (that is the notifier's cost, measured by ``bench_notifier``).

How: an in-process ``Sandbox`` (manual clock, a database file) accepts N SMS over HTTP, 1,000 recipients a
request, the rehearsal's campaign (recipients of the messy table, ``parts 2``, ``gsm-pt``, the
notificationUrl of ``sendframe receive``, all twelve escape codes, each row's tagged ``sf_row`` as ``msg.send``
with a ledger tags it), scheduled for later so nothing is planned yet; the sandbox stops. Then a ``StepRunner`` on the
same file runs rounds in this process, timed with this process's CPU clock:

1. plan: every message planned at its ready time (its ``sent`` step applied at once, the rest stored);
2. steps: the clock 600 s later, every remaining step applied (ACCEPTD and final reports: events,
   statuses, notification jobs with their URLs filled).

It prints CPU microseconds per message and per notification job for each phase and both together.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import httpx

import sendframe
from messy_data import TEMPLATE, messy_contacts
from sendframe.delivery.receiver import CALLBACK_PATH, receiver_query
from sendframe.sandbox import Sandbox
from sendframe.sandbox.state import SandboxState, quiet_collector
from sendframe.sandbox.steps import StepRunner

AUTH = ("demo", "demo-password")
READY = datetime(2099, 11, 21, 9, 30, tzinfo=UTC)
# the receiver's notificationUrl (all twelve escape codes, a token); nothing listens there, nothing is sent
URL = f"http://127.0.0.1:9{CALLBACK_PATH}tok-Abc_123?{receiver_query(params={'ref': 'crm 2026'})}"


def accept(db: Path, count: int) -> None:
    """Send ``count`` SMS (scheduled at READY) to a sandbox on ``db`` and stop it."""
    contacts = sendframe.read_contacts(messy_contacts(int(count * 1.3) + 100))
    contacts = contacts[contacts["phone_valid"] & ~contacts["duplicate"]].head(count)
    to, names, amounts = contacts["phone"].tolist(), contacts["name"].tolist(), contacts["amount"].tolist()
    if len(to) < count:
        raise SystemExit(f"only {len(to)} recipients for {count}")
    message = TEMPLATE.replace(" Baja: {UNSUB_URL}", "")
    with Sandbox(db=str(db), clock="manual") as sb, httpx.Client(base_url=sb.base_url, auth=AUTH, timeout=300) as http:
        for start in range(0, count, 1000):
            rows = range(start, min(start + 1000, count))
            body = {"message": message, "from": "Shop", "to": to[start:start + 1000], "parts": 2,
                    "encoding": "gsm-pt", "notificationUrl": [f"{URL}&sf_row=r{row}" for row in rows],
                    "scheduleDate": READY.strftime("%Y%m%d%H%M%S"),
                    "sub": [{"name": n, "amount": a} for n, a in
                            zip(names[start:start + 1000], amounts[start:start + 1000], strict=True)]}
            response = http.post("/api/rest/sms", json=body)
            if response.status_code != 202:
                raise SystemExit(f"send failed: {response.status_code} {response.text[:300]}")


def run_rounds(runner: StepRunner, moment: float) -> tuple[float, float, Counter[str]]:
    """Run rounds of due steps at ``moment`` until none is left: (CPU s, wall s, counts)."""
    done: Counter[str] = Counter()
    cpu, wall = time.process_time(), time.perf_counter()
    while step := runner.apply(moment):  # the round itself, without the notifier
        done.update(step)
    return time.process_time() - cpu, time.perf_counter() - wall, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("messages", nargs="?", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="2,000 messages, for a smoke run")
    parser.add_argument("--late", action="store_true",
                        help="plan 600 s after the ready time: every step is applied at once while planning, as "
                             "after a send that kept the carrier waiting (the rehearsal's case)")
    args = parser.parse_args()
    count = 2_000 if args.quick else args.messages
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "sandbox.sqlite"
        accept(db, count)
        state = SandboxState.create(db=str(db), clock="manual")
        runner = StepRunner(state)
        quiet_collector()  # as ``sendframe sandbox`` sets it before serving
        ready = READY.timestamp()
        plan_cpu, plan_wall, planned = run_rounds(runner, ready + (600 if args.late else 0))
        notes_after_plan = state.db.execute("SELECT COUNT(*) FROM notifications").fetchone()[0]
        steps_cpu, steps_wall, applied = run_rounds(runner, ready + 600)
        notes = state.db.execute("SELECT COUNT(*) FROM notifications").fetchone()[0]
        messages = planned["planned"]
        state.db.close()
    total = plan_cpu + steps_cpu
    print(f"bench_steps: sandbox StepRunner.apply CPU (carrier plans, steps, URL filling, SQLite writes; "
          f"no notification sent), {messages:,} SMS, {notes:,} notification jobs "
          f"({notes_after_plan:,} of them made while planning)")
    print(f"  plan  (due steps applied at once){plan_cpu:7.2f} s CPU  {plan_wall:7.2f} s wall  "
          f"{1e6 * plan_cpu / messages:6.1f} µs/message")
    print(f"  steps (ACCEPTD, final reports) {steps_cpu:7.2f} s CPU  {steps_wall:7.2f} s wall  "
          f"{1e6 * steps_cpu / messages:6.1f} µs/message  {1e6 * steps_cpu / max(notes, 1):6.1f} µs/notification")
    print(f"  both                           {total:7.2f} s CPU  {1e6 * total / messages:6.1f} µs/message  "
          f"{1e6 * total / max(notes, 1):6.1f} µs/notification")
    print(f"  steps applied: {dict(sorted((k, v) for k, v in (planned + applied).items() if k.startswith('step')))}")


if __name__ == "__main__":
    main()
