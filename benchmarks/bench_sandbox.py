"""Sandbox throughput: recipients accepted and stored per second, and delivery notifications per second.

Runs `sendframe sandbox` as a separate process (manual clock, in-memory database) and measures, in
the same run:

- sends of 1,000 recipients per request (the fast way) against 1 recipient per request (naive), scheduled
  (planned when due) and immediate (timed until the carrier has also planned every message and applied
  its ``sent`` step: the sends, then ``POST /_sandbox/advance {"seconds": 0}``);
- delivery notifications sent by the sandbox to a local raw-asyncio receiver (one POST
  /_sandbox/advance delivers all of them) against a naive sequential sender (one GET at a time);
- the server process's peak resident memory (VmHWM).

    python benchmarks/bench_sandbox.py            # full size
    python benchmarks/bench_sandbox.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from sandbox_process import start_sandbox

AUTH = ("demo", "demo-password")


def peak_memory_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def recipients(count: int, start: int = 0) -> list[str]:
    # Spanish mobile numbers 346xxxxxxxx: valid, spread over the carrier's Spanish profile
    return [f"346{(start + i) % 100_000_000:08d}" for i in range(count)]


def send_rate(client: httpx.Client, *, requests: int, per_request: int, notification_url: str | None = None,
              schedule: str | None = None) -> float:
    bodies = []
    for r in range(requests):
        body = {"message": "Hola {name}, tu pedido {order} está listo", "from": "Shop",
                "to": recipients(per_request, r * per_request),
                "sub": [{"name": f"Cliente {i}", "order": str(100000 + i)} for i in range(per_request)]}
        if notification_url:
            body["notificationUrl"] = notification_url
        if schedule:
            body["scheduleDate"] = schedule
        bodies.append(body)
    started = time.perf_counter()
    for body in bodies:
        response = client.post("/api/rest/sms", json=body)
        if response.status_code != 202:
            raise SystemExit(f"send failed: {response.status_code} {response.text[:300]}")
    return requests * per_request / (time.perf_counter() - started)


class RawReceiver:
    """A minimal keep-alive HTTP/1.1 server on 127.0.0.1 answering 200 to every GET (in a thread)."""

    def __init__(self) -> None:
        self.count = 0
        self.ready = threading.Event()
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                self.count += 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def _run(self) -> None:
        async def main() -> None:
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024)
            self.port = server.sockets[0].getsockname()[1]
            self.loop = asyncio.get_running_loop()
            self.ready.set()
            async with server:
                await server.serve_forever()

        asyncio.run(main())


def naive_notification_rate(url: str, count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        httpx.get(url.replace("%i", str(i)).replace("%s", "DELIVRD"))  # a new connection each time
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    big_requests, naive_requests, notify_messages = (3, 200, 300) if args.quick else (20, 1000, 5000)

    with tempfile.TemporaryDirectory() as tmp:
        process, base_url = start_sandbox(["--db", ":memory:", "--clock", "manual"], env={"XDG_DATA_HOME": tmp})
        try:
            with httpx.Client(base_url=base_url, auth=AUTH, timeout=300) as client:
                send_rate(client, requests=1, per_request=1000)  # warm up
                later = "20991121093000"  # scheduled: accepted and stored now, carrier planning when due
                fast = send_rate(client, requests=big_requests, per_request=1000, schedule=later)
                naive = send_rate(client, requests=naive_requests, per_request=1, schedule=later)
                client.post("/_sandbox/reset", json={})
                started = time.perf_counter()
                send_rate(client, requests=big_requests, per_request=1000)
                planned = client.post("/_sandbox/advance", json={"seconds": 0}).json()["done"].get("planned", 0)
                immediate = big_requests * 1000 / (time.perf_counter() - started)
                client.post("/_sandbox/reset", json={})
                receiver = RawReceiver()
                url = f"http://127.0.0.1:{receiver.port}/dlr?id=%i&s=%s"
                per_request = 1000 if notify_messages >= 1000 else notify_messages
                for start in range(0, notify_messages, per_request):
                    body = {"message": "x", "from": "Shop", "notificationUrl": url,
                            "to": recipients(per_request, start)}
                    assert client.post("/api/rest/sms", json=body).status_code == 202
                started = time.perf_counter()
                done = client.post("/_sandbox/advance", json={"seconds": 600}).json()["done"]
                elapsed = time.perf_counter() - started
                sent = receiver.count  # what arrived (the worker's counts also hold those sent by its own loop)
                if sent != done.get("step_notify", sent):
                    print(f"note: {done.get('step_notify')} reports due, {sent} arrived", file=sys.stderr)
                notify_rate = sent / elapsed
                naive_notify = naive_notification_rate(url, min(300, notify_messages))
            memory = peak_memory_mib(process.pid)
        finally:
            process.terminate()
            process.wait(10)
    print(f"sends, 1,000 recipients per request : {fast:12,.0f} recipients/s accepted and stored "
          f"({big_requests} requests)")
    print(f"sends, 1 recipient per request      : {naive:12,.0f} recipients/s ({naive_requests} requests)")
    print(f"ratio (batched / naive)             : {fast / naive:12.1f}x")
    print(f"immediate sends, 1,000 per request  : {immediate:12,.0f} recipients/s incl. carrier planning of each "
          f"message ({planned:,} planned after the last answer)")
    print(f"notifications sent by the sandbox   : {notify_rate:12,.0f} /s  "
          f"({sent:,} in {elapsed:.2f} s, incl. applying steps)")
    print(f"notifications, naive sequential GETs: {naive_notify:12,.0f} /s")
    print(f"ratio (sandbox / naive notifications): {notify_rate / naive_notify:11.1f}x")
    print(f"sandbox peak memory (VmHWM)         : {memory:12.1f} MiB")


if __name__ == "__main__":
    main()
