"""The benchmarks' messy data is shaped like real tables, and the headline rehearsal runs end to end (untimed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import sendframe  # noqa: E402
from messy_data import messy_contacts, write_messy_csv  # noqa: E402


def test_the_messy_table_has_people_typed_phones_repeats_junk_and_unique_amounts_and_ids():
    frame = messy_contacts(20_000)
    phone = frame["phone"]
    assert frame["customer_id"].is_unique and frame["amount"].is_unique
    for written in ("+34 ", "0034", "(0)", ".0", "e+", "-", "."):
        assert phone.str.contains(written, regex=False).any(), written
    assert phone.isin(["", "n/a", "#N/A", "call me"]).any()
    assert 0.05 < frame["name"].duplicated().mean() < 0.7  # names repeat, as real names do
    assert frame["city"].nunique() < 60
    contacts = sendframe.read_contacts(frame)
    assert 0.9 < contacts["phone_valid"].mean() < 0.99
    assert 0.05 < contacts["duplicate"].mean() < 0.2


def test_the_same_seed_writes_the_same_csv(tmp_path):
    first = write_messy_csv(tmp_path / "a.csv", 500).read_bytes()
    assert first == write_messy_csv(tmp_path / "b.csv", 500).read_bytes()
    assert first != write_messy_csv(tmp_path / "c.csv", 500, seed=5).read_bytes()


@pytest.mark.slow
def test_the_rehearsal_runs_a_campaign_end_to_end_and_prints_every_phase(tmp_path):
    done = subprocess.run([sys.executable, str(BENCHMARKS / "rehearsal.py"), "1500", "--keep", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    for phase in ("read_contacts", "preflight", "estimate", "send", "wait for every final notification",
                  "fetch_records", "outcomes", "delivery_summary", "report.html"):
        assert phase in done.stdout
    assert "total (phases 1-9)" in done.stdout and "peak memory, sandbox" in done.stdout
    assert "0 accepted messages without a final notification" in done.stdout
    speeds = re.search(r"machine speed: a fixed workload took ([\d.]+) s before the run and ([\d.]+) s after",
                       done.stdout)
    assert speeds is not None and all(float(seconds) > 0 for seconds in speeds.groups()), done.stdout
    assert (tmp_path / "report.html").stat().st_size > 0


@pytest.mark.slow
def test_pairs_of_rehearsals_print_each_ratio_and_the_median(tmp_path):
    done = subprocess.run([sys.executable, str(BENCHMARKS / "rehearsal.py"), "1000", "--pairs", "1", "--keep",
                           str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    small, large = (json.loads((tmp_path / f"pair1_{rows}.json").read_text()) for rows in (1000, 2000))
    assert small["rows"] == 1000 and large["rows"] == 2000 and small["missing"] == large["missing"] == 0
    ratio = large["seconds"] / small["seconds"]
    assert f"pair 1: {small['seconds']:.1f} s and {large['seconds']:.1f} s = {ratio:.3f}x" in done.stdout
    assert f"median of 1 pair(s): {ratio:.3f}x end to end" in done.stdout, done.stdout
    assert (tmp_path / "pair1_2000.txt").read_text().count("total (phases 1-9)") == 1
