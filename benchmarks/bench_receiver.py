"""Receiver throughput from concurrent senders, every acknowledged notification on disk.

    python benchmarks/bench_receiver.py            # 20,000 notifications, 64 connections
    python benchmarks/bench_receiver.py --quick    # 2,000 notifications, smoke run

Runs ``sendframe receive`` as a subprocess twice on the same burst: with group commit (the
default: everything queued shares one write + fsync) and the naive way (``--max-batch 1``: one
fsync per request). Senders are asyncio keep-alive connections in this process. After each run
the log is read back and every notification answered 200 must be in it. Prints notifications/s
for both and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from sendframe.delivery.callbacks import read_callbacks


async def burst(url: str, total: int, connections: int) -> set[str]:
    parts = urlsplit(url)
    acknowledged: set[str] = set()
    counter = iter(range(total))

    async def connection(worker: int) -> None:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            for n in counter:
                message_id = f"m{n:08d}"
                query = f"id={message_id}&delivery=1&status=DELIVRD&mnc=01&cost=0.0450&sent_at=2026-11-21+09%3A30"
                writer.write(f"GET {parts.path}?{query} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                if head.startswith(b"HTTP/1.1 200"):
                    acknowledged.add(message_id)
        finally:
            writer.close()

    await asyncio.gather(*(connection(w) for w in range(connections)))
    return acknowledged


def run_once(log: Path, total: int, connections: int, max_batch: int) -> tuple[float, int, bool]:
    process = subprocess.Popen(
        [sys.executable, "-m", "sendframe.cli", "receive", "--log", str(log), "--max-batch", str(max_batch)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        url = process.stdout.readline().strip()
        start = time.perf_counter()
        acknowledged = asyncio.run(burst(url, total, connections))
        elapsed = time.perf_counter() - start
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    on_disk = set(read_callbacks(log)["id"])
    return len(acknowledged) / elapsed, len(acknowledged), acknowledged <= on_disk


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 notifications (smoke run)")
    parser.add_argument("--notifications", type=int, default=None)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args(argv)
    total = args.notifications or (2_000 if args.quick else 20_000)
    with tempfile.TemporaryDirectory() as tmp:
        grouped, acked_g, durable_g = run_once(Path(tmp) / "grouped.log", total, args.connections, 4096)
        naive, acked_n, durable_n = run_once(Path(tmp) / "naive.log", total, args.connections, 1)
    print(f"notifications: {total:,} from {args.connections} concurrent keep-alive connections")
    print(f"group commit (fsync per batch):   {grouped:10,.0f} notifications/s; acknowledged {acked_g:,}, all on disk: {durable_g}")
    print(f"naive (fsync per request):        {naive:10,.0f} notifications/s; acknowledged {acked_n:,}, all on disk: {durable_n}")
    print(f"ratio: {grouped / naive:.1f}x")
    return 0 if durable_g and durable_n else 1


if __name__ == "__main__":
    raise SystemExit(main())
