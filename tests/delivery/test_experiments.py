"""compare_variants against hand-worked statistics: each expected figure is computed here by formula."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import sendframe
from sendframe.api.client import Client
from sendframe.delivery.experiments import (
    compare_variants,
    difference_interval,
    two_proportion_test,
    wilson_interval,
)
from sendframe.delivery.outcomes import message_outcomes
from sendframe.delivery.records import Records, fetch_records
from sendframe.errors import InputError, UnknownOptionError
from sendframe.sandbox import Sandbox

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal


def wilson_by_hand(x: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson (1927): centre (p + z²/2n) / (1 + z²/n), half-width z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)."""
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def frame_of(counts: dict[str, tuple[int, int]], metric: str = "converted") -> pd.DataFrame:
    """A frame with ``x`` successes out of ``n`` rows per variant."""
    variants, values = [], []
    for name, (x, n) in counts.items():
        variants += [name] * n
        values += [True] * x + [False] * (n - x)
    return pd.DataFrame({"variant": variants, metric: values})


def test_wilson_interval_of_45_out_of_100_equals_the_formula():
    low, high = wilson_by_hand(45, 100)
    # p = 0.45, z²/n = 0.038415: centre = (0.45 + 0.019207) / 1.038415 = 0.451849,
    # half = 1.959964 / 1.038415 * sqrt(0.002475 + 0.0000960) = 0.095703
    assert (round(low, 4), round(high, 4)) == (0.3561, 0.5476)
    assert wilson_interval(45, 100) == pytest.approx((low, high), abs=1e-12)
    row = compare_variants(frame_of({"A": (45, 100), "B": (30, 100)}), "converted", control="B").iloc[0]
    assert (row["rate"], row["rate_low"], row["rate_high"]) == pytest.approx((0.45, low, high), abs=1e-12)


def test_the_difference_interval_is_newcombes_hybrid_of_the_two_wilson_intervals():
    l1, u1 = wilson_by_hand(45, 100)
    l2, u2 = wilson_by_hand(30, 100)
    d = 0.45 - 0.30
    # Newcombe (1998) method 10: L = d - sqrt((p1-l1)² + (u2-p2)²), U = d + sqrt((u1-p1)² + (p2-l2)²)
    low = d - math.sqrt((0.45 - l1) ** 2 + (u2 - 0.30) ** 2)
    high = d + math.sqrt((u1 - 0.45) ** 2 + (0.30 - l2) ** 2)
    assert (round(low, 4), round(high, 4)) == (0.0159, 0.2768)
    assert difference_interval(45, 100, 30, 100) == pytest.approx((low, high), abs=1e-12)
    row = compare_variants(frame_of({"A": (45, 100), "B": (30, 100)}), "converted", control="B").iloc[0]
    interval = (row["difference"], row["difference_low"], row["difference_high"])
    assert interval == pytest.approx((d, low, high), abs=1e-12)


def test_the_z_test_p_value_equals_the_pooled_formula():
    # pooled p = 75/200 = 0.375; se = sqrt(0.375 * 0.625 * (1/100 + 1/100)) = 0.068465; z = 0.15 / se = 2.19089
    z = 0.15 / math.sqrt(0.375 * 0.625 * (2 / 100))
    p_two_sided = math.erfc(z / math.sqrt(2))
    assert round(p_two_sided, 4) == 0.0285
    p, test = two_proportion_test(45, 100, 30, 100)
    assert p == pytest.approx(p_two_sided, abs=1e-12)
    assert test == "two-proportion z-test"


def test_small_counts_use_fishers_exact_test_with_the_hypergeometric_p_value():
    # [[3, 1], [1, 3]]: margins 4/4/4/4, P(a = k) = C(4,k) C(4,4-k) / C(8,4) = 1, 16, 36, 16, 1 (/70);
    # two-sided: every table as or less likely than the one seen (16/70): (1 + 16 + 16 + 1) / 70
    exact = (1 + 16 + 16 + 1) / math.comb(8, 4)
    p, test = two_proportion_test(3, 4, 1, 4)
    assert p == pytest.approx(exact, abs=1e-12) and round(exact, 6) == 0.485714
    assert test.startswith("Fisher's exact test")
    row = compare_variants(frame_of({"A": (3, 4), "B": (1, 4)}), "converted", control="B").iloc[0]
    assert row["p_value"] == pytest.approx(exact, abs=1e-12) and row["test"].startswith("Fisher")


