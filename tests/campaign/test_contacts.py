"""read_contacts: phone repair, flags, duplicates, variables kept, inputs untouched."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sendframe
from sendframe.api.number_types import number_types
from sendframe.api.recipients import is_valid_email, is_valid_phone, normalise_phone, recipient_key
from sendframe.campaign.columns import recipient_column
from sendframe.campaign.contacts import read_contacts
from sendframe.errors import InputError, UnknownOptionError

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("34600123456", "34600123456"),
        ("+34600123456", "34600123456"),
        ("0034600123456", "34600123456"),
        ("00 34 600 123 456", "34600123456"),
        ("+34 600 12 34 56", "34600123456"),
        ("600-123-456", "34600123456"),
        ("600 123 456", "34600123456"),  # national number: the default region's prefix
        ("34600123456.0", "34600123456"),  # went through a float column
        ("+44 7700 900123", "447700900123"),
    ],
)
def test_phone_forms_from_spreadsheets_are_repaired(raw, expected):
    out = read_contacts(pd.DataFrame({"phone": [raw]}))
    assert out.loc[0, "phone"] == expected
    assert bool(out.loc[0, "phone_valid"]) is True
    assert out.loc[0, "phone_raw"] == raw


def test_float_column_numbers_are_repaired():
    out = read_contacts(pd.DataFrame({"phone": [34600123456.0, 351912345678.0]}))
    assert out["phone"].tolist() == ["34600123456", "351912345678"]


@pytest.mark.parametrize("raw", ["12345", "3.46001e+10", "+34 600 12 34 56 78 90", "call me", None])
def test_unrepairable_numbers_become_missing_and_invalid(raw):
    out = read_contacts(pd.DataFrame({"phone": [raw]}))
    assert pd.isna(out.loc[0, "phone"])
    assert bool(out.loc[0, "phone_valid"]) is False


def test_national_numbers_use_the_default_region():
    out = read_contacts(pd.DataFrame({"phone": ["07700 900123"]}), default_region="GB")
    assert out.loc[0, "phone"] == "447700900123"


def test_second_and_later_rows_with_the_same_number_are_duplicates():
    frame = pd.DataFrame({"phone": ["+34 600 123 456", "600123456", "0034600123456", "600123457", "12", "12"]})
    out = read_contacts(frame)
    assert out["duplicate"].tolist() == [False, True, True, False, False, False]  # invalid ones are not duplicates


def test_without_a_phone_column_duplicates_compare_emails_ignoring_case():
    emails = ["Ana@Example.com", " ana@example.com", "bo@example.com"]
    out = read_contacts(pd.DataFrame({"email": emails}), phone_column=None)
    assert out["duplicate"].tolist() == [False, True, False]
    assert out["email"].tolist()[1] == "ana@example.com"


def test_emails_are_validated():
    emails = ["ana@example.com", "ana@localhost", "a b@x.es", None]
    out = read_contacts(pd.DataFrame({"phone": ["34600123456"] * 4, "email": emails}))
    assert out["email_valid"].tolist() == [True, False, False, False]


def test_other_columns_are_kept_as_variables_and_the_input_is_not_modified():
    frame = pd.DataFrame({"phone": ["+34 600 123 456"], "name": ["Ana"], "zip": ["08001"]}, index=["a"])
    before = frame.copy()
    out = read_contacts(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert out.loc["a", "name"] == "Ana" and out.loc["a", "zip"] == "08001"
    assert list(out.columns) == ["phone", "phone_raw", "name", "zip", "phone_valid", "phone_type", "duplicate"]


def test_csv_is_read_as_text_so_leading_zeros_and_na_words_survive(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("phone,zip,amount\n600123456,08001,n/a\n600123457,00100,\n", encoding="utf-8")
    out = read_contacts(path)
    assert out["zip"].tolist() == ["08001", "00100"]
    assert out.loc[0, "amount"] == "n/a"
    assert pd.isna(out.loc[1, "amount"])


def test_a_table_without_a_recipient_column_is_refused_with_the_columns_named():
    with pytest.raises(InputError, match="no recipient column.*name"):
        read_contacts(pd.DataFrame({"name": ["Ana"]}))


def test_a_missing_file_is_a_plain_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_contacts(tmp_path / "nope.csv")


def test_sample_contacts_hold_the_cases_the_demo_needs():
    out = read_contacts(DATA / "contacts.csv")
    assert 150 <= len(out) <= 250
    assert out["duplicate"].sum() >= 2
    assert (~out["phone_valid"]).sum() >= 3
    assert (~out["email_valid"]).sum() >= 1
    magic = out["phone"].dropna().str.match(r"^447700900\d{3}$")
    assert magic.sum() >= 4
    assert set(out.columns) >= {"name", "city", "amount"}


def test_a_repeated_email_is_a_duplicate_even_when_the_phones_differ():
    frame = pd.DataFrame({"phone": ["600123456", "600123457", "600123458", "600123459", "600123456"],
                          "email": ["ana@example.com", "ANA@example.com ", "bo@example.com", None, None]})
    out = read_contacts(frame)
    # row 1 repeats row 0's email, row 4 repeats row 0's phone; missing emails are never duplicates
    assert out["duplicate"].tolist() == [False, True, False, False, True]


def test_a_message_skips_the_repeats_of_the_one_column_its_channel_sends_to():
    out = read_contacts(pd.DataFrame({"phone": ["600123456", "600123457", "600123456"],
                                      "email": ["ana@example.com", "Ana@Example.com", "bo@example.com"]}))
    assert out["duplicate"].tolist() == [False, True, True]
    assert sendframe.sms("Hi", sender="Shop").plan(out)["action"].tolist() == ["send", "send", "skipped_duplicate"]
    assert sendframe.mailing("Hi", "Hello", from_email="a@b.es").plan(out)["action"].tolist() == [
        "send", "skipped_duplicate", "send"]


# ---- recipient columns as analysts name them ------------------------------------------------------------

def test_recipient_columns_are_found_by_their_usual_names_and_named_phone_and_email():
    frame = pd.DataFrame({"Móvil": ["+34 600 123 456"], "Nombre": ["Ana"], "E-Mail": [" Ana@Example.com "]})
    out = read_contacts(frame)
    assert list(out.columns) == ["phone", "phone_raw", "Nombre", "email", "email_raw", "phone_valid", "email_valid",
                                 "phone_type", "duplicate"]
    assert out.loc[0, "phone"] == "34600123456" and out.loc[0, "phone_raw"] == "+34 600 123 456"
    assert out.loc[0, "email"] == "Ana@Example.com" and out.loc[0, "email_raw"] == " Ana@Example.com "
    assert out.attrs["recipient_columns"] == {"phone": "Móvil", "email": "E-Mail"}


def test_a_named_recipient_column_is_used_even_with_another_name():
    frame = pd.DataFrame({"Mobile": ["600123456"], "Work phone": ["+44 (0)7700 900123"]})
    out = read_contacts(frame, phone_column="work phone")  # compared without case and spaces
    assert out["phone"].tolist() == ["447700900123"] and out["Mobile"].tolist() == ["600123456"]
    assert out.attrs["recipient_columns"] == {"phone": "Work phone"}


def test_a_named_column_that_is_absent_is_a_plain_error():
    with pytest.raises(InputError, match="no column 'Movil2' for phone recipients.*columns are: phone"):
        read_contacts(pd.DataFrame({"phone": ["600123456"]}), phone_column="Movil2")


def test_a_phone_column_besides_the_named_one_is_refused_rather_than_overwritten():
    with pytest.raises(InputError, match="column 'phone' besides 'Mobile'"):
        read_contacts(pd.DataFrame({"Mobile": ["600123456"], "phone": ["611222333"]}), phone_column="Mobile")


def test_none_leaves_a_recipient_column_out():
    out = read_contacts(pd.DataFrame({"phone": ["600123456"], "email": ["a@b.es"]}), phone_column=None)
    assert "phone_valid" not in out.columns and out["phone"].tolist() == ["600123456"]
    assert out.attrs["recipient_columns"] == {"email": "email"}


def test_unknown_keywords_are_refused_with_a_did_you_mean():
    with pytest.raises(UnknownOptionError, match="unknown option 'phone_col'. Did you mean 'phone_column'"):
        read_contacts(pd.DataFrame({"phone": ["600123456"]}), phone_col="phone")
    with pytest.raises(UnknownOptionError, match="Did you mean 'default_region'"):
        read_contacts(pd.DataFrame({"phone": ["600123456"]}), region="GB")


def test_read_options_apply_to_files_only_and_reach_the_reader(tmp_path):
    with pytest.raises(InputError, match="sep apply when reading a file"):
        read_contacts(pd.DataFrame({"phone": ["600123456"]}), sep=";")
    path = tmp_path / "c.txt"
    path.write_bytes("Teléfono|Importe\n600123456|12,5\n".encode("cp1252"))
    out = read_contacts(path, sep="|", encoding="cp1252")
    assert out["phone"].tolist() == ["34600123456"] and out["Importe"].tolist() == ["12,5"]


def test_an_unknown_default_region_is_refused():
    with pytest.raises(InputError, match="default_region 'SPAIN'"):
        read_contacts(pd.DataFrame({"phone": ["600123456"]}), default_region="SPAIN")
    out = read_contacts(pd.DataFrame({"phone": ["600123456", "34600123456"]}), default_region=None)
    assert out["phone_valid"].tolist() == [False, True]  # national numbers stay unrepaired


def test_the_source_of_the_recipient_columns_survives_the_usual_frame_operations():
    out = read_contacts(pd.DataFrame({"Mobile": ["600123456", "611222333"], "n": ["1", "2"]}))
    for derived in (out.copy(), out.head(1), out[out["phone_valid"]], out.assign(x=1), out.sort_values("n"),
                    out.loc[:, ["phone", "n"]]):
        assert derived.attrs["recipient_columns"] == {"phone": "Mobile"}


def test_reading_its_own_output_again_gives_the_same_recipients(tmp_path):
    first = read_contacts(pd.DataFrame({"Mobile": ["+34 600 123 456", "nope"], "email": ["a@b.es", "x"]}))
    path = tmp_path / "again.csv"
    first.to_csv(path, index=False)
    second = read_contacts(path)
    assert list(second.columns) == list(first.columns)
    assert second["phone"].tolist() == first["phone"].tolist()
    assert second["phone_valid"].tolist() == first["phone_valid"].tolist()


def test_a_frame_with_a_repeated_index_keeps_it():
    frame = pd.DataFrame({"phone": ["600123456", "600123456", "611222333"]}, index=["a", "a", "b"])
    out = read_contacts(frame)
    assert list(out.index) == ["a", "a", "b"] and out["duplicate"].tolist() == [False, True, False]


def test_an_excel_sheet_with_numbers_in_the_phone_column_is_read(tmp_path):
    path = tmp_path / "contacts.xlsx"
    pd.DataFrame({"Mobile": [34600123456, 447700900123], "Name": ["Ana", "Bo"]}).to_excel(path, index=False)
    out = read_contacts(path)
    assert out["phone"].tolist() == ["34600123456", "447700900123"] and out["phone_valid"].all()


def test_the_sample_contacts_give_the_scalar_rules_answers():
    raw = pd.read_csv(DATA / "contacts.csv", dtype=str, keep_default_na=False, na_values=[""])
    out = read_contacts(DATA / "contacts.csv")
    expected = [normalise_phone(v) for v in raw["phone"]]
    assert [None if pd.isna(v) else v for v in out["phone"]] == expected
    assert out["email_valid"].tolist() == [is_valid_email(None if pd.isna(v) else v.strip()) for v in raw["email"]]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["34600123456", "34600123457", "600123456", "+34600123456", None, "",
                                 "Ana@example.com", " ana@EXAMPLE.com", "bo@example.com", "x@y"]), max_size=25),
       st.sampled_from(["phone", "email"]))
def test_a_plan_skips_the_same_repeats_as_a_loop_over_the_rows(values, kind):
    # the plan reads each value as the send writes it: read_contacts normalises them first
    seen, expected = set(), []
    for value in values:
        if not (is_valid_email if kind == "email" else is_valid_phone)(value):
            expected.append("skipped_invalid")
            continue
        key = recipient_key(value, kind, default_region=None)
        expected.append("skipped_duplicate" if key in seen else "send")
        seen.add(key)
    msg = (sendframe.sms("Hi", sender="Shop") if kind == "phone"
           else sendframe.mailing("Hi", "Hello", from_email="a@b.es"))
    assert msg.plan(pd.DataFrame({kind: pd.Series(values, dtype="str")}))["action"].tolist() == expected


def test_the_original_column_name_still_finds_the_renamed_recipients():
    out = read_contacts(pd.DataFrame({"Mobile": ["600123456"], "name": ["Ana"]}), phone_column="Mobile")
    assert recipient_column(out, "phone", "Mobile") == "phone"
    assert recipient_column(out.head(1), "phone", "mobile") == "phone"  # attrs survive, compared without case


def test_each_valid_phone_gets_its_line_type_and_invalid_ones_none():
    frame = pd.DataFrame({"phone": ["+34 600 123 456", "912 345 678", "900 123 456", "nope"]})
    out = read_contacts(frame)
    assert out["phone_type"].tolist()[:3] == ["mobile", "fixed_line", "toll_free"]
    assert pd.isna(out["phone_type"].iloc[3]) and isinstance(out["phone_type"].dtype, pd.CategoricalDtype)
    assert "phone_type" not in read_contacts(pd.DataFrame({"email": ["ana@example.com"]}))


def test_duplicates_and_line_types_agree_with_the_scalar_rules_row_by_row():
    phones = ["+34 600 123 456", "600123456", "912 345 678", "+44 7400 123456", "0044 (0)7400 123456", "nope", None,
              "+1 202 555 0123", "900 123 456", "+34 912 345 678", "34600123457.0"]
    emails = ["Straße@example.com", "STRASSE@example.com", "ana@example.com", None, " Ana@Example.COM", "x@y",
              "ΣΟΦΙΑ@example.gr", "σοφια@example.gr", "b@example.com", "c@example.com", "d@example.com"]
    out = read_contacts(pd.DataFrame({"phone": phones, "email": emails}))
    seen: set[tuple[str, str]] = set()
    expected = []
    for phone, email in zip(phones, emails, strict=True):
        keys = {("phone", key) for key in [recipient_key(phone, "phone")] if key is not None}
        keys |= {("email", key) for key in [recipient_key(email, "email")] if key is not None}
        expected.append(bool(keys & seen))
        seen |= keys
    assert out["duplicate"].tolist() == expected
    assert [row for row, repeated in enumerate(expected) if repeated] == [1, 4, 7, 9]
    assert [None if pd.isna(t) else t for t in out["phone_type"]] == [
        None if pd.isna(t) else t for t in number_types(out["phone"])]
