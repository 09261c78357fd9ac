"""Delivery dashboards as plotly figures.

Every function takes the tidy per-recipient frame of :func:`~sendframe.delivery.outcomes.message_outcomes` and
returns a ``go.Figure``; none shows it. Each chart aggregates before it plots (counts, bins,
quantiles, the biggest groups and one "other" bar), so a figure holds at most a few thousand
points whether the campaign had ten recipients or ten million. Statuses keep one order and one
colour everywhere. Extra columns and outcomes the charts do not know are tolerated: rows left out
before sending (``skipped_*``, ``holdout``, ``not_sent``) are their own steps of the funnel.

plotly (and pycountry, for the map) are the optional notebook stack, imported when a chart is
drawn: ``pip install 'sendframe[notebook]'``.

    >>> from sendframe.notebook import charts
    >>> fig = charts.funnel(outcomes)          # doctest: +SKIP
    >>> charts.dashboard(outcomes).write_html("report.html")  # doctest: +SKIP
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import phonenumbers

from sendframe.delivery.outcomes import FAILED_STATUSES, OUTCOME_STATUSES, operator_label
from sendframe.errors import InputError
from sendframe.memory import release_unused_memory
from sendframe.notebook.report import Dashboard, optional_import
from sendframe.options import keyword_checked
from sendframe.send_outcomes import OUTCOME_LABELS, SKIPPED_OUTCOMES

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["CHARTS", "STATUS_COLORS", "STATUS_LABELS", "Dashboard", "campaign_facts", "clicks", "cost", "dashboard",
           "delivery_rate_by_country", "delivery_rate_by_operator", "failures", "funnel", "graph_objects", "new_figure",
           "status_over_time", "time_to_delivery"]

# each status: how it is named on screen and its colour, the same in every chart
_STATUSES: tuple[tuple[str, str, str], ...] = (
    ("DELIVRD", "delivered", "#2e7d32"),
    ("PENDING", "pending", "#9e9e9e"),
    ("UNDELIV", "undelivered", "#ef6c00"),
    ("EXPIRED", "expired", "#8d6e63"),
    ("REJECTD", "rejected by operator", "#c62828"),
    ("DELETED", "deleted", "#6a1b9a"),
    ("NOT_SENT", "not sent (rejected by the API, or not attempted yet)", "#ad1457"),
    ("UNKNOWN_OUTCOME", "unknown outcome", "#37474f"),
)
STATUS_LABELS: dict[str, str] = {status: label for status, label, _ in _STATUSES}
STATUS_COLORS: dict[str, str] = {status: colour for status, _, colour in _STATUSES}
# outcomes of rows a request was made for; any other outcome (skipped_*, holdout, not_sent, dry_run, ...) was left out
SENT_OUTCOMES = ("accepted", "rejected", "unknown")
LEFT_OUT_LABELS: dict[str, str] = {o: OUTCOME_LABELS[o] for o in (*SKIPPED_OUTCOMES, "not_sent", "dry_run")} | {
    "not_sent": "not sent yet"}
MAX_TIME_BUCKETS = 200  # bars of status_over_time when the bucket is chosen for you
MAX_ECDF_POINTS = 1001  # above this many distinct delivery times the curve is drawn through quantiles
TOP_GROUPS = 15  # countries/operators/reasons drawn one by one; the rest share one "other" bar
_LAYOUT: dict[str, Any] = dict(
    template="plotly_white", margin=dict(l=10, r=20, t=70, b=40), font=dict(size=12),
    xaxis_automargin=True, yaxis_automargin=True,
    legend=dict(orientation="h", xref="container", yref="container", x=0.02, y=0.01, yanchor="bottom"),
)
_GREY = "#9e9e9e"
# the buckets status_over_time chooses from, finest first, and how its subtitle says them
_FREQ_WORDS = {"s": "second", "10s": "10 seconds", "30s": "30 seconds", "min": "minute", "5min": "5 minutes",
               "15min": "15 minutes", "h": "hour", "6h": "6 hours", "D": "day", "7D": "week", "30D": "30 days"}


def graph_objects() -> Any:
    """``plotly.graph_objects``, imported when a chart is drawn (ImportError with the install command without it).

        >>> graph_objects().__name__
        'plotly.graph_objects'
    """
    return optional_import("plotly.graph_objects", "The dashboards need plotly")


def new_figure(title: str, subtitle: str = "") -> go.Figure:
    """An empty figure in the charts' one layout (template, margins, legend below), titled.

        >>> new_figure("Delivery funnel", "by day").layout.title.subtitle.text
        'by day'
    """
    fig = graph_objects().Figure()
    fig.update_layout(title=dict(text=title, subtitle=dict(text=subtitle)), **_LAYOUT)
    return fig


def _empty(fig: go.Figure, message: str) -> go.Figure:
    fig.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5,
                       font=dict(size=14, color="#757575"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def _chart(outcomes: pd.DataFrame, columns: tuple[str, ...], chart: str, title: str) -> go.Figure:
    """The figure of ``chart``, once ``outcomes`` has the ``columns`` it draws."""
    missing = [c for c in columns if c not in outcomes]
    if missing:
        raise InputError(f"{chart} needs the columns of message_outcomes; missing: {', '.join(missing)}.")
    return new_figure(title)


def _status_label(status: object) -> str:
    return STATUS_LABELS.get(str(status), str(status))


def _groups(values: pd.Series, missing: str = "?") -> pd.Series:
    """``values`` as a categorical, ``missing`` where there is none: a chart groups and counts on its codes, never
    on a text per row (at a million rows each such text is tens of MiB)."""
    groups = values if isinstance(values.dtype, pd.CategoricalDtype) else values.astype("category")
    if not groups.hasnans:
        return groups
    return (groups if missing in groups.cat.categories else groups.cat.add_categories(missing)).fillna(missing)


def _keep_top(counts: pd.DataFrame, by: str, n: int, noun: str) -> pd.DataFrame:
    """The ``n`` rows with the largest ``by``, the rest summed into one row labelled ``other <noun> (k)``."""
    if len(counts) <= n + 1:
        return counts
    ordered = counts.sort_values(by, ascending=False)
    rest = ordered.iloc[n:]
    other = rest.sum(numeric_only=True).to_frame(f"other {noun} ({len(rest)})").T
    return pd.concat([ordered.iloc[:n], other])


def _status_bars(fig: go.Figure, counts: pd.DataFrame, orientation: str = "v") -> None:
    """One bar trace per status column of ``counts`` (groups down the index), in the statuses' order and colours;
    statuses with no count are left out, and so are a horizontal trace's empty groups."""
    order = [s for s in OUTCOME_STATUSES if s in counts] + [s for s in counts if s not in OUTCOME_STATUSES]
    groups, values = ("y", "x") if orientation == "h" else ("x", "y")
    for status in order:
        column = counts[status][counts[status] > 0] if orientation == "h" else counts[status]
        if column.sum():
            label = _status_label(status)
            fig.add_trace(graph_objects().Bar(
                **{groups: column.index, values: column}, orientation=orientation, name=label,
                marker_color=STATUS_COLORS.get(str(status), _GREY),
                hovertemplate=f"%{{{groups}}}: %{{{values}:,}} ({label})<extra></extra>"))


