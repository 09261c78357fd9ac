"""Comparing variants honestly: each rate or mean with its interval, each difference with its interval and test.

One row per variant of :func:`compare_variants`. The methods, from scipy and statsmodels:

- **A rate** (``delivered``, ``clicked``, ``converted``): Wilson score interval; the difference from
  the control with Newcombe's hybrid score interval (the two Wilson intervals combined, Newcombe 1998,
  method 10), and a two-sided p-value: the pooled two-proportion z-test, or Fisher's exact test when
  any expected cell of the 2x2 table is below 5 (the z-test's normal approximation is poor there).
- **A mean per recipient** (``revenue``): the Student t interval of each mean; the difference with
  Welch's interval and t-test (no equal variances assumed). Revenue is heavy-tailed (a few very large
  orders); Welch's test stays valid for means by the central limit theorem at campaign sizes, and
  ``cap=`` caps every value at a quantile of all groups pooled (winsorising, chosen blind to the
  groups, the same cap for each) when one order should not decide the test.
- **Several variants against one control**: ``p_value_adjusted`` by Holm's step-down method
  (family-wise error) or, on request, Benjamini-Hochberg (false discovery rate); ``correction`` says
  which. The intervals are not adjusted.
- **Against the holdout** (never sent): incremental conversions or revenue, and with the campaign's
  cost, cost per incremental conversion or return per unit spent (see
  :func:`~sendframe.delivery.statistics.per_known_cost` for why that interval is exact given the
  difference's).
- **Watching while it runs** (``sequential=True``): the asymptotic confidence sequence of
  Waudby-Smith et al. (2021) with the normal-mixture boundary of Howard et al. (2021), for each rate
  or mean and each difference (unpooled variance), and its anytime-valid p-value.
- **The split**: the counts per variant against the weights they were assigned with (chi-square),
  ``attrs["sample_ratio_p_value"]``, a :class:`~sendframe.errors.SendframeWarning` below 0.001.

The ``test`` column says which test gave each p-value.

Every rate names its denominator (column ``denominator``):

- ``delivered``, ``clicked``: over the messages the service accepted (outcome ``accepted``).
  Messages still pending count as not delivered / not clicked, so read them once callbacks are in.
- ``delivered_then_clicked``: clicked over the messages delivered (click-through of what arrived).
- any other column (``converted``, ``revenue``, ...): over every recipient of the variant with a
  value, holdout included: the holdout is then a valid control (the lift of sending at all).

A holdout group is never sent, so it has no delivered or clicked rate: for those metrics its row is
kept with its size, no rate and a note, and it cannot be the control.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"variant": ["A"] * 100 + ["B"] * 100,
    ...                       "converted": [True] * 30 + [False] * 70 + [True] * 45 + [False] * 55})
    >>> table = compare_variants(frame, "converted")
    >>> table[["variant", "rate", "difference", "test"]].round(3).to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'variant': ['A', 'B'], 'rate': [0.3, 0.45], 'difference': [0.0, 0.15],
     'test': ['control', 'two-proportion z-test']}
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportions_ztest,
)

from sendframe.api.wire import user_stacklevel
from sendframe.delivery.lift import add_incremental, variant_costs
from sendframe.delivery.outcomes import VARIANTS_ATTR
from sendframe.delivery.statistics import (
    CORRECTIONS,
    SEQUENTIAL,
    SEQUENTIAL_TUNING,
    WELCH,
    adjusted_p_values,
    anytime_p_value,
    capped,
    mean_interval,
    sample_ratio_p_value,
    sequential_half_width,
    welch_comparison,
    wilson_intervals,
)
from sendframe.errors import InputError, SendframeWarning
from sendframe.options import keyword_checked

__all__ = ["COMPARISON_COLUMNS", "SEND_METRICS", "compare_variants", "difference_interval", "two_proportion_test",
           "wilson_interval"]

COMPARISON_COLUMNS: tuple[str, ...] = (
    "variant", "recipients", "successes", "rate", "rate_low", "rate_high", "difference", "difference_low",
    "difference_high", "p_value", "test", "denominator", "note", "p_value_adjusted", "correction",
)
SAMPLE_RATIO_ALARM = 0.001  # the threshold experimentation platforms flag a sample-ratio mismatch at

# metrics measured on messages sent: a holdout (nothing sent) has none of them
SEND_METRICS: dict[str, str] = {
    "delivered": "messages accepted by the service",
    "clicked": "messages accepted by the service",
    "delivered_then_clicked": "messages delivered",
}
Z_TEST = "two-proportion z-test"
FISHER = "Fisher's exact test (an expected count < 5)"
SMALLEST_EXPECTED_COUNT = 5
ONE_SIDED_FISHER = {"two-sided": "two-sided", "smaller": "less", "larger": "greater"}  # statsmodels' -> scipy's


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n`` at confidence ``1 - alpha`` (NaNs when n is 0).

        >>> [round(x, 4) for x in wilson_interval(45, 100)]
        [0.3561, 0.5476]
    """
    low, high = wilson_intervals([successes], [n], alpha)
    return (float(low[0]), float(high[0]))


