"""The request-building and answer-parsing layer shared by ``Client`` and ``AsyncClient``.

No I/O here. A call is described once (:class:`Call`); :func:`exchange` is a generator that yields
what to do next (:class:`Send` a request, or :class:`Sleep` before a retry) and receives what
happened (an ``httpx.Response`` or the transport exception). :func:`drive` steps through it once for
both clients, given how to send and sleep: the async client awaits its httpx transport and
``asyncio.sleep``, the sync client passes functions that block and runs the driver with :func:`run_blocking`.

For sends in bulk (a campaign's batches) a request can be validated and serialised once
(:class:`EncodedRequest`: the bytes checked are the bytes sent) and an answer read straight into
columns (:class:`SendAnswer`, with ``SendResponse``'s rules but no model per recipient).

    >>> config = WireConfig.resolve("http://127.0.0.1:8080", "demo", "demo-password")
    >>> config
    WireConfig(base_url='http://127.0.0.1:8080', username='demo', api_password=SecretStr('**********'))
"""

from __future__ import annotations

import base64
import functools
import hashlib
import inspect
import ipaddress
import json
import operator
import os
import re
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired
from urllib.parse import quote, urlsplit

import httpx
from pydantic import AwareDatetime, SecretStr, TypeAdapter
from pydantic_core import CoreConfig, SchemaValidator
from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict before Python 3.12

from sendframe.api import models
from sendframe.api.retry import RetryPolicy, decide_exception, decide_response, is_idempotent
from sendframe.channels import channel_name
from sendframe.errors import (
    ApiError,
    AuthenticationError,
    ConfigurationError,
    InputError,
    NotFoundError,
    NotSentError,
    SendframeWarning,
    UnknownOutcomeError,
)

ENV_BASE_URL = "SENDFRAME_BASE_URL"
ENV_USERNAME = "SENDFRAME_USERNAME"
ENV_API_PASSWORD = "SENDFRAME_API_PASSWORD"


