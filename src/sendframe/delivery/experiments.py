"""Comparing variants honestly: each rate with its interval, each difference with its interval and test.

One row per variant: the rate of ``metric`` with a Wilson score interval, the difference from the
control with Newcombe's hybrid score interval (the two Wilson intervals combined, Newcombe 1998,
method 10), and a two-sided p-value: the pooled two-proportion z-test, or Fisher's exact test when
any expected cell of the 2x2 table is below 5 (the z-test's normal approximation is poor there).
The ``test`` column says which. No correction for comparing several variants to one control is
applied: with k variants, about k times ``alpha`` of the "significant" differences are chance.

Every rate names its denominator (column ``denominator``):

- ``delivered``, ``clicked``: over the messages the service accepted (outcome ``accepted``).
  Messages still pending count as not delivered / not clicked, so read them once callbacks are in.
- ``delivered_then_clicked``: clicked over the messages delivered (click-through of what arrived).
- any other boolean column (``converted``, ...): over every recipient of the variant with a value,
  holdout included: the holdout is then a valid control (the lift of sending at all).

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
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)

from sendframe.errors import InputError
from sendframe.options import check_options

__all__ = ["COMPARISON_COLUMNS", "SEND_METRICS", "compare_variants", "difference_interval", "two_proportion_test",
           "wilson_interval"]

COMPARISON_COLUMNS: tuple[str, ...] = (
    "variant", "recipients", "successes", "rate", "rate_low", "rate_high", "difference", "difference_low",
    "difference_high", "p_value", "test", "denominator", "note",
)

# metrics measured on messages sent: a holdout (nothing sent) has none of them
SEND_METRICS: dict[str, str] = {
    "delivered": "messages accepted by the service",
    "clicked": "messages accepted by the service",
    "delivered_then_clicked": "messages delivered",
}
Z_TEST = "two-proportion z-test"
FISHER = "Fisher's exact test (an expected count < 5)"
SMALLEST_EXPECTED_COUNT = 5


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n`` at confidence ``1 - alpha`` (NaNs when n is 0).

        >>> [round(x, 4) for x in wilson_interval(45, 100)]
        [0.3561, 0.5476]
    """
    if n == 0:
        return (math.nan, math.nan)
    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return (float(low), float(high))


