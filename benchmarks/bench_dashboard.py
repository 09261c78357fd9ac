"""Dashboard of a 1,000,000-recipient campaign: build every chart and write report.html, against the pre-change charts.

    python benchmarks/bench_dashboard.py             # 1,000,000 outcome rows
    python benchmarks/bench_dashboard.py --quick     # 100,000 rows, smoke run
    python benchmarks/bench_dashboard.py --rows 2000000 --repeat 3

What it measures: ``charts.dashboard(outcomes)`` (every chart, each aggregating its rows first) and
``Dashboard.write_html`` (one file, plotly.js and the map inlined), timed together as a user runs
them, on a frame shaped like ``message_outcomes`` returns (``outcomes_data.py``: ~45 countries,
unique ids and recipients, skipped and held-out rows, log-normal delivery times). Building the frame
is not timed. Prints time, report size and points per figure (the longest data array of each trace,
summed); the goal (issue 12) is at most 10 s and 8 MB for 1M rows.

The baseline is the charts as they were before they aggregated (``--before``, default commit
2e6fea1: an ECDF with one point per delivered message, one bar per country and operator), read from
git and run in the same process on the same frame. Without git or that commit it is left out.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

from outcomes_data import realistic_outcomes
from sendframe.notebook import charts

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "2e6fea1"  # the last commit with the per-message charts


def plotted_points(fig: Any) -> int:
    """Points a figure hands to the browser: per trace, its longest data array (x, y, z or locations)."""
    total = 0
    for trace in fig.data:
        lengths = [len(v) for key in ("x", "y", "z", "locations") if (v := getattr(trace, key, None)) is not None]
        total += max(lengths, default=0)
    return total


def load_before(rev: str) -> types.ModuleType | None:
    """The charts module of ``rev`` (with its own report module), or None when git cannot give them."""
    sources = {}
    for name in ("report", "charts"):
        done = subprocess.run(["git", "show", f"{rev}:src/sendframe/notebook/{name}.py"], cwd=ROOT,
                              capture_output=True, text=True)
        if done.returncode != 0:
            return None
        sources[name] = done.stdout.replace("sendframe.notebook.report", "bench_before_report")
    modules = {}
    for name in ("report", "charts"):
        module = types.ModuleType(f"bench_before_{name}")
        sys.modules[module.__name__] = module
        exec(compile(sources[name], f"{rev}:{name}.py", "exec"), module.__dict__)  # noqa: S102 - our own file from git
        modules[name] = module
    return modules["charts"]


def run_once(module: Any, outcomes: Any, folder: Path, label: str) -> dict[str, Any]:
    path = folder / f"report-{label}.html"
    start = time.perf_counter()
    board = module.dashboard(outcomes)
    built = time.perf_counter()
    board.write_html(str(path))
    done = time.perf_counter()
    return {"build": built - start, "write": done - built, "total": done - start, "bytes": path.stat().st_size,
            "points": {name: plotted_points(fig) for name, fig in board.figures.items()}}


def measure(module: Any, outcomes: Any, folder: Path, label: str, repeat: int) -> dict[str, Any]:
    runs = [run_once(module, outcomes, folder, label) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["total"])
    return {**best, "median_total": statistics.median(r["total"] for r in runs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 rows (smoke run)")
    parser.add_argument("--rows", type=int, default=None, help="outcome rows (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the fastest and the median are shown")
    parser.add_argument("--before", default=BEFORE, help="git revision of the baseline charts ('' leaves it out)")
    args = parser.parse_args(argv)
    rows = args.rows or (100_000 if args.quick else 1_000_000)

    start = time.perf_counter()
    outcomes = realistic_outcomes(rows, extras=True)
    print(f"dashboard of {rows:,} outcome rows ({outcomes['country'].nunique()} countries, "
          f"{int((outcomes['status'] == 'DELIVRD').sum()):,} delivered); "
          f"frame built in {time.perf_counter() - start:.1f} s (not timed)")
    start = time.perf_counter()
    charts.dashboard(outcomes.head(1000)).to_html()  # plotly's modules load on first use: once, before either is timed
    print(f"warm-up (plotly loads its modules): {time.perf_counter() - start:.2f} s "
          "(once per process, not timed below)")
    before = load_before(args.before) if args.before else None
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        if before is not None:
            label = f"before ({args.before}, one point per message)"
            results[label] = measure(before, outcomes, Path(tmp), "before", args.repeat)
        else:
            print(f"baseline left out: git cannot show {args.before!r}")
        results["sendframe (aggregated)"] = measure(charts, outcomes, Path(tmp), "after", args.repeat)

    print(f"\n{'':38} {'build s':>8} {'write s':>8} {'total s':>8} {'median s':>9} {'report MB':>10} {'points':>9}")
    for label, r in results.items():
        print(f"{label:38} {r['build']:8.2f} {r['write']:8.2f} {r['total']:8.2f} {r['median_total']:9.2f} "
              f"{r['bytes'] / 1e6:10.2f} {sum(r['points'].values()):9,}")
    after = results["sendframe (aggregated)"]
    print("\npoints per figure (sendframe): " + ", ".join(f"{k} {v:,}" for k, v in after["points"].items()))
    if before is not None:
        base = results[next(iter(results))]
        print(f"ratio (before / sendframe): time {base['total'] / after['total']:.1f}x, "
              f"size {base['bytes'] / after['bytes']:.1f}x, "
              f"points {sum(base['points'].values()) / sum(after['points'].values()):.0f}x")
    goal = after["total"] <= 10 and after["bytes"] <= 8_000_000
    print(f"goal (<= 10 s and <= 8 MB at 1M rows): {'met' if goal else 'NOT met'} at {rows:,} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
