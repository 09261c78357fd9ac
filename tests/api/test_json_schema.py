"""The request models' JSON schema says exactly what their checks accept (the OpenAPI document is built from it)."""

from __future__ import annotations

import base64
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.api.json_schema import phone_pattern
from sendframe.api.models import REQUEST_MODELS, MailingRequest, OtpCheckRequest, SmsRequest, VoiceRequest
from sendframe.api.recipients import is_valid_phone
from sendframe.api.validation import WIRE_DATETIME_PATTERN, RequestValidationError, parse_wire_datetime
from sendframe.channels import channel


def stated(prop):
    return next(branch for branch in prop.get("anyOf", [prop]) if branch.get("type") != "null")


def test_the_phone_pattern_accepts_exactly_the_valid_phone_recipients():
    rng = random.Random(19)
    pattern = re.compile(phone_pattern())
    numbers = ["".join(rng.choice("0123456789") for _ in range(rng.randint(6, 17))) for _ in range(30_000)]
    numbers += ["447700900123", "34600123456", "16502530000", "00000000", "4407700900123", "+447700900123", ""]
    assert [n for n in numbers if bool(pattern.fullmatch(n)) != is_valid_phone(n)] == []


@settings(max_examples=300)
@given(st.from_regex(WIRE_DATETIME_PATTERN, fullmatch=True))
def test_every_date_time_of_the_pattern_is_a_real_calendar_date_time(text):
    parse_wire_datetime(text)
    assert SmsRequest(message="Hi", to=["447700900123"], sender="Shop", schedule_date=text).schedule_date == text


def test_a_calendar_date_time_that_does_not_exist_is_outside_the_pattern():
    for text in ("20261131000000", "20250229000000", "20261301000000", "00000101000000", "20261121240000"):
        assert re.fullmatch(WIRE_DATETIME_PATTERN, text) is None
        with pytest.raises(RequestValidationError):
            SmsRequest(message="Hi", to=["447700900123"], sender="Shop", schedule_date=text)
    assert re.fullmatch(WIRE_DATETIME_PATTERN, "20240229235959")  # a leap day


@settings(max_examples=200)
@given(st.binary(max_size=40))
def test_base64_of_any_bytes_matches_the_attachment_pattern(data):
    schema = MailingRequest.model_json_schema()["$defs"]["Attachment"]["properties"]["content"]
    assert re.fullmatch(schema["pattern"], base64.b64encode(data).decode())


@pytest.mark.parametrize("name", ["sms", "landingsms"])
def test_the_largest_parts_is_the_channels_max_parts(name):
    schema = REQUEST_MODELS[name].model_json_schema()["properties"]["parts"]
    assert (stated(schema)["minimum"], stated(schema)["maximum"]) == (1, channel(name).max_parts)


def test_an_optional_field_takes_null_in_the_schema_as_the_model_does():
    schema = OtpCheckRequest.model_json_schema()
    assert {"type": "null"} in schema["properties"]["appId"]["anyOf"]
    assert OtpCheckRequest.model_validate({"to": "447700900123", "code": "1234", "appId": None}).app_id == ""
    assert "anyOf" not in schema["properties"]["to"]  # a required field does not


def test_the_rules_across_fields_are_in_the_schema():
    mailing = MailingRequest.model_json_schema()["allOf"]
    given_content = {tuple(branch["required"]) for rule in mailing for branch in rule["anyOf"] if "required" in branch}
    assert {("body",), ("templateId",), ("templateV2Id",), ("campaignName",)} <= given_content
    voice = VoiceRequest.model_json_schema()["allOf"]
    genders = [branch.get("properties", {}).get("gender") for rule in voice for branch in rule["anyOf"]]
    assert {"const": "F"} in genders
