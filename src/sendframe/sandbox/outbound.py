"""HTTP/1.1 keep-alive GETs on asyncio protocols: the sandbox notifier's transport (the policy is in ``notifier``).

A :class:`Dispatcher` keeps, per destination (scheme, host, port and the addresses the policy
checked), a few keep-alive connections opened to those addresses only, and a queue of requests
waiting for one. It never has more than ``max_in_flight`` requests written and unanswered. A new
connection carries one request until an answer shows the server keeps connections alive; from
then on up to ``max_in_flight / MAX_CONNECTIONS`` requests are pipelined on it and the answers are
matched in order. Requests on a connection the server announced it closes (``Connection: close``)
were not processed and go back to the queue; requests on a connection that breaks, times out or is
dropped for an answer longer than ``max_body`` fail (the worker's durable retry sends them again).
Each request's deadline is ``timeout`` after it is written (after the connecting started for a new
connection's first); one ``loop.call_at`` timer per connection watches the oldest.

No task per request: a batch is one future, a connection one protocol object (a task only while it
connects).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["Attempt", "Batch", "Destination", "Dispatcher"]

MAX_CONNECTIONS = 16      # per destination
FEW_CONNECTIONS = 4       # per destination, whatever the queue: more only for a queue they cannot pipeline
MAX_HEAD = 64 * 1024      # status line + headers of an answer
KEEPALIVE_IDLE = 15.0     # s: an idle connection older than this is closed rather than reused

_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _TRAILERS, _UNTIL_CLOSE = range(6)
_NO_BODY, _BY_LENGTH, _CHUNKED, _CLOSE_DELIMITED = range(4)


@dataclass(frozen=True)
class Attempt:
    """The result of one notification attempt: ``ok`` is a 2xx answer; ``error`` says why not; ``refused``
    means the outbound policy refuses the destination, so retrying cannot help (the worker gives up at once)."""

    ok: bool
    status: int | None
    error: str | None
    refused: bool = False


_ANSWERED: dict[int, Attempt] = {}


def answered(status: int) -> Attempt:
    """The attempt an answer with ``status`` makes (one shared instance per status).

        >>> answered(200), answered(302).error
        (Attempt(ok=True, status=200, error=None, refused=False), 'answered 302 (redirects are not followed)')
    """
    attempt = _ANSWERED.get(status)
    if attempt is None:
        if 200 <= status < 300:
            attempt = Attempt(True, status, None)
        elif 300 <= status < 400:
            attempt = Attempt(False, status, f"answered {status} (redirects are not followed)")
        else:
            attempt = Attempt(False, status, f"answered {status}")
        _ANSWERED[status] = attempt
    return attempt


# status, framing, Content-Length, keep-alive, whether the server announced the close
Head = tuple[int, int, int, bool, bool]
_HEADS: dict[bytes, Head] = {}


def parse_head(head: bytes) -> Head | None:
    """An answer's status line and headers (without the blank line), or None when it is not HTTP/1.x.

        >>> parse_head(b"HTTP/1.1 200 OK\\r\\nContent-Length: 3")
        (200, 1, 3, True, False)
        >>> parse_head(b"HTTP/1.0 204 No Content")
        (204, 0, 0, False, True)
    """
    known = _HEADS.get(head)
    if known is not None:
        return known
    lines = head.split(b"\r\n")
    first = lines[0].split(b" ", 2)
    if len(first) < 2 or not first[0].startswith(b"HTTP/1.") or len(first[1]) != 3 or not first[1].isdigit():
        return None
    status = int(first[1])
    length: int | None = None
    coded = chunked = False
    tokens: set[bytes] = set()
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            return None
        name, value = name.strip().lower(), value.strip()
        if name == b"content-length":
            if not value.isdigit() or (length is not None and int(value) != length):
                return None
            length = int(value)
        elif name == b"transfer-encoding":
            coded, chunked = True, value.split(b",")[-1].strip().lower() == b"chunked"
        elif name == b"connection":
            tokens.update(token.strip().lower() for token in value.split(b","))
    keep = b"keep-alive" in tokens if first[0] == b"HTTP/1.0" else b"close" not in tokens
    announced = not keep
    if status < 200 or status in (204, 304):
        framing = _NO_BODY
    elif coded:
        framing = _CHUNKED if chunked else _CLOSE_DELIMITED
    elif length is not None:
        framing = _BY_LENGTH
    else:
        framing = _CLOSE_DELIMITED
    if framing == _CLOSE_DELIMITED:
        keep = False
    parsed = (status, framing, length or 0, keep, announced)
    if len(_HEADS) >= 256:
        _HEADS.clear()
    _HEADS[head] = parsed
    return parsed


class Batch:
    """The results of one ``deliver_many``: filled in by index; ``future`` is done when none is missing."""

    __slots__ = ("future", "remaining", "results", "cancelled")

    def __init__(self, size: int, loop: asyncio.AbstractEventLoop) -> None:
        self.results: list[Attempt | None] = [None] * size
        self.remaining = size
        self.future: asyncio.Future[None] = loop.create_future()
        self.cancelled = False

    def done(self, index: int, attempt: Attempt) -> None:
        if self.results[index] is None:
            self.results[index] = attempt
            self.remaining -= 1
            if not self.remaining and not self.future.done():
                self.future.set_result(None)


# a request waiting for a connection: (batch, index, request bytes); once written: + its deadline
Job = tuple[Batch, int, bytes]
Sent = tuple[Batch, int, bytes, float]


class Connection(asyncio.Protocol):
    """One keep-alive connection: writes requests, reads the answers in order, watches the oldest's deadline."""

    def __init__(self, destination: Destination, first_deadline: float) -> None:
        self.destination = destination
        self.dispatcher = destination.dispatcher
        self.loop = self.dispatcher.loop
        self.transport: asyncio.Transport | None = None
        self.sent: deque[Sent] = deque()
        self.confirmed = False     # an answer showed the server keeps the connection alive: pipelining allowed
        self.closed = False
        self.first_deadline = first_deadline
        self.idle_since = self.loop.time()
        self.timer: asyncio.TimerHandle | None = None
        self.buffer = b""
        self.state = _HEAD
        self.status = 0
        self.keep = False
        self.announced = False
        self.remaining = 0
        self.read = 0
        # the last answer read whole in one piece with a short body, and its head: a server answers every
        # notification alike, so the next identical answer is taken without parsing it again
        self.repeat = b""
        self.repeat_head: Head = (0, _NO_BODY, 0, False, False)

    # ------------------------------------------------------------------------ sending
    def room(self) -> int:
        if self.closed:
            return 0
        if not self.confirmed:
            return 0 if self.sent else 1
        return self.dispatcher.depth - len(self.sent)

    def send(self, jobs: list[Job]) -> int:
        """Write ``jobs`` (those of cancelled batches are dropped); return how many were written."""
        now = self.loop.time()
        deadline = now + self.dispatcher.timeout
        if self.first_deadline:
            deadline, self.first_deadline = min(deadline, self.first_deadline), 0.0
        live = [(batch, index, request, deadline) for batch, index, request in jobs if not batch.cancelled]
        if not live or self.transport is None:
            return 0
        self.sent.extend(live)
        self.transport.write(b"".join([job[2] for job in live]))
        if self.timer is None:
            self.timer = self.loop.call_at(self.sent[0][3], self._check_deadline)
        return len(live)

    def _check_deadline(self) -> None:
        self.timer = None
        if not self.sent or self.closed:
            return
        if self.sent[0][3] > self.loop.time():
            self.timer = self.loop.call_at(self.sent[0][3], self._check_deadline)
            return
        batch, index, _, _ = self.sent.popleft()
        batch.done(index, Attempt(False, None, f"timed out after {self.dispatcher.timeout:g} s"))
        self.drop(1, "connection failed: dropped after an earlier answer on it timed out")

    # ------------------------------------------------------------------------ asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.closed:
            return
        released = 0
        if self.sent and self.state == _UNTIL_CLOSE:  # the end of a close-delimited answer
            self._complete()
            released = 1
        self.keep = False
        self.drop(released, "connection failed: closed before the answer")

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        buf = self.buffer + data if self.buffer else data
        self.buffer = b""
        pos, done, size = 0, 0, len(buf)
        while pos < size:
            state = self.state
            if state == _HEAD:
                if done and not self.keep:  # the server closes after that answer: nothing more to read
                    break
                if not self.sent:
                    return self.drop(done, "connection failed: an answer nobody asked for")
                if self.repeat and buf.startswith(self.repeat, pos):
                    pos += len(self.repeat)
                    self.status, _, _, self.keep, self.announced = self.repeat_head
                    done += self._complete()
                    continue
                end = buf.find(b"\r\n\r\n", pos)
                if end < 0:
                    if size - pos > MAX_HEAD:
                        return self.drop(done, "connection failed: answer headers too long")
                    break
                head = parse_head(buf[pos:end])
                start, pos = pos, end + 4
                if head is None:
                    return self.drop(done, "connection failed: not an HTTP/1.1 answer")
                status, framing, length, self.keep, self.announced = head
                if status < 200:
                    if status == 101:
                        return self.drop(done, "connection failed: the server switched protocols")
                    continue  # an interim answer (103 Early Hints, ...): the real one follows
                self.status, self.read = status, 0
                if framing == _NO_BODY or (framing == _BY_LENGTH and length == 0):
                    self.repeat, self.repeat_head = buf[start:pos], head
                    done += self._complete()
                elif framing == _BY_LENGTH:
                    if length > self.dispatcher.max_body:  # read none of it: drop the connection instead
                        done += self._complete()
                        return self.drop(done, "connection failed: dropped after an answer longer than max_body")
                    if length <= 256 and size - pos >= length:  # the whole answer is here
                        pos += length
                        self.repeat, self.repeat_head = buf[start:pos], head
                        done += self._complete()
                    else:
                        self.state, self.remaining = _LENGTH, length
                elif framing == _CHUNKED:
                    self.state = _CHUNK_SIZE
                else:
                    self.state = _UNTIL_CLOSE
            elif state in (_LENGTH, _CHUNK_DATA):
                take = min(size - pos, self.remaining)
                pos += take
                self.remaining -= take
                if self.remaining:
                    break
                if state == _LENGTH:
                    done += self._complete()
                else:
                    self.state = _CHUNK_SIZE
            elif state in (_CHUNK_SIZE, _TRAILERS):
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    if size - pos > 4096:
                        return self.drop(done, "connection failed: a chunk header too long")
                    break
                line, pos = buf[pos:end], end + 2
                if state == _TRAILERS:
                    if not line:
                        done += self._complete()
                    continue
                if not line and self.read:  # the CRLF that ends a chunk's data
                    continue
                try:
                    chunk = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    return self.drop(done, "connection failed: a bad chunk header")
                self.read += chunk
                if self.read > self.dispatcher.max_body:
                    done += self._complete()
                    return self.drop(done, "connection failed: dropped after an answer longer than max_body")
                if chunk == 0:
                    self.state = _TRAILERS
                else:
                    self.state, self.remaining = _CHUNK_DATA, chunk
            else:  # _UNTIL_CLOSE
                self.read += size - pos
                pos = size
                if self.read > self.dispatcher.max_body:
                    done += self._complete()
                    return self.drop(done, "connection failed: dropped after an answer longer than max_body")
        if pos < size:
            self.buffer = buf[pos:]
        if done:
            if self.state == _HEAD and not self.keep:
                return self.drop(done, "connection failed: closed before the answer")
            if not self.sent:
                self.idle_since = self.loop.time()
            self.dispatcher.released(done)

    # ------------------------------------------------------------------------ answers
    def _complete(self) -> int:
        batch, index, _, _ = self.sent.popleft()
        batch.done(index, answered(self.status))
        self.state = _HEAD
        if self.keep:
            self.confirmed = True
        return 1

    def drop(self, released: int, reason: str) -> None:
        """Close for good: requests the server announced it would not process go back to the queue, the
        other unanswered ones fail with ``reason``."""
        if not self.closed:
            self.closed = True
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if self.transport is not None:
                self.transport.abort()
            released += len(self.sent)
            if self.announced:
                self.destination.queue.extendleft((b, i, r) for b, i, r, _ in reversed(self.sent))
            else:
                failure = Attempt(False, None, reason)
                for batch, index, _, _ in self.sent:
                    batch.done(index, failure)
            self.sent.clear()
            self.destination.lost(self)
        if released:
            self.dispatcher.released(released)


