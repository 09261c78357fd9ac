"""The ledger: intents before sends, results after, and what a resume sees."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest

from sendframe.campaign.ledger import Ledger
from sendframe.campaign.ledger_rows import row_key, row_keys
from sendframe.errors import InputError, LedgerInUseError, LedgerMismatchError

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
    assert row_key(np.int64(5)) == row_key(5) == "5"
    assert row_key("5") == '"5"'


V1_SCHEMA = """
CREATE TABLE campaign (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE batches (
    batch INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, size INTEGER NOT NULL, state TEXT NOT NULL,
    http_status INTEGER, error_code INTEGER, error_description TEXT, campaign_id INTEGER, sending_id INTEGER,
    intent_at TEXT NOT NULL, result_at TEXT);
CREATE TABLE rows (
    batch INTEGER NOT NULL, position INTEGER NOT NULL, row_key TEXT NOT NULL, recipient TEXT NOT NULL,
    accepted INTEGER, id TEXT, parts INTEGER, scheduled_at TEXT, expires_at TEXT,
    error_code INTEGER, error_description TEXT, PRIMARY KEY (batch, position));
CREATE INDEX rows_by_key ON rows (row_key, recipient, batch);
INSERT INTO campaign VALUES ('channel', '"sms"');
INSERT INTO batches VALUES (1, 'fp1', 2, 'done', 207, NULL, NULL, 7, 9, '2026-11-21T09:00:00.000+00:00',
                            '2026-11-21T09:00:01.000+00:00');
INSERT INTO batches VALUES (2, 'fp2', 1, 'intent', NULL, NULL, NULL, NULL, NULL, '2026-11-21T09:00:02.000+00:00', NULL);
INSERT INTO rows VALUES (1, 0, '0', '447700900001', 1, 'aaaaaaaaaaaaaaaaaaaa', 1, NULL, '2026-11-22T09:00:00+00:00',
                         NULL, NULL);
INSERT INTO rows VALUES (1, 1, '1', '447700900002', 0, NULL, NULL, NULL, NULL, 102, 'not a valid phone number');
INSERT INTO rows VALUES (2, 0, '"x"', '447700900003', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
"""


def test_a_sqlite_file_that_is_not_a_ledger_is_refused_instead_of_written_into(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(InputError, match="not a sendframe ledger.*customers"):
        Ledger(path)
    with sqlite3.connect(path) as db:
        assert [name for (name,) in db.execute("SELECT name FROM sqlite_master")] == ["customers"]


def test_a_ledger_written_by_a_newer_sendframe_is_refused_with_a_reason(tmp_path):
    path = tmp_path / "new.sqlite"
    with sqlite3.connect(path) as newer:
        newer.execute("PRAGMA user_version = 99")
    with pytest.raises(InputError, match="newer sendframe.*upgrade sendframe"):
        Ledger(path)


def test_one_row_per_batch_holds_the_intent_and_the_answer(tmp_path):
    path = tmp_path / "c.sqlite"
    with Ledger(path) as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_answer(1, ANSWER, 207)
    with sqlite3.connect(path) as other:
        (keys, recipients, answer), = other.execute("SELECT row_keys, recipients, answer FROM batches").fetchall()
    assert json.loads(keys) == ["0", "1"] and json.loads(recipients) == ["447700900001", "447700900002"]
    assert json.loads(answer)["accepted"] == [True, False]


def test_lookup_follows_the_given_rows_and_leaves_unrecorded_ones_empty(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_answer(1, ANSWER)
        found = ledger.lookup([row_key(1), row_key(9), row_key(0)], ["447700900002", "447700900009", "447700900001"])
        assert found["state"].tolist() == ["rejected", pd.NA, "accepted"]
        assert found["recipient"].tolist() == ["447700900002", "447700900009", "447700900001"]
        assert found["batch"].tolist() == [1, pd.NA, 1]
        in_order = ledger.lookup([row_key(0), row_key(1)], ["447700900001", "447700900002"])
        pd.testing.assert_frame_equal(in_order, ledger.rows())


def test_an_answer_shorter_than_its_batch_leaves_the_rest_unknown(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_answer(1, {**ANSWER, "result": ANSWER["result"][:1]})
        assert ledger.rows()["state"].tolist() == ["accepted", "unknown"]


@pytest.mark.parametrize("index", [
    pd.RangeIndex(3), pd.Index([10, -2, 7], dtype="int32"), pd.Index(["a", 'q"uote', "ñ"]),
    pd.Index(["a", "b", None], dtype=object), pd.Index([1.5, 2.0, float("nan")]),
    pd.MultiIndex.from_tuples([("x", 1), ("y", 2), ("z", 3)]), pd.Index([True, False, True]),
    pd.DatetimeIndex(["2026-11-21", "2026-11-22", "2026-11-23"]), pd.Index(["a", "b", "c"], dtype="string"),
])
def test_row_keys_of_a_whole_index_are_each_labels_row_key(index):
    assert row_keys(index).to_pylist() == [row_key(label) for label in index]


# ---------------------------------------------------------------- rows whose labels moved


def test_a_table_exported_again_with_a_row_on_top_finds_its_rows_by_recipient(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        ledger.record_answer(1, ANSWER)
        # the analyst inserted a row at the top: every label moved by one
        found = ledger.lookup([row_key(0), row_key(1), row_key(2)], ["447700900009", "447700900001", "447700900002"])
    assert found["state"].tolist() == [pd.NA, "accepted", "rejected"]
    assert found["id"].tolist()[1] == "a" * 20
    assert found["row_key"].tolist() == ["0", "0", "1"]  # a matched row keeps the ledger's key; a new one its own


def test_the_kth_row_of_a_recipient_is_the_kth_recorded_row_of_that_recipient(tmp_path):
    twice = [(row_key(0), "447700900001"), (row_key(1), "447700900001")]
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", twice)
        ledger.record_answer(1, {"campaignId": 7, "sendingId": 9, "result": [
            {"accepted": True, "to": "447700900001", "id": "a" * 20},
            {"accepted": True, "to": "447700900001", "id": "b" * 20}]})
        moved = ledger.lookup([row_key(5), row_key(6), row_key(7)], ["447700900001"] * 3)
        kept = ledger.lookup([row_key(1), row_key(3)], ["447700900001"] * 2)
    # two rows recorded for the recipient, three in the table: the third is new
    assert moved["id"].tolist() == ["a" * 20, "b" * 20, pd.NA]
    assert moved["state"].tolist() == ["accepted", "accepted", pd.NA]
    # the same (label, recipient) first, then the rest by rank
    assert kept["id"].tolist() == ["b" * 20, "a" * 20]


def test_a_row_whose_recipient_changed_is_a_new_row(tmp_path):
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS[:1])
        assert ledger.lookup([row_key(0)], ["447700900005"])["state"].tolist() == [pd.NA]


# ---------------------------------------------------------------- answers checked against what was sent


def test_an_answer_item_for_another_recipient_leaves_its_row_unknown(tmp_path):
    swapped = {**ANSWER, "result": ANSWER["result"][::-1]}
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        assert ledger.record_answer(1, swapped) == 2
        rows = ledger.rows()
        unknown = ledger.unknown_rows()
    assert rows["state"].tolist() == ["unknown", "unknown"]
    assert rows["id"].isna().all() and rows["accepted"].isna().all()
    assert unknown["reason"].str.contains("answer item 1 is for '447700900002', not for '447700900001'").tolist() == [
        True, False]


def test_a_missing_item_leaves_its_row_unknown_and_an_extra_item_at_the_end_changes_no_row(tmp_path):
    extra = {**ANSWER, "result": ANSWER["result"] + [{"accepted": True, "to": "447700900003", "id": "c" * 20}]}
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        assert ledger.record_answer(1, {**ANSWER, "result": ANSWER["result"][1:]}) == 2  # item 1 missing: all shift
        assert ledger.rows()["state"].tolist() == ["unknown", "unknown"]
        assert "no item for recipient 2" in ledger.unknown_rows()["reason"].tolist()[1]
        ledger.record_intent(2, "fp", ROWS)
        assert ledger.record_answer(2, extra) == 0
        assert ledger.rows()["state"].tolist() == ["accepted", "rejected"]


def test_a_recipient_the_service_reformats_is_still_recognised(tmp_path):
    reformatted = {**ANSWER, "result": [{**ANSWER["result"][0], "to": "+44 7700 900001"}, ANSWER["result"][1]]}
    with Ledger(tmp_path / "c.sqlite") as ledger:
        ledger.record_intent(1, "fp", ROWS)
        assert ledger.record_answer(1, reformatted) == 0
        assert ledger.rows()["state"].tolist() == ["accepted", "rejected"]


# ---------------------------------------------------------------- one run per ledger


def test_a_second_hold_on_a_ledger_fails_at_once_naming_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    failures = []

    def second_run():
        try:
            with Ledger(path).exclusive():
                pass
        except LedgerInUseError as exc:
            failures.append(str(exc))

    with Ledger(path) as ledger, ledger.exclusive():
        thread = threading.Thread(target=second_run)
        thread.start()
        thread.join(5)
    assert len(failures) == 1 and str(path) in failures[0] and "in use by another run" in failures[0]
    with Ledger(path).exclusive():  # released
        pass


def test_a_ledger_held_by_another_process_names_that_process(tmp_path):
    path = tmp_path / "c.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from sendframe.campaign.ledger import Ledger\n"
         f"with Ledger({str(path)!r}).exclusive():\n    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LedgerInUseError, match=f"process {holder.pid}"), Ledger(path).exclusive():
            pass
    finally:
        holder.communicate("", timeout=30)
    with Ledger(path).exclusive():
        pass


def test_an_in_memory_ledger_needs_no_lock():
    ledger = Ledger(":memory:")
    with ledger.exclusive(), ledger.exclusive():
        pass


def test_a_read_only_ledger_lists_a_row_once_per_batch_with_its_intent_time_and_never_writes(tmp_path):
    path = tmp_path / "spring.sqlite"
    with Ledger(path) as ledger:
        ledger.record_intent(1, "f1", ROWS[:1])
        ledger.record_failure(1, "not_sent", 429, "rate limited", 429)
        ledger.record_intent(2, "f2", ROWS[:1])
        ledger.record_answer(2, ANSWER | {"result": ANSWER["result"][:1]})
    before = path.read_bytes()
    with Ledger(path, read_only=True) as reader:
        sent = reader.batch_rows()
        assert reader.rows()["batch"].tolist() == [2]  # rows(): the latest batch of each row
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.record_intent(3, "f3", ROWS[1:])
    assert path.read_bytes() == before
    assert sent[["batch", "state"]].values.tolist() == [[1, "not_sent"], [2, "accepted"]]
    assert str(sent["intent_at"].dt.tz) == "UTC" and sent["intent_at"].notna().all()


def test_a_read_only_ledger_refuses_a_file_that_is_no_ledger(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(InputError, match="not a sendframe ledger"):
        Ledger(other, read_only=True)
    assert sqlite3.connect(other).execute("SELECT name FROM sqlite_master").fetchall() == [("t",)]
