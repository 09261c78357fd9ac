"""The dashboard charts: figures built from a tidy outcomes frame, never shown."""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import pytest

from sendframe.delivery.outcomes import OUTCOME_COLUMNS, OUTCOME_STATUSES
from sendframe.notebook import charts


def outcomes_frame() -> pd.DataFrame:
    sent = pd.Timestamp("2026-11-21 10:00", tz="UTC")
    rows = [
        # id, country, mnc, outcome, error_code, status, seconds to delivery, clicked, estimated, billed
        ("a", "ES", "01", "accepted", None, "DELIVRD", 2.0, True, 0.05, 0.05),
        ("b", "ES", "01", "accepted", None, "DELIVRD", 30.0, False, 0.05, 0.05),
        ("c", "ES", "03", "accepted", None, "UNDELIV", None, False, 0.05, 0.05),
        ("d", "PT", "06", "accepted", None, "DELIVRD", 90.0, False, 0.04, 0.04),
        ("e", "PT", "06", "accepted", None, "PENDING", None, False, 0.04, None),
        (None, "GB", None, "rejected", 102, "NOT_SENT", None, False, 0.06, None),
        (None, "GB", None, "unknown", None, "UNKNOWN_OUTCOME", None, False, 0.06, None),
    ]
    frame = pd.DataFrame(rows, columns=["id", "country", "mnc", "outcome", "error_code", "status", "seconds_to_delivery",
                                        "clicked", "estimated_cost", "billed_cost"])
    frame["campaign_id"] = pd.array([1] * len(frame), dtype="Int64")
    frame["sending_id"] = pd.array([1] * len(frame), dtype="Int64")
    frame["recipient"] = "34600000000"
    frame["error_code"] = frame["error_code"].astype("Int64")
    frame["error_description"] = frame["error_code"].map({102: "not a valid phone number"}).astype("string")
    frame["status"] = pd.Categorical(frame["status"], categories=list(OUTCOME_STATUSES), ordered=True)
    frame["sent_at"] = pd.Series([sent] * 5 + [pd.NaT, pd.NaT], dtype="datetime64[us, UTC]")
    frame["delivered_at"] = frame["sent_at"] + pd.to_timedelta(frame["seconds_to_delivery"], unit="s")
    frame["parts"] = pd.array([1] * len(frame), dtype="Int64")
    frame["clicked"] = frame["clicked"].astype("boolean")
    return frame[list(OUTCOME_COLUMNS)]


def test_funnel_counts_sent_accepted_delivered_clicked():
    fig = charts.funnel(outcomes_frame())
    assert list(fig.data[0].y) == ["sent", "accepted", "delivered", "clicked"]
    assert list(fig.data[0].x) == [7, 5, 3, 1]


def test_status_colours_follow_the_fixed_order_in_stacked_bars():
    fig = charts.status_over_time(outcomes_frame())
    names = [trace.name for trace in fig.data]
    expected = [charts.STATUS_LABELS[s] for s in OUTCOME_STATUSES if s in {"DELIVRD", "PENDING", "UNDELIV"}]
    assert names == expected
    assert [t.marker.color for t in fig.data] == [charts.STATUS_COLORS[s] for s in ("DELIVRD", "PENDING", "UNDELIV")]


def test_time_to_delivery_marks_5_and_60_seconds_with_shares():
    fig = charts.time_to_delivery(outcomes_frame())
    annotations = sorted(a.text for a in fig.layout.annotations)
    assert annotations == ["5 s: 33%", "60 s: 67%"]
    assert list(fig.data[0].y)[-1] == pytest.approx(1.0)


def test_failures_separates_api_errors_from_carrier_failures():
    fig = charts.failures(outcomes_frame())
    reasons = {trace.name: list(trace.y) for trace in fig.data}
    assert reasons[charts.STATUS_LABELS["NOT_SENT"]] == ["error 102: not a valid phone number"]
    assert reasons[charts.STATUS_LABELS["UNDELIV"]] == ["undelivered"]


def test_country_map_uses_iso3_and_delivered_over_accepted():
    fig = charts.delivery_rate_by_country(outcomes_frame())
    trace = fig.data[0]
    rates = dict(zip(trace.locations, trace.z))
    assert rates["ESP"] == pytest.approx(2 / 3)
    assert rates["PRT"] == pytest.approx(1 / 2)
    assert "GBR" not in rates  # nothing accepted there


def test_operator_bars_show_their_denominator():
    fig = charts.delivery_rate_by_operator(outcomes_frame())
    assert sorted(fig.data[0].y) == ["ES 01 · 2/2", "ES 03 · 0/1", "PT 06 · 1/2"]


def test_cost_compares_estimated_and_billed_per_country():
    fig = charts.cost(outcomes_frame())
    estimated, billed = fig.data
    assert dict(zip(estimated.x, estimated.y))["GB"] == pytest.approx(0.12)
    assert dict(zip(billed.x, billed.y))["ES"] == pytest.approx(0.15)


def test_empty_data_gives_a_figure_that_says_so():
    empty = outcomes_frame().iloc[0:0]
    for name, chart in charts.CHARTS.items():
        fig = chart(empty)
        assert isinstance(fig, go.Figure), name


def test_charts_never_change_their_input():
    frame = outcomes_frame()
    before = frame.copy()
    charts.dashboard(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_report_is_one_offline_html_file(tmp_path):
    path = charts.dashboard(outcomes_frame(), title="Test <campaign>").write_html(str(tmp_path / "report.html"))
    text = open(path, encoding="utf-8").read()
    assert "Test &lt;campaign&gt;" in text
    assert "PlotlyGeoAssets" in text and '"world_110m"' not in text  # the map data is inlined under its name
    assert "'world_110m'" in text
    # no external script or stylesheet: everything needed is inside the file
    assert not re.search(r"<script[^>]+src=", text)
    assert not re.search(r"<link[^>]+href=", text)
    for name in charts.CHARTS:
        assert f'id="chart-{name}"' in text


def test_outcomes_keep_intermediate_notifications_pending_and_finals_final():
    from sendframe.delivery.outcomes import message_outcomes

    results = pd.DataFrame({"id": ["m1", "m2", "m3"], "accepted": [True, True, False],
                            "outcome": ["accepted", "accepted", "rejected"]})
    when = pd.Timestamp("2026-11-21 10:00", tz="UTC")
    callbacks = pd.DataFrame({
        # the final DELIVRD of m1 arrives before its intermediate ACCEPTD: the final still wins
        "id": ["m1", "m1", "m2"], "status": ["DELIVRD", "ACCEPTD", "ACCEPTD"], "part": [1, 1, 1],
        "sent_at": [when] * 3, "reported_at": [when + pd.Timedelta(seconds=4), when + pd.Timedelta(seconds=9), when],
        "cost": [0.045, 0.045, 0.045], "mnc": ["01", "01", "03"], "recipient": ["34600123456", "34600123456", "351912345678"],
    })
    out = message_outcomes(results, callbacks)
    assert out["status"].tolist() == ["DELIVRD", "PENDING", "NOT_SENT"]
    assert out["seconds_to_delivery"].iloc[0] == 4.0
    assert out["country"].tolist()[:2] == ["ES", "PT"]
    assert out["billed_cost"].iloc[0] == pytest.approx(0.045)
