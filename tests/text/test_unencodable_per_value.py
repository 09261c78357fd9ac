"""The vectorised "characters an encoding cannot carry" against the plain per-value rule."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.text.encodings import CHARSETS, unencodable_per_value

texts = st.text(alphabet=st.sampled_from("aé€[→😀中ßİ\n ñà") | st.characters(codec="utf-8"), max_size=15)


@settings(max_examples=80, deadline=None)
@given(st.lists(texts, max_size=12), st.integers(0, 3), st.sampled_from(sorted(CHARSETS)))
def testforeign_characters_are_each_values_unencodable_characters_in_order_of_appearance(values, skip, encoding):
    expected = ["".join(dict.fromkeys(c for c in v if c not in CHARSETS[encoding])) for v in values[skip:]]
    assert unencodable_per_value(pa.array(values, type=pa.string()).slice(skip), encoding).to_pylist() == expected
