"""SMS parts: limits, greedy splitting that never breaks a pair, and the vectorised count."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.errors import InputError
from sendframe.text.encodings import ENCODINGS, message_units
from sendframe.text.parts import (
    PART_LIMIT,
    SINGLE_LIMIT,
    exact_parts_needed,
    parts_from_units,
    sms_parts,
    sms_parts_series,
    split_parts,
)

INTERESTING = "ab €{ÁçΦ😀Ж"
texts = st.text(alphabet=st.sampled_from(INTERESTING), max_size=500)


def test_160_gsm_characters_fit_one_part_and_161_need_two():
    assert sms_parts("a" * 160) == 1
    assert sms_parts("a" * 161) == 2


def test_306_gsm_characters_need_two_parts_and_307_need_three():
    assert sms_parts("a" * 306) == 2
    assert sms_parts("a" * 307) == 3


def test_70_utf16_units_fit_one_part_and_71_need_two():
    assert sms_parts("Ж" * 70, "utf-16") == 1
    assert sms_parts("Ж" * 71, "utf-16") == 2
    assert sms_parts("Ж" * 134, "utf-16") == 2
    assert sms_parts("Ж" * 135, "utf-16") == 3


def test_gsm_pt_single_message_holds_155_septets_and_parts_149():
    assert sms_parts("a" * 155, "gsm-pt") == 1
    assert sms_parts("a" * 156, "gsm-pt") == 2
    assert sms_parts("a" * 298, "gsm-pt") == 2
    assert sms_parts("a" * 299, "gsm-pt") == 3
    assert [len(p) for p in split_parts("a" * 300, "gsm-pt")] == [149, 149, 2]


def test_empty_text_is_one_part():
    assert sms_parts("") == 1
    assert split_parts("") == [""]


def test_emoji_count_two_units_so_35_fit_one_utf16_message():
    assert sms_parts("😀" * 35, "utf-16") == 1
    assert sms_parts("😀" * 36, "utf-16") == 2


def test_euro_counts_two_septets_towards_the_single_limit():
    assert sms_parts("€" * 80) == 1
    assert sms_parts("€" * 80 + "a") == 2


def test_extension_character_straddling_a_part_boundary_moves_to_the_next_part():
    text = "a" * 152 + "€" + "a" * 152  # 306 septets: plain arithmetic says 2 parts
    pieces = split_parts(text)
    assert pieces == ["a" * 152, "€" + "a" * 151, "a"]
    assert sms_parts(text) == 3


def test_surrogate_pair_straddling_a_part_boundary_moves_to_the_next_part():
    text = "a" * 66 + "😀" + "a" * 66  # 134 code units: plain arithmetic says 2 parts
    assert split_parts(text, "utf-16") == ["a" * 66, "😀" + "a" * 65, "a"]
    assert sms_parts(text, "utf-16") == 3


def test_gsm_pt_shift_character_straddling_a_boundary_moves_to_the_next_part():
    text = "a" * 148 + "ç" + "a" * 148  # 298 septets
    assert sms_parts(text, "gsm-pt") == 3


def test_unencodable_characters_count_one_septet():
    assert sms_parts("Ж" * 160, "gsm") == 1
    assert sms_parts("Ж" * 161, "gsm") == 2


def test_unknown_encoding_is_an_input_error_listing_the_valid_ones():
    with pytest.raises(InputError, match="gsm, gsm-pt, utf-16"):
        sms_parts("x", "ucs2")
    with pytest.raises(InputError, match="row 1"):
        sms_parts_series(pd.Series(["a", "b"]), pd.Series(["gsm", "ucs2"]))


def test_sms_parts_series_is_int64_with_na_for_missing_text():
    out = sms_parts_series(pd.Series(["a" * 161, None, "€" * 81], index=[5, 6, 7]))
    assert str(out.dtype) == "Int64"
    assert out.tolist() == [2, pd.NA, 2]
    assert out.index.tolist() == [5, 6, 7]


def test_sms_parts_series_takes_one_encoding_per_row():
    text = pd.Series(["Ж" * 71, "Ж" * 71, "a" * 152 + "€" + "a" * 152])
    encodings = pd.Series(["utf-16", "gsm", "gsm"])
    assert sms_parts_series(text, encodings).tolist() == [2, 1, 3]


@settings(max_examples=80, deadline=None)
@given(texts, st.sampled_from(INTERESTING), st.sampled_from(ENCODINGS))
def test_appending_a_character_never_reduces_the_parts(text, char, encoding):
    assert sms_parts(text + char, encoding) >= sms_parts(text, encoding)


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab ÁçЖ@"), max_size=700))
def test_gsm_parts_equal_septet_arithmetic_without_extension_characters(text):
    units = message_units(text, "gsm")
    expected = 1 if units <= 160 else math.ceil(units / 153)
    assert sms_parts(text, "gsm") == expected


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab €ÁЖ中"), max_size=300))
def test_utf16_parts_equal_code_unit_arithmetic_without_astral_characters(text):
    units = len(text)
    expected = 1 if units <= 70 else math.ceil(units / 67)
    assert sms_parts(text, "utf-16") == expected


@settings(max_examples=80, deadline=None)
@given(texts, st.sampled_from(ENCODINGS))
def test_split_parts_respects_the_limits_and_rejoins_to_the_text(text, encoding):
    pieces = split_parts(text, encoding)
    assert "".join(pieces) == text
    assert len(pieces) == sms_parts(text, encoding)
    limit = SINGLE_LIMIT[encoding] if len(pieces) == 1 else PART_LIMIT[encoding]
    assert all(message_units(p, encoding) <= limit for p in pieces)
    # only the minimum: never more than one extra part over the plain arithmetic
    units = message_units(text, encoding)
    assert len(pieces) <= (1 if units <= SINGLE_LIMIT[encoding] else math.ceil(units / PART_LIMIT[encoding]) + 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), st.sampled_from(ENCODINGS))
def test_vectorised_parts_agree_with_scalar(values, encoding):
    assert sms_parts_series(pd.Series(values), encoding).tolist() == [sms_parts(v, encoding) for v in values]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(texts, st.sampled_from(ENCODINGS)), min_size=1, max_size=8))
def test_vectorised_parts_with_per_row_encodings_agree_with_scalar(rows):
    text = pd.Series([t for t, _ in rows])
    encodings = pd.Series([e for _, e in rows])
    assert sms_parts_series(text, encodings).tolist() == [sms_parts(t, e) for t, e in rows]


def test_exact_parts_needed_flags_every_row_where_the_arithmetic_is_wrong():
    random.seed(5)
    for encoding, double in (("gsm", "€"), ("gsm-pt", "ç"), ("utf-16", "😀")):
        for _ in range(400):
            text = "".join(random.choice(["a", double]) for _ in range(random.randint(100, 700)))
            units = np.array([message_units(text, encoding)])
            if not exact_parts_needed(units, np.array([True]), encoding)[0]:
                assert sms_parts(text, encoding) == parts_from_units(units, encoding)[0]
