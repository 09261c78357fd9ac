"""Receiver: token, group-committed durable log, malformed requests, restart."""

from __future__ import annotations

import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pandas as pd
import pytest

from sendframe.api.notifications import ESCAPE_CODES
from sendframe.delivery.receiver import Receiver
from sendframe.errors import ConfigurationError


def base(receiver: Receiver) -> str:
    return receiver.notification_url.split("?")[0]


def test_notification_url_carries_all_twelve_codes_the_token_and_own_parameters(tmp_path):
    with Receiver(tmp_path / "cb.log", token="t" * 22, params={"ref": "spring sale"}) as receiver:
        url = receiver.notification_url
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1" and parts.port == receiver.port
        assert parts.path.endswith("/" + "t" * 22)
        for letter, column in ESCAPE_CODES.items():
            assert f"{column}=%{letter}" in parts.query
        assert parts.query.endswith("ref=spring%20sale")
        assert "t" * 22 not in repr(receiver)


def test_generated_tokens_have_at_least_128_bits(tmp_path):
    one, two = Receiver(tmp_path / "a.log"), Receiver(tmp_path / "b.log")
    token = urlsplit(one.notification_url).path.rsplit("/", 1)[1]
    assert len(token) >= 22 and token != urlsplit(two.notification_url).path.rsplit("/", 1)[1]


def test_a_short_token_is_refused(tmp_path):
    with pytest.raises(ConfigurationError, match="16 characters"):
        Receiver(tmp_path / "cb.log", token="short")


def test_acknowledged_notifications_are_in_the_log_and_read_back(tmp_path):
    with Receiver(tmp_path / "cb.log", params={"ref": "crm"}) as receiver:
        answer = httpx.get(base(receiver) + "?id=abc&status=DELIVRD&delivery=1&mnc=01&ref=crm")
        assert answer.status_code == 200
        frame = receiver.callbacks()
    assert frame["id"].tolist() == ["abc"] and frame["mnc"].tolist() == ["01"] and frame["ref"].tolist() == ["crm"]


def test_requests_without_the_token_or_with_bad_queries_are_refused_and_not_logged(tmp_path):
    with Receiver(tmp_path / "cb.log") as receiver, httpx.Client() as client:
        url = base(receiver)
        wrong = url[:-4] + "zzzz"
        assert client.get(wrong + "?id=abc").status_code == 404
        assert client.get(url + "?id=abc&status=%zz").status_code == 400
        assert client.get(url + "?status=DELIVRD").status_code == 400  # no id
        assert client.get(url + "?id=a&x=" + "a" * 5000).status_code == 414
        assert client.post(url + "?id=abc", content=b"body").status_code == 413
        assert client.get(url + "?id=ok").status_code == 200  # still serving
        frame = receiver.callbacks()
    assert frame["id"].tolist() == ["ok"]


def test_garbage_on_the_socket_gets_400_and_the_server_keeps_serving(tmp_path):
    with Receiver(tmp_path / "cb.log") as receiver:
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as raw:
            raw.sendall(b"\x00\x01garbage\r\n\r\n")
            assert raw.recv(100).startswith(b"HTTP/1.1 400")
        assert httpx.get(base(receiver) + "?id=x1").status_code == 200


def test_values_a_service_did_not_escape_are_kept_escaped_and_read_back(tmp_path):
    with Receiver(tmp_path / "cb.log") as receiver:
        path = base(receiver).split(str(receiver.port), 1)[1]
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as raw:
            query = "id=r1&status=DELIVRD&sent_at=2026-11-21 09:30&sender=Caf\u00e9".encode()
            raw.sendall(b"GET " + path.encode() + b"?" + query + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert raw.recv(100).startswith(b"HTTP/1.1 200")
        with socket.create_connection(("127.0.0.1", receiver.port), timeout=5) as raw:  # a control byte: refused
            raw.sendall(b"GET " + path.encode() + b"?id=r2&ref=a\tb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert raw.recv(100).startswith(b"HTTP/1.1 400")
        frame = receiver.callbacks()
    assert frame["id"].tolist() == ["r1"] and frame["sender"].tolist() == ["Caf\u00e9"]
    assert frame["sent_at"].tolist() == [pd.Timestamp("2026-11-21 09:30", tz="UTC")]


def test_concurrent_requests_share_group_commits(tmp_path):
    with Receiver(tmp_path / "cb.log") as receiver:
        url = base(receiver)

        def send(worker: int) -> int:
            with httpx.Client() as client:
                return sum(client.get(f"{url}?id=w{worker}-{i}").status_code == 200 for i in range(25))

        with ThreadPoolExecutor(8) as pool:
            acknowledged = sum(pool.map(send, range(8)))
        frame = receiver.callbacks()
        commits = receiver.commits
    assert acknowledged == 200 and len(frame) == 200
    assert commits < 200  # some requests shared one fsync


def test_restart_keeps_what_was_acknowledged_and_drops_a_torn_tail(tmp_path):
    log = tmp_path / "cb.log"
    token = "k" * 22
    with Receiver(log, token=token) as receiver:
        assert httpx.get(base(receiver) + "?id=first").status_code == 200
    with log.open("ab") as handle:  # a crash in the middle of an unacknowledged write
        handle.write(b"2026-11-21T09:30:04.000000+00:00\tid=torn&sta")
    with Receiver(log, token=token) as receiver:
        assert httpx.get(base(receiver) + "?id=second").status_code == 200
        frame = receiver.callbacks()
    assert frame["id"].tolist() == ["first", "second"] and frame.attrs["junk_lines"] == 0


def test_the_notification_url_uses_the_public_address_the_service_reaches(tmp_path):
    with Receiver(tmp_path / "cb.log", public_url="https://dlr.example.com/") as receiver:
        url = receiver.notification_url
        assert url.startswith("https://dlr.example.com/dlr/") and "?id=%i&" in url
        local = f"http://127.0.0.1:{receiver.port}" + urlsplit(url).path  # what the proxy forwards
        assert httpx.get(local + "?id=p1").status_code == 200
    with pytest.raises(ConfigurationError, match="public_url"):
        Receiver(tmp_path / "cb.log", host="0.0.0.0")
    with pytest.raises(ConfigurationError, match="public_url"):
        Receiver(tmp_path / "cb.log", public_url="dlr.example.com")


def test_sendframe_receive_prints_the_public_notification_url(tmp_path):
    command = [sys.executable, "-m", "sendframe.cli", "receive", "--log", str(tmp_path / "cb.log"),
               "--public-url", "https://dlr.example.com"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            first = process.stdout.readline().strip()
        finally:
            process.terminate()
            process.wait(timeout=10)
    assert first.startswith("https://dlr.example.com/dlr/") and first.endswith("&campaign_id=%C&sending_id=%S")
    # refused before binding
    refused = subprocess.run([*command[:-2], "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "--public-url" in refused.stderr and "Traceback" not in refused.stderr
