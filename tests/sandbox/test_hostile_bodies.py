"""Hostile request bodies: every problem is a 400 error object naming the field, never a 5xx, on every endpoint.

The bodies are written byte by byte (a JSON encoder would refuse most of them), sent over real HTTP to a real
sandbox; a property test (hypothesis) throws generated hostile JSON at every endpoint, the control surface too.
"""

from __future__ import annotations

import json
import math
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sendframe.sandbox import Sandbox

PHONE = "447700900001"
VALID = {
    "sms": {"message": "Hi {name}", "to": [PHONE], "from": "Shop", "sub": [{"name": "Ana"}],
            "notificationUrl": "http://127.0.0.1:9/dlr?id=%i", "otpConfig": {"length": 6}},
    "mailing": {"subject": "Hi {name}", "body": "<p>Hi {name}</p>", "to": ["ana@example.com"], "sub": [{"name": "Ana"}],
                "fromEmail": "news@example.org", "replyTo": "news@example.org"},
    "voice": {"message": "Hola {name}", "to": [PHONE], "language": "es_ES", "gender": "F", "sub": [{"name": "Ana"}]},
    "voiceAudio": {"to": [PHONE], "audioUrl": "https://x.example/a.mp3"},
    "landingsms": {"message": "See {LAND_URL}", "to": [PHONE], "from": "Shop", "templateBody": "<p>Hi {name}</p>",
                   "sub": [{"name": "Ana"}]},
    "whatsapp": {"templateId": 1, "from": "34911111111", "messages": [{"to": PHONE, "bodyFields": ["Ana"]}]},
    "otp/check": {"to": PHONE, "code": "1234", "appId": ""},
    "_sandbox/faults": {"status": 503, "rate": 0.5},
    "_sandbox/advance": {"seconds": 1},
    "_sandbox/reset": {},
    "_sandbox/faults/clear": {},
}
ENDPOINTS = tuple(VALID)


class Raw:
    """A piece of JSON text written as it is (a number no encoder would write, a lone surrogate escape)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:30]!r}{'...' if len(self.text) > 30 else ''})"


def encode(value: object) -> str:
    """JSON text of ``value``; strings keep lone surrogates as ``\\udXXX`` escapes; :class:`Raw` goes in verbatim."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{encode(str(k))}:{encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(encode(v) for v in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return json.dumps(value)  # ensure_ascii: a lone surrogate becomes its \\u escape


def url(sb, endpoint: str) -> str:
    return f"{sb.base_url}/{endpoint}" if endpoint.startswith("_sandbox") else f"{sb.base_url}/api/rest/{endpoint}"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(clock="manual") as sandbox:
        yield sandbox


def post(sb, endpoint: str, text: str | bytes) -> httpx.Response:
    content = text.encode("utf-8") if isinstance(text, str) else text
    answer = httpx.post(url(sb, endpoint), content=content, auth=(sb.username, sb.api_password), timeout=60,
                        headers={"Content-Type": "application/json"})
    if endpoint.startswith("_sandbox/faults") and answer.status_code < 300:
        httpx.delete(f"{sb.base_url}/_sandbox/faults")  # an accepted faults body would answer the next tests 5xx
    return answer


def problem(answer: httpx.Response) -> str:
    assert answer.status_code == 400, (answer.status_code, answer.text[:500])
    error = answer.json()["error"]
    assert error["code"] == 100
    return error["description"]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_json_nested_ten_thousand_deep_is_a_400_on_every_endpoint(sb, endpoint):
    assert "deeper than 32 levels" in problem(post(sb, endpoint, "[" * 10_000 + "]" * 10_000))
    description = problem(post(sb, endpoint, encode({**VALID[endpoint], "tags": Raw("[" * 40 + "]" * 40)})))
    assert description.startswith("tags[0][0]") and "deeper than 32 levels" in description


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_five_thousand_digit_integer_is_a_400_naming_its_field(sb, endpoint):
    field = next(iter(VALID[endpoint]), "seconds")
    body = {**VALID[endpoint], field: Raw("9" * 5000)}
    description = problem(post(sb, endpoint, encode(body)))
    assert description.startswith(field) and "9007199254740991" in description


@pytest.mark.parametrize("endpoint, field", [
    ("sms", "from"), ("sms", "to[0]"), ("sms", "sub[0].name"), ("sms", "notificationUrl"), ("sms", "message"),
    ("mailing", "subject"), ("mailing", "body"), ("landingsms", "templateBody"), ("voice", "message"),
    ("otp/check", "code"), ("whatsapp", "messages[0].bodyFields[0]"), ("_sandbox/faults", "status"),
])
def test_a_lone_surrogate_is_a_400_naming_its_field(sb, endpoint, field):
    body = json.loads(json.dumps(VALID[endpoint]))
    if endpoint == "sms" and field == "message":
        body["encoding"] = "utf-16"
    target, key = _locate(body, field)
    target[key] = "a\ud800b"
    description = problem(post(sb, endpoint, encode(body)))
    assert description.startswith(field) and "lone surrogate" in description


