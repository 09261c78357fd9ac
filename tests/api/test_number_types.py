"""number_types gives phonenumbers' own number_type for every number: examples of every type of every region,
random valid numbers of every region, their neighbours, messy values."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import phonenumbers
import pytest
from phonenumbers import PhoneNumberType

from sendframe.api.number_types import NOT_SMS_TYPES, NUMBER_TYPES, number_types, receives_sms, types_of_numbers
from sendframe.api.recipients import is_valid_phone
from tests.api.test_countries import MESSY, example_numbers

_TYPES = [value for name, value in vars(PhoneNumberType).items() if name.isupper() and isinstance(value, int)]


def phonenumbers_type(value: str | None) -> str | None:
    if value is None or not is_valid_phone(value):
        return None
    kind = phonenumbers.number_type(phonenumbers.parse("+" + value))
    return next(name.lower() for name, v in vars(PhoneNumberType).items() if name.isupper() and v == kind)


def random_valid_numbers(count_per_region: int = 20) -> list[str]:
    """Random national numbers of every region that phonenumbers calls valid (drawn from each example's shape)."""
    chooser = random.Random(21)
    numbers = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in _TYPES:
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            national = phonenumbers.national_significant_number(example)
            found = 0
            for _ in range(200):
                head = chooser.randint(1, max(1, len(national) - 2))
                candidate = national[:head] + "".join(chooser.choice("0123456789") for _ in national[head:])
                try:
                    parsed = phonenumbers.parse(candidate, region)
                except phonenumbers.NumberParseException:
                    continue
                if phonenumbers.is_valid_number(parsed):
                    numbers.append(f"{parsed.country_code}{phonenumbers.national_significant_number(parsed)}")
                    found += 1
                    if found == count_per_region:
                        break
    return numbers


def answers(values: list[str | None]) -> list[str | None]:
    return [None if pd.isna(v) else v for v in number_types(pd.Series(values, dtype="string")).tolist()]


def test_every_regions_example_numbers_and_their_neighbours_get_phonenumbers_type():
    values = example_numbers()
    expected = [phonenumbers_type(v) for v in values]
    assert answers(values) == expected
    assert {"mobile", "fixed_line", "fixed_line_or_mobile", "toll_free", "premium_rate", "voip"} <= set(expected)


def test_random_valid_numbers_of_every_region_get_phonenumbers_type():
    values = random_valid_numbers()
    assert len(values) > 5_000
    expected = [phonenumbers_type(v) for v in values]
    mismatches = [(v, e, a) for v, e, a in zip(values, expected, answers(values), strict=True) if e != a]
    assert mismatches == []


# national parts written with their trunk prefix after the code, which parse strips ("+49 0151 ...")
TRUNK_WRITTEN = ["4901511234567", "49015112345678", "330612345678", "4407400123456", "390612345678", "6102123456789",
                 "810312345678", "5501123456789", "5401123456789", "7890123456789", "79161234567", "380441234567"]


def test_messy_and_missing_values_get_phonenumbers_type_or_missing():
    values = [*MESSY, *TRUNK_WRITTEN, None]
    assert answers(values) == [phonenumbers_type(v) for v in values]


def test_the_answer_is_a_categorical_on_the_same_index_and_the_input_is_unchanged():
    values = pd.Series(["34600123456", "34912345678", None], index=[7, 3, 5], name="phone", dtype="string")
    before = values.copy()
    result = number_types(values)
    assert result.index.tolist() == [7, 3, 5] and result.name == "phone"
    assert list(result.cat.categories) == list(NUMBER_TYPES)
    pd.testing.assert_series_equal(values, before)


@pytest.mark.parametrize("kind", sorted(NOT_SMS_TYPES))
def test_lines_that_cannot_take_a_text_message_are_flagged(kind):
    assert receives_sms(pd.Series([kind, "mobile", "fixed_line_or_mobile"])).tolist() == [False, True, True]


def test_numbers_given_as_integers_get_the_same_types_each_distinct_one_typed_once():
    values = [v for v in example_numbers() if is_valid_phone(v)][:400]
    repeated = values + values[::-1] + [None]
    numbers = np.array([int(v) if v is not None else -1 for v in repeated], dtype=np.int64)
    typed = types_of_numbers(numbers)
    assert isinstance(typed, pd.Categorical) and list(typed.categories) == list(NUMBER_TYPES)
    assert [None if pd.isna(t) else t for t in typed] == answers(repeated)
