"""The control surface under ``/_sandbox/`` and fault injection on ``/api/rest``.

Answers only clients on a loopback address. ``GET /_sandbox/messages`` shows every message of
every channel with status and events; ``POST /_sandbox/reset`` empties the sandbox;
``POST /_sandbox/advance {"seconds": N}`` moves a manual clock and runs all that falls due before
answering; ``POST /_sandbox/faults {"status", "rate", "delay_s", "drop"}`` injects faults
(``GET`` shows them, ``DELETE`` or ``POST /_sandbox/faults/clear`` clears them).

    curl -X POST http://127.0.0.1:8080/_sandbox/advance -d '{"seconds": 60}'
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import random
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from sendframe.errors import ErrorCode
from sendframe.sandbox import store
from sendframe.sandbox.app import error_response, guarded, read_json
from sendframe.sandbox.sending import Rejection
from sendframe.sandbox.state import Faults

__all__ = ["FaultInjector", "parse_faults", "routes"]

log = logging.getLogger("sendframe.sandbox.control")

FAULT_STATUSES = (429, 500, 503)


def _require_loopback(request: Request) -> None:
    host = request.client.host if request.client else ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise Rejection(404, ErrorCode.NOT_FOUND, f"Resource not found: {request.url.path}")


def _message_wire(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["custom_fields"] = json.loads(row["custom_fields"] or "{}")
    out["extra"] = json.loads(row["extra"] or "{}")
    for name in ("is_delivered", "is_clicked", "is_opened"):
        out[name] = bool(row[name])
    return out


@guarded
async def messages(request: Request) -> Response:
    """``GET /_sandbox/messages``: every message (all channels, all accounts) with its events."""
    _require_loopback(request)
    state = request.app.state.sandbox
    return JSONResponse({"data": [_message_wire(r) for r in store.message_rows(state.db)]})


@guarded
async def reset(request: Request) -> Response:
    """``POST /_sandbox/reset``: delete every message, event, pending step, notification, campaign, code and link."""
    _require_loopback(request)
    state = request.app.state.sandbox
    worker = state.worker
    if worker is not None:
        async with worker._lock:  # noqa: SLF001 - never reset in the middle of a worker round
            store.reset(state.db, state.extra)
    else:
        store.reset(state.db, state.extra)
    state.faults = None
    return JSONResponse({"reset": True})


@guarded
async def advance(request: Request) -> Response:
    """``POST /_sandbox/advance {"seconds": N}``: move the manual clock and finish all that falls due."""
    _require_loopback(request)
    state = request.app.state.sandbox
    body = await read_json(request)
    seconds = body.get("seconds") if isinstance(body, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 10 * 365 * 86400:
        raise Rejection(400, ErrorCode.INVALID_REQUEST, f"seconds must be a number from 0 to 315360000 (got {json.dumps(seconds)}).")
    if state.clock.mode != "manual":
        raise Rejection(409, ErrorCode.INVALID_REQUEST, "The sandbox runs on the real clock; start it with --clock manual to advance time.")
    return JSONResponse(await state.worker.advance(seconds))


def parse_faults(body: object) -> Faults | None:
    """Read a faults body; ``{}`` (or all rates zero) clears. Raises :class:`Rejection` naming the field.

        >>> parse_faults({"status": 503, "rate": 0.5})
        Faults(status=503, rate=0.5, delay_s=0.0, drop=0.0, retry_after=1)
    """
    if not isinstance(body, dict):
        raise Rejection(400, ErrorCode.INVALID_REQUEST, "The faults body must be a JSON object.")
    status = body.get("status")
    if status is not None and (isinstance(status, bool) or status not in FAULT_STATUSES):
        raise Rejection(400, ErrorCode.INVALID_REQUEST, f"status must be one of 429, 500, 503 (got {json.dumps(status)}).")
    values: dict[str, float] = {}
    for name, high in (("rate", 1.0), ("delay_s", 60.0), ("drop", 1.0), ("retry_after", 3600.0)):
        value = body.get(name, 1 if name == "retry_after" else 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
            raise Rejection(400, ErrorCode.INVALID_REQUEST, f"{name} must be a number from 0 to {high:g} (got {json.dumps(value)}).")
        values[name] = float(value)
    if status is not None and "rate" not in body:
        values["rate"] = 1.0
    if status is None and values["rate"] > 0:
        raise Rejection(400, ErrorCode.INVALID_REQUEST, "rate needs a status (429, 500 or 503) to answer.")
    faults = Faults(status=status, rate=values["rate"], delay_s=values["delay_s"], drop=values["drop"],
                    retry_after=int(values["retry_after"]))
    return faults if (faults.rate or faults.delay_s or faults.drop) else None


@guarded
async def faults(request: Request) -> Response:
    """``GET`` shows the faults; ``POST`` sets them (``{}`` clears); ``DELETE`` clears them."""
    _require_loopback(request)
    state = request.app.state.sandbox
    if request.method == "POST":
        state.faults = parse_faults(await read_json(request))
    elif request.method == "DELETE":
        state.faults = None
    return JSONResponse({"faults": state.faults.to_dict() if state.faults else None})


@guarded
async def clear_faults(request: Request) -> Response:
    """``POST /_sandbox/faults/clear``: no more faults."""
    _require_loopback(request)
    request.app.state.sandbox.faults = None
    return JSONResponse({"faults": None})


def routes() -> list[Route]:
    """The control routes core's app mounts."""
    return [
        Route("/_sandbox/messages", messages, methods=["GET"]),
        Route("/_sandbox/reset", reset, methods=["POST"]),
        Route("/_sandbox/advance", advance, methods=["POST"]),
        Route("/_sandbox/faults", faults, methods=["GET", "POST", "DELETE"]),
        Route("/_sandbox/faults/clear", clear_faults, methods=["POST"]),
    ]


