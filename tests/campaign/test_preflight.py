"""preflight: each rule gives the right row; a clean campaign gives an empty frame."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sendframe.campaign.contacts import read_contacts
from sendframe.campaign.counter import MessageCounter
from sendframe.campaign.message import mailing, message, sms, whatsapp
from sendframe.campaign.preflight import PROBLEM_COLUMNS, preflight
from sendframe.campaign.prepared import estimate
from sendframe.errors import InputError
from sendframe.text.filters import is_number

ES, ES2, PT = "34600123456", "34600123457", "351912345678"


def problems(frame: pd.DataFrame, rule: str) -> pd.DataFrame:
    return frame[frame["rule"] == rule]


def test_a_clean_campaign_gives_an_empty_frame_with_the_problem_columns():
    contacts = pd.DataFrame({"phone": [ES, PT], "name": ["Ana", "Rui"]})
    found = preflight(sms("Hola {name}", sender="Shop"), contacts)
    assert found.empty
    assert tuple(found.columns) == PROBLEM_COLUMNS


def test_invalid_recipient_names_the_row_the_column_and_the_value():
    found = preflight(sms("Hi", sender="Shop"), pd.DataFrame({"phone": [ES, "12345"]}, index=["a", "b"]))
    row = problems(found, "invalid_recipient").iloc[0]
    assert (row["row"], row["column"], row["severity"]) == ("b", "phone", "error")
    assert "'12345'" in row["message"] and "102" in row["message"]


def test_invalid_recipient_shows_what_was_written_when_read_contacts_could_not_repair_it():
    contacts = read_contacts(pd.DataFrame({"phone": ["3.46001e+10"]}))
    row = problems(preflight(sms("Hi", sender="Shop"), contacts), "invalid_recipient").iloc[0]
    assert "3.46001e+10" in row["message"]


def test_invalid_email_for_mailing():
    contacts = pd.DataFrame({"email": ["ana@example.com", "not-an-email"]})
    found = preflight(mailing("Hi", "<p>Hi</p>", from_email="news@shop.example"), contacts)
    assert problems(found, "invalid_recipient")["row"].tolist() == [1]
    assert "email address" in problems(found, "invalid_recipient").iloc[0]["message"]


def test_duplicate_recipient_is_a_warning_pointing_at_the_first_row():
    found = preflight(sms("Hi", sender="Shop"), pd.DataFrame({"phone": [ES, ES2, ES]}))
    row = problems(found, "duplicate_recipient").iloc[0]
    assert (row["row"], row["severity"]) == (2, "warning")
    assert "row 0" in row["message"]


def test_missing_variable_is_reported_per_row_and_per_variable():
    contacts = pd.DataFrame({"phone": [ES, ES2], "name": ["Ana", None], "city": [None, None]})
    found = problems(preflight(sms("Hi {name} from {city}", sender="Shop"), contacts), "missing_variable")
    assert sorted(zip(found["row"], found["column"], strict=True)) == [(0, "city"), (1, "city"), (1, "name")]
    assert all("107" in m for m in found["message"])


def test_a_variable_with_no_column_at_all_is_missing_in_every_row():
    found = problems(preflight(sms("Hi {name}", sender="Shop"), pd.DataFrame({"phone": [ES, ES2]})),
                     "missing_variable")
    assert found["row"].tolist() == [0, 1]
    assert "no column 'name'" in found.iloc[0]["message"]


def test_too_many_parts_says_the_service_would_answer_105():
    contacts = pd.DataFrame({"phone": [ES, ES2], "body": ["short", "a" * 161]})
    found = problems(preflight(sms("{body}", sender="Shop", parts=1), contacts), "too_many_parts")
    assert found["row"].tolist() == [1]
    assert "105" in found.iloc[0]["message"] and "2 parts" in found.iloc[0]["message"]
    assert problems(preflight(sms("{body}", sender="Shop", parts=2), contacts), "too_many_parts").empty


def test_characters_outside_the_encoding_are_a_warning_naming_them():
    contacts = pd.DataFrame({"phone": [ES, ES2], "name": ["Ana", "Łukasz"]})
    found = problems(preflight(sms("Hi {name}", sender="Shop"), contacts), "unencodable_characters")
    assert found["row"].tolist() == [1]
    assert "'Ł'" in found.iloc[0]["message"] and found.iloc[0]["severity"] == "warning"
    in_utf16 = preflight(sms("Hi {name}", sender="Shop", encoding="utf-16"), contacts)
    assert problems(in_utf16, "unencodable_characters").empty


@pytest.mark.parametrize(
    "suppression",
    ["file", pd.DataFrame({"phone": ["+34 600 123 456"]}), ["0034600123456"], pd.Series(["600123456"])],
)
def test_opted_out_numbers_from_a_path_frame_or_list(tmp_path, suppression):
    if isinstance(suppression, str):
        path = tmp_path / "suppression.csv"
        path.write_text("phone,reason\n+34 600 12 34 56,STOP\n", encoding="utf-8")
        suppression = path
    found = problems(preflight(sms("Hi", sender="Shop"), pd.DataFrame({"phone": [ES, ES2]}),
                               suppression=suppression), "opted_out")
    assert found["row"].tolist() == [0]


def test_opted_out_emails_compare_without_case():
    found = preflight(mailing("Hi", "<p>Hi</p>", from_email="news@shop.example"),
                      pd.DataFrame({"email": ["Ana@Example.com", "bo@example.com"]}), suppression=["ana@example.com"])
    assert problems(found, "opted_out")["row"].tolist() == [0]


def test_shorten_values_that_are_not_urls():
    contacts = pd.DataFrame({"phone": [ES, ES2], "link": ["https://shop.example/p/1", "shop.example/p/2"]})
    found = problems(preflight(sms("See {link|shorten}", sender="Shop"), contacts), "shorten_not_url")
    assert found["row"].tolist() == [1] and found.iloc[0]["column"] == "link"


def test_format_filters_on_non_numbers_are_warnings():
    contacts = pd.DataFrame({"phone": [ES, ES2], "amount": ["1234.5", "n/a"]})
    found = problems(preflight(sms("{amount|formatDotComma} EUR", sender="Shop"), contacts), "format_not_number")
    assert found["row"].tolist() == [1] and found.iloc[0]["severity"] == "warning"


def test_whatsapp_fields_missing_per_row_and_wrong_field_counts():
    contacts = pd.DataFrame({"phone": [ES, ES2], "h": ["x", "y"], "b1": ["1", None], "b2": ["2", "3"],
                             "btn": ["a", "b"]})
    fields = {"header_fields": ["h"], "body_fields": ["b1", "b2"], "call_to_action_fields": ["btn"]}
    ok = preflight(whatsapp(1003, "34911111111", **fields), contacts.iloc[:1])
    assert ok.empty
    found = preflight(whatsapp(1003, "34911111111", **fields), contacts)
    row = problems(found, "whatsapp_field_missing").iloc[0]
    assert (row["row"], row["column"]) == (1, "b1") and "141" in row["message"]
    wrong = problems(preflight(whatsapp(1002, "34911111111"), contacts), "whatsapp_template")
    assert wrong.iloc[0]["column"] == "bodyFields" and "needs 1" in wrong.iloc[0]["message"]


def test_an_unknown_whatsapp_template_would_answer_140():
    found = problems(preflight(whatsapp(9999, "34911111111"), pd.DataFrame({"phone": [ES]})), "whatsapp_template")
    assert "140" in found.iloc[0]["message"]


def test_campaign_problems_come_first_then_rows_in_order():
    contacts = pd.DataFrame({"phone": ["bad", ES], "name": [None, "Ana"]}, index=["x", "y"])
    found = preflight(sms("Hi {name|nofilter}", sender="Shop"), contacts)
    assert found["row"].tolist() == [None, "x"]
    assert found["rule"].tolist() == ["invalid_template", "invalid_recipient"]


def test_the_contacts_frame_is_not_modified():
    contacts = pd.DataFrame({"phone": [ES, ES, "1"], "name": [None, "Ana", "Bo"]})
    before = contacts.copy()
    preflight(sms("Hi {name}", sender="Shop"), contacts, suppression=[ES])
    pd.testing.assert_frame_equal(contacts, before)


def test_unknown_channel_and_missing_recipient_column_are_input_errors():
    with pytest.raises(InputError, match="Unknown channel"):
        preflight(message("fax", message="Hi"), pd.DataFrame({"phone": [ES]}))
    with pytest.raises(InputError, match="no email column"):
        preflight(mailing("Hi", "<p>Hi</p>", from_email="news@shop.example"), pd.DataFrame({"phone": [ES]}))


def test_auto_encoding_counts_parts_in_the_encoding_estimate_chooses_for_each_row():
    contacts = pd.DataFrame({"phone": [ES, ES2, PT], "body": ["Olá " + "a" * 150, "😀 " + "a" * 100, "plain"]})
    found = preflight(sms("{body}", sender="Shop", encoding="auto"), contacts)
    over = problems(found, "too_many_parts")
    assert over["row"].tolist() == [1] and "in utf-16" in over.iloc[0]["message"]
    assert problems(found, "unencodable_characters").empty  # the cheapest encoding carries every character
    chosen = estimate(sms("{body}", sender="Shop", encoding="auto", parts=1), contacts)
    assert chosen.index[chosen["too_many_parts"]].tolist() == over["row"].tolist()
    assert problems(preflight(sms("{body}", sender="Shop", encoding="gsm"), contacts), "too_many_parts").empty


def test_an_unknown_encoding_is_an_input_error_naming_auto_among_the_choices():
    with pytest.raises(InputError, match="'auto'"):
        preflight(sms("Hi", sender="Shop", encoding="ucs2"), pd.DataFrame({"phone": [ES]}))


def test_a_frame_from_read_contacts_is_checked_with_its_own_flags_and_repeats():
    contacts = read_contacts(pd.DataFrame({"Mobile": ["+34 600 12 34 56", "nope", "600123456"]}))
    found = preflight(sms("Hi", sender="Shop"), contacts)
    assert problems(found, "invalid_recipient")["row"].tolist() == contacts.index[~contacts["phone_valid"]].tolist()
    repeat = problems(found, "duplicate_recipient").iloc[0]
    assert repeat["row"] == 2 and "34600123456 already appears in row 0" in repeat["message"]


def test_a_repeat_among_text_labels_and_missing_numbers_names_the_first_row():
    contacts = pd.DataFrame({"phone": [ES, None, ES, ES]}, index=["a", "b", "c", "d"])
    found = preflight(sms("Hi", sender="Shop"), contacts)
    assert problems(found, "invalid_recipient")["row"].tolist() == ["b"]
    repeats = problems(found, "duplicate_recipient")
    assert repeats["row"].tolist() == ["c", "d"]
    assert all("already appears in row 'a'" in m for m in repeats["message"])


def test_messages_show_each_value_as_python_writes_it():
    contacts = pd.DataFrame({"phone": [ES, ES2, PT], "amount": ["O'Brien", "n/a", "O'Brien"]})
    found = problems(preflight(sms("{amount|formatDotComma}", sender="Shop"), contacts), "format_not_number")
    assert found["row"].tolist() == [0, 1, 2]
    assert found["message"].tolist()[0] == found["message"].tolist()[2]
    assert found.iloc[0]["message"].startswith('''amount: "O'Brien" is not a number''')


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="0123456789-.,e +\u0661\n", max_size=6) | st.none(), min_size=1, max_size=12))
def test_the_number_rule_over_a_column_is_the_format_filters_rule(amounts):
    contacts = pd.DataFrame({"phone": [ES] * len(amounts), "amount": pd.Series(amounts, dtype="str")})
    found = problems(preflight(sms("{amount|formatCommaDot}", sender="Shop"), contacts), "format_not_number")
    expected = [i for i, v in enumerate(amounts) if v is not None and not is_number(v)]
    assert found["row"].tolist() == expected


@pytest.mark.slow
def test_the_intake_benchmark_times_preflight_with_auto_encoding_and_reports_its_ratios():
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_intake.py"
    proc = subprocess.run([sys.executable, str(script), "--quick", "--repeat", "1"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "sendframe.preflight (encoding=auto)" in proc.stdout and "refuses" not in proc.stdout
    assert "intake / read_csv" in proc.stdout and "peak memory of the process" in proc.stdout


@pytest.mark.parametrize("phones", [
    pd.Series([34600123456, 600123456, 34600123456, 34600123457], dtype="int64"),
    pd.Series([34600123456.0, 600123456.0, 34600123456.0, 34600123457.0, float("nan")]),
    pd.Series([34600123456, 600123456, 34600123456, 34600123457, None], dtype="Int64"),
])
def test_a_numeric_phone_column_is_valid_as_the_send_writes_it_in_preflight_plan_counter_and_send(phones):
    # one rule (sendable_keys) says who is valid and who is the same: the views and the send cannot disagree
    contacts = pd.DataFrame({"phone": phones})
    msg = sms("Hi", sender="Shop")
    found = msg.preflight(contacts)
    invalid = [1] + ([4] if len(phones) == 5 else [])
    assert problems(found, "invalid_recipient")["row"].tolist() == invalid
    assert problems(found, "duplicate_recipient")["row"].tolist() == [2]
    prepared = msg.prepare(contacts)
    assert prepared.plan["action"].tolist()[:4] == ["send", "skipped_invalid", "skipped_duplicate", "send"]
    assert prepared.recipient_key.isna().to_numpy().nonzero()[0].tolist() == invalid
    assert MessageCounter(contacts).count(msg).recipients == 2
    assert estimate(msg, contacts)["billable"].tolist()[:4] == [True, False, True, True]
    result = msg.send(contacts, dry_run=True, progress=False)
    assert result.loc[result["outcome"] == "dry_run", "recipient"].tolist() == ["34600123456", "34600123457"]
