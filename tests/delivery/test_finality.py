"""One rule decides whether a notification is final, by its status or, without one, by its delivery value.

The campaign here is sent through the sandbox with a notificationUrl that carries ``%d`` but no
``%s``: only the delivery value (1 delivered, 2 failed, 4 intermediate, 16 rejected) says what happened.
"""

from __future__ import annotations

import time

import httpx
import pandas as pd
import pytest

from sendframe.api.client import Client
from sendframe.api.notifications import is_final_notification, notification_status
from sendframe.campaign.shortcuts import send_sms
from sendframe.delivery.callbacks import latest_status, read_callbacks
from sendframe.delivery.metrics import delivery_summary
from sendframe.delivery.outcomes import final_status_per_message, message_outcomes
from sendframe.delivery.receiver import Receiver
from sendframe.sandbox import Sandbox

# magic numbers (docs/sandbox.md): delivered, undelivered, rejected by the operator, never final (no expiry)
PHONES = ["447700900001", "447700900101", "447700900201", "447700900301"]
DELIVERY_ONLY = "?id=%i&delivery=%d&part=%n&recipient=%P&sent_at=%t&reported_at=%y&cost=%c&mnc=%m"


def test_a_final_status_or_a_final_delivery_value_without_status_makes_a_notification_final():
    status = pd.Series(["DELIVRD", "ACCEPTD", None, None, None, "UNKNOWN", "UNKNOWN", "EXPIRED", None, "ACCEPTD"])
    delivery = pd.Series([4, 1, 1, 2, 16, 1, 4, 2, None, 4], dtype="Int64")
    assert is_final_notification(status, delivery).tolist() == [
        True,   # the status is final, whatever %d says
        False,  # a known intermediate status is not overridden by %d
        True, True, True,  # no status: 1, 2 and 16 are final
        True, False,  # UNKNOWN counts as no status
        True,
        False,  # neither says anything
        False,
    ]
    assert notification_status(status, delivery).tolist()[2:5] == ["DELIVRD", "UNDELIV", "REJECTD"]


def test_the_rule_reads_categorical_statuses_and_needs_no_delivery_column():
    status = pd.Series(pd.Categorical(["DELIVRD", None, "ACCEPTD"], categories=["ACCEPTD", "DELIVRD"]), index=[7, 8, 9])
    final = is_final_notification(status)
    assert final.tolist() == [True, False, False] and final.index.tolist() == [7, 8, 9]
    assert final.dtype == bool


def _wait_for_all(receiver: Receiver, ids: list[str], timeout: float = 30.0) -> pd.DataFrame:
    """Until every message has a delivery value other than 4 (the last one: its intermediate)."""
    deadline = time.monotonic() + timeout
    while True:
        frame = receiver.callbacks()
        seen = frame.groupby("id")["delivery"].agg(set).to_dict() if not frame.empty else {}
        done = all(seen.get(i, set()) - {4} for i in ids[:-1]) and 4 in seen.get(ids[-1], set())
        if done or time.monotonic() > deadline:
            return frame
        time.sleep(0.2)


@pytest.fixture(scope="module")
def delivery_only_campaign(tmp_path_factory):
    log = tmp_path_factory.mktemp("finality") / "callbacks.log"
    with Sandbox(clock="manual") as sandbox, Receiver(log) as receiver:
        base = receiver.notification_url.split("?")[0]
        client = Client(sandbox.base_url, sandbox.username, sandbox.api_password)
        results = send_sms(pd.DataFrame({"phone": PHONES}), "Hello", "Shop", client=client,
                           notification_url=base + DELIVERY_ONLY, progress=False)
        ids = results["id"].tolist()
        sandbox.advance(3600)
        _wait_for_all(receiver, ids)
        # the intermediate notification of the delivered message arrives again, late (a retry of the service)
        late = httpx.get(f"{base}?id={ids[0]}&delivery=4&part=1&recipient={PHONES[0]}&reported_at=2099-01-01+10%3A00")
        assert late.status_code == 200
        yield results.assign(recipient=PHONES), read_callbacks(log)


def test_the_service_sends_no_status_with_this_notification_url(delivery_only_campaign):
    _, callbacks = delivery_only_campaign
    assert callbacks["status"].isna().all()
    assert set(callbacks["delivery"].dropna()) == {1, 2, 4, 16}


def test_a_late_delivery_4_never_overrides_a_delivery_1_for_the_same_part(delivery_only_campaign):
    results, callbacks = delivery_only_campaign
    latest = latest_status(callbacks).set_index("id")
    assert latest.loc[results["id"], "delivery"].tolist() == [1, 2, 16, 4]


def test_outcomes_and_summary_read_the_delivery_value_when_the_status_is_missing(delivery_only_campaign):
    results, callbacks = delivery_only_campaign
    outcomes = message_outcomes(results, callbacks, recipients=results["recipient"])
    assert outcomes["status"].astype(str).tolist() == ["DELIVRD", "UNDELIV", "REJECTD", "PENDING"]
    assert outcomes["delivered_at"].notna().tolist() == [True, False, False, False]
    row = delivery_summary(results, callbacks).iloc[0]
    assert (row["accepted"], row["delivered"], row["failed"], row["pending"]) == (4, 1, 2, 1)
    assert row["delivery_rate"] == pytest.approx(0.25)


def test_latest_status_and_the_outcomes_pick_the_same_notification_when_one_has_no_report_time():
    """One rule (api.notifications.deciding_order): a notification without %y counts as the latest of its kind."""
    callbacks = pd.DataFrame({
        "id": ["a1", "a1", "b2", "b2"], "part": [1, 1, 1, 1], "status": ["ACCEPTD", "ACCEPTD", "DELIVRD", "ACCEPTD"],
        "delivery": [4, 4, 1, 4], "sent_at": pd.NaT, "cost": 0.05, "recipient": "34600123456",
        "reported_at": pd.to_datetime(["2026-01-01 10:05", None, "2026-01-01 10:01", "2026-01-01 10:09"], utc=True),
        "mnc": ["01", "02", "03", "04"]})
    latest = latest_status(callbacks)
    decided = final_status_per_message(callbacks)
    assert latest["mnc"].tolist() == decided["mnc"].tolist() == ["02", "03"]  # b2: the final one, though earlier
