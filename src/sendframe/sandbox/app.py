"""The sandbox's HTTP layer: send endpoints, SMS lookup, authentication and error answers.

Routes translate HTTP into calls on :mod:`sendframe.sandbox.sending` and :mod:`sendframe.sandbox.store`;
every failure becomes ``{"error": {"code", "description"}}`` (docs/api-notes.md), never a bare 500.

    app = build_app(SandboxState.create(clock="manual"))   # an ASGI app for uvicorn
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sendframe.errors import ErrorCode, RequestValidationError
from sendframe.api.models import CHANNELS, MAX_LOOKUP_IDS
from sendframe.api.validation import describe_problems, error_code
from sendframe.sandbox import sending, store
from sendframe.sandbox.accounts import Account, check_credentials
from sendframe.sandbox.sending import Rejection

__all__ = ["MAX_BODY_BYTES", "Rejection", "authenticate", "build_app", "client_gone", "error_response"]

log = logging.getLogger("sendframe.sandbox")

MAX_BODY_BYTES = 10 * 1024 * 1024
_CHALLENGE = {"WWW-Authenticate": 'Basic realm="sendframe"'}


def error_response(status: int, code: int, description: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The error object answer ``{"error": {"code", "description"}}``.

        >>> error_response(404, 404, "No message with id x.").status_code
        404
    """
    return JSONResponse({"error": {"code": int(code), "description": description}}, status_code=status, headers=headers)


def _unauthorized(description: str) -> Rejection:
    return Rejection(401, ErrorCode.UNAUTHORIZED, description, dict(_CHALLENGE))


async def account_of(request: Request, channel: str | None = None) -> Account:
    """The authenticated account of ``request`` (Basic auth, registered IP, enabled channel); raises :class:`Rejection`."""
    state = request.app.state.sandbox
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        raise _unauthorized("Missing credentials: send the header Authorization: Basic base64(username:apiPassword).")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise _unauthorized("Malformed Authorization header: the credentials must be base64 of username:apiPassword.") from None
    username, _, password = decoded.partition(":")
    account = check_credentials(state.accounts, username, password)
    if account is None:
        raise _unauthorized("Wrong username or API password.")
    host = request.client.host if request.client else ""
    if host not in account.ips:
        raise Rejection(403, ErrorCode.IP_NOT_ALLOWED, f"The IP address {host or '(unknown)'} is not registered for account "
                        f"{account.username}; register it in the platform (sandbox: --ip).")
    if channel is not None and not account.allows(channel):
        raise Rejection(403, ErrorCode.CHANNEL_NOT_ENABLED, f"The channel {channel} is not enabled for account "
                        f"{account.username}; channels other than sms are enabled by the sales team (sandbox: --account USER:PASSWORD:{channel}).")
    return account


async def authenticate(request: Request, channel: str | None = None) -> str:
    """The username of the authenticated account of ``request``; raises :class:`Rejection` (answered as an error object).

        account = await authenticate(request)        # in a route of another sandbox module
    """
    return (await account_of(request, channel)).username


async def read_json(request: Request) -> Any:
    """The decoded JSON body (at most 10 MiB); raises :class:`Rejection` with code 413 or 100."""
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise Rejection(413, ErrorCode.TOO_LARGE, f"The request body is {int(length)} bytes; the limit is {MAX_BODY_BYTES} (10 MiB).")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise Rejection(413, ErrorCode.TOO_LARGE, f"The request body is larger than {MAX_BODY_BYTES} bytes (10 MiB).")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise Rejection(400, ErrorCode.INVALID_REQUEST, "The request body is empty; send a JSON object.")
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise Rejection(400, ErrorCode.INVALID_REQUEST, "The request body is not UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise Rejection(400, ErrorCode.INVALID_REQUEST, f"The request body is not valid JSON: {exc.msg} "
                        f"(line {exc.lineno}, column {exc.colno}).") from None