NO_ANSWER = 0  # error code of a failure where the service gave no answer at all


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first caller outside sendframe."""
    here = inspect.currentframe()
    frame, level = (here.f_back if here is not None else None), 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("sendframe."):
        frame, level = frame.f_back, level + 1
    return level


def normalise_channel(channel: str) -> str:
    """The API's channel name for ``channel`` (accepts ``email``, ``voice_audio``, ...).

        >>> normalise_channel("email")
        'mailing'
    """
    return channel_name(channel)


def redact_url(url: object) -> str:
    """``url`` with any user information (``user:password@``) replaced by ``***``, for messages.

    Everything between ``//`` (or the start, without one) and the last ``@`` is hidden, so a password
    holding ``/``, ``#`` or ``@`` is hidden too.

        >>> redact_url("https://bob:pw@api.example.com/v1")
        'https://***@api.example.com/v1'
        >>> redact_url("https://api.example.com")
        'https://api.example.com'
    """
    text = str(url)
    at = text.rfind("@")
    if at < 0:
        return text
    slashes = text.find("//")
    start = slashes + 2 if 0 <= slashes < at else 0
    return f"{text[:start]}***{text[at:]}"


def _is_loopback(host: str) -> bool:
    if host in {"localhost", "localhost.localdomain"} or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class WireConfig:
    """Where the service is and who we are; the password is a ``SecretStr`` and never shown."""

    base_url: str
    username: str
    api_password: SecretStr
    timeout: float = field(default=30.0, repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy, repr=False)

    def __post_init__(self) -> None:
        given: object = self.api_password
        if not isinstance(given, SecretStr):  # built by hand with a plain str: hide it all the same
            object.__setattr__(self, "api_password", SecretStr(str(given)))

    def __repr__(self) -> str:  # written out so a base URL built by hand never shows its user information
        return (f"{type(self).__name__}(base_url={redact_url(self.base_url)!r}, username={self.username!r}, "
                f"api_password={self.api_password!r})")

    @classmethod
    def resolve(
        cls,
        base_url: str | None = None,
        username: str | None = None,
        api_password: str | SecretStr | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
    ) -> WireConfig:
        """Take each setting from the argument, else from its environment variable.

            >>> WireConfig.resolve("https://api.example.com/", "me", "pw").base_url
            'https://api.example.com'
        """
        base_url = base_url or os.environ.get(ENV_BASE_URL)
        username = username or os.environ.get(ENV_USERNAME)
        if api_password is None or api_password == "":
            api_password = os.environ.get(ENV_API_PASSWORD)
        for value, arg, env in ((base_url, "base_url", ENV_BASE_URL), (username, "username", ENV_USERNAME),
                                (api_password, "api_password", ENV_API_PASSWORD)):
            if not value:
                raise ConfigurationError(f"No {arg} given: pass {arg}=... or set the environment variable {env}.")
        shown = redact_url(base_url)  # the only form of the base URL any message may show
        try:
            parts = urlsplit(str(base_url))
            hostname, has_userinfo = parts.hostname, "@" in parts.netloc
        except ValueError:  # e.g. an unbalanced [ in the host: urllib's message is not needed
            raise ConfigurationError(f"The base URL {shown!r} cannot be read as an address such as "
                                     "https://api.example.com.") from None
        if has_userinfo or "@" in str(base_url):
            raise ConfigurationError(f"The base URL {shown!r} holds an @: credentials (user:password@) must not be "
                                     "in it; pass username= and api_password= (or the environment variables) instead.")
        if parts.scheme not in {"http", "https"} or not hostname:
            raise ConfigurationError(f"The base URL {shown!r} is not an http(s) address such as https://api.example.com.")
        if parts.scheme == "http" and not _is_loopback(hostname):
            warnings.warn(
                f"The base URL {shown} uses plain http to a host that is not this machine: "
                "the API password would travel unencrypted. Use https.",
                SendframeWarning,
                stacklevel=user_stacklevel(),
            )
        password = api_password if isinstance(api_password, SecretStr) else SecretStr(str(api_password))
        return cls(str(base_url).rstrip("/"), str(username), password, timeout, retry or RetryPolicy())

    def headers(self) -> dict[str, str]:
        """Headers every request carries, including Basic authentication."""
        token = f"{self.username}:{self.api_password.get_secret_value()}".encode()
        return {
            "Authorization": "Basic " + base64.b64encode(token).decode("ascii"),
            "Accept": "application/json",
            "User-Agent": "sendframe",
        }


@dataclass(frozen=True)
class Call:
    """One API call: method, path, JSON body (or its bytes, already encoded) and how to read a successful answer."""

    method: str
    path: str
    body: Any | None
    parse: Callable[[httpx.Response], Any]
    what: str
    encoded: bytes | None = None

    def content(self) -> bytes | None:
        if self.encoded is not None:
            return self.encoded
        if self.body is None:
            return None
        return json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class Send:
    """Step: send this request (driver answers with the response or the transport exception)."""

    method: str
    path: str
    content: bytes | None


@dataclass(frozen=True)
class Sleep:
    """Step: wait this many seconds before the next attempt."""

    seconds: float


def to_payload(channel: str, request: Any) -> dict[str, Any]:
    """The wire body for a send: a model's ``to_wire()``, or a dict validated through the models.

        >>> to_payload("sms", {"message": "Hi", "to": ["447700900001"], "from": "Shop"})["from"]
        'Shop'
    """
    if hasattr(request, "to_wire"):
        payload: dict[str, Any] = request.to_wire()
        return payload
    if isinstance(request, Mapping):
        return models.parse_request(channel, dict(request)).to_wire()
    raise InputError(f"A {channel} request must be a model or a dict, got {type(request).__name__}.")


def wire_json(model: Any) -> bytes:
    """A model's wire body as JSON bytes: ``to_wire()`` serialised by pydantic in one pass.

        >>> wire_json(models.OtpConfig(length=6))
        b'{"length":6}'
    """
    return model.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")  # type: ignore[no-any-return]


@dataclass(frozen=True)
class EncodedRequest:
    """A send request validated with the shared models and serialised once: the bytes checked are the bytes sent.

    Build it with :meth:`encode`; ``Client.send`` and ``AsyncClient.send`` take it like a model or a dict.

        >>> encoded = EncodedRequest.encode("sms", {"message": "Hi", "to": ["447700900001"], "from": "Shop"})
        >>> encoded.content
        b'{"to":["447700900001"],"message":"Hi","from":"Shop"}'
        >>> len(encoded.fingerprint)
        64
    """

    channel: str
    content: bytes = field(repr=False)

    @classmethod
    def encode(cls, channel: str, request: Any) -> EncodedRequest:
        """Validate ``request`` (a model or a dict) for ``channel`` and serialise its wire body."""
        channel = normalise_channel(channel)
        if isinstance(request, Mapping):
            request = models.parse_request(channel, dict(request))
        elif not hasattr(request, "to_wire"):
            raise InputError(f"A {channel} request must be a model or a dict, got {type(request).__name__}.")
        return cls(channel, wire_json(request))

    @property
    def fingerprint(self) -> str:
        """sha256 (hex) of the exact bytes sent."""
        return hashlib.sha256(self.content).hexdigest()

    def payload(self) -> dict[str, Any]:
        """The wire body as a dict (decoded from the bytes)."""
        return json.loads(self.content)  # type: ignore[no-any-return]


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def error_from_response(response: httpx.Response, what: str) -> ApiError:
    """Our exception for an error answer, carrying the service's code and description."""
    status = response.status_code
    body = _json_or_none(response)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        code, description = int(error["code"]), str(error.get("description", ""))
    else:
        code, description = status, f"HTTP {status} without an error object ({what})"
    if status in (401, 403):
        return AuthenticationError(code, description, status)
    if status == 404:
        return NotFoundError(code, description, status)
    if status == 429:
        return NotSentError(code, f"{description} (the service refused to process it; nothing was sent)", status)
    return ApiError(code, description, status)


