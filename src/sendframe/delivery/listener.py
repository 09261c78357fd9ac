"""The receiver's wire: HTTP/1.1 connections on asyncio protocols, and the group-committed log.

A notification is answered 200 only once its line is on disk. Lines queued while the log is
being synced share the next write and ``fsync`` (group commit), so one sync serves every
connection that asked meanwhile, and every request a client pipelined (sent before its answers
came back): a connection takes all the complete requests in its buffer at once and answers them in
order, each notification's after its commit. Each connection has one deadline at a time: to send a whole
request head (``idle_timeout``, a slow sender is cut off) or to take its answers (``write_timeout``:
a client that does not read them is dropped, it cannot hold the receiver's memory or sockets).
Nothing waits on a commit but the connection whose notification it is.

    >>> _escaped(b"id=a1&t=2026-11-21 09:30&ref=caf\\xc3\\xa9")
    b'id=a1&t=2026-11-21%2009:30&ref=caf%C3%A9'
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import logging
import os
import re
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from sendframe.errors import DiskFullError, naming_full_disk

logger = logging.getLogger("sendframe.delivery.receiver")

MAX_TARGET = 4096          # longest request target (path + query) accepted, bytes
MAX_HEAD = 16 * 1024       # request line + headers
MAX_PIPELINE = 64          # answers one connection may have pending before its reading pauses
_QUERY_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$'()*+,;=:@/?&"
_QUERY_CHARS = frozenset(_QUERY_BYTES)
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_FIELDS = re.compile(rb"[^&=]*=[^&]*(?:&[^&=]*=[^&]*)*")  # every field has a '=' and none is empty
_HAS_ID = re.compile(rb"(?:^|&)id=[^&]")
_NON_ASCII_ESCAPE = re.compile(rb"%[89A-Fa-f][0-9A-Fa-f]")
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            413: "Content Too Large", 414: "URI Too Long", 431: "Request Header Fields Too Large",
            507: "Insufficient Storage"}
_START_FULL = "the receiver cannot start; free space and start it again (the service retries its notifications)."
_FULL = ("notifications are answered 507 and not logged until there is space again; the service sends them "
         "again later, and nothing acknowledged is lost.")


def _answer_bytes(status: int, keep: bool) -> bytes:
    body = _REASONS[status].encode() + b"\n"
    return (f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n").encode() + body


_ANSWERS = {(status, keep): _answer_bytes(status, keep) for status in _REASONS for keep in (True, False)}


def _escaped(query: bytes) -> bytes:
    """The query with raw bytes a URL may not hold (spaces, non-ASCII) percent-encoded, as a service
    that substitutes values unescaped sends them. Control characters (0x00-0x1F and DEL 0x7F) are
    left as they are for ``_valid_query`` to refuse."""
    if not query.translate(None, _QUERY_BYTES):  # every byte allowed (one C pass: this runs per request)
        return query
    return b"".join(b"%%%02X" % byte if byte == 0x20 or (byte > 0x20 and byte != 0x7F and byte not in _QUERY_CHARS)
                    else bytes([byte]) for byte in query)


def _valid_query(query: bytes) -> bool:
    """A notification: URL-safe characters only, well-formed escapes of UTF-8 text, ``name=value``
    fields, and a non-empty ``id``.

        >>> _valid_query(b"id=a1&status=DELIVRD"), _valid_query(b"status=DELIVRD"), _valid_query(b"id=a%FF")
        (True, False, False)
    """
    if not query or query.translate(None, _QUERY_BYTES) or _BAD_ESCAPE.search(query) or not _FIELDS.fullmatch(query):
        return False
    if _NON_ASCII_ESCAPE.search(query):  # escaped bytes must be UTF-8 text
        try:
            _unquote_to_bytes(query).decode("utf-8")
        except UnicodeDecodeError:
            return False
    if _HAS_ID.search(query):
        return True
    # an escaped name ('%69d') is still 'id'
    return any(_unquote_to_bytes(name) == b"id" and value for name, _, value in
               (field.partition(b"=") for field in query.split(b"&")))


def _unquote_to_bytes(text: bytes) -> bytes:
    parts = text.replace(b"+", b" ").split(b"%")
    return parts[0] + b"".join(bytes.fromhex(part[:2].decode("ascii")) + part[2:] for part in parts[1:])


@dataclass
class Counters:
    """What the receiver has done: group commits (one fsync each) and notifications acknowledged."""

    commits: int = 0
    notifications: int = 0


class LogWriter:
    """The log file: appends a batch whole or not at all, then syncs it (runs on the commit thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = -1
        self._end = 0  # length of the log up to its last committed line

    def open(self, header: bytes) -> None:
        """Open (created readable by its owner only), drop a torn last line, append ``header``.

        A full disk raises ``DiskFullError`` naming the log."""
        new = not self.path.exists()
        with naming_full_disk(self.path, _START_FULL):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            _drop_torn_tail(self._fd)
            self._end = os.lseek(self._fd, 0, os.SEEK_END)
            self.append(header, _START_FULL)
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

    def append(self, data: bytes, advice: str = _FULL) -> None:
        """Commit ``data`` whole or not at all: a failed commit (disk full, ...) is cut off the log again.

        Otherwise the torn part of the failed batch would stay and the next batch would be
        appended to it, spoiling a line that is then acknowledged. A full disk raises ``DiskFullError``
        naming the log (``advice`` says what happens next).
        """
        with naming_full_disk(self.path, advice):
            if os.lseek(self._fd, 0, os.SEEK_END) != self._end:  # an earlier cut failed: cut before writing
                self._cut_back()
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view):]
                os.fsync(self._fd)
            except OSError:
                try:
                    if os.lseek(self._fd, 0, os.SEEK_END) != self._end:  # something of the batch was written
                        self._cut_back()
                except OSError as exc:  # tried again before the next batch
                    logger.error("receiver: could not cut a failed write off the log: %s", exc)
                raise
        self._end += len(data)

    def _cut_back(self) -> None:
        os.ftruncate(self._fd, self._end)
        os.fsync(self._fd)