class Destination:
    """One destination pinned to its checked addresses: its connections and the requests waiting for one."""

    def __init__(self, dispatcher: Dispatcher, host: str, port: int, addresses: tuple[str, ...],
                 ssl_context: ssl.SSLContext | None) -> None:
        self.dispatcher = dispatcher
        self.host = host
        self.port = port
        self.addresses = addresses
        self.ssl_context = ssl_context
        self.connections: list[Connection] = []
        self.opening: set[asyncio.Task[None]] = set()
        self.queue: deque[Job] = deque()

    def feed(self, room: int) -> int:
        """Write up to ``room`` queued requests on the connections that can take them; open another
        connection when requests are left over. Returns how many were written."""
        queue, written = self.queue, 0
        stale = self.dispatcher.loop.time() - KEEPALIVE_IDLE
        for connection in list(self.connections):
            if not queue or written >= room:
                break
            if not connection.sent and connection.idle_since < stale:
                connection.drop(0, "")
                continue
            take = min(connection.room(), room - written, len(queue))
            if take > 0:
                written += connection.send([queue.popleft() for _ in range(take)])
        # another connection when the waiting requests outnumber the connections being opened (each takes one): up to
        # FEW_CONNECTIONS, more only for a queue deeper than the open ones pipeline, never more than could carry a
        # request at once
        opened = len(self.connections) + len(self.opening)
        wanted = min(self.dispatcher.max_connections, max(FEW_CONNECTIONS, -(-len(queue) // self.dispatcher.depth)))
        if len(queue) > len(self.opening) and written < room and opened < wanted:
            task = self.dispatcher.loop.create_task(self._open())
            self.opening.add(task)
            task.add_done_callback(self.opening.discard)
        return written

    def lost(self, connection: Connection) -> None:
        if connection in self.connections:
            self.connections.remove(connection)
        if self.queue:
            self.dispatcher.waiting[self] = None

    async def _open(self) -> None:
        loop = self.dispatcher.loop
        timeout = self.dispatcher.timeout
        started = loop.time()
        reason = ""
        opened: Connection | None = None
        try:
            async with asyncio.timeout(timeout):
                error: OSError = OSError("no address")
                for address in self.addresses:  # only the addresses the policy checked
                    try:
                        _, opened = await loop.create_connection(
                            lambda: Connection(self, started + timeout), address, self.port, ssl=self.ssl_context,
                            server_hostname=self.host if self.ssl_context is not None else None)
                        if not opened.closed:
                            self.connections.append(opened)
                        return
                    except OSError as failed:
                        error = failed
                raise error
        except TimeoutError:
            reason = f"timed out after {timeout:g} s"
        except OSError as error:
            reason = f"connection failed: {type(error).__name__}"
        finally:
            self.opening.discard(cast(Any, asyncio.current_task()))
            if reason and not self.connections and not self.opening:  # nothing else can take them: they fail
                failure = Attempt(False, None, reason)
                while self.queue:
                    batch, index, _ = self.queue.popleft()
                    batch.done(index, failure)
            self.dispatcher.pump()
            if opened is not None and not opened.sent:  # nothing waited for it: its first request's clock starts later
                opened.first_deadline = 0.0


class Dispatcher:
    """The destinations of one notifier and the bound on requests in flight across all of them."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, max_in_flight: int, timeout: float, max_body: int) -> None:
        self.loop = loop
        self.max_in_flight = max_in_flight
        self.max_connections = min(MAX_CONNECTIONS, max_in_flight)  # per destination
        self.depth = max(1, -(-max_in_flight // MAX_CONNECTIONS))
        self.timeout = timeout
        self.max_body = max_body
        self.in_flight = 0
        self.destinations: dict[tuple[Any, ...], Destination] = {}
        self.waiting: dict[Destination, None] = {}
        self._pumping = False

    def destination(self, key: tuple[Any, ...], host: str, port: int, addresses: tuple[str, ...],
                    ssl_context: ssl.SSLContext | None) -> Destination:
        found = self.destinations.get(key)
        if found is None:
            if len(self.destinations) >= 1024:
                self._forget_idle()
            found = self.destinations[key] = Destination(self, host, port, addresses, ssl_context)
        return found

    def submit(self, destination: Destination, jobs: list[Job]) -> None:
        destination.queue.extend(jobs)
        self.waiting[destination] = None
        self.pump()

    def released(self, count: int) -> None:
        self.in_flight -= count
        self.pump()

    def pump(self) -> None:
        """Write waiting requests while fewer than ``max_in_flight`` are unanswered, taking destinations in turn."""
        if self._pumping:
            return
        self._pumping = True
        try:
            while self.in_flight < self.max_in_flight and self.waiting:
                progress = False
                for destination in list(self.waiting):
                    room = self.max_in_flight - self.in_flight
                    if room <= 0:
                        break
                    written = destination.feed(room)
                    self.in_flight += written
                    del self.waiting[destination]
                    if destination.queue:
                        self.waiting[destination] = None  # to the back of the line
                    progress = progress or written > 0
                if not progress:
                    break
        finally:
            self._pumping = False

    def _forget_idle(self) -> None:
        for key, destination in list(self.destinations.items()):
            if not destination.queue and not destination.opening and not any(c.sent for c in destination.connections):
                for connection in list(destination.connections):
                    connection.drop(0, "")
                del self.destinations[key]

    async def close(self) -> None:
        """Close every connection; requests still queued or unanswered fail."""
        for destination in list(self.destinations.values()):
            for task in list(destination.opening):
                task.cancel()
            for connection in list(destination.connections):
                connection.drop(0, "connection failed: the notifier closed")
            failure = Attempt(False, None, "connection failed: the notifier closed")
            while destination.queue:
                batch, index, _ = destination.queue.popleft()
                batch.done(index, failure)
        self.destinations.clear()
        self.waiting.clear()
        await asyncio.sleep(0)
