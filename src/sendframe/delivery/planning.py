"""Planning a test before sending it: how many recipients per group, and what the test costs.

:func:`plan_test` answers "how many recipients does each group need so that a lift of
``minimum_effect`` in a conversion rate of ``baseline_rate`` is found with probability ``power``?",
by statsmodels' power of the two-sample test of proportions on Cohen's h
(``proportion_effectsize``, ``NormalIndPower``): about n = 2 ((z(1 - alpha/2) + z(power)) / h)^2 per
group, h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p0)) (Cohen 1988; statsmodels also counts the far tail).

    >>> plan_test(0.10, 0.02).recipients_per_group
    3835
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from sendframe.errors import InputError
from sendframe.options import keyword_checked

__all__ = ["TestPlan", "plan_test"]


@dataclass(frozen=True)
class TestPlan:
    """What :func:`plan_test` found: the size of each group and of the test, and its cost when priced."""

    __test__ = False  # a result, not a pytest test class

    recipients_per_group: int
    groups: int
    recipients: int  # every group's recipients together
    baseline_rate: float
    minimum_effect: float
    power: float
    alpha: float  # as asked; each comparison is planned at alpha / (groups - 1)
    cost_per_recipient: float = math.nan  # mean cost of a message to the sample of contacts given
    cost: float = math.nan  # what sending the sent groups costs
    currency: str = ""


def _fraction(value: object, name: str, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise InputError(f"{name} must be a fraction between 0 and 1 ({example}); got {value!r}.")
    return float(value)


@keyword_checked
def plan_test(
    baseline_rate: float,
    minimum_effect: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    groups: int = 2,
    holdout: bool = False,
    message: Any = None,
    contacts: Any = None,
    prices: Any = None,
) -> TestPlan:
    """The recipients each group needs to find a lift of ``minimum_effect`` over ``baseline_rate``.

    ``baseline_rate``: the control's conversion rate (0.10); ``minimum_effect``: the smallest
    difference worth finding, in rate points (0.02: from 10% to 12%); ``power``: the chance of
    finding it when it is there; ``alpha``: the two-sided false-positive rate. ``groups`` counts the
    control too; with more than two, each comparison with the control is planned at
    ``alpha / (groups - 1)`` (Bonferroni, the first step of the Holm correction ``compare_variants``
    applies), so the plan still holds after correction. Every group gets the same size.

    With ``message`` (a :func:`sendframe.sms` or any message), ``contacts`` (a sample of the
    audience: countries set the price) and optionally ``prices`` (a price table, default the
    shipped one): ``cost_per_recipient`` (the mean cost of the message to the sample's billable
    rows, from ``message.estimate``) and ``cost`` of the sent groups (all of them, or all but the
    control when ``holdout`` is True: a holdout is never sent).

        >>> plan = plan_test(0.10, 0.02, groups=3)
        >>> plan.recipients_per_group, plan.recipients
        (4644, 13932)
    """
    baseline = _fraction(baseline_rate, "baseline_rate", "0.10 for 10%")
    if isinstance(minimum_effect, bool) or not isinstance(minimum_effect, (int, float)) or minimum_effect == 0:
        raise InputError(f"minimum_effect is the difference in rate to find, e.g. 0.02 for 10% -> 12%; "
                         f"got {minimum_effect!r}.")
    target = baseline + float(minimum_effect)
    if not 0 < target < 1:
        raise InputError(f"baseline_rate + minimum_effect must stay a rate between 0 and 1; "
                         f"{baseline} + {minimum_effect} = {target:g}.")
    power = _fraction(power, "power", "0.8 finds a true effect 4 times in 5")
    alpha = _fraction(alpha, "alpha", "0.05 for 95% confidence")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 2:
        raise InputError(f"groups counts the control and the variants, at least 2; got {groups!r}.")
    effect = proportion_effectsize(target, baseline)
    n = NormalIndPower().solve_power(effect_size=abs(effect), alpha=alpha / (groups - 1), power=power, ratio=1.0,
                                     alternative="two-sided")
    per_group = math.ceil(float(n))
    plan = TestPlan(per_group, groups, per_group * groups, baseline, float(minimum_effect), power, alpha)
    if message is None:
        if contacts is not None or prices is not None:
            raise InputError("contacts= and prices= price a message: pass message= too (e.g. sendframe.sms(...)).")
        return plan
    if contacts is None or not hasattr(message, "estimate"):
        raise InputError("Pricing the test needs message= (a sendframe message, e.g. sendframe.sms(...)) and "
                         "contacts= (a sample of the audience: their countries set the price).")
    estimate = message.estimate(contacts, prices=prices)
    billable = estimate["billable"].astype(bool) if "billable" in estimate else None
    spent = float(estimate["cost"][billable].sum() if billable is not None else estimate["cost"].sum())
    count = int(billable.sum()) if billable is not None else len(estimate)
    if count == 0:
        raise InputError("None of the contacts given would be sent the message (no billable row), so it has no "
                         "price; pass a sample of the audience the test will go to.")
    each = spent / count
    sent_groups = groups - 1 if holdout else groups
    return TestPlan(per_group, groups, per_group * groups, baseline, float(minimum_effect), power, alpha,
                    each, each * per_group * sent_groups, str(estimate.attrs.get("currency", "")))
