"""Batched campaign sending vs one request per recipient, against a local sandbox in its own process.

    python benchmarks/bench_send.py            # 100,000 recipients batched; naive on 3,000, extrapolated
    python benchmarks/bench_send.py --quick    # 5,000 batched; naive on 100 (smoke run)

The sandbox runs as ``sendframe sandbox --port 0 --db <tmpfile>`` in a subprocess, so the client's
CPU (``time.process_time`` of this process) is measured apart from the server's (from /proc, or
psutil). The batched run goes through ``send_sms`` with a ledger file, exactly as an analyst would.
The naive way sends each recipient in its own request with ``Client.send_sms``; it is measured on
a few thousand recipients and extrapolated linearly to the full size (said so in the output).
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

from sandbox_process import server_cpu_seconds, start_sandbox
from sendframe import Client, send_sms


def contacts(n: int, offset: int = 0) -> pd.DataFrame:
    numbers = [f"447911{i:06d}" for i in range(offset, offset + n)]
    return pd.DataFrame({"phone": numbers, "name": [f"Name{i}" for i in range(offset, offset + n)]})


def wait_for_carrier(db_path: Path, limit: float = 300.0) -> float:
    """Seconds until the sandbox's carrier has no step due any more (it defers them while requests arrive),
    so the naive run does not pay for the batched run's backlog."""
    start = time.perf_counter()
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        while time.perf_counter() - start < limit:
            if not db.execute("SELECT COUNT(*) FROM work WHERE due <= ?", (time.time() - 0.5,)).fetchone()[0]:
                break
            time.sleep(0.1)
    finally:
        db.close()
    return time.perf_counter() - start


def measure(pid: int, work) -> dict[str, float]:
    wall0, cpu0, server0 = time.perf_counter(), time.process_time(), server_cpu_seconds(pid)
    work()
    return {"wall": time.perf_counter() - wall0, "client_cpu": time.process_time() - cpu0,
            "server_cpu": server_cpu_seconds(pid) - server0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument("--recipients", type=int, help="recipients of the batched run (default 100000; 5000 quick)")
    parser.add_argument("--naive", type=int, help="recipients of the naive run (default 3000; 100 quick)")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args(argv)
    n = args.recipients or (5_000 if args.quick else 100_000)
    m = args.naive or (100 if args.quick else 3_000)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server, base_url = start_sandbox(["--db", str(folder / "sandbox.sqlite")])
        try:
            with Client(base_url, "demo", "demo-password") as client:
                client.send_sms({"message": "warm-up", "to": ["447911999999"], "from": "Shop"})
                batch_frame = contacts(n)
                fast = measure(server.pid, lambda: send_sms(
                    batch_frame, "Hi {name}", "Shop", client=client, ledger=folder / "bench.ledger.sqlite",
                    batch_size=args.batch_size, concurrency=args.concurrency, progress=False))
                drained = wait_for_carrier(folder / "sandbox.sqlite")
                naive_frame = contacts(m, offset=n)

                def one_by_one() -> None:
                    for phone, name in zip(naive_frame["phone"], naive_frame["name"], strict=True):
                        request = {"message": "Hi {name}", "to": [phone], "from": "Shop", "sub": [{"name": name}]}
                        client.send_sms(request)

                naive = measure(server.pid, one_by_one)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()

    fast_rate = n / fast["wall"]
    naive_rate = m / naive["wall"]
    naive_full = n / naive_rate
    print(f"batched:  {n:,} recipients in {fast['wall']:.2f} s = {fast_rate:,.0f} recipients/s "
          f"(batch {args.batch_size}, concurrency {args.concurrency}, with a ledger file)")
    print(f"carrier:  caught up with the batched run's deferred deliveries {drained:.1f} s after it ended "
          "(back-pressure, docs/sandbox.md)")
    print(f"naive:    {m:,} recipients one request each in {naive['wall']:.2f} s = {naive_rate:,.0f} recipients/s; "
          f"extrapolated linearly to {n:,}: {naive_full:,.0f} s")
    print(f"ratio:    {fast_rate / naive_rate:.1f}x faster batched (target >= 50x)")
    for name, run in (("batched", fast), ("naive", naive)):
        print(f"cpu {name}: client {run['client_cpu']:.2f} s ({run['client_cpu'] / run['wall']:.0%} of wall), "
              f"server {run['server_cpu']:.2f} s ({run['server_cpu'] / run['wall']:.0%} of wall)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
