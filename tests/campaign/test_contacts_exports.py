"""Contact tables as CRMs and contact books export them (each tool's documented column layout, fake data): the
recipient columns are found, the mobile one chosen for phones, multi-valued cells split, landlines flagged, and a
campaign previewed."""

from __future__ import annotations

import pandas as pd
import pytest

import sendframe
from sendframe.campaign.preflight import preflight

MOBILE, MOBILE_2, DESK = "+34 600 123 456", "+34 611 222 333", "+34 912 345 678"


def google_contacts() -> pd.DataFrame:
    return pd.DataFrame({
        "First Name": ["Ana", "Bo", "Cy"], "Last Name": ["Pérez", "Gil", "Sanz"],
        "E-mail 1 - Label": ["* Home", "Work", "Home"],
        "E-mail 1 - Value": ["ana@example.com ::: ana.p@example.org", "bo@example.com", "cy@example.com"],
        "Phone 1 - Label": ["Work", "Work", "Home"], "Phone 1 - Value": [DESK, DESK, DESK],
        "Phone 2 - Label": ["* Mobile", "Mobile", "Mobile"],
        "Phone 2 - Value": [MOBILE, f"{DESK} ::: {MOBILE_2}", "+34 622 333 444"],
    })


LAYOUTS = {
    # name: (columns and values, the column the phones come from, the column the emails come from)
    "outlook": ({"First Name": ["Ana"], "Last Name": ["Pérez"], "E-mail Address": ["ana@example.com"],
                 "Business Phone": [DESK], "Home Phone": ["+34 913 000 000"], "Mobile Phone": [MOBILE]},
                "Mobile Phone", "E-mail Address"),
    "hubspot": ({"First Name": ["Ana"], "Last Name": ["Pérez"], "Email": ["ana@example.com"],
                 "Phone Number": [DESK], "Mobile Phone Number": [MOBILE], "Country/Region": ["Spain"]},
                "Mobile Phone Number", "Email"),
    "salesforce": ({"FirstName": ["Ana"], "LastName": ["Pérez"], "Email": ["ana@example.com"], "Phone": [DESK],
                    "MobilePhone": [MOBILE], "MailingCountry": ["Spain"]}, "MobilePhone", "Email"),
    "mailchimp": ({"Email Address": ["ana@example.com"], "First Name": ["Ana"], "Last Name": ["Pérez"],
                   "Phone Number": [MOBILE], "MEMBER_RATING": ["2"], "CC": ["ES"], "TIMEZONE": ["Europe/Madrid"]},
                  "Phone Number", "Email Address"),
    "brevo": ({"EMAIL": ["ana@example.com"], "FIRSTNAME": ["Ana"], "LASTNAME": ["Pérez"], "SMS": [MOBILE]},
              "SMS", "EMAIL"),
    "zoho": ({"First Name": ["Ana"], "Last Name": ["Pérez"], "Email": ["ana@example.com"], "Phone": [DESK],
              "Mobile": [MOBILE], "Mailing Country": ["Spain"]}, "Mobile", "Email"),
    "spanish": ({"Nombre": ["Ana"], "Teléfono": [DESK], "Móvil": [MOBILE], "Correo": ["ana@example.com"]},
                "Móvil", "Correo"),
    "portuguese": ({"Nome": ["Ana"], "Telefone": [DESK], "Telemóvel": [MOBILE]}, "Telemóvel", None),
    "german": ({"Vorname": ["Ana"], "Telefon": [DESK], "Handy": [MOBILE]}, "Handy", None),
    "french": ({"Prénom": ["Ana"], "Téléphone": [DESK], "Portable": [MOBILE], "Courriel": ["ana@example.com"]},
               "Portable", "Courriel"),
    "italian": ({"Nome": ["Ana"], "Telefono": [DESK], "Cellulare": [MOBILE]}, "Cellulare", None),
}


@pytest.mark.parametrize("tool", sorted(LAYOUTS))
def test_each_export_layout_is_read_with_its_mobile_column_and_previewed(tool, tmp_path):
    columns, phone_source, email_source = LAYOUTS[tool]
    path = tmp_path / f"{tool}.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    contacts = sendframe.read_contacts(path)
    assert contacts.attrs["recipient_columns"]["phone"] == phone_source
    assert contacts.attrs["recipient_columns"].get("email") == email_source
    assert contacts["phone"].tolist() == ["34600123456"] and contacts["phone_type"].tolist() == ["mobile"]
    assert contacts.attrs["recipient_choice"]["phone"]
    msg = sendframe.sms("Hi", sender="Shop")
    assert msg.preview(contacts)["text"].tolist() == ["Hi"]
    assert msg.plan(contacts)["action"].tolist() == ["send"]


