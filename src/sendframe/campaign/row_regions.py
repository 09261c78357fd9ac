"""Each row's own country, from a country column as CRMs export it: the region for its national numbers.

A contact table exported from a CRM often says each person's country (Mailchimp's ``CC``, HubSpot's
``Country/Region``, Salesforce's ``MailingCountry``, a ``Country Code``). ``read_contacts`` reads a
national number (``612 345 678``) in that row's country instead of the one ``default_region`` of the
whole table. Values are ISO codes (``ES``, ``gb``; ``UK`` is GB), calling codes (``34``, ``+351``) or
country names in English, Spanish, Portuguese, German, French or Italian (phonenumbers' own names, compared
without case or accents); anything else, and missing values, get ``default_region``.

    >>> import pandas as pd
    >>> row_regions(pd.Series(["PT", "Spain", "+44", "Deutschland", None, "Atlantis"]), "ES").tolist()
    ['PT', 'ES', 'GB', 'DE', 'ES', 'ES']
"""

from __future__ import annotations

import importlib.util
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd
import phonenumbers

from sendframe.campaign.columns import folded, folded_names

__all__ = ["COUNTRY_ALIASES", "find_country_column", "row_regions"]

COUNTRY_ALIASES: tuple[str, ...] = ("country", "cc", "countrycode", "countryregion", "mailingcountry", "countryiso",
                                    "pais", "land", "pays", "paese")
"""Names of a country column, compared as :func:`sendframe.campaign.columns.folded` compares them."""
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


def find_country_column(frame: pd.DataFrame, given: str | None = "country") -> str | None:
    """The country column: ``given`` as written or folded; ``"country"`` (the default) also finds the usual names.

        >>> find_country_column(pd.DataFrame({"Email Address": [], "CC": []}))
        'CC'
    """
    if given is None:
        return None
    if given in frame.columns:
        return given
    by_fold = folded_names(frame)
    aliases = COUNTRY_ALIASES if folded(given) == "country" else (folded(given),)
    return next((by_fold[alias] for alias in aliases if alias in by_fold), None)


def row_regions(values: pd.Series, default_region: str) -> pd.Series:
    """Each row's region (an ISO code phonenumbers knows) from a country column, ``default_region`` where the value
    is missing or not a country; once per distinct value. Same index; the input is not modified."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    regions = np.array([_region_of(value) or default_region for value in uniques] + [default_region], dtype=object)
    return pd.Series(regions[np.where(codes >= 0, codes, len(uniques))], index=values.index, dtype="str")
