"""Encodings: which characters each encoding carries, what they cost, and the vectorised versions."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.errors import InputError
from sendframe.text.encodings import (
    BASIC_CHARS,
    CHARSETS,
    ENCODINGS,
    GSM_PT_SHIFT_TABLE,
    cheapest_encoding,
    cheapest_encoding_series,
    message_units,
    message_units_series,
    to_deliverable,
    to_deliverable_series,
    unencodable_characters,
    unencodable_series,
)

EXTENSION = "^{}\\[~]|€\f"
PORTUGUESE_SHIFT_ONLY = "êçÔôÁáÊÀÍÓÚÃÕÂíóúãõâ"  # the A.2.3 characters not in the basic table
# Text drawn mostly from the interesting characters so every branch is hit.
INTERESTING = "aZ09 @£$¥èÇ\nΔ_ß" + EXTENSION + PORTUGUESE_SHIFT_ONLY + "ñÑ`ÿЖ中😀🇪"
texts = st.text(alphabet=st.sampled_from(INTERESTING) | st.characters(codec="utf-8"), max_size=60)


def test_basic_table_has_127_characters_plus_the_escape():
    assert len(BASIC_CHARS) == 127
    assert {"@", "£", "Ç", "Δ", "ß", "¿", "à", "\n", "\r"} <= BASIC_CHARS
    assert "ç" not in BASIC_CHARS and "`" not in BASIC_CHARS


def test_portuguese_single_shift_table_matches_3gpp_a23():
    assert GSM_PT_SHIFT_TABLE[0x05] == "ê" and GSM_PT_SHIFT_TABLE[0x09] == "ç"
    assert GSM_PT_SHIFT_TABLE[0x65] == "€" and GSM_PT_SHIFT_TABLE[0x7F] == "â"
    assert len(GSM_PT_SHIFT_TABLE) == 37
    assert set(PORTUGUESE_SHIFT_ONLY) | set(EXTENSION) == set(GSM_PT_SHIFT_TABLE.values()) - BASIC_CHARS


@pytest.mark.parametrize("char", list(EXTENSION))
def test_each_extension_character_costs_two_septets_in_gsm(char):
    assert message_units(char, "gsm") == 2
    assert message_units(char, "gsm-pt") == 2


def test_euro_costs_two_septets_in_gsm_and_one_unit_in_utf16():
    assert message_units("5€", "gsm") == 3
    assert message_units("5€", "utf-16") == 2


@pytest.mark.parametrize("char", list(PORTUGUESE_SHIFT_ONLY))
def test_portuguese_shift_characters_cost_two_septets_in_gsm_pt_and_are_unencodable_in_gsm(char):
    assert message_units(char, "gsm-pt") == 2
    assert unencodable_characters(char, "gsm") == [char]
    assert message_units(char, "gsm") == 1  # sent as "?"


def test_greek_capitals_in_both_tables_cost_one_septet_in_gsm_pt():
    assert message_units("ΦΓΩΠΨΣΘ", "gsm-pt") == 7


def test_emoji_counts_two_utf16_code_units():
    assert message_units("😀", "utf-16") == 2
    assert message_units("a😀b", "utf-16") == 4


def test_unencodable_characters_are_unique_in_order_of_appearance():
    assert unencodable_characters("Ñandú ü ú 😀 `x`", "gsm") == ["ú", "😀", "`"]
    assert unencodable_characters("anything 😀", "utf-16") == []


def test_cheapest_encoding_picks_the_first_that_carries_everything():
    assert cheapest_encoding("") == "gsm"
    assert cheapest_encoding("Hola {Ana}, 5€") == "gsm"
    assert cheapest_encoding("Olá João") == "gsm-pt"
    assert cheapest_encoding("Olá João 😀") == "utf-16"
    assert cheapest_encoding("Zoë") == "utf-16"


def test_to_deliverable_replaces_unencodable_characters_with_question_marks():
    assert to_deliverable("Olá 😀!", "gsm") == "Ol? ?!"
    assert to_deliverable("Olá 😀!", "gsm-pt") == "Olá ?!"
    assert to_deliverable("Olá 😀!", "utf-16") == "Olá 😀!"


def test_unknown_encoding_is_an_input_error_listing_the_valid_ones():
    with pytest.raises(InputError, match="gsm, gsm-pt, utf-16"):
        message_units("x", "latin-1")


def test_series_versions_keep_the_index_and_give_na_for_missing_text():
    s = pd.Series(["Olá", None, "5€"], index=[10, 20, 30])
    assert message_units_series(s).tolist() == [3, pd.NA, 3]
    assert message_units_series(s).index.tolist() == [10, 20, 30]
    assert cheapest_encoding_series(s).tolist() == ["gsm-pt", pd.NA, "gsm"]
    assert unencodable_series(s).tolist() == ["á", pd.NA, ""]
    assert to_deliverable_series(s).tolist() == ["Ol?", pd.NA, "5€"]


def test_series_functions_do_not_modify_their_input():
    s = pd.Series(["Olá", "x"])
    before = s.copy()
    message_units_series(s, "gsm-pt"), cheapest_encoding_series(s), to_deliverable_series(s)
    pd.testing.assert_series_equal(s, before)


def test_message_units_series_accepts_one_encoding_per_row():
    s = pd.Series(["€", "€", "😀"])
    assert message_units_series(s, pd.Series(["gsm", "utf-16", "utf-16"])).tolist() == [2, 1, 2]


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8))
def test_vectorised_units_encodings_and_unencodables_agree_with_scalar(values):
    s = pd.Series(values)
    assert cheapest_encoding_series(s).tolist() == [cheapest_encoding(v) for v in values]
    for encoding in ENCODINGS:
        assert message_units_series(s, encoding).tolist() == [message_units(v, encoding) for v in values]
        unencodable = ["".join(unencodable_characters(v, encoding)) for v in values]
        assert unencodable_series(s, encoding).tolist() == unencodable
        assert to_deliverable_series(s, encoding).tolist() == [to_deliverable(v, encoding) for v in values]


@settings(max_examples=60, deadline=None)
@given(texts)
def test_deliverable_text_is_fully_encodable_and_costs_the_same(text):
    for encoding in ENCODINGS:
        delivered = to_deliverable(text, encoding)
        assert unencodable_characters(delivered, encoding) == []
        assert message_units(delivered, encoding) == message_units(text, encoding)


def test_gsm_pt_carries_everything_gsm_carries():
    assert CHARSETS["gsm"] <= CHARSETS["gsm-pt"]
