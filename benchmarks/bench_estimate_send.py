"""Estimate, then send, one campaign of messy contacts to the sandbox: the CPU each step costs the client.

    python benchmarks/bench_estimate_send.py             # 1,000,000 contacts
    python benchmarks/bench_estimate_send.py --rows 50000

What an analyst runs before pressing send, then the send (issue 19: a send of a table that was just
estimated reuses that work and measures nothing again). Setup, not timed: a messy contact CSV
(``messy_data.py``) and ``sendframe sandbox`` started as its own process. Timed, in this process: ``read_contacts``,
``msg.estimate`` and ``msg.send`` with a ledger file, every option the campaign uses on (``{UNSUB_URL}``,
parts 2, gsm-pt, a notificationUrl). Beside it, in the same run, the analyst's way (``analyst.prepare``:
phonenumbers, str methods, parts and prices per row in Python) on the same file, which is only the
estimate: it sends nothing. Prints wall and CPU seconds per step and the peak memory of this process.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import analyst
import sendframe
from messy_data import TEMPLATE, write_messy_csv
from sandbox_process import peak_memory_mib, start_sandbox, stop

SENDER = "Shop"
AUTH = ("demo", "demo-password")


def timed(step: str, clock: dict[str, tuple[float, float]], work):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    value = work()
    clock[step] = (time.perf_counter() - wall, time.process_time() - cpu)
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    clock: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = write_messy_csv(folder / "contacts.csv", args.rows)
        server, base_url = start_sandbox(["--db", str(folder / "sandbox.sqlite")])
        try:
            with sendframe.Client(base_url, *AUTH) as client, warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the skipped rows are said once per call
                msg = sendframe.sms(TEMPLATE, sender=SENDER, parts=2, encoding="gsm-pt",
                                    notification_url="http://127.0.0.1:9/cb")
                contacts = timed("read_contacts", clock, lambda: sendframe.read_contacts(csv))
                estimate = timed("estimate", clock, lambda: msg.estimate(contacts))
                result = timed("send", clock, lambda: msg.send(contacts, client=client, progress=False,
                                                                ledger=folder / "bench.ledger.sqlite"))
            peak = peak_memory_mib()
            rows = analyst.read_rows(csv)
            timed("analyst prepare", clock, lambda: analyst.prepare(rows, unsub_link="https://sndf.io/u/xxxxxxxxxxxx"))
        finally:
            stop(server)
    sent = int(result["outcome"].isin(["accepted", "rejected", "unknown"]).sum())
    print(f"contacts: {args.rows:,} messy rows; {TEMPLATE!r}, parts 2, gsm-pt, notificationUrl; "
          f"estimated cost {estimate.attrs['totals']['cost']:.2f}; sent {sent:,}")
    for step, (wall, cpu) in clock.items():
        print(f"  {step:<16} wall {wall:7.2f} s   cpu {cpu:7.2f} s")
    ours = clock["estimate"][1] + clock["send"][1]
    print(f"estimate then send: cpu {ours:.2f} s; client peak memory {peak:,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
