"""207 on every channel: one result item per recipient over raw HTTP, and per-row outcomes on the frame's index.

Each channel gets one good and one bad recipient. The raw answer must be 207 with the items in request
order (spec, "Result item" and "Errors"); the DataFrame-level send must map the same answer back to the
contacts' own labels (a non-default index, so a positional mix-up cannot pass).
"""

from __future__ import annotations

import httpx
import pandas as pd
import pytest

from sendframe import send_landingsms, send_mailing, send_voice, send_voice_audio, send_whatsapp
from sendframe.api.client import Client

GOOD_PHONE, BAD_PHONE = "447700900123", "12"
GOOD_EMAIL, BAD_EMAIL = "ana@example.com", "not-an-email"
AUDIO = "https://example.org/a.mp3"
WA_SENDER, WA_TEMPLATE = "34911111111", 1002  # template 1002: one body variable

# channel -> (path, recipients, raw request body without the recipients, how the body carries them)
RAW = {
    "mailing": ("/api/rest/mailing", [GOOD_EMAIL, BAD_EMAIL],
                {"fromEmail": "news@example.org", "replyTo": "news@example.org", "subject": "Hi",
                 "body": "<p>Hello</p>"}),
    "voice": ("/api/rest/voice", [GOOD_PHONE, BAD_PHONE], {"message": "Hello", "language": "en_GB", "gender": "F"}),
    "voiceAudio": ("/api/rest/voiceAudio", [GOOD_PHONE, BAD_PHONE], {"audioUrl": AUDIO}),
    "landingsms": ("/api/rest/landingsms", [GOOD_PHONE, BAD_PHONE],
                   {"message": "See {LAND_URL}", "from": "Shop", "templateBody": "<p>Hi</p>"}),
    "whatsapp": ("/api/rest/whatsapp", [GOOD_PHONE, BAD_PHONE], {"templateId": WA_TEMPLATE, "from": WA_SENDER}),
}
CHANNELS = list(RAW)


def raw_body(channel: str) -> dict:
    _, recipients, body = RAW[channel]
    if channel == "whatsapp":
        return {**body, "messages": [{"to": to, "bodyFields": ["Ana"]} for to in recipients]}
    return {**body, "to": recipients}


def send_frame(channel: str, client: Client) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(contacts, result) of the DataFrame-level send of the same good/bad pair, on the labels a, b."""
    _, recipients, _ = RAW[channel]
    column = "email" if channel == "mailing" else "phone"
    contacts = pd.DataFrame({column: recipients, "name": ["Ana", "Bo"]}, index=["a", "b"])
    common = {"client": client, "progress": False, "keep": "invalid"}  # the service answers for the bad one
    send = {
        "mailing": lambda: send_mailing(contacts, "Hi", "<p>Hello</p>", from_email="news@example.org",
                                        reply_to="news@example.org", **common),
        "voice": lambda: send_voice(contacts, "Hello", language="en_GB", gender="F", **common),
        "voiceAudio": lambda: send_voice_audio(contacts, AUDIO, **common),
        "landingsms": lambda: send_landingsms(contacts, "See {LAND_URL}", "Shop", template_body="<p>Hi</p>", **common),
        "whatsapp": lambda: send_whatsapp(contacts, WA_TEMPLATE, WA_SENDER, body_fields=("name",), **common),
    }[channel]
    return contacts, send()


@pytest.fixture
def api(sb):
    sb.clear_faults()
    with httpx.Client(base_url=sb.base_url, auth=(sb.username, sb.api_password), timeout=30) as http:
        yield http


@pytest.mark.parametrize("channel", CHANNELS)
def test_one_good_and_one_bad_recipient_answer_207_with_one_item_each_in_request_order(api, channel):
    path, recipients, _ = RAW[channel]
    r = api.post(path, json=raw_body(channel))
    assert r.status_code == 207, r.text
    answer = r.json()
    assert isinstance(answer["campaignId"], int) and isinstance(answer["sendingId"], int)
    good, bad = answer["result"]  # exactly one item per recipient
    assert [good["to"], bad["to"]] == recipients
    assert good["accepted"] is True and isinstance(good["id"], str) and good["id"]
    assert "error" not in good
    assert bad["accepted"] is False
    assert "id" not in bad  # the spec: id only when accepted
    assert isinstance(bad["error"]["code"], int) and bad["error"]["code"] == 102
    assert isinstance(bad["error"]["description"], str) and bad["error"]["description"].strip()


def test_whatsapp_partial_items_carry_only_accepted_to_and_id_or_error(api):
    good, bad = api.post(RAW["whatsapp"][0], json=raw_body("whatsapp")).json()["result"]
    assert set(good) == {"accepted", "to", "id"}
    assert set(bad) == {"accepted", "to", "error"}


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_partial_answer_gives_accepted_and_rejected_rows_on_the_contacts_index(sb, api, client, channel):
    expected_error = api.post(RAW[channel][0], json=raw_body(channel)).json()["result"][1]["error"]
    contacts, result = send_frame(channel, client)
    assert result.index.tolist() == ["a", "b"]
    assert result.loc["a", "outcome"] == "accepted" and result.loc["a", "accepted"] == True  # noqa: E712 (pandas bool)
    assert isinstance(result.loc["a", "id"], str) and pd.isna(result.loc["a", "error_code"])
    assert result.loc["b", "outcome"] == "rejected" and result.loc["b", "accepted"] == False  # noqa: E712
    assert pd.isna(result.loc["b", "id"])
    assert result.loc["b", "error_code"] == expected_error["code"] == 102
    assert result.loc["b", "error_description"] == expected_error["description"]
    # the accepted row's id is the message the service stored for the good recipient
    stored = sb.messages().set_index("id")
    assert stored.loc[result.loc["a", "id"], "recipient"] == RAW[channel][1][0]
    assert stored.loc[result.loc["a", "id"], "channel"] == channel