class FaultInjector:
    """ASGI wrapper applying ``state.faults`` to ``/api/rest`` requests.

    ``status``/``rate``: answer that status (429 with ``Retry-After``) without processing; ``delay_s``:
    wait before answering; ``drop``: process the request fully, then close the connection without an answer.
    """

    def __init__(self, app: Any, state: Any, rng: random.Random | None = None) -> None:
        self.app = app
        self.state = state
        self.rng = rng or random.Random()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        faults: Faults | None = self.state.faults
        if scope["type"] != "http" or faults is None or not scope.get("path", "").startswith("/api/rest"):
            await self.app(scope, receive, send)
            return
        if faults.delay_s:
            await asyncio.sleep(faults.delay_s)
        if faults.status and self.rng.random() < faults.rate:
            code = {429: ErrorCode.RATE_LIMITED, 500: ErrorCode.SERVER_ERROR, 503: ErrorCode.UNAVAILABLE}[faults.status]
            words = {429: "Too many requests: slow down and retry after the Retry-After seconds.",
                     500: "Injected fault: internal server error.", 503: "Injected fault: service unavailable."}
            headers = {"Retry-After": str(faults.retry_after)} if faults.status in (429, 503) else None
            await error_response(faults.status, code, words[faults.status], headers)(scope, receive, send)
            return
        if faults.drop and self.rng.random() < faults.drop:
            await self._drop(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _drop(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def discard(message: dict[str, Any]) -> None:
            return None

        await self.app(scope, receive, discard)
        # uvicorn's send is a bound method of the request cycle, which holds the connection's transport
        transport = getattr(getattr(send, "__self__", None), "transport", None)
        if transport is not None:
            transport.close()
            for _ in range(3):  # let connection_lost run, so uvicorn sees a disconnected client and sends nothing
                await asyncio.sleep(0)
            return
        # another server: start an answer and fail, so the server closes the connection mid-response
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"100")]})
        raise ConnectionAbortedError("sandbox fault injection: connection dropped")
