"""The API password and a base URL's user information never show in a repr, an exception, a warning or a log line.

Every error path we can provoke is driven with recognisable secrets (a bad URL, a bad scheme, a 401 from the
sandbox, an unknown outcome, a refused connection, with both clients), logging at DEBUG, and every text they
leave behind is searched for the secrets.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import socket
import traceback
import warnings

import pytest

from sendframe.api.client import AsyncClient, Client, RetryPolicy
from sendframe.api.wire import WireConfig, redact_url
from sendframe.errors import AuthenticationError, ConfigurationError, NotSentError, SendframeError, UnknownOutcomeError
from sendframe.sandbox import Sandbox

PASSWORD = "Zq9SECRETpw7731"  # the account's real API password
WRONG = "Wr0ngSECRETpw5518"  # a wrong one, sent to the sandbox to get a 401
URL_PASSWORD = "URLSECRETpw4242"  # a password written into a base URL
FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01)
SMS = {"message": "Hi", "to": ["447700900001"], "from": "Shop"}
SECRETS = (PASSWORD, WRONG, URL_PASSWORD,
           *(base64.b64encode(f"secretive:{p}".encode()).decode() for p in (PASSWORD, WRONG)))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _texts_of(exc: BaseException) -> list[str]:
    texts = [str(exc), repr(exc), *map(str, exc.args), "".join(traceback.format_exception(exc))]
    texts += [str(getattr(exc, name, "")) for name in ("description", "code", "status")]
    return texts


def _assert_no_secret(texts: list[str]) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked in: {text[:300]!r}"


@pytest.fixture
def seen(caplog):
    """Everything shown: texts the test adds, plus every log record at DEBUG and every warning."""
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield texts
    texts += [str(w.message) for w in caught]
    texts += [record.getMessage() for record in caplog.records]
    texts += [caplog.text]
    _assert_no_secret(texts)


@pytest.mark.parametrize("url", [
    f"htps://bob:{URL_PASSWORD}@api.example.com",  # a bad scheme checked before the credentials
    f"https://bob:{URL_PASSWORD}@api.example.com",
    f"ftp://bob:{URL_PASSWORD}@api.example.com",
    f"https://bob:{URL_PASSWORD}/x@api.example.com",  # a / in the password: urllib sees a port and a path
    f"https://bob:{URL_PASSWORD}#@api.example.com",
    f"bob:{URL_PASSWORD}@api.example.com",  # no scheme at all
    f"http://[bob:{URL_PASSWORD}@api.example.com",  # unreadable
    f"http://bob:{URL_PASSWORD}@api.example.com",  # plain http to a remote host (would warn)
])
def test_a_base_url_with_credentials_is_refused_without_showing_them(url, seen):
    for client_class in (Client, AsyncClient):
        with pytest.raises(ConfigurationError) as caught:
            client_class(url, "bob", PASSWORD)
        seen += _texts_of(caught.value)
        assert "***@" in str(caught.value)
    with pytest.raises(ConfigurationError) as caught:
        WireConfig.resolve(url, "bob", PASSWORD)
    seen += _texts_of(caught.value)


def test_a_base_url_that_is_not_http_is_refused_without_the_password(seen):
    with pytest.raises(ConfigurationError, match="not an http") as caught:
        Client("ftp://files.example.com", "demo", PASSWORD)
    seen += _texts_of(caught.value)


def test_a_hand_built_config_redacts_its_base_url_in_reprs(seen):
    config = WireConfig(f"https://bob:{URL_PASSWORD}@api.example.com", "bob", PASSWORD)  # type: ignore[arg-type]
    seen += [repr(config), str(config)]
    assert "***@api.example.com" in repr(config)


def test_redact_url_hides_everything_up_to_the_last_at():
    assert redact_url("https://a:b@c@host/p") == "https://***@host/p"
    assert redact_url("https://host/p") == "https://host/p"


def test_a_refused_connection_leaves_no_password_anywhere(seen):
    url = f"http://127.0.0.1:{_closed_port()}"
    with Client(url, "secretive", PASSWORD, retry=FAST) as client:
        seen += [repr(client), str(client), repr(client.config), str(client.config)]
        for call in (lambda: client.send_sms(SMS), lambda: client.get_sms(["ab" * 10])):
            with pytest.raises(NotSentError) as caught:
                call()
            seen += _texts_of(caught.value)

    async def main() -> None:
        async with AsyncClient(url, "secretive", PASSWORD, retry=FAST) as client:
            seen.extend([repr(client), str(client)])
            await client.send_sms(SMS)

    with pytest.raises(NotSentError) as caught:
        asyncio.run(main())
    seen += _texts_of(caught.value)


def test_answers_from_the_sandbox_leave_no_password_anywhere(seen):
    with Sandbox(accounts=[f"secretive:{PASSWORD}:sms"]) as sb:
        with Client(sb.base_url, "secretive", PASSWORD, retry=FAST, timeout=10) as client:
            seen += [repr(client), str(client), repr(client.config)]
            seen += [repr(client.send_sms(SMS))]  # a successful exchange, logged at DEBUG
            sb.faults(status=500, rate=1.0)
            with pytest.raises(UnknownOutcomeError) as caught:
                client.send_sms(SMS)
            seen += _texts_of(caught.value)
            sb.clear_faults()
        with Client(sb.base_url, "secretive", WRONG, retry=FAST) as wrong:
            seen += [repr(wrong)]
            with pytest.raises(AuthenticationError) as caught:
                wrong.send_sms(SMS)
            seen += _texts_of(caught.value)
            assert caught.value.status == 401

        async def main() -> None:
            async with AsyncClient(sb.base_url, "secretive", WRONG, retry=FAST) as client:
                await client.send_sms(SMS)

        with pytest.raises(SendframeError) as caught:
            asyncio.run(main())
        seen += _texts_of(caught.value)
