"""Estimate + preflight of a 20M-row Parquet dataset on a LocalCluster, and a delivery summary over 20M callback lines.

    python bench_dask.py --data /var/tmp/sendframe-bench   # 20M contacts, 1M for the pandas ratio, 20M lines in 8 files
    python bench_dask.py --quick                           # 400k contacts, 100k for the ratio, 400k lines (a minute)

What it measures, on a ``distributed.LocalCluster`` of 2 worker processes (1 thread each, a memory
limit per worker, printed):

1. ``read_contacts(folder, dask=True)`` of a Parquet dataset of messy contacts (``messy_data``: phones
   as people type them, ~12% people again, a few % across files), then ``msg.estimate`` (totals by
   Dask reductions) and ``msg.preflight`` (problem counts; repeats found across partitions by a
   shuffle on the phone): wall time, rows/s, the workers' CPU seconds per million rows, and the
   peak resident memory (VmHWM, reset before each phase) of each worker against its limit.
2. The pandas path on the first 1M rows (``read_contacts`` + estimate + preflight, in a process of
   its own so its CPU and peak memory are its own) against the same calls on Dask on those rows and
   on the whole dataset: rows/s and CPU per row of each, back to back in one run.
3. ``read_callbacks(folder, dask=True)`` + ``delivery_summary`` over receiver logs in 8 files (two
   notifications per message, in different files; ~0.5% retries repeated in another file): plain
   logs are read in 64 MiB line ranges, repeats dropped by a shuffle on the id. Same figures.

With ``--quick`` the Dask answers are also checked against pandas on the same data.
The data is generated once (vectorised) under ``--data`` and reused by the next run of the same size.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import logging
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from dask import dataframe as dd
from distributed import Client, LocalCluster

import sendframe
from messy_data import messy_contacts
from sendframe.scale.messages import problem_counts

TEMPLATE = "Hola {name|capitalize}, tu saldo es {amount|formatDotComma} EUR"
LIMIT = "3GiB"
HEADER = ("#params\tid=%i&delivery=%d&sender=%p&recipient=%P&sent_at=%t&cost=%c&status=%s&mnc=%m&reported_at=%y"
          "&part=%n&campaign_id=%C&sending_id=%S&ref=crm\n")


def message() -> sendframe.Message:
    return sendframe.sms(TEMPLATE, sender="Shop", encoding="auto")


# ---------------------------------------------------------------------- data, written once


def write_contacts(folder: Path, rows: int, chunk: int) -> None:
    """``rows`` messy contacts in Parquet files of ``chunk`` rows (row groups of a quarter: the partitions);
    2% of each file's phones are people of the file before."""
    if (folder / ".done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    chunk = min(chunk, rows)
    before = None
    for number, start in enumerate(range(0, rows, chunk)):
        frame = messy_contacts(min(chunk, rows - start), seed=12 + number)
        frame["customer_id"] = pd.array([f"C{start + i:09d}" for i in range(len(frame))], dtype="str")
        rng = np.random.default_rng(number)
        if before is not None:
            again = np.flatnonzero(rng.random(len(frame)) < 0.02)
            frame.loc[again, "phone"] = before[rng.integers(0, len(before), len(again))]
        before = frame["phone"].to_numpy(dtype=object)
        frame.to_parquet(folder / f"part{number:04d}.parquet", index=False, row_group_size=max(1, chunk // 4))
    (folder / ".done").write_text("")


def _joined(*pieces: Any) -> pa.Array:
    return pc.binary_join_element_wise(*pieces, "")


def _text(numbers: np.ndarray, width: int = 0) -> pa.Array:
    texts = pc.cast(pa.array(numbers), pa.string())
    return pc.utf8_lpad(texts, width, "0") if width else texts


def write_logs(folder: Path, lines: int, files: int = 8) -> None:
    """Receiver logs: two notifications per message (ACCEPTD, then the final one, in another file), retries."""
    if (folder / ".done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    retries = lines // 200
    messages = (lines - retries) // 2
    rng = np.random.default_rng(3)
    final = np.array(["DELIVRD"] * 7 + ["UNDELIV", "EXPIRED"])[rng.integers(0, 9, messages)]
    delay = rng.gamma(2.0, 20.0, messages).astype(np.int64)  # seconds from sent to delivered
    sent = np.datetime64("2026-11-21T08:00:00") + (np.arange(messages) * 3600 * 8 // max(messages, 1)).astype(
        "timedelta64[s]")
    retried = rng.choice(messages, retries, replace=False)
    for f in range(files):
        parts = []
        for kind, ids in (("ACCEPTD", np.arange(f, messages, files)),
                          ("final", np.arange((f + 3) % files, messages, files)),
                          ("retry", retried[retried % files == (f + 5) % files])):
            status = pa.array(np.full(len(ids), "ACCEPTD")) if kind == "ACCEPTD" else pa.array(final[ids])
            delivery = pc.if_else(pc.equal(status, "DELIVRD"), "1", pc.if_else(pc.equal(status, "ACCEPTD"), "4", "2"))
            after = delay[ids] if kind != "ACCEPTD" else np.ones(len(ids), np.int64)
            reported = sent[ids] + after.astype("timedelta64[s]")
            arrived = reported + np.timedelta64(2 if kind != "retry" else 300, "s")
            minutes = "%Y-%m-%d+%H%%3A%M"
            parts.append(_joined(
                pc.strftime(pa.array(arrived), format="%Y-%m-%dT%H:%M:%S"), ".000000+00:00\tid=m", _text(ids, 9),
                "&delivery=", delivery, "&sender=Shop&recipient=", _text(34600000000 + ids % 5_000_000),
                "&sent_at=", pc.strftime(pa.array(sent[ids]), format=minutes), "&cost=0.0450&status=", status,
                "&mnc=", pc.if_else(pc.equal(pc.bit_wise_and(pa.array(ids), 1), 0), "01", "07"),
                "&reported_at=", pc.strftime(pa.array(reported), format=minutes), "&part=1&campaign_id=",
                _text(1 + ids % 4), "&sending_id=9&ref=crm\n"))
        with open(folder / f"callbacks-{f}.log", "wb") as out:
            out.write(HEADER.encode())
            for part in parts:
                offsets = np.frombuffer(part.buffers()[1], np.int32)
                out.write(memoryview(part.buffers()[2])[offsets[part.offset]:offsets[part.offset + len(part)]])
    (folder / ".done").write_text("")


# ---------------------------------------------------------------------- measuring


def _reset_peak() -> int:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS (Linux)
    return os.getpid()


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu() -> float:
    return time.process_time()


class Phase:
    """Wall time, CPU seconds of the workers and of this process, and each worker's peak memory, of one block."""

    def __init__(self, client: Client, what: str, items: int, unit: str = "rows") -> None:
        self.client, self.what, self.items, self.unit = client, what, items, unit

    def __enter__(self) -> Phase:
        self.client.run(_reset_peak)
        self.cpu0, self.here0 = sum(self.client.run(_cpu).values()), time.process_time()
        self.wall0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = sum(self.client.run(_cpu).values()) - self.cpu0
        self.here = time.process_time() - self.here0
        peaks = sorted(self.client.run(_peak_mib).values())
        if exc[0] is None:
            print(f"{self.what}: {self.wall:7.1f} s  {self.items / self.wall:11,.0f} {self.unit}/s   workers' CPU "
                  f"{self.cpu:6.1f} s = {self.cpu / self.items * 1e6:6.1f} µs/{self.unit[:-1]} (client "
                  f"{self.here:.1f} s)   peak per worker {' / '.join(f'{p:,.0f}' for p in peaks)} MiB of {LIMIT}")


Answers = tuple[dict[str, int], int, str]
"""Problem counts by rule, the estimated cost in cents and its currency: compared between pandas and Dask."""


def _answers(counts: pd.DataFrame, totals: dict[str, Any]) -> Answers:
    problems = {str(rule): int(n) for rule, n in zip(counts["rule"], counts["problems"], strict=True)}
    return problems, round(totals["cost"] * 100), str(totals["currency"])


def _said(answers: Answers) -> str:
    problems, cents, currency = answers
    return f"problems {problems}; estimated cost {cents / 100:,.2f} {currency}"


def _pandas_run(path: str) -> tuple[float, float, float, Answers]:
    """read_contacts + estimate + preflight of one file with pandas, in a fresh process: wall, CPU, peak MiB, counts."""
    started, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        contacts = sendframe.read_contacts(path)
        totals = sendframe.estimate_totals(message().estimate(contacts))
        counts = problem_counts(message().preflight(contacts))
    return time.perf_counter() - started, time.process_time() - cpu, _peak_mib(), _answers(counts, totals)


def in_own_process(work: Callable[..., Any], *args: Any) -> Any:
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(work, *args).result()


def dask_estimate_preflight(client: Client, source: Any, rows: int, label: str) -> Answers:
    with Phase(client, f"dask read_contacts + estimate  {label}", rows):
        contacts = sendframe.read_contacts(source, dask=True)
        totals = sendframe.estimate_totals(message().estimate(contacts))
    with Phase(client, f"dask preflight                 {label}", rows):
        counts = problem_counts(message().preflight(contacts))
    return _answers(counts, totals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400k rows and lines: about a minute")
    parser.add_argument("--rows", type=int, help="contacts and callback lines (a quarter of them for the pandas ratio)")
    parser.add_argument("--data", default="/var/tmp/sendframe-bench-dask", help="where the data is written once")
    args = parser.parse_args()
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)  # "Shuffle ... initialized": one per shuffle
    rows, pandas_rows, lines = (400_000, 100_000, 400_000) if args.quick else (20_000_000, 1_000_000, 20_000_000)
    if args.rows:
        rows, pandas_rows, lines = args.rows, args.rows // 4, args.rows
    data = Path(args.data)
    contacts_folder, logs_folder = data / f"contacts-{rows}", data / f"logs-{lines}"
    started = time.perf_counter()
    write_contacts(contacts_folder, rows, pandas_rows)  # files of pandas_rows: the first is the pandas path's table
    write_logs(logs_folder, lines)
    size = sum(p.stat().st_size for p in contacts_folder.glob("*.parquet")) / 2**20
    logs = sum(p.stat().st_size for p in logs_folder.glob("*.log")) / 2**20
    print(f"data in {data} ({time.perf_counter() - started:.1f} s, 0 when reused): {rows:,} contacts "
          f"({size:,.0f} MiB Parquet, {len(list(contacts_folder.glob('*.parquet')))} files), {lines:,} callback lines "
          f"({logs:,.0f} MiB in 8 files)")

    first = str(sorted(contacts_folder.glob("*.parquet"))[0])
    wall, cpu, peak, alone = in_own_process(_pandas_run, first)
    print(f"pandas read_contacts + estimate + preflight {pandas_rows:,}: {wall:7.1f} s  {pandas_rows / wall:11,.0f} "
          f"rows/s   CPU {cpu:6.1f} s = {cpu / pandas_rows * 1e6:6.1f} µs/row   peak {peak:,.0f} MiB (own process)")
    with warnings.catch_warnings(), LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", memory_limit=LIMIT,
            dashboard_address=None, local_directory=str(data / "dask-scratch")) as cluster, Client(cluster) as client:
        warnings.simplefilter("ignore")
        print(f"LocalCluster: 2 workers x 1 thread, memory limit {LIMIT} per worker")
        warm = sendframe.read_contacts(pd.read_parquet(first).iloc[:1000])  # the workers import sendframe first
        sendframe.estimate_totals(message().estimate(client.persist(dd.from_pandas(warm, npartitions=2))))
        same = dask_estimate_preflight(client, first, pandas_rows, f"{pandas_rows:,}")
        print(f"  the same {pandas_rows:,} rows: dask and pandas answers {'equal' if same == alone else 'DIFFER'}")
        whole = dask_estimate_preflight(client, str(contacts_folder), rows, f"{rows:,}")
        print(f"  {rows:,} rows: {_said(whole)}")
        if args.quick:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                everything = sendframe.read_contacts(pd.concat(
                    [pd.read_parquet(p) for p in sorted(contacts_folder.glob("*.parquet"))], ignore_index=True))
                counts = problem_counts(message().preflight(everything))
                totals = sendframe.estimate_totals(message().estimate(everything))
            check = _answers(counts, totals)
            print(f"  the whole dataset: dask and pandas answers {'equal' if check == whole else 'DIFFER'}")

        with Phase(client, f"dask read_callbacks + delivery_summary {lines:,} lines", lines, "lines"):
            callbacks = sendframe.read_callbacks(logs_folder, dask=True)
            summary = sendframe.delivery_summary(callbacks=callbacks, by="campaign_id")
        shown = ["accepted", "delivered", "failed", "expired", "delivery_rate", "seconds_to_delivery_p50"]
        print(summary[shown].to_string())
        if args.quick:
            want = sendframe.delivery_summary(callbacks=sendframe.read_callbacks(logs_folder), by="campaign_id")
            try:
                pd.testing.assert_frame_equal(summary, want)  # dtypes included
                equal = True
            except AssertionError:
                equal = False
            print(f"  dask and pandas summaries {'equal' if equal else 'DIFFER'}")


if __name__ == "__main__":
    main()
