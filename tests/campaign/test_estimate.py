"""estimate: encoding, units, parts and cost per row against hand-computed figures; totals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sendframe.campaign.contacts import read_contacts
from sendframe.campaign.message import Message, mailing, sms
from sendframe.campaign.prepared import estimate, estimate_totals
from sendframe.errors import InputError
from sendframe.pricing import load_prices

PRICES = """prefix,country,channel,unit_price,certified_surcharge,attachment_surcharge,currency
34,ES,sms,0.0400,0.0300,0.0000,EUR
351,PT,sms,0.0300,0.0300,0.0000,EUR
*,ZZ,sms,0.1000,0.0300,0.0000,EUR
34,ES,landingsms,0.0500,0.0300,0.0000,EUR
*,ZZ,landingsms,0.1000,0.0300,0.0000,EUR
*,ZZ,mailing,0.0010,0.0100,0.0005,EUR
"""

ES, PT = "34600123456", "351912345678"


@pytest.fixture
def prices(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text(PRICES, encoding="utf-8")
    return load_prices(path)


def sms_of(template: str, **options) -> Message:
    """An SMS of ``template`` allowing the channel's most parts unless told (the estimate counts every part)."""
    return sms(template, sender="Shop", **{"parts": 15, **options})


def one(text_value: str, phone: str = ES) -> pd.DataFrame:
    return pd.DataFrame({"phone": [phone], "body": [text_value]})


def test_a_short_gsm_text_is_one_part_at_the_country_price(prices):
    est = estimate(sms_of("Hola {name}"), pd.DataFrame({"phone": [ES, PT], "name": ["Ana", "João"]}), prices=prices)
    assert est["text"].tolist() == ["Hola Ana", "Hola João"]
    assert est["encoding"].tolist() == ["gsm", "gsm"]
    assert est["length"].tolist() == [8, 9]
    assert est["parts"].tolist() == [1, 1]
    assert est["country"].tolist() == ["ES", "PT"]
    assert est["unit_price"].tolist() == [0.04, 0.03]
    assert est["cost"].tolist() == [0.04, 0.03]
    assert est["lost_characters"].tolist() == ["", "ã"]  # gsm cannot carry ã: sent as ?


def test_the_country_is_the_numbers_own_not_the_price_rows():
    # +1 is one price row but many countries; +44 7624 is the Isle of Man, priced as the UK
    numbers = ["12125550123", "12045550123", "18095550123", "447624123456", "447400123456"]
    est = estimate(sms_of("Hi"), pd.DataFrame({"phone": numbers}))
    assert est["country"].tolist() == ["US", "CA", "DO", "IM", "GB"]
    assert est["unit_price"].iloc[2] == est["unit_price"].iloc[0]  # the +1 price row prices them


@pytest.mark.parametrize(("size", "parts"), [(160, 1), (161, 2), (306, 2), (307, 3)])
def test_gsm_parts_follow_160_and_153(prices, size, parts):
    est = estimate(sms_of("{body}"), one("a" * size), prices=prices)
    assert est.loc[0, "length"] == size
    assert est.loc[0, "parts"] == parts
    assert est.loc[0, "cost"] == pytest.approx(0.04 * parts)


def test_extension_characters_count_two_septets(prices):
    est = estimate(sms_of("{body}"), one("5€ {ok}"), prices=prices)
    assert est.loc[0, "length"] == 10  # € { } are 2 septets each: 7 characters + 3


def test_utf16_counts_code_units_and_emoji_count_two(prices):
    est = estimate(sms_of("{body}", encoding="utf-16"), one("😀" * 35), prices=prices)
    assert (est.loc[0, "length"], est.loc[0, "parts"]) == (70, 1)
    est = estimate(sms_of("{body}", encoding="utf-16"), one("😀" * 36), prices=prices)
    assert (est.loc[0, "length"], est.loc[0, "parts"]) == (72, 2)


def test_auto_picks_the_cheapest_encoding_and_names_what_forced_it(prices):
    contacts = pd.DataFrame({"phone": [ES] * 3, "body": ["Hello", "Olá", "Привет"]})
    est = estimate(sms_of("{body}", encoding="auto"), contacts, prices=prices)
    assert est["encoding"].tolist() == ["gsm", "gsm-pt", "utf-16"]
    assert est["forced_by"].tolist() == ["", "á", "Привет"]
    assert est["lost_characters"].tolist() == ["", "", ""]


def test_a_fixed_encoding_reports_what_would_be_lost(prices):
    est = estimate(sms_of("{body}", encoding="gsm"), one("Привет ok"), prices=prices)
    assert est.loc[0, "lost_characters"] == "Привет"
    assert est.loc[0, "length"] == 9  # each lost character is one septet (sent as ?)


