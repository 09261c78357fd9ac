"""The seven filters: scalar semantics and the vectorised versions."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.text.filters import (
    FILTER_NAMES,
    FILTERS,
    apply_filter_arrow,
    format_comma_dot,
    is_number,
    is_shortenable,
)


def test_there_are_seven_filters_and_shorten_needs_a_link_maker():
    assert FILTER_NAMES == ("lower", "upper", "capitalize", "capitalizeAll", "formatDotComma", "formatCommaDot",
                            "shorten")
    assert set(FILTERS) == set(FILTER_NAMES) - {"shorten"}


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("lower", "ÁLVARO Núñez", "álvaro núñez"),
        ("lower", "", ""),
        ("upper", "straße", "STRASSE"),
        ("upper", "josé", "JOSÉ"),
        ("capitalize", "ana maría", "Ana maría"),
        ("capitalize", "ana MARÍA", "Ana MARÍA"),
        ("capitalize", "  élodie", "  Élodie"),
        ("capitalize", "", ""),
        ("capitalize", "   ", "   "),
        ("capitalize", "3 amigos", "3 amigos"),
        ("capitalizeAll", "ana maría de la o", "Ana María De La O"),
        ("capitalizeAll", "jean-luc o'neil", "Jean-luc O'neil"),
        ("capitalizeAll", "a\tb\nc  d", "A\tB\nC  D"),
        ("capitalizeAll", "McDONALD", "McDONALD"),
        ("formatDotComma", "1234567.5", "1.234.567,5"),
        ("formatDotComma", "1234567", "1.234.567"),
        ("formatDotComma", "-1234.005", "-1.234,005"),
        ("formatDotComma", "123", "123"),
        ("formatDotComma", "1000", "1.000"),
        ("formatDotComma", "0.10", "0,10"),
        ("formatDotComma", "1,234.5", "1,234.5"),
        ("formatDotComma", "12 EUR", "12 EUR"),
        ("formatDotComma", "1.", "1."),
        ("formatDotComma", ".5", ".5"),
        ("formatDotComma", "+5", "+5"),
        ("formatDotComma", "1e5", "1e5"),
        ("formatDotComma", "12\n", "12\n"),
        ("formatCommaDot", "1234567.5", "1,234,567.5"),
        ("formatCommaDot", "-999999", "-999,999"),
        ("formatCommaDot", "n/a", "n/a"),
    ],
)
def test_filter_examples(name, value, expected):
    assert FILTERS[name](value) == expected
    assert apply_filter_arrow(name, pa.array([value])).to_pylist() == [expected]


def test_number_formats_never_round_decimals():
    assert FILTERS["formatDotComma"]("0.123456789") == "0,123456789"


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://shop.example/p?id=1", True),
        ("http://a.b", True),
        ("HTTPS://SHOP.EXAMPLE", True),
        ("ftp://shop.example", False),
        ("shop.example/p", False),
        ("https://", False),
        ("https://shop .example", False),
        ("", False),
    ],
)
def test_shorten_accepts_only_http_and_https_urls(value, ok):
    assert is_shortenable(value) is ok


values = st.text(alphabet=st.sampled_from("aZ 0123456789.-,\tßŉİéÉ中") | st.characters(codec="utf-8"), max_size=20)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), values), max_size=10), st.sampled_from(sorted(FILTERS)))
def test_vectorised_filters_agree_with_scalar(items, name):
    expected = [None if v is None else FILTERS[name](v) for v in items]
    assert apply_filter_arrow(name, pa.array(items, type=pa.large_string())).to_pylist() == expected


@settings(max_examples=60, deadline=None)
@given(st.from_regex(r"-?[0-9]{1,20}(\.[0-9]{1,6})?", fullmatch=True))
def test_number_formats_only_insert_separators(number):
    out = FILTERS["formatDotComma"](number)
    assert out.replace(".", "").replace(",", ".") == number
    digits = number.lstrip("-").split(".")[0]
    assert out.count(".") == (len(digits) - 1) // 3
    assert FILTERS["formatCommaDot"](number).replace(",", "") == number


def test_is_number_is_the_rule_the_format_filters_use():
    numbers, others = ["12", "-1234.50", "0.5", "1234567"], ["1,5", "1e3", ".5", "-", "", " 12", "\u0661\u0662", "12."]
    assert all(is_number(v) for v in numbers) and not any(is_number(v) for v in others)
    assert all(format_comma_dot(v) == v for v in others)  # what is not a number passes through


def test_vectorised_capitalize_leaves_leading_whitespace_of_every_kind_to_the_scalar_rule():
    items = ["ana", " ana", "\tana", "\x1cana", "\x1fana", "\x85ana", "\xa0ana", "", " ", "1ana", "ßa", "éa", None]
    expected = [None if v is None else FILTERS["capitalize"](v) for v in items]
    assert apply_filter_arrow("capitalize", pa.array(items)).to_pylist() == expected
    assert expected[3] == "\x1cAna" and expected[1] == " Ana"  # Python's \s includes the ASCII separators


numbers = st.from_regex(r"-?[0-9]{1,14}(\.[0-9]{1,4})?", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), numbers, values), max_size=12),
       st.sampled_from(["formatDotComma", "formatCommaDot"]))
def test_vectorised_number_formats_agree_with_scalar_on_rows_of_numbers(items, name):
    expected = [None if v is None else FILTERS[name](v) for v in items]
    assert apply_filter_arrow(name, pa.array(items, type=pa.large_string())).to_pylist() == expected
