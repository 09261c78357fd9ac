"""Numbers whose line cannot receive a text message: flagged by preflight for the SMS-like channels, left out of a
send with their own outcome (skipped_landline) unless kept, and not priced."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.preflight import preflight
from sendframe.errors import RowsSkippedWarning

MOBILE, FIXED, TOLL_FREE, PREMIUM, US = "34600123456", "34912345678", "34900123456", "34803123456", "12025550123"


@pytest.fixture
def contacts():
    frame = pd.DataFrame({"Mobile": ["600 123 456", "912 345 678", "900 123 456", "803 123 456", "+1 202 555 0123"],
                          "name": ["Ana", "Bo", "Cy", "Di", "Ed"]})
    return sendframe.read_contacts(frame)


@pytest.mark.parametrize("channel", ["sms", "landingsms"])
def test_preflight_flags_fixed_toll_free_and_premium_lines_for_text_messages(contacts, channel):
    make = {"sms": sendframe.sms, "landingsms": sendframe.landing_sms}[channel]
    problems = preflight(make("Hi {name}", sender="Shop"), contacts)
    landlines = problems[problems["rule"] == "landline"]
    assert landlines["row"].tolist() == [1, 2, 3]
    assert (landlines["severity"] == "error").all()
    assert "34912345678 is a fixed line number, which cannot receive a text message" in landlines["message"].iloc[0]
    assert "toll free" in landlines["message"].iloc[1] and "premium rate" in landlines["message"].iloc[2]


def test_a_fixed_line_or_mobile_number_is_sent_and_voice_calls_landlines(contacts):
    assert contacts["phone_type"].astype(str).tolist() == ["mobile", "fixed_line", "toll_free", "premium_rate",
                                                           "fixed_line_or_mobile"]
    voice = sendframe.voice("Hi {name}", language="es_ES", gender="F")
    assert "landline" not in set(preflight(voice, contacts)["rule"])


def test_whatsapp_flags_landlines_too(contacts):
    problems = preflight(sendframe.whatsapp(1, "34911111111", body_fields=["name"]), contacts)
    assert problems.loc[problems["rule"] == "landline", "row"].tolist() == [1, 2, 3]
    assert "cannot receive a WhatsApp message" in problems.loc[problems["rule"] == "landline", "message"].iloc[0]


def test_a_column_not_read_by_read_contacts_gets_its_types_worked_out():
    frame = pd.DataFrame({"phone": [MOBILE, FIXED, US], "name": ["a", "b", "c"]})
    problems = preflight(sendframe.sms("Hi {name}", sender="Shop"), frame)
    assert problems.loc[problems["rule"] == "landline", "row"].tolist() == [1]


def test_the_plan_skips_landlines_and_the_estimate_prices_only_what_is_sent(contacts):
    msg = sendframe.sms("Hi {name}", sender="Shop")
    plan = msg.plan(contacts)
    assert plan["action"].tolist() == ["send", "skipped_landline", "skipped_landline", "skipped_landline", "send"]
    est = msg.estimate(contacts)
    assert est["billable"].tolist() == [True, False, False, False, True]
    assert est.attrs["totals"]["cost"] == pytest.approx(est["cost"].iloc[[0, 4]].sum())
    assert est["cost"].iloc[1:4].sum() == 0
    kept = msg.plan(contacts, keep="landline")
    assert (kept["action"] == "send").all()


def test_a_send_leaves_landlines_out_with_their_own_outcome_unless_kept(sb, client, contacts):
    msg = sendframe.sms("Hi {name}", sender="Shop")
    with pytest.warns(RowsSkippedWarning, match=r"3 whose number's line cannot receive.*\(skipped_landline\)"):
        result = msg.send(contacts, client=client, progress=False)
    assert result["outcome"].astype(str).tolist() == ["accepted", "skipped_landline", "skipped_landline",
                                                      "skipped_landline", "accepted"]
    stored = sb.messages().set_index("id").loc[result["id"].dropna()]
    assert sorted(stored["recipient"].astype(str)) == [US, MOBILE]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RowsSkippedWarning)
        kept = msg.send(contacts, dry_run=True, progress=False, keep="landline")
    assert (kept["outcome"] == "dry_run").all()
