"""Resuming a campaign against the real sandbox: a table exported again, and two runs on one ledger."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from sendframe import send_sms
from sendframe.campaign.ledger import Ledger
from sendframe.errors import LedgerInUseError, SendframeWarning
from tests.campaign.recipients import phone_maker, sent_per_recipient

phones = phone_maker("4479114")


def exported_again(contacts, top):
    """The CSV re-exported with rows inserted at the top: every later row gets a new label."""
    return pd.concat([top, contacts]).reset_index(drop=True)


def test_a_table_exported_again_with_a_row_on_top_sends_only_the_new_row(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = pd.DataFrame({"phone": phones(10), "name": [f"N{i}" for i in range(10)]})
    first = send_sms(contacts, "Hi {name}", "Shop", client=client, ledger=ledger, batch_size=4, progress=False)
    newer = exported_again(contacts, pd.DataFrame({"phone": phones(1), "name": ["New"]}))
    again = send_sms(newer, "Hi {name}", "Shop", client=client, ledger=ledger, batch_size=4, progress=False)
    assert again.index.equals(newer.index)
    assert again["outcome"].eq("accepted").all()
    assert again["id"].iloc[1:].tolist() == first["id"].tolist()  # the old rows' answers, on their new labels
    assert (sent_per_recipient(sb, newer["phone"]) == 1).all()
    assert len(sent_per_recipient(sb, newer["phone"])) == 11


def test_a_recipient_twice_in_the_table_is_sent_once_more_only_when_a_third_row_appears(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    twice, other = phones(1) * 2, phones(1)
    contacts = pd.DataFrame({"phone": twice + other, "name": ["A", "B", "C"]})
    send_sms(contacts, "Hi {name}", "Shop", client=client, ledger=ledger, progress=False, keep="duplicate")
    reordered = pd.DataFrame({"phone": other + twice, "name": ["C", "A", "B"]})  # sorted differently, same rows
    send_sms(reordered, "Hi {name}", "Shop", client=client, ledger=ledger, progress=False, keep="duplicate")
    assert sent_per_recipient(sb, twice + other).to_dict() == {twice[0]: 2, other[0]: 1}
    grown = exported_again(contacts, pd.DataFrame({"phone": twice[:1], "name": ["A again"]}))
    result = send_sms(grown, "Hi {name}", "Shop", client=client, ledger=ledger, progress=False, keep="duplicate")
    assert result["outcome"].eq("accepted").all()
    assert sent_per_recipient(sb, twice + other).to_dict() == {twice[0]: 3, other[0]: 1}


def test_rows_left_unknown_or_not_sent_keep_their_state_when_labels_move(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = pd.DataFrame({"phone": phones(6)})
    sb.faults(status=500)
    with pytest.warns(SendframeWarning):
        send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, concurrency=1,
                 stop_after_unknown=1, progress=False)  # batch 1 unknown, the rest not attempted
    sb.clear_faults()
    newer = exported_again(contacts, pd.DataFrame({"phone": phones(2)}))
    with pytest.warns(SendframeWarning, match="2 row\\(s\\) have an unknown outcome"):
        again = send_sms(newer, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert again["outcome"].astype(str).tolist() == ["accepted"] * 2 + ["unknown"] * 2 + ["accepted"] * 4
    assert Ledger(ledger).unknown_rows()["row"].tolist() == [0, 1]  # listed under the labels they were sent with
    resent = send_sms(newer, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False,
                      resend_unknown=True)
    assert resent["outcome"].eq("accepted").all()
    assert Ledger(ledger).unknown_rows().empty
    assert len(Ledger(ledger).rows()) == len(newer)  # one ledger row per contact, whatever its label became
    assert (sent_per_recipient(sb, newer["phone"]) == 1).all()


def test_a_second_run_on_a_ledger_in_use_fails_at_once_and_sends_nothing(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = pd.DataFrame({"phone": phones(4)})
    sb.faults(delay_s=0.5)  # the first run takes a while
    results = {}
    first = threading.Thread(target=lambda: results.setdefault("first", send_sms(
        contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, concurrency=1, progress=False)))
    first.start()
    deadline = time.monotonic() + 10
    while Ledger(ledger).next_batch() == 1 and time.monotonic() < deadline:  # wait for its first intent
        time.sleep(0.02)
    started = time.monotonic()
    with pytest.raises(LedgerInUseError, match=f"The ledger {ledger} is in use by another run"):
        send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert time.monotonic() - started < 0.5
    first.join(20)
    assert results["first"]["outcome"].eq("accepted").all()
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()
    again = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert again["outcome"].eq("accepted").all()  # the lock went with the first run
