"""Email, voice, voice audio and WhatsApp send endpoints, and authentication, over real HTTP."""

from __future__ import annotations

import base64

import httpx
import pytest

from sendframe.api.templates import WHATSAPP_FIELDS, WHATSAPP_TEMPLATES
from sendframe.sandbox import Sandbox
from sendframe.sandbox.accounts import Account

OK = "447700900001"
MAIL = {"to": ["ana@example.com"], "fromEmail": "news@example.org", "replyTo": "news@example.org",
        "subject": "Hi {name}",
        "body": "<html><body><p>Hello {name}</p><a href=\"[unsubscribe_link]\">out</a></body></html>",
        "sub": [{"name": "Ana"}]}
VOICE = {"message": "Hola {name}", "to": [OK], "language": "es_ES", "gender": "F", "sub": [{"name": "Eva"}]}


@pytest.fixture(scope="module")
def sb():
    far = Account(username="far", api_password="far-pw", channels=frozenset({"sms"}), ips=frozenset({"10.9.9.9"}))
    with Sandbox(clock="manual", accounts=["smsonly:pw", far]) as sandbox:
        yield sandbox


@pytest.fixture()
def api(sb):
    with httpx.Client(base_url=sb.base_url, auth=(sb.username, sb.api_password), timeout=30) as client:
        yield client


def message(sb, message_id):
    frame = sb.messages()
    return frame[frame["id"] == message_id].iloc[0]


def test_email_is_accepted_with_its_fields_personalised_with_unsubscribe_link_and_open_pixel(api, sb):
    r = api.post("/api/rest/mailing", json=MAIL)
    assert r.status_code == 202
    item = r.json()["result"][0]
    assert set(item) == {"accepted", "to", "id", "scheduledAt"}
    row = message(sb, item["id"])
    assert row["extra"]["subject"] == "Hi Ana"
    assert "Hello Ana" in row["message"] and f'href="{sb.base_url}/u/' in row["message"]
    assert f'<img src="{sb.base_url}/o/' in row["message"] and row["message"].endswith("</body></html>")


def test_email_without_open_tracking_has_no_pixel_and_template_v2_is_used(api, sb):
    body = {**MAIL, "trackOpens": False, "templateV2Id": 1}
    body.pop("body")
    item = api.post("/api/rest/mailing", json=body).json()["result"][0]
    row = message(sb, item["id"])
    assert "/o/" not in row["message"] and "Hello Ana" in row["message"]


