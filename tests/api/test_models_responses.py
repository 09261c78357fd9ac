"""Response models parse what the service sends and write it back unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sendframe.api.models import (
    CHANNELS,
    ErrorResponse,
    LookupResponse,
    OtpCheckRequest,
    OtpCheckResponse,
    ResultItem,
    SendResponse,
    parse_body,
    result_item,
    result_item_fields,
)
from sendframe.errors import RequestValidationError

RECORD = {
    "id": "0123456789abcdef0123", "from": "Shop", "to": "34600123456", "message": "Hi Ana",
    "campaignId": 4, "sendingId": 9, "isDelivered": True, "isClicked": False,
    "events": [
        {"type": "sent", "date": "2026-11-21T09:30:00+00:00", "isMobile": False, "browser": "", "os": ""},
        {"type": "delivered", "date": "2026-11-21T09:30:04+00:00", "isMobile": True, "browser": "Safari", "os": "iOS"},
    ],
    "customFields": {"name": "Ana"},
    "links": {"self": "http://127.0.0.1:8000/api/rest/sms/0123456789abcdef0123"},
}


def test_a_send_response_keeps_exactly_the_fields_each_item_had():
    wire = {"campaignId": 1, "sendingId": 2, "result": [
        {"accepted": True, "to": "34600123456", "id": "a" * 20, "parts": 2, "scheduledAt": None,
         "expiresAt": "2026-11-21T10:00:00+00:00"},
        {"accepted": False, "to": "123", "parts": 1, "scheduledAt": None, "expiresAt": None,
         "error": {"code": 102, "description": "not a valid phone number"}},
    ]}
    response = SendResponse.model_validate(wire)
    assert response.to_wire() == wire
    first, second = response.result
    assert first.expires_at == datetime(2026, 11, 21, 10, tzinfo=UTC)
    assert first.model_fields_set == {"accepted", "to", "id", "parts", "scheduled_at", "expires_at"}
    assert second.error.code == 102 and second.id is None


def test_a_whatsapp_item_carries_only_accepted_to_and_id():
    item = ResultItem.model_validate({"accepted": True, "to": "34600123456", "id": "b" * 20})
    assert item.to_wire() == {"accepted": True, "to": "34600123456", "id": "b" * 20}


@pytest.mark.parametrize("channel", CHANNELS)
def test_result_item_builds_exactly_the_fields_the_spec_lists_for_the_channel(channel):
    when = datetime(2026, 11, 21, 9, 30, tzinfo=UTC)
    accepted = result_item(channel, accepted=True, to="34600123456", id="c" * 20, parts=1, scheduled_at=when,
                           expires_at=when)
    rejected = result_item(channel, accepted=False, to="1", parts=1, error=(102, "not a valid phone number"))
    allowed = set(result_item_fields(channel))
    assert set(accepted) == allowed - {"error"}
    assert set(rejected) == allowed - {"id"}
    response = SendResponse.model_validate({"campaignId": 1, "sendingId": 1, "result": [accepted, rejected]})
    assert response.to_wire()["result"] == [accepted, rejected]
    if "scheduledAt" in allowed:
        assert accepted["scheduledAt"] == "2026-11-21T09:30:00+00:00"


def test_result_item_fields_per_channel_follow_the_spec():
    assert result_item_fields("sms") == ("accepted", "to", "id", "parts", "scheduledAt", "expiresAt", "error")
    assert "parts" not in result_item_fields("voice") and "expiresAt" in result_item_fields("voiceAudio")
    assert "expiresAt" not in result_item_fields("mailing")
    assert result_item_fields("whatsapp") == ("accepted", "to", "id", "error")
    with pytest.raises(ValueError, match="Unknown channel"):
        result_item_fields("fax")


def test_an_error_body_parses_and_round_trips():
    wire = {"error": {"code": 404, "description": "The resource was not found"}}
    parsed = ErrorResponse.model_validate(wire)
    assert parsed.error.code == 404 and parsed.to_wire() == wire


def test_a_lookup_response_parses_records_events_and_links():
    response = LookupResponse.model_validate({"data": [RECORD]})
    record = response.data[0]
    assert record.sender == "Shop" and record.campaign_id == 4 and record.custom_fields == {"name": "Ana"}
    assert record.links.self_.endswith("/api/rest/sms/0123456789abcdef0123")
    assert record.events[1].is_mobile and record.events[1].date.tzinfo is not None
    assert response.to_wire() == {"data": [RECORD]}


def test_otp_check_request_and_response_follow_the_api_notes():
    request = parse_body(OtpCheckRequest, {"to": "34600123456", "code": "1234"})
    assert request.app_id == "" and request.to_wire() == {"to": "34600123456", "code": "1234"}
    with pytest.raises(RequestValidationError) as caught:
        parse_body(OtpCheckRequest, {"to": "34600123456", "code": 1234})
    assert caught.value.problems[0].message == "code must be a string (got 1234)"
    response = OtpCheckResponse.model_validate({"data": {"valid": False, "status": "blocked", "attemptsLeft": 0}})
    assert response.data.status == "blocked" and response.to_wire()["data"]["attemptsLeft"] == 0
