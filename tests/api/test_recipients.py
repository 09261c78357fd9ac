"""The recipient rule: valid phone numbers and emails, calling codes, regions, normalisation."""

from __future__ import annotations

import doctest
import time

import numpy as np
import pandas as pd
import pytest

from sendframe.api import recipients
from sendframe.api.recipient_columns import normalise_phones
from sendframe.api.recipients import (
    calling_code,
    is_valid_email,
    is_valid_phone,
    normalise_phone,
    region_of,
)


@pytest.mark.parametrize("number", [
    "447700900123",  # Ofcom drama range: possible, not allocated
    "447700900000", "447700900999", "34600123456", "34911222333", "351912345678", "16502530000", "14165550123",
    "5511987654321", "525512345678", "33612345678", "4915112345678", "390612345678", "393471234567",
])
def test_possible_numbers_in_api_form_are_valid(number):
    assert is_valid_phone(number)


@pytest.mark.parametrize("number", [
    "+447700900123",  # the + is not API form
    "00447700900123",  # nor is 00
    "4407700900123",  # a trunk 0 after the calling code
    "5215512345678",  # Mexico's old mobile "1": no longer part of the number
    "34 600 123 456", "34-600-123-456", "3460012345",  # too short for Spain
    "346001234567",  # too long for Spain
    "1234567",  # fewer than 8 digits
    "3460012345678901",  # more than 15 digits
    "2800123456",  # 28 is no calling code
    "३४६००१२३४५६",  # non-ASCII digits
    "", 34600123456, None, 34600123456.0,
])
def test_anything_else_is_not_a_valid_phone(number):
    assert not is_valid_phone(number)


@pytest.mark.parametrize(("address", "valid"), [
    ("ana@example.com", True), ("a.b+tag@sub.example.es", True), ("ana@localhost", False), ("ana example@x.es", False),
    ("ana@@x.es", False), ("@x.es", False), ("ana@x.", False), ("ana@.es", False), ("a" * 250 + "@x.es", False),
    (None, False),
])
def test_email_rule(address, valid):
    assert is_valid_email(address) is valid


@pytest.mark.parametrize(("number", "code", "region"), [
    ("34600123456", "34", "ES"), ("351912345678", "351", "PT"), ("447700900123", "44", "GB"),
    ("16502530000", "1", "US"), ("14165550123", "1", "CA"), ("5511987654321", "55", "BR"),
    ("79161234567", "7", "RU"), ("77012345678", "7", "KZ"),
])
def test_calling_code_and_region(number, code, region):
    assert calling_code(number) == code
    assert region_of(number) == region


def test_no_calling_code_or_region_for_what_is_not_a_number():
    assert calling_code("abc") == "" and calling_code("28") == ""
    assert region_of("+34600123456") is None and region_of("12") is None


@pytest.mark.parametrize(("raw", "region", "expected"), [
    ("+34 600 123 456", "ES", "34600123456"),
    ("0034 600-123-456", "ES", "34600123456"),
    ("(+34) 600.12.34.56", "ES", "34600123456"),
    ("600 123 456", "ES", "34600123456"),  # national number: the default region's prefix
    ("34600123456", "ES", "34600123456"),  # already API form
    ("447700900123", "ES", "447700900123"),  # another country's API form stays as it is
    ("07700 900123", "GB", "447700900123"),
    ("+44 (0)7700 900123", "ES", "447700900123"),  # trunk (0) removed
    ("(650) 253-0000", "US", "16502530000"),
    ("+52 55 1234 5678", "ES", "525512345678"),
    (34600123456.0, "ES", "34600123456"),  # went through a float column
    (34600123456, "ES", "34600123456"),
    ("34600123456.0", "ES", "34600123456"),
    ("3.46001e+10", "ES", None),  # scientific notation lost digits
    (3.46001e10 + 0.5, "ES", None),
    ("call me", "ES", None), ("", "ES", None), (None, "ES", None), (float("nan"), "ES", None), (pd.NA, "ES", None),
    ("12", "ES", None),
])
def test_normalise_phone_repairs_what_can_be_repaired(raw, region, expected):
    assert normalise_phone(raw, default_region=region) == expected


def test_every_normalised_number_is_valid():
    raws = ["+34 600 123 456", "600123456", "07700 900123", "+1 650 253 0000", "0049 151 12345678"]
    for raw in raws:
        result = normalise_phone(raw, "GB" if raw.startswith("07") else "ES")
        assert result is not None and is_valid_phone(result), raw


def test_normalise_phones_keeps_index_and_name_and_leaves_input_alone():
    raw = pd.Series(["+34 600 123 456", "nope", 34600123456.0, None, "+34 600 123 456"], index=[10, 11, 12, 13, 14],
                    name="phone", dtype=object)
    before = raw.copy()
    result, _ = normalise_phones(raw)
    assert result.index.tolist() == [10, 11, 12, 13, 14] and result.name == "phone"
    assert result.tolist()[0::2] == ["34600123456", "34600123456", "34600123456"]
    assert result.isna().tolist() == [False, True, False, True, False]
    pd.testing.assert_series_equal(raw, before)


def test_normalise_phones_on_a_float_column_and_on_nothing():
    floats = pd.Series([34600123456.0, np.nan, 447700900123.0])
    assert normalise_phones(floats)[0].tolist()[0::2] == ["34600123456", "447700900123"]
    assert normalise_phones(pd.Series([], dtype="str"))[0].empty


def test_is_valid_phone_is_fast_enough_for_large_lists():
    numbers = [f"34{600000000 + i}" for i in range(20_000)]
    start = time.perf_counter()
    assert all(map(is_valid_phone, numbers))
    assert time.perf_counter() - start < 2.0  # ~1 µs each; generous for loaded CI machines


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(recipients).failed == 0
