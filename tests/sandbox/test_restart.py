"""Durability: a sandbox on the same database file resumes pending work after a restart."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import httpx

from sendframe.sandbox import Sandbox


def test_pending_work_campaigns_and_otp_codes_survive_a_restart(tmp_path):
    db = str(tmp_path / "sandbox.sqlite")
    schedule = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y%m%d%H%M%S")
    with Sandbox(db=db, clock="manual") as first:
        auth = (first.username, first.api_password)
        body = httpx.post(f"{first.base_url}/api/rest/sms", auth=auth, json={
            "message": "Code {OTP_CODE}", "to": ["447700900001", "447700900002"], "from": "Shop",
            "campaignName": "spring", "scheduleDate": schedule, "otpConfig": {"maxSecondsValidity": 600}}).json()
        codes = {r["recipient"]: r["message"].split()[-1] for _, r in first.messages().iterrows()}
        assert set(first.messages()["status"]) == {"SCHEDULED"}
    with Sandbox(db=db, clock="manual") as second:
        auth = (second.username, second.api_password)
        assert len(second.messages()) == 2
        second.advance(2 * 3600)
        frame = second.messages()
        assert set(frame["status"]) == {"DELIVRD"}
        assert all([e["type"] for e in events][:2] == ["sent", "delivered"] for events in frame["events"])
        again = httpx.post(f"{second.base_url}/api/rest/sms", auth=auth,
                           json={"message": "x", "to": ["447700900003"], "from": "Shop",
                                 "campaignName": "spring"}).json()
        assert again["campaignId"] == body["campaignId"] and again["sendingId"] == body["sendingId"] + 1
        check = httpx.post(f"{second.base_url}/api/rest/otp/check", auth=auth,
                           json={"to": "447700900002", "code": codes["447700900002"]}).json()["data"]
        assert check["status"] in ("valid", "expired")  # the new manual clock starts at the wall clock


def test_a_real_clock_sandbox_finishes_due_work_left_by_a_stopped_one(tmp_path):
    db = str(tmp_path / "real.sqlite")
    with Sandbox(db=db, clock="manual") as first:
        httpx.post(f"{first.base_url}/api/rest/sms", auth=(first.username, first.api_password),
                   json={"message": "x", "to": ["447700900010"], "from": "Shop"})
        first.advance(0)  # sent, but ACCEPTD and DELIVRD still pending
        assert first.advance(0)["pending"]["steps"] >= 1
    with Sandbox(db=db) as second:
        deadline = datetime.now(UTC) + timedelta(seconds=10)
        while second.messages().iloc[0]["status"] != "DELIVRD" and datetime.now(UTC) < deadline:
            time.sleep(0.05)
        assert second.messages().iloc[0]["status"] == "DELIVRD"
