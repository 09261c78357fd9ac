"""The delivery benchmarks run end to end in their --quick form (no timing assertions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("script", ["bench_callbacks.py", "bench_conversions.py", "bench_receiver.py",
                                    "bench_records.py"])
def test_benchmark_quick_run_exits_cleanly_and_prints_a_ratio(script):
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ratio:" in done.stdout


def test_the_outcomes_benchmark_quick_run_times_every_phase_and_says_whether_the_goal_is_met():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_outcomes.py"), "--quick"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for phase in ("message_outcomes(results, callbacks)", "delivery_summary(outcomes)", "sendframe report"):
        assert phase in done.stdout
    assert "goal (" in done.stdout


@pytest.mark.slow  # 10 to 30 s: 200 comparisons of 5 groups, and statsmodels' Holm runs gc.collect on each
def test_the_statistics_validation_quick_run_meets_every_goal():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "validate_statistics.py"), "--quick"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    for figure in ("fixed-sample z-test read at every look", "incremental revenue", "Holm:"):
        assert figure in done.stdout
    assert "all goals met" in done.stdout
