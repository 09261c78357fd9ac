"""The sandbox on a full disk: a send it cannot store is refused with 507 and nothing of it is kept (nor
sent later); once there is space the same request is accepted, each message once.

The disk fills for real: SQLite told the database may not grow (``PRAGMA max_page_count``, the same
SQLITE_FULL a full disk gives), or a small tmpfs filled to its last byte where the tests may mount one.
"""

from __future__ import annotations

import subprocess
import sys

import httpx

from sendframe.errors import ErrorCode
from sendframe.sandbox import Sandbox


def send(sb, recipients):
    return httpx.post(f"{sb.base_url}/api/rest/sms", auth=(sb.username, sb.api_password), timeout=30,
                      json={"message": "Hi", "from": "Shop", "to": recipients})


def recipients(start, n):
    return [f"4479116{i:05d}" for i in range(start, start + n)]


def stored(sb, numbers):
    messages = sb.messages()
    return messages[messages["recipient"].isin(numbers)]["recipient"].value_counts()


def _refused_then_accepted(sb, fill, free):
    assert send(sb, recipients(0, 1)).status_code == 202
    fill()
    wanted = recipients(100, 300)
    refused = send(sb, wanted)
    assert refused.status_code == 507
    assert refused.json()["error"]["code"] == ErrorCode.INSUFFICIENT_STORAGE == 507
    assert "disk is full" in refused.json()["error"]["description"]
    free()
    assert stored(sb, wanted).empty  # nothing of the refused request was kept
    accepted = send(sb, wanted)
    assert accepted.status_code == 202 and all(item["accepted"] for item in accepted.json()["result"])
    sent = stored(sb, wanted)
    assert len(sent) == 300 and (sent == 1).all()


def test_a_send_the_database_cannot_store_is_refused_with_507_and_kept_nowhere(tmp_path, caplog):
    with Sandbox(db=str(tmp_path / "sandbox.sqlite"), clock="manual") as sb:
        db = sb.state.db

        def fill():
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")

        _refused_then_accepted(sb, fill, lambda: db.execute("PRAGMA max_page_count = 1073741823"))
    logged = [r.getMessage() for r in caplog.records if r.name == "sendframe.sandbox"]
    assert any(f"The disk holding {tmp_path / 'sandbox.sqlite'} is full" in line for line in logged)


def test_a_sandbox_on_a_small_disk_that_fills_refuses_with_507_and_serves_again_once_freed(small_disk):
    with Sandbox(db=str(small_disk.path / "sandbox.sqlite"), clock="manual") as sb:
        _refused_then_accepted(sb, small_disk.fill, small_disk.free)


def test_sendframe_sandbox_on_a_full_disk_says_so_in_one_line(small_disk):
    small_disk.fill()
    database = small_disk.path / "sandbox.sqlite"
    done = subprocess.run([sys.executable, "-m", "sendframe.cli", "sandbox", "--db", str(database), "--port", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"sendframe sandbox: The disk holding {database} is full")
