"""A test helper: a tiny Starlette app on a free port collecting the delivery notifications it receives."""

from __future__ import annotations

import asyncio
import threading
import time
from urllib.parse import parse_qs

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from sendframe.sandbox.server import bind_socket


class NotificationReceiver:
    """Serves ``GET /dlr`` on ``host`` in a thread; ``hits`` holds each query string as a dict.
    The first ``fail_first`` requests are answered 500 (to exercise retries).

        with NotificationReceiver() as receiver:
            ...  # send with notificationUrl=receiver.url + "?s=%s"
        receiver.statuses()  # ["ACCEPTD", "DELIVRD"]
    """

    def __init__(self, host: str = "127.0.0.1", fail_first: int = 0) -> None:
        self.hits: list[dict[str, str]] = []
        self.fail_first = fail_first

        async def hit(request: Request) -> PlainTextResponse:
            self.hits.append({k: v[0] for k, v in parse_qs(request.url.query, keep_blank_values=True).items()})
            if len(self.hits) <= self.fail_first:
                return PlainTextResponse("no", status_code=500)
            return PlainTextResponse("ok")

        sock = bind_socket(0, host=host)
        self.url = f"http://{host}:{sock.getsockname()[1]}/dlr"
        self.server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/dlr", hit)]), log_level="warning"))
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve(sockets=[sock])), daemon=True)

    def statuses(self) -> list[str]:
        """The ``s`` parameter of each notification received, in arrival order."""
        return [hit.get("s", "") for hit in self.hits]

    def __enter__(self) -> NotificationReceiver:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(5)
