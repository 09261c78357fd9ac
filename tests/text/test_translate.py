"""trans=1: exactly the spec's table."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.text.translate import TRANSLATION_TABLE, translate, translate_series

SPEC_PAIRS = [
    ("á", "a"), ("í", "i"), ("ó", "o"), ("ú", "u"), ("ç", "Ç"), ("Á", "A"), ("Í", "I"), ("Ó", "O"),
    ("Ú", "U"), ("À", "A"), ("È", "E"), ("Ì", "I"), ("Ò", "O"), ("Ù", "U"), ("º", ""), ("ª", ""),
    ("Õ", "O"), ("õ", "o"), ("â", "a"), ("ê", "e"), ("î", "i"), ("ô", "o"), ("û", "u"), ("Â", "A"),
    ("Ê", "E"), ("Î", "I"), ("Ô", "O"), ("Û", "U"), ("ã", "a"), ("Ã", "A"),
]  # fmt: skip


def test_table_is_exactly_the_spec_table():
    assert dict(SPEC_PAIRS) == TRANSLATION_TABLE


@pytest.mark.parametrize(("source", "target"), SPEC_PAIRS)
def test_every_pair_of_the_table_is_applied(source, target):
    assert translate(f"x{source}y") == f"x{target}y"
    assert translate_series(pd.Series([f"x{source}y"])).tolist() == [f"x{target}y"]


def test_other_characters_are_left_alone():
    assert translate("é ñ ü € 😀 Ç") == "é ñ ü € 😀 Ç"


def test_ordinal_indicators_are_removed():
    assert translate("1º andar, 2ª via") == "1 andar, 2 via"


def test_translate_series_keeps_missing_values_and_index():
    s = pd.Series(["Ação", None, "ok"], index=["a", "b", "c"])
    out = translate_series(s)
    assert out.tolist() == ["AÇao", pd.NA, "ok"]
    assert out.index.tolist() == ["a", "b", "c"]
    assert s.tolist()[0] == "Ação"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("".join(TRANSLATION_TABLE) + "abcé ñ😀")), max_size=6))
def test_vectorised_translation_agrees_with_scalar(values):
    assert translate_series(pd.Series(values, dtype="str")).tolist() == [translate(v) for v in values]
