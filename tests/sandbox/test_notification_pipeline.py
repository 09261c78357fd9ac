"""Overlapping rounds of the notifier process (``RoundPipeline``), over real HTTP and a real database file:
a round goes out while another is in flight, a message's later report waits for its earlier one's attempt
to be recorded, and a report is marked sent only once its receiver answered 2xx."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from sendframe.sandbox import store
from sendframe.sandbox.notification_pipeline import RoundPipeline
from sendframe.sandbox.notifier import Notifier

from .raw_http_server import RawServer


def _database(path: Path, reports: list[tuple[str, str, float]]) -> str:
    db = store.connect(str(path))
    store.create_schema(db)
    with db:
        db.executemany("INSERT INTO notifications (message_id, url, next_at) VALUES (?, ?, ?)", reports)
    db.close()
    return str(path)


def _states(path: str) -> dict[str, tuple[str, int]]:
    db = store.connect(path)
    try:
        return {url.rsplit("/", 1)[-1]: (state, attempts)
                for url, state, attempts in db.execute("SELECT url, state, attempts FROM notifications")}
    finally:
        db.close()


async def _until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_round_goes_out_while_another_is_in_flight_and_never_overtakes_its_messages_reports(tmp_path):
    with RawServer() as server:
        path = _database(tmp_path / "s.sqlite", [
            ("m1", server.url("/slow?id=m1&n=1"), 1.0),  # never answered: its round stays in flight until it times out
            ("m1", server.url("/ok?id=m1&n=2"), 1.2),    # m1's later report: must wait for the first one's attempt
            ("m2", server.url("/ok?id=m2&n=1"), 1.5),
        ])

        async def scenario() -> tuple[dict[str, tuple[str, int]], list[str], dict[str, tuple[str, int]], list[str]]:
            # the slow report holds its connection: one request per connection, so the other is not held behind it
            rounds = RoundPipeline(path, Notifier(allow_loopback=True, timeout=1.0, max_in_flight=2), batch=1)
            try:
                assert await rounds.claim_and_send(10.0) == 1  # m1's first report, in flight
                assert await rounds.claim_and_send(10.0) == 1  # not m1's second: m2's
                assert rounds.full()
                await _until(lambda: any("id=m2" in r for r in server.requests))
                await _until(lambda: _states(path)["ok?id=m2&n=1"] == ("sent", 1))
                during = _states(path)
                requested_during = list(server.requests)
                await rounds.drain()  # the slow one times out: recorded as a failed attempt, retried later
                assert await rounds.claim_and_send(10.0) == 1  # now m1's second may go
                await rounds.drain()
                return during, requested_during, _states(path), list(server.requests)
            finally:
                await rounds.close()

        during, requested_during, after, requested = asyncio.run(scenario())
    assert during["slow?id=m1&n=1"] == ("pending", 0)  # in flight: not marked, sent again if the process dies now
    assert during["ok?id=m1&n=2"] == ("pending", 0)
    assert not any("n=2" in r for r in requested_during)
    assert after == {"slow?id=m1&n=1": ("pending", 1), "ok?id=m1&n=2": ("sent", 1), "ok?id=m2&n=1": ("sent", 1)}
    assert [r.split("?")[1] for r in requested] == ["id=m1&n=1", "id=m2&n=1", "id=m1&n=2"]


def test_rounds_in_flight_are_recorded_before_the_pipeline_closes(tmp_path):
    with RawServer() as server:
        count = 50
        path = _database(tmp_path / "s.sqlite", [(f"m{n}", server.url(f"/ok?id=m{n}"), 1.0) for n in range(count)])

        async def scenario() -> int:
            rounds = RoundPipeline(path, Notifier(allow_loopback=True), batch=20)
            claimed = 0
            try:
                while not rounds.full():
                    claimed += await rounds.claim_and_send(10.0)
            finally:
                await rounds.close()
            return claimed

        claimed = asyncio.run(scenario())
    states = _states(path)
    assert claimed == 40
    assert sum(state == ("sent", 1) for state in states.values()) == 40
    assert sum(state == ("pending", 0) for state in states.values()) == 10


def test_a_few_reports_due_beside_a_round_in_flight_wait_for_its_end(tmp_path):
    with RawServer() as server:
        path = _database(tmp_path / "s.sqlite", [
            ("m0", server.url("/slow?id=m0"), 1.0), *[(f"m{n}", server.url(f"/ok?id=m{n}"), 1.0) for n in range(1, 5)],
        ])

        async def scenario() -> tuple[int, int, list[str]]:
            rounds = RoundPipeline(path, Notifier(allow_loopback=True, timeout=1.0), batch=4)
            try:
                first = await rounds.claim_and_send(10.0)
                beside = await rounds.claim_and_send(10.0)  # one left, fewer than a round beside another takes
                await rounds.wait_for_a_round()
                after = await rounds.claim_and_send(10.0)
                await rounds.drain()
                return first, beside, after
            finally:
                await rounds.close()

        first, beside, after = asyncio.run(scenario())
    assert (first, beside, after) == (4, 0, 1)
    assert sorted(_states(path).values()) == [("pending", 1)] + [("sent", 1)] * 4