def test_a_google_contacts_export_takes_the_phone_its_label_calls_mobile_and_splits_multi_valued_cells(tmp_path):
    path = tmp_path / "google.csv"
    google_contacts().to_csv(path, index=False)
    contacts = sendframe.read_contacts(path)
    assert contacts.attrs["recipient_columns"] == {"phone": "Phone 2 - Value", "email": "E-mail 1 - Value"}
    assert contacts.attrs["recipient_choice"]["phone"] == "its 'Phone 2 - Label' says mobile in 3 of 3 rows"
    # a cell holding a desk line and a mobile gives the mobile; one holding two emails gives the first
    assert contacts["phone"].tolist() == ["34600123456", "34611222333", "34622333444"]
    assert contacts["email"].tolist() == ["ana@example.com", "bo@example.com", "cy@example.com"]
    assert contacts["phone_raw"].tolist()[1] == f"{DESK} ::: {MOBILE_2}"


def test_multi_valued_cells_are_split_on_a_repeated_index_too():
    frame = pd.DataFrame({"Mobile": [f"{DESK} ::: {MOBILE}", None, "nope ::: " + MOBILE_2]}, index=[5, 5, 7])
    contacts = sendframe.read_contacts(frame)
    assert contacts["phone"].tolist()[::2] == ["34600123456", "34611222333"] and pd.isna(contacts["phone"].iloc[1])
    assert contacts.index.tolist() == [5, 5, 7]


def test_without_a_mobile_name_or_label_the_column_with_most_mobiles_is_chosen():
    frame = pd.DataFrame({"Work Phone": [DESK, "+34 913 000 000"], "Home Phone": [MOBILE, DESK]})
    contacts = sendframe.read_contacts(frame)
    assert contacts.attrs["recipient_columns"]["phone"] == "Home Phone"
    assert contacts.attrs["recipient_choice"]["phone"].startswith("50% of its valid numbers are mobiles")
    numbered = pd.DataFrame({"Phone 1 - Value": [DESK], "Phone 2 - Value": [MOBILE]})
    assert sendframe.read_contacts(numbered).attrs["recipient_columns"]["phone"] == "Phone 2 - Value"


def test_a_named_column_still_wins_and_landlines_in_it_are_flagged():
    frame = pd.DataFrame({"Phone Number": [DESK, MOBILE], "Mobile Phone Number": [MOBILE, MOBILE_2],
                          "name": ["a", "b"]})
    contacts = sendframe.read_contacts(frame, phone_column="Phone Number")
    assert contacts.attrs["recipient_columns"]["phone"] == "Phone Number"
    problems = preflight(sendframe.sms("Hi {name}", sender="Shop"), contacts)
    assert problems.loc[problems["rule"] == "landline", "row"].tolist() == [0]
    assert sendframe.sms("Hi {name}", sender="Shop").plan(contacts)["action"].tolist() == ["skipped_landline", "send"]


def test_a_frame_from_read_contacts_keeps_its_own_phone_column_for_every_later_step():
    contacts = sendframe.read_contacts(pd.DataFrame(LAYOUTS["hubspot"][0]))
    assert "Phone Number" in contacts.columns  # kept as a variable
    assert sendframe.sms("Hi", sender="Shop").recipient_column(contacts) == "phone"



def test_each_rows_country_column_gives_the_region_of_its_national_numbers():
    frame = pd.DataFrame({"Email Address": ["a@example.com", "b@example.com", "c@example.com", "d@example.com"],
                          "Phone Number": ["912 345 678", "07400 123456", "612 345 678", "+351 912 345 678"],
                          "CC": ["PT", "United Kingdom", None, "ES"]})
    contacts = sendframe.read_contacts(frame)
    assert contacts["phone"].tolist() == ["351912345678", "447400123456", "34612345678", "351912345678"]
    assert contacts.attrs["row_regions"] == {"column": "CC", "rows": {"ES": 2, "PT": 1, "GB": 1}}
    plain = sendframe.read_contacts(frame, country_column=None)
    assert plain["phone"].iloc[0] == "34912345678" and plain["phone_valid"].tolist()[:2] == [True, False]
    assert "row_regions" not in plain.attrs


@pytest.mark.parametrize("column", ["country", "Country Code", "País", "MailingCountry"])
@pytest.mark.parametrize("value", ["PT", "pt", "Portugal", "+351", "351"])
def test_country_columns_take_iso_codes_calling_codes_and_names(column, value):
    contacts = sendframe.read_contacts(pd.DataFrame({"phone": ["912 345 678"], column: [value]}))
    assert contacts["phone"].tolist() == ["351912345678"]


def test_a_named_country_column_must_exist():
    with pytest.raises(sendframe.InputError, match="no column 'Nation'"):
        sendframe.read_contacts(pd.DataFrame({"phone": ["600123456"]}), country_column="Nation")
    # an email-only table that has the column is read: the column only places national numbers
    emails = sendframe.read_contacts(pd.DataFrame({"email": ["a@example.com"], "Nation": ["PT"]}),
                                     country_column="Nation")
    assert emails["Nation"].tolist() == ["PT"] and "row_regions" not in emails.attrs


