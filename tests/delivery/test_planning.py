"""plan_test: the size of a test by the normal-approximation formula on Cohen's h, and its price."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

import sendframe
from sendframe.delivery.planning import plan_test
from sendframe.errors import InputError, UnknownOptionError
from sendframe.pricing import message_cost


def by_hand(p0: float, p1: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """n = 2 ((z(1 - alpha/2) + z(power)) / h)², h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p0)) (Cohen 1988).

    2 asin(sqrt(p)) has variance 1/n, so the difference of two groups of n has 2/n. The formula leaves
    out the far tail's power (a significant result in the wrong direction), so it is at most one above.
    """
    h = 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p0))
    return 2 * ((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) / h) ** 2


def close_to(hand: float) -> tuple[int, int]:
    return (math.ceil(hand) - 1, math.ceil(hand))


def test_recipients_per_group_follow_the_formula():
    # h = 2 asin(sqrt(0.12)) - 2 asin(sqrt(0.10)) = 0.06398; 2 (2.80 / 0.06398)² = 3834.6 -> 3835
    assert plan_test(0.10, 0.02).recipients_per_group == 3835 and round(by_hand(0.10, 0.12), 1) == 3834.6
    assert plan_test(0.05, 0.01, power=0.9, alpha=0.01).recipients_per_group in close_to(by_hand(0.05, 0.06, 0.01, 0.9))
    assert plan_test(0.30, -0.05).recipients_per_group in close_to(by_hand(0.30, 0.25))  # a drop: the same way
    plan = plan_test(0.10, 0.02)
    assert (plan.groups, plan.recipients, plan.power, plan.alpha) == (2, 2 * 3835, 0.8, 0.05)
    assert math.isnan(plan.cost)


def test_more_groups_split_alpha_over_the_comparisons_with_the_control():
    plan = plan_test(0.10, 0.02, groups=4)
    assert plan.recipients_per_group in close_to(by_hand(0.10, 0.12, alpha=0.05 / 3))
    assert plan.recipients == 4 * plan.recipients_per_group


def test_with_a_message_and_contacts_the_test_is_priced():
    contacts = pd.DataFrame({"phone": ["34600123456", "447700900123", "34600123457", "not a phone"],
                             "name": ["Ana", "Bo", "Cy", "Di"]})
    message = sendframe.sms("Hi {name}", sender="Shop")
    plan = plan_test(0.10, 0.02, message=message, contacts=contacts, holdout=True, groups=3)
    # the invalid number is not billable; the others pay their country's price for one part
    each = (message_cost("34600123456", "sms") * 2 + message_cost("447700900123", "sms")) / 3
    assert plan.cost_per_recipient == pytest.approx(each)
    assert plan.cost == pytest.approx(each * plan.recipients_per_group * 2)  # the holdout is not sent
    assert plan.currency == "EUR"
    everyone = plan_test(0.10, 0.02, message=message, contacts=contacts, groups=3)
    assert everyone.cost == pytest.approx(each * everyone.recipients_per_group * 3)


def test_bad_input_is_refused_in_plain_english():
    with pytest.raises(InputError, match="baseline_rate must be a fraction"):
        plan_test(10, 0.02)
    with pytest.raises(InputError, match="must stay a rate between 0 and 1"):
        plan_test(0.99, 0.02)
    with pytest.raises(InputError, match="minimum_effect is the difference"):
        plan_test(0.1, 0)
    with pytest.raises(InputError, match="pass message= too"):
        plan_test(0.1, 0.02, contacts=pd.DataFrame({"phone": ["34600123456"]}))
    with pytest.raises(UnknownOptionError, match="Did you mean 'power'"):
        plan_test(0.1, 0.02, powr=0.9)


def test_plan_test_is_exported_at_the_top_level():
    assert sendframe.plan_test is plan_test
