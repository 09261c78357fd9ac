"""The dashboard of a 1,000,000-recipient campaign: bounded figures and a report under 8 MB (not timed here;
``benchmarks/bench_dashboard.py`` times it)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import plotly.io as pio
import pytest

from sendframe.notebook import charts

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MAX_POINTS_PER_FIGURE = 3_000
MAX_REPORT_BYTES = 8_000_000


def _outcomes_data():
    spec = importlib.util.spec_from_file_location("outcomes_data", BENCHMARKS / "outcomes_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plotted_points(fig) -> int:
    """Points a figure hands to the browser: per trace, its longest data array (x, y, z or locations)."""
    total = 0
    for trace in fig.data:
        lengths = [len(values) for key in ("x", "y", "z", "locations")
                   if (values := getattr(trace, key, None)) is not None]
        total += max(lengths, default=0)
    return total


@pytest.fixture(scope="module")
def million():
    return _outcomes_data().realistic_outcomes(1_000_000, extras=True)


@pytest.fixture(scope="module")
def board(million):
    return charts.dashboard(million, campaign="Black Friday")


def test_the_frame_is_shaped_like_message_outcomes(million):
    assert len(million) == 1_000_000
    assert million["status"].cat.ordered
    assert str(million["sent_at"].dt.tz) == "UTC" and str(million["delivered_at"].dt.tz) == "UTC"
    assert million["recipient"].is_unique and million["id"].dropna().is_unique
    assert million["country"].nunique() > 40 and million["seconds_to_delivery"].nunique() > 100
    left_out = {"skipped_invalid", "skipped_duplicate", "holdout", "not_sent", "rejected"}
    assert left_out <= set(million["outcome"].unique())


def test_every_figure_of_a_million_rows_plots_a_few_thousand_points_at_most(board):
    points = {name: plotted_points(fig) for name, fig in board.figures.items()}
    assert all(0 < n <= MAX_POINTS_PER_FIGURE for n in points.values()), points
    for name, fig in board.figures.items():
        assert len(pio.to_json(fig)) < 200_000, name


def test_the_report_of_a_million_rows_stays_under_8_mb_and_opens_offline(board, tmp_path):
    path = Path(board.write_html(tmp_path / "report.html"))
    assert path.stat().st_size < MAX_REPORT_BYTES
    text = path.read_text(encoding="utf-8")
    assert text.count("Plotly.newPlot") == len(charts.CHARTS)
    assert "'world_110m'" in text  # the map's TopoJSON, inlined
    assert not re.search(r"<script[^>]+src=", text) and not re.search(r"<link[^>]+href=", text)
    assert "1,000,000 (sent" in text  # the header counts every recipient


def test_the_funnel_of_a_million_rows_adds_up(million, board):
    bars = board["funnel"].data[0]
    steps = dict(zip(bars.y, bars.x, strict=True))
    assert steps["recipients"] == 1_000_000
    left_out = sum(v for k, v in steps.items() if k.startswith(("skipped", "held out", "not sent")))
    assert steps["sent"] == 1_000_000 - left_out
    assert steps["accepted"] == (million["outcome"] == "accepted").sum()


@pytest.mark.slow
def test_the_dashboard_benchmark_runs_and_prints_its_figures():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_dashboard.py"), "--rows", "20000"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "dashboard of 20,000 outcome rows" in done.stdout
    assert re.search(r"sendframe \(aggregated\)\s+[\d.]+\s+[\d.]+\s+[\d.]+", done.stdout)
    assert "points per figure (sendframe): funnel" in done.stdout