def _text_positions(values: list[float], top: float) -> list[str]:
    """Counts inside long bars, just past the end of short ones: no label runs off the plot."""
    return ["inside" if top and v >= 0.45 * top else "outside" for v in values]


@keyword_checked
def funnel(outcomes: pd.DataFrame) -> go.Figure:
    """Recipients → sent → accepted → delivered → clicked, each bar with its count and share; rows left out
    before sending (skipped, held out, not sent yet) are their own grey steps. Shares are of all recipients
    down to "sent", then of the sent ones.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1", None], "outcome": ["accepted", "rejected"]}))
    >>> list(funnel(outcomes).data[0].x)
    [2, 1, 0, 0]
    """
    fig = _chart(outcomes, ("outcome", "status", "clicked"), "funnel", "Delivery funnel")
    outcome = _groups(outcomes["outcome"], "no outcome")
    sent_rows = outcome.isin(SENT_OUTCOMES)
    left_out = outcome[~sent_rows].value_counts()
    left_out = left_out[left_out > 0]
    sent = int(sent_rows.sum())
    steps: list[tuple[str, int, int, str]] = []  # label, count, share base, colour
    if not left_out.empty:
        steps.append(("recipients", len(outcomes), len(outcomes), "#546e7a"))
        known = ([o for o in LEFT_OUT_LABELS if o in left_out.index]
                 + sorted(o for o in left_out.index if o not in LEFT_OUT_LABELS))
        steps += [(LEFT_OUT_LABELS.get(o, o.replace("_", " ")), int(left_out[o]), len(outcomes), "#bdbdbd")
                  for o in known]
    delivered = int((outcomes["status"].isin(["DELIVRD"]) & sent_rows).sum())
    clicked = int((outcomes["clicked"].astype("boolean").fillna(False) & sent_rows).sum())
    steps += [("sent", sent, len(outcomes), "#546e7a"),
              ("accepted", int(outcome.isin(["accepted"]).sum()), sent, "#1565c0"),
              ("delivered", delivered, sent, STATUS_COLORS["DELIVRD"]), ("clicked", clicked, sent, "#f9a825")]
    labels, values, bases, colours = (list(column) for column in zip(*steps, strict=True))
    top = max(values) or 1
    fig.add_trace(graph_objects().Bar(
        y=labels, x=values, orientation="h", marker_color=colours, cliponaxis=False, textangle=0,
        text=[f"{v:,} ({v / b:.1%})" if b else f"{v:,}" for v, b in zip(values, bases, strict=True)],
        textposition=_text_positions(values, top), insidetextanchor="end",
        hovertemplate="%{y}: %{x:,}<extra></extra>",
    ))
    fig.update_layout(yaxis=dict(autorange="reversed"), xaxis=dict(range=[0, top * 1.02], title="recipients"),
                      showlegend=False)
    return fig


