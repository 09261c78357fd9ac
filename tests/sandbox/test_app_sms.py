"""SMS and landing SMS send endpoints and the SMS lookup, over real HTTP against the sandbox."""

from __future__ import annotations

import logging
import socket
import time

import httpx
import pandas as pd
import pytest

from sendframe import Client, send_landingsms
from sendframe.errors import RequestValidationError
from sendframe.sandbox import Sandbox

OK = "447700900001"  # magic block: delivered fast
OK2 = "447700900002"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(clock="manual") as sandbox:
        yield sandbox


@pytest.fixture()
def api(sb):
    with httpx.Client(base_url=sb.base_url, auth=(sb.username, sb.api_password), timeout=30) as client:
        yield client


def sms(api, **fields):
    body = {"message": "Hello", "to": [OK], "from": "Shop", **fields}
    return api.post("/api/rest/sms", json=body)


def test_sms_to_valid_recipients_answers_202_with_the_spec_fields(api):
    r = sms(api, to=[OK, OK2])
    assert r.status_code == 202
    body = r.json()
    assert isinstance(body["campaignId"], int) and isinstance(body["sendingId"], int)
    assert [item["to"] for item in body["result"]] == [OK, OK2]
    for item in body["result"]:
        assert set(item) == {"accepted", "to", "id", "parts", "scheduledAt", "expiresAt"}
        assert item["accepted"] is True and item["parts"] == 1
        assert len(item["id"]) == 20 and item["id"] == item["id"].lower()
        assert item["scheduledAt"] is None and item["expiresAt"] is None


def test_mixed_valid_and_invalid_recipients_answer_207_in_request_order(api):
    r = sms(api, to=["123", OK, "34 600"])
    assert r.status_code == 207
    result = r.json()["result"]
    assert [i["to"] for i in result] == ["123", OK, "34 600"]
    assert [i["accepted"] for i in result] == [False, True, False]
    assert result[0]["error"]["code"] == 102 and "to[0]" in result[0]["error"]["description"]
    assert "id" not in result[0]


def test_no_valid_recipient_answers_400_with_code_102(api):
    r = sms(api, to=["123", "abc"])
    assert r.status_code == 400
    assert r.json()["error"]["code"] == 102


def test_a_single_too_long_sms_answers_400_with_code_105(api):
    r = sms(api, message="x" * 161)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == 105
    assert "2 parts" in r.json()["error"]["description"]


def test_parts_allows_a_concatenated_sms_and_uses_only_the_parts_needed(api):
    r = sms(api, message="x" * 161, parts=5)
    assert r.status_code == 202
    assert r.json()["result"][0]["parts"] == 2


def test_split_parts_counts_the_separate_messages(api):
    r = sms(api, message="y" * 320, parts=3, splitParts=True)
    assert r.json()["result"][0]["parts"] == 3


def test_utf16_text_needs_parts_of_67(api):
    r = sms(api, message="ж" * 71, encoding="utf-16", parts=2)
    assert r.json()["result"][0]["parts"] == 2


def test_sub_fills_variables_and_filters_per_recipient(api, sb):
    r = sms(api, to=[OK, OK2], message="Hi {name|upper}, {amount|formatDotComma}",
            sub=[{"name": "ana", "amount": 1234567.5}, {"name": "luis", "amount": "12"}])
    ids = [i["id"] for i in r.json()["result"]]
    records = api.get(f"/api/rest/sms/{','.join(ids)}").json()["data"]
    assert [rec["message"] for rec in records] == ["Hi ANA, 1.234.567,5", "Hi LUIS, 12"]
    assert records[0]["customFields"] == {"name": "ana", "amount": "1234567.5"}


def test_a_recipient_without_a_needed_variable_is_rejected_with_107(api):
    r = sms(api, to=[OK, OK2], message="Hi {name}", sub=[{"name": "ana"}, {"city": "x"}])
    assert r.status_code == 207
    item = r.json()["result"][1]
    assert item["error"]["code"] == 107 and "{name}" in item["error"]["description"]


def test_trans_1_replaces_accents_and_unencodable_characters_arrive_as_question_marks(api):
    ids = [sms(api, message="Olá ação", trans=1).json()["result"][0]["id"],
           sms(api, message="Olá ação").json()["result"][0]["id"]]
    records = api.get(f"/api/rest/sms/{','.join(ids)}").json()["data"]
    assert records[0]["message"] == "Ola aÇao"  # the spec table maps ç to Ç
    assert records[1]["message"] == "Ol? a??o"


def test_scheduled_and_expiring_sms_report_iso_dates(api):
    r = sms(api, scheduleDate="20991121093000", expirationDate="20991121103000")
    item = r.json()["result"][0]
    assert item["scheduledAt"] == "2099-11-21T09:30:00+00:00"
    assert item["expiresAt"] == "2099-11-21T10:30:00+00:00"


