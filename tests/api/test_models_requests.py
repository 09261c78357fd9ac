"""Request models: every rule of the spec's tables accepts a valid value and rejects an invalid one
with the wire path and a readable message."""

from __future__ import annotations

import copy
import doctest
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from sendframe.api import models, validation
from sendframe.api.models import (
    CHANNELS,
    MAX_LOOKUP_IDS,
    MAX_RECIPIENTS,
    REQUEST_MODELS,
    OtpConfig,
    SmsRequest,
    VoiceRequest,
    WhatsappRequest,
    parse_request,
)
from sendframe.api.validation import describe_problems, error_code, sub_value_text
from sendframe.errors import InputError, RequestValidationError

SMS = {"message": "Hi {name}", "to": ["34600123456"], "from": "Shop"}
VALID = {
    "sms": SMS,
    "landingsms": {**SMS, "templateBody": "<p>Hello</p>"},
    "mailing": {"to": ["ana@example.com"], "fromEmail": "shop@example.com", "replyTo": "shop@example.com",
                "subject": "Hello", "body": "<p>Hi</p>"},
    "voice": {"message": "Hola", "to": ["34600123456"], "language": "es_ES", "gender": "F"},
    "voiceAudio": {"to": ["34600123456"], "audioUrl": "https://example.com/a.mp3"},
    "whatsapp": {"templateId": 7, "from": "34911222333", "messages": [{"to": "34600123456", "bodyFields": ["Ana"]}]},
}


def with_(channel: str, **changes: object) -> dict:
    body = copy.deepcopy(VALID[channel])
    for key, value in changes.items():
        key = "from" if key == "from_" else key
        if value is ...:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def problems_of(channel: str, body: object) -> list:
    with pytest.raises(RequestValidationError) as caught:
        parse_request(channel, body)
    return caught.value.problems


@pytest.mark.parametrize("channel", CHANNELS)
def test_the_minimal_valid_request_of_each_channel_is_accepted(channel):
    request = parse_request(channel, VALID[channel])
    assert isinstance(request, REQUEST_MODELS[channel])
    assert request.to_wire() == VALID[channel]