def _bars(span: pd.Timedelta, freq: str) -> float:
    """How many bars of ``freq`` cover ``span``."""
    try:
        step = pd.tseries.frequencies.to_offset(freq).nanos
    except ValueError as exc:  # "W", "MS": not a fixed duration
        raise InputError(f"status_over_time: freq={freq!r} is not a fixed duration; "
                         "use one like 'min', '15min', 'h' or 'D'.") from exc
    return float(span.value) / float(step)


def _bucket_for(span: pd.Timedelta) -> str:
    return next((freq for freq in _FREQ_WORDS if _bars(span, freq) < MAX_TIME_BUCKETS), "30D")


@keyword_checked
def status_over_time(outcomes: pd.DataFrame, freq: str | None = None) -> go.Figure:
    """Stacked counts of final status by send time, bucketed by ``freq`` (``"min"``, ``"h"``, ``"D"``, ...;
    by default the finest that gives at most 200 bars).

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}))
    >>> status_over_time(outcomes).layout.annotations[0].text
    'No send times yet: callbacks or records give them.'
    """
    fig = _chart(outcomes, ("sent_at", "status"), "status_over_time", "Status by send time")
    sent_at = outcomes["sent_at"]
    known = sent_at.notna().to_numpy()
    if not known.any():
        return _empty(fig, "No send times yet: callbacks or records give them.")
    span = sent_at.max() - sent_at.min()
    if freq is not None and _bars(span, freq) > 10 * MAX_TIME_BUCKETS:
        raise InputError(f"status_over_time: freq={freq!r} gives more than {10 * MAX_TIME_BUCKETS:,} bars over {span}; "
                         f"choose a coarser one, such as {_bucket_for(span)!r}.")
    freq = freq or _bucket_for(span)
    _status_bars(fig, _counts_over_time(sent_at, outcomes["status"], known, freq))
    fig.update_layout(barmode="stack", bargap=0.05, yaxis_title="messages", legend_traceorder="normal",
                      title_subtitle_text=f"messages per {_FREQ_WORDS.get(freq, freq)} of send time, by final status")
    return fig


