"""Which operators (or countries, or any group) deliver worse than the rest, by more than chance.

:func:`low_delivery` counts each group's delivered and accepted messages the way
:func:`~sendframe.delivery.metrics.delivery_summary` does, tests each group's delivery rate against
the rest of the campaign's, one-sided (is it lower?), with
:func:`~sendframe.delivery.experiments.two_proportion_test` (the z-test, Fisher's exact test for small
counts), and adjusts the p-values for the number of groups (Holm by default), so that with twenty
operators one is not flagged by luck alone.

    >>> low_delivery(outcomes, by="operator").query("flagged")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sendframe.delivery.experiments import two_proportion_test
from sendframe.delivery.metrics import summarise_outcomes
from sendframe.delivery.statistics import CORRECTIONS, adjusted_p_values
from sendframe.errors import InputError
from sendframe.options import keyword_checked

__all__ = ["LOW_DELIVERY_COLUMNS", "low_delivery"]

LOW_DELIVERY_COLUMNS: tuple[str, ...] = (
    "accepted", "delivered", "delivery_rate", "rest_delivery_rate", "difference", "p_value", "test",
    "p_value_adjusted", "correction", "flagged",
)


@keyword_checked
def low_delivery(
    outcomes: pd.DataFrame,
    by: Sequence[str] | str = "operator",
    *,
    alpha: float = 0.05,
    correction: str = "holm",
) -> pd.DataFrame:
    """One row per group of ``by``: its delivery rate against the rest's, and whether it is lower by more than chance.

    ``outcomes`` is the outcome table (:func:`sendframe.outcomes`); ``by`` any column
    :func:`~sendframe.delivery.metrics.delivery_summary` groups by (``operator``, ``country``, ...).
    Rates are delivered over accepted. ``p_value``: one-sided, the group's rate below the rest's
    (every other group's messages together); ``p_value_adjusted`` by ``correction`` (``"holm"`` or
    ``"benjamini-hochberg"``) over the groups; ``flagged`` when it is below ``alpha``. Groups with no
    accepted message (rows skipped or never sent) are left out. The groups are the index, as in
    ``delivery_summary``. The table is not modified.

        >>> import pandas as pd
        >>> from sendframe.delivery.outcomes import message_outcomes
        >>> ids = [f"m{i}" for i in range(200)]
        >>> results = pd.DataFrame({"id": ids, "outcome": "accepted"})
        >>> callbacks = pd.DataFrame({"id": ids, "part": 1, "mnc": ["01"] * 100 + ["03"] * 100,
        ...     "status": ["DELIVRD"] * 95 + ["UNDELIV"] * 5 + ["DELIVRD"] * 70 + ["UNDELIV"] * 30,
        ...     "recipient": "34600000001", "cost": 0.05, "sent_at": pd.Timestamp("2026-11-21", tz="UTC"),
        ...     "reported_at": pd.Timestamp("2026-11-21 00:01", tz="UTC")})
        >>> table = low_delivery(message_outcomes(results, callbacks), by="operator")
        >>> table["flagged"].to_dict(), table["delivery_rate"].to_dict()
        ({'ES 01': False, 'ES 03': True}, {'ES 01': 0.95, 'ES 03': 0.7})
    """
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1 (0.05 flags at 5% after correction); got {alpha!r}.")
    if correction not in CORRECTIONS:
        raise InputError(f"correction={correction!r} is not one of {list(CORRECTIONS)}.")
    summary = summarise_outcomes(outcomes, by=by)
    summary = summary[summary["accepted"] > 0]  # groups never sent have nothing to test
    accepted = summary["accepted"].to_numpy(dtype=np.int64)
    delivered = summary["delivered"].to_numpy(dtype=np.int64)
    rest_n, rest_x = accepted.sum() - accepted, delivered.sum() - delivered
    tests = [two_proportion_test(int(x), int(n), int(rx), int(rn), alternative="smaller")
             for x, n, rx, rn in zip(delivered, accepted, rest_x, rest_n, strict=True)]
    out = summary[["accepted", "delivered"]].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["delivery_rate"] = np.where(accepted > 0, delivered / accepted, np.nan)
        out["rest_delivery_rate"] = np.where(rest_n > 0, rest_x / rest_n, np.nan)
    out["difference"] = out["delivery_rate"] - out["rest_delivery_rate"]
    out["p_value"] = [p for p, _ in tests]
    out["test"] = pd.Series([name for _, name in tests], index=out.index, dtype="string")
    out["p_value_adjusted"] = adjusted_p_values(out["p_value"].to_numpy(), correction)
    out["correction"] = pd.Series(CORRECTIONS[correction][1], index=out.index, dtype="string")
    out["flagged"] = (out["p_value_adjusted"] < alpha).to_numpy(dtype=bool)
    out.attrs = {"alpha": float(alpha), "correction": correction}
    return out
