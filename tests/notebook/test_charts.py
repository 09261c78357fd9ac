"""The dashboard charts: figures built from a tidy outcomes frame, never shown."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from sendframe.delivery.outcomes import OUTCOME_COLUMNS, OUTCOME_STATUSES, message_outcomes
from sendframe.errors import InputError, UnknownOptionError
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
    frame = pd.DataFrame(rows, columns=["id", "country", "mnc", "outcome", "error_code", "status",
                                        "seconds_to_delivery", "clicked", "estimated_cost", "billed_cost"])
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
    frame["unsubscribed"] = pd.array([False] * len(frame), dtype="boolean")
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
    rates = dict(zip(trace.locations, trace.z, strict=True))
    assert rates["ESP"] == pytest.approx(2 / 3)
    assert rates["PRT"] == pytest.approx(1 / 2)
    assert "GBR" not in rates  # nothing accepted there


def test_operator_bars_show_their_denominator():
    fig = charts.delivery_rate_by_operator(outcomes_frame())
    assert sorted(fig.data[0].y) == ["ES 01 · 2/2", "ES 03 · 0/1", "PT 06 · 1/2"]


def test_cost_compares_estimated_and_billed_per_country():
    fig = charts.cost(outcomes_frame())
    estimated, billed = fig.data
    assert dict(zip(estimated.x, estimated.y, strict=True))["GB"] == pytest.approx(0.12)
    assert dict(zip(billed.x, billed.y, strict=True))["ES"] == pytest.approx(0.15)


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


def test_outcomes_keep_intermediate_notifications_pending_and_finals_final():
    results = pd.DataFrame({"id": ["m1", "m2", "m3"], "accepted": [True, True, False],
                            "outcome": ["accepted", "accepted", "rejected"]})
    when = pd.Timestamp("2026-11-21 10:00", tz="UTC")
    callbacks = pd.DataFrame({
        # the final DELIVRD of m1 arrives before its intermediate ACCEPTD: the final still wins
        "id": ["m1", "m1", "m2"], "status": ["DELIVRD", "ACCEPTD", "ACCEPTD"], "part": [1, 1, 1],
        "sent_at": [when] * 3, "reported_at": [when + pd.Timedelta(seconds=4), when + pd.Timedelta(seconds=9), when],
        "cost": [0.045, 0.045, 0.045], "mnc": ["01", "01", "03"],
        "recipient": ["34600123456", "34600123456", "351912345678"],
    })
    out = message_outcomes(results, callbacks)
    assert out["status"].tolist() == ["DELIVRD", "PENDING", "NOT_SENT"]
    assert out["seconds_to_delivery"].iloc[0] == 4.0
    assert out["country"].tolist()[:2] == ["ES", "PT"]
    assert out["billed_cost"].iloc[0] == pytest.approx(0.045)


def test_rows_left_out_before_sending_are_their_own_funnel_steps():
    frame = outcomes_frame()
    extra = frame.iloc[[0, 0, 0, 0, 0]].assign(
        outcome=["skipped_invalid", "skipped_duplicate", "skipped_suppressed", "holdout", "paused_by_operator"],
        id=pd.NA, status="PENDING", clicked=True)  # a left-out row never counts as delivered or clicked
    frame = pd.concat([frame, extra], ignore_index=True).assign(variant="A", text="Hi")  # extra columns are fine
    bars = charts.funnel(frame).data[0]
    assert dict(zip(bars.y, bars.x, strict=True)) == {
        "recipients": 12, "skipped: invalid recipient": 1, "skipped: repeated recipient": 1, "skipped: suppressed": 1,
        "held out (control group)": 1, "paused by operator": 1, "sent": 7, "accepted": 5, "delivered": 3, "clicked": 1}
    assert list(bars.y)[-4:] == ["sent", "accepted", "delivered", "clicked"]


def test_funnel_bars_stay_inside_the_plot_with_their_counts_written():
    frame = pd.concat([outcomes_frame()] * 1000, ignore_index=True)
    fig = charts.funnel(frame)
    bars = fig.data[0]
    low, high = fig.layout.xaxis.range
    assert low == 0 and high >= max(bars.x)  # the longest bar ends inside the axis
    assert bars.text[0] == "7,000 (100.0%)" and bars.text[2] == "3,000 (42.9%)"
    # long bars carry their count inside, short ones just past their end, where there is room
    assert list(bars.textposition) == ["inside", "inside", "outside", "outside"]
    assert bars.cliponaxis is False


def test_an_empty_frame_draws_every_chart_and_says_so():
    empty = outcomes_frame().iloc[0:0]
    board = charts.dashboard(empty)
    assert list(board.figures) == list(charts.CHARTS)
    assert board.header["first send"] == "not known yet"


def test_a_frame_without_the_outcome_columns_is_refused_by_name():
    with pytest.raises(InputError, match="funnel needs the columns of message_outcomes; missing: status"):
        charts.funnel(pd.DataFrame({"outcome": ["accepted"], "clicked": [False]}))


def test_delivery_times_are_drawn_through_quantiles_but_marked_exactly():
    rng = np.random.default_rng(1)
    frame = pd.concat([outcomes_frame()] * 20_000, ignore_index=True)
    seconds = rng.exponential(8.0, len(frame))
    frame["seconds_to_delivery"] = np.where(frame["status"] == "DELIVRD", seconds, np.nan)
    fig = charts.time_to_delivery(frame)
    assert len(fig.data[0].x) == charts.MAX_ECDF_POINTS
    delivered = frame["seconds_to_delivery"].dropna()
    expected = sorted([f"5 s: {(delivered <= 5).mean():.0%}", f"60 s: {(delivered <= 60).mean():.0%}"])
    assert sorted(a.text for a in fig.layout.annotations) == expected


def test_status_buckets_are_chosen_for_at_most_200_bars_and_a_too_fine_freq_is_refused():
    frame = pd.concat([outcomes_frame()] * 3, ignore_index=True)
    start = pd.Timestamp("2026-11-21 08:00", tz="UTC")
    spread = pd.to_timedelta(np.linspace(0, 6 * 86400, len(frame)), unit="s")
    frame["sent_at"] = (start + spread).astype("datetime64[us, UTC]")
    fig = charts.status_over_time(frame)
    assert max(len(trace.x) for trace in fig.data) <= charts.MAX_TIME_BUCKETS
    assert "per hour" in fig.layout.title.subtitle.text
    with pytest.raises(InputError, match=r"freq='s' gives more than 2,000 bars .* choose a coarser one, such as 'h'"):
        charts.status_over_time(frame, freq="s")


def test_operators_beyond_the_15_biggest_share_one_other_bar():
    rows = []
    for n in range(40):  # operator n has 100 - n accepted messages, all delivered
        rows += [("accepted", "DELIVRD", "ES", f"{n:02d}")] * (100 - n)
    frame = pd.DataFrame(rows, columns=["outcome", "status", "country", "mnc"])
    labels = list(charts.delivery_rate_by_operator(frame).data[0].y)
    assert len(labels) == charts.TOP_GROUPS + 1
    assert "other operators (25) · 1,825/1,825" in labels  # operators 15 to 39: 85 down to 61 messages each
    assert "ES 00 · 100/100" in labels and "ES 39 · 61/61" not in labels


def test_clicks_write_the_rate_and_keep_the_counts_for_hovering():
    fig = charts.clicks(outcomes_frame())
    bars = fig.data[0]
    assert dict(zip(bars.x, bars.text, strict=True)) == {"ES": "50.0%", "PT": "0.0%"}
    assert fig.layout.yaxis.range[1] > max(bars.y)  # the rate written above the bar stays inside the plot


def test_the_header_says_campaign_dates_in_utc_recipients_and_cost():
    frame = outcomes_frame()
    frame.loc[0, "sent_at"] = pd.Timestamp("2026-11-21 11:30:15", tz="Europe/Madrid")
    facts = charts.campaign_facts(frame, campaign="Black Friday")
    assert facts == {
        "campaign": "Black Friday · id 1",
        "first send": "2026-11-21 10:00:00 UTC",
        "last send": "2026-11-21 10:30:15 UTC",
        "recipients": "7 (sent 7)",
        "estimated cost": "0.35",
        "billed cost": "0.19 (4 messages billed so far)",
    }


def test_charts_import_without_plotly_and_say_how_to_install_it_when_drawing():
    code = (
        "import sys; sys.modules['plotly'] = None\n"
        "import pandas as pd\n"
        "from sendframe.notebook import charts, report\n"
        "try:\n"
        "    charts.funnel(pd.DataFrame({'outcome': ['accepted'], 'status': ['DELIVRD'], 'clicked': [True]}))\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The dashboards need plotly: pip install 'sendframe[notebook]'"


def test_report_renders_without_importing_the_charts():
    code = "import sys\nimport sendframe.notebook.report\nprint('sendframe.notebook.charts' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_a_mistyped_option_is_refused_with_the_one_meant():
    with pytest.raises(UnknownOptionError, match="unknown option 'titel'. Did you mean 'title'?"):
        charts.dashboard(outcomes_frame(), titel="Q4")
    with pytest.raises(UnknownOptionError, match="Did you mean 'freq'?"):
        charts.status_over_time(outcomes_frame(), frequency="h")
