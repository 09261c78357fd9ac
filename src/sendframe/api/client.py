"""``Client`` and ``AsyncClient``: one method per endpoint of the spec, over httpx.

Both drive the same calls of :mod:`sendframe.api.wire`; only the transport differs.

    >>> from sendframe import Client
    >>> with Client("http://127.0.0.1:8080", "demo", "demo-password") as client:  # doctest: +SKIP
    ...     answer = client.send_sms({"message": "Hi", "to": ["447700900001"], "from": "Shop"})
    ...     answer.result[0].accepted
    True

Credentials may come from ``SENDFRAME_BASE_URL``, ``SENDFRAME_USERNAME`` and
``SENDFRAME_API_PASSWORD``. The password is kept as a ``SecretStr`` and never appears in a repr,
a log line or an exception. A 207 is a result, not an exception; errors are raised as the
classes of :mod:`sendframe.errors`; a send whose fate is unknown raises
``UnknownOutcomeError`` and is never re-sent automatically (see :mod:`sendframe.api.retry`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpx
from pydantic import SecretStr

from sendframe.api import wire
from sendframe.api.retry import RetryPolicy
from sendframe.api.wire import WireConfig
from sendframe.errors import NotSentError, SendframeWarning

__all__ = ["AsyncClient", "Client", "NotSentError", "RetryPolicy", "SendframeWarning"]


class _Base:
    """What both clients share: configuration, repr and the method of each endpoint.

    Each endpoint's method builds its call (:mod:`sendframe.api.wire`) and hands it to ``_run``, the one part
    that differs: both step it through :func:`~sendframe.api.wire.drive`; :class:`Client` with blocking I/O,
    returning the answer, :class:`AsyncClient` returning the coroutine.
    """

    config: WireConfig
    _http: httpx.Client | httpx.AsyncClient

    def __init__(self, base_url: str | None = None, username: str | None = None,
                 api_password: str | SecretStr | None = None, *, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, config: WireConfig | None = None,
                 limits: httpx.Limits | None = None) -> None:
        self.config = config or WireConfig.resolve(base_url, username, api_password, timeout=timeout, retry=retry)
        self._connect(limits or _POOL_LIMITS)

    def _connect(self, limits: httpx.Limits) -> None:
        raise NotImplementedError

    def _run(self, call: wire.Call) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        base_url = wire.redact_url(self.config.base_url)
        return f"{type(self).__name__}(base_url={base_url!r}, username={self.config.username!r})"

    def _http_options(self) -> dict[str, Any]:
        return {
            "base_url": self.config.base_url,
            "headers": self.config.headers(),
            "timeout": httpx.Timeout(self.config.timeout, connect=min(10.0, self.config.timeout)),
            "follow_redirects": False,
            "trust_env": False,
        }

    def _build_request(self, step: wire.Send) -> httpx.Request:
        """The request of a step (base URL, headers, timeouts applied).

        It goes straight to the transport: httpx's client layer (auth flow, redirects, cookies, event
        hooks) has nothing to do for this API and costs about a third of each exchange.
        """
        headers = {"Content-Type": "application/json"} if step.content else None
        # the URL made whole here, once: given a path, httpx parses it, then the URL it makes of the base and the
        # path, checking each character both times in Python (a lookup's path has about 2,000)
        base = self._http.base_url
        url = base.copy_with(raw_path=base.raw_path + step.path.lstrip("/").encode("ascii"))
        return self._http.build_request(step.method, url, content=step.content, headers=headers)

    # ------------------------------------------------------------------ the endpoints

    def send(self, channel: str, request: Any) -> Any:
        """Send ``request`` (a model, a dict or a ``wire.EncodedRequest``) on ``channel``; returns the ``SendResponse``.

            >>> client.send("sms", {"message": "Hi", "to": ["447700900001"], "from": "Shop"})  # doctest: +SKIP
        """
        return self._run(wire.send_call(channel, request))

    def send_columns(self, channel: str, request: Any) -> Any:
        """Like ``send``, but the answer comes as columns (a ``wire.SendAnswer``), no model per recipient.

            >>> request = {"message": "Hi", "to": ["447700900001"], "from": "Shop"}
            >>> client.send_columns("sms", request).accepted  # doctest: +SKIP
            [True]
        """
        return self._run(wire.send_call(channel, request, columns=True))

    def send_sms(self, request: Any) -> Any:
        """POST /api/rest/sms. ``client.send_sms({"message": "Hi", "to": [...], "from": "Shop"})``"""
        return self.send("sms", request)

    def send_mailing(self, request: Any) -> Any:
        """POST /api/rest/mailing. ``client.send_mailing({"to": [...], "subject": ..., "body": ..., ...})``"""
        return self.send("mailing", request)

    def send_voice(self, request: Any) -> Any:
        """POST /api/rest/voice.

        ``client.send_voice({"message": ..., "to": [...], "language": "en_GB", "gender": "F"})``
        """
        return self.send("voice", request)

    def send_voice_audio(self, request: Any) -> Any:
        """POST /api/rest/voiceAudio. ``client.send_voice_audio({"to": [...], "audioUrl": "https://..."})``"""
        return self.send("voiceAudio", request)

    def send_landingsms(self, request: Any) -> Any:
        """POST /api/rest/landingsms.

        ``client.send_landingsms({"message": "{LAND_URL}", ..., "templateBody": "<p>Hi</p>"})``
        """
        return self.send("landingsms", request)

    def send_whatsapp(self, request: Any) -> Any:
        """POST /api/rest/whatsapp. ``client.send_whatsapp({"templateId": 1, "from": ..., "messages": [...]})``"""
        return self.send("whatsapp", request)

    def get_sms(self, ids: str | Iterable[str]) -> Any:
        """Look up SMS records (one GET, at most 100 ids): a list of ``SmsRecord``; ``NotFoundError`` when none is
        known.

            >>> client.get_sms(["3f2a..."])  # doctest: +SKIP
        """
        return self._run(wire.lookup_call(ids))

    def check_otp(self, to: str, code: str, app_id: str = "") -> Any:
        """Check an OTP code; returns the ``OtpCheckResult``. ``client.check_otp("447700900001", "1234")``"""
        return self._run(wire.otp_call(to, code, app_id))


# httpx's own default pool; the clients hold their transport, as they send through it directly
_POOL_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


async def _sleep_blocking(seconds: float) -> None:
    time.sleep(seconds)


def _content(response: httpx.Response) -> bytes:
    return response.content


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default verification (certifi's authorities), built once: it takes tens of milliseconds."""
    return httpx.create_ssl_context(trust_env=False)


