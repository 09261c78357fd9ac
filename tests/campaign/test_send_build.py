"""Turning a contact frame into requests: dry runs, sub arrays, notification URLs, input checks."""

from __future__ import annotations

import dataclasses
import hashlib

import pandas as pd
import pytest

from sendframe import landing_sms, message, send_sms, send_whatsapp, sms, whatsapp
from sendframe.api.models import parse_request
from sendframe.campaign.batching import CampaignSpec, TokenBucket, plan_batches
from sendframe.campaign.message import RESULT_COLUMNS
from sendframe.campaign.shortcuts import send_campaign
from sendframe.errors import InputError, RequestValidationError


@pytest.fixture
def contacts():
    return pd.DataFrame({
        "phone": ["447700900001", "447700900002", "447700900003"],
        "name": ["Ana", "Bo", None],
        "city": ["Leeds", "York", "Hull"],
        "total": [1234.5, 2.0, 3.25],
        "hook": ["https://h.example/a", "https://h.example/b", "https://h.example/c"],
    }, index=pd.Index([10, 20, 30], name="contact_id"))


def test_a_dry_run_validates_every_batch_and_sends_nothing(contacts):
    result = send_sms(contacts, "Hi {name}", "Shop", dry_run=True, batch_size=2, progress=False, keep="preflight")
    assert list(result.columns) == list(RESULT_COLUMNS)
    assert result["recipient"].tolist() == contacts["phone"].tolist()
    assert result["text"].tolist()[:2] == ["Hi Ana", "Hi Bo"] and result["text"].isna().tolist()[2]
    assert result.index.equals(contacts.index)
    assert (result["outcome"] == "dry_run").all()
    assert result["batch"].tolist() == [1, 1, 2]
    assert result["parts"].tolist() == [1, 1, 1]
    assert str(result["scheduled_at"].dtype) == "datetime64[us, UTC]"
    assert str(result["accepted"].dtype) == "boolean"


def test_a_dry_run_counts_parts_of_the_rendered_text(contacts):
    long_name = contacts.assign(name=["x" * 150, "Bo", "Cy"])
    result = send_sms(long_name, "Hi {name}, see you", "Shop", parts=3, dry_run=True, progress=False)
    assert result["parts"].tolist() == [2, 1, 1]


def test_sub_holds_only_the_variables_the_template_needs_as_text(contacts):
    spec = CampaignSpec.build(contacts, sms("Hi {name|upper}, {total|formatDotComma}", sender="Shop"))
    body = spec.payload([0, 1, 2])
    assert body["to"] == ["447700900001", "447700900002", "447700900003"]
    assert body["sub"] == [{"name": "Ana", "total": "1234.5"}, {"name": "Bo", "total": "2"}, {"total": "3.25"}]
    assert "city" not in str(body)


def test_a_batch_with_every_value_present_sends_them_by_name_in_row_order(contacts):
    spec = CampaignSpec.build(contacts, sms("{city}: {name}, {total}", sender="Shop"))
    assert spec.payload([1, 0])["sub"] == [{"city": "York", "name": "Bo", "total": "2"},
                                           {"city": "Leeds", "name": "Ana", "total": "1234.5"}]
    only_city = CampaignSpec.build(contacts, sms("{city}", sender="Shop"))
    assert only_city.payload([0, 1, 2])["sub"] == [{"city": "Leeds"}, {"city": "York"}, {"city": "Hull"}]


def test_a_template_without_variables_sends_no_sub(contacts):
    assert "sub" not in CampaignSpec.build(contacts, sms("Sale today", sender="Shop")).payload([0])


def test_notification_url_may_name_a_column_for_per_recipient_addresses(contacts):
    spec = CampaignSpec.build(contacts, sms("Hi", sender="Shop", notification_url="hook"))
    assert spec.payload([0, 2])["notificationUrl"] == ["https://h.example/a", "https://h.example/c"]
    literal = CampaignSpec.build(contacts, sms("Hi", sender="Shop", notification_url="https://x.example/n?id=%i"))
    assert literal.payload([0])["notificationUrl"] == "https://x.example/n?id=%i"