def test_one_expected_cell_below_5_is_enough_for_fisher():
    # pooled rate 6/200 = 0.03: expected successes 100 * 0.03 = 3 < 5 per variant, although n is 100
    assert two_proportion_test(4, 100, 2, 100)[1].startswith("Fisher")
    # pooled rate 10/200: expected 5 each: the z-test
    assert two_proportion_test(6, 100, 4, 100)[1] == "two-proportion z-test"


def outcome_table() -> pd.DataFrame:
    """message_outcomes of six sends and a holdout of two, with the variant joined on the contacts' index.

    A: a1 delivered + clicked, a2 delivered, a3 undelivered
    B: b1 delivered + clicked, b2 delivered + clicked, b3 refused by the API (not in the denominator)
    holdout: h1, h2 never sent
    """
    ids = ["a1", "a2", "a3", "b1", "b2", None, None, None]
    results = pd.DataFrame({"id": ids, "accepted": [True] * 5 + [False] * 3,
                            "outcome": ["accepted"] * 5 + ["rejected", "holdout", "holdout"]})
    callbacks = pd.DataFrame({
        "id": ["a1", "a2", "a3", "b1", "b2"], "part": 1,
        "status": ["DELIVRD", "DELIVRD", "UNDELIV", "DELIVRD", "DELIVRD"], "delivery": [1, 1, 2, 1, 1],
        "mnc": "01", "cost": 0.05, "sent_at": pd.Timestamp("2026-11-21 10:00", tz="UTC"),
        "reported_at": pd.Timestamp("2026-11-21 10:01", tz="UTC"), "recipient": "34600000001",
    })
    messages = pd.DataFrame({"id": ["a1", "a2", "a3", "b1", "b2"], "is_clicked": [True, False, False, True, True]})
    outcomes = message_outcomes(results, callbacks, Records(messages, pd.DataFrame(), []))
    variant = pd.Categorical(["A"] * 3 + ["B"] * 3 + ["holdout"] * 2, categories=["A", "B", "holdout"], ordered=True)
    return outcomes.assign(variant=variant)


def test_delivered_is_over_accepted_messages_and_the_holdout_is_left_out_with_a_note():
    table = compare_variants(outcome_table(), "delivered").set_index("variant")
    assert table.loc["A", ["recipients", "successes"]].tolist() == [3, 2]
    assert table.loc["B", ["recipients", "successes"]].tolist() == [2, 2]  # b3 was refused: not in the denominator
    assert table.loc["A", "test"] == "control"
    assert table.loc["B", "difference"] == pytest.approx(1 - 2 / 3)
    assert (table["denominator"][["A", "B"]] == "messages accepted by the service").all()
    assert math.isnan(table.loc["holdout", "rate"]) and table.loc["holdout", "recipients"] == 2
    assert "holdout" in table.loc["holdout", "note"] and table.loc["holdout", "test"] == "not compared"


def test_delivered_then_clicked_is_over_delivered_messages():
    table = compare_variants(outcome_table(), "delivered_then_clicked").set_index("variant")
    # A: a1, a2 delivered, a1 clicked: 1/2; B: b1, b2 delivered, both clicked: 2/2
    assert table.loc["A", ["recipients", "successes"]].tolist() == [2, 1]
    assert table.loc["B", ["recipients", "successes"]].tolist() == [2, 2]
    assert table.loc["B", "denominator"] == "messages delivered"


