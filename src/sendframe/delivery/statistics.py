"""The statistics of a comparison beyond two rates: means, ratios to a known cost, many tests, the split.

Pure functions over numbers and arrays; :func:`~sendframe.delivery.experiments.compare_variants` calls
them. Each uses scipy or statsmodels where they have the method; what they lack is written here once,
with its reference. Both are imported by the functions that use them: together they take about 85 MiB of the
kernel, which a delivery summary (its Wilson intervals) does not need.

- :func:`wilson_intervals`: the Wilson score interval of many rates at once (Wilson 1927; the formula of
  statsmodels' ``proportion_confint(method="wilson")``, which the tests check it against, without loading it).
- :func:`mean_interval`, :func:`welch_comparison`: a mean per recipient (revenue) with its Student t
  interval, and the difference of two means with Welch's interval and test (unequal variances; Welch
  1947), scipy's ``ttest_ind(equal_var=False)``.
- :func:`capped`: values capped at a pooled percentile, the same cap for every group (winsorising
  the top, so one huge order cannot decide a test; the cap is chosen blind to the groups).
- :func:`per_known_cost`: an interval for ``cost / x`` or ``x / cost`` when the cost is known.
- :func:`adjusted_p_values`: Holm or Benjamini-Hochberg (statsmodels' ``multipletests``).
- :func:`sample_ratio_p_value`: the chi-square test of the counts per variant against their weights.
- :func:`sequential_half_width`, :func:`anytime_p_value`: the asymptotic confidence sequence and its
  p-value, valid at every look (neither library has them; written here from the papers).

    >>> [round(v, 3) for v in welch_comparison([2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0])[:2]]
    [2.5, 0.152]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist

import numpy as np

from sendframe.errors import InputError

__all__ = ["CORRECTIONS", "SEQUENTIAL", "SEQUENTIAL_TUNING", "WELCH", "adjusted_p_values", "anytime_p_value",
           "capped", "mean_interval", "per_known_cost", "sample_ratio_p_value", "sequential_half_width",
           "welch_comparison", "wilson_intervals"]

WELCH = "Welch's t-test"
SEQUENTIAL = "asymptotic confidence sequence (anytime-valid)"
SEQUENTIAL_TUNING = 5000  # the recipients at which the sequence is tightest (GrowthBook's default too)
# the name an analyst passes -> (statsmodels' method, the name the table shows)
CORRECTIONS: dict[str, tuple[str, str]] = {
    "holm": ("holm", "Holm"),
    "benjamini-hochberg": ("fdr_bh", "Benjamini-Hochberg"),
}


def wilson_intervals(successes: Sequence[float] | np.ndarray, n: Sequence[float] | np.ndarray,
                     alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of each ``successes / n`` at confidence ``1 - alpha`` (NaN where ``n`` is 0).

        >>> low, high = wilson_intervals([45, 0], [100, 0])
        >>> low.round(4).tolist(), high.round(4).tolist()
        ([0.3561, nan], [0.5476, nan])
    """
    x, size = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        share, spread = x / size, z * z / size
        center = (share + spread / 2) / (1 + spread)
        half = z * np.sqrt(share * (1 - share) / size + spread / size / 4) / (1 + spread)
    known = size > 0
    return np.where(known, center - half, np.nan), np.where(known, center + half, np.nan)


