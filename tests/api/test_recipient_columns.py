"""The vectorised recipient rule gives the scalar rule's answer on every value."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import phonenumbers
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneMetadata, PhoneNumberFormat, PhoneNumberType
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, SUPPORTED_REGIONS, _test_number_length

from sendframe.api import numbering
from sendframe.api import recipient_columns as columns
from sendframe.api.recipients import email_key, is_valid_email, is_valid_phone, normalise_phone

REGIONS = sorted(SUPPORTED_REGIONS)
# default regions worth a closer look: a trunk prefix (GB, DE, FR), none (ES, IT), another IDD (US 011, RU 810),
# shared calling codes (CA, GG), trunk prefixes that rewrite digits (AR, BR, JP, AG), none at all ("", "XX")
DEFAULTS = ["ES", "GB", "US", "CA", "DE", "FR", "IT", "PT", "RU", "KZ", "MX", "AR", "BR", "JP", "AG", "GG", "AU", "CC",
            "es", "", "XX"]
TYPES = [PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE, PhoneNumberType.TOLL_FREE, PhoneNumberType.VOIP]


def _examples() -> list[str]:
    # real example numbers of every region, written the ways people write them
    out: list[str] = []
    for region in REGIONS:
        for kind in TYPES:
            number = phonenumbers.example_number_for_type(region, kind)
            if number is None:
                continue
            e164 = phonenumbers.format_number(number, PhoneNumberFormat.E164)
            out += [e164, e164[1:], "00" + e164[1:], phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL),
                    phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL), e164[1:] + ".0"]
            nsn = phonenumbers.national_significant_number(number)
            out += [f"+{number.country_code} (0){nsn}", f"{number.country_code}0{nsn}", nsn, "0" + nsn, nsn[:-1]]
    return out


EXAMPLES = _examples()


def _digits_only(text: str) -> str:
    return "".join(filter(str.isdigit, text))


def _phone_like(draw: st.DrawFn) -> str:
    code = draw(st.sampled_from(sorted(COUNTRY_CODE_TO_REGION_CODE)))
    national = draw(st.text("0123456789", min_size=0, max_size=14))
    trunk = draw(st.sampled_from(["", "", "0", "(0)", "1", "8", "00", "011", "810", "15", "90"]))
    lead = draw(st.sampled_from(["+", "00", "", "", "011", "+ ", "++", "0"]))
    with_code = draw(st.booleans())
    digits = f"{code if with_code else ''}{trunk}{national}"
    cuts = draw(st.lists(st.integers(0, len(digits)), max_size=4))
    for cut in sorted(cuts, reverse=True):
        separator = draw(st.sampled_from([" ", "-", ".", "/", "(", ")", "\u00a0", "\t", "\u2009", "  "]))
        digits = digits[:cut] + separator + digits[cut:]
    text = lead + digits
    return draw(st.sampled_from([text, text, f" {text} ", text + ".0", text + ".00", text.replace(" ", "")]))


@st.composite
def messy_phone(draw: st.DrawFn) -> object:
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return draw(st.sampled_from(EXAMPLES))
    if kind <= 7:
        return _phone_like(draw)
    if kind == 8:  # numbers that went through a float column, as floats or as their text
        number = draw(st.integers(1, 10**16))
        return draw(st.sampled_from([float(number), f"{float(number)}", f"{float(number):.6g}", number, -number]))
    return draw(st.one_of(st.text(max_size=20), st.just(""), st.none(), st.just(float("nan")),
                          st.sampled_from(["n/a", "call me", "3.46001e+10", "+34 600", "٣٤٦٠٠١٢٣٤٥٦", "+٣٤٦٠٠١٢٣٤٥٦",
                                           "34600123456\n", "\u300034600123456", "3460012345ꓸ0", "+"])))


def _scalar(values: list[object], region: str) -> list[object]:
    return [normalise_phone(v, region) for v in values]


def _vectorised(values: list[object], region: str, dtype: str | None) -> tuple[list[object], list[bool]]:
    series = pd.Series(values, dtype=dtype)
    out, valid = columns.normalise_phones(series, region)
    return [None if pd.isna(v) else v for v in out.tolist()], valid.tolist()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(messy_phone(), min_size=1, max_size=40), region=st.sampled_from(DEFAULTS + REGIONS[:40]),
       repeat=st.booleans())
@example(values=["+44 (0)7700 900123", "07700 900123", "0034600123456", "600 123 456", "3.46001e+10"], region="GB",
         repeat=False)
def test_normalise_phones_agrees_with_normalise_phone_on_messy_values(values, region, repeat):
    if repeat:
        values = values + values[::-1]
    # the rule is compared on the values the column holds (pandas turns ints beside a NaN into floats: -1000000
    # typed as an int is a valid GB number, -1000000.0 from a float column is not, for both rules)
    expected = _scalar(pd.Series(values).tolist(), region)
    texts = [v for v in values if isinstance(v, str) or v is None]
    got, valid = _vectorised(values, region, None)  # object column: mixed floats, ints and text
    assert got == expected
    assert valid == [e is not None for e in expected]
    got_str, _ = _vectorised(texts, region, "str")  # a text column as read from a CSV
    assert got_str == _scalar(texts, region)


@pytest.mark.parametrize("region", DEFAULTS)
def test_every_regions_example_numbers_as_written_give_the_scalar_answer(region):
    got, _ = _vectorised(EXAMPLES, region, "str")
    expected = _scalar(EXAMPLES, region)
    mismatches = [(v, g, e) for v, g, e in zip(EXAMPLES, got, expected, strict=True) if g != e]
    assert mismatches == []


def test_a_column_longer_than_one_slice_of_rows_gets_the_scalar_answer_in_every_row():
    # normalise_phones cleans a slice of rows at a time; the seams must not show
    sample = EXAMPLES[:40] + ["+34 600 12 34 56", "0034600123456", "34600123456.0", "n/a", "", "612.34.56.78"]
    values = [sample[i % len(sample)] for i in range(columns._ROWS_AT_ONCE + 1000)]
    got, _ = _vectorised(values, "ES", "str")
    answer = dict(zip(sample, _scalar(sample, "ES"), strict=True))
    assert got == [answer[value] for value in values]


def test_float_columns_are_read_as_whole_numbers_like_the_scalar_rule():
    values = [34600123456.0, 351912345678.0, float("nan"), 1.5, -34600123456.0, 1e20, 0.0]
    got, valid = _vectorised(values, "ES", "float64")
    assert got == _scalar(values, "ES") == ["34600123456", "351912345678", None, None, None, None, None]
    ints = [34600123456, -34600123456, 12]
    assert _vectorised(ints, "ES", "int64")[0] == _scalar(ints, "ES") == ["34600123456", "34600123456", None]


def test_the_result_keeps_the_index_and_name_and_the_input_is_untouched():
    series = pd.Series(["+34 600 123 456", None], index=["a", "b"], name="Mobile", dtype="str")
    before = series.copy()
    out, valid = columns.normalise_phones(series)
    pd.testing.assert_series_equal(series, before)
    assert out.name == "Mobile" and list(out.index) == ["a", "b"] and out.dtype == "str"
    assert valid.dtype == bool and valid.tolist() == [True, False]
    empty, none_valid = columns.normalise_phones(pd.Series([], dtype="str"))
    assert len(empty) == 0 and len(none_valid) == 0


def test_tables_come_from_phonenumbers_metadata():
    tables = numbering.tables()
    for code in COUNTRY_CODE_TO_REGION_CODE:
        for size in range(5, 15):
            number = str(code) + "9" * size
            if 8 <= len(number) <= 15:
                assert tables.possible[code, size] == is_valid_phone(number), number
    for region in REGIONS:
        metadata = PhoneMetadata.metadata_for_region(region)
        answers = numbering.length_answers(metadata)
        for size in range(0, 40):
            assert answers[size] == _test_number_length("9" * size, metadata), (region, size)


def test_only_e_and_capital_e_lower_to_an_e_and_strip_knows_pythons_whitespace():
    every = map(chr, range(sys.maxunicode + 1))
    assert {c for c in every if "e" in c.lower()} == {"e", "E"}
    whitespace = numbering.tables().whitespace
    assert set(whitespace) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}


emails = st.one_of(
    st.from_regex(r"[a-zA-Z0-9.+_-]{1,10}@[a-z0-9.-]{0,10}\.[a-z.]{0,4}", fullmatch=True),
    st.text(alphabet=st.sampled_from("aé@. \t\u00a0\u2028x-"), max_size=12),
    st.sampled_from(["ana@example.com", "ana@localhost", "ana@@x.es", "@x.es", "ana@x.", "ana@.es", " ana@x.es",
                     "a" * 250 + "@x.es", "a" * 249 + "@x.es", "ÀNA@Éxample.es", "ana@x.es\n", None]),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(emails, max_size=30))
def test_valid_emails_agrees_with_is_valid_email(values):
    expected = [is_valid_email(v) for v in values]
    assert columns.valid_emails(pd.Series(values, dtype=object)).tolist() == expected
    assert columns.valid_emails(pd.Series(values, dtype="str")).tolist() == expected
    keys = columns.recipient_keys(pd.Series(values, dtype="str"), "email").tolist()
    assert [None if pd.isna(k) else k for k in keys] == [email_key(v) for v in values]


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(messy_phone(), st.sampled_from(EXAMPLES).map(_digits_only)), max_size=30))
def test_valid_phones_agrees_with_is_valid_phone(values):
    assert columns.valid_phones(pd.Series(values, dtype=object)).tolist() == [is_valid_phone(v) for v in values]


def test_values_arrow_cannot_hold_get_the_scalar_answer():
    values = ["ana\ud800@x.es", "ana@x.es", 12]
    assert columns.valid_emails(pd.Series(values, dtype=object)).tolist() == [is_valid_email(v) for v in values]
    assert columns.valid_phones(pd.Series(["3460012345\ud800", "34600123456"], dtype=object)).tolist() == [False, True]
    assert np.array_equal(columns.normalise_phones(pd.Series(["\ud800", "600123456"], dtype=object))[1], [False, True])