def test_trans_1_is_applied_before_counting(prices):
    est = estimate(sms_of("{body}", trans=1), one("Olá"), prices=prices)
    assert est.loc[0, "text"] == "Ola" and est.loc[0, "lost_characters"] == ""


def test_certified_adds_its_surcharge_per_message(prices):
    est = estimate(sms_of("{body}", certified=True), one("a" * 200), prices=prices)
    assert est.loc[0, "cost"] == pytest.approx(2 * 0.04 + 0.03)


def test_rows_that_would_be_rejected_cost_nothing(prices):
    contacts = pd.DataFrame({"phone": [ES, "123", ES], "body": ["hi", "hi", None]})
    est = estimate(sms_of("{body}"), contacts, prices=prices)
    assert est["billable"].tolist() == [True, False, False]
    assert est["cost"].tolist() == [0.04, 0.0, 0.0]
    assert pd.isna(est.loc[2, "text"]) and pd.isna(est.loc[2, "parts"])


def test_rows_needing_more_parts_than_allowed_are_marked_and_not_billed(prices):
    contacts = pd.DataFrame({"phone": [ES, ES], "body": ["short", "a" * 161]})
    est = estimate(sms_of("{body}", parts=1), contacts, prices=prices)
    assert est["too_many_parts"].tolist() == [False, True]
    assert est["cost"].tolist() == [0.04, 0.0]


def test_totals_are_hand_computable(prices):
    contacts = pd.DataFrame({"phone": [ES, PT, ES, "bad"], "body": ["a" * 161, "hi", "Привет", "x"]})
    est = estimate(sms_of("{body}", encoding="auto"), contacts, prices=prices)
    totals = est.attrs["totals"]
    assert totals == estimate_totals(est)
    assert totals["rows"] == 4
    assert totals["billable"] == 3
    assert totals["messages"] == 2 + 1 + 1
    assert totals["cost"] == pytest.approx(0.08 + 0.03 + 0.04)
    assert totals["currency"] == "EUR"
    assert totals["encodings"] == {"gsm": 3, "utf-16": 1}


def test_totals_of_a_filtered_frame(prices):
    est = estimate(sms_of("{body}"), pd.DataFrame({"phone": [ES, PT], "body": ["hi", "hi"]}), prices=prices)
    assert estimate_totals(est[est["country"] == "PT"])["cost"] == pytest.approx(0.03)


def test_mailing_is_one_message_per_address_with_attachment_surcharges(prices):
    contacts = pd.DataFrame({"email": ["ana@example.com"], "name": ["Ana"]})
    est = estimate(mailing("Hi", "<p>Hola {name}</p>", from_email="news@shop.example"), contacts, attachments=2,
                   prices=prices)
    assert est.loc[0, "parts"] == 1 and pd.isna(est.loc[0, "encoding"])
    assert est.loc[0, "cost"] == pytest.approx(0.001 + 2 * 0.0005)


def test_the_contacts_frame_is_not_modified(prices):
    contacts = pd.DataFrame({"phone": [ES], "body": ["Olá"]})
    before = contacts.copy()
    estimate(sms_of("{body}", encoding="auto", trans=1), contacts, prices=prices)
    pd.testing.assert_frame_equal(contacts, before)


def test_bad_arguments_are_named():
    with pytest.raises(InputError, match="encoding"):
        estimate(sms_of("{body}", encoding="latin-1"), one("x"))
    with pytest.raises(InputError, match="parts"):
        estimate(sms_of("{body}", parts=0), one("x"))
    with pytest.raises(InputError, match="no phone column"):
        estimate(sms_of("hi"), pd.DataFrame({"customer": [ES]}))
    assert estimate(sms_of("hi"), pd.DataFrame({"Mobile": [ES]}))["billable"].all()  # a usual name for the phone column


def test_default_price_table_is_used_when_none_is_given():
    est = estimate(sms_of("{body}"), one("hi"))
    assert est.loc[0, "unit_price"] == load_prices().unit_price(ES, "sms")


def test_benchmark_runs_quick_and_prints_a_ratio():
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_render_estimate.py"
    proc = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ratio:" in proc.stdout and "peak memory" in proc.stdout


def test_read_contacts_validity_flags_count_only_for_the_column_they_describe():
    contacts = read_contacts(pd.DataFrame({"email": ["ana@example.com"], "work": ["not-an-email"]}))
    msg = mailing("Hi", "<p>Hi</p>", from_email="news@shop.example")
    assert estimate(msg, contacts)["billable"].tolist() == [True]
    assert estimate(msg.replace(to="work"), contacts)["billable"].tolist() == [False]