def _counts_over_time(sent_at: pd.Series, status: pd.Series, known: np.ndarray, freq: str) -> pd.DataFrame:
    """Messages per ``freq`` bucket of ``sent_at`` (floored, as ``dt.floor``: the buckets with a message) and status
    (the statuses with one) among the ``known`` rows: one integer per row (its bucket and status code together),
    counted, where grouping by both made a table of a row each (the dashboard's peak at a million rows)."""
    unit = pd.Timedelta(1, unit=sent_at.dt.unit).value
    step = pd.tseries.frequencies.to_offset(freq).nanos // unit
    statuses = status if isinstance(status.dtype, pd.CategoricalDtype) else status.astype("category")
    codes = np.asarray(statuses.cat.codes)
    rows = known & (codes >= 0)  # a missing status is in no column
    width = len(statuses.cat.categories)
    keys = sent_at.array.asi8[rows] // step  # the bucket of each row (UTC), then bucket and status as one number
    if not len(keys):
        return pd.DataFrame(index=pd.DatetimeIndex([], tz="UTC", name="sent_at"))
    first = int(keys.min())
    buckets = int(keys.max()) - first + 1  # at most the 10 * MAX_TIME_BUCKETS status_over_time allows
    keys -= first
    keys *= width
    keys += codes[rows]
    counts = np.bincount(keys, minlength=buckets * width).reshape(buckets, width)
    used, named = counts.sum(axis=1) > 0, counts.sum(axis=0) > 0
    starts = pd.to_datetime((np.flatnonzero(used) + first) * step * unit, utc=True).as_unit(sent_at.dt.unit)
    return pd.DataFrame(counts[used][:, named], columns=list(statuses.cat.categories[named]),
                        index=starts.rename("sent_at"))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


@keyword_checked
def time_to_delivery(outcomes: pd.DataFrame) -> go.Figure:
    """The share of delivered messages delivered within x seconds (an ECDF through at most 1,001 points),
    with 5 s and 60 s marks.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}))
    >>> time_to_delivery(outcomes).layout.annotations[0].text
    'No delivered messages with both dates yet.'
    """
    fig = _chart(outcomes, ("seconds_to_delivery",), "time_to_delivery", "Time to delivery")
    seconds = outcomes["seconds_to_delivery"].dropna().clip(lower=0).to_numpy(dtype=float)
    if seconds.size == 0:
        return _empty(fig, "No delivered messages with both dates yet.")
    values, counts = np.unique(seconds, return_counts=True)
    if values.size <= MAX_ECDF_POINTS:  # the exact curve: one step per distinct time
        x, share = values, np.cumsum(counts) / seconds.size
    else:  # the curve through 1,001 quantiles: steps of 0.1% of the messages
        share = np.linspace(0, 1, MAX_ECDF_POINTS)
        x = np.quantile(seconds, share, method="inverted_cdf")
    fig.add_trace(graph_objects().Scatter(x=x, y=share, mode="lines", line_shape="hv", name="delivered",
                                line_color=STATUS_COLORS["DELIVRD"],
                                hovertemplate="%{y:.1%} within %{x:,.0f} s<extra></extra>"))
    for mark, place in ((5, "top right"), (60, "bottom right")):
        within = float((seconds <= mark).mean())
        fig.add_vline(x=mark, line_dash="dash", line_color="#616161", annotation_text=f"{mark} s: {within:.0%}",
                      annotation_position=place)
    p99 = float(np.quantile(seconds, 0.99))
    fig.update_layout(
        title_subtitle_text=(f"{seconds.size:,} delivered · 99% within {_duration(p99)} · "
                             f"longest {_duration(seconds.max())}"),
        xaxis=dict(title="seconds to delivery", range=[0, max(66.0, p99 * 1.1)]),
        yaxis=dict(title="share delivered", tickformat=".0%", range=[0, 1.02]), showlegend=False,
    )
    return fig


def _reason(failed: pd.DataFrame) -> pd.Series:
    api = "error " + failed["error_code"].astype("Int64").astype("string")
    if "error_description" in failed:
        described = failed["error_description"].astype("string")
        api += (": " + described.where(described.str.len() <= 32, described.str.slice(0, 31) + "…")).fillna("")
    # a row the API rejected has its error code; a NOT_SENT row without one was never attempted
    by_status = failed["status"].map(lambda s: "not sent yet" if s == "NOT_SENT" else _status_label(s))
    return api.fillna(by_status.astype("string"))


@keyword_checked
def failures(outcomes: pd.DataFrame) -> go.Figure:
    """Failed recipients by status, and by API error for those the API rejected (the 15 biggest reasons, then one
    bar for the rest).

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": [None], "outcome": ["rejected"], "error_code": [102]}))
    >>> list(failures(outcomes).data[0].y)
    ['error 102']
    """
    fig = _chart(outcomes, ("status", "error_code"), "failures", "Failures by status and error")
    shown = ["status", "error_code", *(["error_description"] if "error_description" in outcomes else [])]
    failed = outcomes.loc[outcomes["status"].isin(FAILED_STATUSES | {"NOT_SENT", "UNKNOWN_OUTCOME"}), shown]
    if failed.empty:
        return _empty(fig, "No failures.")
    counts = pd.crosstab(_reason(failed), failed["status"].astype("string"))
    counts = _keep_top(counts.assign(total=counts.sum(axis=1)), "total", TOP_GROUPS, "reasons")
    _status_bars(fig, counts.sort_values("total", ascending=False).drop(columns="total"), orientation="h")
    # the labels name the status (or the API error of a message not sent): no legend needed
    fig.update_layout(barmode="stack", xaxis_title="recipients", yaxis=dict(autorange="reversed"), showlegend=False)
    return fig


