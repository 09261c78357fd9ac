"""send_sms's pacing against the real sandbox: bounded concurrency, rate limits, the progress bar.

Concurrency is observed, not inferred from timings: the client talks to the sandbox through a small
TCP relay that counts the connections holding a request the sandbox has not started to answer yet
(httpx sends one request at a time per connection), and the sandbox's ``delay_s`` fault keeps each
request open long enough for overlapping ones to show. Rate limits are checked with lower bounds on
the elapsed time, which a slow machine cannot break.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from urllib.parse import urlsplit

import pandas as pd
import pytest

from sendframe import send_sms
from sendframe.api.client import Client
from tests.campaign.recipients import phone_maker
from tests.conftest import FAST_RETRY

DELAY = 0.3  # seconds the sandbox holds every request before answering
SLACK = 0.02  # timer granularity; never enough to hide a missing wait


class InFlightRelay:
    """A loopback TCP relay to ``target`` that records the most requests awaiting an answer at once."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self._target = (parts.hostname, parts.port)
        self._waiting: set[int] = set()
        self.peak = 0
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="in-flight-relay", daemon=True)
        self.base_url = ""

    def __enter__(self) -> InFlightRelay:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._relay, "127.0.0.1", 0), self._loop).result(5)
        self.base_url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        async def close() -> None:
            self._server.close()
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def reset(self) -> None:
        self._loop.call_soon_threadsafe(self._reset)

    def _reset(self) -> None:
        self.peak = self.requests = 0

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
        key = id(client_writer)

        async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, is_request: bool) -> None:
            try:
                while chunk := await reader.read(65536):
                    if is_request and key not in self._waiting:  # a new request starts on this connection
                        self._waiting.add(key)
                        self.requests += 1
                        self.peak = max(self.peak, len(self._waiting))
                    elif not is_request:  # the answer has started
                        self._waiting.discard(key)
                    writer.write(chunk)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                self._waiting.discard(key)
                writer.close()

        await asyncio.gather(pump(client_reader, upstream_writer, True), pump(upstream_reader, client_writer, False))


@pytest.fixture(scope="module")
def relay(sb):
    with InFlightRelay(sb.base_url) as running:
        yield running


@pytest.fixture
def relayed(sb, relay):
    """A client whose requests pass through the relay, with the sandbox holding each one DELAY seconds."""
    sb.clear_faults()
    sb.faults(delay_s=DELAY)
    relay.reset()
    with Client(relay.base_url, sb.username, sb.api_password, retry=FAST_RETRY) as c:
        yield c
    sb.clear_faults()


phones = phone_maker("4479113")


def contacts_of(n: int) -> pd.DataFrame:
    return pd.DataFrame({"phone": phones(n), "name": [f"N{i}" for i in range(n)]})


def timed_send(contacts: pd.DataFrame, message: str = "Hi {name}", **kw) -> tuple[pd.DataFrame, float]:
    started = time.monotonic()
    result = send_sms(contacts, message, "Shop", progress=False, **kw)
    return result, time.monotonic() - started


# ---------------------------------------------------------------- bounded concurrency


@pytest.mark.parametrize("concurrency", [1, 2, 4])
def test_no_more_than_concurrency_requests_are_in_flight_and_the_rounds_add_up(relayed, relay, concurrency):
    result, elapsed = timed_send(contacts_of(6), client=relayed, batch_size=1, concurrency=concurrency)
    assert result["outcome"].eq("accepted").all(), result
    assert relay.requests == 6
    assert relay.peak == concurrency  # never more, and the send does use what it is allowed
    assert elapsed >= math.ceil(6 / concurrency) * DELAY - SLACK


def test_enough_concurrency_sends_every_batch_at_once_and_is_faster(relayed, relay):
    _, narrow = timed_send(contacts_of(6), client=relayed, batch_size=1, concurrency=2)
    assert relay.peak == 2
    relay.reset()
    _, wide = timed_send(contacts_of(6), client=relayed, batch_size=1, concurrency=6)
    assert relay.peak == 6
    assert narrow >= 3 * DELAY - SLACK
    assert wide < narrow - DELAY  # at least one round fewer


# ---------------------------------------------------------------- rate limits


def test_requests_per_second_holds_the_average_request_rate(client):
    # 10 requests at 5/s with a one-second burst: the last 5 wait 0.2 s each after the first 5
    result, elapsed = timed_send(contacts_of(10), client=client, batch_size=1, concurrency=10, requests_per_second=5)
    assert result["outcome"].eq("accepted").all()
    assert result["batch"].nunique() == 10
    assert elapsed >= (10 - 5) / 5 - SLACK


def test_parts_per_second_counts_sms_parts_not_requests(client):
    long_text = "x" * 200 + " {name}"  # gsm, over 160 characters: two parts per message
    # 3 batches of 2 rows = 12 parts at 4 parts/s (burst 4): batch 2 waits 1 s, batch 3 waits 2 s.
    # Counted per request (3 < burst) or per row (6) it would take at most 0.5 s.
    result, elapsed = timed_send(contacts_of(6), long_text, client=client, batch_size=2, concurrency=3, parts=2,
                                 parts_per_second=4)
    assert result["outcome"].eq("accepted").all(), result
    assert result["parts"].eq(2).all()
    assert result["batch"].nunique() == 3
    assert elapsed >= (12 - 4) / 4 - SLACK


# ---------------------------------------------------------------- progress bar


def test_the_progress_bar_counts_every_recipient_under_send_sms(client, capsys):
    contacts = contacts_of(5)
    contacts.loc[3, "phone"] = "12"  # a rejected row still counts as done
    result = send_sms(contacts, "Hi {name}", "Shop", client=client, batch_size=2, progress=True, keep="invalid")
    assert result["outcome"].value_counts()[["accepted", "rejected"]].tolist() == [4, 1]
    captured = capsys.readouterr()
    assert captured.out == ""
    final = captured.err.replace("\r", "\n").strip().splitlines()[-1]
    assert final.startswith("send sms: 100%"), captured.err
    assert "5/5" in final, captured.err


def test_without_progress_nothing_is_printed(client, capsys):
    result = send_sms(contacts_of(5), "Hi {name}", "Shop", client=client, batch_size=2, progress=False)
    assert result["outcome"].eq("accepted").all()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
