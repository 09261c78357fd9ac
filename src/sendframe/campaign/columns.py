"""Columns as analysts and CRM exports name them: recipients and countries, found case-insensitively.

Recipient columns are found by their usual names (:data:`RECIPIENT_ALIASES`, mobile names first). A
country column (Mailchimp's ``CC``, HubSpot's ``Country/Region``, Salesforce's ``MailingCountry``, a
``Country Code``) says each row's region, in which ``read_contacts`` reads a national number
(``612 345 678``) instead of the one ``default_region`` of the whole table: values are ISO codes (``ES``,
``gb``; ``UK`` is GB), calling codes (``34``, ``+351``) or country names in English, Spanish, Portuguese,
German, French or Italian (phonenumbers' own names, compared without case or accents); anything else, and
missing values, get ``default_region``.

    >>> import pandas as pd
    >>> find_recipient_column(pd.DataFrame({"Móvil": ["600123456"], "E-mail": ["a@b.co"]}), "phone")
    'Móvil'
    >>> find_recipient_column(pd.DataFrame({"Móvil": ["600123456"], "E-mail": ["a@b.co"]}), "email")
    'E-mail'
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd
import phonenumbers

from sendframe.errors import InputError

__all__ = ["COUNTRY_ALIASES", "MOBILE_ALIASES", "MOBILE_TYPES", "MULTI_VALUE_SEPARATOR", "RECIPIENT_ALIASES",
           "candidate_columns", "find_recipient_column", "folded", "folded_names",
           "numbered_type_column", "recipient_column", "row_regions", "snake_name"]

# Compared after folding case, accents, spaces, dashes and underscores ("E-mail" == "email", "Móvil" == "movil").
# Mobile names come first: when an export has several phone columns (HubSpot's "Phone Number" and "Mobile Phone
# Number", Salesforce's "Phone" and "Mobile"), the mobile one reaches every channel, the other is often a desk line.
MOBILE_ALIASES: tuple[str, ...] = (
    "mobile", "mobilephone", "mobilephonenumber", "mobilenumber", "mobileno", "cell", "cellphone", "cellular", "msisdn",
    "movil", "telefonomovil", "numeromovil", "celular", "telemovel", "handy", "handynummer", "mobilnummer", "portable",
    "telephoneportable", "mobiel", "cellulare", "numerocellulare", "whatsapp", "sms")
RECIPIENT_ALIASES: dict[str, tuple[str, ...]] = {
    "phone": (*MOBILE_ALIASES, "phone", "phonenumber", "phoneno", "telefono", "telefone", "telephone", "tel",
              "telefon", "numerotelefono", "numerodetelefono", "contactnumber", "primaryphone", "workphone",
              "businessphone", "homephone", "otherphone", "phone1", "phone2", "phone3"),
    "email": ("email", "emailaddress", "mail", "correo", "correoelectronico", "courriel", "emailadresse", "mailaddress",
              "adresseemail", "enderecoemail", "email1", "emailaddress1", "primaryemail", "workemail"),
}
COUNTRY_ALIASES: tuple[str, ...] = ("country", "cc", "countrycode", "countryregion", "mailingcountry", "countryiso",
                                    "pais", "land", "pays", "paese")
"""Names of a country column, compared as :func:`folded` compares them."""
_ALIASES = {**RECIPIENT_ALIASES, "country": COUNTRY_ALIASES}
# the words a contact book's Type cell uses for a mobile ("Mobile", "Cell", "Móvil", ...), folded
MOBILE_TYPES: frozenset[str] = frozenset({"mobile", "cell", "cellular", "movil", "celular", "telemovel", "handy",
                                          "portable", "cellulare", "mobiel", "mobil"})
# Google Contacts and Outlook CSV: "Phone 1 - Value" with its "Phone 1 - Type", "E-mail 2 - Value"
_NUMBERED = re.compile(r"^(phone|email)(\d+)value$")
MULTI_VALUE_SEPARATOR = " ::: "
"""How Google Contacts writes several values in one cell."""


def folded(name: object) -> str:
    """A column name as it is compared: without case, accents, spaces, dashes or underscores.

        >>> folded("E-Mail Address"), folded("Teléfono_Móvil")
        ('emailaddress', 'telefonomovil')
    """
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    return "".join(ch for ch in text.lower() if ch.isalnum())


def folded_names(frame: object) -> dict[str, str]:
    """The frame's text column names by their :func:`folded` form (the first one, when two fold alike).

        >>> import pandas as pd
        >>> folded_names(pd.DataFrame({"E-Mail": [], "Teléfono": []}))
        {'email': 'E-Mail', 'telefono': 'Teléfono'}
    """
    by_fold: dict[str, str] = {}
    for name in getattr(frame, "columns", ()):
        if isinstance(name, str):
            by_fold.setdefault(folded(name), name)
    return by_fold


def snake_name(name: object) -> str:
    """A column name as a template variable can write it: ASCII letters, digits and ``_``, lower case.

        >>> snake_name("First Name"), snake_name("Teléfono Móvil"), snake_name("MEMBER_RATING"), snake_name("%")
        ('first_name', 'telefono_movil', 'member_rating', 'name')
    """
    ascii_name = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9A-Za-z_]+", "_", ascii_name).strip("_").lower() or "name"


def find_recipient_column(frame: object, kind: str, given: str | None = None) -> str | None:
    """The column of ``frame`` that holds recipients of ``kind`` (``"phone"`` or ``"email"``; or each row's
    ``"country"``, by :data:`COUNTRY_ALIASES`), or None.

    ``given`` is a column the analyst named: it must exist (exactly, else compared as :func:`folded`), or be
    the source of a column ``read_contacts`` renamed (``attrs["recipient_columns"]``: ``"Mobile"`` finds
    ``phone``). Otherwise, or when ``given`` is the kind itself (``"phone"``, ``"email"``: the defaults of
    ``read_contacts``), the first alias of :data:`RECIPIENT_ALIASES` found wins, in the order of that list
    (mobile names first).

        >>> import pandas as pd
        >>> find_recipient_column(pd.DataFrame({"PHONE": ["1"]}), "phone")
        'PHONE'
        >>> find_recipient_column(pd.DataFrame({"Mobile": ["1"]}), "phone", given="phone")
        'Mobile'
        >>> contacts = pd.DataFrame({"phone": ["1"]})
        >>> contacts.attrs["recipient_columns"] = {"phone": "Mobile"}
        >>> find_recipient_column(contacts, "phone", given="Mobile")
        'phone'
        >>> find_recipient_column(pd.DataFrame({"Email Address": [], "CC": []}), "country", "country")
        'CC'
    """
    names = [c for c in getattr(frame, "columns", ()) if isinstance(c, str)]
    if given is not None:
        by_fold = folded_names(frame)
        renamed = getattr(frame, "attrs", {}).get("recipient_columns")
        if isinstance(renamed, dict):  # a frame from read_contacts renamed the column: {"phone": "Mobile"}
            by_fold.update({folded(source): canonical for canonical, source in renamed.items()
                            if canonical in names and isinstance(source, str)})
        same = given if given in names else by_fold.get(folded(given))
        if same is not None or folded(given) != kind:
            return same
    candidates = candidate_columns(frame, kind)
    return candidates[0][0] if candidates else None


def candidate_columns(frame: object, kind: str) -> list[tuple[str, str]]:
    """Every column that may hold recipients of ``kind``, best first, each with why it was taken.

    A frame ``read_contacts`` made keeps its own ``phone`` / ``email`` first. Then the usual names in the order
    of :data:`RECIPIENT_ALIASES` (for phones, mobile names, :data:`MOBILE_ALIASES`, come first); then numbered
    contact-book columns (``Phone 1 - Value``, ``E-mail 1 - Value``).

        >>> import pandas as pd
        >>> hubspot = pd.DataFrame({"Phone Number": ["1"], "Mobile Phone Number": ["2"]})
        >>> candidate_columns(hubspot, "phone")  # doctest: +NORMALIZE_WHITESPACE
        [('Mobile Phone Number', 'named as a mobile column'), ('Phone Number', 'a usual name of a phone column')]
        >>> candidate_columns(pd.DataFrame({"E-mail 1 - Value": ["a@b.co"]}), "email")
        [('E-mail 1 - Value', 'the first numbered email column')]
    """
    names = [c for c in getattr(frame, "columns", ()) if isinstance(c, str)]
    by_fold = folded_names(frame)
    found: dict[str, str] = {}  # each column with the first reason it was taken for
    if kind in names and kind in (getattr(frame, "attrs", {}).get("recipient_columns") or {}):
        found[kind] = "read_contacts' own column"
    for alias in _ALIASES[kind]:
        if alias in by_fold:
            found.setdefault(by_fold[alias], "named as a mobile column" if alias in MOBILE_ALIASES
                             else f"a usual name of a {kind} column")
    numbered = sorted((int(m.group(2)), name) for name in names
                      if (m := _NUMBERED.match(folded(name))) is not None and m.group(1) == kind)
    for position, (_, name) in enumerate(numbered):
        found.setdefault(name, f"the {'first' if position == 0 else 'next'} numbered {kind} column")
    return list(found.items())


def numbered_type_column(frame: object, column: str) -> str | None:
    """The ``Phone N - Type`` (or ``- Label``) column beside a ``Phone N - Value`` column (Google Contacts), or None.

        >>> import pandas as pd
        >>> google = pd.DataFrame({"Phone 1 - Type": ["Mobile"], "Phone 1 - Value": ["1"]})
        >>> numbered_type_column(google, "Phone 1 - Value")
        'Phone 1 - Type'
    """
    found = _NUMBERED.match(folded(column))
    if found is None:
        return None
    wanted = {f"{found.group(1)}{found.group(2)}{word}" for word in ("type", "label")}  # Google now says Label
    return next((c for c in getattr(frame, "columns", ()) if isinstance(c, str) and folded(c) in wanted), None)


def recipient_column(frame: object, kind: str, given: str | None = None, *, channel: str | None = None,
                     option: str = "to") -> str:
    """Like :func:`find_recipient_column`, but raises ``InputError`` listing the columns when none is found
    (``option``: the keyword that names the column, for the error).

        >>> import pandas as pd
        >>> recipient_column(pd.DataFrame({"Mobile": ["1"]}), "phone")
        'Mobile'
    """
    found = find_recipient_column(frame, kind, given)
    if found is None:
        columns = ", ".join(map(str, getattr(frame, "columns", ()))) or "no columns"
        what = f"the {channel} channel" if channel else f"{kind} recipients"
        if given is not None:
            raise InputError(f"The contacts have no column {given!r} for {what} (given as {option}=); columns are: "
                             f"{columns}.")
        raise InputError(f"The contacts have no {kind} column for {what} (looked for {kind!r} and its usual names, "
                         f"such as {', '.join(RECIPIENT_ALIASES[kind][:3])}); columns are: {columns}. "
                         f"Name it with {option}=.")
    return found


_LANGUAGES = ("en", "es", "pt", "de", "fr", "it")
_OTHER_NAMES = {"uk": "GB", "usa": "US", "unitedstatesofamerica": "US", "greatbritain": "GB", "england": "GB"}


@cache
def _locale_names() -> dict[str, dict[str, str]]:
    """phonenumbers' country names (region -> language -> name), read from its ``geodata/locale.py`` alone.

    Imported as ``phonenumbers.geodata.locale`` (what ``phonenumbers.geocoder`` does) it would first run
    ``geodata/__init__``, which loads every prefix's place names: about 100 MiB kept for the process's life."""
    path = str(resources.files("phonenumbers").joinpath("geodata", "locale.py"))
    spec = importlib.util.spec_from_file_location("phonenumbers.geodata.locale", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with phonenumbers
        raise ImportError(f"phonenumbers' country names are missing: {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names: dict[str, dict[str, str]] = module.LOCALE_DATA
    return names


@cache
def _names() -> dict[str, str]:
    """Folded country names (and ISO codes) -> region, from phonenumbers' own names of each region in a few
    languages."""
    names = dict(_OTHER_NAMES)
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        names[region.lower()] = region
        by_language = _locale_names().get(region, {})
        for language in _LANGUAGES:
            name = by_language.get(language, "")  # "*xx": the name in language xx
            name = folded(by_language.get(name[1:], "") if name.startswith("*") else name)
            if name:
                names.setdefault(name, region)
    return names


def _region_of(value: object) -> str | None:
    text = str(value).strip()
    digits = text.removeprefix("+")
    if digits.isdigit():  # a calling code
        region = phonenumbers.region_code_for_country_code(int(digits))
        return None if region in ("ZZ", "001") else region
    return _names().get(folded(text))


def row_regions(values: pd.Series, default_region: str) -> pd.Series:
    """Each row's region (an ISO code phonenumbers knows) from a country column, ``default_region`` where the value
    is missing or not a country; once per distinct value. Same index; the input is not modified.

        >>> row_regions(pd.Series(["PT", "Spain", "+44", "Deutschland", None, "Atlantis"]), "ES").tolist()
        ['PT', 'ES', 'GB', 'DE', 'ES', 'ES']
    """
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    regions = np.array([_region_of(value) or default_region for value in uniques] + [default_region], dtype=object)
    return pd.Series(regions[np.where(codes >= 0, codes, len(uniques))], index=values.index, dtype="str")
