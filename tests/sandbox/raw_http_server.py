"""A test helper: an HTTP/1.1 server on asyncio protocols, in a thread, whose answers the test chooses by path.

It answers pipelined requests in order, records what it got (paths in order, requests per read,
connections), and behaves by the path's first segment:

    /ok             200, Content-Length, keep-alive
    /status/503     that status
    /close          200 with ``Connection: close``, then closes (a server that does not keep alive)
    /chunked        200, a chunked body of a few chunks
    /big            200 with a Content-Length of 200,000 bytes (sent whole)
    /bigchunked     200, a chunked body of 200,000 bytes
    /eof            200 without Content-Length: the body ends when the connection closes
    /slow           never answered (later requests on the connection wait behind it)
    /drop           the connection is closed without an answer to it or to anything after it
    /dropfirst      like /drop on the server's first connection, like /ok afterwards
"""

from __future__ import annotations

import asyncio
import socket
import threading


def _answer(status: int, body: bytes = b"ok", extra: str = "") -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n{extra}\r\n").encode() + body


def _chunked(body: bytes, size: int) -> bytes:
    chunks = [body[i:i + size] for i in range(0, len(body), size)]
    return (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"".join(b"%x;ext=1\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\nX-Trailer: 1\r\n\r\n")


class _Protocol(asyncio.Protocol):
    def __init__(self, server: RawServer) -> None:
        self.server = server
        self.buffer = b""
        self.held = False
        self.number = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.server.connections += 1
        self.server.open.append(self)
        self.number = self.server.connections

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.held:
            return
        heads = []
        while b"\r\n\r\n" in self.buffer:
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            heads.append(head)
        self.server.reads.append(len(heads))
        out = []
        for head in heads:
            target = head.split(b" ")[1].decode()
            self.server.requests.append(target)
            self.server.heads.append(head)
            kind = target.split("?")[0].strip("/").split("/")
            if kind[0] == "dropfirst":
                kind = ["drop"] if self.number == 1 else ["ok"]
            if kind[0] == "slow":
                self.held = True
                break
            if kind[0] == "drop":
                self.transport.write(b"".join(out))
                self.transport.close()
                self.held = True
                return
            if kind[0] == "status":
                status = int(kind[1])
                out.append(_answer(status, b"") if status in (204, 304) else _answer(status))
            elif kind[0] == "close":
                out.append(_answer(200, extra="Connection: close\r\n"))
                self.transport.write(b"".join(out))
                self.transport.close()
                self.held = True
                return
            elif kind[0] == "chunked":
                out.append(_chunked(b"abcdefghij" * 30, 70))
            elif kind[0] == "big":
                out.append(_answer(200, b"x" * 200_000))
            elif kind[0] == "bigchunked":
                out.append(_chunked(b"y" * 200_000, 8192))
            elif kind[0] == "eof":
                out.append(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")
                self.transport.write(b"".join(out))
                self.transport.close()
                self.held = True
                return
            else:
                out.append(_answer(200))
        if out:
            self.transport.write(b"".join(out))


class RawServer:
    """``with RawServer() as server: server.url("/ok?id=1")``; see the module docstring."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.heads: list[bytes] = []
        self.reads: list[int] = []
        self.connections = 0
        self.open: list[_Protocol] = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def url(self, path: str) -> str:
        return self.base + path

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(self.loop.create_server(lambda: _Protocol(self), sock=self.sock))
        self.started.set()
        self.loop.run_forever()
        server.close()
        for protocol in self.open:
            protocol.transport.abort()
        self.loop.run_until_complete(asyncio.sleep(0))

    def __enter__(self) -> RawServer:
        self.thread.start()
        self.started.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
