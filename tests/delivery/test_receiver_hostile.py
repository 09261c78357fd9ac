"""The receiver against hostile clients: ones that never read, trickle their requests, send control
characters; and its log readable by its owner only. Real sockets, a real receiver."""

from __future__ import annotations

import socket
import stat
import threading
import time

import httpx
import pytest

from sendframe.delivery.receiver import Receiver
from sendframe.errors import ConfigurationError, UnknownOptionError


def path_of(receiver: Receiver) -> bytes:
    return receiver.notification_url.split("?")[0].split(str(receiver.port), 1)[1].encode()


def raw_request(receiver: Receiver, target: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as raw:
        raw.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return raw.recv(200)


def test_a_client_that_never_reads_its_answers_is_dropped_while_others_are_answered(tmp_path):
    with Receiver(tmp_path / "cb.log", write_timeout=0.5) as receiver:
        slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # its answers pile up at the receiver quickly
        slow.connect(("127.0.0.1", receiver.port))
        request = b"GET /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n"  # answered at once (404): no commit to wait for
        outcome: dict[str, object] = {}

        def flood() -> None:
            started = time.monotonic()
            try:
                for _ in range(2000):  # up to ~80 MB of requests, answers never read
                    slow.sendall(request * 1000)
                outcome["error"] = None
            except OSError as exc:  # the receiver cut the connection
                outcome["error"] = exc
            outcome["seconds"] = time.monotonic() - started

        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        answered = []
        with httpx.Client(timeout=5) as client:
            for n in range(20):  # real notifications meanwhile: answered at once
                url = receiver.notification_url.split("?")[0] + f"?id=real{n}&status=DELIVRD"
                answered.append(client.get(url).status_code)
                time.sleep(0.05)
        flooder.join(timeout=30)
        slow.close()
        frame = receiver.callbacks()
    assert answered == [200] * 20
    assert not flooder.is_alive() and isinstance(outcome["error"], (ConnectionResetError, BrokenPipeError))
    assert outcome["seconds"] < 15
    assert frame["id"].tolist() == [f"real{n}" for n in range(20)]


def test_a_client_that_reads_its_answers_slowly_but_surely_is_kept(tmp_path):
    with Receiver(tmp_path / "cb.log", write_timeout=2.0) as receiver:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as raw:
            for n in range(5):
                raw.sendall(b"GET " + path_of(receiver) + f"?id=s{n} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                time.sleep(0.3)  # reads each answer late, within the timeout
                assert raw.recv(200).startswith(b"HTTP/1.1 200")
        assert receiver.callbacks()["id"].tolist() == [f"s{n}" for n in range(5)]


def test_a_request_head_trickled_past_the_idle_timeout_is_cut_off(tmp_path):
    with Receiver(tmp_path / "cb.log", idle_timeout=0.5) as receiver:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as raw:
            started = time.monotonic()
            try:
                for byte in b"GET " + path_of(receiver) + b"?id=slow HTTP/1.1\r\nHost: x\r\n":
                    raw.sendall(bytes([byte]))
                    time.sleep(0.05)
                closed = raw.recv(100) == b""
            except (ConnectionResetError, BrokenPipeError):
                closed = True
            assert closed and time.monotonic() - started < 10
        assert httpx.get(receiver.notification_url.split("?")[0] + "?id=after").status_code == 200


@pytest.mark.parametrize("byte", [0x00, 0x01, 0x08, 0x09, 0x0B, 0x1B, 0x1F, 0x7F])
def test_raw_control_characters_in_a_query_are_refused_and_never_logged(tmp_path, byte):
    with Receiver(tmp_path / "cb.log") as receiver:
        answer = raw_request(receiver, path_of(receiver) + b"?id=c1&ref=a" + bytes([byte]) + b"b")
        assert answer.startswith(b"HTTP/1.1 400")
        escaped = raw_request(receiver, path_of(receiver) + b"?id=c2&ref=a%7Fb")  # escaped, it is data
        assert escaped.startswith(b"HTTP/1.1 200")
        frame = receiver.callbacks()
    assert frame["id"].tolist() == ["c2"]
    logged = [line.split(b"\t", 1)[1] for line in (tmp_path / "cb.log").read_bytes().splitlines()[1:]]
    assert logged == [b"id=c2&ref=a%7Fb"]


def test_the_log_is_created_readable_by_its_owner_only(tmp_path):
    log = tmp_path / "new" / "cb.log"
    with Receiver(log) as receiver:
        assert httpx.get(receiver.notification_url.split("?")[0] + "?id=m1").status_code == 200
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_timeouts_and_options_are_checked(tmp_path):
    with pytest.raises(ConfigurationError, match="write_timeout"):
        Receiver(tmp_path / "cb.log", write_timeout=0)
    with pytest.raises(UnknownOptionError, match="Did you mean 'write_timeout'"):
        Receiver(tmp_path / "cb.log", write_timout=5)  # type: ignore[call-arg]
