"""A real browser: JupyterLab serves the notebooks, Debian's Chromium runs them headless.

It checks that the quickstart's ipywidget and plotly chart rendered, and that notebook 07's tables
(lift, delivery by operator) did, and saves a screenshot of each as a test artefact in ``test-artifacts/``.
Chromium comes from Debian's package (``make test`` installs it), launched by its explicit path; nothing
downloads a browser.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
# flags the machine needs: no sandbox as root, and no background calls to Google's hosts
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: `make test` installs it (apt-get install chromium)")
    work = tmp_path / "nb"
    shutil.copytree(ROOT / "notebooks", work)
    shutil.copytree(ROOT / "data", tmp_path / "data")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "SENDFRAME_DATA_DIR": str(ROOT / "data")}
    with (tmp_path / "jupyter.log").open("wb") as log:  # the server writes through its own copy of the handle
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--ServerApp.open_browser=False",
             "--ServerApp.allow_root=True",
             "--LabApp.news_url=", "--LabServerApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            stdout=subprocess.DEVNULL, stderr=log, env=env,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{base}/api/status?token={token}", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail("JupyterLab did not start: " + (tmp_path / "jupyter.log").read_text(errors="replace")[-2000:])
    yield base, token
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()


def _wait_for_connected_kernel(base: str, token: str) -> None:
    """The page says idle before its kernel's websocket is up; cells run before that are lost."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        answer = httpx.get(f"{base}/api/kernels?token={token}", timeout=5)
        kernels = answer.json() if answer.status_code == 200 else []  # a busy server may answer an error meanwhile
        if kernels and kernels[0].get("connections", 0) > 0 and kernels[0]["execution_state"] == "idle":
            time.sleep(1)
            return
        time.sleep(0.5)
    pytest.fail("the notebook's kernel never connected")


def _run_every_cell(page, base: str, token: str, notebook: str) -> None:
    """Open ``notebook`` in JupyterLab, run its cells top to bottom with Shift+Enter, wait until every code
    cell has run, and fail on any traceback shown."""
    page.goto(f"{base}/lab/tree/{notebook}?token={token}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    _wait_for_connected_kernel(base, token)
    cells = page.locator(".jp-NotebookPanel .jp-Cell")
    count = cells.count()
    cells.first.locator(".jp-InputPrompt").click()
    for _ in range(count):
        page.keyboard.press("Shift+Enter")
    # every code cell gets an execution count once the whole notebook has run
    page.wait_for_function(
        """(count) => {
            const cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-Cell')].slice(0, count);
            const prompts = cells.filter(c => c.classList.contains('jp-CodeCell'))
                .map(c => c.querySelector('.jp-InputPrompt'));
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        arg=count,
        timeout=300_000,
    )
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] "
                          ".jp-RenderedText:has-text('Traceback')")
    assert errors.count() == 0, errors.first.inner_text()


@contextmanager
def _chromium_page(screenshot: str) -> Iterator[Page]:
    """A page of headless Chromium; its screenshot is saved as ``test-artifacts/<screenshot>`` however the test ends."""
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            yield page
        finally:
            page.screenshot(path=str(ARTIFACTS / screenshot), full_page=False)
            browser.close()


def test_quickstart_runs_in_jupyterlab_with_widget_and_chart_rendered(jupyterlab):
    base, token = jupyterlab
    with _chromium_page("quickstart-jupyterlab.png") as page:
        _run_every_cell(page, base, token, "01_quickstart.ipynb")
        page.wait_for_selector(".jp-OutputArea .jupyter-widgets", state="attached", timeout=60_000)
        page.wait_for_selector(".jp-OutputArea .js-plotly-plot .main-svg", state="attached", timeout=60_000)
        widget = page.locator(".jp-OutputArea .jupyter-widgets").first
        widget.scroll_into_view_if_needed()
        assert widget.is_visible()
        chart = page.locator(".js-plotly-plot").first
        chart.scroll_into_view_if_needed()
        assert chart.bounding_box()["height"] > 100


def test_did_it_work_runs_in_jupyterlab_with_its_lift_and_delivery_tables_rendered(jupyterlab):
    base, token = jupyterlab
    with _chromium_page("did-it-work-jupyterlab.png") as page:
        _run_every_cell(page, base, token, "07_did_it_work.ipynb")
        tables = page.locator(".jp-OutputArea-output table.dataframe")
        # conversions per variant, the lift in conversions and in revenue, delivery by operator, low delivery
        assert tables.count() == 5
        assert tables.nth(1).locator("th", has_text="cost_per_incremental_low").count() == 1
        summary = tables.nth(3)
        summary.scroll_into_view_if_needed()
        assert summary.is_visible()
        headers = summary.locator("thead th").all_inner_texts()
        assert {"delivery_rate_low", "delivery_rate_high", "seconds_to_delivery_p90", "delivered_within_5s",
                "cost_per_delivered"} <= set(headers)
        # the operators label the rows (the summary's index), not a column one could select away
        assert "operator" in headers and summary.locator("tbody th", has_text="ES 01").count() == 1
        assert tables.nth(4).locator("th", has_text="flagged").count() == 1
