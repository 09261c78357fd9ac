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
    problems = preflight(contacts, "sms", "Hi {name}", sender="Shop")
    assert problems.loc[problems["rule"] == "landline", "row"].tolist() == [0]
    assert sendframe.sms("Hi {name}", sender="Shop").plan(contacts)["action"].tolist() == ["skipped_landline", "send"]


def test_a_frame_from_read_contacts_keeps_its_own_phone_column_for_every_later_step():
    contacts = sendframe.read_contacts(pd.DataFrame(LAYOUTS["hubspot"][0]))
    assert "Phone Number" in contacts.columns  # kept as a variable
    assert sendframe.sms("Hi", sender="Shop").recipient_column(contacts) == "phone"

