"""Client configuration, secrecy of the password, and transport failures (no service needed)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import warnings

import pytest

from sendframe import Client
from sendframe.api.client import AsyncClient, RetryPolicy
from sendframe.errors import ConfigurationError, InputError, NotSentError, SendframeWarning, UnknownOutcomeError

PASSWORD = "s3cr3t-Pa55word"
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01)
SMS = {"message": "Hi", "to": ["447700900001"], "from": "Shop"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HangUpServer:
    """A peer that reads each request and closes the connection without answering."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.requests = 0
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                self.requests += 1

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def hang_up():
    server = HangUpServer()
    yield server
    server.close()


def test_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("SENDFRAME_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SENDFRAME_USERNAME", "demo")
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", PASSWORD)
    with Client() as client:
        assert client.config.base_url == "http://127.0.0.1:9"
        assert client.config.username == "demo"


@pytest.mark.parametrize("missing", ["SENDFRAME_BASE_URL", "SENDFRAME_USERNAME", "SENDFRAME_API_PASSWORD"])
def test_a_missing_setting_names_the_variable_to_set(monkeypatch, missing):
    for name, value in {"SENDFRAME_BASE_URL": "http://127.0.0.1:9", "SENDFRAME_USERNAME": "demo",
                        "SENDFRAME_API_PASSWORD": PASSWORD}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(missing)
    with pytest.raises(ConfigurationError, match=missing):
        Client()


def test_the_password_never_appears_in_repr_or_config():
    with Client("http://127.0.0.1:9", "demo", PASSWORD) as client:
        shown = repr(client) + str(client.config) + repr(client.config)
    assert PASSWORD not in shown
    assert "demo" in shown


def test_plain_http_to_a_remote_host_warns_but_loopback_does_not():
    with pytest.warns(SendframeWarning, match="unencrypted"):
        Client("http://api.example.com", "demo", PASSWORD).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Client("http://localhost:8080", "demo", PASSWORD).close()
        Client("http://[::1]:8080", "demo", PASSWORD).close()
        Client("https://api.example.com", "demo", PASSWORD).close()


def test_a_base_url_that_is_not_http_is_refused():
    with pytest.raises(ConfigurationError, match="not an http"):
        Client("ftp://example.com", "demo", PASSWORD)


def test_a_send_to_a_closed_port_is_retried_then_reported_as_not_sent():
    with (Client(f"http://127.0.0.1:{_closed_port()}", "demo", PASSWORD, retry=FAST) as client,
          pytest.raises(NotSentError) as caught):
        client.send_sms(SMS)
    assert "never sent" in str(caught.value)
    assert "3 attempts" in str(caught.value)
    assert PASSWORD not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_send_whose_connection_is_closed_after_writing_is_unknown_and_sent_once(hang_up):
    with Client(hang_up.url, "demo", PASSWORD, retry=FAST) as client, pytest.raises(UnknownOutcomeError) as caught:
        client.send_sms(SMS)
    assert "closed or reset after the request was sent" in caught.value.description
    assert hang_up.requests == 1
    assert PASSWORD not in str(caught.value)


def test_a_lookup_whose_connection_is_closed_is_retried(hang_up):
    with Client(hang_up.url, "demo", PASSWORD, retry=FAST) as client, pytest.raises(NotSentError):
        client.get_sms("ab" * 10)
    assert hang_up.requests == 3


def test_a_lookup_of_more_than_100_ids_is_refused_before_sending():
    with Client("http://127.0.0.1:9", "demo", PASSWORD) as client, pytest.raises(InputError, match="at most 100 ids"):
        client.get_sms([f"{i:020x}" for i in range(101)])


def test_an_invalid_dict_request_is_refused_before_sending():
    with Client("http://127.0.0.1:9", "demo", PASSWORD) as client, pytest.raises(InputError, match="from"):
        client.send_sms({"message": "Hi", "to": ["447700900001"]})


def test_the_async_client_reports_an_unknown_outcome_the_same_way(hang_up):
    async def main():
        async with AsyncClient(hang_up.url, "demo", PASSWORD, retry=FAST) as client:
            await client.send("sms", SMS)

    with pytest.raises(UnknownOutcomeError):
        asyncio.run(main())
    assert hang_up.requests == 1
