"""The skip policy over whole columns gives the same answer as the row-by-row rule it replaced."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.campaign.policy import KEEP_REASONS, plan_rows
from sendframe.send_outcomes import SKIP_OUTCOMES

RULES = ["invalid_recipient", "opted_out", "missing_variable", "too_many_parts", "duplicate_recipient"]
_RULE_REASON = {"invalid_recipient": "invalid", "opted_out": "suppressed"}


def row_by_row(problems: pd.DataFrame, index: pd.Index, recipients: pd.Series, keep: frozenset[str],
               capped: np.ndarray | None = None, capped_reason: str = "") -> pd.DataFrame:
    """The rule as first written: one error at a time, the first reason by rank wins (the reference)."""
    n = len(index)
    reasons = np.full(n, "", dtype=object)
    messages = np.full(n, None, dtype=object)
    errors = problems[(problems["severity"] == "error") & problems["row"].notna()]
    positions = index.get_indexer(pd.Index(errors["row"].tolist())) if len(errors) else []
    for position, rule, message in zip(positions, errors["rule"], errors["message"], strict=True):
        reason = _RULE_REASON.get(rule, "preflight")
        if position < 0 or reason in keep:
            continue
        current = reasons[position]
        if not current or KEEP_REASONS.index(reason) < KEEP_REASONS.index(current):
            reasons[position], messages[position] = reason, message
    if capped is not None and "frequency" not in keep:
        over = capped & ((reasons == "") | np.isin(reasons, ["preflight", "duplicate"]))
        reasons[over] = "frequency"
        messages[over] = capped_reason
    skipped = reasons != ""
    if "duplicate" not in keep:
        key = pd.Series(np.asarray(recipients, dtype=object))
        candidates = ~skipped & key.notna().to_numpy()
        repeated = np.zeros(n, dtype=bool)
        repeated[candidates] = key[candidates].duplicated(keep="first").to_numpy()
        reasons[repeated] = "duplicate"
        messages[repeated] = [f"{value} already gets the message from an earlier row." for value in key[repeated]]
    action = ["send" if r == "" else SKIP_OUTCOMES[r] for r in reasons]
    return pd.DataFrame({"action": pd.array(action, dtype="str"), "reason": pd.array(messages, dtype="str")},
                        index=index)


@st.composite
def cases(draw):
    n = draw(st.integers(0, 30))
    labels = draw(st.lists(st.integers(-5, 200), min_size=n, max_size=n, unique=True))
    index = pd.Index(labels, name="contact")
    recipients = draw(st.lists(st.sampled_from(["a", "b", "c", "d", None]), min_size=n, max_size=n))
    rows = draw(st.lists(st.tuples(st.sampled_from(labels + [999]) if labels else st.just(999), st.sampled_from(RULES),
                                   st.sampled_from(["error", "warning"])), max_size=40))
    problems = pd.DataFrame({
        "row": pd.array([r for r, _, _ in rows] + [None], dtype="object"),
        "column": "phone", "rule": [rule for _, rule, _ in rows] + ["malformed_placeholder"],
        "message": [f"problem {i}" for i in range(len(rows))] + ["the template"],
        "severity": [sev for _, _, sev in rows] + ["error"],
    })
    keep = frozenset(draw(st.lists(st.sampled_from(KEEP_REASONS), max_size=2)))
    flags = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    capped = np.asarray(flags, dtype=bool) if draw(st.booleans()) else None
    return problems, index, pd.Series(recipients, dtype=object), keep, capped


@settings(max_examples=300, deadline=None)
@given(cases())
def test_plan_rows_over_columns_matches_the_row_by_row_rule(case):
    problems, index, recipients, keep, capped = case
    expected = row_by_row(problems, index, recipients, keep, capped, "over the cap")
    pd.testing.assert_frame_equal(plan_rows(problems, index, recipients, keep, capped, "over the cap"), expected)


def test_a_row_with_several_errors_takes_the_first_reason_by_rank_and_that_errors_message():
    problems = pd.DataFrame({"row": [7, 7, 7], "column": "x", "rule": ["missing_variable", "invalid_recipient",
                                                                       "invalid_recipient"],
                             "message": ["no name", "bad phone", "bad phone again"], "severity": "error"})
    plan = plan_rows(problems, pd.Index([7, 8]), pd.Series(["a", "a"]))
    assert plan.loc[7].tolist() == ["skipped_invalid", "bad phone"]
    assert plan.loc[8, "action"] == "send" and pd.isna(plan.loc[8, "reason"])  # row 7 does not send to a


def test_a_million_rows_are_planned_in_one_pass_of_array_work():
    n = 1_000_000
    recipients = pd.Series(np.char.add("346", (np.arange(n) % 900_000).astype(str)), dtype=object)
    problems = pd.DataFrame({"row": np.arange(0, n, 7), "column": "phone", "rule": "invalid_recipient",
                             "message": "not a phone number", "severity": "error"})
    plan = plan_rows(problems, pd.RangeIndex(n), recipients)
    counts = plan["action"].value_counts()
    assert counts["skipped_invalid"] == len(problems)
    assert counts["send"] + counts["skipped_duplicate"] + counts["skipped_invalid"] == n
    assert plan["reason"].iloc[900_001].endswith("already gets the message from an earlier row.")
