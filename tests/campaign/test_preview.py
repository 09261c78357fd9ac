"""render: the text each recipient gets, with placeholders of the real length."""

from __future__ import annotations

import pandas as pd
import pytest

from sendframe.campaign.preview import render
from sendframe.errors import InputError, TemplateError

BASE = "https://sms.example.org"


def test_variables_and_filters_are_applied_per_row_on_the_contacts_index():
    contacts = pd.DataFrame({"name": ["ana maría", "BO"], "amount": ["1234567.5", "12"]}, index=[10, 20])
    text = render(contacts, "Hi {name|capitalizeAll}: {amount|formatDotComma} EUR")
    assert text.to_dict() == {10: "Hi Ana María: 1.234.567,5 EUR", 20: "Hi BO: 12 EUR"}
    assert text.name == "text"


def test_unsubscribe_and_landing_links_have_their_real_length():
    text = render(pd.DataFrame({"x": ["1"]}), "{UNSUB_URL} {LAND_URL}", link_base=BASE)[0]
    unsub, land = text.split(" ")
    assert unsub.startswith(BASE + "/u/") and len(unsub) == len(BASE) + len("/u/") + 12
    assert land.startswith(BASE + "/l/") and len(land) == len(BASE) + len("/l/") + 12


def test_shortened_links_have_their_real_length():
    long_url = pd.DataFrame({"url": ["https://shop.example/a/very/long/path?with=query"]})
    text = render(long_url, "{url|shorten}", link_base=BASE)[0]
    assert text.startswith(BASE + "/s/") and len(text) == len(BASE) + len("/s/") + 8


def test_otp_placeholder_follows_the_otp_config():
    contacts = pd.DataFrame({"x": ["1"]})
    assert render(contacts, "code {OTP_CODE}")[0] == "code 0000"
    assert render(contacts, "code {OTP_CODE}", otp_config={"length": 6})[0] == "code 000000"
    assert render(contacts, "code {OTP_CODE}", otp_config={"length": 5, "alpha": True})[0] == "code AAAAA"


def test_an_out_of_range_otp_length_is_refused():
    with pytest.raises(InputError, match="between 3 and 10"):
        render(pd.DataFrame({"x": ["1"]}), "{OTP_CODE}", otp_config={"length": 12})


def test_link_base_defaults_to_the_environment(monkeypatch):
    monkeypatch.setenv("SENDFRAME_BASE_URL", "http://127.0.0.1:9999/")
    assert render(pd.DataFrame({"x": ["1"]}), "{UNSUB_URL}")[0].startswith("http://127.0.0.1:9999/u/")


def test_trans_1_applies_the_translation_table_and_0_keeps_the_text_as_written():
    contacts = pd.DataFrame({"name": ["Joaquín Simões"]})
    assert render(contacts, "Olá {name}", trans=1)[0] == "Ola Joaquin Simoes"
    assert render(contacts, "Olá {name}")[0] == "Olá Joaquín Simões"


def test_a_row_missing_a_variable_has_no_text():
    text = render(pd.DataFrame({"name": ["Ana", None]}), "Hi {name}")
    assert text[0] == "Hi Ana" and pd.isna(text[1])


def test_an_unknown_filter_is_refused_before_rendering():
    with pytest.raises(TemplateError, match="shout"):
        render(pd.DataFrame({"name": ["Ana"]}), "Hi {name|shout}")


def test_the_contacts_frame_is_not_modified():
    contacts = pd.DataFrame({"name": ["ana"], "url": ["https://x.example/p"]})
    before = contacts.copy()
    render(contacts, "{name|upper} {url|shorten} {UNSUB_URL}", trans=1)
    pd.testing.assert_frame_equal(contacts, before)


def test_only_dataframes_are_accepted():
    with pytest.raises(InputError, match="DataFrame"):
        render([{"name": "Ana"}], "Hi {name}")  # type: ignore[arg-type]
