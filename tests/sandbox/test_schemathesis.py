"""schemathesis, with all its checks, against a real sandbox over HTTP: the document says what the sandbox does.

Every request the document allows is accepted, every request it forbids is refused, and every answer has a
documented status and shape, except the refusals no schema can state, listed in docs/api-notes.md ("What
/openapi.json cannot state"): ``UNSTATABLE`` below is that list, and any other failure fails the test.
The same run from the command line, as a new user tries it: ``schemathesis run
http://127.0.0.1:8765/openapi.json --checks all`` against ``sendframe sandbox --port 8765`` (schemathesis.toml).
"""

from __future__ import annotations

import re
import time

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import Failure, FailureGroup

from sendframe.api.json_schema import phone_pattern
from sendframe.api.recipients import EMAIL_PATTERN
from sendframe.sandbox import Sandbox

EXAMPLES = 25  # per operation and mode: 8 operations x 2 modes x 25, about 20 s in all
RUN_SECONDS = 90  # a bound on the whole run, far above its usual time

EMAIL = f"^{EMAIL_PATTERN}$"

# docs/api-notes.md, "What /openapi.json cannot state": name -> (operations, error codes, what the description says)
_SENDS = ("sms", "landingsms", "mailing", "voice", "voiceAudio", "whatsapp")
_TEXTS = ("sms", "landingsms", "mailing", "voice")
UNSTATABLE: dict[str, tuple[tuple[str, ...], tuple[int, ...], str]] = {
    "body rule in unknown fields": ((*_SENDS, "otp/check"), (100,),
                                    r"must be a number between -9007199254740991 and 9007199254740991"
                                    r"|is not Unicode text|deeper than 32 levels"),
    "an integer written with a fraction": (_SENDS, (100,), r"must be a whole number \(got -?\d+\.0\)"),
    "sizes that follow the recipients": (_SENDS, (100,), r"must hold one (object|address) per recipient"),
    "expiry before schedule": (_SENDS, (100,), r"expirationDate \(\d+\) must not be earlier than scheduleDate"),
    "unknown template id": (("landingsms", "mailing"), (100,), r"template(V2)?Id: no (landing|email) template"),
    "unknown WhatsApp template": (("whatsapp",), (140,), r"is not an approved WhatsApp template"),
    "unvalidated sender": (("mailing", "whatsapp"), (110,), r"is not a (validated sender address|WhatsApp sender)"),
    "text the recipients cannot get": (_TEXTS, (105, 107), r"^No recipient was accepted: "),
    "unknown filter": (_TEXTS, (100,), r"Unknown filter '"),
}


def unstatable(operation: str, status: int, answer: object) -> str | None:
    """The name of the documented refusal ``answer`` is, or None."""
    if status != 400 or not isinstance(answer, dict) or not isinstance(answer.get("error"), dict):
        return None
    code, description = answer["error"].get("code"), str(answer["error"].get("description"))
    endpoint = operation.split("/api/rest/", 1)[-1]
    for name, (operations, codes, pattern) in UNSTATABLE.items():
        if endpoint in operations and code in codes and re.search(pattern, description):
            return name
    return None


def recipients_refused_one_by_one(operation: str, status: int, answer: object) -> str | None:
    """'a malformed recipient among others' when a 207 rejects (code 102) exactly the recipients not of the
    documented form: the spec refuses recipients one by one, so the request as a whole is not refused."""
    if status != 207 or not isinstance(answer, dict) or not isinstance(answer.get("result"), list):
        return None
    endpoint = operation.split("/api/rest/", 1)[-1]
    pattern = EMAIL if endpoint == "mailing" else phone_pattern()
    malformed = [item for item in answer["result"] if not re.fullmatch(pattern, str(item.get("to")))]
    refused = all(item.get("accepted") is False and item.get("error", {}).get("code") == 102 for item in malformed)
    return "a malformed recipient among others" if malformed and refused else None


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(clock="manual") as sb:
        yield sb


def run_schemathesis(sandbox, mode: str) -> tuple[list[str], dict[str, int]]:
    """(failures outside the documented list, how many documented refusals were seen by name)."""
    load_all_checks()
    checks = [check for check in CHECKS.get_all() if not isinstance(check, type)]
    # schemathesis' defaults, not schemathesis.toml (which lets the CLI run expect the documented statuses):
    # here each such answer is judged by its error code and description
    schema = schemathesis.openapi.from_url(sandbox.base_url + "/openapi.json", config=SchemathesisConfig())
    schema.config.auth.update(basic=(sandbox.username, sandbox.api_password))  # left out where a case tests its absence
    unexpected: list[str] = []
    seen: dict[str, int] = {}
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        def call(case):
            if time.monotonic() - started > RUN_SECONDS:
                return
            response = case.call(base_url=sandbox.base_url, timeout=10)
            try:
                case.validate_response(response, checks=checks)
            except FailureGroup as group:
                failures: list[Failure] = list(group.exceptions)
            except Failure as failure:
                failures = [failure]
            else:
                return
            try:
                answer = response.json()
            except ValueError:
                answer = response.text
            for failure in failures:
                label = case.operation.label
                judge = {"ST202": unstatable, "ST201": recipients_refused_one_by_one}.get(failure.code)
                name = judge(label, response.status_code, answer) if judge else None
                if name is None:
                    unexpected.append(f"{label} {failure.code} {failure.title} ({failure.message.strip()[-160:]}): "
                                      f"[{response.status_code}] {str(answer)[:300]}\n"
                                      f"  body sent: {str(case.body)[:300]}")
                else:
                    seen[name] = seen.get(name, 0) + 1

        call()
    assert time.monotonic() - started < RUN_SECONDS + 30
    return unexpected, seen


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_schemathesis_with_all_checks_finds_only_the_refusals_no_schema_can_state(sandbox, mode):
    unexpected, _ = run_schemathesis(sandbox, mode)
    assert not unexpected, "\n".join(unexpected)


def test_only_a_207_that_refuses_exactly_the_malformed_recipients_is_a_refusal_one_by_one():
    def item(to, accepted):
        return {"accepted": True, "to": to, "id": "a" * 20} if accepted else \
            {"accepted": False, "to": to, "error": {"code": 102, "description": "not a valid phone number"}}

    good = {"result": [item("447700900123", True), item("4477*", False)]}
    assert recipients_refused_one_by_one("POST /api/rest/sms", 207, good) == "a malformed recipient among others"
    sent = {"result": [item("447700900123", True), item("4477*", True)]}  # the malformed one was sent
    assert recipients_refused_one_by_one("POST /api/rest/sms", 207, sent) is None
    assert recipients_refused_one_by_one("POST /api/rest/sms", 202, {"result": [item("447700900123", True)]}) is None


def test_a_documented_refusal_is_recognised_and_another_400_is_not():
    refusal = {"error": {"code": 140, "description": "templateId: 0 is not an approved WhatsApp template of this "
                                                     "account (approved: 1001, 1002, 1003)"}}
    assert unstatable("POST /api/rest/whatsapp", 400, refusal) == "unknown WhatsApp template"
    assert unstatable("POST /api/rest/sms", 400, refusal) is None  # not a refusal of that operation
    other = {"error": {"code": 100, "description": "parts must be between 1 and 15 (got 0)"}}
    assert unstatable("POST /api/rest/sms", 400, other) is None
