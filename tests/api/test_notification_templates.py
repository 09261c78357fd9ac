"""A notification URL compiled once (UrlTemplate + quote_value) fills byte for byte as substitute does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sendframe.api.notifications import ESCAPE_CODES, UrlTemplate, quote_value, substitute

CODES = "".join(ESCAPE_CODES)
TEMPLATES = [
    "http://x/dlr?" + "&".join(f"{code}=%{code}" for code in CODES) + "&mine=42",
    "http://x/%i%n%s/%%n/%x/100%25/%/end%",
    "http://x/{i}/{{%i}}/%%%i/%s%s%s",
    "no codes at all %q %% {}",
    "%i",
    "%i%d",
    "",
]
VALUES = ["", "ab12", "0190abc1234500001abc", "34612345678", "Shop & Co", "Tienda ñ €", "2026-11-21 09:30",
          "a/b?c=d#e", "100%", "+34 600", "{}", "-_.~", "x" * 300]


def _reference(template: str, values: dict[str, str]) -> str:
    return substitute(template, values)


def test_every_escape_code_and_awkward_value_fills_as_substitute_does():
    for template in TEMPLATES:
        compiled = UrlTemplate(template)
        for offset in range(len(VALUES)):
            values = {code: VALUES[(offset + n) % len(VALUES)] for n, code in enumerate(CODES)}
            quoted = {code: quote_value(value) for code, value in values.items()}
            assert compiled.fill(quoted) == _reference(template, values), (template, values)


def test_a_missing_value_fills_empty_as_substitute_does():
    template = "http://x/?i=%i&s=%s&n=%n"
    assert UrlTemplate(template).fill({"i": "ab"}) == substitute(template, {"i": "ab"}) == "http://x/?i=ab&s=&n="


@given(template=st.text(alphabet=st.sampled_from(list("%{}/?&=ab" + CODES)), max_size=40),
       values=st.dictionaries(st.sampled_from(list(CODES)), st.text(max_size=12)))
def test_any_template_and_values_fill_as_substitute_does(template, values):
    quoted = {code: quote_value(value) for code, value in values.items()}
    assert UrlTemplate(template).fill(quoted) == substitute(template, values)
