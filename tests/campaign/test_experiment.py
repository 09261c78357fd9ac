"""Variants: one campaign, one ledger, a message per variant, a holdout that is never sent."""

from __future__ import annotations

import pandas as pd
import pytest

import sendframe
from sendframe.errors import InputError, LedgerMismatchError


@pytest.fixture
def contacts():
    n = 12
    return pd.DataFrame({
        "phone": [f"3460077{i:04d}" for i in range(n)],
        "name": [f"n{i}" for i in range(n)],
        "variant": ["A", "B", "holdout"] * (n // 3),
    })


@pytest.fixture
def test_campaign():
    return sendframe.variants({"A": sendframe.sms("Hi {name}", sender="Shop"),
                               "B": sendframe.sms("{name}, a much longer text that costs the same", sender="Shop")})


def test_each_variant_gets_its_message_through_one_ledger_and_the_holdout_nothing(sb, client, tmp_path, contacts,
                                                                                   test_campaign):
    ledger = tmp_path / "ab.sqlite"
    result = test_campaign.send(contacts, client=client, ledger=ledger, progress=False)
    assert result.index.equals(contacts.index)
    assert result["outcome"].astype(str).tolist() == ["accepted", "accepted", "holdout"] * 4
    assert result["variant"].tolist() == contacts["variant"].tolist()
    assert result.loc[result["variant"] == "holdout", "recipient"].tolist() == contacts["phone"][2::3].tolist()
    stored = sb.messages().set_index("id").loc[result["id"].dropna()]
    texts = dict(zip(result["id"].dropna(), result.loc[result["id"].notna(), "text"], strict=True))
    assert stored["message"].tolist() == [texts[i] for i in stored.index]
    held = set(contacts.loc[contacts["variant"] == "holdout", "phone"])
    assert held.isdisjoint(set(sb.messages()["recipient"]))
    again = test_campaign.send(contacts, client=client, ledger=ledger, progress=False)  # resumes: nothing twice
    assert again["id"].fillna("").tolist() == result["id"].fillna("").tolist()
    assert sb.messages()["recipient"].isin(contacts["phone"]).sum() == 8
    other = sendframe.variants({"A": sendframe.sms("Changed", sender="Shop"), "B": test_campaign.messages["B"]})
    with pytest.raises(LedgerMismatchError, match="variant A"):
        other.send(contacts, client=client, ledger=ledger, progress=False)


def test_estimate_and_preflight_per_variant(contacts, test_campaign):
    est = test_campaign.estimate(contacts)
    by_variant = est.attrs["by_variant"]
    assert by_variant.loc["A", "billable"] == 4 and by_variant.loc["holdout", "cost"] == 0
    assert est.loc[est["variant"] == "holdout", "billable"].eq(False).all()
    problems = test_campaign.preflight(contacts.assign(name=[None] + [f"n{i}" for i in range(1, 12)]))
    assert problems[["variant", "rule"]].values.tolist() == [["A", "missing_variable"]]


def test_a_variant_without_a_message_is_refused(contacts, test_campaign):
    with pytest.raises(InputError, match="'C'"):
        test_campaign.plan(contacts.assign(variant=["A", "B", "C"] * 4))
    with pytest.raises(InputError, match="no 'variant' column"):
        test_campaign.plan(contacts.drop(columns="variant"))


def test_a_dry_run_sends_what_the_estimate_priced_and_refuses_an_out_folder(contacts, test_campaign, tmp_path):
    campaign = test_campaign
    contacts = pd.concat([contacts, contacts.iloc[[0]].assign(variant="B")], ignore_index=True)  # a repeat across
    estimate = campaign.estimate(contacts)
    with pytest.warns(sendframe.errors.RowsSkippedWarning, match="repeats"):
        result = campaign.send(contacts, dry_run=True, progress=False)
    assert (result["outcome"] == "dry_run").tolist() == (estimate["action"] == "send").tolist()
    assert result["parts"].fillna(0).tolist() == estimate["parts"].where(estimate["action"] == "send", 0).tolist()
    with pytest.raises(InputError, match="out="):
        campaign.send(contacts, dry_run=True, out=tmp_path / "results")


def test_a_variant_without_rows_and_an_all_holdout_table_are_priced_and_sent(contacts, test_campaign):
    only_b = contacts.assign(variant=["B", "holdout", "holdout"] * 4)  # variant A, listed first, has no row
    est = test_campaign.estimate(only_b)
    assert est.attrs["currency"] == est.attrs["totals"]["currency"] == "EUR"
    assert est.attrs["totals"]["billable"] == 4
    held = contacts.assign(variant="holdout")
    assert test_campaign.estimate(held).attrs["totals"]["cost"] == 0
    result = test_campaign.send(held, dry_run=True, progress=False)
    assert result["outcome"].astype(str).tolist() == ["holdout"] * 12
    assert result["recipient"].tolist() == contacts["phone"].tolist()
