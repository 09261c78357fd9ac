"""A send whose ledger's disk is full: a clear error naming the ledger, nothing sent that the ledger has not
recorded, and the next run (once there is space) resumes without sending anyone twice.

The disk fills for real: a small tmpfs filled to its last byte (where the tests may mount one), or SQLite told
the ledger's file may not grow (``PRAGMA max_page_count``), which fails the same way a full disk does:
SQLITE_FULL, "database or disk is full".
"""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from sendframe import send_sms
from sendframe.campaign.ledger import Ledger, hold, is_ledger
from sendframe.cli import main
from sendframe.errors import DiskFullError, SendframeWarning
from tests.campaign.recipients import phone_maker, sent_per_recipient

phones = phone_maker("4479115")


def no_room_to_grow(ledger):
    """The ledger's file may not grow by a page: SQLite then fails every write that needs one (SQLITE_FULL)."""
    with ledger._lock:
        pages = ledger._db.execute("PRAGMA page_count").fetchone()[0]
        ledger._db.execute(f"PRAGMA max_page_count = {pages}")


def test_a_ledger_full_at_the_first_intent_sends_nothing_and_the_next_run_sends_each_row_once(sb, client, tmp_path):
    path = tmp_path / "c.sqlite"
    contacts = pd.DataFrame({"phone": phones(300)})  # one batch: its intent needs pages the file cannot take
    ledger = Ledger(path)
    no_room_to_grow(ledger)
    with pytest.raises(DiskFullError, match="The disk holding .*c.sqlite is full") as caught:
        send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=300, progress=False)
    ledger.close()
    assert caught.value.path == str(path)
    assert "run again with the same ledger" in str(caught.value)
    assert sent_per_recipient(sb, contacts["phone"]).empty  # no intent, no POST
    assert Ledger(path, read_only=True).rows().empty

    again = send_sms(contacts, "Hi", "Shop", client=client, ledger=path, batch_size=300, progress=False)
    assert again["outcome"].eq("accepted").all()
    sent = sent_per_recipient(sb, contacts["phone"])
    assert (sent == 1).all() and len(sent) == 300


def _full_between_post_and_answer(sb, client, path, contacts, fill, ledger=None):
    """Send ``contacts`` as one batch; once its intent is on disk (the sandbox holds the POST for a second), fill the
    disk, so the answer cannot be recorded. Returns the error the send raised."""
    sb.faults(delay_s=1.0)
    failure: list[BaseException] = []

    def send():
        try:
            send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger or path, batch_size=len(contacts),
                     progress=False)
        except BaseException as exc:  # noqa: BLE001  handed to the test
            failure.append(exc)

    sending = threading.Thread(target=send)
    sending.start()
    deadline = time.monotonic() + 10
    while not (is_ledger(path) and not Ledger(path, read_only=True).rows().empty):  # the file exists before its tables
        assert time.monotonic() < deadline, "the intent was never recorded"
        time.sleep(0.02)
    fill()
    sending.join(timeout=30)
    sb.clear_faults()
    assert len(failure) == 1
    return failure[0]


def _resumed_without_sending_twice(sb, client, path, contacts):
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()  # the batch was sent once
    with pytest.warns(SendframeWarning, match=f"{len(contacts)} row\\(s\\) have an unknown outcome"):
        again = send_sms(contacts, "Hi", "Shop", client=client, ledger=path, batch_size=len(contacts), progress=False)
    assert again["outcome"].eq("unknown").all()  # sent, answer lost: never sent again without resend_unknown
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()
    assert len(sent_per_recipient(sb, contacts["phone"])) == len(contacts)


def test_a_ledger_full_at_the_answer_stops_and_the_next_run_sends_nobody_twice(sb, client, tmp_path):
    path = tmp_path / "c.sqlite"
    contacts = pd.DataFrame({"phone": phones(300)})  # the answer row needs pages the file cannot take
    ledger = Ledger(path)
    error = _full_between_post_and_answer(sb, client, path, contacts, lambda: no_room_to_grow(ledger), ledger)
    ledger.close()
    assert isinstance(error, DiskFullError) and error.path == str(path)
    _resumed_without_sending_twice(sb, client, path, contacts)


def test_a_ledger_on_a_disk_that_fills_during_a_send_stops_cleanly_and_resumes(sb, client, small_disk):
    path = small_disk.path / "c.sqlite"
    contacts = pd.DataFrame({"phone": phones(40)})
    error = _full_between_post_and_answer(sb, client, path, contacts, small_disk.fill)
    assert isinstance(error, DiskFullError) and error.path == str(path)
    small_disk.free()
    _resumed_without_sending_twice(sb, client, path, contacts)


def test_sendframe_send_on_a_full_disk_says_so_in_one_line_and_sends_nothing(sb, small_disk, tmp_path, monkeypatch,
                                                                               capsys):
    monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
    monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
    contacts = pd.DataFrame({"phone": phones(5), "name": ["A", "B", "C", "D", "E"]})
    table = tmp_path / "contacts.csv"
    contacts.to_csv(table, index=False)
    ledger = small_disk.path / "c.sqlite"
    argv = ["send", str(table), "--message", "Hi {name}", "--sender", "Shop", "--ledger", str(ledger), "--no-progress"]
    small_disk.fill()
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"sendframe send: The disk holding {ledger}")  # the ledger or its lock file
    assert "is full" in err
    assert sent_per_recipient(sb, contacts["phone"].astype(str)).empty
    small_disk.free()
    assert main(argv) == 0
    assert (sent_per_recipient(sb, contacts["phone"].astype(str)) == 1).all()


def test_a_lock_file_that_cannot_be_written_on_a_full_disk_is_named(small_disk):
    ledger = small_disk.path / "c.sqlite"
    small_disk.fill()
    with pytest.raises(DiskFullError, match=f"The disk holding {ledger}.lock is full: the lock file of the ledger"), \
            hold(str(ledger)):
        pass