def _rates(hits: pd.Series, among: pd.Series, by: pd.Series, noun: str = "") -> pd.DataFrame:
    """Per ``group`` of ``by`` (a missing value in none): how many rows are ``among`` (``of``), how many of those
    are ``hits``, and the ``rate``; given a ``noun``, the 15 biggest groups, then the rest in one row
    (:func:`_keep_top`). Counted over the groups' codes (the groups with a row, in their categories' order): no group
    table of a row each (at a million rows each chart's grouping made tens of MiB of them, at the report's peak).

        >>> rates = _rates(pd.Series([True, False, True]), pd.Series([True, True, False]), pd.Series(["b", "a", "b"]))
        >>> rates.to_dict("index")
        {'a': {'of': 1, 'hits': 0, 'rate': 0.0}, 'b': {'of': 1, 'hits': 1, 'rate': 1.0}}
    """
    groups = by if isinstance(by.dtype, pd.CategoricalDtype) else by.astype("category")
    codes = np.asarray(groups.cat.codes)
    counted = among.to_numpy(dtype=bool, na_value=False) & (codes >= 0)
    size = len(groups.cat.categories)
    of = np.bincount(codes[counted], minlength=size)
    hit = np.bincount(codes[counted & hits.to_numpy(dtype=bool, na_value=False)], minlength=size)
    present = of > 0
    counts = pd.DataFrame({"of": of[present], "hits": hit[present]},
                          index=pd.Index(groups.cat.categories[present], name="group"))
    counts = _keep_top(counts, "of", TOP_GROUPS, noun) if noun else counts
    return counts.assign(rate=counts["hits"] / counts["of"])


def _delivered_of_accepted(outcomes: pd.DataFrame, by: pd.Series, noun: str = "") -> pd.DataFrame:
    return _rates(outcomes["status"].isin(["DELIVRD"]), outcomes["outcome"].isin(["accepted"]), by, noun)


@cache
def _iso3(alpha_2: str) -> str | None:
    country = optional_import("pycountry", "The country map needs pycountry").countries.get(alpha_2=alpha_2)
    return country.alpha_3 if country else None


def _one_region(countries: pd.Series) -> bool:
    """Whether the countries lie in one part of the world (by the first digit of their calling codes: 1 and 5 the
    Americas, 2 to 4 Europe and Africa, 6 to 9 Asia and Oceania), so the map can frame them without wrapping."""
    zones = {str(phonenumbers.country_code_for_region(str(c)))[:1] for c in countries}
    return any(zones <= set(region) for region in ("15", "234", "6789"))


@keyword_checked
def delivery_rate_by_country(outcomes: pd.DataFrame) -> go.Figure:
    """A world map of delivery rate (delivered / accepted) by recipient country.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}),
    ...                             recipients=pd.Series(["34600123456"]))
    >>> list(delivery_rate_by_country(outcomes).data[0].locations)
    ['ESP']
    """
    fig = _chart(outcomes, ("country", "outcome", "status"), "delivery_rate_by_country",
                 "Delivery rate by country (delivered / accepted)")
    rates = _delivered_of_accepted(outcomes, outcomes["country"]).reset_index()
    if rates.empty:
        return _empty(fig, "No accepted messages with a known country.")
    text = [f"{c}: {d:,}/{a:,} delivered" for c, d, a in zip(rates["group"], rates["hits"], rates["of"], strict=True)]
    # the colour scale starts a little under the worst country, so 85% and 98% do not look alike
    zmin = max(0.0, np.floor(float(rates["rate"].min()) * 10) / 10 - 0.1)
    fig.add_trace(graph_objects().Choropleth(
        locations=rates["group"].map(_iso3), z=rates["rate"], locationmode="ISO-3", text=text, hoverinfo="text+z",
        zmin=zmin, zmax=1, colorscale="RdYlGn", colorbar=dict(title="rate", tickformat=".0%", thickness=12)))
    fig.update_geos(showframe=False, projection_type="natural earth", showcountries=True)
    if _one_region(rates["group"]):  # zoom to Europe for a European campaign; a worldwide one shows the world
        fig.update_geos(fitbounds="locations")
    else:
        fig.update_geos(lataxis_range=[-58, 85])
    fig.update_layout(margin=dict(l=0, r=0, t=60, b=0))
    return fig