def difference_interval(x1: int, n1: int, x2: int, n2: int, alpha: float = 0.05) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``x1/n1 - x2/n2`` (NaNs when a group is empty).

        >>> [round(x, 4) for x in difference_interval(45, 100, 30, 100)]
        [0.0159, 0.2768]
    """
    if n1 == 0 or n2 == 0:
        return (math.nan, math.nan)
    low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=alpha)
    return (float(low), float(high))


def two_proportion_test(x1: int, n1: int, x2: int, n2: int, alternative: str = "two-sided") -> tuple[float, str]:
    """(p-value, name of the test) for ``x1/n1`` against ``x2/n2``.

    The pooled z-test, unless an expected cell count of the 2x2 table (under the pooled rate) is
    below 5: then Fisher's exact test. ``alternative``: ``"two-sided"``, or ``"smaller"`` (is
    ``x1/n1`` below ``x2/n2``?) or ``"larger"``, one-sided.

        >>> p, test = two_proportion_test(45, 100, 30, 100); round(p, 4), test
        (0.0285, 'two-proportion z-test')
        >>> p, test = two_proportion_test(3, 4, 1, 4); round(p, 4), test
        (0.4857, "Fisher's exact test (an expected count < 5)")
        >>> round(two_proportion_test(30, 100, 45, 100, alternative="smaller")[0], 4)
        0.0142
    """
    if alternative not in ONE_SIDED_FISHER:
        raise InputError(f"alternative={alternative!r} is not one of {list(ONE_SIDED_FISHER)}.")
    if n1 == 0 or n2 == 0:
        return (math.nan, "no recipients")
    pooled = (x1 + x2) / (n1 + n2)
    expected = min(n1 * pooled, n1 * (1 - pooled), n2 * pooled, n2 * (1 - pooled))
    if expected < SMALLEST_EXPECTED_COUNT:
        result = fisher_exact([[x1, n1 - x1], [x2, n2 - x2]], alternative=ONE_SIDED_FISHER[alternative])
        return (float(result.pvalue), FISHER)
    _, p_value = proportions_ztest([x1, x2], [n1, n2], alternative=alternative)
    return (float(p_value), Z_TEST)


def _as_flags(values: pd.Series, name: str) -> pd.Series:
    """A ``boolean`` Series of a column of True/False (or 1/0), missing kept; anything else is refused."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.astype("boolean")
    present = values.dropna()
    if pd.api.types.is_numeric_dtype(values.dtype) and present.isin([0, 1]).all():
        return values.astype("Float64").astype("boolean")
    if values.dtype == object and present.map(lambda v: isinstance(v, (bool, np.bool_))).all():
        return values.astype("boolean")
    bad = present[~present.isin([True, False, 0, 1])]
    example = f" (row {bad.index[0]!r} has {bad.iloc[0]!r})" if len(bad) else ""
    raise InputError(f"The column {name!r} must hold True/False (or 1/0) per recipient to be compared{example}.")