# (channel, field changes, valid?) for every rule; invalid ones name (path, rule, words in the message)
RULES = [
    # required fields
    ("sms", {"message": ...}, ("message", "required", "message is required")),
    ("sms", {"to": ...}, ("to", "required", "to is required")),
    ("sms", {"from_": ...}, ("from", "required", "from is required")),
    ("mailing", {"fromEmail": ...}, ("fromEmail", "required", "fromEmail is required")),
    ("mailing", {"replyTo": ...}, ("replyTo", "required", "replyTo is required")),
    ("mailing", {"subject": ...}, ("subject", "required", "subject is required")),
    ("voice", {"language": ...}, ("language", "required", "language is required")),
    ("voice", {"gender": ...}, ("gender", "required", "gender is required")),
    ("voiceAudio", {"audioUrl": ...}, ("audioUrl", "required", "audioUrl is required")),
    ("whatsapp", {"templateId": ...}, ("templateId", "required", "templateId is required")),
    ("whatsapp", {"from_": ...}, ("from", "required", "from is required")),
    ("whatsapp", {"messages": ...}, ("messages", "required", "messages is required")),
    # to non-empty
    ("sms", {"to": []}, ("to", "not_empty", "to must not be empty")),
    ("whatsapp", {"messages": []}, ("messages", "not_empty", "messages must not be empty")),
    # types: strict
    ("sms", {"parts": "5"}, ("parts", "type", 'parts must be a whole number (got "5")')),
    ("sms", {"parts": 5.0}, ("parts", "type", "parts must be a whole number (got 5.0)")),
    ("sms", {"parts": True}, ("parts", "type", "parts must be a whole number (got true)")),
    ("sms", {"flash": 1}, ("flash", "type", "flash must be true or false (got 1)")),
    ("sms", {"certified": "true"}, ("certified", "type", 'certified must be true or false (got "true")')),
    ("sms", {"to": ["34600123456", 34600123457]}, ("to[1]", "type", "to[1] must be a string (got 34600123457)")),
    ("sms", {"to": "34600123456"}, ("to", "type", 'to must be an array (got "34600123456")')),
    ("sms", {"from_": 34600}, ("from", "type", "from must be a string (got 34600)")),
    ("sms", {"otpConfig": 5}, ("otpConfig", "type", "otpConfig must be an object (got 5)")),
    ("sms", {"tags": "a", "campaignName": "c"}, ("tags", "type", 'tags must be an array (got "a")')),
    ("mailing", {"templateId": "3"}, ("templateId", "type", 'templateId must be a whole number (got "3")')),
    ("whatsapp", {"templateId": 7.5}, ("templateId", "type", "templateId must be a whole number (got 7.5)")),
    # enumerations
    ("sms", {"encoding": "ascii"}, ("encoding", "enum", 'encoding must be one of gsm, gsm-pt, utf-16 (got "ascii")')),
    ("sms", {"trans": 2}, ("trans", "enum", "trans must be one of 0, 1 (got 2)")),
    ("sms", {"trans": True}, ("trans", "type", "trans must be a whole number (got true)")),
    ("voice", {"language": "xx_XX"}, ("language", "enum", 'language must be one of en_GB, en_US')),
    ("voice", {"gender": "X"}, ("gender", "enum", 'gender must be one of F, M (got "X")')),
    ("voice", {"language": "arb", "gender": "M"},
     ("gender", "female_only_language", "gender must be F for language arb")),
    ("voice", {"language": "hi_IN", "gender": "M"},
     ("gender", "female_only_language", "gender must be F for language hi_IN")),
    # ranges
    ("sms", {"parts": 0}, ("parts", "range", "parts must be between 1 and 15 (got 0)")),
    ("sms", {"parts": 16}, ("parts", "range", "parts must be between 1 and 15 (got 16)")),
    ("landingsms", {"parts": 9}, ("parts", "range", "parts must be between 1 and 8 (got 9)")),
    ("voice", {"retries": 6}, ("retries", "range", "retries must be between 0 and 5 (got 6)")),
    ("voiceAudio", {"retries": -1}, ("retries", "range", "retries must be between 0 and 5 (got -1)")),
    ("sms", {"otpConfig": {"length": 12}},
     ("otpConfig.length", "range", "otpConfig.length must be between 3 and 10 (got 12)")),
    ("sms", {"otpConfig": {"length": 2}},
     ("otpConfig.length", "range", "otpConfig.length must be between 3 and 10 (got 2)")),
    ("sms", {"otpConfig": {"maxAttempts": 11}}, ("otpConfig.maxAttempts", "range", "between 1 and 10 (got 11)")),
    ("mailing", {"otpConfig": {"maxSecondsValidity": 29}},
     ("otpConfig.maxSecondsValidity", "range", "between 30 and 600 (got 29)")),
    ("sms", {"otpConfig": {"maxSecondsValidity": 601}},
     ("otpConfig.maxSecondsValidity", "range", "between 30 and 600 (got 601)")),
    ("sms", {"otpConfig": {"alpha": "yes"}}, ("otpConfig.alpha", "type", "otpConfig.alpha must be true or false")),
    ("sms", {"availableTimes": [{"day": 8, "from": "09:00", "to": "17:00"}]},
     ("availableTimes[0].day", "range", "between 1 and 7 (got 8)")),
    ("sms", {"availableTimes": [{"day": 0, "from": "09:00", "to": "17:00"}]},
     ("availableTimes[0].day", "range", "between 1 and 7 (got 0)")),
    ("sms", {"availableTimes": [{"from": "24:00", "to": "17:00"}]},
     ("availableTimes[0].from", "time_format", 'HH:MM between 00:00 and 23:59 (got "24:00")')),
    ("sms", {"availableTimes": [{"from": "09:00", "to": "9:60"}]}, ("availableTimes[0].to", "time_format", "HH:MM")),
    ("sms", {"availableTimes": [{"day": 1, "to": "17:00"}]},
     ("availableTimes[0].from", "required", "availableTimes[0].from is required")),
    # lengths
    ("voice", {"message": "x" * 501}, ("message", "max_length", "message must be at most 500 characters (got 501)")),
    ("sms", {"from_": "1234567890123456"}, ("from", "sender_label", "1 to 15 digits")),
    ("sms", {"from_": "ShopShopShop"}, ("from", "sender_label", "1 to 11 letters and digits")),
    ("sms", {"from_": "My Shop"}, ("from", "sender_label", 'got "My Shop"')),
    ("sms", {"from_": ""}, ("from", "sender_label", "1 to 15 digits")),
    ("landingsms", {"from_": "Tienda-Ñ"}, ("from", "sender_label", "letters and digits")),
    # date-times
    ("sms", {"scheduleDate": "2026-11-21 09:30"}, ("scheduleDate", "datetime_format", "YYYYmmddHHiiss")),
    ("sms", {"scheduleDate": "2026112109300"}, ("scheduleDate", "datetime_format", "14 digits")),
    ("voice", {"expirationDate": "20261131000000"},
     ("expirationDate", "datetime_calendar", 'not a real calendar date-time (got "20261131000000")')),
    ("mailing", {"scheduleDate": "20260229120000"}, ("scheduleDate", "datetime_calendar", "not a real calendar")),
    ("sms", {"scheduleDate": "20261121093000", "expirationDate": "20261121092959"},
     ("expirationDate", "expiration_before_schedule", "must not be earlier than scheduleDate")),
    # cross-field rules
    ("sms", {"tags": ["spring"]}, ("tags", "requires_campaign_name", "tags requires campaignName")),
    ("mailing", {"tags": ["spring"]}, ("tags", "requires_campaign_name", "tags requires campaignName")),
    ("voice", {"sub": [{"a": "1"}, {"a": "2"}]}, ("sub", "one_per_recipient", "1 recipient but 2 objects")),
    ("sms", {"sub": []}, ("sub", "one_per_recipient", "1 recipient but 0 objects")),
    ("sms", {"sub": [{"name": ["Ana"]}]},
     ("sub[0].name", "type", "sub[0].name must be a string or a number (got an array)")),
    ("sms", {"sub": [{"name": True}]}, ("sub[0].name", "type", "must be a string or a number (got true)")),
    ("sms", {"notificationUrl": ["https://a/1", "https://a/2"]},
     ("notificationUrl", "one_per_recipient", "1 recipient but 2 addresses")),
    ("sms", {"notificationUrl": 5}, ("notificationUrl", "type", "must be a string or an array of strings (got 5)")),
    ("landingsms", {"notificationUrl": ["https://a/1"]},
     ("notificationUrl", "type", "notificationUrl must be a string (got an array)")),
    ("mailing", {"body": ...}, ("body", "body_or_template", "body, templateId or templateV2Id is required")),
    ("landingsms", {"templateBody": ...},
     ("templateBody", "body_or_template", "templateBody, templateId or templateV2Id is required")),
    ("mailing", {"attachments": [{"name": "a.txt", "content": "not base64!", "contentType": "text/plain"}]},
     ("attachments[0].content", "base64", "encoded as base64")),
    ("mailing", {"attachments": [{"name": "a.txt", "content": "aGk="}]},
     ("attachments[0].contentType", "required", "is required")),
]


