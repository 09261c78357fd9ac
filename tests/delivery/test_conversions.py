"""conversions: each rule of the window on hand-worked cases, and the whole against a plain merge-then-filter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sendframe
from sendframe.delivery.conversions import conversions
from sendframe.errors import InputError, UnknownOptionError


def utc(*stamps: str | None) -> pd.api.extensions.ExtensionArray:
    return pd.Series(pd.to_datetime(list(stamps), utc=True)).array


def outcome_table() -> pd.DataFrame:
    """r1 delivered, r2 sent not delivered, r3 and r4 in the holdout, r5 refused; first send 10:00."""
    return pd.DataFrame({
        "recipient": ["34600000001", "34600000002", "34600000003", "ana@example.com", "34600000005"],
        "variant": ["A", "A", "holdout", "holdout", "A"],
        "outcome": ["accepted", "accepted", "holdout", "holdout", "rejected"],
        "sent_at": utc("2026-11-20 10:05", "2026-11-20 10:00", None, None, None),
        "delivered_at": utc("2026-11-20 10:06", None, None, None, None),
    }, index=[10, 11, 12, 13, 14])


def test_the_first_event_in_the_window_converts_and_revenue_sums_every_event_in_it():
    events = pd.DataFrame({
        "recipient": ["34600000001"] * 4,
        "time": utc("2026-11-20 10:05", "2026-11-21 00:00", "2026-11-24 10:00", "2026-11-25 10:06"),
        "amount": [100.0, 20.0, 5.0, 7.0],
    })
    # window [10:06 on the 20th, 10:06 on the 25th): the 10:05 order is before the anchor, the last one is at
    # the window's end (excluded); 20 + 5 count
    found = conversions(outcome_table(), events, window="5D", value="amount")
    assert found.loc[10, "converted"] and found.loc[10, "revenue"] == 25.0
    assert found.loc[10, "converted_at"] == pd.Timestamp("2026-11-21 00:00", tz="UTC")


def test_a_recipient_without_its_anchor_has_no_window():
    events = pd.DataFrame({"recipient": ["34600000002", "34600000005"],
                           "time": utc("2026-11-20 11:00", "2026-11-20 11:00"), "amount": [10.0, 10.0]})
    delivered = conversions(outcome_table(), events, window="5D", value="amount")
    assert not delivered.loc[11, "converted"] and delivered.loc[11, "revenue"] == 0.0  # sent, never delivered
    assert not delivered.loc[14, "converted"]  # refused: neither sent nor delivered
    sent = conversions(outcome_table(), events, window="5D", anchor="sent", value="amount")
    assert sent.loc[11, "converted"] and sent.loc[11, "revenue"] == 10.0
    assert not sent.loc[14, "converted"]


def test_the_holdout_is_anchored_at_the_campaigns_first_send_time():
    events = pd.DataFrame({
        "recipient": ["600000003", "ANA@example.com ", "34600000003"],
        "time": utc("2026-11-20 10:00", "2026-11-25 09:59", "2026-11-20 09:59"),
        "amount": [8.0, 3.0, 50.0],
    })
    found = conversions(outcome_table(), events, window="5D", value="amount")
    # first send 10:00 on the 20th (r2's): the window is [10:00 on the 20th, 10:00 on the 25th)
    assert found.loc[12, "converted"] and found.loc[12, "revenue"] == 8.0  # the 09:59 order came before
    assert found.loc[13, "converted"] and found.loc[13, "revenue"] == 3.0  # the same email typed another way
    assert found.loc[12, "converted_at"] == pd.Timestamp("2026-11-20 10:00", tz="UTC")


def test_time_zones_are_honoured_and_naive_times_refused():
    table = outcome_table()
    # 11:05 in Madrid is 10:05 UTC: before r1's anchor (10:06 UTC); 11:07 in Madrid is after it
    events = pd.DataFrame({"recipient": ["34600000001", "34600000001"],
                           "time": ["2026-11-20T11:05:00+01:00", "2026-11-20T11:07:00+01:00"]})
    found = conversions(table, events, window="1h")
    assert found.loc[10, "converted_at"] == pd.Timestamp("2026-11-20 10:07", tz="UTC")
    local = events.assign(time=pd.to_datetime(events["time"]).dt.tz_convert("Europe/Madrid"))
    assert conversions(table, local, window="1h").loc[10, "converted_at"] == found.loc[10, "converted_at"]
    with pytest.raises(InputError, match="no time zone"):
        conversions(table, events.assign(time=pd.to_datetime(["2026-11-20 11:05", "2026-11-20 11:07"])), window="1h")
    with pytest.raises(InputError, match="without a time zone"):
        conversions(table, events.assign(time=["2026-11-20 11:05", "2026-11-20 11:07"]), window="1h")


def test_only_the_named_events_count_and_without_value_revenue_is_missing():
    events = pd.DataFrame({"recipient": ["34600000001", "34600000001"], "kind": ["visit", "purchase"],
                           "time": utc("2026-11-20 11:00", "2026-11-21 11:00")})
    found = conversions(outcome_table(), events, window="5D", event={"kind": "purchase"})
    assert found.loc[10, "converted_at"] == pd.Timestamp("2026-11-21 11:00", tz="UTC")
    assert found["revenue"].isna().all()
    none = conversions(outcome_table(), events, window="5D", event={"kind": ["signup"]})
    assert not none["converted"].any() and none["converted_at"].isna().all()


def test_a_national_number_in_the_outcome_table_is_read_in_default_region():
    # the send result keeps the contact's value as typed: a holdout row's "612 34 56 78" is +34 612 34 56 78
    table = outcome_table()
    table.loc[12, "recipient"] = "612 34 56 78"
    events = pd.DataFrame({"recipient": ["+34612345678"], "time": utc("2026-11-21 10:00")})
    assert conversions(table, events, window="5D").loc[12, "converted"]
    in_portugal = conversions(table.assign(recipient=table["recipient"].replace("612 34 56 78", "912345678")),
                              events.assign(recipient="+351912345678"), window="5D", default_region="PT")
    assert in_portugal.loc[12, "converted"]


def test_the_input_is_not_modified_and_the_columns_are_added():
    table, events = outcome_table(), pd.DataFrame({"recipient": ["34600000001"], "time": utc("2026-11-21 11:00")})
    before = table.copy()
    found = conversions(table, events, window=pd.Timedelta(days=5))
    pd.testing.assert_frame_equal(table, before)
    assert found.columns.tolist() == [*before.columns, "converted", "converted_at", "revenue"]
    assert str(found["converted_at"].dtype) == "datetime64[ns, UTC]"
    assert found.attrs["conversion_window"] == pd.Timedelta(days=5)


def test_bad_input_is_refused_in_plain_english():
    table, events = outcome_table(), pd.DataFrame({"recipient": ["34600000001"], "time": utc("2026-11-21 11:00"),
                                                   "amount": ["lots"]})
    with pytest.raises(InputError, match="not a length of time"):
        conversions(table, events, window="five days")
    with pytest.raises(InputError, match="needs the column 'clicked_at'"):
        conversions(table, events, window="5D", anchor="clicked")
    with pytest.raises(InputError, match="row 0 has 'lots'"):
        conversions(table, events, window="5D", value="amount")
    with pytest.raises(InputError, match="on='phone' is not a column"):
        conversions(table, events, window="5D", on="phone")
    with pytest.raises(UnknownOptionError, match="Did you mean 'anchor'"):
        conversions(table, events, window="5D", anchr="sent")


def test_clicked_anchor_reads_clicked_at():
    table = outcome_table().assign(clicked_at=utc("2026-11-20 12:00", None, None, None, None))
    events = pd.DataFrame({"recipient": ["34600000001", "34600000001"],
                           "time": utc("2026-11-20 11:00", "2026-11-20 13:00")})
    found = conversions(table, events, window="1D", anchor="clicked")
    assert found.loc[10, "converted_at"] == pd.Timestamp("2026-11-20 13:00", tz="UTC")


def test_random_tables_agree_with_a_plain_merge_then_filter():
    rng = np.random.default_rng(7)
    n = 300
    phones = [f"346000{i:05d}" for i in range(n)]
    start = pd.Timestamp("2026-11-20", tz="UTC")
    sent = start + pd.to_timedelta(rng.integers(0, 3600, n), unit="s")
    delivered = pd.Series(sent + pd.to_timedelta(rng.integers(1, 60, n), unit="s"))
    delivered[rng.random(n) < 0.2] = pd.NaT
    outcome = np.where(rng.random(n) < 0.1, "holdout", "accepted")
    table = pd.DataFrame({"recipient": phones, "outcome": outcome, "sent_at": sent, "delivered_at": delivered})
    table.loc[table["outcome"] == "holdout", ["sent_at", "delivered_at"]] = pd.NaT
    m = 2000
    events = pd.DataFrame({"recipient": rng.choice(phones + ["34699999999"], m),
                           "time": start + pd.to_timedelta(rng.integers(-86400, 8 * 86400, m), unit="s"),
                           "amount": rng.lognormal(3, 1, m).round(2)})
    found = conversions(table, events, window="5D", value="amount")

    first_send = table["sent_at"].min()
    anchors = table.assign(anchor=table["delivered_at"].where(table["outcome"] != "holdout", first_send))
    pairs = anchors.reset_index().merge(events, on="recipient")
    inside = pairs[(pairs["time"] >= pairs["anchor"]) & (pairs["time"] < pairs["anchor"] + pd.Timedelta("5D"))]
    expected_revenue = inside.groupby("index")["amount"].sum().reindex(table.index, fill_value=0.0)
    expected_first = inside.groupby("index")["time"].min().reindex(table.index)
    assert found["converted"].sum() > 50
    np.testing.assert_allclose(found["revenue"].to_numpy(), expected_revenue.to_numpy())
    assert (found["converted"] == expected_first.notna()).all()
    pd.testing.assert_series_equal(found["converted_at"], expected_first.astype("datetime64[ns, UTC]"),
                                   check_names=False)


def test_conversions_is_exported_at_the_top_level():
    assert sendframe.conversions is conversions
