"""delivery_summary's values on small hand-built frames, each expected value worked out by hand."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from sendframe.delivery.metrics import SUMMARY_COLUMNS, delivery_summary
from sendframe.delivery.outcomes import message_outcomes
from sendframe.delivery.records import Records
from sendframe.delivery.statistics import wilson_intervals
from sendframe.notebook.charts import dashboard
from sendframe.notebook.report import summary_html

T0 = pd.Timestamp("2026-11-21 10:00:00", tz="UTC")


def campaign() -> tuple[pd.DataFrame, pd.DataFrame, Records, pd.DataFrame]:
    """Five accepted messages and one refused by the API.

    m1 ES 01 delivered after   2 s, clicked   billed 0.05
    m2 GB 01 delivered after  10 s, clicked   billed 0.04
    m3 ES 01 delivered after  30 s            billed 0.10 (two parts, each notification carries the message's cost)
    m4 ES 03 delivered after 100 s            billed 0.05
    m5 ES 03 undelivered                      billed 0.05
    -- ES    refused by the API (no id)
    """
    results = pd.DataFrame({
        "id": ["m1", "m2", "m3", "m4", "m5", None],
        "accepted": [True] * 5 + [False],
        "outcome": ["accepted"] * 5 + ["rejected"],
        "campaign_id": [7] * 6,
        "recipient": ["34600000001", "447700900002", "34600000003", "34600000004", "34600000005", "34600000006"],
    })
    rows = [  # id, part, status, delivery, mnc, cost, reported minute
        ("m1", 1, "DELIVRD", 1, "01", 0.05, "10:00"),
        ("m2", 1, "DELIVRD", 1, "01", 0.04, "10:00"),
        ("m3", 1, "DELIVRD", 1, "01", 0.10, "10:00"),
        ("m3", 2, "DELIVRD", 1, "01", 0.10, "10:00"),
        ("m4", 1, "DELIVRD", 1, "03", 0.05, "10:01"),
        ("m5", 1, "ACCEPTD", 4, "03", 0.05, "10:00"),
        ("m5", 1, "UNDELIV", 2, "03", 0.05, "10:02"),
    ]
    callbacks = pd.DataFrame(rows, columns=["id", "part", "status", "delivery", "mnc", "cost", "reported_at"])
    callbacks["reported_at"] = pd.to_datetime("2026-11-21 " + callbacks["reported_at"], utc=True)
    callbacks["sent_at"] = T0
    callbacks["recipient"] = callbacks["id"].map(dict(zip(results["id"], results["recipient"], strict=True)))
    callbacks["campaign_id"] = 7
    callbacks["sending_id"] = 1
    # record events carry seconds: they give the time to delivery
    delays = {"m1": 2, "m2": 10, "m3": 30, "m4": 100}
    events = pd.DataFrame(
        [(i, "sent", T0) for i in ["m1", "m2", "m3", "m4", "m5"]]
        + [(i, "delivered", T0 + pd.Timedelta(seconds=s)) for i, s in delays.items()],
        columns=["id", "type", "date"],
    )
    messages = pd.DataFrame({
        "id": ["m1", "m2", "m3", "m4", "m5"], "campaign_id": 7, "sending_id": 1,
        "is_clicked": [True, True, False, False, False],
    })
    estimate = pd.DataFrame({"cost": [0.05, 0.04, 0.10, 0.05, 0.05, 0.05]}, index=results.index)
    return results, callbacks, Records(messages, events, []), estimate


def test_time_to_delivery_is_the_median_and_95th_percentile_of_delivered_messages():
    results, callbacks, records, estimate = campaign()
    row = delivery_summary(results, callbacks, records, estimate=estimate).iloc[0]
    # delivered after 2, 10, 30, 100 s: median (10 + 30) / 2 = 20;
    # p95 by linear interpolation at position 0.95 * 3 = 2.85: 30 + 0.85 * (100 - 30) = 89.5
    assert row["seconds_to_delivery_p50"] == pytest.approx(20.0)
    assert row["seconds_to_delivery_p95"] == pytest.approx(89.5)


def test_counts_clicks_and_costs_add_up_by_hand():
    results, callbacks, records, estimate = campaign()
    row = delivery_summary(results, callbacks, records, estimate=estimate).iloc[0]
    counts = (row["sent"], row["accepted"], row["rejected"], row["delivered"], row["failed"], row["pending"])
    assert counts == (6, 5, 1, 4, 1, 0)
    assert row["delivery_rate"] == pytest.approx(4 / 5)
    assert row["clicks"] == 2  # m1 and m2
    # estimated for every row sent: 0.05 + 0.04 + 0.10 + 0.05 + 0.05 + 0.05
    assert row["estimated_cost"] == pytest.approx(0.34)
    # billed once per message, whatever its parts and notifications: 0.05 + 0.04 + 0.10 + 0.05 + 0.05
    assert row["billed_cost"] == pytest.approx(0.29)


def test_an_operator_is_its_country_and_mnc_so_01_in_spain_and_01_in_the_uk_are_two():
    results, callbacks, records, estimate = campaign()
    summary = delivery_summary(results, callbacks, records, by="operator", estimate=estimate)
    assert summary["accepted"].to_dict() == {"ES 01": 2, "ES 03": 2, "ES ?": 0, "GB 01": 1}
    assert summary.loc["ES 03", "delivered"] == 1 and summary.loc["ES 03", "failed"] == 1
    assert summary.loc["ES 01", "seconds_to_delivery_p50"] == pytest.approx(16.0)  # (2 + 30) / 2
    assert summary.loc["GB 01", "billed_cost"] == pytest.approx(0.04)


def test_grouping_by_mnc_also_groups_by_country():
    results, callbacks, records, _ = campaign()
    summary = delivery_summary(results, callbacks, records, by="mnc")
    assert list(summary.index.names) == ["country", "mnc"]
    keys = summary.index.to_frame(index=False)
    accepted = {(c, m): a for c, m, a in zip(keys["country"], keys["mnc"].fillna("?"), summary["accepted"],
                                                 strict=True)}
    assert accepted == {("ES", "01"): 2, ("ES", "03"): 2, ("ES", "?"): 0, ("GB", "01"): 1}


def test_time_to_delivery_from_notifications_alone_counts_whole_minutes():
    results, callbacks, _, _ = campaign()
    row = delivery_summary(results, callbacks).iloc[0]
    # without records the clock is the notifications' minutes: m1, m2, m3 at 0 s, m4 at 60 s
    # median (0 + 0) / 2 = 0; p95 at position 2.85: 0 + 0.85 * (60 - 0) = 51
    assert row["seconds_to_delivery_p50"] == pytest.approx(0.0)
    assert row["seconds_to_delivery_p95"] == pytest.approx(51.0)
    assert row["clicks"] == 0 and pd.isna(row["estimated_cost"])


def test_rows_never_attempted_are_not_sent_not_pending():
    results = pd.DataFrame({"id": ["m1", None, None], "accepted": [True, False, False],
                            "outcome": ["accepted", "rejected", "not_sent"], "campaign_id": [7, 7, 7]})
    outcomes = message_outcomes(results)
    assert outcomes["status"].tolist() == ["PENDING", "NOT_SENT", "NOT_SENT"]
    row = delivery_summary(results).iloc[0]
    assert (row["sent"], row["accepted"], row["rejected"], row["not_sent"], row["pending"]) == (3, 1, 1, 1, 1)


def test_each_rate_has_the_wilson_interval_statsmodels_gives():
    results, callbacks, records, estimate = campaign()
    row = delivery_summary(results, callbacks, records, estimate=estimate).iloc[0]
    low, high = proportion_confint(4, 5, alpha=0.05, method="wilson")  # 4 delivered of 5 accepted
    assert (row["delivery_rate_low"], row["delivery_rate_high"]) == (pytest.approx(low), pytest.approx(high))
    assert row["delivery_rate_low"] < row["delivery_rate"] < row["delivery_rate_high"]
    low, high = proportion_confint(1, 4, alpha=0.05, method="wilson")  # 1 of 4 delivered within 5 s
    assert (row["delivered_within_5s_low"], row["delivered_within_5s_high"]) == (pytest.approx(low),
                                                                                  pytest.approx(high))


def test_the_wilson_intervals_are_statsmodels_at_every_count_and_level_without_loading_it():
    successes, sizes = np.meshgrid(np.arange(0, 60), np.arange(1, 60))
    keep = successes <= sizes
    for alpha in (0.01, 0.05, 0.2):
        low, high = wilson_intervals(successes[keep], sizes[keep], alpha)
        want_low, want_high = proportion_confint(successes[keep], sizes[keep], alpha=alpha, method="wilson")
        np.testing.assert_allclose(low, want_low, rtol=0, atol=1e-12)
        np.testing.assert_allclose(high, want_high, rtol=0, atol=1e-12)
    assert np.isnan(wilson_intervals([0], [0])).all()
    # a summary's kernel does not load scipy.stats and statsmodels (about 85 MiB) for the intervals
    loaded = subprocess.run([sys.executable, "-c", "import sys, sendframe; sendframe.delivery_summary; "
                             "import sendframe.delivery.metrics; print(sorted({'scipy.stats', 'statsmodels'} "
                             "& set(sys.modules)))"], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_latency_percentiles_are_numpys_over_the_delivered_messages():
    results, callbacks, records, estimate = campaign()
    row = delivery_summary(results, callbacks, records, estimate=estimate).iloc[0]
    times = [2, 10, 30, 100]  # m5 was never delivered: it has no time
    for q in (50, 90, 95, 99):
        assert row[f"seconds_to_delivery_p{q}"] == pytest.approx(np.percentile(times, q))
    # by hand: p90 at position 0.9 * 3 = 2.7: 30 + 0.7 * 70 = 79; p99 at 2.97: 30 + 0.97 * 70 = 97.9
    assert (row["seconds_to_delivery_p90"], row["seconds_to_delivery_p99"]) == (pytest.approx(79.0),
                                                                                pytest.approx(97.9))


def test_delivered_within_5s_is_the_share_of_delivered_messages_with_a_time():
    results, callbacks, records, estimate = campaign()
    summary = delivery_summary(results, callbacks, records, by="operator", estimate=estimate)
    # ES 01: m1 after 2 s, m3 after 30 s; ES 03: m4 after 100 s (m5 undelivered); GB 01: m2 after 10 s
    assert summary["delivered_within_5s"].dropna().to_dict() == {"ES 01": 0.5, "ES 03": 0.0, "GB 01": 0.0}
    assert pd.isna(summary.loc["ES ?", "delivered_within_5s"])  # the refused row: nothing delivered
    exactly = pd.Timestamp("2026-11-21 10:00:05", tz="UTC")  # 5 s is within 5 s
    records.events.loc[(records.events["id"] == "m2") & (records.events["type"] == "delivered"), "date"] = exactly
    assert delivery_summary(results, callbacks, records, by="operator").loc["GB 01", "delivered_within_5s"] == 1.0


def test_cost_per_delivered_is_the_billed_cost_else_the_estimate_over_delivered_messages():
    results, callbacks, records, estimate = campaign()
    summary = delivery_summary(results, callbacks, records, by="operator", estimate=estimate)
    # ES 03: billed 0.05 + 0.05 for one message delivered; ES 01: 0.05 + 0.10 for two
    assert summary.loc["ES 03", "cost_per_delivered"] == pytest.approx(0.10)
    assert summary.loc["ES 01", "cost_per_delivered"] == pytest.approx(0.075)
    assert pd.isna(summary.loc["ES ?", "cost_per_delivered"])  # the refused row: nothing delivered
    # nothing billed (the notifications say no cost): the estimate's 0.34 over the 4 delivered
    unbilled = delivery_summary(results, callbacks.assign(cost=None), records, estimate=estimate).iloc[0]
    assert pd.isna(unbilled["billed_cost"]) and unbilled["cost_per_delivered"] == pytest.approx(0.34 / 4)
    assert pd.isna(delivery_summary(results).iloc[0]["cost_per_delivered"])  # no callbacks: none delivered


def test_unsubscribes_come_from_the_records_unsubscribed_events_over_accepted_messages():
    results, callbacks, records, estimate = campaign()
    later = T0 + pd.Timedelta(minutes=5)
    gone = pd.DataFrame({"id": ["m1", "m1", "m4"], "type": "unsubscribed", "date": later})  # m1 twice: one message
    records = Records(records.messages, pd.concat([records.events, gone], ignore_index=True), [])
    assert message_outcomes(results, callbacks, records)["unsubscribed"].tolist() == [True, False, False, True,
                                                                                       False, False]
    row = delivery_summary(results, callbacks, records, estimate=estimate).iloc[0]
    assert row["unsubscribes"] == 2 and row["unsubscribe_rate"] == pytest.approx(2 / 5)
    low, high = proportion_confint(2, 5, alpha=0.05, method="wilson")
    assert (row["unsubscribe_rate_low"], row["unsubscribe_rate_high"]) == (pytest.approx(low), pytest.approx(high))
    assert delivery_summary(results, callbacks).iloc[0]["unsubscribes"] == 0  # no records: none known


def test_a_group_with_nothing_accepted_has_no_rates_and_no_intervals():
    results, callbacks, records, estimate = campaign()
    refused = delivery_summary(results, callbacks, records, by="operator", estimate=estimate).loc["ES ?"]
    assert (refused["sent"], refused["accepted"], refused["rejected"]) == (1, 0, 1)
    for rate in ("delivery_rate", "delivered_within_5s", "unsubscribe_rate"):
        assert pd.isna(refused[rate]) and pd.isna(refused[f"{rate}_low"]) and pd.isna(refused[f"{rate}_high"])
    assert pd.isna(refused["seconds_to_delivery_p50"])


def test_the_groups_are_the_index_so_a_column_selection_keeps_them():
    results, callbacks, records, estimate = campaign()
    by_operator = delivery_summary(results, callbacks, records, by="operator", estimate=estimate)
    shown = by_operator[["accepted", "delivered", "delivery_rate"]]
    assert shown.index.name == "operator" and shown.index.tolist() == ["ES 01", "ES 03", "ES ?", "GB 01"]
    assert shown.loc["GB 01"].tolist() == [1, 1, 1.0]
    two = delivery_summary(results, callbacks, records, by=["campaign_id", "operator"])
    assert two.index.names == ["campaign_id", "operator"]
    assert two.loc[(7, "ES 03"), "failed"] == 1
    assert list(two.columns) == list(by_operator.columns)  # the keys are never columns too
    alone = delivery_summary(results, callbacks, records)  # by campaign, as ever
    assert alone.index.name == "campaign_id" and alone.index.tolist() == [7]


def test_the_report_shows_the_summary_groups_and_its_shares_as_percentages():
    results, callbacks, records, estimate = campaign()
    summary = delivery_summary(results, callbacks, records, by="operator", estimate=estimate)
    board = dashboard(message_outcomes(results, callbacks, records, estimate=estimate), summary=summary)
    assert board.summary.columns[0] == "operator" and board.summary["operator"].tolist()[:2] == ["ES 01", "ES 03"]
    html = summary_html(board.summary)
    assert "<th>operator ES 01</th>" in html  # four operators: measures down, one column per operator
    assert "<tr><td>delivered within 5s</td><td>50.0%</td>" in html  # ES 01: 1 of 2 delivered within 5 s


def test_an_empty_outcome_table_gives_an_empty_summary_with_every_column():
    empty = message_outcomes(pd.DataFrame({"id": pd.Series([], dtype="string"),
                                           "outcome": pd.Series([], dtype="string")}))
    summary = delivery_summary(empty, by=["campaign_id", "operator"])
    assert len(summary) == 0 and summary.index.names == ["campaign_id", "operator"]
    assert list(summary.columns) == list(SUMMARY_COLUMNS)


def test_an_outcome_table_and_the_contacts_group_by_a_contact_column_as_the_campaign_does():
    results, callbacks, records, estimate = campaign()
    table = message_outcomes(results, callbacks, records, estimate=estimate)
    contacts = pd.DataFrame({"segment": ["a"] * (len(table) - 1) + ["b"]}, index=table.index)
    by_segment = delivery_summary(table, contacts=contacts, by="segment")
    assert by_segment.index.tolist() == ["a", "b"]
    assert by_segment["sent"].sum() == delivery_summary(table, by="campaign_id")["sent"].sum()
