"""send_campaign against the real sandbox: batches, 207/400 mapping, resume, unknowns, every channel."""

from __future__ import annotations

import asyncio
import time
import warnings

import pandas as pd
import pytest

from sendframe import send_landingsms, send_mailing, send_sms, send_voice, send_voice_audio, send_whatsapp
from sendframe.api.client import Client
from sendframe.campaign.ledger import Ledger
from sendframe.errors import AuthenticationError, LedgerMismatchError, SendframeWarning
from tests.campaign.recipients import phone_maker, sent_per_recipient
from tests.conftest import FAST_RETRY as FAST

phones = phone_maker("4479112")


def contacts_of(n, start_label=0):
    numbers = phones(n)
    return pd.DataFrame({"phone": numbers, "name": [f"N{i}" for i in range(n)]},
                        index=pd.RangeIndex(start_label, start_label + n))


def test_a_campaign_is_sent_in_batches_with_one_result_per_row(sb, client):
    contacts = contacts_of(1200, start_label=5)
    result = send_sms(contacts, "Hi {name}", "Shop", client=client, batch_size=500, progress=False)
    assert result.index.equals(contacts.index)
    assert result["accepted"].all()
    assert result["outcome"].eq("accepted").all()
    assert result["id"].is_unique
    assert result["batch"].value_counts().sort_index().tolist() == [500, 500, 200]
    assert result["sending_id"].nunique() == 3
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()
    assert len(sent_per_recipient(sb, contacts["phone"])) == 1200


def test_a_mixed_batch_maps_each_item_to_its_row_and_a_hopeless_batch_rejects_every_row(client):
    contacts = pd.DataFrame({"phone": phones(1) + ["12"] + phones(1) + ["34", "56"]}, index=list("abcde"))
    result = send_sms(contacts, "Hi", "Shop", client=client, batch_size=3, progress=False, keep="invalid")
    assert result["outcome"].astype(str).tolist() == ["accepted", "rejected", "accepted", "rejected", "rejected"]
    assert result["error_code"].tolist() == [pd.NA, 102, pd.NA, 102, 102]
    assert result.loc["b", "error_description"] and result.loc["d", "error_description"]
    assert result.loc["a", "accepted"] and not result.loc["b", "accepted"]


def test_running_again_with_the_same_ledger_sends_nothing_twice(sb, client, tmp_path):
    ledger = tmp_path / "spring.sqlite"
    contacts = contacts_of(30)
    first = send_sms(contacts, "Hi {name}", "Shop", client=client, ledger=ledger, batch_size=10, progress=False)
    again = send_sms(contacts, "Hi {name}", "Shop", client=client, ledger=ledger, batch_size=10, progress=False)
    pd.testing.assert_frame_equal(first, again)
    assert (sent_per_recipient(sb, contacts["phone"]) == 1).all()
    more = pd.concat([contacts, contacts_of(5, start_label=30)])
    grown = send_sms(more, "Hi {name}", "Shop", client=client, ledger=ledger, batch_size=10, progress=False)
    assert grown["outcome"].eq("accepted").all()
    assert (sent_per_recipient(sb, more["phone"]) == 1).all()


def test_a_500_leaves_rows_unknown_until_the_analyst_asks_to_resend(sb, client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(6)
    sb.faults(status=500, rate=1.0)
    with pytest.warns(SendframeWarning, match="6 row\\(s\\) have an unknown outcome"):
        result = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=3, progress=False)
    assert result["outcome"].eq("unknown").all()
    assert result["accepted"].isna().all()
    unknown = Ledger(ledger).unknown_rows()
    assert unknown["row"].tolist() == list(range(6))
    assert unknown["reason"].str.contains("500").all()
    sb.clear_faults()
    with pytest.warns(SendframeWarning):
        still = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=3, progress=False)
    assert still["outcome"].eq("unknown").all()
    assert sent_per_recipient(sb, contacts["phone"]).sum() == 0  # the 500 fault answers before processing
    resent = send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, batch_size=3, progress=False,
                      resend_unknown=True)
    assert resent["outcome"].eq("accepted").all()
    assert Ledger(ledger).unknown_rows().empty


