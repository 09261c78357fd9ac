"""The receiver and HTTP/1.1 pipelining: requests sent before their answers share a group commit,
are answered in order, and each notification only once its line is on disk."""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

import pytest

from sendframe.delivery.callbacks import read_callbacks
from sendframe.delivery.receiver import Receiver

from .limited_receiver import limited_receiver

resource = pytest.importorskip("resource")  # POSIX only

STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")


def pipelined(base: str, targets: list[str], close_last: bool = True) -> list[int]:
    """Send every request in one write, then read the answers until the receiver closes; their statuses."""
    parts = urlsplit(base)
    heads = [f"GET {target} HTTP/1.1\r\nHost: x\r\n" + ("Connection: close\r\n" if close_last and i == len(targets) - 1
                                                         else "") + "\r\n" for i, target in enumerate(targets)]
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall("".join(heads).encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return [int(status) for status in STATUS.findall(received)]


def test_pipelined_requests_share_a_commit_and_are_answered_in_order(tmp_path):
    log = tmp_path / "cb.log"
    with Receiver(log) as receiver:
        path = urlsplit(receiver.notification_url).path
        before = receiver.commits
        targets = [f"{path}?id=n{i}&status=DELIVRD" for i in range(30)]
        targets[7] = "/dlr/wrong-token?id=x"         # 404, answered in its place
        targets[12] = f"{path}?status=DELIVRD"      # no id: 400
        statuses = pipelined(receiver.notification_url, targets)
        commits = receiver.commits - before
    expected = [200] * 30
    expected[7], expected[12] = 404, 400
    assert statuses == expected
    assert commits <= 3  # 28 notifications, a handful of fsyncs (one when they arrive in one read)
    ids = read_callbacks(log)["id"].tolist()
    assert ids == [f"n{i}" for i in range(30) if i not in (7, 12)]




def test_pipelined_notifications_whose_commit_fails_get_no_answer_and_leave_no_line(tmp_path):
    log = tmp_path / "callbacks.log"
    with limited_receiver(log) as (url, tell):
        path = urlsplit(url).path
        assert pipelined(url, [f"{path}?id=first{i}" for i in range(3)]) == [200, 200, 200]
        acknowledged = log.stat().st_size
        tell(f"limit {acknowledged + 20}")  # the next commit stops part-way
        try:
            statuses = pipelined(url, [f"{path}?id=lost{i}" for i in range(5)])
        except ConnectionResetError:
            statuses = []
        assert statuses == []  # no 200 for a line that is not on disk
        assert log.stat().st_size == acknowledged
        tell("unlimit")
        assert pipelined(url, [f"{path}?id=later{i}" for i in range(4)]) == [200] * 4
    ids = read_callbacks(log)["id"].tolist()
    assert ids == [f"first{i}" for i in range(3)] + [f"later{i}" for i in range(4)]


def test_pipelined_notifications_on_a_full_disk_get_507_for_the_first_and_nothing_acknowledged_is_lost(small_disk):
    log = small_disk.path / "callbacks.log"
    with Receiver(log) as receiver:
        url = receiver.notification_url
        path = urlsplit(url).path
        small_disk.fill()
        fitted = []
        while (statuses := pipelined(url, [f"{path}?id=fit{len(fitted)}"])) == [200]:  # the last page's room
            fitted.append(f"fit{len(fitted)}")
        assert statuses == [507]
        size = log.stat().st_size
        # one commit fails: its first notification is answered 507 and the connection closes; none is acknowledged
        assert pipelined(url, [f"{path}?id=lost{i}" for i in range(5)]) == [507]
        assert log.stat().st_size == size
        small_disk.free()
        assert pipelined(url, [f"{path}?id=later{i}" for i in range(4)]) == [200] * 4
    assert read_callbacks(log)["id"].tolist() == [*fitted, *(f"later{i}" for i in range(4))]
