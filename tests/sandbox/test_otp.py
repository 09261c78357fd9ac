"""OTP codes: issuing with otpConfig, checking, expiry on the sandbox clock, attempts, appId isolation."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from types import SimpleNamespace

import httpx
import pytest

from sendframe.api.models import OtpConfig
from sendframe.errors import InputError
from sendframe.sandbox import Sandbox, links, otp
from sendframe.sandbox.carrier import Clock


@pytest.fixture
def state():
    db = sqlite3.connect(":memory:", check_same_thread=False)
    for statement in (*otp.SCHEMA, *links.SCHEMA):
        db.execute(statement)
    yield SimpleNamespace(db=db, clock=Clock("manual", start=datetime(2026, 11, 21, 9, 30, tzinfo=UTC)), public_url="http://127.0.0.1:1")
    db.close()


PHONE = "447700900123"


def test_default_code_is_four_digits(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config=None)
    assert len(code) == 4 and code.isdigit()


@pytest.mark.parametrize("length", [3, 7, 10])
def test_code_length_follows_otp_config(state, length):
    code = otp.issue_code(state, account="demo", to=PHONE, config={"length": length})
    assert len(code) == length


def test_alpha_codes_use_uppercase_letters_and_digits(state):
    codes = [otp.issue_code(state, account="demo", to=f"4477009001{i:02d}", config={"alpha": True, "length": 10})
             for i in range(30)]
    joined = "".join(codes)
    assert set(joined) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    assert any(ch.isalpha() for ch in joined)


def test_a_pydantic_otp_config_is_accepted(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config=OtpConfig(length=8, app_id="login"))
    assert len(code) == 8
    assert otp.check_code(state, account="demo", to=PHONE, code=code, app_id="login")["valid"] is True


@pytest.mark.parametrize("config, field", [({"length": 2}, "length"), ({"maxAttempts": 11}, "maxAttempts"),
                                           ({"max_seconds_validity": 29}, "maxSecondsValidity"),
                                           ({"alpha": "yes"}, "alpha")])
def test_out_of_range_config_is_refused_naming_the_field(state, config, field):
    with pytest.raises(InputError, match=f"otpConfig.{field}"):
        otp.issue_code(state, account="demo", to=PHONE, config=config)


def test_right_code_is_valid_once_then_consumed(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config={})
    assert otp.check_code(state, account="demo", to=PHONE, code=code, app_id="") == {
        "valid": True, "status": "valid", "attemptsLeft": 0}
    assert otp.check_code(state, account="demo", to=PHONE, code=code, app_id="")["status"] == "not_found"


def test_wrong_tries_count_down_then_block_even_the_right_code(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config={"maxAttempts": 2})
    wrong = "0000" if code != "0000" else "1111"
    assert otp.check_code(state, account="demo", to=PHONE, code=wrong, app_id="") == {
        "valid": False, "status": "invalid", "attemptsLeft": 1}
    assert otp.check_code(state, account="demo", to=PHONE, code=wrong, app_id="")["attemptsLeft"] == 0
    assert otp.check_code(state, account="demo", to=PHONE, code=code, app_id="") == {
        "valid": False, "status": "blocked", "attemptsLeft": 0}


def test_code_expires_when_the_manual_clock_passes_max_seconds_validity(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config={"maxSecondsValidity": 30})
    state.clock.advance(29)
    state.clock.advance(1)
    assert otp.check_code(state, account="demo", to=PHONE, code=code, app_id="") == {
        "valid": False, "status": "expired", "attemptsLeft": 0}


def test_code_checked_just_before_expiry_is_valid(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config={"maxSecondsValidity": 30})
    state.clock.advance(29)
    assert otp.check_code(state, account="demo", to=PHONE, code=code, app_id="")["valid"] is True


def test_unknown_recipient_is_not_found(state):
    assert otp.check_code(state, account="demo", to=PHONE, code="1234", app_id="") == {
        "valid": False, "status": "not_found", "attemptsLeft": 0}


def test_new_code_replaces_the_pending_one(state):
    first = otp.issue_code(state, account="demo", to=PHONE, config={"length": 10})
    second = otp.issue_code(state, account="demo", to=PHONE, config={"length": 10})
    assert first != second
    assert otp.check_code(state, account="demo", to=PHONE, code=first, app_id="")["status"] == "invalid"
    assert otp.check_code(state, account="demo", to=PHONE, code=second, app_id="")["status"] == "valid"


def test_reject_if_pending_code_refuses_a_second_code_for_the_same_app_id(state):
    config = {"rejectIfPendingCode": True, "appId": "login"}
    first = otp.issue_code(state, account="demo", to=PHONE, config=config)
    assert otp.issue_code(state, account="demo", to=PHONE, config=config) is None
    assert otp.check_code(state, account="demo", to=PHONE, code=first, app_id="login")["valid"] is True


def test_reject_if_pending_code_allows_a_different_app_id(state):
    login = otp.issue_code(state, account="demo", to=PHONE, config={"rejectIfPendingCode": True, "appId": "login"})
    pay = otp.issue_code(state, account="demo", to=PHONE, config={"rejectIfPendingCode": True, "appId": "pay"})
    assert pay is not None
    # each appId validates only its own code
    assert otp.check_code(state, account="demo", to=PHONE, code=pay, app_id="pay")["valid"] is True
    assert otp.check_code(state, account="demo", to=PHONE, code=login, app_id="login")["valid"] is True


def test_reject_if_pending_code_issues_again_once_the_old_code_expired(state):
    config = {"rejectIfPendingCode": True, "maxSecondsValidity": 30}
    otp.issue_code(state, account="demo", to=PHONE, config=config)
    state.clock.advance(31)
    assert otp.issue_code(state, account="demo", to=PHONE, config=config) is not None


def test_reject_if_pending_code_issues_again_once_the_old_code_was_used(state):
    config = {"rejectIfPendingCode": True}
    code = otp.issue_code(state, account="demo", to=PHONE, config=config)
    otp.check_code(state, account="demo", to=PHONE, code=code, app_id="")
    assert otp.issue_code(state, account="demo", to=PHONE, config=config) is not None


def test_codes_are_per_account(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config={})
    assert otp.check_code(state, account="other", to=PHONE, code=code, app_id="")["status"] == "not_found"


def test_email_recipients_match_regardless_of_case_and_alpha_codes_too(state):
    code = otp.issue_code(state, account="demo", to="Ana@Example.com", config={"alpha": True, "length": 6})
    assert otp.check_code(state, account="demo", to="ana@example.COM", code=code.lower(), app_id="")["valid"] is True


def test_the_code_itself_is_never_stored(state):
    code = otp.issue_code(state, account="demo", to=PHONE, config={"length": 10})
    dump = "\n".join(state.db.iterdump())
    assert code not in dump


# ---- through the live sandbox over HTTP -----------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(clock="manual") as sb:
        yield sb


def _post(sb, path: str, body: object, auth: bool = True):
    return httpx.post(sb.base_url + path, json=body, auth=(sb.username, sb.api_password) if auth else None)


def _code_sent_to(sb, to: str, otp_config: dict) -> str:
    answer = _post(sb, "/api/rest/sms", {"to": [to], "from": "Shop", "message": "Code {OTP_CODE}",
                                         "otpConfig": otp_config})
    assert answer.status_code == 202, answer.text
    message_id = answer.json()["result"][0]["id"]
    lookup = httpx.get(f"{sb.base_url}/api/rest/sms/{message_id}", auth=(sb.username, sb.api_password))
    record = lookup.json()["data"][0]
    return record["message"].removeprefix("Code ")


def test_code_sent_by_sms_checks_valid_once_over_http(sandbox):
    to = "447700900401"
    code = _code_sent_to(sandbox, to, {"length": 6})
    assert len(code) == 6 and code.isdigit()
    answer = _post(sandbox, "/api/rest/otp/check", {"to": to, "code": code, "appId": ""})
    assert answer.status_code == 200
    assert answer.json() == {"data": {"valid": True, "status": "valid", "attemptsLeft": 0}}
    assert _post(sandbox, "/api/rest/otp/check", {"to": to, "code": code}).json()["data"]["status"] == "not_found"


def test_code_expires_when_the_sandbox_clock_advances(sandbox):
    to = "447700900402"
    code = _code_sent_to(sandbox, to, {"maxSecondsValidity": 30})
    sandbox.advance(31)
    assert _post(sandbox, "/api/rest/otp/check", {"to": to, "code": code}).json()["data"]["status"] == "expired"


def test_reject_if_pending_code_rejects_the_second_send_with_150(sandbox):
    config = {"rejectIfPendingCode": True, "appId": "login"}
    body = {"to": ["447700900403"], "from": "Shop", "message": "Code {OTP_CODE}", "otpConfig": config}
    assert _post(sandbox, "/api/rest/sms", body).status_code == 202
    answer = _post(sandbox, "/api/rest/sms", body)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == 150


def test_check_without_credentials_is_401(sandbox):
    answer = _post(sandbox, "/api/rest/otp/check", {"to": "447700900401", "code": "1234"}, auth=False)
    assert answer.status_code == 401 and answer.json()["error"]["code"] == 401


def test_check_without_code_is_400_naming_the_field(sandbox):
    answer = _post(sandbox, "/api/rest/otp/check", {"to": "447700900401"})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == 100 and "code" in error["description"]