def test_clicked_is_over_accepted_messages():
    table = compare_variants(outcome_table(), "clicked").set_index("variant")
    assert table.loc["A", ["recipients", "successes"]].tolist() == [3, 1]
    assert table.loc["B", ["recipients", "successes"]].tolist() == [2, 2]


def test_a_holdout_is_the_default_control_for_a_metric_it_has():
    frame = frame_of({"A": (30, 100), "B": (36, 100), "holdout": (20, 100)})
    table = compare_variants(frame, "converted").set_index("variant")
    assert table.attrs["control"] == "holdout" and table.loc["holdout", "test"] == "control"
    assert table.loc["A", "difference"] == pytest.approx(0.10)
    assert table.loc["A", "denominator"] == "recipients with a value of 'converted'"


def test_the_holdout_cannot_be_the_control_of_a_send_metric():
    with pytest.raises(InputError, match="nothing is sent to it"):
        compare_variants(outcome_table(), "delivered", control="holdout")


def test_columns_are_the_documented_ones():
    table = compare_variants(frame_of({"A": (45, 100), "B": (30, 100)}), "converted")
    assert table.columns.tolist()[:12] == ["variant", "recipients", "successes", "rate", "rate_low", "rate_high",
                                           "difference", "difference_low", "difference_high", "p_value", "test",
                                           "denominator"]


def test_bad_input_is_refused_in_plain_english():
    frame = frame_of({"A": (1, 2), "B": (1, 2)})
    with pytest.raises(InputError, match="no column 'bought'"):
        compare_variants(frame, "bought")
    with pytest.raises(InputError, match="control='C' is not a variant"):
        compare_variants(frame, "converted", control="C")
    with pytest.raises(InputError, match="must hold True/False"):
        compare_variants(frame.assign(converted="yes"), "converted")
    with pytest.raises(UnknownOptionError, match="Did you mean 'alpha'"):
        compare_variants(frame, "converted", alpah=0.1)


def test_compare_variants_is_exported_at_the_top_level():
    assert sendframe.compare_variants is compare_variants


def test_an_a_b_holdout_campaign_sent_to_the_sandbox_is_compared_from_its_outcome_table(tmp_path):
    """Real HTTP: assign_variants -> sendframe.variants(...).send -> records -> message_outcomes -> compare_variants."""
    with Sandbox(clock="manual") as sb, Client(sb.base_url, sb.username, sb.api_password) as client:
        contacts = pd.DataFrame({"phone": [f"447700900{i:03d}" for i in range(200)], "name": "Ana"})
        contacts = sendframe.assign_variants(contacts, {"A": 0.45, "B": 0.45, "holdout": 0.1}, seed=5)
        test = sendframe.variants({"A": sendframe.sms("Hi {name}", sender="Shop"),
                                   "B": sendframe.sms("{name}, today only", sender="Shop")})
        results = test.send(contacts, client=client, ledger=tmp_path / "ab.sqlite", progress=False)
        sb.advance(3600)  # every carrier outcome is final an hour later
        records = fetch_records(results["id"], client=client)
        outcomes = message_outcomes(results, records=records).join(contacts["variant"])
    table = compare_variants(outcomes, "delivered").set_index("variant")
    sizes = contacts["variant"].value_counts()
    assert (outcomes.loc[outcomes["variant"] == "holdout", "outcome"] == "holdout").all()
    assert table.loc["holdout", "recipients"] == sizes["holdout"] and math.isnan(table.loc["holdout", "rate"])
    for name in ("A", "B"):  # every accepted message of the variant is in its denominator
        accepted = ((outcomes["variant"] == name) & (outcomes["outcome"] == "accepted")).sum()
        delivered = ((outcomes["variant"] == name) & (outcomes["status"] == "DELIVRD")).sum()
        assert (table.loc[name, "recipients"], table.loc[name, "successes"]) == (accepted, delivered)
        assert table.loc[name, "rate_low"] <= table.loc[name, "rate"] <= table.loc[name, "rate_high"]
    assert table.loc["B", "test"] in ("two-proportion z-test", "Fisher's exact test (an expected count < 5)")
