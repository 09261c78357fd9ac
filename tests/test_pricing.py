"""The price table: longest-prefix match, the default row, surcharges, vectorised lookups."""

from __future__ import annotations

import pandas as pd
import pytest

from sendframe.api.errors import ConfigurationError
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
    assert prices.message_cost("a@b.es", "mailing", attachments=2, certified=True) == pytest.approx(0.001 + 0.01 + 2 * 0.0005)
    assert prices.message_cost("34600123456", "voice") == pytest.approx(0.05)
    assert prices.message_cost("34600123456", "voiceAudio", answered=False) == 0.0
    assert prices.message_cost("34600123456", "whatsapp", parts=4) == pytest.approx(0.05)  # per message, not per part
    assert message_cost("34600123456", "sms", parts=2) == pytest.approx(0.09)


def test_vectorised_prices_agree_with_the_scalar_ones_and_keep_the_index(prices):
    numbers = pd.Series(["34600123456", "14165550123", "16502530000", None, "junk", "99912345678"], index=list("abcdef"))
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
    import doctest

    from sendframe import pricing

    assert doctest.testmod(pricing).failed == 0
