"""Fetch the message records of a campaign: fetch_records vs the analyst's httpx loops.

    python benchmarks/bench_records.py            # a campaign to 100,000 messy contacts
    python benchmarks/bench_records.py --quick    # 3,000 contacts, smoke run

Setup (not timed): ``sendframe sandbox --clock manual`` in its own process; a campaign sent to a messy
contact CSV (``messy_data.py``) with ``msg.send`` (``{UNSUB_URL}``, parts 2, gsm-pt, a ledger), then the
sandbox's clock moved 10 minutes so every record carries its events (sent, delivered or not).

Timed, on the ids of that send, in this one run:

- ``sendframe.fetch_records(result["id"])``: what a user runs (up to 100 ids per GET, URLs kept short,
  8 at once, answers read by pyarrow into a messages and an events frame);
- the analyst who read the spec: ``httpx.Client.get`` of 100 ids at a time, one after the other, each
  answer's ``.json()`` and ``pandas.json_normalize`` into the same two frames. Timed on at most 20,000
  ids (2,000 with --quick) and extrapolated linearly;
- one GET per id (``Client.get_sms([id])`` in a loop) on at most 1,000 ids (100 with --quick), extrapolated.

Prints records/s of each and the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import httpx
import pandas as pd

import sendframe
from messy_data import TEMPLATE, write_messy_csv
from sandbox_process import start_sandbox, stop

AUTH = ("demo", "demo-password")


def analysts_loop(base_url: str, ids: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sequential GETs of 100 ids, ``.json()`` and ``pandas.json_normalize``: messages and events frames."""
    records: list[dict] = []
    with httpx.Client(base_url=base_url, auth=AUTH, timeout=60) as http:
        for start in range(0, len(ids), 100):
            answer = http.get("/api/rest/sms/" + ",".join(ids[start:start + 100]))
            records.extend(answer.json()["data"])
    messages = pd.json_normalize(records).drop(columns=["events"])
    events = pd.json_normalize(records, record_path="events", meta=["id"])
    events["date"] = pd.to_datetime(events["date"], utc=True)
    return messages, events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3,000 contacts (smoke run)")
    parser.add_argument("--contacts", type=int, default=None)
    args = parser.parse_args(argv)
    total = args.contacts or (3_000 if args.quick else 100_000)
    loop_cap, one_cap = (2_000, 100) if args.quick else (20_000, 1_000)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = Path(tmp)
        csv = write_messy_csv(folder / "contacts.csv", total)
        process, base_url = start_sandbox(["--clock", "manual", "--db", str(folder / "sandbox.sqlite")])
        try:
            with sendframe.Client(base_url, *AUTH) as client:
                start = time.perf_counter()
                msg = sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="gsm-pt", campaign_name="records bench")
                result = msg.send(sendframe.read_contacts(csv), client=client, ledger=folder / "c.ledger",
                                  progress=False)
                httpx.post(f"{base_url}/_sandbox/advance", json={"seconds": 600}, timeout=600)
                seeding = time.perf_counter() - start
                ids = result["id"].dropna().tolist()
                start = time.perf_counter()
                records = sendframe.fetch_records(result["id"], client=client)
                fast = time.perf_counter() - start
                looped = ids[:loop_cap]
                start = time.perf_counter()
                messages, events = analysts_loop(base_url, looped)
                loop = (time.perf_counter() - start) * len(ids) / len(looped)
                singles = ids[:one_cap]
                start = time.perf_counter()
                for message_id in singles:
                    client.get_sms([message_id])
                slow = (time.perf_counter() - start) * len(ids) / len(singles)
        finally:
            stop(process)
    if len(records.messages) != len(ids) or records.unknown_ids or len(messages) != len(looped):
        print(f"fetch_records found {len(records.messages)} of {len(ids)} records", file=sys.stderr)
        return 1
    per_record = len(records.events) / len(ids)
    print(f"campaign: {total:,} messy contacts, {len(ids):,} messages accepted and seeded in {seeding:.1f} s; "
          f"{per_record:.1f} events per record ({len(events) / len(looped):.1f} in the analyst's frames)")
    print(f"fetch_records (<=100 ids per GET, 8 at once, pyarrow): {fast:8.2f} s {len(ids) / fast:10,.0f} records/s")
    scaled = f" (timed on {len(looped):,} ids, extrapolated)" if len(looped) < len(ids) else ""
    print(f"analyst: 100 ids per GET, .json(), json_normalize: {loop:8.2f} s {len(ids) / loop:10,.0f} records/s"
          f"{scaled}")
    scaled = f" (timed on {len(singles):,} ids, extrapolated)" if len(singles) < len(ids) else ""
    print(f"one GET per id:                                  {slow:8.2f} s {len(ids) / slow:10,.0f} records/s{scaled}")
    print(f"ratio: {loop / fast:.1f}x the analyst's loop, {slow / fast:.1f}x one GET per id "
          f"(load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
