"""Delivery notifications per second from the sandbox's Notifier: to ``sendframe receive`` and to a bare server.

    python benchmarks/bench_notifier.py            # 20,000 notifications (naive: 2,000); drain of 50,000 messages
    python benchmarks/bench_notifier.py --quick    # 1,000 notifications (naive: 200), no drain: smoke run
    python benchmarks/bench_notifier.py --drain 100000 --skip-notifier   # only the sandbox's drain, 100,000 messages

The notifications are what a campaign's receiver gets: the notificationUrl ``sendframe receive`` prints
(its token, all twelve escape codes) filled with realistic values (20-character ids, recipients of a messy
table, dates, costs, MNCs, ACCEPTD then a final status), so every request line has its real length.

Measured in the same run, each receiver in its own process:

- ``Notifier.deliver_many`` in batches of 4,000 (as the sandbox's worker sends a round), at most
  ``max_in_flight`` unanswered (a few pipelined keep-alive connections, every outbound policy check on)
  to ``sendframe receive``: durable, a 200 only once the notification is on disk; the log is read back
  with ``read_callbacks`` and every acknowledged notification must be in it;
- the same to a bare keep-alive HTTP/1.1 server (``200 OK``, nothing written): the notifier's own ceiling;
- the naive baseline: one notification after the other over one keep-alive ``httpx.Client`` (no policy
  checks), to each receiver.

Then the sandbox's whole path (``--drain`` messages, 0 to skip): ``sendframe sandbox`` accepts the
messages (SMS with the receiver's notificationUrl) and is killed at once; a new ``sendframe sandbox`` on
the same database (started 4 s later) finds the whole backlog due (carrier steps and notifications): its
worker applies the steps and its notifier process drains the reports into ``sendframe receive``, nothing
else competing: notifications/s from its start until nothing is pending, and the CPU of the sandbox, of its
notifier process and of the receiver per notification.

Prints notifications/s, the CPU seconds of this process and of each receiver, and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import signal
import socket
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx

import sendframe
from messy_data import messy_contacts
from sandbox_process import children, cpu_seconds, helpers, start_receiver, start_sandbox, stop
from sendframe.api.notifications import substitute
from sendframe.sandbox.notifier import MAX_IN_FLIGHT, Notifier

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


def start_bare_receiver() -> tuple[multiprocessing.process.BaseProcess, str]:
    """A bare receiver process listening on 127.0.0.1 at a free port, and its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    process = multiprocessing.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    process.start()
    sock.close()
    return process, f"http://127.0.0.1:{port}/dlr?id=%i&delivery=%d&sender=%p&recipient=%P&sent_at=%t&cost=%c" \
                    "&status=%s&mnc=%m&reported_at=%y&part=%n&campaign_id=%C&sending_id=%S"


