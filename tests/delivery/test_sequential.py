"""compare_variants(sequential=True): the asymptotic confidence sequence by its formula, and peeking made safe."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sendframe.delivery.experiments import compare_variants
from sendframe.delivery.statistics import SEQUENTIAL, anytime_p_value, sequential_half_width
from tests.delivery.test_experiments import frame_of


def half_width_by_hand(variance: float, n: int, alpha: float = 0.05, tuning: int = 5000) -> float:
    """Waudby-Smith et al. (2021) Thm 2.2: sqrt(2 V (a + 1) / a * log(sqrt(a + 1) / alpha)), a = n rho²,
    rho² = (-2 log alpha + log(-2 log alpha + 1)) / tuning."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuning
    a = n * rho2
    return math.sqrt(2 * variance * (a + 1) / a * math.log(math.sqrt(a + 1) / alpha))


def test_the_sequential_difference_interval_and_p_value_follow_the_formula():
    table = compare_variants(frame_of({"A": (300, 1000), "B": (240, 1000)}), "converted", sequential=True)
    row = table.set_index("variant").loc["B"]
    variance = 0.3 * 0.7 / 1000 + 0.24 * 0.76 / 1000  # unpooled
    half = half_width_by_hand(variance, 2000)
    assert row["test"] == SEQUENTIAL
    assert (row["difference_low"], row["difference_high"]) == pytest.approx((-0.06 - half, -0.06 + half))
    # the p-value is 1 / the mixture martingale: at the interval's edge it is alpha exactly
    a = 2000 * (-2 * math.log(0.05) + math.log(-2 * math.log(0.05) + 1)) / 5000
    martingale = math.exp(0.06 ** 2 * a / (2 * variance * (a + 1))) / math.sqrt(a + 1)
    assert row["p_value"] == pytest.approx(min(1.0, 1 / martingale))
    assert float(anytime_p_value(half, variance, 2000)) == pytest.approx(0.05)
    # the control's own rate: its sequence, clipped to [0, 1]
    control = table.set_index("variant").loc["A"]
    assert control["rate_low"] == pytest.approx(0.3 - half_width_by_hand(0.21 / 1000, 1000))
    assert table.attrs["sequential"] is True


def test_it_is_wider_than_the_fixed_sample_interval_and_agrees_with_its_p_value():
    frame = frame_of({"A": (300, 1000), "B": (250, 1000)})
    fixed = compare_variants(frame, "converted").set_index("variant").loc["B"]
    watched = compare_variants(frame, "converted", sequential=True).set_index("variant").loc["B"]
    width = watched["difference_high"] - watched["difference_low"]
    assert width > 1.3 * (fixed["difference_high"] - fixed["difference_low"])
    assert watched["p_value"] > fixed["p_value"]
    for counts in ({"A": (300, 1000), "B": (240, 1000)}, {"A": (300, 1000), "B": (270, 1000)}):
        row = compare_variants(frame_of(counts), "converted", sequential=True).iloc[1]
        assert (row["p_value"] < 0.05) == (row["difference_high"] < 0 or row["difference_low"] > 0)


def test_revenue_and_the_holdout_lift_get_sequences_too():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"variant": ["A"] * 500 + ["holdout"] * 500, "revenue": rng.lognormal(2, 1, 1000)})
    table = compare_variants(frame, "revenue", sequential=True).set_index("variant")
    a, h = frame[frame["variant"] == "A"]["revenue"], frame[frame["variant"] == "holdout"]["revenue"]
    variance = a.var(ddof=1) / 500 + h.var(ddof=1) / 500
    half = half_width_by_hand(variance, 1000)
    assert table.loc["A", "difference_high"] - table.loc["A", "difference"] == pytest.approx(half)
    assert table.loc["A", "incremental_high"] == pytest.approx(500 * table.loc["A", "difference_high"])


def test_peeking_thirty_times_at_an_a_a_test_keeps_false_positives_under_alpha():
    # 2,000 A/A tests (10% conversion each side), a look after each of 30 batches of 100 per group: the fixed
    # z-test read at every look says "significant" far more often than 5%; the sequence does not
    rng = np.random.default_rng(2026)
    sims, looks, batch = 2000, 30, 100
    a = rng.binomial(batch, 0.1, (sims, looks)).cumsum(axis=1)
    b = rng.binomial(batch, 0.1, (sims, looks)).cumsum(axis=1)
    n = batch * np.arange(1, looks + 1)
    pa, pb = a / n, b / n
    variance = pa * (1 - pa) / n + pb * (1 - pb) / n
    pooled = (a + b) / (2 * n)
    z = (pa - pb) / np.sqrt(pooled * (1 - pooled) * 2 / n)
    fixed_ever = (2 * stats.norm.sf(np.abs(z)) < 0.05).any(axis=1).mean()
    sequential_ever = (anytime_p_value(pa - pb, variance, 2 * n) < 0.05).any(axis=1).mean()
    assert fixed_ever > 0.15
    assert sequential_ever <= 0.05
    # the library's half-width and p-value say the same thing at every look
    inside = np.abs(pa - pb) < sequential_half_width(variance, 2 * n)
    assert ((anytime_p_value(pa - pb, variance, 2 * n) >= 0.05) == inside).mean() > 0.999
