"""A durable receiver of delivery notifications, for a notebook or ``sendframe receive``.

A small asyncio HTTP/1.1 server (GET only) that answers 200 only after the notification is on
disk. Requests arriving together share one write and one ``fsync`` (group commit): a writer task
takes everything queued, appends it to the log, syncs, then releases all their answers.

    >>> with Receiver("callbacks.log") as receiver:  # doctest: +SKIP
    ...     url = receiver.notification_url          # give this to send_sms(notificationUrl=url)
    ...     frame = receiver.callbacks()

The log is append-only text: ``#params\\t<the notificationUrl's query, token left out>`` at each
start, then one ``<arrival time, 32 characters>\\t<raw query>`` line per notification. A write
that fails part-way (disk full) is cut off the log at once and its notifications get no 200; a
restart drops a torn last line (never acknowledged) and appends after it.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import re
import secrets
import signal
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import pandas as pd

from sendframe.errors import ConfigurationError
from sendframe.api.notifications import ESCAPE_CODES

logger = logging.getLogger(__name__)

MAX_TARGET = 4096          # longest request target (path + query) accepted, bytes
MAX_HEAD = 16 * 1024       # request line + headers
IDLE_TIMEOUT = 30.0        # seconds a keep-alive connection may stay silent
CALLBACK_PATH = "/dlr/"
_EVERY_INTERFACE = frozenset({"0.0.0.0", "::", ""})
_QUERY_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$'()*+,;=:@/?&"
_QUERY_CHARS = frozenset(_QUERY_BYTES)
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            411: "Length Required", 413: "Content Too Large", 414: "URI Too Long", 431: "Request Header Fields Too Large"}


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
    ) -> None:
        if token is not None and len(token) < 16:
            raise ConfigurationError("The receiver token must have at least 16 characters (use secrets.token_urlsafe(16)).")
        if token is not None and any(ch not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for ch in token):
            raise ConfigurationError("The receiver token may only hold letters, digits, '-' and '_' (it is part of a URL path).")
        if max_batch < 1:
            raise ConfigurationError(f"max_batch must be at least 1, not {max_batch}.")
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
        self._token = token or secrets.token_urlsafe(16)
        self._path = (CALLBACK_PATH + self._token).encode()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self.commits = 0          # group commits done (one fsync each)
        self.notifications = 0    # notifications written and acknowledged

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"Receiver(log={str(self.log)!r}, host={self.host!r}, port={self.port}, {state})"

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
        """Everything received so far, parsed by ``read_callbacks``."""
        from sendframe.delivery.callbacks import read_callbacks

        return read_callbacks(self.log)

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
        if self._error is not None:
            self._thread.join()
            raise ConfigurationError(f"The receiver could not start on {self.host}:{self.port}: {self._error}")
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

    def serve_forever(self, on_ready: Any = None) -> None:
        """Serve in the calling thread until SIGINT / SIGTERM (used by ``sendframe receive``)."""

        def ready() -> None:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(signum, self._stopping.set)  # type: ignore[union-attr]
                except (NotImplementedError, RuntimeError):  # not the main thread / platform
                    pass
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

    async def _main(self, on_ready: Any) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        writer = _LogWriter(self.log, self.max_batch)
        writer.open(self._params_line())
        server = await asyncio.start_server(self._handle_factory(writer), self.host, self.port, limit=MAX_HEAD)
        self.port = server.sockets[0].getsockname()[1]
        writer_task = asyncio.create_task(writer.run(self))
        logger.info("receiver listening on %s:%s, log %s", self.host, self.port, self.log)
        on_ready()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            writer.closing = True
            await writer.queue.put(None)
            await writer_task
            writer.close()
            for stream in list(self._connections):  # idle keep-alive connections
                stream.close()
            await asyncio.sleep(0)

    def _params_line(self) -> str:
        return "#params\t" + receiver_query(params=self.params) + "\n"

    # HTTP ---------------------------------------------------------------------------------
    def _handle_factory(self, writer: _LogWriter) -> Any:
        async def handle(reader: asyncio.StreamReader, stream: asyncio.StreamWriter) -> None:
            self._connections.add(stream)
            try:
                while True:
                    keep = await self._one_request(reader, stream, writer)
                    if not keep:
                        break
            except (ConnectionError, asyncio.IncompleteReadError, TimeoutError, asyncio.CancelledError):
                pass  # the client went away, stayed idle, or the receiver is stopping
            except Exception:  # never let one connection take the server down
                logger.exception("receiver: unexpected error on a connection")
            finally:
                self._connections.discard(stream)
                stream.close()

        return handle

    async def _one_request(self, reader: asyncio.StreamReader, stream: asyncio.StreamWriter, writer: _LogWriter) -> bool:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT)
        except asyncio.LimitOverrunError:
            await _answer(stream, 431, keep=False)
            return False
        except asyncio.IncompleteReadError:
            return False
        lines = head.split(b"\r\n")
        method, _, rest = lines[0].partition(b" ")
        target, _, version = rest.rpartition(b" ")  # a target may hold raw spaces: a service that does not escape %t
        if not target or not version.startswith(b"HTTP/1."):
            await _answer(stream, 400, keep=False)
            return False
        headers = _headers(lines[1:])
        connection = headers.get(b"connection", b"").lower()
        keep = connection == b"keep-alive" or (version == b"HTTP/1.1" and connection != b"close")
        if b"transfer-encoding" in headers or headers.get(b"content-length", b"0").strip() not in (b"0", b""):
            await _answer(stream, 413, keep=False)  # notifications carry no body; we never read one
            return False
        if method != b"GET":
            await _answer(stream, 405, keep=keep)
            return keep
        if len(target) > MAX_TARGET:
            await _answer(stream, 414, keep=False)
            return False
        path, _, query = target.partition(b"?")
        if not hmac.compare_digest(path, self._path):
            await _answer(stream, 404, keep=keep)
            return keep
        query = _escaped(query)
        if not _valid_query(query):
            await _answer(stream, 400, keep=keep)
            return keep
        arrival = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")
        done = asyncio.get_running_loop().create_future()
        await writer.queue.put((arrival.encode() + b"\t" + query + b"\n", done))
        await done  # on disk
        await _answer(stream, 200, keep=keep)
        return keep


def _headers(lines: list[bytes]) -> dict[bytes, bytes]:
    headers: dict[bytes, bytes] = {}
    for line in lines:
        name, sep, value = line.partition(b":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers


def _escaped(query: bytes) -> bytes:
    """The query with raw bytes a URL may not hold (spaces, non-ASCII) percent-encoded, as a service
    that substitutes values unescaped sends them; control characters are left for ``_valid_query`` to refuse.

        >>> _escaped(b"id=a1&t=2026-11-21 09:30&ref=caf\\xc3\\xa9")
        b'id=a1&t=2026-11-21%2009:30&ref=caf%C3%A9'
    """
    if not query.translate(None, _QUERY_BYTES):  # every byte allowed (one C pass: this runs per request)
        return query
    return b"".join(b"%%%02X" % byte if byte > 0x20 and byte not in _QUERY_CHARS or byte == 0x20 else bytes([byte])
                    for byte in query)


def _valid_query(query: bytes) -> bool:
    """A notification: URL-safe characters only, well-formed escapes, and a non-empty ``id``."""
    if not query or query.translate(None, _QUERY_BYTES):  # a byte outside the URL set is left
        return False
    try:
        pairs = parse_qsl(query.decode("ascii"), keep_blank_values=True, strict_parsing=True, errors="strict")
    except (ValueError, UnicodeDecodeError):
        return False
    if _BAD_ESCAPE.search(query):
        return False
    return any(name == "id" and value for name, value in pairs)


async def _answer(stream: asyncio.StreamWriter, status: int, *, keep: bool) -> None:
    body = _REASONS[status].encode() + b"\n"
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
    ).encode()
    stream.write(head + body)
    await stream.drain()


class _LogWriter:
    """Appends queued lines in batches, one write + fsync per batch, then releases their answers."""

    def __init__(self, path: Path, max_batch: int) -> None:
        self.path = path
        self.max_batch = max_batch
        self.queue: asyncio.Queue[tuple[bytes, asyncio.Future[None]] | None] = asyncio.Queue()
        self.closing = False
        self._fd = -1
        self._end = 0  # length of the log up to its last committed line

    def open(self, header: str) -> None:
        new = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        _drop_torn_tail(self._fd)
        self._end = os.lseek(self._fd, 0, os.SEEK_END)
        self._append(header.encode())
        if new:  # make the new file's name itself durable
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _commit(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)

    def _append(self, data: bytes) -> None:
        """Commit ``data`` whole or not at all: a failed commit (disk full, ...) is cut off the log again.

        Otherwise the torn part of the failed batch would stay and the next batch would be
        appended to it, spoiling a line that is then acknowledged.
        """
        if os.lseek(self._fd, 0, os.SEEK_END) != self._end:  # an earlier cut failed: cut before writing
            self._cut_back()
        try:
            self._commit(data)
        except OSError:
            try:
                self._cut_back()
            except OSError as exc:  # tried again before the next batch
                logger.error("receiver: could not cut a failed write off the log: %s", exc)
            raise
        self._end = os.lseek(self._fd, 0, os.SEEK_END)

    def _cut_back(self) -> None:
        os.ftruncate(self._fd, self._end)
        os.fsync(self._fd)

    async def run(self, receiver: Receiver) -> None:
        while True:
            item = await self.queue.get()
            batch = [item]
            while len(batch) < self.max_batch and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            items = [entry for entry in batch if entry is not None]
            if items:
                try:
                    await asyncio.to_thread(self._append, b"".join(line for line, _ in items))
                except OSError as exc:  # disk full, ...: answer nothing rather than a false 200, log cut back
                    logger.error("receiver: could not write the log: %s", exc)
                    for _, done in items:
                        if not done.done():
                            done.set_exception(ConnectionError("log write failed"))
                    continue
                receiver.commits += 1
                receiver.notifications += len(items)
                for _, done in items:
                    if not done.done():
                        done.set_result(None)
            if any(entry is None for entry in batch) and self.queue.empty():
                return


def _drop_torn_tail(fd: int) -> None:
    """Cut a last line without its newline: it was never acknowledged (acks follow the fsync)."""
    size = os.lseek(fd, 0, os.SEEK_END)
    if size == 0:
        return
    step = 4096
    end = size
    while end > 0:
        start = max(0, end - step)
        chunk = os.pread(fd, end - start, start)
        if end == size and chunk.endswith(b"\n"):
            return
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            os.ftruncate(fd, start + cut + 1)
            os.fsync(fd)
            return
        end = start
    os.ftruncate(fd, 0)
    os.fsync(fd)