def test_a_wrong_type_answers_400_code_100_naming_the_field(api):
    r = sms(api, parts="2")
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == 100 and "parts" in error["description"]


def test_an_out_of_range_otp_length_names_the_path(api):
    r = sms(api, message="{OTP_CODE}", otpConfig={"length": 12})
    assert r.status_code == 400
    assert "otpConfig.length" in r.json()["error"]["description"]


@pytest.mark.parametrize("raw", [b"{not json", b"", b"[1, 2]", b"\xff\xfe"])
def test_malformed_bodies_answer_400_with_an_error_object(api, raw):
    r = api.post("/api/rest/sms", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == 100


def test_more_than_1000_recipients_answer_code_101(api):
    r = sms(api, to=[OK] * 1001)
    assert r.status_code == 400 and r.json()["error"]["code"] == 101


def test_an_unknown_filter_is_rejected_as_a_whole(api):
    r = sms(api, message="Hi {name|shout}", sub=[{"name": "a"}])
    assert r.status_code == 400 and r.json()["error"]["code"] == 100


def test_campaign_name_is_reused_and_each_request_is_a_new_sending(api):
    first = sms(api, campaignName="autumn", tags=["a"]).json()
    second = sms(api, campaignName="autumn").json()
    other = sms(api).json()
    assert first["campaignId"] == second["campaignId"] != other["campaignId"]
    assert first["sendingId"] != second["sendingId"]


def test_otp_code_is_sent_and_can_be_checked_once(api):
    item = sms(api, message="Code {OTP_CODE}", otpConfig={"length": 6}).json()["result"][0]
    text = api.get(f"/api/rest/sms/{item['id']}").json()["data"][0]["message"]
    code = text.split()[-1]
    assert len(code) == 6 and code.isdigit()
    check = api.post("/api/rest/otp/check", json={"to": OK, "code": code}).json()["data"]
    assert check["valid"] is True


def test_pending_otp_with_reject_if_pending_code_is_rejected_with_150(api):
    config = {"appId": "login", "rejectIfPendingCode": True}
    assert sms(api, to=[OK2], message="{OTP_CODE}", otpConfig=config).status_code == 202
    r = sms(api, to=[OK2], message="{OTP_CODE}", otpConfig=config)
    assert r.status_code == 400 and r.json()["error"]["code"] == 150


def test_unsubscribe_link_is_generated_and_unsubscribing_rejects_later_sends_with_108(api, sb):
    to = "447700900077"
    item = sms(api, to=[to], message="Stop: {UNSUB_URL}", parts=2).json()["result"][0]
    text = api.get(f"/api/rest/sms/{item['id']}").json()["data"][0]["message"]
    link = text.split()[-1]
    assert link.startswith(f"{sb.base_url}/u/") and len(link) == len(sb.base_url) + 3 + 12
    assert httpx.post(link).status_code == 200
    r = sms(api, to=[to, OK])
    assert r.status_code == 207 and r.json()["result"][0]["error"]["code"] == 108


def test_lookup_returns_the_spec_record_with_events_and_self_link(api, sb):
    message_id = sms(api).json()["result"][0]["id"]
    sb.advance(5)
    record = api.get(f"/api/rest/sms/{message_id}").json()["data"][0]
    assert set(record) == {"id", "from", "to", "message", "campaignId", "sendingId", "isDelivered", "isClicked",
                           "events", "customFields", "links"}
    assert record["links"]["self"] == f"{sb.base_url}/api/rest/sms/{message_id}"
    assert record["isDelivered"] is True and record["customFields"] == {}
    assert [e["type"] for e in record["events"]][:2] == ["sent", "delivered"]
    assert set(record["events"][0]) == {"type", "date", "isMobile", "browser", "os"}
    assert record["events"][0]["date"].endswith("+00:00")


def test_lookup_leaves_out_unknown_ids_and_answers_404_when_none_is_known(api):
    message_id = sms(api).json()["result"][0]["id"]
    partial = api.get(f"/api/rest/sms/{message_id},{'0' * 20}")
    assert partial.status_code == 200 and [r["id"] for r in partial.json()["data"]] == [message_id]
    missing = api.get(f"/api/rest/sms/{'0' * 20}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == 404


def test_lookup_of_more_than_100_ids_answers_code_101(api):
    r = api.get("/api/rest/sms/" + ",".join(f"{i:020x}" for i in range(101)))
    assert r.status_code == 400 and r.json()["error"]["code"] == 101


def test_landing_sms_links_a_landing_page_with_the_personalised_html(api, sb):
    r = api.post("/api/rest/landingsms", json={"message": "See {LAND_URL}", "to": [OK], "from": "Shop", "parts": 2,
                                               "templateBody": "<h1>Hi {name}</h1>", "sub": [{"name": "Eva"}]})
    assert r.status_code == 202
    item = r.json()["result"][0]
    assert set(item) == {"accepted", "to", "id", "parts", "scheduledAt", "expiresAt"}
    link = api.get(f"/api/rest/sms/{item['id']}").json()["data"][0]["message"].split()[-1]
    assert link.startswith(f"{sb.base_url}/l/")
    assert "<h1>Hi Eva</h1>" in httpx.get(link).text


def test_landing_sms_with_a_built_in_template_and_an_unknown_one(api):
    ok = api.post("/api/rest/landingsms", json={"message": "{LAND_URL}", "to": [OK], "from": "Shop", "parts": 2,
                                                "templateV2Id": 1, "sub": [{"name": "Eva"}]})
    assert ok.status_code == 202
    bad = api.post("/api/rest/landingsms", json={"message": "x", "to": [OK], "from": "Shop", "templateId": 99})
    assert bad.status_code == 400 and "templateId" in bad.json()["error"]["description"]


def test_a_landing_page_may_unsubscribe_but_not_link_to_itself(api, sb):
    ok = api.post("/api/rest/landingsms", json={"message": "See {LAND_URL}", "to": [OK], "from": "Shop", "parts": 2,
                                                "templateBody": "<a href='{UNSUB_URL}'>stop</a>"})
    assert ok.status_code == 202  # the message has no {UNSUB_URL}: the page's own gets a link all the same
    message_id = ok.json()["result"][0]["id"]
    link = api.get(f"/api/rest/sms/{message_id}").json()["data"][0]["message"].split()[-1]
    assert f"href='{sb.base_url}/u/" in httpx.get(link).text
    for placeholder in ("{LAND_URL}", "{OTP_CODE}"):
        bad = api.post("/api/rest/landingsms", json={"message": "See {LAND_URL}", "to": [OK], "from": "Shop",
                                                     "templateBody": f"<p>{placeholder}</p>"})
        assert bad.status_code == 400, bad.text
        error = bad.json()["error"]
        assert error["code"] == 100 and "templateBody" in error["description"] and placeholder in error["description"]


def test_the_toolkit_refuses_a_self_linking_landing_page_before_sending(sb):
    with Client(sb.base_url, sb.username, sb.api_password) as client, pytest.raises(RequestValidationError) as caught:
        send_landingsms(pd.DataFrame({"phone": [OK]}), "See {LAND_URL}", "Shop", template_body="<p>{LAND_URL}</p>",
                        client=client, progress=False)
    assert "templateBody" in str(caught.value) and "{LAND_URL}" in str(caught.value)


def test_a_client_that_disconnects_mid_body_is_logged_quietly_without_a_traceback(api, sb, caplog):
    caplog.set_level(logging.DEBUG, logger="sendframe.sandbox")
    host, port = sb.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as conn:  # half a body, then gone (as a killed client)
        conn.sendall(b"POST /api/rest/sms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Basic ZGVtbzpkZW1vLXBhc3N3b3Jk\r\nContent-Length: 1000\r\n\r\n"
                     b"{\"message\": \"Hi\"")
        time.sleep(0.2)
    deadline = time.monotonic() + 10
    while not any("disconnected" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
        time.sleep(0.05)
    ours = [r for r in caplog.records if r.name.startswith("sendframe.sandbox")]
    assert [r.levelno for r in ours if "disconnected" in r.getMessage()] == [logging.DEBUG]
    assert not [r for r in ours if r.levelno >= logging.WARNING or r.exc_info]
    assert sms(api).status_code == 202  # and the sandbox goes on serving


def test_lookup_records_match_the_stored_messages_in_request_order(api, sb):
    r = sms(api, to=[OK, OK2], message="Olá {name} \u2013 \"quoted\" \\ end",
            sub=[{"name": "ana", "note": "é \u2603"}, {"name": "luis"}])
    ids = [i["id"] for i in r.json()["result"]]
    sb.advance(5)
    asked = [ids[1], "0" * 20, ids[0], ids[1]]
    answer = api.get(f"/api/rest/sms/{','.join(asked)}")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    records = answer.json()["data"]
    assert [rec["id"] for rec in records] == [ids[1], ids[0]]
    stored = {m["id"]: m for m in api.get("/_sandbox/messages").json()["data"]}
    for record in records:
        row = stored[record["id"]]
        assert record == {
            "id": row["id"], "from": row["sender"], "to": row["recipient"], "message": row["message"],
            "campaignId": row["campaign_id"], "sendingId": row["sending_id"],
            "isDelivered": row["is_delivered"], "isClicked": row["is_clicked"], "events": row["events"],
            "customFields": row["custom_fields"], "links": {"self": f"{sb.base_url}/api/rest/sms/{row['id']}"},
        }
        assert [e["type"] for e in record["events"]][:2] == ["sent", "delivered"]
    assert records[1]["customFields"] == {"name": "ana", "note": "é \u2603"}