@pytest.mark.parametrize("field", ["fromEmail", "replyTo"])
def test_email_from_an_unvalidated_address_answers_110(api, field):
    r = api.post("/api/rest/mailing", json={**MAIL, field: "boss@elsewhere.example"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == 110 and field in r.json()["error"]["description"]


def test_email_mixed_recipients_answer_207_and_none_valid_400(api):
    mixed = api.post("/api/rest/mailing", json={**MAIL, "to": ["ana@example.com", "not-an-email"],
                                                "sub": [{"name": "a"}, {"name": "b"}]})
    assert mixed.status_code == 207 and mixed.json()["result"][1]["error"]["code"] == 102
    none = api.post("/api/rest/mailing", json={**MAIL, "to": ["nope"]})
    assert none.status_code == 400 and none.json()["error"]["code"] == 102


def test_voice_call_is_accepted_with_the_voice_fields(api, sb):
    r = api.post("/api/rest/voice", json={**VOICE, "expirationDate": "20991121093000"})
    assert r.status_code == 202
    item = r.json()["result"][0]
    assert set(item) == {"accepted", "to", "id", "scheduledAt", "expiresAt"}
    assert item["expiresAt"] == "2099-11-21T09:30:00+00:00"
    assert message(sb, item["id"])["message"] == "Hola Eva"


def test_voice_rules_of_the_spec_answer_100(api):
    r = api.post("/api/rest/voice", json={**VOICE, "language": "arb", "gender": "M"})
    assert r.status_code == 400 and r.json()["error"]["code"] == 100 and "gender" in r.json()["error"]["description"]
    r = api.post("/api/rest/voice", json={**VOICE, "retries": 6})
    assert r.status_code == 400 and "retries" in r.json()["error"]["description"]


def test_answered_call_is_charged_and_delivered(api, sb):
    item = api.post("/api/rest/voice", json=VOICE).json()["result"][0]
    assert message(sb, item["id"])["cost"] == 0
    sb.advance(10)
    row = message(sb, item["id"])
    assert row["is_delivered"] and row["cost"] > 0 and row["status"] == "DELIVRD"
    assert "answered" in [e["type"] for e in row["events"]]


def test_voice_audio_call_with_mixed_recipients(api):
    r = api.post("/api/rest/voiceAudio", json={"to": [OK, "12"], "audioUrl": "https://example.org/a.mp3"})
    assert r.status_code == 207
    assert [i["accepted"] for i in r.json()["result"]] == [True, False]


def test_whatsapp_template_is_accepted_with_only_accepted_to_id(api):
    r = api.post("/api/rest/whatsapp", json={"templateId": 1002, "from": "34911111111",
                                             "messages": [{"to": OK, "bodyFields": ["Ana"]}]})
    assert r.status_code == 202
    assert set(r.json()["result"][0]) == {"accepted", "to", "id"}


def test_whatsapp_unknown_template_answers_140(api):
    r = api.post("/api/rest/whatsapp", json={"templateId": 9, "from": "34911111111", "messages": [{"to": OK}]})
    assert r.status_code == 400 and r.json()["error"]["code"] == 140


def test_whatsapp_field_count_and_phone_are_checked_per_message(api):
    r = api.post("/api/rest/whatsapp", json={"templateId": 1003, "from": "34911111111", "messages": [
        {"to": OK, "headerFields": ["h"], "bodyFields": ["a", "b"], "callToActionFields": ["c"]},
        {"to": OK, "headerFields": ["h"], "bodyFields": ["a"], "callToActionFields": ["c"]},
        {"to": "12", "headerFields": ["h"], "bodyFields": ["a", "b"], "callToActionFields": ["c"]},
    ]})
    assert r.status_code == 207
    result = r.json()["result"]
    assert result[0]["accepted"] is True
    assert result[1]["error"]["code"] == 141 and "messages[1].bodyFields" in result[1]["error"]["description"]
    assert result[2]["error"]["code"] == 102 and set(result[2]) == {"accepted", "to", "error"}


def test_whatsapp_from_an_unregistered_sender_is_refused(api):
    r = api.post("/api/rest/whatsapp", json={"templateId": 1001, "from": "34999999999", "messages": [{"to": OK}]})
    assert r.status_code == 400 and "from" in r.json()["error"]["description"]


# ---------------------------------------------------------------- authentication


def test_missing_credentials_answer_401_with_a_basic_challenge(sb):
    r = httpx.post(f"{sb.base_url}/api/rest/sms", json={})
    assert r.status_code == 401 and r.json()["error"]["code"] == 401
    assert r.headers["www-authenticate"] == 'Basic realm="sendframe"'


@pytest.mark.parametrize("auth", [("demo", "wrong"), ("nobody", "demo-password"), ("demo", "")])
def test_wrong_credentials_answer_401(sb, auth):
    r = httpx.get(f"{sb.base_url}/api/rest/sms/{'0' * 20}", auth=auth)
    assert r.status_code == 401 and r.json()["error"]["code"] == 401


def test_malformed_authorization_header_answers_401(sb):
    r = httpx.get(f"{sb.base_url}/api/rest/sms/x", headers={"Authorization": "Basic %%%"})
    assert r.status_code == 401


def test_an_unregistered_ip_answers_403(sb):
    r = httpx.post(f"{sb.base_url}/api/rest/sms", auth=("far", "far-pw"),
                   json={"message": "x", "to": [OK], "from": "S"})
    assert r.status_code == 403 and r.json()["error"]["code"] == 403


def test_a_channel_not_enabled_answers_403_code_111_while_sms_works(sb):
    auth = ("smsonly", "pw")
    r = httpx.post(f"{sb.base_url}/api/rest/voiceAudio", auth=auth, json={"to": [OK], "audioUrl": "https://x.example/a.mp3"})
    assert r.status_code == 403 and r.json()["error"]["code"] == 111
    ok = httpx.post(f"{sb.base_url}/api/rest/sms", auth=auth, json={"message": "x", "to": [OK], "from": "S"})
    assert ok.status_code == 202


def test_accounts_only_see_their_own_messages(api, sb):
    message_id = api.post("/api/rest/sms", json={"message": "x", "to": [OK], "from": "S"}).json()["result"][0]["id"]
    r = httpx.get(f"{sb.base_url}/api/rest/sms/{message_id}", auth=("smsonly", "pw"))
    assert r.status_code == 404


def test_unknown_routes_and_methods_answer_error_objects(api):
    assert api.get("/api/rest/nothing").json()["error"]["code"] == 404
    r = api.get("/api/rest/sms")
    assert r.status_code in (404, 405) and "error" in r.json()


def test_a_hand_written_basic_header_is_accepted(sb):
    token = base64.b64encode(b"demo:demo-password").decode()
    r = httpx.get(f"{sb.base_url}/api/rest/sms/{'0' * 20}", headers={"Authorization": f"Basic {token}"})
    assert r.status_code == 404


def test_whatsapp_field_counts_come_from_the_table_preflight_reads(api):
    for template_id, counts in WHATSAPP_TEMPLATES.items():
        exact = {"to": OK, **{name: ["v"] * n for name, n in zip(WHATSAPP_FIELDS, counts, strict=True)}}
        one_more = {**exact, "bodyFields": ["v"] * (counts[1] + 1)}
        r = api.post("/api/rest/whatsapp", json={"templateId": template_id, "from": "34911111111",
                                                  "messages": [exact, one_more]})
        assert [item["accepted"] for item in r.json()["result"]] == [True, False], template_id


def test_email_links_become_tracked_short_links_and_a_click_is_recorded(api, sb):
    body = ('<html><body><a class="cta" href="https://shop.example/sale?a=1&amp;b=2">Sale</a>'
            '<img src="https://cdn.example/logo.png"><a href="mailto:help@example.org">help</a>'
            '<a href="[unsubscribe_link]">out</a></body></html>')
    item = api.post("/api/rest/mailing", json={**MAIL, "body": body}).json()["result"][0]
    html = message(sb, item["id"])["message"]
    assert f'<a class="cta" href="{sb.base_url}/s/' in html and "shop.example" not in html
    assert 'src="https://cdn.example/logo.png"' in html and 'href="mailto:help@example.org"' in html
    assert f'href="{sb.base_url}/u/' in html  # the sandbox's own links stay as they are
    short = html.split('class="cta" href="')[1].split('"')[0]
    firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0"
    click = httpx.get(short, headers={"User-Agent": firefox})
    assert click.status_code == 302 and click.headers["location"] == "https://shop.example/sale?a=1&b=2"
    row = message(sb, item["id"])
    assert row["is_clicked"] and [e["type"] for e in row["events"]].count("clicked") == 1
    untracked = api.post("/api/rest/mailing", json={**MAIL, "body": body, "trackClicks": False}).json()["result"][0]
    assert 'href="https://shop.example/sale?a=1&amp;b=2"' in message(sb, untracked["id"])["message"]
