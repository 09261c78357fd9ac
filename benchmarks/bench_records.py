"""Fetch message records: fetch_records (up to 100 ids per GET, URLs kept short, 8 at once) vs one request per id.

    python benchmarks/bench_records.py            # sandbox seeded with 100,000 messages
    python benchmarks/bench_records.py --quick    # 2,000 messages, smoke run

The sandbox runs as a subprocess (``sendframe sandbox --clock manual``) and is seeded through
the API (1,000 recipients per request). ``fetch_records`` fetches every id; the naive way
(``Client.get_sms([id])`` in a loop) is timed on a slice of at most 1,000 ids (100 with --quick) and extrapolated
linearly to the full size (the output says so). Prints records/s for both and the ratio.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

from sandbox_process import start_sandbox
from sendframe.api.client import Client
from sendframe.delivery.records import fetch_records

NAIVE_CAP = 1_000


def seed(client: Client, messages: int) -> list[str]:
    ids: list[str] = []
    for start in range(0, messages, 1000):
        to = [f"4479{n:08d}" for n in range(start, min(messages, start + 1000))]
        answer = client.send_sms({"message": "Your code is ready", "to": to, "from": "Shop", "campaignName": "bench"})
        ids.extend(item.id for item in answer.result if item.accepted)
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 messages (smoke run)")
    parser.add_argument("--messages", type=int, default=None)
    args = parser.parse_args(argv)
    total = args.messages or (2_000 if args.quick else 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        process, base_url = start_sandbox(["--clock", "manual", "--db", str(Path(tmp) / "sandbox.sqlite")])
        try:
            with Client(base_url, "demo", "demo-password") as client:
                start = time.perf_counter()
                ids = seed(client, total)
                seeding = time.perf_counter() - start
                start = time.perf_counter()
                records = fetch_records(ids, client=client)
                fast = time.perf_counter() - start
                naive_ids = ids[: min(len(ids), 100 if args.quick else NAIVE_CAP)]
                start = time.perf_counter()
                for message_id in naive_ids:
                    client.get_sms([message_id])
                slow = (time.perf_counter() - start) * len(ids) / len(naive_ids)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    if len(records.messages) != len(ids) or records.unknown_ids:
        print(f"fetch_records found {len(records.messages)} of {len(ids)} records", file=sys.stderr)
        return 1
    scaled = f" (timed on {len(naive_ids):,} ids, extrapolated)" if len(naive_ids) < len(ids) else ""
    print(f"messages seeded: {len(ids):,} in {seeding:.1f} s")
    print(f"fetch_records (<=100 ids per GET, 8 concurrent): {fast:8.2f} s  {len(ids) / fast:10,.0f} records/s; "
          f"events: {len(records.events):,}")
    print(f"one GET per id:                            {slow:8.2f} s  {len(ids) / slow:10,.0f} records/s{scaled}")
    print(f"ratio: {slow / fast:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
