"""The headline benchmark: an N-recipient SMS campaign rehearsed end to end, as a user runs it.

    python benchmarks/rehearsal.py 100000          # 100,000 contacts
    python benchmarks/rehearsal.py 1000000         # the goals of issue 22 (below)
    python benchmarks/rehearsal.py 20000 --keep /tmp/rehearsal   # keep the CSV, ledger, log and report
    python benchmarks/rehearsal.py 1000000 --pairs 3   # 1M and 2M alternately, three times: each ratio, the medians

What it does, in order, timing each phase:

0. (setup, not counted) writes a messy contact CSV (``messy_data.py``: phones as people type them,
   repeats, junk, names and amounts as real tables hold them) and starts ``sendframe sandbox`` and
   ``sendframe receive`` as separate processes with ``python -m sendframe.cli``, as a user would;
1. ``sendframe.read_contacts(csv)``;
2. ``msg.preflight(contacts)`` and 3. ``msg.estimate(contacts)`` of
   ``msg = sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="gsm-pt", notification_url=<the receiver's>)``
   (``{name|capitalize}``, ``{amount|formatDotComma}`` and ``{UNSUB_URL}``);
4. ``msg.send(contacts, client=..., ledger=<file>)``: every row the policy lets through, batches of 500, the
   sandbox's carrier and notifier working (and notifications flowing to the receiver) meanwhile;
5. waits until every accepted message has a final notification in the receiver's log, polling
   ``sendframe.read_callbacks`` on it every few seconds;
6. ``sendframe.fetch_records`` of every accepted id;
7. ``sendframe.outcomes(result, callbacks, records, contacts)`` (one row per contact) and
   ``sendframe.delivery_summary(outcomes, by="city")``;
8. ``sendframe.dashboard(outcomes, summary=...).write_html("report.html")``.

For each phase: wall time, the CPU seconds of this process, of the sandbox, of its steps and notifier processes
and of the receiver (the machine may be shared: CPU says where the work went). At the end: the total,
each process's own peak resident memory (VmHWM, read from /proc before the servers stop: a child's
``ru_maxrss`` would count the copy of its parent it was forked from), the notification rate (notifications,
and final ones, per second from the send's start to the last final one received), each process's CPU seconds (in
all, and during send + wait per recipient sent: the work itself, which the machine's other load hardly changes) and
the figures of the campaign, and the machine's speed before and after the run (:func:`machine_speed`).
Exit status 1 if a notification is missing after ``--wait-timeout``.

The goals (issue 22, on the 2-core machine): 1M contacts end to end in <= 120 s; the client's peak <= 1.5 GB
at 1M; each server process's peak <= 400 MB; final notifications into ``sendframe receive`` at >= 30,000/s.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

import sendframe
from messy_data import TEMPLATE, write_messy_csv
from sandbox_process import (
    cpu_seconds,
    current_memory_mib,
    helpers,
    peak_memory_mib,
    queued_seconds,
    start_receiver,
    start_sandbox,
    stop,
)
from sendframe.api.notifications import is_final_notification
from sendframe.delivery.logformat import text_digests
from sendframe.delivery.waiting import LONGEST_POLL

GOAL_SECONDS = 120.0  # 1M contacts end to end
GOAL_CLIENT_MIB = 1536.0  # the client at 1M
GOAL_SERVER_MIB = 400.0  # each server process
GOAL_NOTIFICATIONS_PER_S = 30_000.0
GOAL_RATIO = 2.05  # 2N contacts end to end, against N, run in the same session


class Phases:
    """Times phases: wall, and CPU of this process and of each helper process."""

    def __init__(self, processes: dict[str, int], *, per_phase_memory: bool = False) -> None:
        self.processes = processes
        self.rows: list[dict[str, Any]] = []
        self.per_phase_memory = per_phase_memory
        self.peak_mib = 0.0

    def run(self, name: str, work: Callable[[], Any], *, counted: bool = True) -> Any:
        before = {label: cpu_seconds(pid) for label, pid in self.processes.items()}
        queued = {label: queued_seconds(pid) for label, pid in self.processes.items()}
        if self.per_phase_memory:  # the high-water mark restarts from the resident memory now (Linux)
            self.peak_mib = max(self.peak_mib, peak_memory_mib())
            Path("/proc/self/clear_refs").write_text("5")
        start_mib = current_memory_mib()
        wall, cpu = time.perf_counter(), time.process_time()
        value = work()
        row = {"phase": name, "wall_s": time.perf_counter() - wall, "client_cpu_s": time.process_time() - cpu}
        for label, pid in self.processes.items():
            row[f"{label}_cpu_s"] = cpu_seconds(pid) - before[label]
        for label, pid in self.processes.items():
            row[f"{label}_queued_s"] = queued_seconds(pid) - queued[label]
        row["counted"] = counted
        row["client_peak_mib"] = peak_memory_mib()
        row["client_start_mib"], row["client_end_mib"] = start_mib, current_memory_mib()
        self.peak_mib = max(self.peak_mib, row["client_peak_mib"])
        self.rows.append(row)
        cpus = "  ".join(f"{k.removesuffix('_s')} {v:7.2f}" for k, v in row.items() if k.endswith("cpu_s"))
        print(f"  {name:<34} {row['wall_s']:8.2f} s   cpu: {cpus}   client peak {row['client_peak_mib']:,.0f} MiB "
              f"(from {start_mib:,.0f} to {row['client_end_mib']:,.0f})", flush=True)
        return value

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


def machine_speed() -> float:
    """Seconds a fixed mix of work takes on this machine now (best of three; lower is faster): Python bytecode,
    hashing, a numpy sort and SQLite inserts, the kinds of work the rehearsal's processes do. Run in a child process
    before the servers start and after they stop: on a shared VM the same code runs several per cent faster or slower
    from one run to the next, and this tells such a run from a change of the code.

        >>> machine_speed() > 0  # doctest: +SKIP
        True
    """
    numbers = np.random.default_rng(0).integers(0, 1 << 62, 2_000_000)
    data = numbers.tobytes()
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(3_000_000):
            total += i & 7
        hashlib.blake2b(data).digest()
        np.sort(numbers)
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?)", ((i, f"row {i} of the calibration") for i in range(400_000)))
        db.close()
        best = min(best, time.perf_counter() - started)
    return best


def final_ids(callbacks: pd.DataFrame) -> pd.Index:
    """The ids that have a final notification (DELIVRD, UNDELIV, EXPIRED, REJECTD, DELETED)."""
    if callbacks.empty:
        return pd.Index([], dtype="string")
    final = is_final_notification(callbacks["status"], callbacks.get("delivery"))
    return pd.Index(callbacks.loc[np.asarray(final, dtype=bool), "id"].dropna().unique())


def final_rate_span(callbacks: pd.DataFrame, send_started: pd.Timestamp) -> tuple[int, float]:
    """(final notifications, seconds from ``send_started`` to the arrival of the last of them)."""
    if callbacks.empty:
        return 0, float("nan")
    final = np.asarray(is_final_notification(callbacks["status"], callbacks.get("delivery")), dtype=bool)
    last = callbacks.loc[final, "received_at"].max()
    return int(final.sum()), (last - send_started).total_seconds()


def wait_for_finals(log: Path, ids: pd.Index, timeout: float, every: float = 2.0) -> tuple[pd.DataFrame, int, int]:
    """Poll ``read_callbacks(log)`` until each of ``ids`` has a final notification; (callbacks, polls, missing).

    Each poll looks for final notifications among the rows that were not there at the last poll (the log
    only grows), and finds them among the ids by their digests (sorted once): a poll costs what its new rows
    cost, not what every id costs. Polls every ``every`` seconds, or less often when a poll takes long (at most
    ``LONGEST_POLL`` apart), so the waiting takes little from the sandbox and the receiver on a small machine."""
    started, polls, seen = time.perf_counter(), 0, 0
    digests = text_digests(pa.array(ids.astype("string"), pa.large_string()))  # 8 bytes an id
    order = np.argsort(digests)
    wanted = digests[order]
    pending = np.ones(len(wanted), dtype=bool)  # by position in ``order``
    while True:
        polls += 1
        read = time.perf_counter()
        callbacks = sendframe.read_callbacks(log) if log.exists() else pd.DataFrame()
        fresh = callbacks.iloc[seen:] if len(callbacks) >= seen else callbacks  # shorter: read again from the start
        finals = text_digests(pa.array(final_ids(fresh).astype("string"), pa.large_string()))
        if len(finals) and len(wanted):
            at = np.searchsorted(wanted, finals).clip(max=len(wanted) - 1)
            pending[at[wanted[at] == finals]] = False
        seen = len(callbacks)
        missing = int(pending.sum())
        if not missing or time.perf_counter() - started > timeout:
            return callbacks, polls, missing
        # at most LONGEST_POLL apart, as Receiver.wait_for: a longer pause would leave one huge read for the next poll
        time.sleep(min(LONGEST_POLL, max(every, 3 * (time.perf_counter() - read))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="?", type=int, default=100_000, help="contacts in the CSV (default 100,000)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--keep", type=Path, help="a folder to keep the CSV, ledger, callback log and report in")
    parser.add_argument("--wait-timeout", type=float, default=900.0, help="seconds to wait for the notifications")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--memory", action="store_true",
                        help="each phase's own client peak (the high-water mark is reset before each phase)")
    parser.add_argument("--summary", type=Path, help="also write the run's figures to this JSON file")
    parser.add_argument("--pairs", type=int, default=0,
                        help="run ROWS and twice ROWS alternately this many times, each in a process of its own, "
                             "and print each pair's ratios and their medians (the outputs go to --keep, if given)")
    args = parser.parse_args(argv)
    if args.pairs and args.summary is not None:
        parser.error("--summary is one run's: with --pairs, each run's figures are in --keep as pair<k>_<rows>.json")
    if args.pairs:
        return rehearse_pairs(args)
    with work_folder(args.keep, "sendframe-rehearsal-") as folder:
        for name in ("sandbox.sqlite", "sandbox.sqlite-wal", "sandbox.sqlite-shm", "callbacks.log", "campaign.ledger",
                     "campaign.ledger-wal", "campaign.ledger-shm", "report.html"):
            (folder / name).unlink(missing_ok=True)
        return rehearse(args, folder, folder / "contacts.csv")


@contextlib.contextmanager
def work_folder(keep: Path | None, prefix: str) -> Iterator[Path]:
    """``keep`` (made if missing, left in place), or a temporary folder removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix)) if keep is None else keep
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def rehearse(args: argparse.Namespace, folder: Path, csv: Path) -> int:
    started = time.perf_counter()
    # written by a child process: what making the test data leaves in memory is not the analyst's (at 400k rows it
    # was 75 MiB of this process before read_contacts began, and grew with the rows)
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(write_messy_csv, csv, args.rows, seed=args.seed).result()
        speed_before = pool.submit(machine_speed).result()
    setup = time.perf_counter() - started
    sandbox, base_url = start_sandbox(["--db", str(folder / "sandbox.sqlite")])
    receiver, notification_url = start_receiver(folder / "callbacks.log")
    print(f"rehearsal of {args.rows:,} contacts: {csv.stat().st_size / 1e6:,.1f} MB CSV written in {setup:.1f} s "
          f"(setup); sandbox pid {sandbox.pid} at {base_url}, receiver pid {receiver.pid}")
    print(f"message: {TEMPLATE!r}, sender Shop, parts 2, gsm-pt, notificationUrl to the receiver, ledger file")
    servers = {"sandbox": sandbox.pid, **helpers(sandbox.pid), "receiver": receiver.pid}
    phases = Phases(servers, per_phase_memory=args.memory)
    status = 0
    try:
        with sendframe.Client(base_url, "demo", "demo-password") as client, \
                warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            contacts = phases.run("read_contacts", lambda: sendframe.read_contacts(csv))
            msg = sendframe.sms(TEMPLATE, sender="Shop", parts=2, encoding="gsm-pt", notification_url=notification_url,
                                link_base="https://sndf.io")
            problems = phases.run("preflight", lambda: msg.preflight(contacts))
            estimate = phases.run("estimate", lambda: msg.estimate(contacts))
            send_started = pd.Timestamp.now(tz="UTC")
            result = phases.run("send (ledger, notificationUrl)", lambda: msg.send(
                contacts, client=client, ledger=folder / "campaign.ledger", batch_size=args.batch_size,
                concurrency=args.concurrency, progress=False))
            accepted = pd.Index(result.loc[result["outcome"] == "accepted", "id"].astype("string").unique())
            callbacks, polls, missing = phases.run("wait for every final notification", lambda: wait_for_finals(
                folder / "callbacks.log", accepted, args.wait_timeout))
            records = phases.run("fetch_records", lambda: sendframe.fetch_records(accepted, client=client))
            outcomes = phases.run("outcomes", lambda: sendframe.outcomes(result, callbacks, records, contacts,
                                                                          estimate=estimate))
            summary = phases.run("delivery_summary by city", lambda: sendframe.delivery_summary(outcomes, by="city"))
            report = folder / "report.html"
            phases.run("dashboard + report.html", lambda: sendframe.dashboard(
                outcomes, summary=summary, title="Rehearsal", campaign=f"rehearsal of {args.rows:,}").write_html(
                str(report)))
        peaks = {"client (this process)": max(phases.peak_mib, peak_memory_mib()),
                 **{name: peak_memory_mib(pid) for name, pid in servers.items()}}
        cpu_totals = {"client (this process)": time.process_time(),
                      **{name: cpu_seconds(pid) for name, pid in servers.items()}}
    finally:
        stop(sandbox)
        stop(receiver)
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        speed_after = pool.submit(machine_speed).result()
    table = phases.table()
    total = table["wall_s"].sum()
    print()
    print(table.drop(columns=["counted"]).to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    print(f"total (phases 1-9): {total:,.1f} s for {args.rows:,} contacts (goal: 1,000,000 in <= {GOAL_SECONDS:.0f} s)")
    for name, mib in peaks.items():
        goal = GOAL_CLIENT_MIB if name.startswith("client") else GOAL_SERVER_MIB
        at = " at 1M" if goal == GOAL_CLIENT_MIB else ""
        print(f"peak memory, {name:<22}: {mib:8,.0f} MiB (goal <= {goal:,.0f}{at})")
    send_s = table.loc[table["phase"].str.startswith("send"), "wall_s"].iloc[0]
    sent = int((result["outcome"].isin(["accepted", "rejected", "unknown"])).sum())
    notifications = len(callbacks)
    wait_s = table.loc[table["phase"].str.startswith("wait"), "wall_s"].iloc[0]
    print(f"contacts {len(contacts):,}: preflight problems {len(problems):,}; outcomes "
          f"{result['outcome'].value_counts().to_dict()}")
    print(f"send: {sent:,} recipients in {send_s:.1f} s = {sent / send_s:,.0f} recipients/s (goal >= 20,000/s)")
    finals, span = final_rate_span(callbacks, send_started)
    flowing = table[table["phase"].str.startswith(("send", "wait"))]
    for name, total_cpu in cpu_totals.items():
        label = "client" if name.startswith("client") else name
        during = flowing[f"{label}_cpu_s"].sum()
        print(f"cpu, {name:<22}: {total_cpu:7.1f} s in all; {during:7.1f} s during send + wait = "
              f"{during / max(sent, 1) * 1e6:6.1f} us per recipient")
    for label in (name for name in cpu_totals if not name.startswith("client")):
        waited = flowing[f"{label}_queued_s"].sum()
        print(f"main thread of the {label}: runnable but waiting for a core {waited:5.1f} s of the "
              f"{flowing['wall_s'].sum():.1f} s of send + wait")
    all_cpu = flowing.filter(like="cpu_s").to_numpy().sum()
    print(f"cpu during send + wait, all processes: {all_cpu / max(sent, 1) * 1e6:.1f} us per recipient "
          f"({flowing['wall_s'].sum():.1f} s wall on {os.cpu_count()} cores)")
    print(f"notifications: {notifications:,} in the log, {polls} polls; the last final one "
          f"{wait_s:.1f} s after the send ended; {missing:,} accepted messages without a final notification")
    print(f"notification rate: {notifications:,} notifications ({finals:,} final) in {span:.1f} s from the send's "
          f"start to the last final one received = {notifications / span:,.0f}/s (final {finals / span:,.0f}/s); "
          f"goal >= {GOAL_NOTIFICATIONS_PER_S:,.0f}/s (all notifications, as issue 22 counts them)")
    print(f"records: {len(records.messages):,} messages, {len(records.events):,} events; "
          f"report.html {report.stat().st_size / 1e6:.1f} MB")
    print(f"status: {outcomes['status'].value_counts().to_dict()}")
    print(f"machine speed: a fixed workload took {speed_before:.3f} s before the run and {speed_after:.3f} s after "
          "(best of 3 in a child process; lower is faster: compare runs made at the same speed)")
    print(f"warnings said: {len(said)} ({'; '.join(sorted({str(w.message)[:80] for w in said})[:3])})")
    if args.summary is not None:
        args.summary.write_text(json.dumps({
            "rows": args.rows, "seconds": round(float(total), 2), "sent": sent,
            "cpu_us_per_recipient": round(float(all_cpu) / max(sent, 1) * 1e6, 2),
            "client_peak_mib": round(peaks["client (this process)"], 1),
            "server_peak_mib": max(mib for name, mib in peaks.items() if not name.startswith("client")),
            "notifications_per_s": round(notifications / span), "machine_speed": [speed_before, speed_after],
            "missing": missing}))
    if missing:
        print(f"FAILED: {missing:,} messages without a final notification after {args.wait_timeout:.0f} s",
              file=sys.stderr)
        status = 1
    if args.keep is not None:
        print(f"files kept in {folder}")
    return status


def rehearse_pairs(args: argparse.Namespace) -> int:
    """Rehearse ``args.rows`` and twice as many alternately, ``args.pairs`` times, each run in a process of its own
    (its memory its own), and print per pair: the two end-to-end times and their ratio (issue 22: at most
    ``GOAL_RATIO``), the CPU per recipient of send + wait of each and its ratio, and the medians.

    The same code's CPU per recipient moves by up to 15% from one run to the next on a small VM, so one pair's
    ratio says less than the median of a few; the CPU ratio says whether the work itself grew faster than the rows.
    """
    options = ["--seed", str(args.seed), "--wait-timeout", str(args.wait_timeout), "--batch-size",
               str(args.batch_size), "--concurrency", str(args.concurrency), *(["--memory"] if args.memory else [])]
    rows = []
    with work_folder(args.keep, "sendframe-pairs-") as folder:
        for pair in range(1, args.pairs + 1):
            runs = []
            for size in (args.rows, 2 * args.rows):
                summary, output = folder / f"pair{pair}_{size}.json", folder / f"pair{pair}_{size}.txt"
                with output.open("w") as out:
                    done = subprocess.run([sys.executable, __file__, str(size), *options, "--summary", str(summary)],
                                          stdout=out, stderr=subprocess.STDOUT, check=False)
                if done.returncode:
                    print(f"pair {pair}: the run of {size:,} contacts failed (exit {done.returncode}):\n"
                          f"{output.read_text()[-2000:]}", file=sys.stderr)
                    return done.returncode
                runs.append(json.loads(summary.read_text()))
            small, large = runs
            rows.append({"pair": pair, f"{args.rows:,} s": small["seconds"], f"{2 * args.rows:,} s": large["seconds"],
                         "ratio": large["seconds"] / small["seconds"],
                         "cpu us/recipient": _both(runs, "cpu_us_per_recipient", ".1f"),
                         "cpu ratio": large["cpu_us_per_recipient"] / small["cpu_us_per_recipient"],
                         "client peak MiB": _both(runs, "client_peak_mib", ",.0f"),
                         "notifications/s": _both(runs, "notifications_per_s", ",")})
            print(f"pair {pair}: {small['seconds']:.1f} s and {large['seconds']:.1f} s = {rows[-1]['ratio']:.3f}x",
                  flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"median of {len(table)} pair(s): {table['ratio'].median():.3f}x end to end (goal <= {GOAL_RATIO}x), "
          f"{table['cpu ratio'].median():.3f}x CPU per recipient; pairs within the goal: "
          f"{int((table['ratio'] <= GOAL_RATIO).sum())} of {len(table)}")
    if args.keep is not None:
        print(f"each run's output and figures kept in {folder}")
    return 0


def _both(runs: list[dict[str, Any]], key: str, form: str) -> str:
    """A figure of a pair's two runs, as ``"N's / 2N's"``."""
    return " / ".join(f"{run[key]:{form}}" for run in runs)


if __name__ == "__main__":
    raise SystemExit(main())
