"""Lift over the holdout: what sending added, and what it cost per extra conversion or returned per unit spent.

:func:`~sendframe.delivery.experiments.compare_variants` calls these when the holdout is the control.
``incremental`` is the per-recipient difference from the holdout times the variant's recipients; with
the cost of each variant, ``cost_per_incremental`` (a rate) or ``return_per_cost`` (a mean, revenue),
with intervals mapped through :func:`~sendframe.delivery.statistics.per_known_cost`.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"variant": ["A", "holdout"], "recipients": [1000, 1000], "test": ["z", "control"],
    ...     "difference": [0.1, 0.0], "difference_low": [0.06, float("nan")], "difference_high": [0.14, float("nan")]})
    >>> add_incremental(table, False, {"A": 250.0})
    >>> table.loc[0, ["incremental", "cost_per_incremental", "cost_per_incremental_low"]].round(3).tolist()
    [100.0, 2.5, 1.786]
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from sendframe.delivery.statistics import per_known_cost
from sendframe.errors import InputError

__all__ = ["add_incremental", "variant_costs"]


def variant_costs(cost: float | Mapping[str, float] | str, outcomes: pd.DataFrame, labels: pd.Series,
                  compared: list[str]) -> dict[str, float]:
    """Each compared variant's cost: a number (one variant compared), a mapping, or a column of ``outcomes`` summed.

        >>> variant_costs({"A": 2.0, "B": 3.0}, pd.DataFrame(), pd.Series([], dtype="string"), ["A"])
        {'A': 2.0}
    """
    if isinstance(cost, str):
        if cost not in outcomes:
            raise InputError(f"cost={cost!r} is not a column of the frame; give the cost as a number, a mapping "
                             f"per variant, or a cost column such as 'billed_cost'.")
        spent = pd.to_numeric(outcomes[cost], errors="coerce").groupby(labels.astype("string")).sum()
        return {name: float(spent.get(name, 0.0)) for name in compared}
    if isinstance(cost, Mapping):
        missing = [name for name in compared if name not in cost]
        if missing:
            raise InputError(f"cost has no amount for the variant(s) {missing}; give one per compared variant.")
        return {name: float(cost[name]) for name in compared}
    if isinstance(cost, bool) or not isinstance(cost, (int, float)):
        raise InputError(f"cost must be a number, a mapping per variant or a cost column; got {cost!r}.")
    if len(compared) != 1:
        raise InputError(f"cost={cost!r} is one amount, but {len(compared)} variants are compared with the holdout "
                         f"({compared}); give a mapping per variant or a cost column such as 'billed_cost'.")
    return {compared[0]: float(cost)}


def add_incremental(table: pd.DataFrame, mean_metric: bool, costs: dict[str, float] | None) -> None:
    """Add incremental conversions or revenue (difference x recipients) and, with ``costs``, their ratio to cost.

    ``table`` is a comparison against the holdout (its columns ``variant``, ``recipients``, ``test``,
    ``difference``, ``difference_low``, ``difference_high``); ``mean_metric`` says whether the metric is a
    mean (revenue: ``return_per_cost``) or a rate (``cost_per_incremental``). Changes ``table`` in place:
    the caller's own new frame.
    """
    treated = table["test"] != "control"
    for end in ("", "_low", "_high"):
        table["incremental" + end] = np.where(treated, table["difference" + end] * table["recipients"].astype(float),
                                              np.nan)
    if costs is None:
        return
    table["cost"] = [costs.get(str(name), math.nan) for name in table["variant"]]
    name = "return_per_cost" if mean_metric else "cost_per_incremental"
    columns = table[["cost", "incremental", "incremental_low", "incremental_high"]].to_numpy(dtype=float)
    ratios = [per_known_cost(*row, inverse=not mean_metric) for row in columns.tolist()]
    for position, end in enumerate(("", "_low", "_high")):
        table[name + end] = [ratio[position] for ratio in ratios]