def _metric(frame: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series, str]:
    """(success flags, population mask, denominator) of ``metric`` on ``frame``."""
    is_outcomes = "outcome" in frame and "status" in frame
    if metric in SEND_METRICS:
        delivered = None
        if "delivered" in frame:
            delivered = _as_flags(frame["delivered"], "delivered")
        elif "status" in frame:
            delivered = pd.Series(frame["status"].astype("string").eq("DELIVRD").fillna(False), dtype="boolean")
        source = "clicked" if metric == "delivered_then_clicked" and metric not in frame else metric
        if source in frame:
            success = _as_flags(frame[source], source)
        elif source == "delivered" and delivered is not None:
            success = delivered
        else:
            derive = " (or a 'status' column to derive it from)" if metric == "delivered" else ""
            raise InputError(f"compare_variants(metric={metric!r}) needs a column {metric!r}{derive}; "
                             f"the frame has: {', '.join(map(str, frame.columns))}.")
        if is_outcomes:
            population = frame["outcome"].astype("string").eq("accepted").fillna(False)
            denominator = SEND_METRICS[metric]
        else:
            population = success.notna()
            denominator = f"rows with a value of {source!r}"
        if metric == "delivered_then_clicked":
            if delivered is None:
                raise InputError("compare_variants(metric='delivered_then_clicked') needs a 'delivered' or 'status' "
                                 "column to know which messages were delivered.")
            population = population & delivered.fillna(False)
            denominator = SEND_METRICS[metric]
        return success.fillna(False), population.astype(bool), denominator
    if metric not in frame:
        raise InputError(f"compare_variants(metric={metric!r}): the frame has no column {metric!r}; "
                         f"its columns are: {', '.join(map(str, frame.columns))}.")
    success = _as_flags(frame[metric], metric)
    return success.fillna(False), success.notna().astype(bool), f"recipients with a value of {metric!r}"


def _is_mean_metric(frame: pd.DataFrame, metric: str) -> bool:
    """``revenue``, or a numeric column that holds more than 0/1: compared by its mean per recipient."""
    if metric == "revenue":
        return True
    if metric in SEND_METRICS or metric not in frame:
        return False
    values = frame[metric]
    if pd.api.types.is_bool_dtype(values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype):
        return False
    return not values.dropna().isin([0, 1]).all()


def _mean_values(frame: pd.DataFrame, metric: str) -> np.ndarray:
    if metric not in frame:
        hint = " (sendframe.conversions(..., value=...) adds it)" if metric == "revenue" else ""
        raise InputError(f"compare_variants(metric={metric!r}) needs a column {metric!r}{hint}; "
                         f"the frame has: {', '.join(map(str, frame.columns))}.")
    values = frame[metric]
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() & values.notna()
    if bad.any():
        position = int(np.argmax(bad.to_numpy()))
        raise InputError(f"The column {metric!r} must hold numbers per recipient to be compared (row "
                         f"{frame.index[position]!r} has {values.iloc[position]!r}).")
    return numbers.to_numpy(dtype=float, na_value=np.nan, copy=True)  # capped in place later


def _variants_in_order(labels: pd.Series) -> list[str]:
    if isinstance(labels.dtype, pd.CategoricalDtype):
        return [str(c) for c in labels.cat.categories]
    return sorted(map(str, labels.dropna().unique()))


def _assigned_weights(outcomes: pd.DataFrame, column: str,
                      weights: Mapping[str, float] | None) -> dict[str, float] | None:
    """The weights the variants were assigned with: ``weights=``, else those the frame carries."""
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise InputError(f"weights must map each variant to its weight, e.g. {{'A': 0.45, 'B': 0.45, "
                             f"'holdout': 0.1}}; got {weights!r}.")
        return dict(weights)
    assigned = outcomes.attrs.get(VARIANTS_ATTR) or {}
    carried = assigned.get("weights") if assigned.get("column", "variant") == column else None
    return dict(carried) if carried is not None else None


def _check_sample_ratio(counts: dict[str, int], weights: dict[str, float] | None) -> float:
    """The sample-ratio p-value (NaN without weights); a SendframeWarning below SAMPLE_RATIO_ALARM."""
    if weights is None:
        return math.nan
    p_value = sample_ratio_p_value(counts, weights)
    if p_value < SAMPLE_RATIO_ALARM:
        total = sum(float(w) for w in weights.values())
        expected = ", ".join(f"{name} {float(w) / total:.1%}" for name, w in weights.items())
        seen = ", ".join(f"{name} {count}" for name, count in counts.items())
        warnings.warn(f"The recipients per variant ({seen}) are not the split they were assigned with "
                      f"({expected}): chi-square p = {p_value:.2g} < {SAMPLE_RATIO_ALARM}. Every difference in "
                      "this comparison is suspect until you find what added or dropped recipients of a group "
                      "(a filter after assign_variants, a batch that failed).",
                      SendframeWarning, stacklevel=user_stacklevel())
    return p_value