@pytest.mark.parametrize("column", ["TIMEZONE", "Time Zone", "timezone"])
def test_each_rows_time_zone_column_feeds_local_time_and_quiet_hours(column):
    contacts = sendframe.read_contacts(pd.DataFrame({"Phone Number": ["+34600123456", "+34600123457"],
                                                     column: ["America/New_York", None]}))
    now = pd.Timestamp("2026-03-28 12:00", tz="UTC")
    plan = sendframe.sms("Hi", sender="Shop", local_time="10:00").schedule(contacts, now=now)
    assert plan["timezone"].tolist() == ["America/New_York", "Europe/Madrid"]
    assert plan["timezone_source"].tolist() == ["column", "country default"]
    assert str(plan["local_send_at"].iloc[0]) == "2026-03-28 10:00:00-04:00"
    quiet = sendframe.sms("Hi", sender="Shop", quiet_hours=("09:00", "20:00")).schedule(contacts, now=now)
    assert str(quiet["local_send_at"].iloc[0]) == "2026-03-28 09:00:00-04:00"


def test_names_snake_lets_a_template_name_an_exports_columns_and_says_how():
    frame = pd.DataFrame({"First Name": ["ana"], "Last Name": ["Pérez"], "Mobile Phone Number": [MOBILE],
                          "MEMBER_RATING": ["2"], "city": ["Madrid"]})
    contacts = sendframe.read_contacts(frame, names="snake")
    assert contacts.attrs["column_names"] == {"first_name": "First Name", "last_name": "Last Name",
                                              "member_rating": "MEMBER_RATING"}
    assert {"first_name", "last_name", "member_rating", "city", "phone"} <= set(contacts.columns)
    msg = sendframe.sms("Hola {first_name|capitalize} de {city}", sender="Shop")
    assert msg.preview(contacts)["text"].tolist() == ["Hola Ana de Madrid"]
    assert preflight(sendframe.sms("Hola {first_name}", sender="Shop"), contacts).empty


def test_without_names_snake_a_spaced_placeholder_stays_an_error_that_points_at_it():
    contacts = sendframe.read_contacts(pd.DataFrame({"First Name": ["Ana"], "phone": [MOBILE]}))
    problems = preflight(sendframe.sms("Hi {First Name}", sender="Shop"), contacts)
    assert problems["rule"].tolist() == ["malformed_placeholder"]
    assert "names='snake'" in problems["message"].iloc[0] and "{first_name}" in problems["message"].iloc[0]


def test_names_snake_refuses_two_columns_that_would_share_a_name_and_other_values():
    with pytest.raises(sendframe.InputError, match="would name both 'First Name' and 'first name' 'first_name'"):
        sendframe.read_contacts(pd.DataFrame({"phone": [MOBILE], "First Name": ["a"], "first name": ["b"]}),
                                names="snake")
    with pytest.raises(sendframe.InputError, match="names= takes 'snake'"):
        sendframe.read_contacts(pd.DataFrame({"phone": [MOBILE]}), names="camel")


def test_the_choice_among_several_phone_columns_is_logged_once(caplog):
    with caplog.at_level("INFO", logger="sendframe.campaign.contacts"):
        sendframe.read_contacts(pd.DataFrame(LAYOUTS["hubspot"][0]))
    said = [r.getMessage() for r in caplog.records if r.name == "sendframe.campaign.contacts"]
    assert said == ["read_contacts: phone recipients from 'Mobile Phone Number' (named as a mobile column), not "
                    "'Phone Number'; name another with phone_column=."]


def test_voice_calls_the_column_read_contacts_chose_and_calls_desk_lines_that_text_messages_skip():
    # read_contacts does not know the channel: the mobile column it prefers suits every channel (a mobile takes
    # calls too); to call the desk lines instead, name their column, and voice calls them where SMS skips them
    frame = pd.DataFrame({"Phone Number": [DESK, "+34 913 000 000"], "Mobile Phone Number": [MOBILE, MOBILE_2],
                          "name": ["a", "b"]})
    voice = sendframe.voice("Hi {name}", language="es_ES", gender="F")
    sms = sendframe.sms("Hi {name}", sender="Shop")
    preferred = sendframe.read_contacts(frame)
    assert preferred.attrs["recipient_columns"]["phone"] == "Mobile Phone Number"
    assert voice.plan(preferred)["action"].tolist() == sms.plan(preferred)["action"].tolist() == ["send", "send"]
    desks = sendframe.read_contacts(frame, phone_column="Phone Number")
    assert desks["phone_type"].tolist() == ["fixed_line", "fixed_line"]
    assert voice.plan(desks)["action"].tolist() == ["send", "send"]
    assert "landline" not in set(voice.preflight(desks)["rule"])
    assert sms.plan(desks)["action"].tolist() == ["skipped_landline", "skipped_landline"]
