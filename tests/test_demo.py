"""`sendframe demo`, what `make demo` runs: the sample campaign end to end against the embedded sandbox."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_the_demo_sends_each_recipient_once_and_writes_an_offline_report(tmp_path):
    report = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "sendframe.cli", "demo", "--out", str(report)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    estimated = int(re.search(r"Estimate: (\d+) recipients", out).group(1))
    # rows with errors or repeated recipients are left out
    assert re.search(rf"Sent: {estimated} accepted, 0 rejected", out)
    summary = {name: value for name, value in re.findall(r"^(\w+)\s+(\S+)$", out, flags=re.MULTILINE)}
    assert int(summary["accepted"]) == estimated
    ended = ("delivered", "failed", "expired", "pending")
    assert sum(int(summary[name]) for name in ended) == estimated
    assert int(summary["delivered"]) > estimated // 2 and int(summary["clicks"]) > 0
    assert float(summary["estimated_cost"]) == pytest.approx(float(summary["billed_cost"]), rel=0.05)
    html = report.read_text(encoding="utf-8")
    assert "<html" in html.lower() and not re.search(r"<script[^>]+src=", html)  # self-contained: opens offline