def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a route so every failure is answered with an error object (unexpected ones logged, 500)."""

    @functools.wraps(handler)
    async def route(request: Request) -> Response:
        try:
            return await handler(request)
        except Rejection as exc:
            return error_response(exc.status, exc.code, exc.description, exc.headers)
        except RequestValidationError as exc:
            return error_response(400, error_code(exc.problems), describe_problems(exc.problems))
        except ClientDisconnect:
            return client_gone(request)
        except Exception:
            log.exception("unexpected error in %s %s", request.method, request.url.path)
            return error_response(500, ErrorCode.SERVER_ERROR, "The sandbox failed unexpectedly; the error is in its log.")

    return route


def _send_route(channel: str) -> Callable[[Request], Awaitable[Response]]:
    async def send(request: Request) -> Response:
        request.app.state.sandbox.last_send = time.monotonic()  # the worker defers to a busy API (worker.BUSY_WINDOW)
        account = await account_of(request, channel)
        payload = await read_json(request)
        status, body = sending.accept(request.app.state.sandbox, account, channel, payload)
        # orjson: the answer carries one item per recipient, and the standard encoder costs more than storing them
        return Response(orjson.dumps(body), status_code=status, media_type="application/json")

    send.__name__ = f"send_{channel}"
    return guarded(send)


@guarded
async def lookup(request: Request) -> Response:
    """``GET /api/rest/sms/<id>[,<id>...]``: the SMS and landing SMS records of the known ids."""
    account = await account_of(request)
    ids = [i.strip() for i in request.path_params["ids"].split(",") if i.strip()]
    if not ids:
        raise Rejection(400, ErrorCode.INVALID_REQUEST, "Give at least one message id: /api/rest/sms/<id>[,<id>...].")
    if len(ids) > MAX_LOOKUP_IDS:
        raise Rejection(400, ErrorCode.TOO_MANY_RECIPIENTS, f"At most {MAX_LOOKUP_IDS} ids per lookup (got {len(ids)}); ask in chunks of {MAX_LOOKUP_IDS}.")
    state = request.app.state.sandbox
    records = store.lookup_records(state.db, account.username, ids, state.public_url.rstrip("/"))
    if not records:
        shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
        raise Rejection(404, ErrorCode.NOT_FOUND, f"Resource not found: no SMS message with id {shown} for this account.")
    # the records come as JSON text from the store: joined, not parsed and dumped again
    return Response("".join(('{"data":[', ",".join(records), "]}")), media_type="application/json")


@guarded
async def openapi_json(request: Request) -> Response:
    """``GET /openapi.json``: the OpenAPI document of this sandbox."""
    from sendframe.sandbox import openapi

    return JSONResponse(openapi.document(request.app.state.sandbox.public_url))


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = {404: f"Resource not found: {request.url.path}", 405: f"Method {request.method} is not allowed on {request.url.path}"}
    return error_response(status, status, detail.get(status, str(getattr(exc, "detail", "")) or "HTTP error"),
                          getattr(exc, "headers", None))


async def _rejection(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Rejection)  # noqa: S101 - registered for Rejection only
    return error_response(exc.status, exc.code, exc.description, exc.headers)


def client_gone(request: Request) -> Response:
    """The answer to a client that disconnected mid-request (a kill-and-resume drill does it on purpose):
    an expected event, logged at debug level without a traceback. Nothing was stored; nobody reads the answer."""
    log.debug("client disconnected during %s %s before its request was complete; nothing was done",
              request.method, request.url.path)
    return error_response(400, ErrorCode.INVALID_REQUEST, "The client disconnected before the request was complete.")


async def _unexpected(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientDisconnect):
        return client_gone(request)
    log.error("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, ErrorCode.SERVER_ERROR, "The sandbox failed unexpectedly; the error is in its log.")


def routes() -> list[BaseRoute]:
    """Every route of the sandbox: ours, the pages' (OTP, links) and the control surface."""
    from sendframe.sandbox import control, links, otp

    ours: list[BaseRoute] = [Route(f"/api/rest/{c}", _send_route(c), methods=["POST"]) for c in CHANNELS]
    ours += [Route("/api/rest/sms/{ids}", lookup, methods=["GET"]), Route("/openapi.json", openapi_json, methods=["GET"])]
    return [*ours, *otp.routes(), *links.routes(), *control.routes()]


def build_app(state: Any) -> Any:
    """The ASGI app of a sandbox over ``state``: Starlette routes, the worker in its lifespan, fault injection outside.

        app = build_app(SandboxState.create())
    """
    from sendframe.sandbox.control import FaultInjector
    from sendframe.sandbox.worker import Worker

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        worker = Worker(state)
        await worker.start()
        try:
            yield
        finally:
            await worker.stop()
            with contextlib.suppress(Exception):
                await state.notifier.aclose()

    app = Starlette(routes=routes(), lifespan=lifespan,
                    exception_handlers={Rejection: _rejection, HTTPException: _http_error, Exception: _unexpected})
    app.state.sandbox = state
    return FaultInjector(app, state)
