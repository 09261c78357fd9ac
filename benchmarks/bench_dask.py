"""Estimate + preflight of a large Parquet dataset on a LocalCluster, and a delivery summary over many logs.

    python benchmarks/bench_dask.py            # 20M contacts, 1M for the pandas ratio, 20M callback lines in 8 files
    python benchmarks/bench_dask.py --quick    # 400k contacts, 100k for the ratio, 400k lines

Prints each figure with the peak memory of the busiest worker (sampled every 0.2 s) against its limit,
and the rows per second of the Dask path against the pandas path on the same machine.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster

import sendframe

TEMPLATE = "Hola {name}, tu pedido de {amount|formatDotComma} EUR ya sale"


def write_contacts(folder: Path, rows: int, per_file: int) -> None:
    rng = np.random.default_rng(1)
    folder.mkdir(parents=True, exist_ok=True)
    for number, start in enumerate(range(0, rows, per_file)):
        n = min(per_file, rows - start)
        phones = (34600000000 + rng.integers(0, rows, size=n)).astype(str)  # about a third are repeats
        names = np.array(["Ana", "Bo", "Núria", "Zoë", "Li"])[rng.integers(0, 5, size=n)]
        pd.DataFrame({"phone": phones, "name": names, "amount": (rng.integers(100, 99999, size=n) / 100).astype(str)}
                     ).to_parquet(folder / f"part{number:04d}.parquet", index=False, row_group_size=per_file)


def write_logs(folder: Path, lines: int, files: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    statuses = np.array(["DELIVRD", "DELIVRD", "DELIVRD", "UNDELIV", "EXPIRED", "ACCEPTD"])
    per_file = lines // files
    for f in range(files):
        i = np.arange(f * per_file, (f + 1) * per_file)
        status = statuses[i % len(statuses)]
        text = pd.Series("2026-11-21T10:00:00.000000+00:00\tid=m" + pd.Series(i).astype(str) + "&status=" + status
                         + "&sent_at=2026-11-21+09%3A" + pd.Series(i % 60).astype(str).str.zfill(2)
                         + "&reported_at=2026-11-21+10%3A" + pd.Series((i * 7) % 60).astype(str).str.zfill(2)
                         + "&mnc=0" + pd.Series(i % 3).astype(str)
                         + "&part=1&campaign_id=" + pd.Series(1 + i % 4).astype(str)
                         + "&recipient=34" + pd.Series(600000000 + i).astype(str) + "&cost=0.045")
        (folder / f"callbacks-{f}.log").write_text("\n".join(text) + "\n")


class PeakMemory:
    """The highest memory any worker reported while the block ran (the scheduler's view, every 0.2 s)."""

    def __init__(self, client: Client) -> None:
        self.client, self.peak, self._stop = client, 0, threading.Event()

    def __enter__(self) -> PeakMemory:
        def watch() -> None:
            while not self._stop.wait(0.2):
                info = self.client.scheduler_info(n_workers=-1)["workers"].values()
                self.peak = max([self.peak, *(w["metrics"]["memory"] for w in info)])
        self._thread = threading.Thread(target=watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (seconds), for CI")
    args = parser.parse_args()
    rows, pandas_rows, lines = (400_000, 100_000, 400_000) if args.quick else (20_000_000, 1_000_000, 20_000_000)
    per_file = 100_000 if args.quick else 1_000_000
    limit = "3GiB"
    with tempfile.TemporaryDirectory() as scratch, LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", memory_limit=limit,
            dashboard_address=None, local_directory=scratch) as cluster, Client(cluster) as client:
        data = Path(scratch)
        started = time.perf_counter()
        write_contacts(data / "contacts", rows, per_file)
        write_logs(data / "logs", lines, 8)
        print(f"data written in {time.perf_counter() - started:.1f} s: {rows:,} contacts, {lines:,} callback lines")

        contacts = dd.read_parquet(data / "contacts")
        with PeakMemory(client) as memory:
            started = time.perf_counter()
            totals = sendframe.estimate_totals(sendframe.estimate(contacts, TEMPLATE, encoding="auto"))
            estimated = time.perf_counter() - started
            started = time.perf_counter()
            problems = sendframe.preflight(contacts, "sms", TEMPLATE, sender="Shop", parts=1)
            counts = sendframe.problem_counts(problems)
            checked = time.perf_counter() - started
        print(f"dask estimate of {rows:,} rows: {estimated:.1f} s ({rows / estimated:,.0f} rows/s), "
              f"cost {totals['cost']:,.2f} {totals['currency']}, encodings {totals['encodings']}")
        print(f"dask preflight of {rows:,} rows: {checked:.1f} s ({rows / checked:,.0f} rows/s), "
              f"problems {dict(zip(counts['rule'], counts['problems'], strict=True))}")
        print(f"peak worker memory: {memory.peak / 2**30:.2f} GiB of {limit} per worker (2 workers)")

        sample = pd.read_parquet(sorted((data / "contacts").iterdir())[0]) if per_file >= pandas_rows else \
            pd.concat([pd.read_parquet(p) for p in sorted((data / "contacts").iterdir())[: pandas_rows // per_file]])
        sample = sample.iloc[:pandas_rows].reset_index(drop=True)
        started = time.perf_counter()
        sendframe.estimate(sample, TEMPLATE, encoding="auto")
        sendframe.preflight(sample, "sms", TEMPLATE, sender="Shop", parts=1)
        alone = time.perf_counter() - started
        small = dd.from_pandas(sample, npartitions=max(2, pandas_rows // 250_000))
        started = time.perf_counter()
        sendframe.estimate_totals(sendframe.estimate(small, TEMPLATE, encoding="auto"))
        sendframe.problem_counts(sendframe.preflight(small, "sms", TEMPLATE, sender="Shop", parts=1))
        spread = time.perf_counter() - started
        print(f"estimate + preflight of {pandas_rows:,} rows: pandas {alone:.1f} s "
              f"({pandas_rows / alone:,.0f} rows/s), dask on 2 workers {spread:.1f} s "
              f"({pandas_rows / spread:,.0f} rows/s): x{alone / spread:.2f}")

        with PeakMemory(client) as memory:
            started = time.perf_counter()
            callbacks = sendframe.read_callbacks(data / "logs", dask=True)
            summary = sendframe.delivery_summary(callbacks=callbacks, by="campaign_id")
            summarised = time.perf_counter() - started
        print(f"delivery summary over {lines:,} callback lines in 8 files: {summarised:.1f} s "
              f"({lines / summarised:,.0f} lines/s), peak worker memory {memory.peak / 2**30:.2f} GiB")
        shown = ["campaign_id", "accepted", "delivered", "delivery_rate", "median_seconds_to_delivery"]
        print(summary[shown].to_string())


if __name__ == "__main__":
    main()
