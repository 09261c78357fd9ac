"""The sandbox's HTTP plumbing, shared by every route module: error answers, authentication, reading and
decoding bodies (off the event loop when they are large), the guard around routes, and who may use the
control surface.

Starlette style: this module imports no route module. The route modules (:mod:`~sendframe.sandbox.app`,
:mod:`~sendframe.sandbox.otp`, :mod:`~sendframe.sandbox.links`, :mod:`~sendframe.sandbox.control`) import
it, and ``app`` assembles the route table. A route refuses a request by raising
:class:`~sendframe.errors.ApiError` (code, description, HTTP status): the same error the client raises
when it reads the answer. Every failure is answered ``{"error": {"code", "description"}}``
(docs/api-notes.md), never a bare 500; a body problem is a 400 naming the field.

    @guarded
    async def route(request):
        account = await authenticate(request)
        body = await read_json(request)          # decoded by the shared rule, off the loop when large
        ...
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from sendframe.api.validation import decode_json, describe_problems, error_code, printable
from sendframe.errors import ApiError, ErrorCode, RequestValidationError, full_disk_error
from sendframe.sandbox.accounts import Account, check_credentials
from sendframe.sandbox.store import FULL_DISK_ADVICE

__all__ = [
    "EXCEPTION_HANDLERS",
    "MAX_BODY_BYTES",
    "OFF_LOOP_BYTES",
    "account_of",
    "authenticate",
    "client_gone",
    "control_access",
    "error_response",
    "guarded",
    "off_loop",
    "read_body",
    "read_json",
]

log = logging.getLogger("sendframe.sandbox")

MAX_BODY_BYTES = 10 * 1024 * 1024
# bodies larger than this are decoded, validated and worked on in a thread, so other clients are not kept
# waiting; smaller ones are faster on the event loop (a thread hop costs more than decoding them)
OFF_LOOP_BYTES = 256 * 1024
_CHALLENGE = {"WWW-Authenticate": 'Basic realm="sendframe"'}
T = TypeVar("T")


def error_response(status: int, code: int, description: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The error object answer ``{"error": {"code", "description"}}`` (a 401 carries the Basic challenge).

        >>> error_response(404, 404, "No message with id x.").status_code
        404
    """
    if status == 401:
        headers = {**_CHALLENGE, **(headers or {})}
    return JSONResponse({"error": {"code": int(code), "description": printable(description)}}, status_code=status,
                        headers=headers)


def _unauthorized(description: str) -> ApiError:
    return ApiError(ErrorCode.UNAUTHORIZED, description, 401)


async def account_of(request: Request, channel: str | None = None) -> Account:
    """The authenticated account of ``request`` (Basic auth, registered IP, enabled channel); raises
    :class:`ApiError`."""
    state = request.app.state.sandbox
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        raise _unauthorized("Missing credentials: send the header Authorization: Basic base64(username:apiPassword).")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise _unauthorized("Malformed Authorization header: the credentials must be base64 of "
                            "username:apiPassword.") from None
    username, _, password = decoded.partition(":")
    account = check_credentials(state.accounts, username, password)
    if account is None:
        raise _unauthorized("Wrong username or API password.")
    host = request.client.host if request.client else ""
    if host not in account.ips:
        raise ApiError(ErrorCode.IP_NOT_ALLOWED, f"The IP address {host or '(unknown)'} is not registered for account "
                       f"{account.username}; register it in the platform (sandbox: --ip).", 403)
    if channel is not None and not account.allows(channel):
        raise ApiError(ErrorCode.CHANNEL_NOT_ENABLED, f"The channel {channel} is not enabled for account "
                       f"{account.username}; channels other than sms are enabled by the sales team "
                       f"(sandbox: --account USER:PASSWORD:{channel}).", 403)
    return account


async def authenticate(request: Request, channel: str | None = None) -> str:
    """The username of the authenticated account of ``request``; raises :class:`ApiError` (answered as an error object).

        account = await authenticate(request)        # in a route of another sandbox module
    """
    return (await account_of(request, channel)).username