class Listener:
    """One running receiver: its connections and their deadlines, and the log's group commit."""

    def __init__(self, log: LogWriter, path: bytes, counters: Counters, *, max_batch: int,
                 idle_timeout: float, write_timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.log = log
        self.path = path
        self.counters = counters
        self.max_batch = max_batch
        self.idle_timeout = idle_timeout
        self.write_timeout = write_timeout
        self.connections: set[Connection] = set()
        self._lines: list[bytes] = []
        self._waiters: list[Connection] = []
        self._committing = False
        self._scheduled = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.stopping = False
        self._stamp_second = -1
        self._stamp_prefix = b""
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sendframe-receiver-log")
        self._sweeper = self.loop.create_task(self._sweep())

    def connection(self) -> Connection:
        return Connection(self)

    def arrival(self) -> bytes:
        """``<ISO 8601 UTC arrival time, 32 characters>\\t``; the date part is formatted once per second."""
        now = time.time()
        second = int(now)
        if second != self._stamp_second:
            self._stamp_prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)).encode()
            self._stamp_second = second
        return b"%s.%06d+00:00\t" % (self._stamp_prefix, int((now - second) * 1_000_000))

    def enqueue(self, line: bytes, connection: Connection) -> None:
        """Queue a notification's line; ``connection`` hears when it is on disk."""
        self._lines.append(line)
        self._waiters.append(connection)
        self._idle.clear()
        if not self._committing and not self._scheduled:  # let this loop turn's other arrivals join
            self._scheduled = True
            self.loop.call_soon(self._commit)

    def _commit(self) -> None:
        self._scheduled = False
        if self._committing or not self._lines:
            return
        lines, waiters = self._lines[:self.max_batch], self._waiters[:self.max_batch]
        del self._lines[:self.max_batch], self._waiters[:self.max_batch]
        self._committing = True
        future = self.loop.run_in_executor(self._thread, self.log.append, b"".join(lines))
        future.add_done_callback(functools.partial(self._committed, waiters))

    def _committed(self, waiters: list[Connection], future: Future[None] | asyncio.Future[None]) -> None:
        self._committing = False
        if self._lines:  # what arrived meanwhile is written while these are answered
            self._commit()
        else:
            self._idle.set()
        error = future.exception()
        if isinstance(error, DiskFullError):  # 507, never a false 200; the log is cut back
            logger.error("receiver: %s", error)
            for connection in waiters:
                connection.failed(507)
            return
        if error is not None:  # another failure: answer nothing rather than a false 200; the log is cut back
            logger.error("receiver: could not write the log: %s", error)
            for connection in waiters:
                connection.failed()
            return
        self.counters.commits += 1
        self.counters.notifications += len(waiters)
        for connection in waiters:
            connection.committed()
        for connection in dict.fromkeys(waiters):  # each connection's answers of this commit in one write
            connection.flush()

    async def _sweep(self) -> None:
        """Close connections past their deadline, a few times per shortest timeout."""
        period = max(0.05, min(1.0, self.idle_timeout / 4, self.write_timeout / 4))
        while True:
            await asyncio.sleep(period)
            now = self.loop.time()
            for connection in [c for c in self.connections if c.deadline < now and not c.waiting]:
                connection.expire()

    async def close(self) -> None:
        """Take no new request, commit and answer everything queued, then close every connection."""
        self.stopping = True
        for connection in self.connections:
            if connection.transport is not None:
                connection.transport.pause_reading()
        await self._idle.wait()
        self._sweeper.cancel()
        for connection in list(self.connections):
            if connection.stalled and connection.transport is not None:
                connection.transport.abort()
            else:
                connection.close()
        self._thread.shutdown(wait=True)
        await asyncio.sleep(0)


