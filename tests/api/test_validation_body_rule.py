"""The one rule every request body follows (api/validation.py): depth, numbers, Unicode text; and its messages."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sendframe.api.models import OtpCheckRequest, SmsRequest, parse_body, parse_request
from sendframe.api.validation import (
    MAX_JSON_DEPTH,
    MAX_JSON_NUMBER,
    decode_json,
    json_path_at,
    json_problems,
    printable,
    shown,
    unicode_problem,
)
from sendframe.errors import RequestValidationError

SMS = {"message": "Hi", "to": ["34600123456"], "from": "Shop"}


def _problem(raw: bytes | str):
    with pytest.raises(RequestValidationError) as caught:
        decode_json(raw)
    problems = caught.value.problems
    assert len(problems) == 1
    return problems[0]


def test_a_body_within_the_rule_decodes_as_json_does():
    body = {"to": ["34600123456"], "sub": [{"n": MAX_JSON_NUMBER, "x": -MAX_JSON_NUMBER, "f": 1.5, "é": "ñ😀"}]}
    assert decode_json(json.dumps(body).encode()) == body
    assert decode_json(json.dumps(body, ensure_ascii=False)) == body


def test_depth_is_counted_from_the_body_and_the_first_level_too_deep_is_named():
    fits = {"a": json.loads("[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1))}
    assert json_problems(fits) == []
    problem = _problem(json.dumps({"a": [fits["a"]]}))
    assert problem.rule == "json_depth" and problem.path.startswith("a[0][0]")
    assert problem.message.endswith(f"nests arrays and objects deeper than {MAX_JSON_DEPTH} levels")


def test_nesting_beyond_what_the_decoder_takes_is_the_same_problem_with_its_path():
    problem = _problem('{"sub": [' + "[" * 5000 + "]" * 5000 + "]}")
    assert problem.rule == "json_depth" and problem.path.startswith("sub[0][0]") and len(problem.path) < 130


@pytest.mark.parametrize("text, rule, path", [
    ('{"parts": ' + "9" * 5000 + "}", "number_range", "parts"),
    ('{"sub": [{"n": 18446744073709551615}]}', "number_range", "sub[0].n"),
    ('{"sub": [{"n": -9007199254740992}]}', "number_range", "sub[0].n"),
    ('{"sub": [{"n": 1e400}]}', "number_range", "sub[0].n"),
    ('{"from": "\\ud800"}', "unicode", "from"),
    ('{"to": ["1", "x\\udfffy"]}', "unicode", "to[1]"),
    ('{"sub": [{"a": 1}, {"b\\udc00": 1}]}', "unicode", "sub[1]"),
    ('{"a": NaN}', "json_syntax", ""),
    ('{"a": 1,}', "json_syntax", ""),
])
def test_each_problem_names_its_field_and_rule(text, rule, path):
    problem = _problem(text)
    assert (problem.rule, problem.path) == (rule, path)
    assert problem.message.startswith(path or "The request body")


def test_bytes_that_are_not_utf8_are_named_by_field_and_offset():
    raw = b'{"to": ["34600123456"], "from": "Sh\xed\xa0\x80op"}'
    problem = _problem(raw)
    assert (problem.rule, problem.path) == ("unicode", "from")
    assert "byte 0xED at byte 35" in problem.message


def test_an_empty_body_is_said_to_be_empty():
    assert _problem(b"  \n").message == "The request body is empty; send a JSON object"


def test_every_message_is_printable_text_even_about_lone_surrogates():
    for raw in ('{"\\ud800": "\\udc00"}', '["\\ud800"]'):
        problem = _problem(raw)
        problem.message.encode("utf-8")  # no lone surrogate in the message itself
        problem.path.encode("utf-8")


def test_models_built_in_python_follow_the_same_rule():
    with pytest.raises(RequestValidationError, match=r"sub\[0\]\.name is not Unicode text"):
        parse_request("sms", {**SMS, "sub": [{"name": "A\ud800"}]})
    with pytest.raises(RequestValidationError, match=r"campaign_name is not Unicode text"):
        SmsRequest(message="Hi", to=["34600123456"], sender="Shop", campaign_name="\udfff")
    with pytest.raises(RequestValidationError, match=r"sub\[0\]\.n must be a number between"):
        parse_request("sms", {**SMS, "sub": [{"n": 10**5000}]})
    with pytest.raises(RequestValidationError, match=r"code is not Unicode text"):
        parse_body(OtpCheckRequest, {"to": "34600123456", "code": "12\ud83434"})


def test_shown_and_printable_never_fail():
    assert shown(10**5000) == "a number of 5001 digits"
    assert shown("x\ud800") == '"x\\ud800"'
    assert printable("ok") == "ok" and printable("\udc80") == "\\udc80"
    assert unicode_problem("😀 ñ") is None


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20))
def test_decoding_never_raises_anything_but_a_request_validation_error(value):
    text = json.dumps(value)  # NaN and surrogates included, as escapes
    try:
        assert decode_json(text.encode()) == json.loads(text)
    except RequestValidationError as exc:
        assert exc.problems and all(p.message for p in exc.problems)


def test_json_path_at_follows_objects_and_arrays():
    text = '{"a": {"b": [1, 2, {"c": "x'
    assert json_path_at(text, len(text)) == "a.b[2].c"
    assert json_path_at('[1, [2, 3, 4', 11) == "[1][2]"