@pytest.mark.parametrize(("channel", "changes", "expected"), RULES, ids=[f"{c}-{e[0]}-{e[1]}" for c, _, e in RULES])
def test_a_broken_rule_is_reported_with_its_path_rule_and_a_readable_message(channel, changes, expected):
    path, rule, words = expected
    problems = problems_of(channel, with_(channel, **changes))
    found = [p for p in problems if p.path == path]
    assert found, f"no problem at {path}: {problems}"
    assert found[0].rule == rule
    assert words in found[0].message
    assert "pydantic" not in found[0].message.lower() and "input should" not in found[0].message.lower()
    assert error_code(problems) == 100


VALID_CHANGES = [
    ("sms", {"parts": 15}), ("sms", {"parts": 1}), ("landingsms", {"parts": 8}), ("sms", {"encoding": "gsm-pt"}),
    ("sms", {"encoding": "utf-16"}), ("sms", {"trans": 1}),
    ("sms", {"flash": True, "splitParts": True, "certified": False}),
    ("sms", {"from_": "123456789012345"}), ("sms", {"from_": "Shop2026ABC"}), ("sms", {"from_": "7"}),
    ("sms", {"otpConfig": {"alpha": True, "length": 10, "maxAttempts": 1, "maxSecondsValidity": 600, "appId": "x",
                           "rejectIfPendingCode": True}}),
    ("sms", {"otpConfig": {"length": 3, "maxAttempts": 10, "maxSecondsValidity": 30}}),
    ("sms", {"availableTimes": [{"day": 7, "from": "00:00", "to": "23:59"}, {"from": "22:00", "to": "06:00"}]}),
    ("sms", {"scheduleDate": "20260228235959", "expirationDate": "20260228235959"}),
    ("sms", {"scheduleDate": "20280229000000"}),
    ("sms", {"tags": ["a", "b"], "campaignName": "Spring"}),
    ("sms", {"sub": [{"name": "Ana", "amount": 12.5, "count": 3, "missing": None}]}),
    ("sms", {"notificationUrl": "https://a/?id=%i"}), ("sms", {"notificationUrl": ["https://a/?id=%i"]}),
    ("landingsms", {"templateBody": ..., "templateV2Id": 12}), ("landingsms", {"templateBody": ..., "templateId": 3}),
    ("mailing", {"body": ..., "templateId": 4}), ("mailing", {"body": ..., "templateV2Id": 5, "trackOpens": False}),
    ("mailing", {"attachments": [{"name": "a.txt", "content": "aGVsbG8=", "contentType": "text/plain"}],
                 "cc": ["b@x.es"]}),
    ("voice", {"message": "x" * 500, "retries": 5, "amd": True, "callers": {"34": "34911222333"}}),
    ("voice", {"language": "cmn_CN", "gender": "F"}), ("voice", {"language": "en_US", "gender": "M", "retries": 0}),
    ("voiceAudio", {"retries": 3, "expirationDate": "20261121093000", "campaignName": "c", "tags": ["t"]}),
    ("whatsapp", {"messages": [{"to": "34600123456", "headerFields": ["a"], "callToActionFields": ["b"],
                                "defaultAnswer": ["c"]}]}),
    ("sms", {"somethingNew": {"the": "service ignores unknown fields"}}),
    ("sms", {"parts": None, "encoding": None}),
]


