"""MessageCounter gives estimate's totals, template after template, from cached measurements."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sendframe
from sendframe.campaign.counter import MessageCounter
from sendframe.campaign.prepared import estimate

CONTACTS = pd.DataFrame({
    "phone": ["34600123456", "351912345678", "447700900123", "not a number", "34600123457", "5511912345678"],
    "name": ["ana", "joão", "Zoë 😀", None, "{brace}", "x" * 150],
    "amount": ["1234.5", "99", "-1000000", "n/a", "7", "0.25"],
    "city": ["lugo", "Évora", "€uro city", "vigo", "", "são paulo"],
})


def draft(template: str, encoding: str, parts: int | None) -> sendframe.Message:
    """The message being typed: the counter counts any template (even an empty one, which a message refuses);
    parts=None is no limit."""
    msg = sendframe.sms("x", sender="Shop", encoding=encoding)
    return dataclasses.replace(msg, fields={**msg.fields, "message": template, "parts": parts or 10**6})


def expected_totals(template: str, encoding: str, parts: int | None) -> dict:
    est = estimate(draft(template, encoding, parts), CONTACTS)
    present = est["text"].notna()
    return {
        "parts": int(est.loc[est["billable"], "parts"].sum()),
        "cost": float(est["cost"].sum()),
        "encodings": {k: int(v) for k, v in est["encoding"].value_counts().items()},
        "characters_max": int(est.loc[present, "length"].max()) if present.any() else 0,
        "missing_text": int((~present).sum()),
        "too_many_parts": int(est["too_many_parts"].sum()),
    }


def same(got: dict, want: dict) -> bool:
    return got["cost"] == pytest.approx(want["cost"]) and {k: v for k, v in got.items() if k != "cost"} == {
        k: v for k, v in want.items() if k != "cost"}


def observed(totals) -> dict:
    return {
        "parts": totals.parts, "cost": totals.cost, "encodings": totals.encodings,
        "characters_max": totals.characters_max, "missing_text": totals.missing_text,
        "too_many_parts": totals.too_many_parts,
    }


@pytest.mark.parametrize("template", [
    "Hi {name|capitalize}, you owe {amount|formatDotComma} in {city|upper}",
    "€" * 80 + "{name}",
    "{name}" + "[" * 70 + "{city|capitalizeAll}" + "a" * 60,
    "Plain text with no variables at all",
    "Code {OTP_CODE} · leave {UNSUB_URL} · {missing}",
    "",
])
@pytest.mark.parametrize("encoding", ["auto", "gsm", "gsm-pt", "utf-16"])
def test_counter_totals_equal_estimate(template, encoding):
    counter = MessageCounter(CONTACTS)
    got = counter.count(draft(template, encoding, 2))
    want = expected_totals(template, encoding, 2)
    assert same(observed(got), want), (observed(got), want)


def test_forced_by_names_the_characters_that_need_utf16():
    counter = MessageCounter(CONTACTS)
    assert counter.count(draft("Hi {name}", "auto", None)).forced_by == "ë😀"  # neither is in gsm or gsm-pt
    assert counter.count(draft("Olá {city}", "auto", None)).forced_by == ""  # á and É fit gsm-pt


_pieces = st.sampled_from(["Hi ", "€", "😀", "{name}", "{name|upper}", "{city|capitalize}", "{amount|formatCommaDot}",
                           "a" * 40, "ç", "[", "{OTP_CODE}"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_pieces, max_size=12), st.sampled_from(["auto", "gsm", "utf-16"]), st.sampled_from([None, 1, 3]))
def test_counter_agrees_with_estimate_on_any_template(pieces, encoding, parts):
    template = "".join(pieces)
    got = observed(MessageCounter(CONTACTS).count(draft(template, encoding, parts)))
    want = expected_totals(template, encoding, parts)
    assert same(got, want), (template, got, want)


def test_counter_does_not_change_the_contacts():
    before = CONTACTS.copy()
    MessageCounter(CONTACTS).count(draft("Hi {name|upper} {city}", "auto", None))
    pd.testing.assert_frame_equal(CONTACTS, before)


def test_a_column_is_measured_once_and_reused():
    counter = MessageCounter(CONTACTS)
    counter.count(draft("Hi {name}", "auto", None))
    first = counter._pieces[("name", None)]
    counter.count(draft("Hello {name}, again {name}", "auto", None))
    assert counter._pieces[("name", None)] is first


def test_large_table_keystroke_uses_cached_measurements():
    big = pd.DataFrame({"phone": np.repeat(CONTACTS["phone"].to_numpy(), 2000),
                        "name": [f"name {i}" for i in range(12000)]})
    counter = MessageCounter(big)
    totals = counter.count(draft("Hi {name}", "auto", None))
    assert totals.rows == 12000 and totals.encodings == {"gsm": 12000}


def test_the_counters_recipients_are_the_rows_the_send_sends_on_the_shipped_sample():
    contacts = sendframe.read_contacts(Path(__file__).parents[2] / "data" / "contacts.csv")
    msg = sendframe.sms("Hi {name}, see you soon", sender="Shop", parts=2, encoding="auto")
    totals = MessageCounter(contacts).count(msg)
    with pytest.warns(sendframe.errors.RowsSkippedWarning):
        sent = msg.send(contacts, dry_run=True, progress=False)
    assert totals.rows == len(contacts) > totals.recipients  # the sample has repeats and invalid rows
    assert totals.recipients == len(msg.ready(contacts)) == int((sent["outcome"] == "dry_run").sum())
    assert totals.cost == pytest.approx(msg.estimate(contacts).attrs["totals"]["cost"])
    kept = MessageCounter(contacts).count(msg, keep="duplicate")
    assert totals.recipients < kept.recipients == len(msg.ready(contacts, keep="duplicate"))


def test_a_certified_messages_counter_costs_what_its_estimate_costs():
    msg = sendframe.sms("Hi {name}", sender="Shop", certified=True)
    totals = MessageCounter(CONTACTS).count(msg)
    uncertified = MessageCounter(CONTACTS).count(msg.replace(certified=False))
    assert totals.cost == pytest.approx(msg.estimate(CONTACTS).attrs["totals"]["cost"])
    assert totals.cost > uncertified.cost


def test_rows_sent_under_keep_preflight_that_the_service_refuses_cost_nothing_and_add_no_parts():
    contacts = pd.DataFrame({"phone": ["34600000001", "34600000002", "34600000003"], "name": ["Ana", None, "Bo" * 200]})
    msg = sendframe.sms("Hi {name}, " + "x" * 150, sender="Shop")
    totals = MessageCounter(contacts).count(msg, keep="preflight")
    est = msg.estimate(contacts, keep="preflight")
    assert totals.recipients == 3
    assert totals.parts == int(est.loc[est["billable"], "parts"].sum()) == 1
    assert totals.cost == pytest.approx(float(est["cost"].sum()))
