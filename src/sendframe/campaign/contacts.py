"""Contact tables: read, normalise recipients, flag what is wrong, keep the rest as variables.

The recipient rule lives in :mod:`sendframe.api.recipients` (the sandbox uses the same one) and runs over
whole columns through :mod:`sendframe.api.recipient_columns`; files and foreign frames are read by
:mod:`sendframe.campaign.tables`; recipient columns are found by :mod:`sendframe.campaign.columns`.
This module puts them together for a whole table.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"Mobile": ["+34 600 12 34 56", "600123456", "nope"], "name": ["Ana", "Ana", "Bo"]})
    >>> contacts = read_contacts(frame)
    >>> contacts[["phone", "phone_valid", "duplicate"]].to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'phone': ['34600123456', '34600123456', nan], 'phone_valid': [True, True, False],
     'duplicate': [False, True, False]}
    >>> contacts.attrs["recipient_columns"]
    {'phone': 'Mobile'}
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np
import pandas as pd
import phonenumbers

from sendframe.api.number_types import number_types, types_of_numbers
from sendframe.api.recipient_columns import (
    clean_emails,
    email_keys,
    normalise_phones,
    phone_numbers,
    valid_emails,
)
from sendframe.campaign.columns import (
    MOBILE_TYPES,
    MULTI_VALUE_SEPARATOR,
    RECIPIENT_ALIASES,
    candidate_columns,
    find_recipient_column,
    folded,
    numbered_type_column,
    recipient_column,
    row_regions,
    snake_name,
)
from sendframe.campaign.policy import key_codes, repeated_rows
from sendframe.campaign.tables import READ_OPTIONS, as_frame, read_table
from sendframe.engines import dispatched, several_files
from sendframe.errors import InputError
from sendframe.memory import release_unused_memory
from sendframe.options import check_options

log = logging.getLogger(__name__)

__all__ = ["ADDED_COLUMNS", "LARGE_FILE_BYTES", "read_contacts", "wants_dask"]

# every column read_contacts writes besides the recipients themselves; an input column of one of these names
# is replaced
ADDED_COLUMNS: tuple[str, ...] = ("phone_raw", "email_raw", "phone_type", "phone_valid", "email_valid", "duplicate")
_OPTIONS = ("phone_column", "email_column", "default_region", "country_column", "names", "dask", *READ_OPTIONS)
LARGE_FILE_BYTES = 512 * 1024 * 1024
"""A single contacts file larger than this is read as a Dask frame unless ``dask=False``."""


def _check_region(default_region: str | None) -> str:
    if default_region is None or default_region == "":
        return ""
    if not isinstance(default_region, str) or default_region.upper() not in phonenumbers.SUPPORTED_REGIONS:
        raise InputError(f"default_region {default_region!r} is not a country phonenumbers knows: use a two-letter ISO "
                         "code such as 'ES', 'PT' or 'GB' (or None to leave national numbers unrepaired).")
    return default_region.upper()


_MOBILE_LINES = ("mobile", "fixed_line_or_mobile")


def _mobiles(values: pd.Series, region: str) -> tuple[np.ndarray, np.ndarray]:
    # which values are valid phones, and which are mobiles (or may be), by phonenumbers' metadata
    phones, valid = normalise_phones(values, region)
    return valid, number_types(phones).isin(_MOBILE_LINES).to_numpy(dtype=bool)


def _chosen_among(frame: pd.DataFrame, kind: str, region: str,
                  candidates: list[tuple[str, str]]) -> tuple[str, str]:
    """The column holding recipients of ``kind`` among several the analyst did not choose from, and why.

    Several phone columns (an export's "Phone Number" and "Mobile Phone Number", "Phone 1 - Value" and
    "Phone 2 - Value"): a column named as a mobile wins; then a numbered column whose Type says Mobile in
    most rows; then the column whose numbers are most often mobiles (phonenumbers' metadata)."""
    if kind != "phone" or candidates[0][1] in ("named as a mobile column", "read_contacts' own column"):
        return candidates[0]
    names = [name for name, _ in candidates]
    typed = {name: type_column for name in names if (type_column := numbered_type_column(frame, name)) is not None}
    said = {name: int(frame[column].map(folded, na_action="ignore").isin(MOBILE_TYPES).sum())
            for name, column in typed.items()}
    best = max(said, key=lambda name: said[name], default=None)
    if best is not None and said[best]:
        return best, f"its {typed[best]!r} says mobile in {said[best]} of {len(frame)} rows"
    shares = {}
    for name in names:  # the share of a column's valid numbers that are mobiles
        valid, mobile = _mobiles(_best_values(frame[name], "phone", region), region)
        shares[name] = float(mobile[valid].mean()) if valid.any() else 0.0
    best = max(names, key=lambda name: shares[name])
    return best, f"{shares[best]:.0%} of its valid numbers are mobiles (the most of {', '.join(map(repr, names))})"


def _best_values(values: pd.Series, kind: str, region: str) -> pd.Series:
    """Multi-valued cells (``"+34 600 ::: +34 912"``, as Google Contacts writes them) reduced to one value each:
    the first mobile (phones) or the first valid one, else the first."""
    text = values.astype("str") if values.dtype == object or pd.api.types.is_string_dtype(values.dtype) else None
    if text is None or not text.str.contains(MULTI_VALUE_SEPARATOR, regex=False, na=False).any():
        return values
    each = pd.Series(text.to_numpy(dtype=object)).str.split(MULTI_VALUE_SEPARATOR, regex=False).explode().str.strip()
    row = each.index.to_numpy()  # the position of the cell each value came from
    if kind == "phone":
        valid, mobile = _mobiles(each, region)
        score = valid.astype(int) + mobile
    else:
        score = valid_emails(each).astype(int)
    order = np.lexsort((np.arange(len(each)), -score, row))  # per cell: best score first, then as written
    first = order[np.r_[True, row[order][1:] != row[order][:-1]]]
    return pd.Series(each.to_numpy(dtype=object)[first], index=values.index, name=values.name, dtype="str")


def _source(frame: pd.DataFrame, kind: str, given: str | None, region: str) -> tuple[str | None, str]:
    # the column holding recipients of this kind, and why; a column the analyst named must exist
    if given is None:
        return None, ""
    if not isinstance(given, str):
        raise InputError(f"{kind}_column must be a column name or None, not {type(given).__name__}.")
    if folded(given) == kind and given not in frame.columns:  # the default: found by its usual names
        candidates = candidate_columns(frame, kind)
        if len(candidates) < 2:
            return candidates[0] if candidates else (None, "")
        column, why = _chosen_among(frame, kind, region, candidates)
        others = ", ".join(repr(name) for name, _ in candidates if name != column)
        # said once, here (the result's attrs["recipient_choice"] keeps it)
        log.info("read_contacts: %s recipients from %r (%s), not %s; name another with %s_column=.", kind, column,
                 why, others, kind)
        return column, why
    found = recipient_column(frame, kind, given, option=f"{kind}_column")
    return found, "named" if found == given else f"{given!r} as the contacts spell it"


def _phones_by_region(phones: pd.Series, regions: pd.Series | None,
                      default_region: str) -> tuple[pd.Series, np.ndarray]:
    """normalise_phones with each row's own region (national numbers only depend on it), once per region."""
    if regions is None or (regions == default_region).all():
        return normalise_phones(phones, default_region)
    answer = pd.Series(np.full(len(phones), None, dtype=object), index=phones.index, name=phones.name, dtype="str")
    valid = np.zeros(len(phones), dtype=bool)
    for region, rows in regions.groupby(regions, sort=False).indices.items():
        found, ok = normalise_phones(phones.iloc[rows], str(region))
        answer.iloc[rows], valid[rows] = found.to_numpy(dtype=object), ok
    return answer, valid


def wants_dask(source: Any, dask: bool | None) -> bool:
    """Whether ``read_contacts`` reads ``source`` as a Dask frame: ``dask`` when given; by default when the
    source is several files (a folder, a glob, a list) or a file above :data:`LARGE_FILE_BYTES`.

        >>> wants_dask("data/contacts.csv", None), wants_dask("data/contacts.csv", True)
        (False, True)
    """
    if dask is not None:
        return bool(dask)
    one_file = isinstance(source, (str, os.PathLike)) and os.path.isfile(source)
    return several_files(source) or (one_file and os.path.getsize(source) > LARGE_FILE_BYTES)


@dispatched("path_or_frame",
            named_by=lambda arguments: "dask" if wants_dask(arguments["path_or_frame"], arguments["dask"]) else None)
def read_contacts(
    path_or_frame: str | os.PathLike[str] | object,
    *,
    phone_column: str | None = "phone",
    email_column: str | None = "email",
    default_region: str | None = "ES",
    country_column: str | None = "country",
    names: str | None = None,
    dask: bool | None = None,
    **read_options: Any,
) -> pd.DataFrame:
    """Read a contact table into a new frame ready for a campaign.

    ``path_or_frame``: a file (CSV with any usual delimiter and encoding, Excel, ODS, Parquet, JSON lines;
    see :func:`sendframe.campaign.tables.read_table`, which takes ``read_options``: ``sep``, ``encoding``,
    ``sheet_name``), a pandas frame, or any table that exports Arrow (polars, DuckDB, pyarrow).

    - Recipient columns are found as analysts name them: ``phone_column="phone"`` (the default) means the
      phone column under its usual names (Phone, Mobile, Móvil, Telefone, ..., any case); another name
      means that column; ``None`` means none. Likewise ``email_column`` (Email, E-mail, Correo, ...).
    - Exports of CRMs and contact books are read as they come (Google Contacts and Outlook CSV, HubSpot,
      Salesforce, Mailchimp, Brevo, Zoho, and names in Spanish, Portuguese, German, French, Italian): with
      several phone columns and no ``phone_column=``, a column named as a mobile wins (``Mobile Phone
      Number``, ``MobilePhone``, ``Móvil``, ``Handy``, ...), then a numbered ``Phone N - Value`` whose
      ``Phone N - Type`` / ``Label`` says Mobile in most rows, then the column whose numbers are most often
      mobiles (phonenumbers' metadata). Cells holding several values (``"+34 912 ::: +34 600"``) give
      their first mobile (phones) or first valid address (emails).
    - The result names them ``phone`` and ``email`` whatever they were called, and says where they came
      from in ``result.attrs["recipient_columns"]`` (``{"phone": "Mobile"}``) and why in
      ``result.attrs["recipient_choice"]``.
    - Each row's own country: a country column (``country_column="country"``, the default, finds
      ``country``, ``CC``, ``Country Code``, ``Country/Region``, ``MailingCountry``, ``País``, ``Land``, ...;
      ISO codes, calling codes or names, see :mod:`sendframe.campaign.columns`) gives the region its
      national numbers are read in; ``default_region`` for the rows without one.
      ``result.attrs["row_regions"]`` names the column and counts rows per region. A ``timezone`` column
      (``TIMEZONE``, ``Time Zone``) is kept and read by ``local_time`` / ``quiet_hours`` (see
      :mod:`sendframe.campaign.schedule`).
    - ``names="snake"``: the other columns renamed as a template can name them (``First Name`` ->
      ``first_name``, ``MEMBER_RATING`` -> ``member_rating``), the mapping in ``result.attrs["column_names"]``
      (``{"first_name": "First Name"}``); two columns that would get one name are an error. Phones are in API form
      (digits, country code first; ``+``, ``00``, spaces, ``(0)``, float columns repaired, national
      numbers get ``default_region``'s code) or missing when they cannot be repaired; emails are stripped.
      What was typed stays in ``phone_raw`` / ``email_raw``.
    - Flags: ``phone_valid``, ``email_valid`` (for the columns present) and ``duplicate``: True for the
      second and later rows that repeat an earlier row's phone *or* email (emails compared ignoring case;
      missing and invalid values never count). A message's :meth:`~sendframe.Message.plan` skips the repeats of
      the one column its channel sends to.
    - ``phone_type``: what kind of line each valid phone is, from phonenumbers' metadata (``mobile``,
      ``fixed_line``, ``fixed_line_or_mobile``, ``toll_free``, ``premium_rate``, ``voip``, ...; see
      :mod:`sendframe.api.number_types`), a categorical; missing for invalid phones. Preflight flags the
      ones that cannot receive a text message for the SMS-like channels.
    - Every other column is kept unchanged as a substitution variable (files: as text, so leading zeros survive).

    ``dask=True`` (or, by default, several files: a folder, a glob, a list; or one file over 512 MB)
    returns a lazy Dask frame, each partition normalised the same way (:mod:`sendframe.scale.contacts`, found
    through :mod:`sendframe.engines`).

    At least one recipient column must be present. The input is never modified. Unknown keywords are
    refused. About half a second per million rows beyond reading the file.

        >>> read_contacts("data/contacts.csv")[["phone", "phone_valid"]].head(2)  # doctest: +SKIP
    """
    check_options(read_options, _OPTIONS, "read_contacts")
    region = _check_region(default_region)
    if read_options and not isinstance(path_or_frame, (str, os.PathLike)):
        raise InputError(f"{', '.join(read_options)} apply when reading a file; contacts given as a "
                         f"{type(path_or_frame).__name__} are used as they are.")
    frame = (read_table(path_or_frame, **read_options) if isinstance(path_or_frame, (str, os.PathLike))
             else as_frame(path_or_frame))
    if frame.columns.has_duplicates:
        twice = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        raise InputError(f"The contacts name these columns more than once: {', '.join(twice)}; rename them first.")
    found = {kind: _source(frame, kind, given, region) for kind, given in (("phone", phone_column),
                                                                           ("email", email_column))}
    sources = {kind: column for kind, (column, _) in found.items() if column is not None}
    if not sources:
        wanted = " or ".join(repr(c) for c in (phone_column, email_column) if c)
        raise InputError(
            f"The contacts have no recipient column: expected {wanted or 'a phone or email column'} or their usual "
            f"names ({', '.join(RECIPIENT_ALIASES['phone'][:3])}, {', '.join(RECIPIENT_ALIASES['email'][1:3])}); "
            f"found {', '.join(map(str, frame.columns)) or 'no columns'}. Pass phone_column=/email_column= to name it.")
    for kind, column in sources.items():
        if column != kind and kind in frame.columns:
            raise InputError(f"The contacts have a column {kind!r} besides {column!r}, the {kind} recipients "
                             f"(given as {kind}_column=); rename or drop one of them.")
    country = find_recipient_column(frame, "country", country_column) if country_column else None
    if country_column not in (None, "country") and country is None:
        raise InputError(f"The contacts have no column {country_column!r} (given as country_column=); columns are: "
                         f"{', '.join(map(str, frame.columns))}.")
    # each row's region, for its national numbers
    regions = row_regions(frame[country], region) if country is not None and "phone" in sources else None
    # each kind's recipients, which are valid, and a code per row equal for the same recipient (-1: invalid), each
    # worked out once: the codes flag duplicates, the phones' codes (the numbers as int64) give their type
    recipients, valid, codes = {}, {}, {}
    for kind, column in sources.items():
        values = _best_values(frame[column], kind, region)
        if kind == "phone":
            recipients[kind], valid[kind] = _phones_by_region(values, regions, region)
            codes[kind] = phone_numbers(recipients[kind], valid[kind])
        else:
            recipients[kind] = clean_emails(values)
            keys, valid[kind] = email_keys(recipients[kind])
            codes[kind] = key_codes(keys)
    kind_of = {column: kind for kind, column in sources.items()}
    out: dict[Any, Any] = {}
    for column in frame.columns:
        if column in kind_of:
            out[kind_of[column]], out[f"{kind_of[column]}_raw"] = recipients[kind_of[column]], frame[column]
        elif column not in ADDED_COLUMNS:
            out[column] = frame[column]
    out.update({f"{kind}_valid": valid[kind] for kind in sources})
    if "phone" in sources:
        out["phone_type"] = types_of_numbers(codes["phone"])
    # a repeat: a valid recipient (code >= 0) already in an earlier row, by phone or by email
    out["duplicate"] = np.logical_or.reduce([repeated_rows(codes[kind]) for kind in sources])
    result = pd.DataFrame(out, index=frame.index)
    if names is not None:
        result = _snake_columns(result, names)
    result.attrs.update(recipient_columns=dict(sources),
                        recipient_choice={kind: why for kind, (column, why) in found.items() if column is not None})
    if regions is not None:
        result.attrs["row_regions"] = {"column": country, "rows": regions.value_counts().to_dict()}
    release_unused_memory()
    return result


def _snake_columns(frame: pd.DataFrame, names: str) -> pd.DataFrame:
    """The columns renamed as template variables can name them ({First Name} -> {first_name}), the mapping in
    ``attrs["column_names"]``."""
    if names != "snake":
        raise InputError(f"names= takes 'snake' (First Name -> first_name) or None, not {names!r}.")
    renamed = {c: snake_name(c) for c in frame.columns if isinstance(c, str) and snake_name(c) != c}
    result = frame.rename(columns=renamed)
    if result.columns.has_duplicates:
        new = result.columns[result.columns.duplicated()][0]
        first, second = [old for old in frame.columns if renamed.get(old, old) == new][:2]
        raise InputError(f"names='snake' would name both {first!r} and {second!r} {new!r}; rename one first.")
    result.attrs["column_names"] = {new: old for old, new in renamed.items()}
    return result
