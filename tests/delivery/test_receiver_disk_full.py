"""The receiver after a write that fails part-way: the torn bytes never spoil the next notification.

The failure is the operating system's own: the receiver runs in a child process whose file size
limit (RLIMIT_FSIZE) is lowered so that a write stops part-way and the next one fails with EFBIG,
as on a full disk; or the log sits on a small tmpfs filled to its last byte (ENOSPC), or is /dev/full.
"""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest

from sendframe.delivery.callbacks import read_callbacks
from sendframe.delivery.receiver import Receiver
from sendframe.errors import DiskFullError

from .limited_receiver import limited_receiver

resource = pytest.importorskip("resource")  # POSIX only


LINE = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00\t[^\t\n]+\n")


def test_a_failed_write_is_cut_off_and_later_notifications_read_back_intact(tmp_path):
    log = tmp_path / "callbacks.log"
    with limited_receiver(log) as (url, tell):
        base = url.split("?")[0]
        assert httpx.get(base + "?id=first&status=DELIVRD&delivery=1&part=1").status_code == 200
        acknowledged = log.stat().st_size
        tell(f"limit {acknowledged + 20}")  # the next line (32-character arrival time alone) stops part-way
        with pytest.raises(httpx.HTTPError):  # no answer at all rather than a false 200
            httpx.get(base + "?id=second&status=DELIVRD&delivery=1&part=1", timeout=10)
        assert log.stat().st_size == acknowledged  # the torn 20 bytes are gone
        tell("unlimit")
        assert httpx.get(base + "?id=third&status=UNDELIV&delivery=2&part=1&ref=crm").status_code == 200

    lines = log.read_bytes().splitlines(keepends=True)
    assert lines[0].startswith(b"#params\t")
    assert all(LINE.fullmatch(line) for line in lines[1:]) and len(lines) == 3
    frame = read_callbacks(log)
    assert frame.attrs["junk_lines"] == 0
    assert frame["id"].tolist() == ["first", "third"]
    assert frame["status"].astype(str).tolist() == ["DELIVRD", "UNDELIV"]
    assert frame["delivery"].tolist() == [1, 2]
    assert frame["received_at"].notna().all()


def test_a_full_disk_is_answered_507_and_nothing_acknowledged_is_lost(small_disk, caplog):
    log = small_disk.path / "callbacks.log"
    with Receiver(log) as receiver, httpx.Client(timeout=10) as http:
        base = receiver.notification_url.split("?")[0]
        assert http.get(base + "?id=first&status=DELIVRD&delivery=1&part=1").status_code == 200
        small_disk.fill()
        acknowledged, status = [], 200
        while status == 200 and len(acknowledged) < 200:  # the log's last page still has room for a few lines
            size = log.stat().st_size
            status = http.get(base + f"?id=n{len(acknowledged)}&status=DELIVRD").status_code
            if status == 200:
                acknowledged.append(f"n{len(acknowledged)}")
        assert status == 507  # Insufficient Storage: the service sends it again later
        assert log.stat().st_size == size  # nothing of the refused line stays
        small_disk.free()
        assert http.get(base + "?id=third&status=UNDELIV&delivery=2&part=1").status_code == 200
    assert read_callbacks(log)["id"].tolist() == ["first", *acknowledged, "third"]
    assert any(f"The disk holding {log} is full" in r.getMessage() for r in caplog.records)


def test_a_receiver_whose_log_is_on_a_full_disk_does_not_start_and_names_the_log():
    with pytest.raises(DiskFullError, match="The disk holding /dev/full is full: the receiver cannot start"):
        Receiver("/dev/full").start()
    done = subprocess.run([sys.executable, "-m", "sendframe.cli", "receive", "--log", "/dev/full"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("sendframe receive: The disk holding /dev/full is full")