def _parse_send(response: httpx.Response) -> Any:
    return models.SendResponse.model_validate_json(response.content)  # from the raw bytes: no json.loads pass


# ---------------------------------------------------------------- send answers as columns


class _LeanError(TypedDict):
    code: int
    description: str


# ResultItem's wire fields as plain dicts: pydantic checks this shape about three times faster than it builds
# a ResultItem per recipient (tests/api/test_models_responses.py holds the two field for field)
# functional syntax on purpose: under ``from __future__ import annotations`` the class syntax leaves NotRequired
# unread at class creation, and every key would count as required
_LeanItem = TypedDict("_LeanItem", {  # noqa: UP013
    "accepted": bool, "to": str, "id": NotRequired[str | None], "parts": NotRequired[int | None],
    "scheduledAt": NotRequired[AwareDatetime | None], "expiresAt": NotRequired[AwareDatetime | None],
    "error": NotRequired[_LeanError | None],
})


class _LeanSendResponse(TypedDict):
    campaignId: int
    sendingId: int
    result: list[_LeanItem]


@functools.cache
def _lean_send_response() -> Any:
    # pydantic caches JSON strings by default; an answer's values (ids, numbers) are all different, so only
    # its keys are worth caching: a third faster
    return SchemaValidator(TypeAdapter(_LeanSendResponse).core_schema, CoreConfig(cache_strings="keys"))


@dataclass(frozen=True)
class SendAnswer:
    """A send answer as columns: one list per result field, in request order (what a campaign's ledger keeps).

    Timestamps are text as ``SendResponse.to_wire()`` gives them (UTC, ``2026-11-21T09:30:00+00:00``).

        >>> answer = read_send_answer(b'{"campaignId": 1, "sendingId": 2, "result": [{"accepted": false, "to": "12", '
        ...                           b'"error": {"code": 102, "description": "not a valid phone number"}}]}')
        >>> answer.accepted, answer.id, answer.error_code
        ([False], [None], [102])
    """

    campaign_id: int
    sending_id: int
    accepted: list[bool]
    to: list[str]
    id: list[str | None]
    parts: list[int | None]
    scheduled_at: list[str | None]
    expires_at: list[str | None]
    error_code: list[int | None]
    error_description: list[str | None]


def read_send_answer(body: bytes | str) -> SendAnswer:
    """Validate a send answer's JSON (the rules of ``SendResponse``) straight into a :class:`SendAnswer`.

    Raises ``pydantic.ValidationError`` (a ``ValueError``) naming the field when the answer breaks the shape.

        >>> read_send_answer('{"campaignId": 1, "sendingId": 2, "result": []}').sending_id
        2
    """
    answer = _lean_send_response().validate_json(body)
    items = answer["result"]
    n = len(items)
    as_text = models.format_timestamp  # the one rule for writing a timestamp
    # the usual answer has every item with accepted, to, id and parts and nothing else: column by column at C speed
    usual = sum(map(len, items)) == 4 * n
    ids = _column(items, "id", usual)
    parts = _column(items, "parts", usual)
    if usual and (None in ids or None in parts):  # an item without id or parts holds another key instead
        usual, ids, parts = False, _column(items, "id", False), _column(items, "parts", False)
    nothing: list[Any] = [None] * n
    errors = nothing if usual else [item.get("error") for item in items]
    return SendAnswer(
        answer["campaignId"], answer["sendingId"],
        accepted=list(map(_ACCEPTED, items)),
        to=list(map(_TO, items)),
        id=ids,
        parts=parts,
        scheduled_at=nothing if usual else [None if (t := item.get("scheduledAt")) is None else as_text(t)
                                            for item in items],
        expires_at=nothing if usual else [None if (t := item.get("expiresAt")) is None else as_text(t)
                                          for item in items],
        error_code=nothing if usual else [None if error is None else error["code"] for error in errors],
        error_description=nothing if usual else [None if error is None else error["description"] for error in errors],
    )


