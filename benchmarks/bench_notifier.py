"""Delivery notifications per second to a local receiver: the sandbox's Notifier vs a naive loop.

    python benchmarks/bench_notifier.py            # 20,000 notifications (naive: 2,000)
    python benchmarks/bench_notifier.py --quick    # 1,000 notifications (naive: 200), smoke run

The receiver is a minimal keep-alive HTTP/1.1 server on asyncio (``200 OK``, empty body) in a child
process, so the figure is the notifier's, not the receiver's. The fast way is ``Notifier.deliver``
with ``max_in_flight`` notifications in flight (pooled keep-alive connections, every policy check
on); the naive baseline is what one writes first: one notification after the other over one
keep-alive ``httpx.Client`` (no policy checks at all). Prints notifications/s for both and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import sys
import time

import httpx

from sendframe.sandbox.notifier import Notifier

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Type: text/plain\r\n\r\n"


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            writer.write(RESPONSE)
            if b"connection: close" in head.lower():
                break
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


def _serve(sock: socket.socket) -> None:
    async def main() -> None:
        server = await asyncio.start_server(_handle, sock=sock, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def start_receiver() -> tuple[multiprocessing.process.BaseProcess, str]:
    """A receiver process listening on 127.0.0.1 at a free port, and its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    process = multiprocessing.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    process.start()
    sock.close()
    return process, f"http://127.0.0.1:{port}"


async def fast(base: str, count: int, in_flight: int) -> tuple[float, int]:
    notifier = Notifier(allow_loopback=True, max_in_flight=in_flight)
    try:
        await notifier.deliver(f"{base}/warmup")
        start = time.perf_counter()
        results = await asyncio.gather(*(notifier.deliver(f"{base}/dlr?id={i:020x}&s=DELIVRD&d=1") for i in range(count)))
        elapsed = time.perf_counter() - start
    finally:
        await notifier.aclose()
    return elapsed, sum(r.ok for r in results)


def naive(base: str, count: int) -> tuple[float, int]:
    with httpx.Client(follow_redirects=False, timeout=5.0) as client:
        client.get(f"{base}/warmup")
        start = time.perf_counter()
        ok = sum(client.get(f"{base}/dlr?id={i:020x}&s=DELIVRD&d=1").status_code == 200 for i in range(count))
        return time.perf_counter() - start, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--count", type=int, default=None, help="notifications for the fast way")
    parser.add_argument("--in-flight", type=int, default=32, help="Notifier max_in_flight (policy: 32)")
    args = parser.parse_args(argv)
    count = args.count or (1_000 if args.quick else 20_000)
    naive_count = max(50, count // (5 if args.quick else 10))

    receiver, base = start_receiver()
    try:
        fast_s, fast_ok = asyncio.run(fast(base, count, args.in_flight))
        naive_s, naive_ok = naive(base, naive_count)
    finally:
        receiver.terminate()
        receiver.join(5)
    fast_rate, naive_rate = count / fast_s, naive_count / naive_s
    print(f"notifier (max_in_flight={args.in_flight}): {count:,} notifications in {fast_s:.2f} s "
          f"= {fast_rate:,.0f}/s ({fast_ok:,} ok)")
    print(f"naive (httpx.Client, one by one): {naive_count:,} notifications in {naive_s:.2f} s "
          f"= {naive_rate:,.0f}/s ({naive_ok:,} ok)")
    print(f"ratio: {fast_rate / naive_rate:.1f}x")
    return 0 if fast_ok == count and naive_ok == naive_count else 1


if __name__ == "__main__":
    sys.exit(main())
