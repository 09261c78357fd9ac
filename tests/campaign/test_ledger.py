"""The ledger: intents before sends, results after, and what a resume sees."""

from __future__ import annotations

import sqlite3

import pytest

from sendframe.campaign.ledger import Ledger, LedgerMismatchError, row_key

PARAMS = {"channel": "sms", "message": "Hi {name}", "from": "Shop"}
ANSWER = {"campaignId": 7, "sendingId": 9, "result": [
    {"accepted": True, "to": "447700900001", "id": "a" * 20, "parts": 1, "scheduledAt": None, "expiresAt": None},
    {"accepted": False, "to": "447700900002", "error": {"code": 102, "description": "not a valid phone number"}},
]}
ROWS = [(row_key(0), "447700900001"), (row_key(1), "447700900002")]


def test_an_intent_without_a_result_is_an_unknown_row(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        unknown = ledger.unknown_rows()
    assert unknown["row"].tolist() == [0, 1]
    assert unknown["recipient"].tolist() == ["447700900001", "447700900002"]
    assert unknown["reason"].str.contains("before an answer").all()


def test_an_answer_is_recorded_item_by_item_in_order(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_answer(1, ANSWER)
        rows = ledger.rows()
    assert rows["state"].tolist() == ["accepted", "rejected"]
    assert rows["id"].tolist()[0] == "a" * 20
    assert rows["error_code"].tolist()[1] == 102
    assert set(rows["campaign_id"]) == {7}


def test_the_intent_is_on_disk_before_the_send_so_another_process_sees_it(tmp_path):
    path = tmp_path / "c.sqlite"
    ledger = Ledger(path)
    ledger.record_intent(1, "fp", ROWS)
    # a second connection, as a resumed process would open, sees the committed intent
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT COUNT(*) FROM rows WHERE batch = 1").fetchone()[0] == 2
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    ledger.close()


def test_a_whole_request_rejection_rejects_every_row_of_the_batch(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_failure(1, "done", 100, "from: not a valid sender", 400)
        rows = ledger.rows()
    assert rows["state"].tolist() == ["rejected", "rejected"]
    assert rows["error_description"].tolist() == ["from: not a valid sender"] * 2


def test_an_unknown_outcome_keeps_its_reason_and_not_sent_rows_are_not_unknown(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS[:1])
        ledger.record_failure(1, "unknown", 500, "the service answered HTTP 500")
        ledger.record_intent(2, "fp2", ROWS[1:])
        ledger.record_failure(2, "not_sent", 0, "could not connect")
        assert ledger.unknown_rows()["reason"].tolist() == ["the service answered HTTP 500"]
        assert ledger.rows()["state"].tolist() == ["unknown", "not_sent"]


def test_the_latest_batch_of_a_row_wins(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_failure(1, "unknown", 0, "reset")
        ledger.record_intent(2, "fp", ROWS)
        ledger.record_answer(2, ANSWER)
        assert ledger.unknown_rows().empty
        assert ledger.next_batch() == 3


def test_a_ledger_refuses_a_campaign_with_other_parameters(tmp_path):
    path = tmp_path / "c.sqlite"
    with Ledger(path) as ledger:
        ledger.bind(PARAMS)
    with Ledger(path) as ledger:
        ledger.bind(dict(PARAMS))  # same campaign: fine
        with pytest.raises(LedgerMismatchError, match="message: the ledger has 'Hi {name}', this send has 'Bye'"):
            ledger.bind({**PARAMS, "message": "Bye"})
        with pytest.raises(LedgerMismatchError, match="from"):
            ledger.bind({**PARAMS, "from": "Other"})


def test_row_keys_keep_the_type_of_index_labels():
    import numpy as np

    assert row_key(np.int64(5)) == row_key(5) == "5"
    assert row_key("5") == '"5"'