def test_a_lone_surrogate_in_a_field_name_and_raw_surrogate_bytes_are_400s(sb):
    description = problem(post(sb, "sms", encode({**VALID["sms"], "sub": [{"na\udc00me": "Ana"}]})))
    assert description.startswith("sub[0] has a field name") and "lone surrogate" in description
    body = encode(VALID["sms"]).replace('"Shop"', '"Sh\udc80op"'.encode("utf-8", "surrogatepass").decode("latin-1"))
    description = problem(post(sb, "sms", body.encode("latin-1")))
    assert description.startswith("from is not UTF-8 text")


@pytest.mark.parametrize("text", ["", "   ", "{", '{"to": ["1"],}', "NaN", '{"seconds": Infinity}', "\ufeff{}"])
def test_malformed_json_is_a_400_with_line_and_column(sb, text):
    for endpoint in ("sms", "otp/check", "_sandbox/faults"):
        description = problem(post(sb, endpoint, text))
        assert "empty" in description or "not valid JSON" in description


def test_integers_beyond_a_fields_range_are_refused_by_the_field_rule(sb):
    body = {**VALID["sms"], "parts": 2**53, "otpConfig": {"length": 2**40}}
    description = problem(post(sb, "sms", encode(body)))
    assert description.startswith("parts must be a number between")
    body = {**VALID["sms"], "otpConfig": {"length": 2**40}}
    assert "otpConfig.length must be between 3 and 10" in problem(post(sb, "sms", encode(body)))


def _locate(body: dict, path: str) -> tuple[object, object]:
    parts = [p for p in path.replace("]", "").replace("[", ".").split(".") if p]
    target: object = body
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]  # type: ignore[index]
    last = parts[-1]
    return target, int(last) if isinstance(target, list) else last


# ---- property test: generated hostile JSON on every endpoint -----------------------------------------------

_HOSTILE_TEXT = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=5), st.sampled_from(["\ud800", "\udfff", "\udbff"]),
              st.text(max_size=5)),
    st.sampled_from(["", " ", "0", "{OTP_CODE}", "{LAND_URL}", "{x|shorten}", "{x|nope}", "<script>", "\x00", "%s%n"]),
)
_HOSTILE_NUMBER = st.one_of(
    st.integers(), st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True, allow_infinity=True),
    st.builds(lambda n: Raw("9" * n), st.integers(1, 6000)),
    st.builds(lambda n: Raw("1e" + str(n)), st.integers(-400, 400)),
    st.sampled_from([Raw("-0"), Raw("1.0"), Raw("0.1e1"), 2**53, 2**63, 2**64]),
)
_SCALAR = st.one_of(st.none(), st.booleans(), _HOSTILE_TEXT, _HOSTILE_NUMBER)
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(_HOSTILE_TEXT, inner, max_size=4)), max_leaves=12)
_DEEP = st.builds(lambda depth, opener: Raw("[" * depth + "1" + "]" * depth) if opener == "["
                  else Raw('{"a":' * depth + "1" + "}" * depth),
                  st.integers(25, 3000), st.sampled_from(["[", "{"]))
_VALUE = st.one_of(_JSON, _DEEP)


@st.composite
def hostile_body(draw: st.DrawFn, endpoint: str) -> str:
    """A body for ``endpoint``: a valid one with a field replaced, added or removed, or hostile JSON outright."""
    body = json.loads(json.dumps(VALID[endpoint]))
    how = draw(st.sampled_from(["replace", "replace", "nested", "add", "whole"]))
    if how == "whole":
        return encode(draw(_VALUE))
    if how == "nested" and any(isinstance(v, (list, dict)) for v in body.values()):
        key = draw(st.sampled_from(sorted(k for k, v in body.items() if isinstance(v, (list, dict)))))
        inner = body[key]
        while isinstance(inner, list) and inner and isinstance(inner[0], (list, dict)):
            inner = inner[0]
        if isinstance(inner, list):
            inner[0 if inner else 0:1] = [draw(_VALUE)]
        elif inner:
            inner[draw(st.sampled_from(sorted(inner)))] = draw(_VALUE)
        return encode(body)
    if how == "add" or not body:
        body[draw(_HOSTILE_TEXT)] = draw(_VALUE)
    else:
        body[draw(st.sampled_from(sorted(body)))] = draw(_VALUE)
    return encode(body)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_no_hostile_body_gets_a_5xx_on_any_endpoint(sb, endpoint):
    @given(text=hostile_body(endpoint))
    @settings(max_examples=40, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    def check(text: str) -> None:
        answer = post(sb, endpoint, text.encode("utf-8", "surrogatepass"))
        assert answer.status_code < 500, (answer.status_code, answer.text[:300], text[:300])
        if answer.status_code >= 400:
            error = answer.json()["error"]
            assert isinstance(error["code"], int) and error["description"]

    check()


@given(ids=st.text(min_size=1, max_size=40).filter(lambda t: "/" not in t and "?" not in t and "#" not in t))
@settings(max_examples=40, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_hostile_lookup_id_gets_a_5xx(sb, ids):
    answer = httpx.get(f"{sb.base_url}/api/rest/sms/" + quote(ids.encode("utf-8", "surrogatepass"), safe=","),
                       auth=(sb.username, sb.api_password))
    assert answer.status_code in (400, 404), answer.text[:300]
