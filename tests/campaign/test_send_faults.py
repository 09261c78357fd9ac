"""send_campaign against a failing sandbox: 429 with Retry-After, dropped connections, no connection, the breaker."""

from __future__ import annotations

import socket
import threading
import time
import warnings

import pandas as pd
import pytest

from sendframe import send_sms
from sendframe.api.client import Client
from sendframe.campaign.ledger import Ledger
from sendframe.errors import AuthenticationError, CampaignStoppedWarning, SendframeWarning
from sendframe.send_outcomes import OUTCOMES
from tests.campaign.recipients import phone_maker, sent_per_recipient
from tests.conftest import FAST_RETRY as FAST

phones = phone_maker("4479113")


def contacts_of(n):
    return pd.DataFrame({"phone": phones(n), "name": [f"N{i}" for i in range(n)]})


def test_outcome_categories_say_not_sent_apart_from_rejected():
    assert OUTCOMES == ("accepted", "rejected", "unknown", "not_sent", "dry_run", "skipped_invalid", "skipped_landline",
                        "skipped_suppressed", "skipped_frequency", "skipped_preflight", "skipped_duplicate", "holdout")


def test_a_lasting_429_is_retried_after_retry_after_then_left_not_sent_for_the_next_run(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(4)
    sb.faults(status=429, retry_after=1)
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SendframeWarning)  # not_sent is no unknown outcome: no warning
        result = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert time.monotonic() - started >= 1.9  # three attempts, the service's Retry-After: 1 s between them
    assert result["outcome"].astype(str).tolist() == ["not_sent"] * 4
    assert result["error_code"].tolist() == [429] * 4
    assert result["error_description"].str.contains("nothing was sent").all()
    assert not result["accepted"].any()
    assert sent_per_recipient(sb, contacts["phone"]).sum() == 0
    assert Ledger(ledger).unknown_rows().empty
    sb.clear_faults()
    again = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert again["outcome"].eq("accepted").all()
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()


def test_a_429_that_passes_is_retried_after_its_retry_after_and_sent_once(sb, client):
    contacts = contacts_of(3)
    sb.faults(status=429, retry_after=1)
    threading.Timer(0.3, sb.clear_faults).start()
    started = time.monotonic()
    result = send_sms(contacts, "Hi", "Shop", client=client, progress=False)
    assert time.monotonic() - started >= 0.9
    assert result["outcome"].eq("accepted").all()
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()


def test_a_dropped_connection_leaves_rows_unknown_and_the_next_run_does_not_send_them_again(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(4)
    sb.faults(drop=1.0)  # the service processes the request, then closes the connection without answering
    with pytest.warns(SendframeWarning, match="4 row\\(s\\) have an unknown outcome"):
        result = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert result["outcome"].eq("unknown").all() and result["accepted"].isna().all()
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()  # they were sent: only the answer was lost
    assert sorted(Ledger(ledger).unknown_rows()["recipient"]) == sorted(contacts["phone"])
    sb.clear_faults()
    with pytest.warns(SendframeWarning, match="unknown outcome"):
        again = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, progress=False)
    assert again["outcome"].eq("unknown").all()
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()


def test_no_connection_is_not_sent_and_the_next_run_sends_it(sb, client, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(3)
    with Client(closed, sb.username, sb.api_password, retry=FAST) as nowhere:
        result = send_sms(contacts, "Hi", "Shop", client=nowhere, ledger=ledger, progress=False)
    assert result["outcome"].astype(str).tolist() == ["not_sent"] * 3
    assert result["error_description"].str.contains("run again with the same ledger").all()
    again = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, progress=False)
    assert again["outcome"].eq("accepted").all()


def test_wrong_credentials_leave_every_row_not_sent(sb, tmp_path):
    ledger = tmp_path / "c.sqlite"
    with Client(sb.base_url, sb.username, "wrong", retry=FAST) as wrong, pytest.raises(AuthenticationError):
        send_sms(contacts_of(4), "Hi", "Shop", client=wrong, ledger=ledger, batch_size=2, concurrency=1,
                 progress=False)
    assert set(Ledger(ledger).rows()["state"]) == {"not_sent"}


def test_a_failing_service_stops_the_campaign_after_three_unknown_batches_in_a_row(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(20)
    sb.faults(status=500)
    with (
        pytest.warns(CampaignStoppedWarning, match="3 batches in a row.*14 row\\(s\\) were not attempted.*same ledger"),
        pytest.warns(SendframeWarning, match="6 row\\(s\\) have an unknown outcome"),
    ):
        result = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, concurrency=1,
                          progress=False)
    assert result["outcome"].astype(str).tolist() == ["unknown"] * 6 + ["not_sent"] * 14
    assert result["batch"].isna().sum() == 14  # never attempted: no intent, no batch
    assert len(Ledger(ledger).rows()) == 6
    sb.clear_faults()
    with pytest.warns(SendframeWarning, match="6 row\\(s\\) have an unknown outcome"):
        again = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, concurrency=1,
                         progress=False)
    assert again["outcome"].astype(str).tolist() == ["unknown"] * 6 + ["accepted"] * 14
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()
    assert len(sent_per_recipient(sb, contacts["phone"])) == 14


def test_batches_in_flight_when_the_breaker_trips_finish_and_are_recorded(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(40)
    sb.faults(status=500, delay_s=0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=2, concurrency=4,
                          progress=False)
    assert [w for w in caught if issubclass(w.category, CampaignStoppedWarning)]
    outcome = result["outcome"].astype(str)
    assert 3 * 2 <= (outcome == "unknown").sum() <= (3 + 3) * 2  # the three, and at most three more in flight
    assert set(outcome) == {"unknown", "not_sent"}
    assert (result["batch"].notna() == (outcome == "unknown")).all()  # every attempted batch has its record
    assert len(Ledger(ledger).unknown_rows()) == (outcome == "unknown").sum()


def test_the_breaker_can_be_turned_off(sb, client):
    sb.faults(status=500)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = send_sms(contacts_of(10), "Hi", "Shop", client=client, batch_size=2, concurrency=1,
                          stop_after_unknown=None, progress=False)
    assert result["outcome"].eq("unknown").all()
    assert not [w for w in caught if issubclass(w.category, CampaignStoppedWarning)]
    with pytest.raises(ValueError, match="stop_after_unknown"):
        send_sms(contacts_of(1), "Hi", "Shop", client=client, stop_after_unknown=-1, progress=False)
