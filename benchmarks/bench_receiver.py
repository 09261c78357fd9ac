"""Receiver throughput: notifications acknowledged per second, every one on disk before its 200.

    python benchmarks/bench_receiver.py            # 50,000 notifications, 32 keep-alive connections, 3 runs
    python benchmarks/bench_receiver.py --quick    # 5,000 notifications, one run, smoke run

What it measures: ``sendframe receive`` started as a user starts it (its own process) takes a
burst of notifications shaped as the sandbox sends them (all twelve escape codes filled, the
receiver's own parameter) from concurrent keep-alive connections, one request in flight on each
(as the sandbox's notifier: 32 in flight), and answers each 200 only once it is fsync'd. The
load generator runs in this process on asyncio protocols. It runs twice on the same burst: with
group commit (the default: everything queued while the log syncs shares the next write + fsync)
and the naive way (``--max-batch 1``: one fsync per request). After each run the log is read
back and every notification answered 200 must be in it.

Each is run ``--repeats`` times (fresh receiver and log each time). Prints, for both: the best
and median notifications/s (wall clock: on a shared 2-core machine the load generator competes
with the receiver for the cores, and other work with both), the receiver process's CPU seconds
per 10,000 notifications (median) and the rate one core would sustain at that CPU cost, and
the load generator's CPU; then the ratio of the best rates.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from sendframe.delivery.callbacks import read_callbacks


class _Client(asyncio.Protocol):
    """One keep-alive connection sending the next notification as soon as the last is answered."""

    def __init__(self, requests: list[bytes], next_request, done: asyncio.Future, acknowledged: list[int]) -> None:
        self.requests, self.next_request, self.done, self.acknowledged = requests, next_request, done, acknowledged
        self.buffer = b""
        self.current = -1

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.send()

    def send(self) -> None:
        self.current = self.next_request()
        if self.current < 0:
            self.transport.close()
            if not self.done.done():
                self.done.set_result(None)
            return
        self.transport.write(self.requests[self.current])

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        length = int(self.buffer.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        if len(self.buffer) < end + 4 + length:
            return
        if self.buffer.startswith(b"HTTP/1.1 200"):
            self.acknowledged.append(self.current)
        self.buffer = self.buffer[end + 4 + length:]
        self.send()

    def connection_lost(self, exc) -> None:
        if not self.done.done():
            self.done.set_result(None)


def requests_for(url: str, total: int) -> tuple[list[bytes], list[str]]:
    parts = urlsplit(url)
    ids = [f"{n:016x}" for n in range(total)]
    requests = []
    for n, message_id in enumerate(ids):
        query = (f"id={message_id}&delivery=1&sender=Shop&recipient=4477009{n % 100000:05d}&sent_at=2026-11-21+09%3A30"
                 f"&cost=0.0450&status=DELIVRD&mnc=01&reported_at=2026-11-21+09%3A31&part=1&campaign_id=7"
                 f"&sending_id={n // 1000}&ref=spring")
        requests.append(f"GET {parts.path}?{query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                        f"User-Agent: sendframe-notifier\r\nAccept: */*\r\n\r\n".encode())
    return requests, ids


async def burst(url: str, requests: list[bytes], connections: int) -> list[int]:
    parts = urlsplit(url)
    loop = asyncio.get_running_loop()
    counter = iter(range(len(requests)))
    acknowledged: list[int] = []
    futures = []
    for _ in range(connections):
        done = loop.create_future()
        futures.append(done)
        await loop.create_connection(lambda done=done: _Client(requests, lambda: next(counter, -1), done, acknowledged),
                                     parts.hostname, parts.port)
    await asyncio.gather(*futures)
    return acknowledged


def run_once(log: Path, total: int, connections: int, max_batch: int) -> dict[str, float]:
    process = subprocess.Popen(
        [sys.executable, "-m", "sendframe.cli", "receive", "--log", str(log), "--max-batch", str(max_batch)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        url = process.stdout.readline().strip()
        requests, ids = requests_for(url, total)
        watched = psutil.Process(process.pid)
        before, own = sum(watched.cpu_times()[:2]), time.process_time()
        start = time.perf_counter()
        acknowledged = asyncio.run(burst(url, requests, connections))
        elapsed = time.perf_counter() - start
        cpu, generator = sum(watched.cpu_times()[:2]) - before, time.process_time() - own
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    on_disk = set(read_callbacks(log)["id"])
    durable = {ids[n] for n in acknowledged} <= on_disk
    count = max(len(acknowledged), 1)
    return {"rate": len(acknowledged) / elapsed, "cpu": cpu / count, "generator": generator / count,
            "acknowledged": len(acknowledged), "durable": durable}


def runs(directory: Path, name: str, total: int, connections: int, max_batch: int, repeats: int) -> dict[str, float]:
    results = [run_once(directory / f"{name}-{n}.log", total, connections, max_batch) for n in range(repeats)]
    return {"best": max(r["rate"] for r in results), "median": statistics.median(r["rate"] for r in results),
            "cpu": statistics.median(r["cpu"] for r in results),
            "generator": statistics.median(r["generator"] for r in results),
            "all_acknowledged": all(r["acknowledged"] == total for r in results),
            "durable": all(r["durable"] for r in results)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 notifications, one run each (smoke run)")
    parser.add_argument("--notifications", type=int, default=None)
    parser.add_argument("--connections", type=int, default=32,
                        help="keep-alive connections (the notifier keeps 32 in flight)")
    parser.add_argument("--repeats", type=int, default=None, help="runs of each (default 3; 1 with --quick)")
    args = parser.parse_args(argv)
    total = args.notifications or (5_000 if args.quick else 50_000)
    repeats = args.repeats or (1 if args.quick else 3)
    naive_total = min(total, 5_000)  # one fsync each: a few thousand show its rate
    with tempfile.TemporaryDirectory() as tmp:
        grouped = runs(Path(tmp), "grouped", total, args.connections, 4096, repeats)
        naive = runs(Path(tmp), "naive", naive_total, args.connections, 1, repeats)
    print(f"notifications: {total:,} (naive: {naive_total:,}) from {args.connections} concurrent keep-alive "
          "connections, "
          f"one request in flight each; each 200 only after its line is fsync'd; {repeats} run(s) each")
    for name, result in (("group commit (fsync per batch)", grouped), ("naive (fsync per request)     ", naive)):
        per = result["cpu"]
        print(f"{name}: best {result['best']:8,.0f}/s, median {result['median']:8,.0f}/s wall; receiver CPU "
              f"{per * 10_000:5.2f} s per 10k (one core: {1 / per if per else float('inf'):8,.0f}/s); generator CPU "
              f"{result['generator'] * 10_000:5.2f} s per 10k; every one acknowledged: {result['all_acknowledged']}, "
              f"all on disk: {result['durable']}")
    print(f"ratio: {grouped['best'] / naive['best']:.1f}x (best wall rates)")
    return 0 if grouped["durable"] and naive["durable"] and grouped["all_acknowledged"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
