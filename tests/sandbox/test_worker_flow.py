"""The worker on the real clock under load: reports in order per message, each once, a reset with reports in flight."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import Counter
from urllib.parse import parse_qs

import httpx
import pytest

from sendframe.delivery.receiver import Receiver
from sendframe.sandbox import Sandbox
from sendframe.sandbox.notification_rounds import NOTIFICATION_BATCH
from sendframe.sandbox.state import SandboxState
from sendframe.sandbox.worker import Worker

FINAL = {"DELIVRD", "UNDELIV", "EXPIRED", "REJECTD", "DELETED"}


@pytest.fixture(params=["in the worker", "in a notifier process"])
def db(request, tmp_path) -> str:
    """The sandbox's database: in memory (the worker sends the reports) or a file (its notifier process does)."""
    return ":memory:" if request.param == "in the worker" else str(tmp_path / "sandbox.sqlite")


class SlowServer:
    """Answers 200 to each request ``delay`` seconds after the one before it on its connection (in a thread),
    recording each query as a dict in arrival order."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.hits: list[dict[str, str]] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/dlr?i=%i&s=%s"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                await asyncio.sleep(self.delay)
                query = head.split(b" ")[1].decode().partition("?")[2]
                self.hits.append({k: v[0] for k, v in parse_qs(query).items()})
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(asyncio.start_server(self._handle, sock=self.sock))
        self.loop.run_forever()

    def __enter__(self) -> SlowServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def send(sb: Sandbox, count: int, url: str) -> None:
    with httpx.Client(base_url=sb.base_url, auth=(sb.username, sb.api_password), timeout=60) as client:
        for start in range(0, count, 1000):
            to = [f"4479{n:08d}" for n in range(start, min(start + 1000, count))]
            client.post("/api/rest/sms", json={"message": "Hi", "to": to, "from": "Shop",
                                               "notificationUrl": url}).raise_for_status()


def wait_until(condition, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.slow
def test_under_a_backlog_larger_than_a_batch_each_message_reports_accepted_then_final_once(tmp_path, db):
    count = NOTIFICATION_BATCH  # twice as many reports as a batch, due together
    with Sandbox(db=db, clock="real") as sb, Receiver(tmp_path / "callbacks.log") as receiver:
        send(sb, count, receiver.notification_url)
        assert wait_until(lambda: receiver.notifications >= 2 * count)
        time.sleep(0.5)  # anything sent twice would arrive by now
        callbacks = receiver.callbacks()
    assert len(callbacks) == 2 * count
    statuses = callbacks.groupby("id", sort=False)["status"].agg(list)  # in arrival order
    assert len(statuses) == count
    assert all(s[0] == "ACCEPTD" and s[1] in FINAL for s in statuses)


@pytest.mark.slow
def test_a_slow_receiver_gets_each_report_once_and_each_counts_one_attempt(db):
    count = 150
    with SlowServer(delay=0.01) as server, Sandbox(db=db, clock="real") as sb:
        send(sb, count, server.url)
        assert wait_until(lambda: len(server.hits) >= 2 * count)
        time.sleep(1.5)  # a retry would come a second after a failed attempt
        notes = [n for row in sb.messages()["notifications"] for n in row]
    seen = Counter((hit["i"], hit["s"]) for hit in server.hits)
    assert len(seen) == 2 * count and set(seen.values()) == {1}
    assert {(n["state"], n["attempts"]) for n in notes} == {("sent", 1)}


@pytest.mark.slow
def test_a_reset_with_reports_in_flight_leaves_nothing_pending_and_the_worker_goes_on(db):
    with SlowServer(delay=0.02) as server, Sandbox(db=db, clock="real") as sb:
        send(sb, 400, server.url)
        assert wait_until(lambda: len(server.hits) > 0)  # a batch is in flight
        sb.reset()
        assert sb.messages().empty
        assert sb.state is not None and sb.state.worker.pending() == {"steps": 0, "notifications": 0}
        send(sb, 1, server.url)

        def delivered() -> bool:
            notes = sb.messages()["notifications"].iloc[0]
            return len(notes) == 2 and all(n["state"] == "sent" for n in notes)

        assert wait_until(delivered, timeout=30)


def test_stopping_the_worker_as_it_is_woken_ends_it():
    async def scenario() -> int:
        state = SandboxState.create(clock="real")
        stopped = 0
        for _ in range(50):
            worker = Worker(state)
            await worker.start()
            await asyncio.sleep(0.002)  # idle: waiting to be woken
            state.poke()
            await asyncio.sleep(0)  # the wake is set and the waiting ends...
            stopping = asyncio.ensure_future(worker.stop())  # ...as the cancel comes
            done, _ = await asyncio.wait({stopping}, timeout=1.0)
            stopped += bool(done)
            if not done:  # Python 3.11's wait_for swallowed the cancel: the loop runs on
                assert worker._task is not None
                worker._task.cancel()
                await stopping
        return stopped

    assert asyncio.run(scenario()) == 50