def mean_interval(values: Sequence[float] | np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The Student t interval of the mean of ``values`` (NaNs with fewer than two values).

        >>> [round(x, 3) for x in mean_interval([1.0, 2.0, 3.0, 4.0])]
        [0.446, 4.554]
    """
    array = np.asarray(values, dtype=float)
    if len(array) < 2:
        return (math.nan, math.nan)
    if np.ptp(array) == 0:
        return (float(array[0]), float(array[0]))
    from statsmodels.stats.weightstats import DescrStatsW  # noqa: PLC0415  loaded when used: see the module's docstring

    low, high = DescrStatsW(array).tconfint_mean(alpha=alpha)
    return (float(low), float(high))


def welch_comparison(treated: Sequence[float] | np.ndarray, control: Sequence[float] | np.ndarray,
                     alpha: float = 0.05) -> tuple[float, float, float, float]:
    """(difference of the means, two-sided p-value, interval low, interval high) by Welch's t-test.

    NaNs when a group has fewer than two values; when both groups are constant the difference is
    exact (interval of width 0, p-value 1 if equal, 0 if not).

        >>> d, p, low, high = welch_comparison([2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0])
        >>> round(d, 3), round(low, 3), round(high, 3)
        (2.5, -1.364, 6.364)
    """
    a, b = np.asarray(treated, dtype=float), np.asarray(control, dtype=float)
    if len(a) < 2 or len(b) < 2:
        return (math.nan, math.nan, math.nan, math.nan)
    difference = float(a.mean() - b.mean())
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return (difference, 1.0 if difference == 0 else 0.0, difference, difference)
    from scipy.stats import ttest_ind  # noqa: PLC0415  loaded when used: see the module's docstring

    result = ttest_ind(a, b, equal_var=False)
    interval = result.confidence_interval(confidence_level=1 - alpha)
    return (difference, float(result.pvalue), float(interval.low), float(interval.high))


def capped(values: np.ndarray, cap: float) -> tuple[np.ndarray, float]:
    """(``values`` capped at their ``cap`` quantile, the cap): pass every group's values together.

        >>> values, top = capped(np.array([1.0, 2.0, 3.0, 4.0, 100.0]), 0.75)
        >>> values.tolist(), top
        ([1.0, 2.0, 3.0, 4.0, 4.0], 4.0)
    """
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 0 < cap < 1:
        raise InputError(f"cap is the pooled quantile to cap values at, between 0 and 1 (0.99 caps at the 99th "
                         f"percentile); got {cap!r}.")
    if not len(values):
        return values, math.nan
    top = float(np.quantile(values, cap))
    return np.minimum(values, top), top


def per_known_cost(cost: float, estimate: float, low: float, high: float, *,
                   inverse: bool) -> tuple[float, float, float]:
    """(ratio, low, high) of ``cost / x`` (``inverse=True``) or ``x / cost``, ``x`` estimated in [low, high].

    The cost is known (billed), not estimated, so the interval is the image of ``x``'s interval under
    the ratio's monotone map: Fieller's interval for a ratio reduces to this when one side has no
    variance, and unlike the delta method it stays right when ``x`` is near zero. ``cost / x`` needs
    ``x > 0``: its point is NaN when ``x <= 0``; its upper bound is ``inf`` when ``x``'s interval
    reaches 0 (the data allow no extra conversion at all), and both bounds NaN when it lies below 0.

        >>> per_known_cost(100.0, 20.0, 10.0, 40.0, inverse=True)
        (5.0, 2.5, 10.0)
        >>> per_known_cost(100.0, 20.0, -5.0, 40.0, inverse=True)
        (5.0, 2.5, inf)
        >>> per_known_cost(100.0, 250.0, 50.0, 450.0, inverse=False)
        (2.5, 0.5, 4.5)
    """
    if not cost > 0 or math.isnan(estimate):
        return (math.nan, math.nan, math.nan)
    if not inverse:
        return (estimate / cost, low / cost, high / cost)
    point = cost / estimate if estimate > 0 else math.nan
    if not high > 0:
        return (point, math.nan, math.nan)
    return (point, cost / high, cost / low if low > 0 else math.inf)


def adjusted_p_values(p_values: Sequence[float] | np.ndarray, correction: str = "holm") -> np.ndarray:
    """``p_values`` adjusted for being tested together (NaNs stay NaN and do not count as tests).

    ``correction``: ``"holm"`` (controls the chance of any false positive, Holm 1979) or
    ``"benjamini-hochberg"`` (controls the expected share of false positives among the positives,
    Benjamini and Hochberg 1995).

        >>> adjusted_p_values([0.01, 0.04, 0.03]).round(3).tolist()
        [0.03, 0.06, 0.06]
        >>> adjusted_p_values([0.01, 0.04, 0.03], "benjamini-hochberg").round(3).tolist()
        [0.03, 0.04, 0.04]
    """
    if correction not in CORRECTIONS:
        raise InputError(f"correction={correction!r} is not one of {list(CORRECTIONS)}.")
    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), np.nan)
    tested = ~np.isnan(p)
    if tested.sum() == 1:  # one test needs no adjustment (and statsmodels' Holm runs gc.collect on every call)
        out[tested] = p[tested]
    elif tested.any():
        from statsmodels.stats.multitest import multipletests  # noqa: PLC0415  loaded when used: see the module's docstring

        out[tested] = multipletests(p[tested], method=CORRECTIONS[correction][0])[1]
    return out


def sample_ratio_p_value(counts: Mapping[str, int], weights: Mapping[str, float]) -> float:
    """The chi-square p-value of the counts per variant against the shares their weights give.

    A variant with a weight of 0 holding anyone, or a variant with no weight, makes the split
    impossible (p-value 0). Variants are named by their text.

        >>> round(sample_ratio_p_value({"A": 500, "B": 500}, {"A": 1, "B": 1}), 3)
        1.0
        >>> sample_ratio_p_value({"A": 560, "B": 440}, {"A": 0.5, "B": 0.5}) < 0.001
        True
    """
    shares = {str(name): float(weight) for name, weight in weights.items()}
    total_weight = sum(shares.values())
    if total_weight <= 0:
        raise InputError(f"The variant weights must add up to more than 0; got {dict(weights)}.")
    observed = {str(name): int(count) for name, count in counts.items()}
    if any(count and shares.get(name, 0.0) == 0 for name, count in observed.items()):
        return 0.0
    names = [name for name, weight in shares.items() if weight > 0]
    seen = np.array([observed.get(name, 0) for name in names], dtype=float)
    if seen.sum() == 0 or len(names) < 2:
        return math.nan
    expected = np.array([shares[name] for name in names]) / sum(shares[name] for name in names) * seen.sum()
    from scipy.stats import chisquare  # noqa: PLC0415  loaded when used: see the module's docstring

    return float(chisquare(seen, expected).pvalue)


def _mixture_scale(n: np.ndarray | float, alpha: float, tuning: int) -> np.ndarray:
    """a = n rho^2, with rho^2 chosen so that the sequence is tightest when n reaches ``tuning``."""
    log_alpha = -2 * math.log(alpha)
    return np.asarray(n, dtype=float) * (log_alpha + math.log(log_alpha + 1)) / tuning


def sequential_half_width(variance: np.ndarray | float, n: np.ndarray | float, alpha: float = 0.05,
                          tuning: int = SEQUENTIAL_TUNING) -> np.ndarray:
    """Half-width of the asymptotic confidence sequence for an estimate of ``variance`` after ``n`` units.

    Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas (2021), "Time-uniform central limit theory and
    asymptotic confidence sequences", Theorem 2.2, with the normal-mixture boundary of Howard,
    Ramdas, McAuliffe and Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic confidence
    sequences", Ann. Statist. 49(2), eq. (14): with ``a = n rho^2``,
    ``estimate ± sqrt(2 variance (a + 1) / a * log(sqrt(a + 1) / alpha))``. ``variance`` is the
    estimate's (the standard error squared) and ``n`` the units it rests on; ``rho`` is fixed in advance
    by ``tuning`` (the sequence is tightest near ``tuning`` units), never by the data, so the
    sequence covers the truth at every ``n`` at once with probability about ``1 - alpha``: an analyst
    may look after every batch and stop when it excludes 0. The price is width: at ``tuning`` units
    it is about 1.4 to 1.8 times a fixed-sample interval's.

        >>> round(float(sequential_half_width(0.0001, 5000)), 4)  # a fixed-sample 95% interval: ± 0.0196
        0.0304
    """
    a = _mixture_scale(n, alpha, tuning)
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.sqrt(2 * np.asarray(variance, dtype=float) * (a + 1) / a * np.log(np.sqrt(a + 1) / alpha))
    return np.asarray(half, dtype=float)


def anytime_p_value(estimate: np.ndarray | float, variance: np.ndarray | float, n: np.ndarray | float,
                    alpha: float = 0.05, tuning: int = SEQUENTIAL_TUNING) -> np.ndarray:
    """The p-value that goes with :func:`sequential_half_width`: below ``alpha`` exactly when the sequence excludes 0.

    It is 1 over the normal-mixture martingale, ``sqrt(a + 1) * exp(-estimate^2 a / (2 variance (a + 1)))``
    capped at 1 (Howard et al. 2021): by Ville's inequality the chance that it ever falls below
    ``alpha`` under no difference is at most ``alpha``, however often it is read. ``rho`` is the one the
    interval at ``alpha`` uses.

        >>> round(float(anytime_p_value(sequential_half_width(0.0001, 5000), 0.0001, 5000)), 6)
        0.05
    """
    a = _mixture_scale(n, alpha, tuning)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = np.sqrt(a + 1) * np.exp(-np.square(estimate) * a / (2 * np.asarray(variance, dtype=float) * (a + 1)))
    return np.asarray(np.minimum(value, 1.0), dtype=float)