@pytest.mark.parametrize(("channel", "changes"), VALID_CHANGES)
def test_a_value_within_the_rules_is_accepted(channel, changes):
    parse_request(channel, with_(channel, **changes))


@pytest.mark.parametrize("channel", ["sms", "mailing", "voice", "voiceAudio", "landingsms"])
def test_more_than_max_recipients_is_error_101(channel):
    many = ["34600000000"] * (MAX_RECIPIENTS + 1)
    problems = problems_of(channel, with_(channel, to=many))
    assert [(p.path, p.rule) for p in problems] == [("to", "max_recipients")]
    assert "at most 1000 recipients (got 1001)" in problems[0].message
    assert error_code(problems) == 101
    parse_request(channel, with_(channel, to=many[:MAX_RECIPIENTS]))


def test_more_than_max_whatsapp_messages_is_error_101():
    problems = problems_of("whatsapp", with_("whatsapp", messages=[{"to": "34600123456"}] * 1001))
    assert error_code(problems) == 101 and problems[0].path == "messages"
    assert MAX_LOOKUP_IDS == 100


def test_whatsapp_problems_name_the_message_and_field():
    body = with_("whatsapp", messages=[{"to": "34600123456"}, {"bodyFields": ["x"]},
                                       {"to": 5, "headerFields": [1, "ok"]}, "text"])
    paths = {p.path: p for p in problems_of("whatsapp", body)}
    assert paths["messages[1].to"].message == "messages[1].to is required"
    assert paths["messages[2].to"].message == "messages[2].to must be a string (got 5)"
    assert paths["messages[2].headerFields[0]"].rule == "type"
    assert paths["messages[3]"].message == 'messages[3] must be an object (got "text")'


def test_every_problem_is_collected_not_just_the_first():
    problems = problems_of("sms", {"to": [], "parts": 99, "encoding": "x"})
    assert {p.path for p in problems} == {"to", "message", "from", "parts", "encoding"}


def test_a_body_that_is_not_an_object_is_rejected_in_plain_english():
    problems = problems_of("sms", ["not", "an", "object"])
    assert problems[0].message == "The request body must be a JSON object (got an array)"


def test_an_unknown_channel_is_a_value_error_naming_the_channels():
    with pytest.raises(ValueError, match="expected one of sms, mailing"):
        parse_request("fax", {})


def test_the_exception_text_lists_each_message_once_and_the_description_joins_them():
    with pytest.raises(RequestValidationError) as caught:
        parse_request("sms", with_("sms", parts=20, otpConfig={"length": 1}))
    text = str(caught.value)
    assert text.splitlines()[0] == "The sms request is not valid:"
    assert "  - parts must be between 1 and 15 (got 20)" in text
    assert text.count("parts") == 1
    assert describe_problems(caught.value.problems) == (
        "parts must be between 1 and 15 (got 20); otpConfig.length must be between 3 and 10 (got 1)")
    assert isinstance(caught.value, InputError)


def test_building_a_model_in_python_raises_our_error_with_the_names_used():
    with pytest.raises(RequestValidationError) as caught:
        SmsRequest(message="Hi", to=["34600123456"], sender="Shop", otp_config=OtpConfig(length=4), parts=0)
    assert [p.path for p in caught.value.problems] == ["parts"]
    with pytest.raises(RequestValidationError, match="must be F for language cmn_CN"):
        VoiceRequest(message="x", to=["1"], language="cmn_CN", gender="M")


