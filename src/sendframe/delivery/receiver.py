"""A durable receiver of delivery notifications, for a notebook or ``sendframe receive``.

A small asyncio HTTP/1.1 server (GET only, see ``listener``) that answers 200 only after the
notification is on disk. Requests arriving together share one write and one ``fsync`` (group
commit). A client that does not read its answers within ``write_timeout`` seconds is dropped.

    >>> with Receiver("callbacks.log") as receiver:  # doctest: +SKIP
    ...     url = receiver.notification_url          # give this to send_sms(notificationUrl=url)
    ...     frame = receiver.callbacks()

The log is append-only text: ``#params\\t<the notificationUrl's query, token left out>`` at each
start, then one ``<arrival time, 32 characters>\\t<raw query>`` line per notification. A write
that fails part-way is cut off the log at once and its notifications get no 200 (on a full disk they
are answered 507 Insufficient Storage, and the service sends them again later); a restart drops a torn
last line (never acknowledged) and appends after it. The log is created readable and writable by its
owner only (0600): notifications name recipients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import cast
from urllib.parse import quote, urlencode, urlsplit

import pandas as pd

from sendframe.api.notifications import ESCAPE_CODES
from sendframe.delivery.callbacks import LOG_READS, read_callbacks
from sendframe.delivery.listener import Counters, Listener, LogWriter
from sendframe.delivery.waiting import wait_for_final
from sendframe.errors import ConfigurationError, DiskFullError
from sendframe.options import keyword_checked

logger = logging.getLogger(__name__)

CALLBACK_PATH = "/dlr/"
IDLE_TIMEOUT = 30.0        # seconds a client may take to send a whole request (and stay idle between them)
WRITE_TIMEOUT = 10.0       # seconds a client may leave its answers unread before it is dropped
_EVERY_INTERFACE = frozenset({"0.0.0.0", "::", ""})
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def receiver_query(params: Mapping[str, str] | None = None) -> str:
    """The query of the receiver's notificationUrl: every escape code under its column name, then own parameters.

    >>> receiver_query(params={"ref": "crm"}).endswith("&sending_id=%S&ref=crm")
    True
    """
    codes = "&".join(f"{column}=%{letter}" for letter, column in ESCAPE_CODES.items())
    own = urlencode(dict(params or {}), quote_via=quote)
    return codes + ("&" + own if own else "")


class Receiver:
    """Receive delivery notifications into ``log``, durably, on a background thread.

    ``token`` (generated when None, 128 bits) is part of the callback path; requests without it
    get 404. ``params`` are the analyst's own parameters added to the notificationUrl and passed
    back with every notification (each becomes a column of ``callbacks()``). ``public_url`` is
    the address the service reaches this receiver at (``https://dlr.example.com`` behind a
    reverse proxy or tunnel that forwards ``/dlr/<token>`` here); by default ``http://host:port``,
    so a receiver bound to every interface (``0.0.0.0``, ``::``) needs it.

    >>> receiver = Receiver("callbacks.log", params={"ref": "spring"}).start()  # doctest: +SKIP
    >>> receiver.notification_url  # doctest: +SKIP
    'http://127.0.0.1:52311/dlr/...?id=%i&delivery=%d&...&ref=spring'
    >>> receiver.stop()  # doctest: +SKIP
    """

    @keyword_checked
    def __init__(
        self,
        log: str | os.PathLike[str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        params: Mapping[str, str] | None = None,
        max_batch: int = 4096,
        public_url: str | None = None,
        write_timeout: float = WRITE_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        if token is not None and len(token) < 16:
            raise ConfigurationError("The receiver token must have at least 16 characters "
                                     "(use secrets.token_urlsafe(16)).")
        if token is not None and not _TOKEN_CHARACTERS.issuperset(token):
            raise ConfigurationError("The receiver token may only hold letters, digits, '-' and '_' "
                                     "(it is part of a URL path).")
        if max_batch < 1:
            raise ConfigurationError(f"max_batch must be at least 1, not {max_batch}.")
        for name, value in (("write_timeout", write_timeout), ("idle_timeout", idle_timeout)):
            if not value > 0:
                raise ConfigurationError(f"{name} must be a positive number of seconds, not {value!r}.")
        if public_url is None and host in _EVERY_INTERFACE:
            raise ConfigurationError(f"A receiver bound to {host!r} cannot tell the address the service reaches it at: "
                                     "pass public_url= (--public-url), e.g. 'https://dlr.example.com'.")
        if public_url is not None:
            parts = urlsplit(public_url)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
                raise ConfigurationError(f"public_url must be an http(s) address without query, like "
                                         f"'https://dlr.example.com', not {public_url!r}.")
        self.public_url = public_url.rstrip("/") if public_url is not None else None
        self.log = Path(log)
        self.host = host
        self.port = port
        self.params = dict(params or {})
        self.max_batch = max_batch
        self.write_timeout = write_timeout
        self.idle_timeout = idle_timeout
        self._token = token or secrets.token_urlsafe(16)
        self._path = (CALLBACK_PATH + self._token).encode()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._counters = Counters()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"Receiver(log={str(self.log)!r}, host={self.host!r}, port={self.port}, {state})"

    @property
    def commits(self) -> int:
        """Group commits done (one write and fsync each)."""
        return self._counters.commits

    @property
    def notifications(self) -> int:
        """Notifications written to the log and acknowledged."""
        return self._counters.notifications

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def notification_url(self) -> str:
        """The notificationUrl to send with: all twelve escape codes, the token, the own parameters."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        address = self.public_url or f"http://{host}:{self.port}"
        return f"{address}{CALLBACK_PATH}{self._token}?{receiver_query(params=self.params)}"

    def callbacks(self) -> pd.DataFrame:
        """Everything received so far, parsed by ``read_callbacks`` (each call parses only the lines
        that arrived since the last)."""
        return read_callbacks(self.log)

    @keyword_checked
    def wait_for(
        self,
        ids: pd.DataFrame | pd.Series | Iterable[object] | str,
        *,
        timeout: float = 300.0,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Wait until every message of ``ids`` has a final notification; returns ``callbacks()``.

        ``ids``: the frame ``send_sms`` (or another ``send_*``) returned (its accepted rows are
        waited for), its ``id`` column, or any list of ids. Final is the one rule of
        ``is_final_notification`` (DELIVRD, UNDELIV, EXPIRED, REJECTD, DELETED, or a final delivery
        value without status). A progress bar (``tqdm.auto``: a widget in notebooks) counts the
        messages done. After ``timeout`` seconds it returns what has arrived with a
        ``SendframeWarning`` saying how many are still pending; so it does at once when the
        receiver is not running.

        >>> with Receiver("callbacks.log") as receiver:  # doctest: +SKIP
        ...     results = send_sms(contacts, "Hi {name}", notification_url=receiver.notification_url)
        ...     callbacks = receiver.wait_for(results, timeout=120)
        """
        return wait_for_final(lambda: LOG_READS.read(self.log), ids, timeout=timeout, progress=progress,
                              running=lambda: self.running)

    # lifecycle ---------------------------------------------------------------------------
    def start(self) -> Receiver:
        """Start serving on a background thread; returns once the port is bound."""
        if self.running:
            return self
        self._ready.clear()
        self._error = None
        self._thread = threading.Thread(target=self._serve_thread, name="sendframe-receiver", daemon=True)
        self._thread.start()
        self._ready.wait()
        error = cast("BaseException | None", self._error)  # set by the serving thread meanwhile
        if error is not None:
            self._thread.join()
            if isinstance(error, DiskFullError):
                raise error
            raise ConfigurationError(f"The receiver could not start on {self.host}:{self.port}: {error}")
        return self

    def stop(self) -> None:
        """Stop serving; everything acknowledged is already on disk."""
        if self._loop is not None and self._stopping is not None and self.running:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join()
        self._thread = None

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the calling thread until SIGINT / SIGTERM (used by ``sendframe receive``)."""

        def ready() -> None:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread / platform
                    loop.add_signal_handler(signum, self._stopping.set)  # type: ignore[union-attr]
            if on_ready is not None:
                on_ready()

        asyncio.run(self._main(on_ready=ready))

    def _serve_thread(self) -> None:
        try:
            asyncio.run(self._main(on_ready=self._ready.set))
        except BaseException as exc:  # reported to start()
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self, on_ready: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        log = LogWriter(self.log)
        log.open(self._params_line().encode())
        try:
            listener = Listener(log, self._path, self._counters, max_batch=self.max_batch,
                                idle_timeout=self.idle_timeout, write_timeout=self.write_timeout)
            try:
                server = await self._loop.create_server(listener.connection, self.host, self.port)
                self.port = server.sockets[0].getsockname()[1]
                logger.info("receiver listening on %s:%s, log %s", self.host, self.port, self.log)
                on_ready()
                try:
                    await self._stopping.wait()
                finally:
                    server.close()
            finally:
                await listener.close()  # everything queued is committed and answered first
        finally:
            log.close()

    def _params_line(self) -> str:
        return "#params\t" + receiver_query(params=self.params) + "\n"
