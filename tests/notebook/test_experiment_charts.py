"""variant_chart: one bar per variant with a rate, error bars from its Wilson interval."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import plotly.graph_objects as go
import pytest

import sendframe
from sendframe.delivery.experiments import compare_variants
from sendframe.errors import InputError
from sendframe.notebook.experiment_charts import variant_chart


def _frame() -> pd.DataFrame:
    variants, converted = [], []
    for name, x, n in (("A", 30, 100), ("B", 45, 100), ("holdout", 20, 100)):
        variants += [name] * n
        converted += [True] * x + [False] * (n - x)
    return pd.DataFrame({"variant": variants, "converted": converted})


def test_error_bars_run_from_the_wilson_low_to_high_of_each_variant():
    comparison = compare_variants(_frame(), "converted", control="A")
    fig = variant_chart(comparison)
    assert isinstance(fig, go.Figure)
    bars = fig.data[0]
    assert list(bars.x) == ["A", "B", "holdout"]
    assert list(bars.y) == pytest.approx([0.30, 0.45, 0.20])
    assert bars.error_y.symmetric is False
    # the bar top plus the upper error is rate_high; minus the lower error is rate_low
    tops = [y + e for y, e in zip(bars.y, bars.error_y.array, strict=True)]
    bottoms = [y - e for y, e in zip(bars.y, bars.error_y.arrayminus, strict=True)]
    assert tops == pytest.approx(comparison["rate_high"].tolist())
    assert bottoms == pytest.approx(comparison["rate_low"].tolist())
    assert "control: A" in fig.layout.title.text
    assert fig.layout.shapes[0].y0 == pytest.approx(0.30)  # the control's rate as a line


def test_a_holdout_without_a_delivered_rate_is_left_out_and_named():
    outcomes = pd.DataFrame({
        "variant": ["A", "A", "B", "B", "holdout"],
        "outcome": ["accepted"] * 4 + ["holdout"],
        "status": ["DELIVRD", "UNDELIV", "DELIVRD", "DELIVRD", "NOT_SENT"],
    })
    fig = variant_chart(compare_variants(outcomes, "delivered"))
    assert list(fig.data[0].x) == ["A", "B"]
    assert "holdout" in fig.layout.annotations[0].text
    assert "messages accepted by the service" in fig.layout.yaxis.title.text


def test_a_frame_that_is_not_a_comparison_is_refused():
    with pytest.raises(InputError, match="compare_variants"):
        variant_chart(pd.DataFrame({"variant": ["A"]}))


def test_importing_the_module_does_not_load_plotly():
    code = "import sys, sendframe.notebook.experiment_charts; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_variant_chart_is_exported_at_the_top_level():
    assert sendframe.variant_chart is variant_chart
