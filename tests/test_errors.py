"""The one rule for a full disk (``full_disk_error`` / ``naming_full_disk``): the kernel's ENOSPC and SQLite's
SQLITE_FULL become a ``DiskFullError`` naming the file; every other failure stays what it was."""

from __future__ import annotations

import errno
import pickle
import sqlite3

import pytest

from sendframe.errors import DiskFullError, SendframeError, full_disk_error, naming_full_disk


def test_a_write_to_a_full_device_becomes_disk_full_naming_the_file():
    with pytest.raises(DiskFullError) as caught, naming_full_disk("/dev/full", "free space and run again."), \
            open("/dev/full", "wb", buffering=0) as device:
        device.write(b"x")
    error = caught.value
    assert str(error) == "The disk holding /dev/full is full: free space and run again."
    assert error.path == error.filename == "/dev/full" and error.errno == errno.ENOSPC
    assert isinstance(error, SendframeError) and isinstance(error, OSError)
    assert isinstance(error.__cause__, OSError) and error.__cause__.errno == errno.ENOSPC


def test_sqlite_database_or_disk_is_full_becomes_disk_full(tmp_path):
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x TEXT)")
    db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(DiskFullError, match=f"The disk holding {path} is full"), naming_full_disk(path, "free it."), db:
        db.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    db.close()


def test_other_failures_stay_what_they_were(tmp_path):
    denied = PermissionError(errno.EACCES, "Permission denied")
    assert full_disk_error(denied, "out.csv", "free space.") is None
    with pytest.raises(PermissionError), naming_full_disk("out.csv", "free space."):
        raise denied
    with pytest.raises(sqlite3.OperationalError, match="no such table"), naming_full_disk("c.sqlite", "free space."):
        sqlite3.connect(":memory:").execute("SELECT * FROM missing")


def test_a_full_disk_found_in_the_cause_is_named_and_the_error_survives_pickling():
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise RuntimeError("the write failed") from exc
    except RuntimeError as wrapped:
        error = full_disk_error(wrapped, "ledger.sqlite", "free space.")
    assert error is not None and error.path == "ledger.sqlite"
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is DiskFullError and str(again) == str(error) and again.path == "ledger.sqlite"
