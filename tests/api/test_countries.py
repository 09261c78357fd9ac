"""recipient_countries gives region_of's answer for every value: valid numbers of every region, messy ones, junk."""

from __future__ import annotations

import random

import pandas as pd
import phonenumbers
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneNumberType

from sendframe.api.countries import recipient_countries
from sendframe.api.recipients import region_of

SHARED_CODES = sorted(code for code, regions in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.items() if len(regions) > 1)
MESSY = [
    "", " ", "+34 600 12 34 56", "0034600123456", "34600123456.0", "34 600123456", "\u0663\u0664\u0666\u0660\u0660",
    "3" * 15, "3" * 16, "1234567", "abc", "+", "00", "0", "4407700900123", "78001234567", "74951234567", "77012345678",
    "88001234567", "800123456789", "8080123456", "979123456789", "14165550123", "12025550123", "16135550123",
    "447400123456", "441481256789", "447624123456", "447797123456", "447700900123", "3906698123456", "390612345678",
    "358181234567", "358401234567", "4779123456", "4741234567", "262269123456", "262639123456", "599318123",
    "5999123456", "59069012345", "590590123456", "61891623456", "61891012345", "61412345678", "212528123456",
    "212612345678", "290221234", "29089123", "12684601234", "17875550123", "18095550123", "18295550123",
]


def example_numbers() -> list[str]:
    """Every region's example number of every type, in API form, and variations of their last digits."""
    chooser = random.Random(12)
    numbers = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in (PhoneNumberType.FIXED_LINE, PhoneNumberType.MOBILE, PhoneNumberType.TOLL_FREE,
                     PhoneNumberType.PREMIUM_RATE, PhoneNumberType.SHARED_COST, PhoneNumberType.VOIP,
                     PhoneNumberType.PERSONAL_NUMBER, PhoneNumberType.PAGER, PhoneNumberType.UAN,
                     PhoneNumberType.VOICEMAIL):
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            number = f"{example.country_code}{phonenumbers.national_significant_number(example)}"
            numbers.append(number)
            for _ in range(6):
                keep = chooser.randint(1, len(number) - 1)
                numbers.append(number[:keep] + "".join(chooser.choice("0123456789") for _ in number[keep:]))
    for code in phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS:
        example = phonenumbers.example_number_for_non_geo_entity(code)
        if example is not None:
            numbers.append(f"{example.country_code}{phonenumbers.national_significant_number(example)}")
    return numbers


def answers_of_region_of(values: list[str | None]) -> list[str | None]:
    return [None if value is None else region_of(value) for value in values]


def answers(values: list[str | None]) -> list[str | None]:
    return [None if pd.isna(v) else v for v in recipient_countries(pd.Series(values, dtype="string")).tolist()]


def test_every_regions_example_numbers_and_their_neighbours_get_region_ofs_country():
    numbers = example_numbers()
    assert answers(numbers) == answers_of_region_of(numbers)
    # the shared codes are what the array rule has to settle region by region
    assert sum(1 for n in numbers if any(n.startswith(str(c)) for c in SHARED_CODES)) > 500


def test_messy_and_missing_values_get_region_ofs_country():
    values = [*MESSY, None]
    assert answers(values) == answers_of_region_of(values)
    assert answers(["447400123456", "441481256789", "447624123456", "17875550123", "14165550123", "123", None]) == [
        "GB", "GG", "IM", "PR", "CA", None, None]


def test_the_answer_keeps_the_index_and_name_and_the_input_is_unchanged():
    recipients = pd.Series(["34600123456", None, "447400123456"], index=[7, 3, 9], name="phone", dtype="object")
    kept = recipients.copy()
    countries = recipient_countries(recipients)
    assert countries.index.tolist() == [7, 3, 9] and countries.name == "phone" and str(countries.dtype) == "string"
    assert countries.fillna("?").tolist() == ["ES", "?", "GB"]
    pd.testing.assert_series_equal(recipients, kept)
    assert recipient_countries(pd.Series([], dtype="string")).tolist() == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SHARED_CODES + [34, 351, 800, 7, 1]),
                          st.text(alphabet="0123456789", min_size=3, max_size=13)), min_size=1, max_size=40))
def test_numbers_of_shared_calling_codes_get_region_ofs_country(pairs):
    values = [f"{code}{rest}" for code, rest in pairs]
    assert answers(values) == answers_of_region_of(values)
