"""The price table: longest-prefix match, the default row, surcharges, vectorised lookups."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sendframe import pricing
from sendframe.errors import ConfigurationError
from sendframe.pricing import CHANNELS, DEFAULT_PRICES_PATH, load_prices, message_cost


@pytest.fixture(scope="module")
def prices():
    return load_prices()


def test_the_shipped_table_prices_every_channel_and_the_named_countries(prices):
    frame = prices.frame
    assert DEFAULT_PRICES_PATH.name == "prices.csv" and DEFAULT_PRICES_PATH.exists()
    assert set(prices.channels) == set(CHANNELS)
    assert {"ES", "PT", "GB", "US", "CA", "BR", "MX", "FR", "DE", "IT"} <= set(frame["country"])
    assert set(frame.loc[frame["prefix"] == "*", "channel"]) == set(CHANNELS)
    assert (frame["currency"] == "EUR").all()


@pytest.mark.parametrize(("number", "channel", "prefix", "price"), [
    ("34600123456", "sms", "34", 0.045),
    ("351912345678", "sms", "351", 0.039),
    ("14165550123", "sms", "1416", 0.0095),  # Toronto: the longer Canadian prefix wins over 1
    ("16502530000", "sms", "1", 0.009),
    ("447700900123", "whatsapp", "44", 0.04),
    ("5511987654321", "landingsms", "55", 0.033),
    ("99912345678", "sms", "*", 0.09),  # no country row: the default
    ("ana@example.com", "mailing", "*", 0.001),
    ("34", "voice", "34", 0.05),  # a bare prefix works too
    ("+34600123456", "sms", "34", 0.045),
])
def test_longest_prefix_match_and_default_row(prices, number, channel, prefix, price):
    assert prices.prefix_of(number, channel) == prefix
    assert prices.unit_price(number, channel) == pytest.approx(price)


def test_message_cost_charges_parts_certified_attachments_and_answered_calls(prices):
    assert prices.message_cost("34600123456", "sms", parts=3) == pytest.approx(0.135)
    assert prices.message_cost("34600123456", "sms", parts=3, certified=True) == pytest.approx(0.165)
    email = prices.message_cost("a@b.es", "mailing", attachments=2, certified=True)
    assert email == pytest.approx(0.001 + 0.01 + 2 * 0.0005)
    assert prices.message_cost("34600123456", "voice") == pytest.approx(0.05)
    assert prices.message_cost("34600123456", "voiceAudio", answered=False) == 0.0
    assert prices.message_cost("34600123456", "whatsapp", parts=4) == pytest.approx(0.05)  # per message, not per part
    assert message_cost("34600123456", "sms", parts=2) == pytest.approx(0.09)


def test_vectorised_prices_agree_with_the_scalar_ones_and_keep_the_index(prices):
    numbers = pd.Series(["34600123456", "14165550123", "16502530000", None, "junk", "99912345678"],
                        index=list("abcdef"))
    for channel in CHANNELS:
        vector = prices.unit_prices(numbers, channel)
        assert vector.index.tolist() == list("abcdef")
        assert vector.tolist() == [prices.unit_price(n, channel) for n in numbers.fillna("")]
    table = prices.lookup(numbers, "sms")
    assert table["country"].tolist() == ["ES", "CA", "US", "ZZ", "ZZ", "ZZ"]


def test_vectorised_costs_take_parts_per_row(prices):
    numbers = pd.Series(["34600123456", "351912345678"])
    costs = prices.costs(numbers, "sms", parts=pd.Series([2, 1]), certified=True)
    assert costs.tolist() == pytest.approx([0.045 * 2 + 0.03, 0.039 + 0.03])
    answered = prices.costs(numbers, "voice", answered=pd.Series([True, False]))
    assert answered.tolist() == pytest.approx([0.05, 0.0])


def test_an_unpriced_channel_is_a_plain_error(prices):
    with pytest.raises(ConfigurationError, match="no prices for channel 'fax'"):
        prices.unit_price("34600123456", "fax")


def test_a_custom_table_is_read_and_checked(tmp_path):
    good = tmp_path / "prices.csv"
    good.write_text("prefix,country,channel,unit_price,certified_surcharge,attachment_surcharge,currency\n"
                    "264,NA,sms,0.0500,0,0,EUR\n*,ZZ,sms,0.1,0,0,EUR\n")
    table = load_prices(good)
    assert table.unit_price("264811234567", "sms") == 0.05
    assert table.lookup(pd.Series(["264811234567"]), "sms")["country"].tolist() == ["NA"]  # Namibia, not missing
    bad = tmp_path / "bad.csv"
    bad.write_text("prefix,country,channel,unit_price,certified_surcharge,attachment_surcharge,currency\n"
                   "3x,ES,sms,-1,0,0,EUR\n34,ES,pigeon,0.1,0,0,EUR\n")
    with pytest.raises(ConfigurationError) as caught:
        load_prices(bad)
    text = str(caught.value)
    assert "line 2: prefix must be digits" in text and "line 2: unit_price must be a number of at least 0" in text
    assert "line 3: channel must be one of" in text and "no default row" in text
    with pytest.raises(ConfigurationError, match="No price table"):
        load_prices(tmp_path / "missing.csv")


def test_lookups_do_not_modify_the_numbers(prices):
    numbers = pd.Series(["34600123456", None], dtype=object)
    before = numbers.copy()
    prices.costs(numbers, "sms", parts=2)
    pd.testing.assert_series_equal(numbers, before)


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(pricing).failed == 0


_SHIPPED_PREFIXES = sorted(set(load_prices().frame["prefix"]) - {"*"})
_DIGITS = st.text("0123456789", max_size=12)
_SHORT_DIGITS = st.text("0123456789", max_size=3)
_PARTIAL_PREFIXES = ["1", "14", "141", "18", "186", "35", "3"]
_NOT_NUMBERS = ["junk", "34 600 123 456", "34-600", "346001234ab", "34\u00b2", "\u0663\u0664\u0666", "+", " 34", "34.0",
                "ana@example.com"]
_NUMBERS = st.one_of(
    st.builds(lambda prefix, tail: prefix + tail, st.sampled_from(_SHIPPED_PREFIXES), _DIGITS),  # incl. 1416, 1867...
    st.builds(lambda prefix, tail: prefix + tail, st.sampled_from(_PARTIAL_PREFIXES), _SHORT_DIGITS),
    st.text("0123456789", max_size=4),  # short, empty, unknown (999...) and leading zeros
    st.builds(lambda plus, number: plus + number, st.sampled_from(["+", "++"]),
              st.sampled_from([*_SHIPPED_PREFIXES, "", "999"])),
    st.sampled_from(_NOT_NUMBERS),
    st.text(max_size=6),
    st.none(),
)


def _agree(table, numbers, channel):
    found = table.lookup(numbers, channel)
    expected = [table.prefix_of(n, channel) for n in numbers]
    assert found["prefix"].tolist() == expected
    assert found.index.equals(numbers.index)
    assert found["unit_price"].tolist() == [table.unit_price(n, channel) for n in numbers]
    assert table.unit_prices(numbers, channel).tolist() == [table.unit_price(n, channel) for n in numbers]
    costs = table.costs(numbers, channel, parts=3, certified=True, attachments=2)
    assert costs.tolist() == [table.message_cost(n, channel, parts=3, certified=True, attachments=2) for n in numbers]
    assert costs.index.equals(numbers.index)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_NUMBERS, max_size=40), st.sampled_from(CHANNELS), st.sampled_from(["str", object]), st.integers(0, 3))
def test_the_vectorised_lookup_is_the_scalar_one_for_any_values(prices, numbers, channel, dtype, skip):
    # a slice: an offset arrow array
    series = pd.Series(numbers, dtype=dtype, index=[f"r{i}" for i in range(len(numbers))]).iloc[skip:]
    _agree(prices, series, channel)


def test_the_vectorised_lookup_handles_prefixes_longer_than_its_dense_table(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("prefix,country,channel,unit_price,certified_surcharge,attachment_surcharge,currency\n"
                    "1,US,sms,0.01,0,0,EUR\n0044,GB,sms,0.02,0,0,EUR\n123456,XA,sms,0.03,0,0,EUR\n1234567,XB,sms,0.04,0,0,EUR\n"
                    "98765,XC,sms,0.05,0,0,EUR\n*,ZZ,sms,0.1,0,0,EUR\n")
    table = load_prices(path)
    numbers = pd.Series(["1234567890", "123456", "12345", "1234568", "0044123", "044", "98765", "9876", "+1234567",
                         None, "x"])
    _agree(table, numbers, "sms")
    countries = table.lookup(numbers, "sms")["country"].tolist()
    assert countries == ["XB", "XA", "US", "XA", "GB", "ZZ", "XC", "ZZ", "XB", "ZZ", "ZZ"]


def test_the_vectorised_lookup_keeps_its_columns_dtypes_and_index(prices):
    for numbers in (pd.Series(["34600123456", None], index=[7, 3], dtype="str"), pd.Series([], dtype="str"),
                    pd.Series([None, None], dtype=object), pd.Series(["", ""], dtype="str")):
        found = prices.lookup(numbers, "sms")
        assert found.columns.tolist() == ["prefix", "country", "unit_price", "certified_surcharge",
                                          "attachment_surcharge", "currency"]
        assert found.dtypes.astype(str).tolist() == ["str", "str", "float64", "float64", "float64", "str"]
        assert found.index.equals(numbers.index) and len(found) == len(numbers)
        assert prices.costs(numbers, "sms").dtype == "float64"
        assert prices.unit_prices(numbers, "sms").name == "unit_price"
    mailing = prices.lookup(pd.Series(["34600123456", "a@b.es"]), "mailing")  # no prefixes at all: the default row
    assert mailing["prefix"].tolist() == ["*", "*"]
