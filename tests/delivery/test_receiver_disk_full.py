"""The receiver after a write that fails part-way: the torn bytes never spoil the next notification.

The failure is the operating system's own: the receiver runs in a child process whose file size
limit (RLIMIT_FSIZE) is lowered so that a write stops part-way and the next one fails with EFBIG,
as on a full disk.
"""

from __future__ import annotations

import re

import httpx
import pytest

from sendframe.delivery.callbacks import read_callbacks

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
