"""compare_variants beyond rates: revenue (Welch), the cap, lift over the holdout and its cost, corrections,
the sample-ratio check. Expected figures are worked by formula here, or by scipy/statsmodels where they overlap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

import sendframe
from sendframe.api.client import Client
from sendframe.delivery.experiments import compare_variants, difference_interval
from sendframe.delivery.records import fetch_records
from sendframe.delivery.statistics import per_known_cost, sample_ratio_p_value
from sendframe.errors import InputError, SendframeWarning
from sendframe.sandbox import Sandbox
from tests.delivery.test_experiments import frame_of


def spend(groups: dict[str, list[float]], metric: str = "revenue") -> pd.DataFrame:
    return pd.DataFrame({"variant": [name for name, values in groups.items() for _ in values],
                         metric: [v for values in groups.values() for v in values]})


def test_revenue_per_recipient_is_compared_by_welchs_formula():
    a, b = [2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0]
    # s² = 20/3 and 5/3; se² = s²/n; Welch-Satterthwaite df = se²² / sum((s²/n)² / (n-1))
    va, vb = 20 / 3 / 4, 5 / 3 / 4
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 3)
    q = stats.t.ppf(0.975, df)
    row = compare_variants(spend({"A": a, "B": b}), "revenue", control="B").iloc[0]
    assert row["test"] == "Welch's t-test"
    assert row["rate"] == 5.0 and row["difference"] == 2.5
    assert (row["difference_low"], row["difference_high"]) == pytest.approx((2.5 - q * se, 2.5 + q * se), abs=1e-9)
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(2.5 / se, df), abs=1e-12)
    # the same answer as statsmodels' unequal-variance comparison
    compare = CompareMeans(DescrStatsW(np.array(a)), DescrStatsW(np.array(b)))
    assert row["p_value"] == pytest.approx(compare.ttest_ind(usevar="unequal")[1], abs=1e-12)
    assert (row["difference_low"], row["difference_high"]) == pytest.approx(compare.tconfint_diff(usevar="unequal"))
    # each mean: Student's t interval, mean ± t(0.975, n-1) s / sqrt(n)
    half = stats.t.ppf(0.975, 3) * math.sqrt(20 / 3) / 2
    assert (row["rate_low"], row["rate_high"]) == pytest.approx((5 - half, 5 + half), abs=1e-9)
    assert row["successes"] == 4  # recipients who spent something


def test_the_cap_is_one_pooled_quantile_applied_to_every_group():
    frame = spend({"A": [1.0, 2.0, 3.0, 100.0], "holdout": [1.0, 2.0, 3.0, 4.0]})
    # pooled sorted [1, 1, 2, 2, 3, 3, 4, 100]: the 0.75 quantile sits at 5.25 -> 3 + 0.25 * (4 - 3) = 3.25
    table = compare_variants(frame, "revenue", cap=0.75).set_index("variant")
    assert table.attrs["cap"] == 3.25
    assert table.loc["A", "rate"] == pytest.approx((1 + 2 + 3 + 3.25) / 4)
    assert table.loc["holdout", "rate"] == pytest.approx((1 + 2 + 3 + 3.25) / 4)  # its 4 is capped too
    assert "capped at 3.25" in table.loc["A", "note"]
    assert frame["revenue"].max() == 100.0  # the input is not modified
    with pytest.raises(InputError, match="a rate, which has no tail"):
        compare_variants(frame_of({"A": (1, 2), "B": (1, 2)}), "converted", cap=0.99)
    with pytest.raises(InputError, match="between 0 and 1"):
        compare_variants(frame, "revenue", cap=99)
    # a row outside every variant does not move the cap
    unlabelled = pd.concat([frame, pd.DataFrame({"variant": [None], "revenue": [1000.0]})], ignore_index=True)
    assert compare_variants(unlabelled, "revenue", cap=0.75).attrs["cap"] == 3.25


def test_revenue_without_values_is_refused_with_the_fix():
    with pytest.raises(InputError, match="pass value="):
        compare_variants(spend({"A": [math.nan], "holdout": [math.nan]}), "revenue")


def test_against_the_holdout_incremental_conversions_and_cost_per_incremental_conversion():
    frame = frame_of({"A": (300, 1000), "holdout": (200, 1000)})
    table = compare_variants(frame, "converted", cost=250.0).set_index("variant")
    low, high = difference_interval(300, 1000, 200, 1000)
    assert low > 0
    a = table.loc["A"]
    assert (a["incremental"], a["incremental_low"], a["incremental_high"]) == pytest.approx(
        (100.0, 1000 * low, 1000 * high))
    # 250 spent for 100 extra conversions: 2.5 each; the interval is 250 / (the incremental's interval), reversed
    assert (a["cost"], a["cost_per_incremental"]) == pytest.approx((250.0, 2.5))
    assert (a["cost_per_incremental_low"], a["cost_per_incremental_high"]) == pytest.approx(
        (250 / (1000 * high), 250 / (1000 * low)))
    assert math.isnan(table.loc["holdout", "incremental"])
    # an interval that reaches 0: no upper bound on the cost of an extra conversion
    small = compare_variants(frame_of({"A": (30, 100), "holdout": (20, 100)}), "converted", cost=25.0).iloc[0]
    assert small["incremental_low"] < 0 and small["cost_per_incremental_high"] == math.inf


def test_against_the_holdout_incremental_revenue_and_return_per_unit_spent():
    frame = spend({"A": [10.0, 0.0, 20.0, 30.0], "B": [0.0, 0.0, 5.0, 5.0], "holdout": [0.0, 5.0, 0.0, 5.0]})
    frame["billed_cost"] = [1.0] * 8 + [math.nan] * 4
    table = compare_variants(frame, "revenue", cost="billed_cost").set_index("variant")
    a = table.loc["A"]
    # A: mean 15 against 2.5 -> 12.5 per recipient, 4 recipients: 50 extra, for 4 spent: 12.5 per unit
    assert (a["difference"], a["incremental"], a["cost"], a["return_per_cost"]) == pytest.approx((12.5, 50, 4, 12.5))
    assert (a["return_per_cost_low"], a["return_per_cost_high"]) == pytest.approx(
        (a["difference_low"] * 4 / 4, a["difference_high"] * 4 / 4))
    assert table.loc["B", "incremental"] == pytest.approx(0.0)
    with pytest.raises(InputError, match="one amount, but 2 variants"):
        compare_variants(frame, "revenue", cost=4.0)
    with pytest.raises(InputError, match="holdout must be the control"):
        compare_variants(frame, "revenue", control="B", cost={"A": 4.0})


def test_per_known_cost_maps_the_interval_through_the_ratio():
    assert per_known_cost(10.0, 5.0, 2.0, 8.0, inverse=True) == (2.0, 1.25, 5.0)
    # fewer conversions than the holdout, surely: no cost per extra conversion exists
    assert all(math.isnan(v) for v in per_known_cost(10.0, -1.0, -3.0, -0.5, inverse=True))
    assert per_known_cost(10.0, 5.0, -2.0, 8.0, inverse=False) == (0.5, -0.2, 0.8)


def test_several_variants_against_one_control_get_holm_adjusted_p_values():
    frame = frame_of({"A": (60, 200), "B": (45, 200), "C": (52, 200), "holdout": (40, 200)})
    table = compare_variants(frame, "converted")
    compared = table[table["test"] != "control"]
    expected = multipletests(compared["p_value"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(compared["p_value_adjusted"].to_numpy(), expected)
    assert (compared["p_value_adjusted"] >= compared["p_value"]).all()
    assert set(compared["correction"]) == {"Holm"}
    assert table.loc[table["test"] == "control", "correction"].tolist() == [""]
    bh = compare_variants(frame, "converted", correction="benjamini-hochberg")
    bh_compared = bh[bh["test"] != "control"]
    np.testing.assert_allclose(bh_compared["p_value_adjusted"].to_numpy(),
                               multipletests(bh_compared["p_value"].to_numpy(), method="fdr_bh")[1])
    assert set(bh_compared["correction"]) == {"Benjamini-Hochberg"}
    one = compare_variants(frame_of({"A": (60, 200), "holdout": (40, 200)}), "converted").iloc[0]
    assert one["p_value_adjusted"] == one["p_value"] and one["correction"] == "none (one comparison)"
    with pytest.raises(InputError, match="correction='bonferoni' is not one of"):
        compare_variants(frame, "converted", correction="bonferoni")


def test_a_split_unlike_its_weights_is_flagged():
    frame = frame_of({"A": (50, 560), "B": (50, 440)})
    # chi-square by hand: expected 500 each, (60² + 60²) / 500 = 14.4 on one degree of freedom
    with pytest.warns(SendframeWarning, match="not the split they were assigned with"):
        table = compare_variants(frame, "converted", weights={"A": 0.5, "B": 0.5})
    assert table.attrs["sample_ratio_p_value"] == pytest.approx(stats.chi2.sf(14.4, 1), rel=1e-9)
    assert sample_ratio_p_value({"A": 1, "C": 1}, {"A": 1.0, "B": 1.0}) == 0.0  # a group nobody was assigned to
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fair = compare_variants(frame_of({"A": (50, 510), "B": (50, 490)}), "converted", weights={"A": 1, "B": 1})
    assert fair.attrs["sample_ratio_p_value"] == pytest.approx(stats.chi2.sf(0.4, 1), rel=1e-9)
    assert math.isnan(compare_variants(frame, "converted").attrs["sample_ratio_p_value"])  # no weights known


def test_the_weights_assign_variants_used_travel_through_outcomes_and_conversions():
    contacts = pd.DataFrame({"phone": [f"34600{i:06d}" for i in range(400)]})
    contacts = sendframe.assign_variants(contacts, {"A": 0.45, "B": 0.45, "holdout": 0.1}, seed=3)
    holdout = contacts["variant"] == "holdout"
    results = pd.DataFrame({"id": [None if h else f"m{i}" for i, h in enumerate(holdout)],
                            "accepted": ~holdout, "outcome": np.where(holdout, "holdout", "accepted"),
                            "recipient": contacts["phone"]}, index=contacts.index)
    contacts.attrs["recipient_columns"] = {"phone": "Mobile"}  # as read_contacts leaves it: other attrs too
    table = sendframe.outcomes(results, contacts=contacts.drop(columns="variant").assign(variant=contacts["variant"]))
    assert table.attrs["sendframe.variants"]["weights"] == {"A": 0.45, "B": 0.45, "holdout": 0.1}
    events = pd.DataFrame({"recipient": contacts["phone"].iloc[:50], "time": pd.Timestamp("2026-11-21", tz="UTC")})
    found = sendframe.conversions(table, events, window="5D", anchor="sent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compared = compare_variants(found, "converted")
    counts = contacts["variant"].value_counts()
    expected = stats.chisquare(counts[["A", "B", "holdout"]].to_numpy(),
                               np.array([0.45, 0.45, 0.1]) * len(contacts)).pvalue
    assert compared.attrs["sample_ratio_p_value"] == pytest.approx(expected)
    # a filter after the split that drops most of A: flagged
    with pytest.warns(SendframeWarning, match="suspect"):
        compare_variants(found[(found["variant"] != "A") | (found.index % 3 == 0)], "converted")


def test_a_campaign_sent_to_the_sandbox_is_measured_from_send_to_revenue_per_unit_spent(tmp_path):
    """Real HTTP: assign_variants -> variants(...).send -> records -> outcomes -> conversions -> compare_variants."""
    with Sandbox(clock="manual") as sb, Client(sb.base_url, sb.username, sb.api_password) as client:
        contacts = pd.DataFrame({"phone": [f"34612345{i:03d}" for i in range(120)], "name": "Ana"})
        contacts = sendframe.assign_variants(contacts, {"A": 0.5, "holdout": 0.5}, seed=11)
        test = sendframe.variants({"A": sendframe.sms("Hi {name}, 10% off", sender="Shop")})
        results = test.send(contacts, client=client, ledger=tmp_path / "lift.sqlite", progress=False)
        sb.advance(3600)
        records = fetch_records(results["id"], client=client)
        estimate = test.estimate(contacts)
    table = sendframe.outcomes(results, records=records, contacts=contacts, estimate=estimate)
    first_send = table["sent_at"].min()
    # every third contact orders an hour after the first send, typed as a national number with spaces; one order
    # comes before the first send and never counts
    buyers = contacts.iloc[::3]
    orders = pd.DataFrame({"customer": buyers["phone"].str[2:5] + " " + buyers["phone"].str[5:8] + " "
                           + buyers["phone"].str[8:], "time": first_send + pd.Timedelta("1h"), "amount": 20.0})
    orders.loc[len(orders)] = ["612 345 001", first_send - pd.Timedelta("1h"), 500.0]
    found = sendframe.conversions(table, orders, window="5D", on="customer", value="amount")
    delivered = found["status"] == "DELIVRD"
    holdout = found["variant"] == "holdout"
    expected = found.index.isin(buyers.index) & (delivered | holdout)
    assert (found["converted"] == expected).all() and expected.sum() > 10
    assert found.loc[expected, "revenue"].eq(20.0).all() and found.loc[~expected, "revenue"].eq(0.0).all()
    compared = compare_variants(found, "revenue", cost="estimated_cost").set_index("variant")
    spent = found.loc[found["variant"] == "A", "estimated_cost"].sum()
    assert spent > 0 and compared.loc["A", "cost"] == pytest.approx(spent)
    assert compared.loc["A", "return_per_cost"] == pytest.approx(compared.loc["A", "incremental"] / spent)
    assert compared.attrs["sample_ratio_p_value"] > 0.001