_ACCEPTED, _TO = operator.itemgetter("accepted"), operator.itemgetter("to")


def _column(items: list[Any], key: str, every: bool) -> list[Any]:
    """``key`` of every item (None where absent); ``every``: try the C-speed path first."""
    if every:
        try:
            return list(map(operator.itemgetter(key), items))
        except KeyError:
            pass
    return [item.get(key) for item in items]


def send_answer(answer: Any) -> SendAnswer:
    """A :class:`SendAnswer` from a ``SendResponse``, a wire dict, or a ``SendAnswer`` (returned as is).

        >>> answer = {"campaignId": 1, "sendingId": 2, "result": [{"accepted": True, "to": "447700900001"}]}
        >>> send_answer(answer).accepted
        [True]
    """
    if isinstance(answer, SendAnswer):
        return answer
    if hasattr(answer, "to_wire"):
        return read_send_answer(wire_json(answer))
    if isinstance(answer, Mapping):
        return read_send_answer(json.dumps(answer, ensure_ascii=False, default=str))
    raise InputError(f"A send answer must be a SendResponse, a dict or a SendAnswer, got {type(answer).__name__}.")


def _parse_send_columns(response: httpx.Response) -> SendAnswer:
    return read_send_answer(response.content)


def _parse_lookup(response: httpx.Response) -> list[Any]:
    # validated straight from the raw bytes (pydantic's JSON parser): no json.loads and Python-dict pass first
    return list(models.LookupResponse.model_validate_json(response.content).data)


def _parse_otp(response: httpx.Response) -> Any:
    return models.OtpCheckResponse.model_validate(response.json()).data


def send_path(channel: str) -> str:
    """The path a send on ``channel`` is posted to (the clients', the sandbox's routes' and its OpenAPI's).

        >>> send_path("voiceAudio")
        '/api/rest/voiceAudio'
    """
    return f"/api/rest/{channel}"


def send_call(channel: str, request: Any, *, columns: bool = False) -> Call:
    """The call that sends ``request`` (a model, a dict or an :class:`EncodedRequest`) on ``channel``.

    Its answer is a ``SendResponse``, or with ``columns=True`` a :class:`SendAnswer`.

        >>> request = EncodedRequest.encode("sms", {"message": "Hi", "to": ["447700900001"], "from": "Shop"})
        >>> send_call("sms", request).path
        '/api/rest/sms'
    """
    channel = normalise_channel(channel)
    path, what = send_path(channel), f"send {channel}"
    parse = _parse_send_columns if columns else _parse_send
    if isinstance(request, EncodedRequest):
        if request.channel != channel:
            raise InputError(f"This request was encoded for {request.channel}, not {channel}.")
        return Call("POST", path, None, parse, what, encoded=request.content)
    return Call("POST", path, to_payload(channel, request), parse, what)


# ids that quote(i, safe="") leaves as they are (RFC 3986's unreserved characters), joined by commas
_UNRESERVED_LIST = re.compile(r"[A-Za-z0-9._~-]+(?:,[A-Za-z0-9._~-]+)*")


