"""The wire layer's fast paths hold the models' rules: request bodies encoded once, answers read as columns."""

from __future__ import annotations

import hashlib
import json
import typing

import httpx
import pytest

from sendframe.api import wire
from sendframe.api.models import ErrorObject, ResultItem, SendResponse, parse_request
from sendframe.api.retry import NO_RETRY
from sendframe.errors import ApiError, InputError, UnknownOutcomeError

ANSWER = {"campaignId": 3, "sendingId": 8, "result": [
    {"accepted": True, "to": "447700900001", "id": "a" * 20, "parts": 2, "scheduledAt": "2026-11-21T10:30:00+01:00",
     "expiresAt": None},
    {"accepted": False, "to": "12", "parts": None, "error": {"code": 102, "description": "not a valid \"phone\" ñ"}},
    {"accepted": True, "to": "447700900003", "id": "b" * 20},
]}


def _lean_fields(lean: type) -> dict[str, bool]:
    return {name: name in lean.__required_keys__ for name in typing.get_type_hints(lean)}


def _model_fields(model: type) -> dict[str, bool]:
    return {field.alias or name: field.is_required() for name, field in model.model_fields.items()}


def test_the_lean_answer_shape_has_exactly_the_models_fields():
    assert _lean_fields(wire._LeanItem) == _model_fields(ResultItem)
    assert _lean_fields(wire._LeanError) == _model_fields(ErrorObject)
    assert _lean_fields(wire._LeanSendResponse) == _model_fields(SendResponse)


def test_an_answer_read_as_columns_says_what_the_model_says():
    body = json.dumps(ANSWER).encode()
    columns = wire.read_send_answer(body)
    items = SendResponse.model_validate_json(body).to_wire()["result"]
    assert (columns.campaign_id, columns.sending_id) == (3, 8)
    assert columns.accepted == [item["accepted"] for item in items]
    assert columns.to == [item["to"] for item in items]
    assert columns.id == [item.get("id") for item in items]
    assert columns.parts == [item.get("parts") for item in items]
    assert columns.scheduled_at == [item.get("scheduledAt") for item in items]
    assert columns.scheduled_at == ["2026-11-21T09:30:00+00:00", None, None]
    assert columns.error_code == [None, 102, None]
    assert columns.error_description == [None, 'not a valid "phone" ñ', None]
    assert wire.send_answer(SendResponse.model_validate(ANSWER)) == columns == wire.send_answer(ANSWER)


@pytest.mark.parametrize("broken", [
    {"campaignId": 1, "sendingId": 2, "result": [{"accepted": True}]},  # no "to"
    {"campaignId": 1, "sendingId": 2, "result": [{"accepted": True, "to": "1", "parts": "many"}]},
    {"campaignId": 1, "sendingId": 2, "result": [{"accepted": True, "to": "1", "scheduledAt": "tomorrow"}]},
    {"campaignId": 1, "result": []},
])
def test_an_answer_the_model_refuses_is_refused_as_columns_too(broken):
    body = json.dumps(broken)
    with pytest.raises(ValueError):
        SendResponse.model_validate_json(body)
    with pytest.raises(ValueError):
        wire.read_send_answer(body)


def test_an_encoded_request_is_the_models_wire_body_and_its_fingerprint_is_of_those_bytes():
    body = {"message": "Hi {name}", "to": ["447700900001", "447700900002"], "from": "Shop", "campaignName": "Ñoño",
            "sub": [{"name": "Ana \"A\""}, {"name": 3}], "otpConfig": {"length": 6}, "unknownField": 1}
    encoded = wire.EncodedRequest.encode("sms", body)
    assert json.loads(encoded.content) == parse_request("sms", body).to_wire()
    assert "unknownField" not in encoded.payload()
    assert encoded.fingerprint == hashlib.sha256(encoded.content).hexdigest()
    assert wire.send_call("sms", encoded).content() == encoded.content
    with pytest.raises(InputError, match="encoded for sms"):
        wire.send_call("voice", encoded)


def _answer_to(call: wire.Call, response: httpx.Response) -> object:
    steps = wire.exchange(call, NO_RETRY)
    next(steps)
    try:
        steps.send(response)
    except StopIteration as done:
        return done.value
    raise AssertionError("the exchange asked for another step")


def test_an_unreadable_answer_to_a_send_is_an_unknown_outcome_but_to_a_lookup_an_error():
    send = wire.send_call("sms", {"message": "Hi", "to": ["447700900001"], "from": "Shop"}, columns=True)
    garbled = httpx.Response(202, content=b'{"campaignId": 1, "result": [')
    with pytest.raises(UnknownOutcomeError, match="could not be read.*Check before sending again"):
        _answer_to(send, garbled)
    no_recipient = httpx.Response(207, json={"campaignId": 1, "sendingId": 2, "result": [{"accepted": True}]})
    with pytest.raises(UnknownOutcomeError, match=r"could not be read \(result\.0\.to: Field required\)"):
        _answer_to(send, no_recipient)
    with pytest.raises(ApiError) as raised:
        _answer_to(wire.lookup_call(["a1"]), httpx.Response(200, content=b"[oops"))
    assert not isinstance(raised.value, UnknownOutcomeError)
