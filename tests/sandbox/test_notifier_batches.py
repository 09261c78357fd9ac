"""The notifier's batch path (``deliver_many``) against real HTTP servers: pipelining, framing, failures.

The servers are ``tests/sandbox/raw_http_server.py`` (asyncio, answers chosen by path) and the real
sandbox with its worker (for retries of attempts lost with a connection).
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from sendframe.sandbox import Sandbox
from sendframe.sandbox.notifier import Attempt, Notifier
from sendframe.sandbox.outbound import MAX_CONNECTIONS

from .raw_http_server import RawServer


@pytest.fixture()
def server():
    with RawServer() as running:
        yield running


def deliver_many(urls: list[str], **options) -> list[Attempt]:
    async def run() -> list[Attempt]:
        notifier = Notifier(**{"allow_loopback": True, **options})
        try:
            return await notifier.deliver_many(urls)
        finally:
            await notifier.aclose()

    return asyncio.run(run())


def test_pipelined_answers_are_matched_to_their_requests_in_order(server):
    statuses = [200, 503, 404, 200, 302, 201, 500, 204] * 25
    attempts = deliver_many([server.url(f"/status/{s}?i={i}") for i, s in enumerate(statuses)])
    assert [a.status for a in attempts] == statuses
    assert [a.ok for a in attempts] == [200 <= s < 300 for s in statuses]
    assert "redirects are not followed" in attempts[4].error
    assert sorted(server.requests) == sorted(f"/status/{s}?i={i}" for i, s in enumerate(statuses))
    assert max(server.reads) > 1  # requests were pipelined: several arrived before their answers went out
    assert server.connections <= MAX_CONNECTIONS  # per destination, the outbound policy's bound


def test_runs_of_identical_answers_keep_each_its_own_status(server):
    # an answer equal to the last short one is taken without parsing it, also after a chunked 200 between them
    paths = ["/status/404", "/status/404", "/chunked", "/status/404", "/status/204", "/status/204", "/chunked",
             "/status/204", "/status/503", "/ok", "/ok"] * 20
    attempts = deliver_many([server.url(f"{path}?i={i}") for i, path in enumerate(paths)])
    statuses = [int(path.rsplit("/", 1)[1]) if path.startswith("/status/") else 200 for path in paths]
    assert [a.status for a in attempts] == statuses
    assert [a.ok for a in attempts] == [200 <= s < 300 for s in statuses]
    assert max(server.reads) > 1


def test_requests_carry_the_host_and_the_notifier_user_agent(server):
    assert deliver_many([server.url("/ok?id=1")])[0].ok
    head = server.heads[0].decode()
    assert head.startswith("GET /ok?id=1 HTTP/1.1\r\n")
    assert f"Host: {server.base.removeprefix('http://')}" in head
    assert "User-Agent: sendframe-sandbox-notifier/1" in head


def test_characters_a_request_line_may_not_hold_are_percent_encoded(server):
    assert deliver_many([server.url("/ok?t=2026-11-21 09:30&n=caf\u00e9#fragment")])[0].ok
    assert server.requests == ["/ok?t=2026-11-21%2009:30&n=caf%C3%A9"]


def test_a_server_that_closes_after_each_answer_gets_every_notification_once(server):
    attempts = deliver_many([server.url(f"/close?i={i}") for i in range(30)])
    assert all(a.ok for a in attempts)
    assert sorted(server.requests) == sorted(f"/close?i={i}" for i in range(30))  # none lost, none twice
    assert server.connections >= 30 and max(server.reads) == 1  # never pipelined on a connection it closes


def test_a_slow_server_hits_the_timeout_and_the_requests_behind_it_fail(server):
    started = time.monotonic()
    attempts = deliver_many([server.url("/ok?first")] + [server.url(f"/slow?i={i}") for i in range(3)], timeout=0.5)
    assert attempts[0].ok
    assert all(not a.ok and a.status is None for a in attempts[1:])
    assert any("timed out after 0.5 s" in a.error for a in attempts[1:])
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("path", ["/big", "/bigchunked"])
def test_an_answer_larger_than_max_body_is_judged_by_its_status_and_its_connection_dropped(server, path):
    attempts = deliver_many([server.url(path), server.url("/ok?after")], max_body=65536)
    assert attempts == [Attempt(True, 200, None), Attempt(True, 200, None)]
    assert server.connections >= 2  # the big answer's connection was not read to its end and reused


def test_chunked_and_close_delimited_answers_are_read_to_their_end(server):
    attempts = deliver_many([server.url(f"/chunked?i={i}") for i in range(20)] + [server.url("/eof")])
    assert all(a == Attempt(True, 200, None) for a in attempts)
    assert server.connections <= 5  # chunked answers keep their connection


def test_refused_destinations_in_a_batch_are_refused_and_the_others_delivered(server):
    urls = [server.url("/ok?i=0"), "http://169.254.169.254/latest", "http://10.0.0.1/dlr", "ftp://x/",
            "http://user:pw@127.0.0.1/", server.url("/ok?i=1"), "http://[::ffff:a9fe:a9fe]/"]
    attempts = deliver_many(urls)
    assert [a.refused for a in attempts] == [False, True, True, True, True, False, True]
    assert attempts[0].ok and attempts[5].ok
    assert "cloud metadata" in attempts[1].error and "private" in attempts[2].error
    assert "pw" not in attempts[4].error
    assert sorted(server.requests) == ["/ok?i=0", "/ok?i=1"]


def test_requests_in_flight_on_a_dropped_connection_fail_and_the_others_are_delivered(server):
    urls = [server.url(f"/ok?i={i}") for i in range(20)] + [server.url("/drop")]
    urls += [server.url(f"/ok?j={i}") for i in range(40)]
    # 32 in flight over at most MAX_CONNECTIONS connections: the dropped connection takes only its own with it
    attempts = deliver_many(urls, max_in_flight=32)
    failed = [a for a in attempts if not a.ok]
    assert not attempts[20].ok and attempts[20].error == "connection failed: closed before the answer"
    assert all(a.error.startswith("connection failed") and not a.refused and a.status is None for a in failed)
    assert sum(a.ok for a in attempts) >= 40  # the other connections carried on


def test_in_flight_never_exceeds_max_in_flight_across_concurrent_batches(server):
    started = time.monotonic()
    batches = asyncio.run(_with_timeout(server, 0.3, 3))
    assert all(not batch[0].ok for batch in batches)
    # never more than 3 unanswered: the 4 slow requests needed two timeouts of 0.3 s in turn
    assert time.monotonic() - started >= 0.6
    assert len(server.requests) == 8


async def _with_timeout(server: RawServer, timeout: float, in_flight: int) -> list[list[Attempt]]:
    notifier = Notifier(allow_loopback=True, max_in_flight=in_flight, timeout=timeout)
    try:
        return await asyncio.gather(*(notifier.deliver_many(
            [server.url(f"/slow?b={b}"), server.url(f"/ok?b={b}")]) for b in range(4)))
    finally:
        await notifier.aclose()


def test_a_closed_port_fails_every_request_of_the_batch_with_a_connection_failure():
    with RawServer() as gone:
        url = gone.base
    attempts = deliver_many([f"{url}/dlr?i={i}" for i in range(50)])
    assert all(not a.ok and not a.refused and a.error.startswith("connection failed") for a in attempts)


def test_attempts_lost_with_a_dropped_connection_are_retried_by_the_worker(server):
    with Sandbox(clock="manual") as sb:
        answer = httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password), timeout=30, json={
            "message": "x", "to": ["447700900300"], "from": "Shop",  # stays ACCEPTD: one report
            "notificationUrl": server.url("/dropfirst?id=%i&s=%s")})
        assert answer.is_success
        sb.advance(0.5)
        assert server.requests and server.connections == 1  # sent, and the connection dropped unanswered
        sb.advance(1)  # retried 1 s after the failed attempt, on a new connection
        assert len(server.requests) == 2 and server.connections == 2
        sb.advance(100)
    assert len(server.requests) == 2  # answered: no more attempts
    assert server.requests[0] == server.requests[1] and "s=ACCEPTD" in server.requests[0]
