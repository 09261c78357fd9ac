"""The control surface under ``/_sandbox/`` and fault injection on ``/api/rest``.

``GET /_sandbox/messages`` shows every message of every channel with status, events and delivery
notifications; ``POST /_sandbox/reset {}`` empties the sandbox; ``POST /_sandbox/advance {"seconds": N}``
moves a manual clock and runs all that falls due before answering; ``POST /_sandbox/faults {"status",
"rate", "delay_s", "drop"}`` injects faults (``GET`` shows them, ``DELETE`` or ``POST /_sandbox/faults/clear
{}`` clears them).

Only the analyst's own machine may use it, and no web page (:func:`sendframe.sandbox.web.control_access`):
the peer and the ``Host`` are loopback, no foreign ``Origin``, and a ``POST`` carries
``Content-Type: application/json`` (docs/sandbox.md, threat model).

    curl -X POST http://127.0.0.1:8080/_sandbox/advance -H 'Content-Type: application/json' -d '{"seconds": 60}'
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from sendframe.api.validation import shown
from sendframe.errors import ApiError, ErrorCode
from sendframe.sandbox import store
from sendframe.sandbox.state import Faults
from sendframe.sandbox.web import control_access, error_response, guarded, read_json

__all__ = ["FaultInjector", "parse_faults", "routes"]

log = logging.getLogger("sendframe.sandbox.control")

FAULT_STATUSES = (429, 500, 503)
MAX_ADVANCE_SECONDS = 10 * 365 * 86400


def _invalid(description: str) -> ApiError:
    return ApiError(ErrorCode.INVALID_REQUEST, description, 400)


async def _json_object(request: Request) -> dict[str, Any]:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise _invalid(f"The body must be a JSON object (got {shown(body)}); send {{}} when there is nothing to say.")
    return body


def _message_wire(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["custom_fields"] = json.loads(row["custom_fields"] or "{}")
    out["extra"] = json.loads(row["extra"] or "{}")
    for name in ("is_delivered", "is_clicked", "is_opened"):
        out[name] = bool(row[name])
    return out


@guarded
async def messages(request: Request) -> Response:
    """``GET /_sandbox/messages``: every message (all channels, all accounts) with its events and notifications."""
    control_access(request, mutation=False)
    state = request.app.state.sandbox
    return JSONResponse({"data": [_message_wire(r) for r in store.message_rows(state.db)]})


@guarded
async def reset(request: Request) -> Response:
    """``POST /_sandbox/reset {}``: delete every message, event, pending step, notification, campaign, code and link."""
    control_access(request, mutation=True)
    await _json_object(request)
    state = request.app.state.sandbox
    if state.worker is not None:
        async with state.worker.exclusive():  # never reset in the middle of a worker round
            store.reset(state.db, state.extra)
    else:
        store.reset(state.db, state.extra)
    state.faults = None
    return JSONResponse({"reset": True})


@guarded
async def advance(request: Request) -> Response:
    """``POST /_sandbox/advance {"seconds": N}``: move the manual clock and finish all that falls due."""
    control_access(request, mutation=True)
    state = request.app.state.sandbox
    body = await _json_object(request)
    seconds = body.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_ADVANCE_SECONDS:
        raise _invalid(f"seconds must be a number from 0 to {MAX_ADVANCE_SECONDS} (got {shown(seconds)}).")
    if state.clock.mode != "manual":
        raise ApiError(ErrorCode.INVALID_REQUEST, "The sandbox runs on the real clock; start it with --clock manual "
                       "to advance time.", 409)
    return JSONResponse(await state.worker.advance(seconds))


def parse_faults(body: object) -> Faults | None:
    """Read a faults body; ``{}`` (or all rates zero) clears. Raises :class:`ApiError` naming the field.

        >>> parse_faults({"status": 503, "rate": 0.5})
        Faults(status=503, rate=0.5, delay_s=0.0, drop=0.0, retry_after=1)
    """
    if not isinstance(body, dict):
        raise _invalid("The faults body must be a JSON object.")
    status = body.get("status")
    if status is not None and (isinstance(status, bool) or status not in FAULT_STATUSES):
        raise _invalid(f"status must be one of 429, 500, 503 (got {shown(status)}).")
    values: dict[str, float] = {}
    for name, high in (("rate", 1.0), ("delay_s", 60.0), ("drop", 1.0), ("retry_after", 3600.0)):
        value = body.get(name, 1 if name == "retry_after" else 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
            raise _invalid(f"{name} must be a number from 0 to {high:g} (got {shown(value)}).")
        values[name] = float(value)
    if status is not None and "rate" not in body:
        values["rate"] = 1.0
    if status is None and values["rate"] > 0:
        raise _invalid("rate needs a status (429, 500 or 503) to answer.")
    faults = Faults(status=status, rate=values["rate"], delay_s=values["delay_s"], drop=values["drop"],
                    retry_after=int(values["retry_after"]))
    return faults if (faults.rate or faults.delay_s or faults.drop) else None


@guarded
async def faults(request: Request) -> Response:
    """``GET`` shows the faults; ``POST`` sets them (``{}`` clears); ``DELETE`` clears them."""
    control_access(request, mutation=request.method == "POST")
    state = request.app.state.sandbox
    if request.method == "POST":
        state.faults = parse_faults(await _json_object(request))
    elif request.method == "DELETE":
        state.faults = None
    return JSONResponse({"faults": state.faults.to_dict() if state.faults else None})


@guarded
async def clear_faults(request: Request) -> Response:
    """``POST /_sandbox/faults/clear {}``: no more faults."""
    control_access(request, mutation=True)
    await _json_object(request)
    request.app.state.sandbox.faults = None
    return JSONResponse({"faults": None})


def routes() -> list[Route]:
    """The control routes the app mounts.

        >>> [r.path for r in routes()][:2]
        ['/_sandbox/messages', '/_sandbox/reset']
    """
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
