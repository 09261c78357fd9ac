"""Where the sandbox's time goes: sends of realistic requests feature by feature, and notifications out.

    python benchmarks/bench_sandbox.py            # full size
    python benchmarks/bench_sandbox.py --quick    # smoke run

``sendframe sandbox`` runs as a separate process, as a user starts it. Requests are what ``msg.send``
sends for a messy contact table (``messy_data.py``: real names and amounts in ``sub``), 1,000 recipients
each. Measured in the same run, each with the sandbox's CPU seconds per 1,000 recipients:

1. sends, manual clock, scheduled for later (accepted and stored; the carrier plans them when due), adding
   one feature at a time: a fixed text; + ``sub`` with ``{name|capitalize}`` and ``{amount|formatDotComma}``,
   parts 2, gsm-pt; + ``{UNSUB_URL}`` (a link stored per message); + one notificationUrl; + a notificationUrl
   per recipient. The difference between two lines is what that feature costs;
2. the naive baseline: the same complete request with 1 recipient each;
3. everything on, sent now: manual clock (sends, then ``/_sandbox/advance 0`` plans every message), and a
   second sandbox on the real clock, where the worker (carrier steps, notifications) runs while requests
   arrive: the two figures show what the worker competing with the API costs;
4. delivery notifications out: every message's notifications (ACCEPTD and the final one) sent by
   ``/_sandbox/advance 600`` to a minimal keep-alive receiver, and to ``sendframe receive`` (durable, its
   own process), against a naive sequential sender (one GET at a time, a new connection each);
5. each sandbox's peak resident memory (VmHWM).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path

import httpx

import sendframe
from messy_data import TEMPLATE, messy_contacts
from sandbox_process import cpu_seconds, peak_memory_mib, start_receiver, start_sandbox, stop

AUTH = ("demo", "demo-password")
LATER = "20991121093000"  # scheduled: accepted and stored now, carrier planning when due


class Recipients:
    """Valid, distinct recipients with their name and amount, from the messy table (as read_contacts repairs them)."""

    def __init__(self, count: int) -> None:
        contacts = sendframe.read_contacts(messy_contacts(int(count * 1.3) + 100))
        contacts = contacts[contacts["phone_valid"] & ~contacts["duplicate"]].head(count)
        self.to = contacts["phone"].tolist()
        self.sub = [{"name": n, "amount": a} for n, a in zip(contacts["name"], contacts["amount"], strict=True)]
        if len(self.to) < count:
            raise SystemExit(f"only {len(self.to)} recipients for {count}")

    def body(self, start: int, size: int, feature: int, url: str | None, schedule: str | None) -> dict:
        """The request to recipients [start, start+size) with the first ``feature`` features on (0-4)."""
        to = self.to[start:start + size]
        body: dict = {"message": "Your order is ready", "from": "Shop", "to": to}
        if feature >= 1:
            body.update(message=TEMPLATE.replace(" Baja: {UNSUB_URL}", ""), sub=self.sub[start:start + size],
                        parts=2, encoding="gsm-pt")
        if feature >= 2:
            body["message"] = TEMPLATE
        if feature >= 3 and url:
            body["notificationUrl"] = url
        if feature >= 4 and url:
            body["notificationUrl"] = [url] * len(to)
        if schedule:
            body["scheduleDate"] = schedule
        return body


FEATURES = ("fixed text", "+ sub (name, amount), parts 2, gsm-pt", "+ {UNSUB_URL}", "+ notificationUrl",
            "+ notificationUrl per recipient")


def send_all(client: httpx.Client, bodies: list[dict], pid: int) -> tuple[float, float, int]:
    """POST every body; (seconds, sandbox CPU seconds, recipients)."""
    cpu, started = cpu_seconds(pid), time.perf_counter()
    for body in bodies:
        response = client.post("/api/rest/sms", json=body)
        if response.status_code != 202:
            raise SystemExit(f"send failed: {response.status_code} {response.text[:300]}")
    return time.perf_counter() - started, cpu_seconds(pid) - cpu, sum(len(b["to"]) for b in bodies)


class RawReceiver:
    """A minimal keep-alive HTTP/1.1 server on 127.0.0.1 answering 200 to every GET (in a thread)."""

    def __init__(self) -> None:
        self.count = 0
        self.ready = threading.Event()
        self.port = 0
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
            self.ready.set()
            async with server:
                await server.serve_forever()

        asyncio.run(main())


def naive_notification_rate(url: str, count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        httpx.get(url.replace("%i", str(i)).replace("%s", "DELIVRD"))  # a new connection each time
    return count / (time.perf_counter() - started)


def notify(client: httpx.Client, people: Recipients, messages: int, url: str, pid: int) -> tuple[float, float, dict]:
    """Send ``messages`` with ``url``, then advance 600 s: (seconds of the advance, sandbox CPU, its counts)."""
    client.post("/_sandbox/reset", json={})
    bodies = [people.body(s, min(1000, messages - s), 3, url, None) for s in range(0, messages, 1000)]
    send_all(client, bodies, pid)
    cpu, started = cpu_seconds(pid), time.perf_counter()
    done = client.post("/_sandbox/advance", json={"seconds": 600}).json()["done"]
    return time.perf_counter() - started, cpu_seconds(pid) - cpu, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    requests, naive_requests, notify_messages = (3, 200, 500) if args.quick else (20, 1000, 10_000)
    people = Recipients(max(requests * 1000, notify_messages))
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        process, base_url = start_sandbox(["--db", ":memory:", "--clock", "manual"], env={"XDG_DATA_HOME": tmp})
        live, live_url = start_sandbox(["--db", str(folder / "live.sqlite")], env={"XDG_DATA_HOME": tmp})
        receiver, receiver_url = start_receiver(folder / "callbacks.log")
        raw = RawReceiver()
        raw_url = f"http://127.0.0.1:{raw.port}/dlr?id=%i&s=%s&d=%d&t=%t&y=%y&c=%c&m=%m&n=%n&P=%P"
        try:
            with httpx.Client(base_url=base_url, auth=AUTH, timeout=600) as client:
                client.post("/api/rest/sms", json=people.body(0, 1000, 4, raw_url, LATER))  # warm up
                rates = []
                for feature, name in enumerate(FEATURES):
                    client.post("/_sandbox/reset", json={})
                    bodies = [people.body(r * 1000, 1000, feature, raw_url, LATER) for r in range(requests)]
                    seconds, cpu, sent = send_all(client, bodies, process.pid)
                    rates.append(sent / seconds)
                    lines.append(f"  {name:<40} {sent / seconds:10,.0f} recipients/s  {cpu / sent * 1e6:7.0f} us CPU "
                                 "per recipient")
                client.post("/_sandbox/reset", json={})
                bodies = [people.body(r, 1, 4, raw_url, LATER) for r in range(naive_requests)]
                seconds, cpu, sent = send_all(client, bodies, process.pid)
                naive = sent / seconds
                lines.append(f"  {'everything on, 1 recipient per request':<40} {naive:10,.0f} recipients/s  "
                             f"{cpu / sent * 1e6:7.0f} us CPU per recipient")
                client.post("/_sandbox/reset", json={})
                bodies = [people.body(r * 1000, 1000, 4, raw_url, None) for r in range(requests)]
                seconds, cpu, sent = send_all(client, bodies, process.pid)
                advance_cpu, started = cpu_seconds(process.pid), time.perf_counter()
                client.post("/_sandbox/advance", json={"seconds": 0})
                seconds += time.perf_counter() - started
                cpu += cpu_seconds(process.pid) - advance_cpu
                immediate = sent / seconds
                live_raw = RawReceiver()  # the live sandbox's notifications go here, not into the counts below
                live_url_dlr = f"http://127.0.0.1:{live_raw.port}/dlr?id=%i&s=%s&d=%d&t=%t&y=%y&c=%c&m=%m&n=%n&P=%P"
                live_bodies = [people.body(r * 1000, 1000, 4, live_url_dlr, None) for r in range(requests)]
                with httpx.Client(base_url=live_url, auth=AUTH, timeout=600) as live_client:
                    live_client.post("/api/rest/sms", json=people.body(0, 1000, 4, live_url_dlr, None))  # warm up
                    live_seconds, live_cpu, live_sent = send_all(live_client, live_bodies, live.pid)
                notifications = {}
                for name, url in (("minimal receiver", raw_url), ("sendframe receive", receiver_url)):
                    before = raw.count
                    notifications[name] = notify(client, people, notify_messages, url, process.pid)
                    if name == "minimal receiver":
                        arrived = raw.count - before
                    else:
                        arrived = len(sendframe.read_callbacks(folder / "callbacks.log"))
                    notifications[name] += (arrived,)
                naive_notify = naive_notification_rate(raw_url, min(300, notify_messages))
            memory = {"manual-clock sandbox": peak_memory_mib(process.pid),
                      "real-clock sandbox": peak_memory_mib(live.pid),
                      "receiver": peak_memory_mib(receiver.pid)}
        finally:
            stop(process)
            stop(live)
            stop(receiver)
    print(f"sends of 1,000 recipients per request, scheduled, manual clock ({requests} requests each):")
    print("\n".join(lines))
    print(f"ratio (batched / naive): {rates[-1] / naive:.1f}x, everything on")
    print(f"everything on, sent now, manual clock, incl. carrier planning: {immediate:10,.0f} recipients/s "
          f"{cpu / sent * 1e6:7.0f} us CPU per recipient")
    print(f"everything on, sent now, real clock (worker running):         {live_sent / live_seconds:10,.0f} "
          "recipients/s "
          f"{live_cpu / live_sent * 1e6:7.0f} us CPU per recipient")
    for name, (seconds, cpu, done, arrived) in notifications.items():
        print(f"notifications to a {name:<18}: {arrived / seconds:10,.0f} /s ({arrived:,} in {seconds:.2f} s incl. "
              f"applying steps; {cpu / max(arrived, 1) * 1e6:.0f} us sandbox CPU each; worker counts {done})")
    print(f"notifications, naive sequential GETs: {naive_notify:10,.0f} /s")
    ratio = notifications["minimal receiver"][3] / notifications["minimal receiver"][0] / naive_notify
    print(f"ratio (sandbox / naive notifications): {ratio:.1f}x")
    for name, mib in memory.items():
        print(f"peak memory (VmHWM), {name:<22}: {mib:10,.1f} MiB")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall rates depend on it; CPU does not)")


if __name__ == "__main__":
    main()