def notification_urls(template: str, count: int, offset: int = 0) -> list[str]:
    """``count`` filled notification URLs: per message ACCEPTD, then DELIVRD (or UNDELIV, one in twenty)."""
    contacts = sendframe.read_contacts(messy_contacts(count // 2 + 200, seed=offset + 3))
    phones = contacts.loc[contacts["phone_valid"], "phone"].tolist()
    urls = []
    for i in range(count):
        message, final = divmod(offset + i, 2)
        status, delivery = ("ACCEPTD", 4) if not final else (("UNDELIV", 2) if message % 20 == 0 else ("DELIVRD", 1))
        minute = f"2026-11-21 09:{message // 600 % 60:02d}"
        urls.append(substitute(template, {
            "i": f"{message:020x}", "d": str(delivery), "p": "Shop", "P": phones[message % len(phones)], "t": minute,
            "c": "0.0450", "s": status, "m": f"0{message % 4 + 1}", "y": minute, "n": "1", "C": "7", "S": "9"}))
    return urls


BATCH = 4000  # the sandbox worker's NOTIFICATION_BATCH


async def fast(urls: list[str], in_flight: int) -> tuple[float, int]:
    notifier = Notifier(allow_loopback=True, max_in_flight=in_flight)
    try:
        await notifier.deliver(urls[0])  # warm-up: the connection pool
        start = time.perf_counter()
        results = []
        for first in range(1, len(urls), BATCH):
            results.extend(await notifier.deliver_many(urls[first:first + BATCH]))
        elapsed = time.perf_counter() - start
    finally:
        await notifier.aclose()
    return elapsed, sum(r.ok for r in results)


def naive(urls: list[str]) -> tuple[float, int]:
    with httpx.Client(follow_redirects=False, timeout=5.0) as client:
        client.get(urls[0])
        start = time.perf_counter()
        ok = sum(client.get(url).status_code == 200 for url in urls[1:])
        return time.perf_counter() - start, ok


def _lines(log: Path) -> int:
    with log.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def _pending(db: sqlite3.Connection) -> int:
    steps = db.execute("SELECT COUNT(*) FROM work").fetchone()[0]
    return steps + db.execute("SELECT COUNT(*) FROM notifications WHERE state = 'pending'").fetchone()[0]


LATEST_STEP = 4.0  # s: the default carrier's last report of an SMS comes at most 3.5 s after it is accepted


def drain(messages: int, notification_url: str, log: Path, receiver_pid: int, folder: Path) -> dict[str, float]:
    """A backlog of ``messages`` SMS (ACCEPTD and a final report each) drained by a restarted sandbox."""
    state = folder / "drain.sqlite"
    first, base_url = start_sandbox(["--db", str(state)])
    first_notifiers = children(first.pid)
    try:
        with httpx.Client(base_url=base_url, auth=("demo", "demo-password"), timeout=60) as client:
            for start in range(0, messages, 1000):
                to = [f"4479{n:08d}" for n in range(start, min(start + 1000, messages))]
                client.post("/api/rest/sms", json={"message": "Hola", "to": to, "from": "Shop",
                                                   "notificationUrl": notification_url}).raise_for_status()
    finally:
        for pid in first_notifiers:  # at once, with its notifier process: the backlog stays in the database
            os.kill(pid, signal.SIGKILL)
        first.kill()
        first.wait()
    time.sleep(LATEST_STEP)  # every step of the backlog falls due: the drain measures throughput, not latency
    before = _lines(log)
    second, _ = start_sandbox(["--db", str(state)])
    named = helpers(second.pid)  # the sandbox's steps and notifier processes
    watched = {"sandbox_cpu": [second.pid], "steps_cpu": [named["steps"]], "notifier_cpu": [named["notifier"]],
               "receiver_cpu": [receiver_pid]}
    started = time.perf_counter()
    before_cpu = {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in watched.items()}
    try:
        db = sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=30)
        while _pending(db):
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        used = {name: sum(cpu_seconds(pid) for pid in pids) - before_cpu[name] for name, pids in watched.items()}
        db.close()
    finally:
        stop(second)
    return {"notifications": _lines(log) - before, "seconds": elapsed, **used}


def timed(pid: int, work) -> tuple[float, int, float, float]:
    before, cpu = cpu_seconds(pid), time.process_time()
    seconds, ok = work()
    return seconds, ok, time.process_time() - cpu, cpu_seconds(pid) - before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--count", type=int, default=None, help="notifications for the fast way")
    parser.add_argument("--in-flight", type=int, default=MAX_IN_FLIGHT,
                        help=f"Notifier max_in_flight (policy: {MAX_IN_FLIGHT})")
    parser.add_argument("--drain", type=int, default=None, help="messages in the sandbox's backlog (0: no drain)")
    parser.add_argument("--skip-notifier", action="store_true", help="only the drain")
    args = parser.parse_args(argv)
    drained: dict[str, float] | None = None
    drain_messages = args.drain if args.drain is not None else (0 if args.quick else 50_000)
    count = args.count or (1_000 if args.quick else 20_000)
    naive_count = max(50, count // (5 if args.quick else 10))
    rows: list[tuple[str, int, int, float, float, float]] = []
    complete = True
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "callbacks.log"
        bare, bare_url = start_bare_receiver()
        receiver, receiver_url = start_receiver(log)
        try:
            for name, template, pid in (("sendframe receive", receiver_url, receiver.pid),
                                        ("bare server", bare_url, bare.pid)) * (not args.skip_notifier):
                urls = notification_urls(template, count + 1)
                seconds, ok, client_cpu, server_cpu = timed(pid, lambda u=urls: asyncio.run(fast(u, args.in_flight)))
                rows.append((f"deliver_many (max_in_flight={args.in_flight}) -> {name}", count, ok, seconds, client_cpu,
                             server_cpu))
                if name == "sendframe receive":
                    stored = sendframe.read_callbacks(log)
                    complete = len(stored) >= ok + 1 and complete
                slow = notification_urls(template, naive_count + 1, offset=count + 2)
                seconds, ok, client_cpu, server_cpu = timed(pid, lambda u=slow: naive(u))
                rows.append((f"naive httpx.Client, one by one -> {name}", naive_count, ok, seconds, client_cpu,
                             server_cpu))
            if drain_messages:
                drained = drain(drain_messages, receiver_url, log, receiver.pid, Path(tmp))
        finally:
            stop(receiver)
            bare.terminate()
            bare.join(5)
    if rows:
        print(f"notification URLs of {len(urls[0]):,}+ characters (the receiver's notificationUrl, 12 escape codes)")
    for label, total, ok, seconds, client_cpu, server_cpu in rows:
        print(f"{label:<52}: {total:7,} in {seconds:6.2f} s = {total / seconds:9,.0f}/s ({ok:,} ok); CPU "
              f"{client_cpu / total * 1e6:5.0f} us sender + {server_cpu / total * 1e6:5.0f} us receiver each")
    if rows:
        fast_rate, naive_rate = rows[0][1] / rows[0][3], rows[1][1] / rows[1][3]
        print(f"every acknowledged notification in the receiver's log: {complete}")
        print(f"ratio: {fast_rate / naive_rate:.1f}x to sendframe receive, "
              f"{(rows[2][1] / rows[2][3]) / (rows[3][1] / rows[3][3]):.1f}x to the bare server")
    if drained is not None:
        count = drained["notifications"]
        print(f"sandbox drain of {drain_messages:,} messages' backlog -> sendframe receive: {count:,.0f} notifications "
              f"in {drained['seconds']:.2f} s = {count / drained['seconds']:,.0f}/s; CPU "
              f"{drained['sandbox_cpu'] / count * 1e6:.0f} us sandbox + {drained['steps_cpu'] / count * 1e6:.0f} us "
              f"its steps process + {drained['notifier_cpu'] / count * 1e6:.0f} us its notifier process + "
              f"{drained['receiver_cpu'] / count * 1e6:.0f} us receiver each")
        complete = complete and count >= 2 * drain_messages
    print(f"goal: >= 10,000/s to sendframe receive; load average {os.getloadavg()[0]:.1f}")
    return 0 if complete and all(ok == total for _, total, ok, *_ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
