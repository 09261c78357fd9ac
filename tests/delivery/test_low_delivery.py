"""low_delivery: each group's delivery rate against the rest's, one-sided, adjusted for the number of groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from sendframe.delivery.low_delivery import low_delivery
from sendframe.delivery.outcomes import message_outcomes
from sendframe.errors import InputError, UnknownOptionError


def outcome_table(delivered: dict[str, tuple[int, int]]) -> pd.DataFrame:
    """Per MNC (Spanish numbers): ``x`` delivered out of ``n`` accepted."""
    ids, mncs, statuses = [], [], []
    for mnc, (x, n) in delivered.items():
        ids += [f"{mnc}-{i}" for i in range(n)]
        mncs += [mnc] * n
        statuses += ["DELIVRD"] * x + ["UNDELIV"] * (n - x)
    results = pd.DataFrame({"id": ids, "outcome": "accepted"})
    callbacks = pd.DataFrame({"id": ids, "part": 1, "mnc": mncs, "status": statuses, "recipient": "34600000001",
                              "cost": 0.05, "sent_at": pd.Timestamp("2026-11-21", tz="UTC"),
                              "reported_at": pd.Timestamp("2026-11-21 00:01", tz="UTC")})
    return message_outcomes(results, callbacks)


def test_each_group_is_tested_against_the_rest_one_sided_and_holm_adjusted():
    table = low_delivery(outcome_table({"01": (90, 100), "03": (60, 100), "04": (95, 100)}), by="operator")
    row = table.loc["ES 03"]
    # ES 03: 60/100 against the rest's (90 + 95)/(100 + 100) = 0.925, the pooled z-test, alternative "smaller"
    expected = proportions_ztest([60, 185], [100, 200], alternative="smaller")[1]
    assert row["rest_delivery_rate"] == pytest.approx(0.925) and row["difference"] == pytest.approx(0.6 - 0.925)
    assert row["p_value"] == pytest.approx(expected)
    np.testing.assert_allclose(table["p_value_adjusted"], multipletests(table["p_value"], method="holm")[1])
    assert table.index[table["flagged"]].tolist() == ["ES 03"]
    assert set(table["correction"]) == {"Holm"}


def test_a_group_better_than_the_rest_is_never_flagged_and_small_groups_use_fisher():
    table = low_delivery(outcome_table({"01": (50, 100), "03": (4, 4)}), by="operator")
    assert not table["flagged"].any()
    assert table.loc["ES 03", "p_value"] == pytest.approx(1.0)  # 4 of 4 is not below anything
    assert table.loc["ES 03", "test"].startswith("Fisher")


def test_bad_input_is_refused():
    table = outcome_table({"01": (9, 10)})
    with pytest.raises(InputError, match="correction='bonferroni' is not one of"):
        low_delivery(table, correction="bonferroni")
    with pytest.raises(UnknownOptionError, match="Did you mean 'alpha'"):
        low_delivery(table, alpah=0.1)
