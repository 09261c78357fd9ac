"""The notifier against a real local HTTP receiver (Starlette on uvicorn, port 0, in a thread)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, StreamingResponse
from starlette.routing import Route

from sendframe.sandbox.notifier import RETRY_DELAYS, Attempt, Notifier

ROOT = Path(__file__).resolve().parents[2]


class Receiver:
    """A tiny notification receiver: records every request path and query it gets."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0

        async def ok(request: Request) -> PlainTextResponse:
            self.hits.append(request.url.path + "?" + request.url.query)
            return PlainTextResponse("ok")

        async def fail(request: Request) -> PlainTextResponse:
            self.hits.append(request.url.path)
            return PlainTextResponse("boom", status_code=500)

        async def redirect(request: Request) -> RedirectResponse:
            self.hits.append(request.url.path)
            return RedirectResponse("/ok?from=redirect", status_code=302)

        async def endless(request: Request) -> StreamingResponse:
            async def chunks():
                while True:
                    yield b"x" * 65536
                    await asyncio.sleep(0)

            self.hits.append(request.url.path)
            return StreamingResponse(chunks(), media_type="text/plain")

        async def slow(request: Request) -> PlainTextResponse:
            await asyncio.sleep(3)
            return PlainTextResponse("late")

        async def hold(request: Request) -> PlainTextResponse:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            await asyncio.sleep(0.05)
            self.in_flight -= 1
            self.hits.append(request.url.path)
            return PlainTextResponse("ok")

        routes = [Route("/ok", ok), Route("/fail", fail), Route("/redirect", redirect),
                  Route("/endless", endless), Route("/slow", slow), Route("/hold", hold)]
        config = uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test receiver did not start within 10 s")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture(scope="module")
def receiver():
    with Receiver() as running:
        yield running


def deliver(url: str, **options) -> Attempt:
    async def run() -> Attempt:
        notifier = Notifier(**{"allow_loopback": True, **options})
        try:
            return await notifier.deliver(url)
        finally:
            await notifier.aclose()

    return asyncio.run(run())


# ------------------------------------------------------------------------------------ delivery
def test_a_2xx_answer_is_a_successful_notification(receiver):
    attempt = deliver(f"{receiver.base}/ok?id=abc&s=DELIVRD&d=1")
    assert attempt == Attempt(True, 200, None)
    assert "/ok?id=abc&s=DELIVRD&d=1" in receiver.hits


def test_a_500_answer_is_not_ok(receiver):
    attempt = deliver(f"{receiver.base}/fail")
    assert not attempt.ok and attempt.status == 500 and "500" in attempt.error


def test_a_redirect_is_not_followed(receiver):
    before = len([h for h in receiver.hits if "from=redirect" in h])
    attempt = deliver(f"{receiver.base}/redirect")
    assert not attempt.ok and attempt.status == 302 and "redirect" in attempt.error
    assert len([h for h in receiver.hits if "from=redirect" in h]) == before


def test_an_endless_answer_is_cut_after_max_body_bytes(receiver):
    started = time.monotonic()
    attempt = deliver(f"{receiver.base}/endless", timeout=5.0, max_body=65536)
    assert attempt == Attempt(True, 200, None)  # read 64 KiB and stopped, long before the timeout
    assert time.monotonic() - started < 4


def test_a_receiver_slower_than_the_timeout_fails_with_a_timeout(receiver):
    started = time.monotonic()
    attempt = deliver(f"{receiver.base}/slow", timeout=0.5)
    assert not attempt.ok and attempt.status is None and "timed out" in attempt.error
    assert time.monotonic() - started < 2.5


def test_a_closed_port_is_a_connection_failure():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    attempt = deliver(f"http://127.0.0.1:{port}/dlr")
    assert not attempt.ok and attempt.status is None and attempt.error.startswith("connection failed")


def test_notifications_in_flight_never_exceed_max_in_flight(receiver):
    async def run() -> list[Attempt]:
        notifier = Notifier(allow_loopback=True, max_in_flight=4)
        try:
            return await asyncio.gather(*(notifier.deliver(f"{receiver.base}/hold?n={i}") for i in range(24)))
        finally:
            await notifier.aclose()

    attempts = asyncio.run(run())
    assert all(a.ok for a in attempts)
    assert 1 <= receiver.max_in_flight <= 4


