"""The composer benchmark runs (quick size) and prints its figures; no timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_composer.py"


def test_composer_benchmark_runs_and_prints_its_ratio():
    proc = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "composer, steady keystrokes" in proc.stdout
    assert "ratio (naive / composer, median)" in proc.stdout
