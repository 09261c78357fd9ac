"""The HTML report: one offline file with a header block, a summary that fits the page and the charts."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from sendframe.cli import main
from sendframe.delivery.callbacks import latest_status
from sendframe.delivery.receiver import Receiver
from sendframe.notebook import charts
from sendframe.notebook.report import Dashboard, summary_html
from sendframe.sandbox import Sandbox
from tests.notebook.test_charts import outcomes_frame

ROOT = Path(__file__).resolve().parents[2]
CONTACTS = ROOT / "data" / "contacts.csv"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def one_row_summary() -> pd.DataFrame:
    return pd.DataFrame({
        "campaign_id": pd.array([4711], dtype="Int64"), "sent": [1_000_000], "accepted": [979_223],
        "rejected": [14_776], "not_sent": [4_974], "unknown_outcome": [1_027], "delivered": [861_563],
        "failed": [68_492], "expired": [19_637],
        "pending": [29_531], "delivery_rate": pd.array([0.8798], dtype="Float64"),
        "delivery_rate_denominator": pd.array(["accepted"], dtype="string"), "median_seconds_to_delivery": [4.0],
        "p95_seconds_to_delivery": [34.0], "clicks": [51_756], "estimated_cost": [57_266.6], "billed_cost": [54_382.9],
    })


def test_report_is_one_offline_html_file(tmp_path):
    path = charts.dashboard(outcomes_frame(), title="Test <campaign>").write_html(tmp_path / "report.html")
    text = Path(path).read_text(encoding="utf-8")
    assert "Test &lt;campaign&gt;" in text
    assert "PlotlyGeoAssets" in text and '"world_110m"' not in text  # the map data is inlined under its name
    assert "'world_110m'" in text
    assert text.count("Plotly.newPlot") == len(charts.CHARTS)
    # no external script or stylesheet: everything needed is inside the file
    assert not re.search(r"<script[^>]+src=", text)
    assert not re.search(r"<link[^>]+href=", text)
    for name in charts.CHARTS:
        assert f'id="chart-{name}"' in text


def test_the_header_block_comes_first_with_each_fact_labelled():
    text = charts.dashboard(outcomes_frame(), campaign="Black Friday").to_html()
    header = re.search(r"<dl class='facts'>(.*?)</dl>", text).group(1)
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", header))
    assert facts == {"campaign": "Black Friday · id 1", "first send": "2026-11-21 10:00:00 UTC",
                     "last send": "2026-11-21 10:00:00 UTC", "recipients": "7 (sent 7)", "estimated cost": "0.35",
                     "billed cost": "0.19 (4 messages billed so far)"}
    assert text.index("<dl class='facts'>") < text.index("class=\"card\"")


def test_a_one_row_summary_is_a_key_value_table_that_never_scrolls_sideways():
    html = summary_html(one_row_summary())
    assert "class='keyvalue'" in html
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", html)
    values = dict(rows)
    assert len(rows) == len(one_row_summary().columns) - 1  # every measure on its own row; campaign_id heads the column
    assert values["delivered"] == "861,563"
    assert values["delivery rate"] == "88.0%"
    assert values["median seconds to delivery"] == "4.0 s"
    assert values["billed cost"] == "54,382.90"
    assert values["delivery rate denominator"] == "accepted"
    assert "<th>campaign id 4711</th>" in html


def test_a_long_summary_keeps_its_columns_with_headers_that_wrap():
    by_country = pd.concat([one_row_summary()] * 12, ignore_index=True).assign(country=[f"C{n}" for n in range(12)])
    html = summary_html(by_country)
    assert "keyvalue" not in html
    headers = re.findall(r"<th>(.*?)</th>", html)
    assert headers[:2] == ["campaign id", "country"]  # the segments first, then the measures
    assert "median seconds to delivery" in headers and all("_" not in h for h in headers)
    assert html.count("<tr>") == 13


def test_a_dashboard_without_summary_or_figures_is_still_a_page():
    text = Dashboard({}, title="Q4").to_html()
    assert "<h1>Q4</h1>" in text and "Summary" not in text


def _layout_of(report: Path, tmp_path: Path) -> dict:
    """Open the report in headless Chromium and measure, once laid out, what overflows what."""
    probe = """<script>window.addEventListener('load', function () { setTimeout(function () {
      var out = {page: [document.documentElement.scrollWidth, window.innerWidth], cards: [], tables: []};
      document.querySelectorAll('.card').forEach(function (card) {
        var svg = card.querySelector('.main-svg');
        out.cards.push([card.id || card.firstElementChild.id, svg ? svg.getBoundingClientRect().width : 0,
                        card.clientWidth]);
      });
      document.querySelectorAll('.summary').forEach(function (box) {
        out.tables.push([box.scrollWidth, box.clientWidth]);
      });
      var gd = document.getElementById('chart-funnel'), xaxis = gd._fullLayout.xaxis;
      out.funnel = {range: xaxis.range, longest: Math.max.apply(null, gd.data[0].x)};
      var pre = document.createElement('pre'); pre.id = 'layout'; pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre); }, 500); });</script></body>"""
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text(encoding="utf-8").replace("</body>", probe), encoding="utf-8")
    done = subprocess.run([str(CHROMIUM), *CHROMIUM_ARGS, "--window-size=1400,2400", "--virtual-time-budget=20000",
                           "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r"<pre id=\"layout\">(.*?)</pre>", done.stdout)
    assert found, done.stderr[-2000:]
    return json.loads(found.group(1))


@pytest.mark.slow
def test_in_a_real_browser_no_chart_runs_past_its_card_and_the_summary_fits(tmp_path):
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: `make test` installs it (apt-get install chromium)")
    frame = pd.concat([outcomes_frame()] * 5000, ignore_index=True)
    board = charts.dashboard(frame, summary=one_row_summary(), campaign="Black Friday")
    report = Path(board.write_html(tmp_path / "r.html"))
    layout = _layout_of(report, tmp_path)
    assert layout["page"][0] <= layout["page"][1]  # nothing scrolls the page sideways
    assert len(layout["cards"]) == len(charts.CHARTS)
    for name, drawn, card in layout["cards"]:
        assert 0 < drawn <= card, (name, drawn, card)
    assert all(scroll <= width for scroll, width in layout["tables"])
    low, high = layout["funnel"]["range"]
    assert low == 0 and layout["funnel"]["longest"] <= high


def _wait_for_notifications(receiver: Receiver, sandbox: Sandbox, timeout: float = 30.0) -> None:
    """Until the receiver has, for every message, the status the sandbox gives it."""
    truth = sandbox.messages().set_index("id")["status"].astype(str)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        latest = latest_status(receiver.callbacks()).set_index("id")["status"].astype(str)
        if latest.reindex(truth.index).eq(truth).all():
            return
        time.sleep(0.2)
    raise AssertionError("the receiver did not get every notification in time")


def test_sendframe_report_draws_what_sendframe_send_wrote(tmp_path, monkeypatch, capsys):
    log = tmp_path / "callbacks.sqlite"
    with Sandbox(clock="manual") as sb, Receiver(log) as receiver:
        monkeypatch.setenv("SENDFRAME_BASE_URL", sb.base_url)
        monkeypatch.setenv("SENDFRAME_USERNAME", sb.username)
        monkeypatch.setenv("SENDFRAME_API_PASSWORD", sb.api_password)
        monkeypatch.chdir(tmp_path)
        results = tmp_path / "results.csv"
        assert main(["send", str(CONTACTS), "--message", "Hola {name}", "--sender", "Shop", "--campaign", "spring",
                     "--notification-url", receiver.notification_url, "--out", str(results), "--no-progress"]) == 0
        sent = pd.read_csv(results, dtype=str)
        sb.advance(7 * 86400)
        _wait_for_notifications(receiver, sb)
    report = tmp_path / "report.html"
    assert main(["report", "--results", str(results), "--callbacks", str(log), "--campaign", "spring",
                 "--out", str(report)]) == 0
    assert f"Report written to {report}" in capsys.readouterr().out
    text = report.read_text(encoding="utf-8")
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", text))
    assert facts["campaign"].startswith("spring · id ")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", facts["first send"])
    accepted = int((sent["outcome"] == "accepted").sum())
    assert facts["recipients"] == f"{len(sent):,} (sent {int(sent['outcome'].isin(['accepted', 'rejected']).sum()):,})"
    assert "class='keyvalue'" in text  # the one-campaign summary, measures down
    funnel = json.loads(re.search(r'Plotly.newPlot\(\s*"chart-funnel",\s*(\[.*?\]),\s*\{', text, re.S).group(1))[0]
    steps = dict(zip(funnel["y"], funnel["x"], strict=True))
    assert steps["skipped: repeated recipient"] == 3  # data/contacts.csv repeats three numbers
    assert steps["accepted"] == accepted
