"""Templates: syntax, specials, rendering one row, and render_frame over a DataFrame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.errors import MissingVariableError, TemplateError
from sendframe.text.filters import FILTER_NAMES
from sendframe.text.templates import parse, placeholder_links, render, render_frame, value_to_text


def test_parse_reports_variables_in_order_of_first_appearance_without_specials():
    t = parse("{OTP_CODE} hi {name|upper} from {city}, {name} {UNSUB_URL} {LAND_URL}")
    assert t.variables == ("name", "city")
    assert t.specials == frozenset({"OTP_CODE", "UNSUB_URL", "LAND_URL"})
    assert t.filters == frozenset({"upper"})
    assert not t.uses_shorten


def test_parse_reports_shorten_use():
    assert parse("Buy: {url|shorten}").uses_shorten


def test_parse_results_are_cached():
    assert parse("Hi {name}") is parse("Hi {name}")


def test_unknown_filter_error_names_the_filter_and_the_position():
    with pytest.raises(TemplateError) as info:
        parse("Hello {name|shout}!")
    message = str(info.value)
    assert "'shout'" in message and "position 6" in message and "capitalizeAll" in message
    assert info.value.position == 6 and info.value.filter == "shout"


@pytest.mark.parametrize("text", ["{ }", "{a b}", "{{", "}}", "{}", "{1abc}", "{name|}", "{name|a b}",
                                  "{name|lower|upper}", "{"])
def test_anything_else_between_braces_is_literal(text):
    assert parse(text).variables == ()
    assert render(text, {}) == text


def test_names_may_contain_dots_and_dashes():
    assert render("{user.first-name}", {"user.first-name": "Eva"}) == "Eva"


def test_double_braces_around_a_variable_keep_the_outer_braces():
    assert render("{{name}}", {"name": "Eva"}) == "{Eva}"


def test_render_applies_each_filter():
    variables = {"n": "ana de la o", "a": 1234567.5}
    assert render("{n|upper}", variables) == "ANA DE LA O"
    assert render("{n|capitalize}", variables) == "Ana de la o"
    assert render("{n|capitalizeAll}", variables) == "Ana De La O"
    assert render("{a|formatDotComma} / {a|formatCommaDot}", variables) == "1.234.567,5 / 1,234,567.5"


@pytest.mark.parametrize("value", [None, float("nan"), pd.NA, np.nan, pd.NaT])
def test_missing_none_nan_or_na_variable_raises_missing_variable_error(value):
    with pytest.raises(MissingVariableError) as info:
        render("Hi {name}", {"name": value})
    assert info.value.name == "name"
    assert "{name}" in str(info.value)


def test_absent_variable_raises_missing_variable_error():
    with pytest.raises(MissingVariableError, match="city"):
        render("Hi {name} from {city}", {"name": "Eva"})


def test_specials_come_from_specials_never_from_variables():
    assert render("Code {OTP_CODE}", {"OTP_CODE": "nope"}, specials={"OTP_CODE": "1234"}) == "Code 1234"
    with pytest.raises(MissingVariableError, match="UNSUB_URL"):
        render("Stop: {UNSUB_URL}", {"UNSUB_URL": "x"})


@pytest.mark.parametrize(
    ("value", "text"),
    [(12, "12"), (12.0, "12"), (np.int64(7), "7"), (np.float64(3.0), "3"), (0.1, "0.1"), (1234567.5, "1234567.5"),
     (1e20, "100000000000000000000"), (1e-05, "0.00001"), (True, "true"), (False, "false"), ("x", "x"),
     (float("inf"), "inf")],
)  # fmt: skip
def test_values_become_text_sensibly(value, text):
    assert value_to_text(value) == text


def test_placeholder_links_have_the_real_lengths():
    specials, shorten = placeholder_links("https://sms.example/", otp_length=6, otp_alpha=True)
    assert specials["OTP_CODE"] == "AAAAAA"
    assert specials["UNSUB_URL"] == "https://sms.example/u/" + "x" * 12
    assert specials["LAND_URL"] == "https://sms.example/l/" + "x" * 12
    assert shorten("https://shop.example/a/very/long/path") == "https://sms.example/s/" + "x" * 8


def test_shorten_uses_a_placeholder_of_the_real_length_when_no_shortener_is_given():
    text = render("{u|shorten}", {"u": "https://shop.example/x"})
    assert text.startswith("http") and "/s/" in text and len(text.rsplit("/", 1)[1]) == 8


def test_shorten_calls_the_given_link_maker():
    assert render("Go {u|shorten}", {"u": "https://a.example"}, shorten=lambda url: "S:" + url) == "Go S:https://a.example"


def test_render_frame_gives_na_for_rows_missing_a_variable_and_keeps_the_index():
    frame = pd.DataFrame({"name": ["ana", None, "luis"], "amount": [1000.0, 5.0, np.nan]}, index=[7, 8, 9])
    out = render_frame(frame, "Hi {name|capitalize}: {amount|formatDotComma}")
    assert out.tolist() == ["Hi Ana: 1.000", pd.NA, pd.NA]
    assert out.index.tolist() == [7, 8, 9]


def test_render_frame_without_the_column_gives_na_everywhere():
    assert render_frame(pd.DataFrame({"a": ["x", "y"]}), "{b}").tolist() == [pd.NA, pd.NA]


def test_render_frame_takes_specials_as_text_or_per_row_series():
    frame = pd.DataFrame({"n": ["a", "b"]}, index=[3, 4])
    links = pd.Series(["L1", "L2"], index=[3, 4])
    out = render_frame(frame, "{n} {UNSUB_URL} {OTP_CODE}", specials={"UNSUB_URL": links, "OTP_CODE": "0000"})
    assert out.tolist() == ["a L1 0000", "b L2 0000"]


def test_render_frame_of_a_template_without_placeholders_repeats_it():
    assert render_frame(pd.DataFrame({"x": [1, 2]}), "Hello").tolist() == ["Hello", "Hello"]
    assert render_frame(pd.DataFrame({"x": []}), "Hello {x}").tolist() == []


def test_render_frame_does_not_modify_the_frame():
    frame = pd.DataFrame({"name": ["ana"], "amount": [1.5]})
    before = frame.copy()
    render_frame(frame, "{name|upper} {amount|formatCommaDot}")
    pd.testing.assert_frame_equal(frame, before)


# --- properties ----------------------------------------------------------------------------

names = st.sampled_from(["name", "city", "amount", "OTP_CODE", "x.y", "missing"])
placeholders = st.builds(
    lambda n, f: "{" + n + ("|" + f if f else "") + "}", names, st.sampled_from([None, *FILTER_NAMES, "shout"])
)
templates = st.lists(placeholders | st.text(alphabet="ab {}|€ñ", max_size=6), max_size=6).map("".join)
scalars = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.from_regex(r"-?[0-9]{1,9}(\.[0-9]{1,3})?", fullmatch=True),
)


@settings(max_examples=150, deadline=None)
@given(templates, st.dictionaries(names, scalars, max_size=6))
def test_rendering_never_fails_except_with_the_documented_errors(template, variables):
    try:
        text = render(template, variables, specials={"OTP_CODE": "1234"})
    except (TemplateError, MissingVariableError):
        return
    assert isinstance(text, str)


column_values = {
    "name": st.one_of(st.none(), st.text(alphabet=st.sampled_from("ab ÁßŉİéЖ\t😀") | st.characters(codec="utf-8"),
                                         max_size=10)),
    "city": st.one_of(st.none(), st.sampled_from(["lugo", "a coruña", "ÉVORA", "köln", ""])),
    "amount": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64)),
}


@settings(max_examples=80, deadline=None)
@given(templates, st.lists(st.fixed_dictionaries(column_values), min_size=1, max_size=6), st.booleans())
def test_render_frame_agrees_with_render_row_by_row(template, rows, integer_amounts):
    try:
        parse(template)
    except TemplateError:
        return
    frame = pd.DataFrame(rows).astype({"name": "str", "city": "str", "amount": "float64"})
    if integer_amounts:
        frame["amount"] = pd.array([None if a is None or not math.isfinite(a) else int(a) % 10**9
                                    for a in frame["amount"]], dtype="Int64")
    specials, shorten = placeholder_links("https://sms.example")
    out = render_frame(frame, template, specials=specials, shorten=shorten)
    for i, record in enumerate(frame.to_dict("records")):
        try:
            expected = render(template, record, specials=specials, shorten=shorten)
        except MissingVariableError:
            expected = pd.NA
        assert out.iloc[i] is expected if expected is pd.NA else out.iloc[i] == expected