def _sequential(table: pd.DataFrame, moments: dict[str, tuple[float, float, int]], control: str, alpha: float,
                tuning: int, rate: bool) -> None:
    """Replace each interval and p-value by the anytime-valid ones (statistics.sequential_half_width)."""
    _, control_variance, n_control = moments.get(control, (math.nan, math.nan, 0))
    for position, name in enumerate(table["variant"].astype(str)):
        if name not in moments or moments[name][2] == 0:
            continue
        mean, variance, n = moments[name]
        half = float(sequential_half_width(variance / n, n, alpha, tuning))
        low, high = mean - half, mean + half
        table.loc[position, ["rate_low", "rate_high"]] = (max(low, 0.0), min(high, 1.0)) if rate else (low, high)
        if name == control or not n_control:
            continue
        spread = variance / n + control_variance / n_control  # the difference's variance, unpooled
        difference = float(table["difference"].to_numpy()[position])
        half = float(sequential_half_width(spread, n + n_control, alpha, tuning))
        table.loc[position, ["difference_low", "difference_high", "p_value", "test"]] = (
            difference - half, difference + half, float(anytime_p_value(difference, spread, n + n_control, alpha,
                                                                        tuning)), SEQUENTIAL)


@keyword_checked
def compare_variants(
    outcomes: pd.DataFrame,
    metric: str = "delivered",
    control: str | None = None,
    *,
    alpha: float = 0.05,
    column: str = "variant",
    holdout: str | None = "holdout",
    cap: float | None = None,
    cost: float | Mapping[str, float] | str | None = None,
    correction: str = "holm",
    weights: Mapping[str, float] | None = None,
    sequential: bool = False,
    sequential_tuning: int = SEQUENTIAL_TUNING,
) -> pd.DataFrame:
    """One row per variant: ``metric`` per recipient with its interval, difference from ``control``, p-value.

    ``outcomes`` is the per-recipient outcome table (:func:`sendframe.outcomes`, with
    :func:`sendframe.conversions` for ``converted`` and ``revenue``) or any frame with a ``column`` of
    variants and a column named ``metric``: True/False (a rate) or numbers (``revenue``, or any numeric
    column holding more than 0/1: a mean per recipient). ``delivered`` is derived from ``status`` when
    absent, ``delivered_then_clicked`` from ``clicked`` among the delivered. Columns: ``variant``,
    ``recipients`` (the denominator's size), ``successes`` (for a mean: recipients above 0), ``rate``
    (for a mean: the mean per recipient), ``rate_low``, ``rate_high``, ``difference``,
    ``difference_low``, ``difference_high``, ``p_value``, ``test``, ``denominator``, ``note``,
    ``p_value_adjusted`` and ``correction``; intervals at confidence ``1 - alpha``. The methods are
    those of the module docstring.

    - ``control``: by default the holdout for metrics a holdout has (``converted``, ``revenue``), else
      the first variant (categorical order, else sorted). ``holdout`` names the group never sent.
    - With the holdout as control the table adds ``incremental``, ``incremental_low`` and
      ``incremental_high``: extra conversions (or revenue) the variant made by being sent, its
      per-recipient difference times its recipients. ``cost`` (a number when one variant is compared, a
      mapping per variant, or a cost column such as ``billed_cost`` summed per variant) adds ``cost`` and
      ``cost_per_incremental`` (a rate) or ``return_per_cost`` (a mean: incremental revenue per unit
      spent), each with ``_low``/``_high``.
    - ``cap``: for a mean, cap every value at this quantile of all recipients' values (``0.99``), the
      same cap for every group; ``attrs["cap"]`` holds the amount.
    - ``correction``: ``"holm"`` or ``"benjamini-hochberg"`` for ``p_value_adjusted`` when more than one
      variant is compared with the control (with one, it equals ``p_value``; ``correction`` says "none").
    - ``weights``: the split the variants were assigned with, by default the one :func:`assign_variants`
      used when the frame carries it (``attrs["sendframe.variants"]``, which :func:`sendframe.outcomes`
      keeps). The counts per variant are tested
      against it (chi-square): ``attrs["sample_ratio_p_value"]``, and a :class:`SendframeWarning` below
      0.001.
    - ``sequential=True``: every interval and p-value in the same columns is anytime-valid (an
      asymptotic confidence sequence; ``test`` says so), so the table may be read after every batch of
      callbacks and the test stopped when an interval excludes 0, without inflating false positives.
      ``sequential_tuning``: the recipients (both groups) at which the sequence is tightest; fix it
      before the test starts. See :func:`~sendframe.delivery.statistics.sequential_half_width`.

        >>> import pandas as pd
        >>> frame = pd.DataFrame({"variant": ["A"] * 4 + ["B"] * 4, "clicked": [1, 1, 1, 0, 1, 0, 0, 0]})
        >>> row = compare_variants(frame, "clicked", control="B").iloc[0]
        >>> row["variant"], float(row["rate"]), float(row["difference"]), round(float(row["p_value"]), 4), row["test"]
        ('A', 0.75, 0.5, 0.4857, "Fisher's exact test (an expected count < 5)")
        >>> spend = pd.DataFrame({"variant": ["A"] * 3 + ["holdout"] * 3, "revenue": [10.0, 0, 20, 0, 5, 0]})
        >>> table = compare_variants(spend, "revenue", cost=3.0)
        >>> table[["variant", "rate", "difference", "incremental", "return_per_cost"]].round(2).values.tolist()
        [['A', 10.0, 8.33, 25.0, 8.33], ['holdout', 1.67, 0.0, nan, nan]]
    """
    if not isinstance(outcomes, pd.DataFrame):
        raise InputError(f"compare_variants needs a pandas DataFrame, not {type(outcomes).__name__}.")
    if column not in outcomes:
        raise InputError(f"compare_variants needs a {column!r} column (assign_variants adds it; join it to the "
                         f"outcomes on the contacts' index); the frame has: {', '.join(map(str, outcomes.columns))}.")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1 (0.05 gives 95% intervals); got {alpha!r}.")
    if correction not in CORRECTIONS:
        raise InputError(f"correction={correction!r} is not one of {list(CORRECTIONS)}.")
    labels = outcomes[column]
    names = _variants_in_order(labels)
    if not names:
        raise InputError(f"The column {column!r} holds no variant.")
    mean_metric = _is_mean_metric(outcomes, metric)
    if cap is not None and not mean_metric:
        raise InputError(f"cap= caps the values of a mean (revenue); {metric!r} is a rate, which has no tail.")
    values = np.empty(0)
    if mean_metric:
        values = _mean_values(outcomes, metric)
        if len(values) and np.isnan(values).all():
            raise InputError(f"The column {metric!r} has no value in any row; for revenue, pass value= (the "
                             "orders' amount column) to sendframe.conversions.")
        population = pd.Series(~np.isnan(values), index=outcomes.index)
        success = pd.Series(values > 0, index=outcomes.index)
        denominator = f"recipients with a value of {metric!r}"
    else:
        success, population, denominator = _metric(outcomes, metric)
    sent_metric = metric in SEND_METRICS
    holdout = holdout if holdout in names else None

    if control is None:
        if holdout is not None and not sent_metric:
            control = holdout
        else:
            control = next((name for name in names if name != holdout), names[0])
    elif control not in names:
        raise InputError(f"control={control!r} is not a variant; the variants are {names}.")
    if sent_metric and control == holdout:
        raise InputError(f"The holdout {holdout!r} cannot be the control for {metric!r}: nothing is sent to it. "
                         "Pick a sent variant, or compare a metric the holdout has too (e.g. 'converted').")
    if cost is not None and (holdout is None or control != holdout):
        raise InputError("cost= prices the incremental conversions against the holdout, so the holdout must be "
                         f"the control (control={control!r}).")

    text = labels.astype("string")
    in_population: np.ndarray = population.to_numpy(dtype=bool)
    top = math.nan
    if cap is not None:  # pooled over the recipients compared: every variant's, and only theirs
        compared_rows = in_population & text.notna().to_numpy(dtype=bool)
        values[compared_rows], top = capped(values[compared_rows], cap)
    members_of: dict[str, np.ndarray] = {}
    moments: dict[str, tuple[float, float, int]] = {}  # per variant: mean, variance per recipient, recipients
    counts: dict[str, tuple[int, int, int]] = {}
    for name in names:
        members = (text == name).fillna(False).to_numpy(dtype=bool)
        counted = members & in_population
        members_of[name] = counted
        counts[name] = (int(members.sum()), int(counted.sum()), int(success.to_numpy(dtype=bool)[counted].sum()))
    _, n_control, x_control = counts[control]

    rows = []
    for name in names:
        size, n, x = counts[name]
        row: dict[str, Any] = {"variant": name, "recipients": n, "successes": x, "denominator": denominator,
                               "note": ""}
        if sent_metric and name == holdout:
            row.update(recipients=size, successes=pd.NA, rate=math.nan, rate_low=math.nan, rate_high=math.nan,
                       difference=math.nan, difference_low=math.nan, difference_high=math.nan, p_value=math.nan,
                       test="not compared",
                       note=f"holdout: no messages are sent to it, so it has no {metric} rate; "
                            "'recipients' is the size of the group")
            rows.append(row)
            continue
        if mean_metric:
            group = values[members_of[name]]
            row["rate"] = float(group.mean()) if n else math.nan
            row["rate_low"], row["rate_high"] = mean_interval(group, alpha)
            moments[name] = (row["rate"], float(group.var(ddof=1)) if n > 1 else math.nan, n)
        else:
            row["rate"] = x / n if n else math.nan
            row["rate_low"], row["rate_high"] = wilson_interval(x, n, alpha)
            moments[name] = (row["rate"], row["rate"] * (1 - row["rate"]), n)
        if name == control:
            row.update(difference=0.0 if n else math.nan, difference_low=math.nan, difference_high=math.nan,
                       p_value=math.nan, test="control")
        elif mean_metric:
            row["difference"], row["p_value"], row["difference_low"], row["difference_high"] = welch_comparison(
                values[members_of[name]], values[members_of[control]], alpha)
            row["test"] = WELCH
        else:
            row["difference"] = row["rate"] - x_control / n_control if n and n_control else math.nan
            row["difference_low"], row["difference_high"] = difference_interval(x, n, x_control, n_control, alpha)
            row["p_value"], row["test"] = two_proportion_test(x, n, x_control, n_control)
        if n == 0:
            row["note"] = f"no {denominator} in this variant"
        elif cap is not None:
            row["note"] = f"values capped at {top:.6g} (the pooled {cap:.0%} quantile)"
        rows.append(row)

    table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS[:-2]))
    table["variant"] = pd.Categorical(table["variant"], categories=names, ordered=True)
    table = table.astype({"recipients": "Int64", "successes": "Int64", "test": "string", "denominator": "string",
                          "note": "string"})
    for name in ("rate", "rate_low", "rate_high", "difference", "difference_low", "difference_high", "p_value"):
        table[name] = table[name].astype("float64")
    if sequential:
        _sequential(table, moments, control, alpha, sequential_tuning, rate=not mean_metric)
    tested = int(table["p_value"].notna().sum())
    table["p_value_adjusted"] = adjusted_p_values(table["p_value"].to_numpy(), correction)
    table["correction"] = pd.Series(np.where(table["test"].isin(["control", "not compared"]), "",
                                             CORRECTIONS[correction][1] if tested > 1 else "none (one comparison)"),
                                    dtype="string")
    if holdout is not None and control == holdout:
        compared = [name for name in names if name != control]
        costs = variant_costs(cost, outcomes, labels, compared) if cost is not None else None
        add_incremental(table, mean_metric, costs)
    table.attrs = {"metric": metric, "control": control, "alpha": float(alpha), "holdout": holdout,
                   "sequential": bool(sequential),
                   "without_variant": int(labels.isna().sum()), "cap": top, "correction": correction,
                   "sample_ratio_p_value": _check_sample_ratio({name: counts[name][0] for name in names},
                                                               _assigned_weights(outcomes, column, weights))}
    return table
