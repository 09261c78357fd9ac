"""Frequency caps across campaigns: histories from real ledgers, read without touching them."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.ledger import Ledger
from sendframe.campaign.ledger_rows import row_key
from sendframe.campaign.policy import frequency_capped, history_from_ledgers, recent_sends
from sendframe.errors import InputError

NOW = pd.Timestamp("2026-03-06 12:00", tz="UTC")


def _history(rows: list[tuple[str, str]]) -> pd.DataFrame:
    times = pd.to_datetime([t for _, t in rows], utc=True, format="ISO8601")
    return pd.DataFrame({"recipient": [r for r, _ in rows], "sent_at": times})


def test_a_recipient_with_n_sends_inside_the_window_is_capped_and_older_sends_do_not_count():
    history = _history([
        ("34600000001", "2026-03-01 09:00"), ("34600000001", "2026-03-05 09:00"),  # two in the last 7 days
        ("34600000002", "2026-02-20 09:00"), ("34600000002", "2026-03-05 09:00"),  # one: the other is 14 days old
    ])
    capped = frequency_capped(pd.Series(["34600000001", "34600000002", "34600000003"]), history, 2, 7, NOW)
    assert capped.tolist() == [True, False, False]
    assert recent_sends(history, 7, NOW).to_dict() == {"34600000001": 2, "34600000002": 1}


def test_the_window_starts_exactly_days_before_now():
    history = _history([("34600000001", "2026-02-27 12:00"), ("34600000001", "2026-02-27 12:00:01")])
    assert recent_sends(history, 7, NOW).to_dict() == {"34600000001": 1}  # the first is exactly 7 days old


def test_recipients_are_compared_as_read_contacts_writes_them():
    history = _history([("34600000001", "2026-03-05 09:00")])
    assert frequency_capped(pd.Series(["+34 600 00 00 01", "600000001", None]), history, 1, 7, NOW).tolist() == [
        True, True, False]


def test_naive_times_are_refused_with_a_message_saying_to_give_a_zone():
    history = _history([("34600000001", "2026-03-05 09:00")])
    with pytest.raises(InputError, match="give a zone"):
        frequency_capped(["34600000001"], history, 1, 7, pd.Timestamp("2026-03-06 12:00"))
    with pytest.raises(InputError, match="give a zone"):
        frequency_capped(["34600000001"], history.assign(sent_at=history["sent_at"].dt.tz_localize(None)), 1, 7, NOW)


@pytest.mark.parametrize("n, days, message",
                         [(0, 7, "n, the number"), (2, 0, "days must be"), (1.5, 7, "whole number")])
def test_bad_caps_are_refused(n, days, message):
    with pytest.raises(InputError, match=message):
        frequency_capped(["34600000001"], _history([]), n, days, NOW)


def _ledger_file(path: Path) -> None:
    """A ledger written by the real Ledger: one accepted, one rejected, one unknown, one not_sent, one scheduled."""
    with Ledger(path) as ledger:
        ledger.bind({"channel": "sms", "message": "Hi", "sender": "Shop"})
        ledger.record_intent(1, "f1", [(row_key(0), "34600000001"), (row_key(1), "34600000002")])
        ledger.record_answer(1, {"campaignId": 1, "sendingId": 1, "result": [
            {"accepted": True, "to": "34600000001", "id": "a" * 20},
            {"accepted": False, "to": "34600000002", "errorCode": 102, "errorDescription": "invalid"}]})
        ledger.record_intent(2, "f2", [(row_key(2), "34600000003")])  # the process died: unknown
        ledger.record_intent(3, "f3", [(row_key(3), "34600000004")])
        ledger.record_failure(3, "not_sent", 429, "rate limited", 429)
        ledger.record_intent(4, "f4", [(row_key(4), "34600000005")])
        ledger.record_answer(4, {"campaignId": 1, "sendingId": 2, "result": [
            {"accepted": True, "to": "34600000005", "id": "b" * 20, "scheduledAt": "2026-04-01T08:00:00+00:00"}]})


def test_history_from_a_ledger_counts_accepted_and_unknown_rows_and_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "spring.sqlite"
    _ledger_file(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    history = history_from_ledgers(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(zip(history["recipient"], history["state"], strict=True)) == [
        ("34600000001", "accepted"), ("34600000003", "unknown"), ("34600000005", "accepted")]
    assert history.columns.tolist() == ["recipient", "sent_at", "state", "ledger", "batch"]
    assert str(history["sent_at"].dtype) == "datetime64[us, UTC]"
    scheduled = history.set_index("recipient").loc["34600000005", "sent_at"]
    assert scheduled == pd.Timestamp("2026-04-01 08:00", tz="UTC")  # counted when the service sends it
    sent = history.set_index("recipient").loc["34600000001", "sent_at"]
    assert abs(sent - pd.Timestamp.now(tz="UTC")) < pd.Timedelta(minutes=5)  # the batch's intent time


def test_a_folder_of_ledgers_skips_other_files_and_a_named_non_ledger_is_refused(tmp_path):
    _ledger_file(tmp_path / "a.sqlite")
    _ledger_file(tmp_path / "b.db")
    (tmp_path / "notes.txt").write_text("not a ledger")
    (tmp_path / "a.sqlite-wal").write_bytes(bytes.fromhex("377f0682002de218") + bytes(24))  # SQLite's WAL header
    (tmp_path / "a.sqlite.lock").write_bytes(b"")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    history = history_from_ledgers(tmp_path)
    assert set(history["ledger"].map(lambda p: Path(p).name)) == {"a.sqlite", "b.db"}
    assert len(history) == 6
    with pytest.raises(InputError, match="not a sendframe ledger"):
        history_from_ledgers([other])
    with pytest.raises(InputError, match="does not exist"):
        history_from_ledgers(tmp_path / "missing.sqlite")


def test_frequency_cap_across_two_campaigns_sent_to_the_sandbox(sb, client, tmp_path):
    """Real HTTP: campaign 1 to A and B, campaign 2 to A; a third campaign with (2 per 7 days) skips only A."""
    first = pd.DataFrame({"phone": ["447700900101", "447700900102"], "name": ["Ana", "Bo"]})
    second = pd.DataFrame({"phone": ["447700900101"], "name": ["Ana"]})
    sendframe.send_sms(first, "Hi {name}", "Shop", client=client, ledger=tmp_path / "one.sqlite", progress=False)
    sendframe.send_sms(second, "Again {name}", "Shop", client=client, ledger=tmp_path / "two.sqlite", progress=False)
    history = history_from_ledgers(tmp_path)
    third = pd.DataFrame({"phone": ["447700900101", "447700900102", "447700900103"]})
    now = pd.Timestamp.now(tz="UTC")
    assert frequency_capped(third["phone"], history, 2, 7, now).tolist() == [True, False, False]
    assert frequency_capped(third["phone"], history, 1, 7, now).tolist() == [True, True, False]


@pytest.mark.parametrize("cap, message", [((0, 7), "n, the number"), ((1.5, 7), "whole number"),
                                          ((2, 0), "days must be"), ((2,), r"\(messages, days\)")])
def test_a_message_refuses_the_caps_frequency_capped_refuses(cap, message):
    with pytest.raises(InputError, match=message):
        sendframe.sms("Hi", sender="Shop", frequency_cap=cap, history=_history([]))


def test_a_whole_number_of_messages_may_be_written_as_a_float():
    assert sendframe.sms("Hi", sender="Shop", frequency_cap=(2.0, 7), history=_history([])).frequency_cap == (2, 7.0)
    assert frequency_capped(["34600000001"], _history([]), 2.0, 7, NOW).tolist() == [False]