def test_a_ledger_refuses_to_resume_another_campaign(client, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(2)
    send_sms(contacts, "Hi", "Shop", client=client, ledger=ledger, progress=False)
    with pytest.raises(LedgerMismatchError, match="message"):
        send_sms(contacts, "Bye", "Shop", client=client, ledger=ledger, progress=False)
    with pytest.raises(LedgerMismatchError, match="channel"):
        send_voice(contacts, "Hi", language="en_GB", gender="F", client=client, ledger=ledger, progress=False)


def test_wrong_credentials_stop_the_campaign_and_leave_rows_to_send_later(sb, tmp_path):
    ledger = tmp_path / "c.sqlite"
    contacts = contacts_of(4)
    with Client(sb.base_url, sb.username, "wrong", retry=FAST) as wrong, pytest.raises(AuthenticationError):
        send_sms(contacts, "Hi", "Shop", client=wrong, ledger=ledger, batch_size=2, concurrency=1, progress=False)
    with Client(sb.base_url, sb.username, sb.api_password) as right:
        result = send_sms(contacts, "Hi", "Shop", client=right, ledger=ledger, batch_size=2, progress=False)
    assert result["outcome"].eq("accepted").all()


def test_rate_limits_pace_the_batches(client):
    started = time.monotonic()
    send_sms(contacts_of(8), "Hi", "Shop", client=client, batch_size=1, requests_per_second=4, progress=False)
    assert time.monotonic() - started >= 0.9  # 4 at once, then one every 0.25 s
    started = time.monotonic()
    send_sms(contacts_of(4), "x" * 200, "Shop", parts=2, client=client, batch_size=1, parts_per_second=4,
             progress=False)  # 8 parts at 4 per second with a burst of 4
    assert time.monotonic() - started >= 0.9


def test_it_works_from_inside_a_running_event_loop_like_jupyter(client):
    contacts = contacts_of(3)

    async def notebook_cell():
        return send_sms(contacts, "Hi", "Shop", client=client, progress=False)

    assert asyncio.run(notebook_cell())["outcome"].eq("accepted").all()


def test_credentials_come_from_the_environment_when_no_client_is_given(sb, monkeypatch):
    monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
    monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
    monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
    assert send_sms(contacts_of(2), "Hi", "Shop", progress=False)["outcome"].eq("accepted").all()


def test_per_recipient_notification_urls_are_sent(sb, client):
    contacts = contacts_of(2).assign(hook=["http://127.0.0.1:9/n?id=%i&who=a", "http://127.0.0.1:9/n?id=%i&who=b"])
    result = send_sms(contacts, "Hi", "Shop", client=client, notification_url="hook", progress=False)
    assert result["outcome"].eq("accepted").all()


@pytest.mark.parametrize("channel", ["mailing", "voice", "voice_audio", "landingsms", "whatsapp"])
def test_every_channel_sends_from_a_frame(client, channel):
    contacts = contacts_of(3).assign(email=["a@example.com", "b@example.com", "c@example.com"], city=["X", "Y", "Z"])
    send = {
        "mailing": lambda: send_mailing(contacts, "Hi {name}", "<p>From {city}</p>", from_email="news@example.org",
                                        reply_to="news@example.org", client=client, progress=False),
        "voice": lambda: send_voice(contacts, "Hello {name}", language="en_GB", gender="M", client=client,
                                    progress=False),
        "voice_audio": lambda: send_voice_audio(contacts, "https://example.org/a.mp3", client=client, progress=False),
        "landingsms": lambda: send_landingsms(contacts, "{name}: {LAND_URL}", "Shop", template_body="<p>Hi</p>",
                                              client=client, progress=False),
        "whatsapp": lambda: send_whatsapp(contacts, 1003, "34911111111", header_fields=("city",),
                                          body_fields=("name", "city"), call_to_action_fields=("name",), client=client,
                                          progress=False),
    }[channel]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SendframeWarning)
        result = send()
    assert result["outcome"].eq("accepted").all(), result
    assert result["id"].notna().all()
