"""measure_frame: text, encoding, units and parts per row, identical to the scalar functions."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.errors import InputError, MissingVariableError
from sendframe.text.encodings import ENCODINGS, cheapest_encoding, message_units, unencodable_characters
from sendframe.text.measure import measure_frame
from sendframe.text.parts import sms_parts
from sendframe.text.templates import coded_column, render


def test_measure_frame_picks_the_cheapest_encoding_per_row():
    frame = pd.DataFrame({"name": ["ana", "joão", "zoë", None]}, index=list("abcd"))
    out = measure_frame(frame, "Hi {name|capitalize} 5€")
    assert out["text"].tolist() == ["Hi Ana 5€", "Hi João 5€", "Hi Zoë 5€", pd.NA]
    assert out["encoding"].tolist() == ["gsm", "gsm-pt", "utf-16", pd.NA]
    assert out["units"].tolist() == [10, 12, 9, pd.NA]
    assert out.index.tolist() == list("abcd")


def test_measure_frame_splits_exactly_when_a_pair_straddles_a_boundary():
    frame = pd.DataFrame({"a": ["a" * 152], "b": ["a" * 152]})
    assert measure_frame(frame, "{a}€{b}")["parts"].tolist() == [3]


def test_forced_encoding_applies_to_every_row_and_is_checked():
    frame = pd.DataFrame({"n": ["Olá"]})
    assert measure_frame(frame, "{n}", encoding="gsm")[["encoding", "units"]].values.tolist() == [["gsm", 3]]
    with pytest.raises(InputError):
        measure_frame(frame, "{n}", encoding="ascii")


values = st.one_of(st.none(),
                   st.text(alphabet=st.sampled_from("ab {€ÁçЖ😀") | st.characters(codec="utf-8"), max_size=90))
templates = st.lists(st.sampled_from(["{x}", "{y|upper}", "{x|capitalizeAll}", "€", "ç", "😀", "Hola ", "{y}"]),
                     max_size=6).map("".join)


@settings(max_examples=60, deadline=None)
@given(templates, st.lists(st.tuples(values, values), min_size=1, max_size=6), st.sampled_from([None, *ENCODINGS]))
def test_measure_frame_agrees_with_render_cheapest_encoding_and_sms_parts(template, rows, encoding):
    frame = pd.DataFrame(rows, columns=["x", "y"]).astype("str")
    out = measure_frame(frame, template, encoding=encoding)
    for i, record in enumerate(frame.to_dict("records")):
        try:
            text = render(template, record)
        except MissingVariableError:
            assert out.iloc[i].isna().all()
            continue
        chosen = encoding or cheapest_encoding(text)
        assert out.iloc[i].tolist() == [text, chosen, message_units(text, chosen), sms_parts(text, chosen)]


def test_a_column_unique_in_its_first_rows_is_measured_row_by_row_with_the_same_answers():
    # 20,000 rows whose first 4,096 are distinct (so not dictionary-encoded), then repeats, gaps and accents
    ids = [f"{i}.5" for i in range(20_000)]
    ids[5000:5100] = ["12.5"] * 100
    ids[6000:6010] = [None] * 10
    ids[7000:7005] = ["Olá€", "ça", "中", "a" * 150 + "€", None]
    frame = pd.DataFrame({"id": pd.array(ids, dtype="string"), "name": ["ana", "zoë"] * 10_000})
    assert len(coded_column(frame["id"]).values) == frame["id"].notna().sum()  # coded row by row
    out = measure_frame(frame, "{name|capitalize} {id|formatDotComma} ok", unencodable=True)
    records = frame.to_dict("records")
    for i in [*range(50), *range(4090, 4100), *range(4990, 5110), *range(5990, 6020), *range(6990, 7010), 19_999]:
        record = records[i]
        if pd.isna(record["id"]):
            assert out.iloc[i].isna().all()
            continue
        text = render("{name|capitalize} {id|formatDotComma} ok", record)
        chosen = cheapest_encoding(text)
        assert out.iloc[i][["text", "encoding", "units", "parts"]].tolist() == [
            text, chosen, message_units(text, chosen), sms_parts(text, chosen)]
        assert out["unencodable_gsm"].iloc[i] == "".join(unencodable_characters(text, "gsm"))
