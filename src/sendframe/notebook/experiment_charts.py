"""The chart of a variant comparison: each variant's rate with its interval, the control marked.

Takes the frame of :func:`sendframe.compare_variants` and returns a ``go.Figure``; plotly is imported
when the chart is drawn, so this module imports without the notebook stack.

    >>> import sendframe
    >>> fig = sendframe.variant_chart(sendframe.compare_variants(outcomes, "delivered"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from sendframe.delivery.experiments import COMPARISON_COLUMNS
from sendframe.errors import InputError
from sendframe.notebook.charts import graph_objects, new_figure

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["variant_chart"]

CONTROL_COLOR = "#546e7a"
VARIANT_COLOR = "#1565c0"


def _percent(value: Any) -> str:
    return "n/a" if value is None or pd.isna(value) else f"{float(value):.1%}"


def variant_chart(comparison: pd.DataFrame) -> go.Figure:
    """Bars of each variant's rate with its interval as error bars; the control's rate as a dashed line.

    Variants without a rate (a holdout for a send metric, an empty variant) are left out and named
    under the chart. Hovering a bar shows the counts, the difference from the control with its
    interval, the p-value and the test.

        >>> import pandas as pd
        >>> import sendframe
        >>> frame = pd.DataFrame({"variant": ["A"] * 100 + ["B"] * 100,
        ...                       "converted": [True] * 30 + [False] * 70 + [True] * 45 + [False] * 55})
        >>> fig = variant_chart(sendframe.compare_variants(frame, "converted"))
        >>> [round(v, 3) for v in fig.data[0].error_y.array]
        [0.096, 0.098]
    """
    missing = [c for c in COMPARISON_COLUMNS if c not in getattr(comparison, "columns", ())]
    if missing:
        raise InputError(f"variant_chart draws the frame of sendframe.compare_variants; this one lacks {missing}.")
    attrs = comparison.attrs
    metric = attrs.get("metric", "rate")
    control = attrs.get("control")
    confidence = 1 - float(attrs.get("alpha", 0.05))
    drawn = comparison[comparison["rate"].notna()]
    left_out = comparison[comparison["rate"].isna()]
    names = drawn["variant"].astype(str).tolist()

    hover = [
        f"<b>{row.variant}</b><br>{metric}: {row.successes} of {row.recipients} {row.denominator}"
        f" = {_percent(row.rate)}"
        f"<br>{confidence:.0%} interval: {_percent(row.rate_low)} to {_percent(row.rate_high)}"
        + ("<br>control" if row.test == "control" else
           f"<br>difference from {control}: {row.difference:+.1%} ({_percent(row.difference_low)} to "
           f"{_percent(row.difference_high)})<br>p = {row.p_value:.3g}, {row.test}")
        for row in drawn.itertuples()
    ]
    denominator = drawn["denominator"].iloc[0] if len(drawn) else ""
    top = float(drawn["rate_high"].max()) if len(drawn) else 1.0
    fig = new_figure(f"{metric}: rate per variant with {confidence:.0%} interval (control: {control})")
    fig.add_trace(graph_objects().Bar(
        x=names, y=drawn["rate"].tolist(),
        error_y=dict(type="data", symmetric=False, array=(drawn["rate_high"] - drawn["rate"]).tolist(),
                     arrayminus=(drawn["rate"] - drawn["rate_low"]).tolist(), thickness=1.5, width=8),
        marker_color=[CONTROL_COLOR if name == control else VARIANT_COLOR for name in names],
        text=[_percent(rate) for rate in drawn["rate"]], textposition="inside",
        hovertext=hover, hoverinfo="text", name=str(metric),
    ))
    fig.update_layout(
        yaxis=dict(title=f"{metric} / {denominator}", tickformat=".0%", range=[0, min(1.0, top * 1.15) or 1.0]),
        xaxis=dict(title="variant", type="category"), showlegend=False,
    )
    if control in names:
        fig.add_hline(y=float(drawn.loc[drawn["variant"].astype(str) == control, "rate"].iloc[0]),
                      line_dash="dash", line_color=CONTROL_COLOR, line_width=1)
    if len(left_out):
        notes = "; ".join(f"{name}: {note or 'no rate'}" for name, note in
                          zip(left_out["variant"].astype(str), left_out["note"].fillna(""), strict=True))
        fig.add_annotation(text=f"Not drawn: {notes}", xref="paper", yref="paper", x=0, y=-0.22,
                           showarrow=False, xanchor="left", font=dict(size=11))
        fig.update_layout(margin_b=80)
    return fig
