"""The sandbox's routes: the send endpoints, SMS lookup and /openapi.json, and the app that assembles every
route module (these, :mod:`otp`, :mod:`links`, :mod:`control`) into one route table.

Routes translate HTTP into calls on :mod:`sendframe.sandbox.sending` and :mod:`sendframe.sandbox.store`;
the plumbing they share (error answers, authentication, bodies) is :mod:`sendframe.sandbox.web`, which
imports no route module. Every failure becomes ``{"error": {"code", "description"}}`` (docs/api-notes.md),
never a bare 500.

    app = build_app(SandboxState.create(clock="manual"))   # an ASGI app for uvicorn
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio.from_thread
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sendframe.api.models import CHANNELS, MAX_LOOKUP_IDS
from sendframe.api.validation import decode_json
from sendframe.api.wire import send_path
from sendframe.errors import ApiError, ErrorCode
from sendframe.sandbox import control, links, openapi, otp, sending, store
from sendframe.sandbox.accounts import Account
from sendframe.sandbox.control import FaultInjector
from sendframe.sandbox.web import EXCEPTION_HANDLERS, OFF_LOOP_BYTES, account_of, guarded, off_loop, read_body
from sendframe.sandbox.worker import Worker

__all__ = ["build_app", "routes"]


def _accept_off_loop(state: Any, account: Account, channel: str, raw: bytes) -> tuple[int, dict[str, Any]]:
    """Decode, validate and accept a large body in a worker thread; its database steps run on the event loop."""
    payload = decode_json(raw, checked_by_model=True)  # the request model applies the body rule
    return sending.accept(state, account, channel, payload, on_loop=anyio.from_thread.run_sync)


def _send_route(channel: str) -> Callable[[Request], Awaitable[Response]]:
    async def send(request: Request) -> Response:
        state = request.app.state.sandbox
        state.last_send = time.monotonic()  # the worker defers to a busy API (worker.BUSY_WINDOW)
        account = await account_of(request, channel)
        raw = await read_body(request)
        if len(raw) <= OFF_LOOP_BYTES:
            status, body = sending.accept(state, account, channel, decode_json(raw, checked_by_model=True))
        else:  # a large body: decoding, validating and rendering must not keep other clients waiting
            status, body = await off_loop(len(raw), _accept_off_loop, state, account, channel, raw)
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
        raise ApiError(ErrorCode.INVALID_REQUEST, "Give at least one message id: /api/rest/sms/<id>[,<id>...].", 400)
    if len(ids) > MAX_LOOKUP_IDS:
        raise ApiError(ErrorCode.TOO_MANY_RECIPIENTS, f"At most {MAX_LOOKUP_IDS} ids per lookup (got {len(ids)}); "
                       f"ask in chunks of {MAX_LOOKUP_IDS}.", 400)
    state = request.app.state.sandbox
    records = store.lookup_records(state.db, account.username, ids, state.public_url.rstrip("/"))
    if not records:
        shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
        raise ApiError(ErrorCode.NOT_FOUND, f"Resource not found: no SMS message with id {shown} for this account.",
                       404)
    # the records come as JSON text from the store: joined, not parsed and dumped again
    return Response("".join(('{"data":[', ",".join(records), "]}")), media_type="application/json")


@guarded
async def openapi_json(request: Request) -> Response:
    """``GET /openapi.json``: the OpenAPI document of this sandbox."""
    return JSONResponse(openapi.document(request.app.state.sandbox.public_url))


def routes() -> list[BaseRoute]:
    """Every route of the sandbox: ours, the pages' (OTP, links) and the control surface.

        >>> len(routes())
        18
    """
    ours: list[BaseRoute] = [Route(send_path(c), _send_route(c), methods=["POST"]) for c in CHANNELS]
    ours += [Route("/api/rest/sms/{ids}", lookup, methods=["GET"]),
             Route("/openapi.json", openapi_json, methods=["GET"])]
    return [*ours, *otp.routes(), *links.routes(), *control.routes()]


def build_app(state: Any) -> Any:
    """The ASGI app of a sandbox over ``state``: Starlette routes, the worker in its lifespan, fault injection outside.

        app = build_app(SandboxState.create())
    """

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

    app = Starlette(routes=routes(), lifespan=lifespan, exception_handlers=EXCEPTION_HANDLERS)
    app.state.sandbox = state
    return FaultInjector(app, state)
