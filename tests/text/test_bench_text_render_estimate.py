"""The render + estimate benchmark runs end to end on a small size and prints its ratio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_text_render_estimate.py"


def test_benchmark_quick_run_exits_zero_and_prints_a_ratio():
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ratio:" in done.stdout and "x" in done.stdout.split("ratio:")[1]
    assert "answers identical on the timed rows (and both vectorised paths on all rows): True" in done.stdout
