"""Validation by simulation of compare_variants' statistics (issue 20, "What done looks like").

    python benchmarks/validate_statistics.py            # the full runs: 10,000 / 2,000 / 2,000 simulations
    python benchmarks/validate_statistics.py --quick    # a tenth of each, smoke run

(a) Peeking. 10,000 A/A tests (5% conversion in both groups), each looked at after every one of 30 batches
    of 200 recipients per group. A test is a false positive when any look says p < 0.05. The sequential
    mode's anytime-valid p-value (sendframe.delivery.statistics.anytime_p_value, what
    compare_variants(sequential=True) reports) against the fixed-sample two-proportion z-test read at
    every look, in the same run on the same data. Goal: sequential at most 0.05 plus simulation error
    (2 standard errors), fixed far above it. The looks are computed as arrays (300,000 of them); a sample
    of the final looks is checked against compare_variants itself.
(b) Coverage. 2,000 campaigns of 5,000 recipients in a variant and 5,000 in the holdout, conversion 5% vs
    6%, each conversion an order of lognormal value (median 30) of which 1% are ten times larger: the
    true incremental conversions and revenue are known. Goal: the 95% intervals of compare_variants
    (``incremental_low`` .. ``incremental_high``, Newcombe for conversions, Welch for revenue) cover them
    at least 94% of the time.
(c) Family-wise error. 2,000 campaigns of 4 variants and a control, 2,000 recipients each, all converting at
    10%. Goal: the chance that any Holm-adjusted p-value of compare_variants is below 0.05 is at most
    0.05 (plus simulation error); the unadjusted p-values are shown beside it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from sendframe.delivery.experiments import compare_variants
from sendframe.delivery.statistics import anytime_p_value

ALPHA = 0.05


def margin(rate: float, runs: int) -> float:
    """Two standard errors of a simulated rate: the slack a goal of ``rate`` is allowed."""
    return 2 * math.sqrt(rate * (1 - rate) / runs)


def verdict(ok: bool) -> str:
    return "goal met" if ok else "GOAL MISSED"


def peeking(runs: int, rng: np.random.Generator, looks: int = 30, batch: int = 200, rate: float = 0.05) -> bool:
    a = rng.binomial(batch, rate, (runs, looks)).cumsum(axis=1)
    b = rng.binomial(batch, rate, (runs, looks)).cumsum(axis=1)
    n = batch * np.arange(1, looks + 1)
    pa, pb = a / n, b / n
    pooled = (a + b) / (2 * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (pb - pa) / np.sqrt(pooled * (1 - pooled) * 2 / n)
    fixed = np.nan_to_num(2 * stats.norm.sf(np.abs(z)), nan=1.0)
    sequential = anytime_p_value(pb - pa, pa * (1 - pa) / n + pb * (1 - pb) / n, 2 * n, ALPHA)
    fixed_rate = float((fixed < ALPHA).any(axis=1).mean())
    sequential_rate = float((sequential < ALPHA).any(axis=1).mean())
    # the arrays are what compare_variants(sequential=True) reports: check the last look of a few tests
    total = batch * looks
    for run in range(min(20, runs)):
        frame = pd.DataFrame({"variant": ["A"] * total + ["B"] * total,
                              "converted": np.r_[np.arange(total) < a[run, -1], np.arange(total) < b[run, -1]]})
        reported = compare_variants(frame, "converted", sequential=True).iloc[1]["p_value"]
        assert math.isclose(reported, sequential[run, -1], rel_tol=1e-9, abs_tol=1e-12), (run, reported)
    print(f"(a) {runs:,} A/A tests x {looks} looks of {batch} per group: share with p < {ALPHA} at some look")
    print(f"    fixed-sample z-test read at every look: {fixed_rate:.4f}")
    print(f"    sequential (anytime-valid):             {sequential_rate:.4f}  "
          f"(goal <= {ALPHA} + {margin(ALPHA, runs):.4f}: {verdict(sequential_rate <= ALPHA + margin(ALPHA, runs))})")
    return sequential_rate <= ALPHA + margin(ALPHA, runs) and fixed_rate > 2 * ALPHA


def coverage(runs: int, rng: np.random.Generator, n: int = 5000, rates: tuple[float, float] = (0.05, 0.06)) -> bool:
    median, sigma, big_share, big_factor = 30.0, 1.0, 0.01, 10.0
    mean_order = median * math.exp(sigma ** 2 / 2) * (1 + big_share * (big_factor - 1))
    true_conversions = n * (rates[1] - rates[0])
    true_revenue = n * (rates[1] - rates[0]) * mean_order
    variant = np.array(["holdout"] * n + ["A"] * n)
    covered = {"converted": 0, "revenue": 0}
    truth = {"converted": true_conversions, "revenue": true_revenue}
    for _ in range(runs):
        converted = np.r_[rng.random(n) < rates[0], rng.random(n) < rates[1]]
        orders = median * rng.lognormal(0.0, sigma, 2 * n) * np.where(rng.random(2 * n) < big_share, big_factor, 1.0)
        frame = pd.DataFrame({"variant": variant, "converted": converted, "revenue": np.where(converted, orders, 0.0)})
        for metric in covered:
            row = compare_variants(frame, metric, control="holdout").set_index("variant").loc["A"]
            covered[metric] += row["incremental_low"] <= truth[metric] <= row["incremental_high"]
    print(f"(b) {runs:,} campaigns of {n:,} + {n:,} (holdout), conversion {rates[0]:.0%} -> {rates[1]:.0%}, "
          f"lognormal orders with {big_share:.0%} x{big_factor:g}: 95% interval covers the true lift")
    ok = True
    for metric, hits in covered.items():
        share = hits / runs
        ok &= share >= 0.94
        print(f"    incremental {metric:<9} (true {truth[metric]:,.1f}): {share:.4f}  "
              f"(goal >= 0.94: {verdict(share >= 0.94)})")
    return ok


def family_wise(runs: int, rng: np.random.Generator, n: int = 2000, rate: float = 0.10) -> bool:
    names = ["control", "A", "B", "C", "D"]
    variant = np.repeat(names, n)
    adjusted_any = unadjusted_any = 0
    for _ in range(runs):
        frame = pd.DataFrame({"variant": pd.Categorical(variant, categories=names),
                              "converted": rng.random(5 * n) < rate})
        table = compare_variants(frame, "converted", control="control")
        adjusted_any += bool((table["p_value_adjusted"] < ALPHA).any())
        unadjusted_any += bool((table["p_value"] < ALPHA).any())
    adjusted, unadjusted = adjusted_any / runs, unadjusted_any / runs
    ok = adjusted <= ALPHA + margin(ALPHA, runs)
    print(f"(c) {runs:,} campaigns, 4 variants equal to the control ({n:,} each, {rate:.0%}): "
          "share with any p < 0.05")
    print(f"    unadjusted: {unadjusted:.4f}")
    print(f"    Holm:       {adjusted:.4f}  (goal <= {ALPHA} + {margin(ALPHA, runs):.4f}: {verdict(ok)})")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each simulation (smoke run)")
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    rng = np.random.default_rng(args.seed)
    warnings.simplefilter("error")  # a warning in a simulation is a bug of the simulation
    results = []
    for name, step, runs in (("peeking", peeking, 10_000), ("coverage", coverage, 2_000),
                             ("family-wise", family_wise, 2_000)):
        started = time.perf_counter()
        results.append(step(runs // scale, rng))
        print(f"    [{name}: {time.perf_counter() - started:.1f} s]")
    print("all goals met" if all(results) else "SOME GOALS MISSED")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