class Connection(asyncio.Protocol):
    """One client: every complete request in its buffer is taken at once (HTTP/1.1 pipelining), its
    notifications join the same group commit, and the answers go out in request order, a
    notification's only once its line is on disk."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        # in request order: an answer ready to send (bytes), or a notification waiting for its commit
        # (its keep-alive flag); ``commits`` says how many of the waiting ones are on disk
        self.answers: deque[bytes | bool] = deque()
        self.commits = 0
        self.paused = False    # MAX_PIPELINE answers are pending: read nothing more until some are sent
        self.stalled = False   # answers are piling up: the client does not read them
        self.last = False      # a request asked to close: nothing after it is read
        self.closing = False
        self.eof = False
        self.deadline = 0.0

    @property
    def waiting(self) -> bool:
        """Whether an answer waits for a commit (or for the ones before it)."""
        return bool(self.answers)

    # asyncio callbacks ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)
        transport.set_write_buffer_limits(high=0)  # stalled as soon as the kernel does not take an answer whole
        self.deadline = self.listener.loop.time() + self.listener.idle_timeout
        self.listener.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self.listener.connections.discard(self)

    def data_received(self, data: bytes) -> None:
        if self.last:
            return
        self.buffer = self.buffer + data if self.buffer else data
        if self.stalled:
            if len(self.buffer) > MAX_HEAD and self.transport is not None:
                self.transport.pause_reading()  # served once the answers are taken
            return
        self.serve()

    def eof_received(self) -> bool:
        self.eof = True
        return self.waiting  # keep the socket open to answer the notifications being committed

    def pause_writing(self) -> None:
        self.stalled = True
        self.deadline = self.listener.loop.time() + self.listener.write_timeout
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.stalled = False
        self.deadline = self.listener.loop.time() + self.listener.idle_timeout
        if self.transport is not None and not self.closing and not self.listener.stopping and not self.paused:
            self.transport.resume_reading()
            self.serve()

    # the listener's calls -----------------------------------------------------------------
    def committed(self) -> None:
        """One more of this connection's notifications is on disk (they are committed in order);
        the listener calls :meth:`flush` once it has marked every one of a commit."""
        self.commits += 1

    def flush(self) -> None:
        """Send the answers that are ready, in order, up to the first still waiting for its commit."""
        answers, out = self.answers, list[bytes]()
        while answers:
            first = answers[0]
            if isinstance(first, bytes):
                out.append(first)
                answers.popleft()
            elif self.commits:
                self.commits -= 1
                answers.popleft()
                out.append(_ANSWERS[200, first])
            else:
                break
        if out:
            self._write(b"".join(out))
        if not answers and not self.closing:
            if self.last:
                self.close()
            elif self.paused and self.transport is not None and not self.stalled and not self.listener.stopping:
                self.paused = False
                self.transport.resume_reading()
                self.serve()
            elif not self.listener.stopping:
                self.serve()

    def failed(self, status: int | None = None) -> None:
        """The commit of this connection's first waiting notification failed: the answers ready before it go
        out, then ``status`` (none: the connection is cut off) and the connection closes. What the client sent
        after it is not answered, so it is sent again."""
        ready: list[bytes] = []
        while self.answers and isinstance(first := self.answers[0], bytes):
            ready.append(first)
            self.answers.popleft()
        self.answers.clear()
        if status is None:
            if self.transport is not None:
                self.transport.abort()
            return
        self.last = True
        self._write(b"".join([*ready, _ANSWERS[status, False]]))
        self.close()

    def expire(self) -> None:
        """Past the deadline: a client that does not read is cut off; an idle one closed."""
        if self.transport is not None:
            if self.stalled:
                logger.info("receiver: dropping a client that does not read its answers")
                self.transport.abort()
            else:
                self.close()

    def close(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.close()

    # requests ----------------------------------------------------------------------------
    def serve(self) -> None:
        """Take every complete request in the buffer (at most ``MAX_PIPELINE`` answers pending)."""
        buffer, pos = self.buffer, 0
        while not (self.stalled or self.closing or self.last or self.listener.stopping):
            if len(self.answers) >= MAX_PIPELINE:
                self.paused = True
                if self.transport is not None:
                    self.transport.pause_reading()
                break
            end = buffer.find(b"\r\n\r\n", pos, pos + MAX_HEAD + 4)
            if end < 0:
                if len(buffer) - pos > MAX_HEAD:
                    self.answer(431, keep=False)
                elif self.eof and not self.answers:
                    self.close()
                break
            head, pos = buffer[pos:end], end + 4
            self.request(head)
        self.buffer = buffer[pos:] if pos else buffer

    def answer(self, status: int, keep: bool) -> None:
        """Answer the latest request: at once, or after the answers before it."""
        if not keep:
            self.last = True
        if self.answers:
            self.answers.append(_ANSWERS[status, keep])
        else:
            self._write(_ANSWERS[status, keep])
            if not keep:
                self.close()

    def _write(self, data: bytes) -> None:
        if self.transport is None or self.closing:
            return
        self.transport.write(data)
        timeout = self.listener.write_timeout if self.stalled else self.listener.idle_timeout
        self.deadline = self.listener.loop.time() + timeout

    def request(self, head: bytes) -> None:
        first, _, headers = head.partition(b"\r\n")
        method, _, rest = first.partition(b" ")
        target, _, version = rest.rpartition(b" ")  # a target may hold raw spaces: a service that does not escape %t
        if not target or not version.startswith(b"HTTP/1."):
            return self.answer(400, keep=False)
        connection = _connection_header(headers)
        if connection is None:
            return self.answer(413, keep=False)  # notifications carry no body; we never read one
        keep = connection == b"keep-alive" or (version == b"HTTP/1.1" and connection != b"close")
        if method != b"GET":
            return self.answer(405, keep)
        if len(target) > MAX_TARGET:
            return self.answer(414, keep=False)
        path, _, query = target.partition(b"?")
        if not hmac.compare_digest(path, self.listener.path):
            return self.answer(404, keep)
        query = _escaped(query)
        if not _valid_query(query):
            return self.answer(400, keep)
        if not keep:
            self.last = True
        self.answers.append(keep)
        self.listener.enqueue(self.listener.arrival() + query + b"\n", self)


_CONNECTION_HEADERS: dict[bytes, bytes | None] = {}


def _connection_header(headers: bytes) -> bytes | None:
    """The ``Connection`` value (lowercase; empty when none) of a request's header lines, or None when they
    announce a body. A client sends the same header lines with every request: each is read once.

        >>> _connection_header(b"Host: r\\r\\nConnection: Keep-Alive"), _connection_header(b"Content-Length: 5")
        (b'keep-alive', None)
    """
    if headers in _CONNECTION_HEADERS:
        return _CONNECTION_HEADERS[headers]
    connection: bytes | None = b""
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"connection":
            connection = value.strip().lower()
        elif name == b"transfer-encoding" or (name == b"content-length" and value.strip() not in (b"0", b"")):
            connection = None
            break
    if len(_CONNECTION_HEADERS) >= 256:
        _CONNECTION_HEADERS.clear()
    _CONNECTION_HEADERS[headers] = connection
    return connection


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
