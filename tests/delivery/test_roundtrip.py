"""A campaign sent through the sandbox: callbacks, records and send results agree message by message."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from sendframe.api.client import Client
from sendframe.campaign.shortcuts import send_sms
from sendframe.delivery.callbacks import latest_status
from sendframe.delivery.metrics import delivery_summary
from sendframe.delivery.receiver import Receiver
from sendframe.delivery.records import fetch_records
from sendframe.errors import InputError
from sendframe.sandbox import Sandbox


def wait_for_finals(receiver: Receiver, ids: set[str], timeout: float = 30.0) -> pd.DataFrame:
    deadline = time.monotonic() + timeout
    while True:
        frame = receiver.callbacks()
        latest = latest_status(frame)
        final = set(latest.loc[latest["status"].astype(str).isin(["DELIVRD", "UNDELIV", "EXPIRED", "REJECTD"]), "id"])
        if ids <= final or time.monotonic() > deadline:
            return frame
        time.sleep(0.2)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    log = tmp_path_factory.mktemp("roundtrip") / "callbacks.log"
    with Sandbox(clock="manual") as sandbox, Receiver(log, params={"ref": "spring"}) as receiver:
        client = Client(sandbox.base_url, sandbox.username, sandbox.api_password)
        phones = [f"4477009{n:05d}" for n in range(40)] + ["12"]  # the last one is rejected
        contacts = pd.DataFrame({"phone": phones, "name": [f"n{n}" for n in range(len(phones))]})
        results = send_sms(contacts, "Hi {name}", "Shop", client=client, notification_url=receiver.notification_url,
                           progress=False, campaign_name="spring", keep="invalid")  # the service rejects "12"
        sandbox.advance(6 * 3600)
        accepted = set(results.loc[results["accepted"].fillna(False).astype(bool), "id"].dropna())
        callbacks = wait_for_finals(receiver, accepted)
        records = fetch_records(pd.concat([results["id"], pd.Series(["0" * 20, None])]), client=client, chunk_size=7)
        truth = sandbox.messages()
        yield results, callbacks, records, truth


def test_every_accepted_message_has_a_final_callback_and_a_record(campaign):
    results, callbacks, records, _ = campaign
    accepted = set(results.loc[results["accepted"].astype(bool), "id"])
    assert len(accepted) == 40
    assert set(latest_status(callbacks)["id"]) == accepted
    assert set(records.messages["id"]) == accepted
    assert records.unknown_ids == ["0" * 20]


def test_callbacks_records_and_the_service_agree_message_by_message(campaign):
    results, callbacks, records, truth = campaign
    latest = latest_status(callbacks).set_index("id")
    messages = records.messages.set_index("id")
    service = truth.set_index("id")
    for message_id in messages.index:
        status = str(latest.loc[message_id, "status"])
        assert status == service.loc[message_id, "status"]
        assert bool(messages.loc[message_id, "is_delivered"]) == (status == "DELIVRD")
        assert latest.loc[message_id, "recipient"] == messages.loc[message_id, "recipient"]
        assert latest.loc[message_id, "campaign_id"] == messages.loc[message_id, "campaign_id"]
        assert latest.loc[message_id, "sending_id"] == messages.loc[message_id, "sending_id"]
        assert latest.loc[message_id, "ref"] == "spring"
        assert latest.loc[message_id, "cost"] == pytest.approx(service.loc[message_id, "cost"])
    by_result = results.set_index("id").loc[messages.index]
    assert (by_result["campaign_id"].to_numpy() == messages["campaign_id"].to_numpy()).all()
    assert messages["name"].notna().all()  # custom fields become columns


def test_events_are_typed_with_utc_dates(campaign):
    _, _, records, _ = campaign
    events = records.events
    assert list(events.columns) == ["id", "type", "date", "is_mobile", "browser", "os"]
    assert str(events["date"].dtype) == "datetime64[us, UTC]"
    assert set(events["type"]) >= {"sent"}


def test_summary_counts_match_the_service(campaign):
    results, callbacks, records, truth = campaign
    summary = delivery_summary(results, callbacks, records)
    row = summary.iloc[0]
    sms = truth[truth["id"].isin(results["id"])]
    assert row["sent"] == 41 and row["accepted"] == 40 and row["rejected"] == 1
    assert row["delivered"] == (sms["status"] == "DELIVRD").sum()
    assert row["delivered"] + row["failed"] + row["expired"] + row["pending"] == row["accepted"]
    assert row["delivery_rate"] == pytest.approx(row["delivered"] / 40)
    assert row["delivery_rate_denominator"] == "accepted"
    assert row["billed_cost"] == pytest.approx(sms["cost"].sum())
    by_operator = delivery_summary(results, callbacks, records, by=("mnc", "send_hour"))
    assert by_operator["accepted"].sum() == 40


def test_summary_from_callbacks_alone_and_bad_grouping(campaign):
    _, callbacks, _, _ = campaign
    assert delivery_summary(callbacks=callbacks, by="country")["accepted"].sum() == 40
    with pytest.raises(InputError, match="cannot group by"):
        delivery_summary(callbacks=callbacks, by="weekday")


def test_fetch_records_with_no_ids_returns_empty_frames():
    records = fetch_records([None, pd.NA])
    assert records.messages.empty and records.events.empty and records.unknown_ids == []