def lookup_call(ids: str | Iterable[str]) -> Call:
    """The call that looks up SMS records by id (one GET, at most 100 ids).

        >>> lookup_call(["a1", "b2"]).path
        '/api/rest/sms/a1,b2'
    """
    id_list = [ids] if isinstance(ids, str) else [str(i) for i in ids]
    id_list = [part for i in id_list for part in i.split(",") if part]
    if not id_list:
        raise InputError("get_sms needs at least one message id.")
    if len(id_list) > models.MAX_LOOKUP_IDS:
        raise InputError(f"get_sms takes at most {models.MAX_LOOKUP_IDS} ids per request, got {len(id_list)}; "
                         "use sendframe.fetch_records, which splits them.")
    joined = ",".join(id_list)
    if not _UNRESERVED_LIST.fullmatch(joined):  # quoted one by one only when some id needs it (ids are hex)
        joined = ",".join(quote(i, safe="") for i in id_list)
    return Call("GET", "/api/rest/sms/" + joined, None, _parse_lookup, "SMS lookup")


def otp_call(to: str, code: str, app_id: str = "") -> Call:
    """The call that checks an OTP code (POST /api/rest/otp/check)."""
    return Call("POST", "/api/rest/otp/check", {"to": to, "code": code, "appId": app_id}, _parse_otp, "OTP check")


def _first_problem(exc: ValueError) -> str:
    """Where and what the first problem of an unreadable answer is (pydantic's field path when it has one).

        >>> _first_problem(ValueError("Expecting value"))
        'ValueError: Expecting value'
    """
    errors = getattr(exc, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        return f"{'.'.join(map(str, first['loc'])) or 'the body'}: {first['msg']}"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"


def exchange(call: Call, policy: RetryPolicy) -> Generator[Send | Sleep, Any, Any]:
    """Drive one call through retries; yields steps, returns the parsed answer or raises.

    The driver sends back an ``httpx.Response`` or the exception raised by the transport.
    """
    content = call.content()
    attempt = 0
    while True:
        attempt += 1
        outcome = yield Send(call.method, call.path, content)
        if isinstance(outcome, BaseException):
            decision = decide_exception(call.method, outcome, attempt=attempt, policy=policy)
            if decision.action == "retry":
                yield Sleep(decision.delay)
                continue
            if decision.action == "unknown":
                raise UnknownOutcomeError(NO_ANSWER,
                                          f"{call.what}: {decision.reason}. Check before sending again.") from None
            raise NotSentError(NO_ANSWER, f"{call.what}: {decision.reason}.") from None
        response: httpx.Response = outcome
        decision = decide_response(call.method, response.status_code, attempt=attempt, policy=policy,
                                   retry_after=response.headers.get("Retry-After"))
        if decision.action == "retry":
            yield Sleep(decision.delay)
            continue
        if decision.action == "unknown":
            error = error_from_response(response, call.what)
            raise UnknownOutcomeError(error.code, f"{call.what}: {decision.reason} ({error.description})",
                                      response.status_code) from None
        if response.status_code >= 300:
            raise error_from_response(response, call.what) from None
        try:
            return call.parse(response)
        except ValueError as exc:  # pydantic.ValidationError and JSONDecodeError are ValueErrors
            problem = f"{call.what}: the answer could not be read ({_first_problem(exc)})"
            if not is_idempotent(call.method):  # the service took the send: which recipients it accepted is unknown
                raise UnknownOutcomeError(response.status_code, f"{problem}. Check before sending again.",
                                          response.status_code) from None
            raise ApiError(response.status_code, problem, response.status_code) from None


async def drive(call: Call, policy: RetryPolicy, send: Callable[[Send], Awaitable[httpx.Response]],
                sleep: Callable[[float], Awaitable[Any]]) -> Any:
    """Step one call through :func:`exchange`: ``send`` each request (its transport error is an answer too),
    ``sleep`` before each retry; returns the parsed answer or raises. The one loop of both clients.

        >>> async def send(step):
        ...     return httpx.Response(200, json={"ok": True})
        >>> run_blocking(drive(Call("GET", "/x", None, lambda r: r.json(), "a lookup"), RetryPolicy(), send, None))
        {'ok': True}
    """
    steps = exchange(call, policy)
    outcome: Any = None
    while True:
        try:
            step = steps.send(outcome)
        except StopIteration as done:
            return done.value
        if isinstance(step, Sleep):
            outcome = await sleep(step.seconds)
            continue
        try:
            outcome = await send(step)
        except httpx.TransportError as exc:
            outcome = exc


def run_blocking(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """The value of a coroutine that never suspends: :func:`drive` given functions that block (the sync client).

        >>> async def two():
        ...     return 2
        >>> run_blocking(two())
        2
    """
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("run_blocking: the coroutine awaited real asynchronous I/O; await it in an event loop instead")