def test_landing_sms_refuses_a_per_recipient_notification_url(contacts):
    with pytest.raises(InputError, match="only allowed for sms"):
        CampaignSpec.build(contacts, landing_sms("{LAND_URL}", "Shop", template_body="<p>x</p>",
                                                 notification_url="hook"))


def test_whatsapp_fields_come_from_columns_in_order(contacts):
    spec = CampaignSpec.build(contacts, whatsapp(1, "Shop", body_fields=("name", "city"), header_fields=("city",)))
    message = spec.payload([0])["messages"][0]
    assert message == {"to": "447700900001", "bodyFields": ["Ana", "Leeds"], "headerFields": ["Leeds"]}
    result = send_whatsapp(contacts, 1002, "Shop", body_fields=("city",), dry_run=True, progress=False)
    assert (result["outcome"] == "dry_run").all()


def test_a_variable_without_a_column_is_named_before_anything_is_sent(contacts):
    with pytest.raises(InputError, match=r"\{surname\}"):
        send_sms(contacts, "Hi {surname}", "Shop", dry_run=True, progress=False)


def test_a_request_rule_broken_by_every_batch_is_refused_up_front(contacts):
    with pytest.raises(RequestValidationError, match="from"):
        send_sms(contacts, "Hi", "This sender is far too long", dry_run=True, progress=False)


def test_batches_are_bounded_by_the_service_limit(contacts):
    with pytest.raises(InputError, match="between 1 and 1000"):
        send_sms(contacts, "Hi", "Shop", batch_size=1001, dry_run=True, progress=False)


def test_repeated_index_labels_are_refused(contacts):
    with pytest.raises(InputError, match="reset_index"):
        send_sms(contacts.set_axis([1, 1, 2]), "Hi", "Shop", dry_run=True, progress=False)


def test_the_callers_frame_is_not_modified(contacts):
    before = contacts.copy(deep=True)
    send_sms(contacts, "Hi {name}", "Shop", notification_url="hook", dry_run=True, progress=False)
    pd.testing.assert_frame_equal(contacts, before)


def test_dates_are_sent_in_the_wire_form(contacts):
    spec = CampaignSpec.build(contacts, sms("Hi", sender="Shop",
                                            schedule_date=pd.Timestamp("2026-11-21 10:30", tz="Europe/Madrid")))
    assert spec.fields["scheduleDate"] == "20261121093000"


def test_send_campaign_accepts_camel_case_fields_and_campaign_names(contacts):
    spec = CampaignSpec.build(contacts, message("sms", message="Hi", **{"from": "Shop", "campaignName": "Spring"}))
    assert plan_batches(spec, [0], batch_size=1)[0].payload["campaignName"] == "Spring"
    result = send_campaign(contacts, "email", to="city", subject="Hi", body="<p>x</p>", from_email="a@b.co",
                           reply_to="a@b.co", campaign_name="Spring", dry_run=True, progress=False)
    assert len(result) == 3


def test_a_token_bucket_holds_the_average_rate():
    now = [0.0]
    bucket = TokenBucket(100, burst=100, clock=lambda: now[0])
    waits = [bucket.reserve(50) for _ in range(6)]  # 300 units at 100/s with 100 up front: last waits 2 s
    assert waits[:2] == [0.0, 0.0]
    assert waits[-1] == pytest.approx(2.0)


@pytest.mark.parametrize("extra", [{}, {"unknown_field": 1,
                                        "schedule_date": pd.Timestamp("2026-11-21 10:30", tz="UTC")}])
def test_each_batch_sends_its_validated_request_and_fingerprints_those_bytes(contacts, extra):
    msg = sms("Hi {name}", sender="Shop", notification_url="hook")
    # fields as given, past message()'s checks: a name the model drops makes every body the model's serialisation
    spec = CampaignSpec.build(contacts, dataclasses.replace(msg, fields={**msg.fields, **extra}))
    batches = plan_batches(spec, [0, 2, 1], batch_size=2)
    assert [tuple(batch.positions) for batch in batches] == [(0, 2), (1,)]
    for batch in batches:
        assert batch.payload == parse_request("sms", spec.payload(batch.positions)).to_wire()
        assert batch.encoded.fingerprint == hashlib.sha256(batch.encoded.content).hexdigest()
    assert "unknownField" not in batches[0].payload
