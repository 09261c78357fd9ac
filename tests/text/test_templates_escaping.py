"""escape_html: every substituted value HTML-escaped after its filter, the same in render and render_frame."""

from __future__ import annotations

import html

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sendframe.text.templates import render, render_frame

TEMPLATE = '<p class="{cls}">{name|upper} {name} {link|shorten} {UNSUB_URL}</p>'


@given(st.lists(st.fixed_dictionaries({"name": st.text(max_size=12), "cls": st.text(max_size=6)}),
                min_size=1, max_size=6))
def test_render_and_render_frame_escape_alike(rows):
    frame = pd.DataFrame([{**row, "link": "https://x.example/?a=1&b=<2>"} for row in rows])
    specials = {"UNSUB_URL": "http://127.0.0.1:8080/u/abc&def"}
    expected = [render(TEMPLATE, row, specials=specials, escape_html=True) for row in frame.to_dict("records")]
    assert render_frame(frame, TEMPLATE, specials=specials, escape_html=True).tolist() == expected


@given(st.text(max_size=40))
def test_an_escaped_value_reads_back_as_the_value_and_holds_no_markup(value):
    out = render("<b>{v}</b>", {"v": value}, escape_html=True)
    inner = out[3:-4]
    assert html.unescape(inner) == value
    assert not set("<>\"'") & set(inner)


def test_without_escape_html_nothing_changes():
    assert render("<b>{v}</b>", {"v": "<i>&"}) == "<b><i>&</b>"
    assert render_frame(pd.DataFrame({"v": ["<i>&"]}), "{v}").tolist() == ["<i>&"]
