"""Preview and price an SMS campaign from a messy contact CSV: sendframe vs the analyst's loop.

    python benchmarks/bench_render_estimate.py            # 1,000,000 rows (the loop timed on 100,000)
    python benchmarks/bench_render_estimate.py --quick    # 20,000 rows (loop on all of them)

What is timed, on the same CSV (``messy_data.py``: phones as people type them, repeats, junk, names and
amounts as real tables hold them), in this one run:

- sendframe, every step a user runs: ``read_contacts(csv)``, then with
  ``msg = sms(TEMPLATE, sender="Shop", parts=2, encoding="gsm-pt")`` both ``msg.render(contacts)`` (the
  texts) and ``msg.estimate(contacts)`` (encoding, parts, cost of every row a send would send, with the
  rows it would skip: invalid phones, repeats, too many parts);
- the analyst's loop (``analyst.py``): ``pandas.read_csv(dtype=str)`` and per row phonenumbers, a set of
  recipients seen, the text by str methods, a set test for the gsm-pt characters, parts by arithmetic and a
  price per calling code. It is timed on ``--loop-rows`` rows and extrapolated linearly (said so below).

Prints each step's time, rows/s, the ratio, whether both ways give the same texts and parts on the rows
both send (the analyst's loop drops numbers that sendframe repairs, said as counts), and peak memory.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import analyst
import sendframe
from messy_data import TEMPLATE, write_messy_csv
from sandbox_process import peak_memory_mib

LINK_BASE = "https://sndf.io"


def timed(label: str, work, times: dict[str, float]):
    """Run ``work``, keep its wall time under ``label``, print wall and CPU (the machine may be shared)."""
    start, cpu = time.perf_counter(), time.process_time()
    value = work()
    times[label] = time.perf_counter() - start
    print(f"  {label:<44} {times[label]:8.2f} s wall {time.process_time() - cpu:8.2f} s CPU", flush=True)
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--loop-rows", type=int, default=100_000, help="rows the analyst's loop is timed on")
    parser.add_argument("--quick", action="store_true", help="20,000 rows, the loop on all of them")
    args = parser.parse_args(argv)
    rows, loop_rows = (20_000, 20_000) if args.quick else (args.rows, min(args.loop_rows, args.rows))
    msg = sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="gsm-pt", link_base=LINK_BASE)
    unsub = f"{LINK_BASE}/u/xxxxxxxxxxxx"  # what previews show for {UNSUB_URL}: the link's real length
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        csv = write_messy_csv(Path(folder) / "contacts.csv", rows)
        small = write_messy_csv(Path(folder) / "warm.csv", 500, seed=1)
        msg.estimate(sendframe.read_contacts(small)), analyst.prepare(analyst.read_rows(small), unsub_link=unsub)
        print(f"{rows:,} contacts ({csv.stat().st_size / 1e6:,.1f} MB CSV); template {TEMPLATE!r}, parts 2, gsm-pt")
        contacts = timed("sendframe.read_contacts(csv)", lambda: sendframe.read_contacts(csv), times)
        texts = timed("msg.render(contacts)", lambda: msg.render(contacts), times)
        est = timed("msg.estimate(contacts)", lambda: msg.estimate(contacts), times)
        prepared = timed(f"analyst: read_csv + loop ({loop_rows:,} rows)",
                         lambda: analyst.prepare(analyst.read_rows(csv, loop_rows), unsub_link=unsub), times)
    ours = sum(times[k] for k in ("sendframe.read_contacts(csv)", "msg.render(contacts)", "msg.estimate(contacts)"))
    loop = times[f"analyst: read_csv + loop ({loop_rows:,} rows)"] * rows / loop_rows
    sent = np.flatnonzero((est["action"] == "send").to_numpy())
    both = np.intersect1d(sent[sent < loop_rows], np.asarray(prepared.positions))
    where = {p: i for i, p in enumerate(prepared.positions)}
    same_text = all(texts.iloc[p] == prepared.texts[where[p]] for p in both)
    same_parts = all(int(est["parts"].iloc[p]) == prepared.parts[where[p]] for p in both)
    totals = est.attrs["totals"]
    print(f"sendframe: {len(sent):,} rows to send, {totals['messages']:,} messages, {totals['cost']:,.2f} "
          f"{totals['currency']}; skipped {est['action'].value_counts().drop('send', errors='ignore').to_dict()}")
    print(f"analyst's loop on its {loop_rows:,} rows: {len(prepared.recipients):,} to send, {prepared.invalid:,} "
          f"invalid phones, {prepared.repeated:,} repeats ({int((sent < loop_rows).sum()):,} sendframe sends of "
          "those rows: it repairs floats, national forms of other countries)")
    print(f"sendframe, read_contacts + render + estimate: {ours:8.2f} s  {rows / ours:12,.0f} rows/s")
    scaled = "" if loop_rows == rows else f" (timed on {loop_rows:,} rows, extrapolated linearly)"
    print(f"analyst's loop (phonenumbers, str, set):     {loop:8.2f} s  {rows / loop:12,.0f} rows/s{scaled}")
    print(f"ratio: {loop / ours:.1f}x (target >= 10x; wall times, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores)")
    print(f"same texts and parts on the {len(both):,} rows both send: {same_text and same_parts}")
    print(f"peak memory: {peak_memory_mib():,.0f} MB")
    return 0 if same_text and same_parts else 1


if __name__ == "__main__":
    raise SystemExit(main())