class Client(_Base):
    """Synchronous client of the messaging API.

        >>> client = Client("http://127.0.0.1:8080", "demo", "secret")
        >>> client
        Client(base_url='http://127.0.0.1:8080', username='demo')
        >>> client.close()
    """

    _http: httpx.Client

    def _connect(self, limits: httpx.Limits) -> None:
        self._transport = httpx.HTTPTransport(verify=_ssl_context(), limits=limits, trust_env=False)
        self._http = httpx.Client(transport=self._transport, **self._http_options())

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def _run(self, call: wire.Call) -> Any:
        return wire.run_blocking(wire.drive(call, self.config.retry, self._send_blocking, _sleep_blocking))

    async def _send_blocking(self, step: wire.Send) -> httpx.Response:  # never suspends: see wire.run_blocking
        request = self._build_request(step)
        response = self._transport.handle_request(request)
        response.request = request  # as httpx's client sets it: a response knows what it answers
        response.read()  # on a failed read httpcore closes the response and gives the connection back
        return response

    def get_sms_body(self, ids: str | Iterable[str]) -> bytes:
        """``get_sms``'s lookup (the same retries and errors), its answer left as the JSON bytes
        (``{"data": [...]}``) for readers that parse many answers at once (:func:`sendframe.fetch_records`).

            >>> client.get_sms_body(["3f2a..."])[:9]  # doctest: +SKIP
            b'{"data":['
        """
        body: bytes = self._run(dataclasses.replace(wire.lookup_call(ids), parse=_content))
        return body


class AsyncClient(_Base):
    """Asynchronous client: the same methods as :class:`Client`, awaited.

        >>> async def main():  # doctest: +SKIP
        ...     async with AsyncClient() as client:
        ...         return await client.send_sms({"message": "Hi", "to": ["447700900001"], "from": "Shop"})
    """

    _http: httpx.AsyncClient

    def _connect(self, limits: httpx.Limits) -> None:
        self._transport = httpx.AsyncHTTPTransport(verify=_ssl_context(), limits=limits, trust_env=False)
        self._http = httpx.AsyncClient(transport=self._transport, **self._http_options())

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    def _run(self, call: wire.Call) -> Any:
        return wire.drive(call, self.config.retry, self._send, asyncio.sleep)  # a coroutine, awaited by the caller

    async def _send(self, step: wire.Send) -> httpx.Response:
        request = self._build_request(step)
        response = await self._transport.handle_async_request(request)
        response.request = request  # as httpx's client sets it: a response knows what it answers
        await response.aread()
        return response
