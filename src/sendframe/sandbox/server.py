"""Running the sandbox: :class:`Sandbox` (a real server in a background thread) and :func:`serve`.

    >>> from sendframe.sandbox import Sandbox
    >>> with Sandbox(clock="manual") as sb:                          # doctest: +SKIP
    ...     httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password), json={...})
    ...     sb.advance(60)
    ...     sb.messages()[["id", "status"]]
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Iterable
from typing import Any

import httpx
import pandas as pd
import uvicorn

from sendframe.errors import ConfigurationError
from sendframe.sandbox.accounts import DEMO_ACCOUNT, Account
from sendframe.sandbox.app import build_app
from sendframe.sandbox.carrier import CarrierConfig, ClockMode
from sendframe.sandbox.state import SandboxState

__all__ = ["Sandbox", "bind_socket", "messages_frame", "serve"]

HOST = "127.0.0.1"
_TIME_COLUMNS = ("scheduled_at", "expires_at", "created_at")


def bind_socket(port: int = 0, host: str = HOST) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``0`` picks a free port).

        >>> sock = bind_socket(); sock.getsockname()[0]
        '127.0.0.1'
    """
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without
    # it every keep-alive answer waits ~40 ms for a delayed ACK (Nagle)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"Cannot listen on {host}:{port}: {exc.strerror}; choose another --port.") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _config(app: Any, log_level: str, trust_proxy: bool = False) -> uvicorn.Config:
    # X-Forwarded-For / -Proto only from a local proxy, and only when told (--trust-proxy): uvicorn trusts them
    # from 127.0.0.1 by default, and behind a local proxy every client would then count as the proxy's loopback
    # (registered IP, control surface) or as whatever address it claims
    return uvicorn.Config(app, log_level=log_level, lifespan="on", access_log=False, timeout_graceful_shutdown=2,
                          backlog=2048, limit_concurrency=None, proxy_headers=trust_proxy,
                          forwarded_allow_ips="127.0.0.1,::1" if trust_proxy else "")


def messages_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """``/_sandbox/messages`` records as a DataFrame: snake_case columns, tz-aware UTC timestamps.

        >>> messages_frame([]).columns[:3].tolist()
        ['id', 'account', 'channel']
    """
    columns = ["id", "account", "channel", "campaign_id", "sending_id", "sender", "recipient", "message", "parts",
               "status", "is_delivered", "is_clicked", "is_opened", "custom_fields", "notification_url", "cost", "mnc",
               "scheduled_at", "expires_at", "created_at", "extra", "events", "notifications"]
    frame = pd.DataFrame(records, columns=columns)
    for name in _TIME_COLUMNS:
        frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601")
    for name in ("is_delivered", "is_clicked", "is_opened"):
        frame[name] = frame[name].astype(bool)
    for name in ("campaign_id", "sending_id", "parts"):
        frame[name] = frame[name].astype("Int64")
    frame["cost"] = frame["cost"].astype("float64")
    return frame


