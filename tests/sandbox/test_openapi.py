"""The /openapi.json document: built from the shared models, accurate, and honoured by the live sandbox."""

from __future__ import annotations

import base64
import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from sendframe.api import models
from sendframe.api.validation import sender_label_problem
from sendframe.sandbox import Sandbox
from sendframe.sandbox.openapi import document

BASE = "http://127.0.0.1:8123"


@pytest.fixture(scope="module")
def doc():
    return document(BASE)


def test_document_lists_the_six_send_endpoints_lookup_and_otp_check(doc):
    assert set(doc["paths"]) == {
        "/api/rest/sms", "/api/rest/mailing", "/api/rest/voice", "/api/rest/voiceAudio",
        "/api/rest/landingsms", "/api/rest/whatsapp", "/api/rest/sms/{id}", "/api/rest/otp/check",
    }
    assert set(doc["paths"]["/api/rest/sms/{id}"]) == {"get"}
    assert doc["servers"] == [{"url": BASE}]


@pytest.mark.parametrize("channel", models.CHANNELS)
def test_send_endpoint_body_is_the_channel_model_and_answers_202_207_400_401_403_413(doc, channel):
    path = "/api/rest/" + channel
    operation = doc["paths"][path]["post"]
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    name = ref.rsplit("/", 1)[1]
    assert name == models.REQUEST_MODELS[channel].__name__
    assert set(operation["responses"]) == {"202", "207", "400", "401", "403", "413"}
    assert operation["responses"]["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/SendResponse")
    assert operation["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")
    # wire names, and the model's required fields are required in the document
    schema = doc["components"]["schemas"][name]
    required = {f.alias or n for n, f in models.REQUEST_MODELS[channel].model_fields.items() if f.is_required()}
    assert set(schema["required"]) == required


def test_lookup_answers_lookup_response_or_404_error(doc):
    responses = doc["paths"]["/api/rest/sms/{id}"]["get"]["responses"]
    assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/LookupResponse")
    assert responses["404"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")


def test_otp_check_is_documented_with_its_request_and_result(doc):
    operation = doc["paths"]["/api/rest/otp/check"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/OtpCheckRequest")
    result = doc["components"]["schemas"]["OtpCheckResult"]
    assert set(result["properties"]) == {"valid", "status", "attemptsLeft"}
    assert set(result["properties"]["status"]["enum"]) == {"valid", "invalid", "expired", "blocked", "not_found"}


def test_basic_auth_is_required_everywhere(doc):
    assert doc["components"]["securitySchemes"]["basicAuth"] == {"type": "http", "scheme": "basic"}
    assert doc["security"] == [{"basicAuth": []}]


def stated(prop):
    """The schema of a property as given (an optional field also takes null, which counts as absent)."""
    given = [branch for branch in prop.get("anyOf", [prop]) if branch.get("type") != "null"]
    assert len(given) == 1, prop
    return given[0]


def test_rules_of_the_models_appear_as_schema_constraints(doc):
    schemas = doc["components"]["schemas"]
    otp = {name: stated(prop) for name, prop in schemas["OtpConfig"]["properties"].items()}
    assert (otp["length"]["minimum"], otp["length"]["maximum"]) == (3, 10)
    assert (otp["maxSecondsValidity"]["minimum"], otp["maxSecondsValidity"]["maximum"]) == (30, 600)
    sms = schemas["SmsRequest"]["properties"]
    assert stated(sms["encoding"])["enum"] == ["gsm", "gsm-pt", "utf-16"]
    assert (stated(sms["parts"])["minimum"], stated(sms["parts"])["maximum"]) == (1, 15)
    assert stated(schemas["LandingSmsRequest"]["properties"]["parts"])["maximum"] == 8
    assert {"type": "array", "items": {"type": "string"}} in sms["notificationUrl"]["anyOf"]
    assert stated(schemas["VoiceRequest"]["properties"]["retries"])["maximum"] == 5


@pytest.mark.parametrize("sender, valid", [("Shop", True), ("123456789012345", True), ("1234567890123456", False),
                                           ("ShopShopShop", False), ("My Shop", False), ("", False)])
def test_sender_pattern_agrees_with_the_model(doc, sender, valid):
    pattern = doc["components"]["schemas"]["SmsRequest"]["properties"]["from"]["pattern"]
    assert (re.search(pattern, sender) is not None) is valid
    assert (sender_label_problem(sender) is None) is valid


def test_document_is_a_valid_openapi_document_for_schemathesis(doc):
    schema = schemathesis.openapi.from_dict(doc)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 8


def test_each_call_returns_an_independent_copy():
    first = document(BASE)
    first["components"]["schemas"]["SmsRequest"]["properties"].clear()
    assert document(BASE)["components"]["schemas"]["SmsRequest"]["properties"]


# ---- the live sandbox against its own document (schemathesis) -------------------------------------

EXAMPLES_PER_OPERATION = 25


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(clock="manual") as sb:
        yield sb


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_live_sandbox_never_answers_5xx_and_conforms_to_its_openapi_document(sandbox, mode):
    schema = schemathesis.openapi.from_url(sandbox.base_url + "/openapi.json")
    credentials = base64.b64encode(f"{sandbox.username}:{sandbox.api_password}".encode()).decode()
    headers = {"Authorization": f"Basic {credentials}"}
    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 8

    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        def call(case):
            case.call_and_validate(base_url=sandbox.base_url, headers=headers, checks=checks, timeout=10)

        call()