@keyword_checked
def delivery_rate_by_operator(outcomes: pd.DataFrame) -> go.Figure:
    """Delivery rate by country and operator (MNC), with the denominator on each bar: the 15 operators with the most
    accepted messages, then one bar for the rest.

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}),
    ...                             recipients=pd.Series(["34600123456"]))
    >>> list(delivery_rate_by_operator(outcomes).data[0].y)
    ['ES ? · 0/1']
    """
    fig = _chart(outcomes, ("country", "mnc", "outcome", "status"), "delivery_rate_by_operator",
                 "Delivery rate by operator (country MNC)")
    rates = _delivered_of_accepted(outcomes, operator_label(outcomes["country"], outcomes["mnc"]), "operators")
    if rates.empty:
        return _empty(fig, "No accepted messages yet.")
    rates = rates.sort_values("rate", ascending=False)
    labels = [f"{o} · {int(d):,}/{int(a):,}" for o, d, a in zip(rates.index, rates["hits"], rates["of"], strict=True)]
    fig.add_trace(graph_objects().Bar(
        x=rates["rate"], y=labels, orientation="h", marker_color=STATUS_COLORS["DELIVRD"], cliponaxis=False,
        text=[f"{r:.1%}" for r in rates["rate"]], insidetextanchor="end", customdata=list(rates.index),
        textposition=_text_positions(list(rates["rate"]), 1.0),
        hovertemplate="%{customdata}: %{x:.1%}<extra></extra>"))
    fig.update_layout(xaxis=dict(tickformat=".0%", range=[0, 1], title="delivered / accepted"), showlegend=False)
    return fig


@keyword_checked
def cost(outcomes: pd.DataFrame) -> go.Figure:
    """Estimated versus billed cost by country (the 15 costliest, then one bar for the rest).

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}),
    ...                             estimate=pd.DataFrame({"cost": [0.05]}))
    >>> [float(v) for v in cost(outcomes).data[0].y]
    [0.05]
    """
    fig = _chart(outcomes, ("country", "estimated_cost", "billed_cost"), "cost", "Cost: estimated versus billed")
    country = _groups(outcomes["country"])
    totals = outcomes[["estimated_cost", "billed_cost"]].astype(float).groupby(country, observed=True).sum(
        min_count=1).fillna(0.0)
    totals = _keep_top(totals.assign(top=totals.max(axis=1)), "top", TOP_GROUPS, "countries")
    currency = outcomes.attrs.get("currency", "")
    for column, name, colour in (("estimated_cost", "estimated", "#90caf9"), ("billed_cost", "billed", "#1565c0")):
        fig.add_trace(graph_objects().Bar(x=totals.index, y=totals[column], name=name, marker_color=colour))
    spent = f"estimated {totals['estimated_cost'].sum():,.2f}, billed {totals['billed_cost'].sum():,.2f} {currency}"
    fig.update_layout(title_subtitle_text=spent.rstrip(), barmode="group", yaxis_title=f"cost {currency}".strip())
    return fig


@keyword_checked
def clicks(outcomes: pd.DataFrame) -> go.Figure:
    """Click-through: clicked recipients among delivered ones, by country (the 15 with most deliveries, then the rest).

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}))
    >>> clicks(outcomes).layout.annotations[0].text
    'No delivered messages yet.'
    """
    fig = _chart(outcomes, ("status", "clicked", "country"), "clicks", "Clicks among delivered recipients")
    delivered = outcomes["status"].isin(["DELIVRD"])
    if not delivered.any():
        return _empty(fig, "No delivered messages yet.")
    rates = _rates(outcomes["clicked"].astype("boolean"), delivered, _groups(outcomes["country"]), "countries")
    fig.add_trace(graph_objects().Bar(
        x=rates.index, y=rates["rate"], marker_color="#f9a825", text=[f"{r:.1%}" for r in rates["rate"]],
        textposition="outside", cliponaxis=False, customdata=np.column_stack([rates["hits"], rates["of"]]),
        hovertemplate="%{x}: %{customdata[0]:,} of %{customdata[1]:,} clicked<extra></extra>"))
    fig.update_layout(yaxis=dict(tickformat=".0%", range=[0, max(float(rates["rate"].max()), 0.01) * 1.25],
                                 title="clicked / delivered"),
                      showlegend=False)
    return fig