# -------------------------------------------------------------------------------- destinations
@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.10.1/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    "http://[::ffff:169.254.169.254]/",
    "http://metadata.google.internal/computeMetadata/v1/",
])
def test_link_local_and_metadata_addresses_are_always_refused(url):
    notifier = Notifier(allow_loopback=True, allow_networks=["169.254.0.0/16", "fc00::/7", "fe80::/10"])
    assert notifier.check_destination(url) is not None
    attempt = deliver(url, allow_networks=["169.254.0.0/16", "fc00::/7"])
    assert not attempt.ok and attempt.error.startswith("refused")


@pytest.mark.parametrize("address", ["10.1.2.3", "172.16.0.9", "192.168.1.20", "100.64.0.1", "[fd12::1]"])
def test_private_addresses_are_refused_unless_listed(address):
    url = f"http://{address}/dlr"
    assert "private" in Notifier(allow_loopback=True).check_destination(url)
    listed = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fd00::/8"]
    assert Notifier(allow_loopback=False, allow_networks=listed).check_destination(url) is None


def test_loopback_is_refused_unless_allowed_or_listed(receiver):
    assert "loopback" in Notifier(allow_loopback=False).check_destination(f"{receiver.base}/ok")
    assert "loopback" in Notifier(allow_loopback=False).check_destination("http://localhost:9/ok")
    refused = deliver(f"{receiver.base}/ok?case=refused", allow_loopback=False)
    assert not refused.ok and "loopback" in refused.error
    assert not any("case=refused" in h for h in receiver.hits)
    assert deliver(f"{receiver.base}/ok?case=listed", allow_loopback=False, allow_networks=["127.0.0.0/8"]).ok


@pytest.mark.parametrize(("url", "carried"), [
    ("http://[2002:a9fe:a9fe::]/", "169.254.169.254"),        # 6to4 of the metadata address
    ("http://[2002:a00:1::1]/", "10.0.0.1"),                   # 6to4 of a private address
    ("http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254"),      # NAT64
    ("http://[64:ff9b::a00:1]/", "10.0.0.1"),
    ("http://[::ffff:a9fe:a9fe]/", "169.254.169.254"),        # IPv4-mapped
    ("http://[::169.254.169.254]/", "169.254.169.254"),       # IPv4-compatible
    ("http://[::10.0.0.1]/", "10.0.0.1"),
])
def test_ipv6_forms_that_carry_an_ipv4_address_are_judged_by_it(url, carried):
    reason = Notifier(allow_loopback=True).check_destination(url)
    assert reason is not None and f"which carries {carried}" in reason
    attempt = deliver(url)
    assert not attempt.ok and attempt.refused and attempt.error.startswith("refused")


def test_an_ipv6_form_carrying_loopback_follows_the_loopback_rule(receiver):
    assert Notifier(allow_loopback=True).check_destination("http://[64:ff9b::7f00:1]/") is None
    assert "loopback" in Notifier(allow_loopback=False).check_destination("http://[2002:7f00:1::]/")
    assert Notifier(allow_loopback=False).check_destination("http://[2002:5db8:d70e::]/") is None  # 93.184.215.14


def test_a_refused_destination_is_marked_final_and_a_failing_one_is_not(receiver):
    assert deliver("http://169.254.169.254/").refused is True
    assert deliver("ftp://example.com/").refused is True
    assert deliver(f"{receiver.base}/fail").refused is False
    assert deliver("http://no-such-host.invalid/").refused is False  # a DNS failure may pass: retried


def test_allow_loopback_does_not_open_private_ranges():
    assert Notifier(allow_loopback=True).check_destination("http://10.0.0.1/") is not None


@pytest.mark.parametrize(("url", "reason"), [
    ("ftp://example.com/dlr", "http and https"),
    ("file:///etc/passwd", "http and https"),
    ("http://user:secret@127.0.0.1/dlr", "credentials"),
    ("http:///nohost", "no host"),
    ("http://127.0.0.1:notaport/", "not a valid URL"),
])
def test_urls_that_are_not_plain_http_destinations_are_refused(url, reason):
    got = Notifier(allow_loopback=True).check_destination(url)
    assert got is not None and reason in got
    assert "secret" not in got


def test_a_public_address_is_allowed():
    assert Notifier(allow_loopback=False).check_destination("http://93.184.215.14/dlr") is None


def test_a_bad_allow_network_is_refused_with_its_value():
    with pytest.raises(ValueError, match="not-a-net"):
        Notifier(allow_loopback=False, allow_networks=["not-a-net"])


def test_retry_delays_follow_the_policy():
    assert RETRY_DELAYS == (1, 2, 4, 8, 16, 32)


# ---------------------------------------------------------------------------------- benchmark
def test_notifier_benchmark_quick_run_prints_a_ratio():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_notifier.py"), "--quick"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ratio:" in done.stdout