class Sandbox:
    """The sandbox served by uvicorn on a free 127.0.0.1 port in a background thread.

    ``db=":memory:"`` keeps everything in memory; a file path makes it durable (a new Sandbox on the
    same file resumes pending work). ``clock="manual"`` only moves with :meth:`advance`.
    ``carrier_config`` is a ``CarrierConfig`` or the path of a carrier config file (``seed``, when
    given, wins over its seed); ``allow_networks`` are CIDR networks delivery notifications may reach
    besides loopback (like ``--carrier-config`` and ``--allow-callback-network``); ``trust_proxy`` reads the
    client's address from ``X-Forwarded-For`` of a proxy on loopback (``--trust-proxy``; off by default).

        >>> with Sandbox(clock="manual") as sb:                # doctest: +SKIP
        ...     sb.base_url
        'http://127.0.0.1:40123'
    """

    def __init__(self, db: str = ":memory:", clock: ClockMode = "real", seed: int | None = None,
                 accounts: Iterable[Account | str] = (), *, ips: Iterable[str] = (), log_level: str = "warning",
                 carrier_config: CarrierConfig | str | os.PathLike[str] | None = None,
                 allow_networks: Iterable[str] = (), trust_proxy: bool = False) -> None:
        self.db, self.clock, self.seed = str(db), clock, seed
        self._trust_proxy = bool(trust_proxy)
        self._accounts, self._ips, self._log_level = list(accounts), list(ips), log_level
        self._carrier_config, self._allow_networks = carrier_config, list(allow_networks)
        self.username = DEMO_ACCOUNT.username
        self.api_password = DEMO_ACCOUNT.api_password
        self.base_url = ""
        self.state: SandboxState | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._http: httpx.Client | None = None

    def __repr__(self) -> str:
        return f"Sandbox(base_url={self.base_url!r}, db={self.db!r}, clock={self.clock!r})"

    def start(self) -> Sandbox:
        """Start serving; returns once the server accepts connections."""
        state = SandboxState.create(db=self.db, clock=self.clock, seed=self.seed, accounts=self._accounts,
                                    ips=self._ips, carrier_config=self._carrier_config,
                                    allow_networks=self._allow_networks)
        sock = bind_socket(0)
        port = sock.getsockname()[1]
        self.base_url = state.public_url = f"http://{HOST}:{port}"
        self.state = state
        server = self._server = uvicorn.Server(_config(build_app(self.state), self._log_level, self._trust_proxy))
        self._thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                                        name=f"sendframe-sandbox-{port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ConfigurationError("The sandbox server did not start; see the log above.")
            time.sleep(0.01)
        self._http = httpx.Client(base_url=self.base_url, timeout=120)
        return self

    def stop(self) -> None:
        """Stop the server (pending work stays in the database) and close the database."""
        if self._http is not None:
            self._http.close()
            self._http = None
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=15)
        if self.state is not None:
            self.state.db.close()
        self._server = self._thread = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _control(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        if self._http is None:
            raise ConfigurationError("The sandbox is not running; use `with Sandbox() as sb:`.")
        response = self._http.request(method, f"/_sandbox/{path}", json=body)
        if response.status_code >= 400:
            raise ConfigurationError(f"/_sandbox/{path} answered {response.status_code}: {response.text}")
        return response.json()  # type: ignore[no-any-return]

    def messages(self) -> pd.DataFrame:
        """Every message of every channel: status, flags, cost, events (a list per row), timestamps in UTC."""
        return messages_frame(self._control("GET", "messages")["data"])

    def advance(self, seconds: float) -> dict[str, Any]:
        """Move the manual clock by ``seconds`` and run all that falls due (notifications included)."""
        return self._control("POST", "advance", {"seconds": seconds})

    def reset(self) -> None:
        """Forget every message, campaign, code, link and fault."""
        self._control("POST", "reset", {})  # a POST of the control surface takes a JSON body, {} here

    def faults(self, *, status: int | None = None, rate: float | None = None, delay_s: float = 0.0, drop: float = 0.0,
               retry_after: int = 1) -> dict[str, Any]:
        """Inject faults on /api/rest routes: answer ``status`` (429, 500, 503) with probability ``rate`` (1 when
        a status is given alone), wait ``delay_s``, drop the connection after processing with probability ``drop``."""
        body: dict[str, Any] = {"delay_s": delay_s, "drop": drop, "retry_after": retry_after}
        if status is not None:
            body |= {"status": status, "rate": 1.0 if rate is None else rate}
        return self._control("POST", "faults", body)

    def clear_faults(self) -> None:
        """Stop injecting faults."""
        self._control("DELETE", "faults")


def serve(*, port: int, db: str, clock: ClockMode = "real", seed: int | None = None,
          accounts: Iterable[Account | str] = (),
          ips: Iterable[str] = (), announce: Any = None, log_level: str = "info",
          carrier_config: CarrierConfig | str | os.PathLike[str] | None = None, allow_networks: Iterable[str] = (),
          trust_proxy: bool = False) -> None:
    """Serve the sandbox on ``127.0.0.1:port`` in the foreground until interrupted.

    ``announce(base_url)`` is called once it listens.

    ``carrier_config``, ``allow_networks`` and ``trust_proxy`` as for :class:`Sandbox`; a bad config file or
    network raises ``ConfigurationError`` before anything listens."""
    state = SandboxState.create(db=db, clock=clock, seed=seed, accounts=accounts, ips=ips,
                                carrier_config=carrier_config, allow_networks=allow_networks)
    try:
        sock = bind_socket(port)
    except ConfigurationError:
        state.db.close()
        raise
    base_url = state.public_url = f"http://{HOST}:{sock.getsockname()[1]}"
    server = uvicorn.Server(_config(build_app(state), log_level, trust_proxy))

    async def run() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if announce is not None and server.started:
            announce(base_url)
        await task

    try:
        asyncio.run(run())
    finally:
        state.db.close()