def test_python_code_may_use_snake_case_names_or_wire_names():
    by_name = SmsRequest(message="Hi", to=["34600123456"], sender="Shop", campaign_name="C", split_parts=True)
    by_alias = SmsRequest(**{"message": "Hi", "to": ["34600123456"], "from": "Shop", "campaignName": "C",
                             "splitParts": True})
    assert by_name.to_wire() == by_alias.to_wire() == {
        "message": "Hi", "to": ["34600123456"], "from": "Shop", "campaignName": "C", "splitParts": True}


def test_unset_and_null_optionals_are_not_sent_but_defaults_are_readable():
    request = parse_request("sms", with_("sms", parts=None, campaignName=None, otpConfig={"length": 6, "appId": None}))
    wire = request.to_wire()
    assert "parts" not in wire and "campaignName" not in wire and "encoding" not in wire
    assert wire["otpConfig"] == {"length": 6}
    assert request.parts == 1 and request.encoding == "gsm" and request.otp_config.max_attempts == 3


def test_wire_round_trip_keeps_camel_case_and_from():
    body = with_("sms", campaignName="Spring", tags=["a"], notificationUrl=["https://x/%i"], splitParts=True,
                 availableTimes=[{"day": 1, "from": "09:00", "to": "18:00"}], otpConfig={"maxSecondsValidity": 120},
                 sub=[{"name": "Ana"}], scheduleDate="20261121093000", expirationDate="20261122093000")
    request = parse_request("sms", body)
    assert request.to_wire() == body
    assert parse_request("sms", request.to_wire()) == request
    assert request.available_times[0].from_ == "09:00"
    assert request.schedule_datetime == datetime(2026, 11, 21, 9, 30, tzinfo=UTC)
    assert request.expiration_datetime - request.schedule_datetime == timedelta(days=1)


def test_whatsapp_round_trip_and_recipients_in_message_order():
    body = {"templateId": 3, "from": "Shop", "messages": [
        {"to": "34600123456", "bodyFields": ["Ana"], "callToActionFields": ["x"]}, {"to": "447700900123"}]}
    request = WhatsappRequest.model_validate(body)
    assert request.to_wire() == body
    assert request.recipients == ["34600123456", "447700900123"]


def test_a_python_datetime_is_written_as_the_14_digit_utc_form():
    madrid = timezone(timedelta(hours=1))
    request = SmsRequest(message="Hi", to=["34600123456"], sender="Shop",
                         schedule_date=datetime(2026, 11, 21, 10, 30, tzinfo=madrid))
    assert request.to_wire()["scheduleDate"] == "20261121093000"
    with pytest.raises(RequestValidationError, match="time zone"):
        SmsRequest(message="Hi", to=["34600123456"], sender="Shop", schedule_date=datetime(2026, 11, 21, 10, 30))


def test_sub_values_keep_their_json_type_and_read_as_text():
    request = parse_request("sms", with_("sms", sub=[{"amount": 1234567.5, "n": 3, "whole": 12.0}]))
    assert request.to_wire()["sub"] == [{"amount": 1234567.5, "n": 3, "whole": 12.0}]
    assert [sub_value_text(v) for v in request.sub[0].values()] == ["1234567.5", "3", "12"]


def test_the_input_payload_is_not_modified():
    body = with_("sms", parts=None, sub=[{"a": None}])
    before = copy.deepcopy(body)
    parse_request("sms", body)
    assert body == before


def test_validating_a_thousand_recipients_is_a_single_fast_pass():
    body = with_("sms", to=[f"346{i:08d}" for i in range(1000)], sub=[{"name": f"n{i}"} for i in range(1000)],
                 notificationUrl=["https://x/%i"] * 1000)
    request = parse_request("sms", body)
    assert len(request.to) == 1000 and len(request.sub) == 1000


def test_numpy_numbers_in_sub_become_plain_json_numbers():
    request = SmsRequest(message="Hi", to=("34600123456",), sender="Shop",
                         sub=[{"n": np.int64(3), "x": np.float64(2.5)}])
    assert request.to_wire()["sub"] == [{"n": 3, "x": 2.5}]
    assert type(request.to_wire()["sub"][0]["n"]) is int


def test_the_examples_in_the_docstrings_hold():
    for module in (models, validation):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