async def read_body(request: Request) -> bytes:
    """The raw body (at most 10 MiB); raises :class:`ApiError` 413 beyond that."""
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise ApiError(ErrorCode.TOO_LARGE, f"The request body is {int(length)} bytes; the limit is {MAX_BODY_BYTES} "
                       "(10 MiB).", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(ErrorCode.TOO_LARGE, f"The request body is larger than {MAX_BODY_BYTES} bytes (10 MiB).",
                           413)
        chunks.append(chunk)
    return b"".join(chunks)


async def off_loop(size: int, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, in a worker thread when ``size`` (the body's bytes) is over :data:`OFF_LOOP_BYTES`,
    so a large body does not keep other clients waiting; inline otherwise."""
    if size <= OFF_LOOP_BYTES:
        return function(*args)
    return await anyio.to_thread.run_sync(functools.partial(function, *args))


async def read_json(request: Request) -> Any:
    """The body decoded by the shared rule (:func:`sendframe.api.validation.decode_json`: JSON, at most 32
    levels deep, numbers within ±(2**53 - 1), Unicode text), off the event loop when large. Raises
    :class:`ApiError` 413, or ``RequestValidationError`` naming the field (answered 400, code 100)."""
    raw = await read_body(request)
    return await off_loop(len(raw), decode_json, raw)


# ---------------------------------------------------------------- the control surface

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
_JSON_TYPE = re.compile(r"application/json\s*(;.*)?", re.IGNORECASE | re.DOTALL)


def _is_loopback(host: str) -> bool:
    host = host.strip().lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str:
    """The host of a ``Host`` header value (``127.0.0.1:8080``, ``[::1]:8080``, ``localhost``), or ``""``."""
    try:
        return urlsplit("//" + host_header).hostname or ""
    except ValueError:
        return ""


def control_access(request: Request, *, mutation: bool) -> None:
    """Refuse a request to the control surface unless it comes from the analyst's own machine, addressed to
    the sandbox by a loopback name, and not from a web page of another origin (docs/sandbox.md, threat model):

    - the peer is a loopback address (else 404, as if the surface did not exist);
    - ``Host`` is a loopback name or address (``127.0.0.1``, ``localhost``, ``[::1]``): a page that rebinds
      its own DNS name to 127.0.0.1 sends its own name (403);
    - no foreign ``Origin`` (a page of another origin, or an opaque one such as a sandboxed landing page,
      ``Origin: null``) and no ``Sec-Fetch-Site`` other than ``same-origin`` / ``none`` (403);
    - a mutation (``POST``) carries ``Content-Type: application/json``, which neither a form nor a simple
      cross-origin request can send (415).
    """
    peer = request.client.host if request.client else ""
    if not _is_loopback(peer):
        raise ApiError(ErrorCode.NOT_FOUND, f"Resource not found: {request.url.path}", 404)
    host_header = request.headers.get("host", "")
    host = _host_name(host_header)
    if not _is_loopback(host):
        raise ApiError(ErrorCode.IP_NOT_ALLOWED, f"The control surface answers only requests addressed to a loopback "
                       f"name of the sandbox (127.0.0.1, localhost, [::1]), not to {host_header[:100]!r}.", 403)
    origin = request.headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin) if origin != "null" else None
        own = parts is not None and parts.scheme in ("http", "https") and _is_loopback(parts.hostname or "") \
            and parts.netloc.lower() == host_header.strip().lower()
        if not own:
            raise ApiError(ErrorCode.IP_NOT_ALLOWED, f"The control surface does not answer web pages of another origin "
                           f"(Origin {origin[:100]!r}).", 403)
    site = request.headers.get("sec-fetch-site")
    if site is not None and site.lower() not in ("same-origin", "none"):
        raise ApiError(ErrorCode.IP_NOT_ALLOWED, f"The control surface does not answer requests a web page makes for "
                       f"another site (Sec-Fetch-Site {site[:40]!r}).", 403)
    if mutation and not _JSON_TYPE.fullmatch(request.headers.get("content-type", "").strip()):
        raise ApiError(ErrorCode.INVALID_REQUEST, "The control surface takes JSON bodies only: send "
                       "Content-Type: application/json and a JSON object ({} when there is nothing to say).", 415)


# ---------------------------------------------------------------- answering failures


def client_gone(request: Request) -> Response:
    """The answer to a client that disconnected mid-request (a kill-and-resume drill does it on purpose):
    an expected event, logged at debug level without a traceback. Nothing was stored; nobody reads the answer."""
    log.debug("client disconnected during %s %s before its request was complete; nothing was done",
              request.method, request.url.path)
    return error_response(400, ErrorCode.INVALID_REQUEST, "The client disconnected before the request was complete.")


def _refusal(exc: ApiError) -> Response:
    return error_response(exc.status or 400, exc.code, exc.description)


def _server_error(request: Request, exc: BaseException) -> Response:
    state = getattr(request.app.state, "sandbox", None)
    full = full_disk_error(exc, state.db_path, FULL_DISK_ADVICE) if state is not None else None
    if full is not None:  # the transaction was rolled back: nothing of the request is stored or will be sent
        log.error("%s %s: %s", request.method, request.url.path, full)
        return error_response(507, ErrorCode.INSUFFICIENT_STORAGE, "The sandbox's disk is full: nothing of this "
                              "request was stored or will be sent; send it again later.")
    log.error("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, ErrorCode.SERVER_ERROR, "The sandbox failed unexpectedly; the error is in its log.")


def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a route so every failure is answered with an error object (unexpected ones logged, 500)."""

    @functools.wraps(handler)
    async def route(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return _refusal(exc)
        except RequestValidationError as exc:
            return error_response(400, error_code(exc.problems), describe_problems(exc.problems))
        except ClientDisconnect:
            return client_gone(request)
        except Exception as exc:
            return _server_error(request, exc)

    return route


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = {404: f"Resource not found: {request.url.path}",
              405: f"Method {request.method} is not allowed on {request.url.path}"}
    return error_response(status, status, detail.get(status, str(getattr(exc, "detail", "")) or "HTTP error"),
                          getattr(exc, "headers", None))


async def _api_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ApiError):
        return _refusal(exc)
    return _server_error(request, exc)


async def _unexpected(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientDisconnect):
        return client_gone(request)
    return _server_error(request, exc)


# the app's handlers: an ApiError raised outside a guarded route, Starlette's 404/405, anything else
EXCEPTION_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected}
