"""Delivery dashboards as plotly figures.

Every function takes the tidy per-recipient frame of
:func:`sendframe.delivery.outcomes.message_outcomes` and returns a ``go.Figure``; none shows it.
Statuses keep one order and one colour everywhere.

    >>> from sendframe.notebook import charts
    >>> fig = charts.funnel(outcomes)          # doctest: +SKIP
    >>> charts.dashboard(outcomes).write_html("report.html")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import pandas as pd

from sendframe.delivery.outcomes import FAILED_STATUSES, OUTCOME_STATUSES, operator_label

try:
    import plotly.graph_objects as go
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("The dashboards need plotly: pip install 'sendframe[notebook]'") from exc

STATUS_COLORS: dict[str, str] = {
    "DELIVRD": "#2e7d32",
    "PENDING": "#9e9e9e",
    "UNDELIV": "#ef6c00",
    "EXPIRED": "#8d6e63",
    "REJECTD": "#c62828",
    "DELETED": "#6a1b9a",
    "NOT_SENT": "#ad1457",
    "UNKNOWN_OUTCOME": "#37474f",
}
STATUS_LABELS: dict[str, str] = {
    "DELIVRD": "delivered",
    "PENDING": "pending",
    "UNDELIV": "undelivered",
    "EXPIRED": "expired",
    "REJECTD": "rejected by operator",
    "DELETED": "deleted",
    "NOT_SENT": "not sent (rejected by the API, or not attempted yet)",
    "UNKNOWN_OUTCOME": "unknown outcome",
}
_LAYOUT = dict(template="plotly_white", margin=dict(l=40, r=20, t=60, b=40), font=dict(size=12))


def _figure(title: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, **_LAYOUT)
    return fig


def funnel(outcomes: pd.DataFrame) -> go.Figure:
    """Sent → accepted → delivered → clicked, as counts of recipients (bars, each with its share of sent)."""
    stages = {
        "sent": len(outcomes),
        "accepted": int((outcomes["outcome"] == "accepted").sum()),
        "delivered": int((outcomes["status"] == "DELIVRD").sum()),
        "clicked": int(outcomes["clicked"].fillna(False).sum()),
    }
    fig = _figure("Delivery funnel")
    first = max(stages["sent"], 1)
    fig.add_trace(go.Bar(y=list(stages), x=list(stages.values()), orientation="h",
                         text=[f"{v:,} ({v / first:.0%})" for v in stages.values()], textposition="auto",
                         marker=dict(color=["#546e7a", "#1565c0", STATUS_COLORS["DELIVRD"], "#f9a825"])))
    fig.update_layout(yaxis=dict(autorange="reversed"), xaxis_title="recipients")
    return fig


def _bucket_for(span: pd.Timedelta) -> str:
    if span <= pd.Timedelta(hours=2):
        return "min"
    return "h" if span <= pd.Timedelta(days=3) else "D"


def status_over_time(outcomes: pd.DataFrame, freq: str | None = None) -> go.Figure:
    """Stacked counts of final status by send time, bucketed by ``freq`` (``"min"``, ``"h"``, ``"D"``;
    by default the one that suits the campaign's span)."""
    frame = outcomes.dropna(subset=["sent_at"])
    fig = _figure("Status by send time")
    if frame.empty:
        return _empty(fig, "No send times yet: callbacks or records give them.")
    freq = freq or _bucket_for(frame["sent_at"].max() - frame["sent_at"].min())
    bucket = frame["sent_at"].dt.floor(freq)
    counts = frame.groupby([bucket, "status"], observed=False).size().unstack("status", fill_value=0)
    for status in OUTCOME_STATUSES:
        if status in counts and counts[status].sum():
            fig.add_trace(go.Bar(x=counts.index, y=counts[status], name=STATUS_LABELS[status], marker_color=STATUS_COLORS[status]))
    fig.update_layout(barmode="stack", xaxis_title="sent", yaxis_title="messages")
    return fig


def time_to_delivery(outcomes: pd.DataFrame) -> go.Figure:
    """ECDF of seconds from sending to delivery, with 5 s and 60 s marks."""
    seconds = outcomes["seconds_to_delivery"].dropna().clip(lower=0).sort_values()
    fig = _figure("Time to delivery")
    if seconds.empty:
        return _empty(fig, "No delivered messages with both dates yet.")
    share = pd.Series(range(1, len(seconds) + 1), index=seconds.index) / len(seconds)
    fig.add_trace(go.Scatter(x=seconds, y=share, mode="lines", line_shape="hv", name="delivered", line_color=STATUS_COLORS["DELIVRD"]))
    for mark in (5, 60):
        within = float((seconds <= mark).mean())
        fig.add_vline(x=mark, line_dash="dash", line_color="#616161", annotation_text=f"{mark} s: {within:.0%}")
    fig.update_layout(xaxis_title="seconds to delivery", yaxis_title="share delivered", yaxis_tickformat=".0%")
    return fig


def failures(outcomes: pd.DataFrame) -> go.Figure:
    """Failed recipients by status, and by API error for those the API rejected."""
    failed = outcomes[outcomes["status"].isin(FAILED_STATUSES | {"NOT_SENT", "UNKNOWN_OUTCOME"})]
    fig = _figure("Failures by status and error")
    if failed.empty:
        return _empty(fig, "No failures.")
    reason = failed["error_code"].astype("string").radd("error ").fillna(failed["status"].astype("string").map(STATUS_LABELS))
    described = failed["error_description"].fillna("")
    counts = pd.DataFrame({"status": failed["status"].astype("string"), "reason": reason, "description": described}).value_counts().reset_index(name="count")
    for status in OUTCOME_STATUSES:
        part = counts[counts["status"] == status]
        if not part.empty:
            fig.add_trace(go.Bar(y=part["reason"], x=part["count"], orientation="h", name=STATUS_LABELS[status],
                                 marker_color=STATUS_COLORS[status], hovertext=part["description"]))
    fig.update_layout(barmode="stack", xaxis_title="recipients", yaxis=dict(autorange="reversed"))
    return fig


def _rates(outcomes: pd.DataFrame, by: str) -> pd.DataFrame:
    accepted = outcomes[outcomes["outcome"] == "accepted"]
    flags = pd.DataFrame({by: accepted[by], "delivered": (accepted["status"] == "DELIVRD").astype(int)})
    rates = flags.groupby(by, observed=True)["delivered"].agg(accepted="size", delivered="sum")
    rates["delivery_rate"] = rates["delivered"] / rates["accepted"]
    return rates.reset_index()


@lru_cache(maxsize=None)
def _iso3(alpha_2: str) -> str | None:
    import pycountry

    country = pycountry.countries.get(alpha_2=alpha_2)
    return country.alpha_3 if country else None


def delivery_rate_by_country(outcomes: pd.DataFrame) -> go.Figure:
    """A world map of delivery rate (delivered / accepted) by recipient country."""
    rates = _rates(outcomes.dropna(subset=["country"]), "country")
    fig = _figure("Delivery rate by country (delivered / accepted)")
    if rates.empty:
        return _empty(fig, "No accepted messages with a known country.")
    rates["iso3"] = rates["country"].map(_iso3)
    text = [f"{c}: {d}/{a} delivered" for c, d, a in zip(rates["country"], rates["delivered"], rates["accepted"])]
    fig.add_trace(go.Choropleth(locations=rates["iso3"], z=rates["delivery_rate"], locationmode="ISO-3", text=text,
                                hoverinfo="text+z", zmin=0, zmax=1, colorscale="RdYlGn", colorbar=dict(title="rate", tickformat=".0%")))
    fig.update_geos(showframe=False, projection_type="natural earth", showcountries=True)
    return fig


def delivery_rate_by_operator(outcomes: pd.DataFrame) -> go.Figure:
    """Delivery rate by country and operator (MNC), with the denominator on each bar."""
    frame = outcomes.assign(operator=operator_label(outcomes["country"], outcomes["mnc"]))
    rates = _rates(frame, "operator").sort_values("delivery_rate")
    fig = _figure("Delivery rate by operator (country MNC)")
    if rates.empty:
        return _empty(fig, "No accepted messages yet.")
    labels = [f"{o} · {d}/{a}" for o, d, a in zip(rates["operator"], rates["delivered"], rates["accepted"])]
    fig.add_trace(go.Bar(x=rates["delivery_rate"], y=labels, orientation="h", marker_color=STATUS_COLORS["DELIVRD"],
                         customdata=rates["operator"], hovertemplate="%{customdata}: %{x:.0%}<extra></extra>"))
    fig.update_layout(xaxis=dict(tickformat=".0%", range=[0, 1]), xaxis_title="delivered / accepted")
    return fig


def cost(outcomes: pd.DataFrame) -> go.Figure:
    """Estimated versus billed cost by country."""
    frame = outcomes.assign(country=outcomes["country"].fillna("?"))
    totals = frame.groupby("country")[["estimated_cost", "billed_cost"]].sum(min_count=1).fillna(0.0)
    fig = _figure("Cost: estimated versus billed")
    fig.add_trace(go.Bar(x=totals.index, y=totals["estimated_cost"], name="estimated", marker_color="#90caf9"))
    fig.add_trace(go.Bar(x=totals.index, y=totals["billed_cost"], name="billed", marker_color="#1565c0"))
    fig.update_layout(barmode="group", yaxis_title="cost")
    return fig


def clicks(outcomes: pd.DataFrame) -> go.Figure:
    """Click-through: clicked recipients among delivered ones, by country."""
    delivered = outcomes[outcomes["status"] == "DELIVRD"].assign(country=lambda f: f["country"].fillna("?"))
    fig = _figure("Clicks among delivered recipients")
    if delivered.empty:
        return _empty(fig, "No delivered messages yet.")
    grouped = delivered.groupby("country")["clicked"].agg(["sum", "size"])
    fig.add_trace(go.Bar(x=grouped.index, y=grouped["sum"] / grouped["size"], marker_color="#f9a825",
                         text=[f"{int(c)}/{n}" for c, n in zip(grouped["sum"], grouped["size"])], textposition="auto"))
    fig.update_layout(yaxis=dict(tickformat=".0%"), yaxis_title="clicked / delivered")
    return fig


def _empty(fig: go.Figure, message: str) -> go.Figure:
    fig.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5, font=dict(size=14, color="#757575"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


CHARTS = {
    "funnel": funnel,
    "status_over_time": status_over_time,
    "time_to_delivery": time_to_delivery,
    "failures": failures,
    "delivery_rate_by_country": delivery_rate_by_country,
    "delivery_rate_by_operator": delivery_rate_by_operator,
    "cost": cost,
    "clicks": clicks,
}


@dataclass
class Dashboard:
    """All the delivery charts of one campaign, with a summary table; write it with ``write_html``."""

    figures: dict[str, go.Figure]
    summary: pd.DataFrame | None = None
    title: str = "Delivery report"
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> go.Figure:
        return self.figures[name]

    def to_html(self) -> str:
        """One self-contained HTML page: plotly.js and the world map are inlined, so it opens offline."""
        from sendframe.notebook.report import dashboard_html

        return dashboard_html(self)

    def write_html(self, path: str) -> str:
        """Write :meth:`to_html` to ``path`` and return the path."""
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.to_html())
        return str(path)


def dashboard(outcomes: pd.DataFrame, *, summary: pd.DataFrame | None = None, title: str = "Delivery report") -> Dashboard:
    """Build every chart of the delivery dashboard from the tidy outcomes frame.

    >>> board = dashboard(outcomes)               # doctest: +SKIP
    >>> board["funnel"]                           # doctest: +SKIP
    """
    return Dashboard({name: chart(outcomes) for name, chart in CHARTS.items()}, summary=summary, title=title)