# every chart of the dashboard, by its function's name, in the dashboard's order
CHARTS = {chart.__name__: chart for chart in (funnel, status_over_time, time_to_delivery, failures,
                                              delivery_rate_by_country, delivery_rate_by_operator, cost, clicks)}


def _utc(moment: pd.Timestamp) -> str:
    moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


@keyword_checked
def campaign_facts(outcomes: pd.DataFrame, *, campaign: str | None = None) -> dict[str, str]:
    """The report's header: campaign, first and last send (UTC), recipients, cost (estimated, and billed when known).

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1", None], "outcome": ["accepted", "rejected"]}))
    >>> campaign_facts(outcomes, campaign="Black Friday")["recipients"]
    '2 (sent 2)'
    >>> list(campaign_facts(message_outcomes(pd.DataFrame({"id": ["m1"], "outcome": ["accepted"]}),
    ...                                      estimate=pd.DataFrame({"cost": [0.05]}))))[-1]
    'estimated cost'
    """
    ids: list[object] = outcomes["campaign_id"].dropna().unique().tolist() if "campaign_id" in outcomes else []
    id_text = ", ".join(str(i) for i in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    named = " · ".join(part for part in (campaign, f"id {id_text}" if id_text else "") if part)
    sent_at = outcomes["sent_at"].dropna() if "sent_at" in outcomes else pd.Series(dtype="datetime64[us, UTC]")
    sent = int(outcomes["outcome"].isin(SENT_OUTCOMES).sum()) if "outcome" in outcomes else len(outcomes)
    facts = {"campaign": named or "not named",
             "first send": _utc(sent_at.min()) if not sent_at.empty else "not known yet",
             "last send": _utc(sent_at.max()) if not sent_at.empty else "not known yet",
             "recipients": f"{len(outcomes):,} (sent {sent:,})"}
    currency = f" {outcomes.attrs['currency']}" if outcomes.attrs.get("currency") else ""
    for column, label in (("estimated_cost", "estimated cost"), ("billed_cost", "billed cost")):
        values = outcomes[column].astype(float) if column in outcomes else pd.Series(dtype=float)
        if values.notna().any():
            so_far = f" ({int(values.notna().sum()):,} messages billed so far)" if column == "billed_cost" else ""
            facts[label] = f"{values.sum():,.2f}{currency}{so_far}"
    if not {"estimated cost", "billed cost"} & facts.keys():
        facts["cost"] = "not known (pass estimate= to message_outcomes, or fetch records)"
    return facts


@keyword_checked
def dashboard(outcomes: pd.DataFrame, *, summary: pd.DataFrame | None = None, title: str = "Delivery report",
              campaign: str | None = None) -> Dashboard:
    """Build every chart of the delivery dashboard, and the report's header, from the tidy outcomes frame.

    ``campaign`` names the campaign in the header (its ids come from the frame); ``summary`` is a table
    shown under the header (``delivery_summary``).

    >>> from sendframe.delivery.outcomes import message_outcomes
    >>> outcomes = message_outcomes(pd.DataFrame({"id": ["m1", None], "outcome": ["accepted", "rejected"]}))
    >>> board = dashboard(outcomes, campaign="Black Friday")
    >>> board.header["campaign"], list(board.figures)[:2]
    ('Black Friday', ['funnel', 'status_over_time'])
    >>> board.write_html("report.html")           # doctest: +SKIP
    """
    figures = {name: chart(outcomes) for name, chart in CHARTS.items()}
    release_unused_memory()  # the charts' per-row temporaries, handed back before the report is written
    if summary is not None and any(name is not None for name in summary.index.names):
        summary = summary.reset_index()  # the table shows the groups (delivery_summary's index) as its first columns
    return Dashboard(figures, summary=summary, title=title, header=campaign_facts(outcomes, campaign=campaign))