def difference_interval(x1: int, n1: int, x2: int, n2: int, alpha: float = 0.05) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``x1/n1 - x2/n2`` (NaNs when a group is empty).

        >>> [round(x, 4) for x in difference_interval(45, 100, 30, 100)]
        [0.0159, 0.2768]
    """
    if n1 == 0 or n2 == 0:
        return (math.nan, math.nan)
    low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=alpha)
    return (float(low), float(high))


def two_proportion_test(x1: int, n1: int, x2: int, n2: int) -> tuple[float, str]:
    """(two-sided p-value, name of the test) for ``x1/n1`` against ``x2/n2``.

    The pooled z-test, unless an expected cell count of the 2x2 table (under the pooled rate) is
    below 5: then Fisher's exact test.

        >>> p, test = two_proportion_test(45, 100, 30, 100); round(p, 4), test
        (0.0285, 'two-proportion z-test')
        >>> p, test = two_proportion_test(3, 4, 1, 4); round(p, 4), test
        (0.4857, "Fisher's exact test (an expected count < 5)")
    """
    if n1 == 0 or n2 == 0:
        return (math.nan, "no recipients")
    pooled = (x1 + x2) / (n1 + n2)
    expected = min(n1 * pooled, n1 * (1 - pooled), n2 * pooled, n2 * (1 - pooled))
    if expected < SMALLEST_EXPECTED_COUNT:
        result = fisher_exact([[x1, n1 - x1], [x2, n2 - x2]], alternative="two-sided")
        return (float(result.pvalue), FISHER)
    _, p_value = proportions_ztest([x1, x2], [n1, n2], alternative="two-sided")
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


def _variants_in_order(labels: pd.Series) -> list[str]:
    if isinstance(labels.dtype, pd.CategoricalDtype):
        return [str(c) for c in labels.cat.categories]
    return sorted(map(str, labels.dropna().unique()))


def compare_variants(
    outcomes: pd.DataFrame,
    metric: str = "delivered",
    control: str | None = None,
    *,
    alpha: float = 0.05,
    column: str = "variant",
    holdout: str | None = "holdout",
    **options: Any,
) -> pd.DataFrame:
    """One row per variant: rate of ``metric`` with its interval, difference from ``control``, p-value.

    ``outcomes`` is the per-recipient outcome table (:func:`~sendframe.delivery.outcomes.message_outcomes` joined with
    the contacts' ``variant``) or any frame with a ``column`` of variants and a True/False column
    named ``metric``. ``delivered`` is derived from ``status`` when absent, ``delivered_then_clicked``
    from ``clicked`` among the delivered. Columns: ``variant``, ``recipients`` (the denominator's
    size), ``successes``, ``rate``, ``rate_low``, ``rate_high`` (Wilson), ``difference``,
    ``difference_low``, ``difference_high`` (Newcombe), ``p_value``, ``test``, ``denominator`` and
    ``note``; intervals at confidence ``1 - alpha``.

    ``control``: the variant the others are compared with; by default the holdout for metrics a
    holdout has (``converted``, ...), else the first variant (categorical order, else sorted).
    ``holdout`` names the group that was never sent (None: there is none).

        >>> import pandas as pd
        >>> frame = pd.DataFrame({"variant": ["A"] * 4 + ["B"] * 4, "clicked": [1, 1, 1, 0, 1, 0, 0, 0]})
        >>> row = compare_variants(frame, "clicked", control="B").iloc[0]
        >>> row["variant"], float(row["rate"]), float(row["difference"]), round(float(row["p_value"]), 4), row["test"]
        ('A', 0.75, 0.5, 0.4857, "Fisher's exact test (an expected count < 5)")
    """
    check_options(options, ["alpha", "column", "holdout"], "sendframe.compare_variants")
    if not isinstance(outcomes, pd.DataFrame):
        raise InputError(f"compare_variants needs a pandas DataFrame, not {type(outcomes).__name__}.")
    if column not in outcomes:
        raise InputError(f"compare_variants needs a {column!r} column (assign_variants adds it; join it to the "
                         f"outcomes on the contacts' index); the frame has: {', '.join(map(str, outcomes.columns))}.")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1 (0.05 gives 95% intervals); got {alpha!r}.")
    labels = outcomes[column]
    names = _variants_in_order(labels)
    if not names:
        raise InputError(f"The column {column!r} holds no variant.")
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

    text = labels.astype("string")
    counts: dict[str, tuple[int, int, int]] = {}
    for name in names:
        members = (text == name).fillna(False).to_numpy(dtype=bool)
        counted = members & population.to_numpy(dtype=bool)
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
        rate = x / n if n else math.nan
        row.update(rate=rate, rate_low=math.nan, rate_high=math.nan)
        row["rate_low"], row["rate_high"] = wilson_interval(x, n, alpha)
        if name == control:
            row.update(difference=0.0 if n else math.nan, difference_low=math.nan, difference_high=math.nan,
                       p_value=math.nan, test="control")
        else:
            row["difference"] = rate - x_control / n_control if n and n_control else math.nan
            row["difference_low"], row["difference_high"] = difference_interval(x, n, x_control, n_control, alpha)
            row["p_value"], row["test"] = two_proportion_test(x, n, x_control, n_control)
        if n == 0:
            row["note"] = f"no {denominator} in this variant"
        rows.append(row)

    table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
    table["variant"] = pd.Categorical(table["variant"], categories=names, ordered=True)
    table = table.astype({"recipients": "Int64", "successes": "Int64", "test": "string", "denominator": "string",
                          "note": "string"})
    for name in ("rate", "rate_low", "rate_high", "difference", "difference_low", "difference_high", "p_value"):
        table[name] = table[name].astype("float64")
    table.attrs = {"metric": metric, "control": control, "alpha": float(alpha), "holdout": holdout,
                   "without_variant": int(labels.isna().sum())}
    return table
