"""The send benchmark runs end to end in its quick form and prints its ratio (no timing assertions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_send.py"


@pytest.mark.slow
def test_the_send_benchmark_runs_quick_and_prints_a_ratio():
    done = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ratio:" in done.stdout and "x faster batched" in done.stdout
    assert "extrapolated" in done.stdout
