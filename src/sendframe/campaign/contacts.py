"""Contact tables: read, normalise recipients, flag what is wrong, keep the rest as variables.

The recipient rule itself lives in :mod:`sendframe.api.recipients` (the sandbox uses the same one);
this module only applies it to a whole table.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"phone": ["+34 600 12 34 56", "600123456", "nope"], "name": ["Ana", "Ana", "Bo"]})
    >>> read_contacts(frame)[["phone", "phone_valid", "duplicate"]].to_dict("list")
    {'phone': ['34600123456', '34600123456', nan], 'phone_valid': [True, True, False], 'duplicate': [False, True, False]}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sendframe.errors import InputError
from sendframe.api.recipients import is_valid_email, is_valid_phone, normalise_phone_series
from sendframe.scale.contacts import read_partitioned, wants_dask

__all__ = ["FLAG_COLUMNS", "duplicate_recipients", "read_contacts"]

# columns read_contacts adds; they are flags, not substitution variables
FLAG_COLUMNS: tuple[str, ...] = ("phone_valid", "email_valid", "duplicate")


def _read_table(path_or_frame: str | os.PathLike[str] | pd.DataFrame, read_options: dict[str, Any]) -> pd.DataFrame:
    if isinstance(path_or_frame, pd.DataFrame):
        return path_or_frame.copy()
    if not isinstance(path_or_frame, (str, os.PathLike)):
        raise InputError(f"read_contacts needs a CSV path or a DataFrame, not {type(path_or_frame).__name__}.")
    path = Path(path_or_frame)
    if not path.is_file():
        raise InputError(f"The contacts file {str(path)!r} does not exist.")
    if path.suffix.lower() in (".xlsx", ".xls", ".ods"):
        raise InputError(f"{path.name}: only CSV files are read; save the sheet as CSV (UTF-8) first.")
    # only empty cells are missing: "n/a" or "NULL" in a column is a value (preflight reports it)
    options = {"dtype": str, "encoding": "utf-8-sig", "keep_default_na": False, "na_values": [""], **read_options}
    return pd.read_csv(path, **options)


def _valid_flags(series: pd.Series, rule: Any) -> np.ndarray:
    # apply a scalar rule once per distinct value; missing values are not valid
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    answers = np.array([bool(rule(value)) for value in uniques] + [False], dtype=bool)
    return answers[codes]


def _clean_email(series: pd.Series) -> pd.Series:
    return series.astype("str").str.strip()


def read_contacts(
    path_or_frame: str | os.PathLike[str] | pd.DataFrame,
    *,
    phone_column: str | None = "phone",
    email_column: str | None = "email",
    default_region: str = "ES",
    dask: bool | None = None,
    **read_options: Any,
) -> pd.DataFrame:
    """Read a contact table (CSV path or DataFrame) into a new frame ready for a campaign.

    - ``phone_column`` is normalised to API form (digits, country prefix first; floats, ``+``,
      ``00``, spaces and dashes repaired, national numbers get ``default_region``'s prefix);
      numbers that cannot be repaired become missing. The original text is kept as ``<col>_raw``.
    - ``email_column`` is stripped of surrounding spaces.
    - flags are added: ``phone_valid``, ``email_valid`` (for the columns present) and
      ``duplicate``: True for the second and later rows that repeat an earlier row's phone *or*
      email (each column checked on its own, emails compared case-insensitively; missing and
      invalid values never count), so a table is checked for both the SMS/voice/WhatsApp
      recipient and the mailing recipient. To check only the column one channel sends to, use
      :func:`duplicate_recipients` (what ``sendframe send`` does).
    - every other column is kept unchanged as a substitution variable. CSV files are read with
      ``dtype=str`` so leading zeros survive; ``read_options`` go to ``pandas.read_csv``.

    ``dask=True`` (or, by default, several files: a folder, a glob, a list; or one file over 512 MB)
    returns a lazy Dask frame, each partition normalised the same way (:mod:`sendframe.scale.contacts`).

    A column named in ``phone_column`` / ``email_column`` that is absent is skipped; at least one
    of them must be present. The input frame is never modified.

        >>> read_contacts("data/contacts.csv")[["phone", "phone_valid"]].head(2)  # doctest: +SKIP
    """
    if wants_dask(path_or_frame, dask):  # a Dask frame, normalised partition by partition (sendframe.scale.contacts)
        return read_partitioned(read_contacts, path_or_frame, phone_column=phone_column, email_column=email_column, default_region=default_region, **read_options)
    frame = _read_table(path_or_frame, read_options)
    has_phone = phone_column is not None and phone_column in frame.columns
    has_email = email_column is not None and email_column in frame.columns
    if not has_phone and not has_email:
        wanted = " or ".join(repr(c) for c in (phone_column, email_column) if c)
        raise InputError(
            f"The contacts have no recipient column: expected {wanted or 'a phone or email column'}; "
            f"found {', '.join(map(str, frame.columns)) or 'no columns'}. Pass phone_column=/email_column=."
        )
    columns = list(frame.columns)
    result: dict[str, pd.Series] = {}
    for column in columns:
        if has_phone and column == phone_column:
            raw = frame[column]
            result[f"{column}_raw"] = raw
            result[column] = normalise_phone_series(raw, default_region)
        elif has_email and column == email_column:
            result[column] = _clean_email(frame[column])
        else:
            result[column] = frame[column]
    # a _raw column keeps its natural place: right before the normalised one
    order: list[str] = []
    for column in columns:
        if has_phone and column == phone_column:
            order += [column, f"{column}_raw"]
        else:
            order.append(column)
    out = pd.DataFrame({name: result[name] for name in order}, index=frame.index)
    if has_phone:
        out["phone_valid"] = _valid_flags(out[phone_column], is_valid_phone)
    if has_email:
        out["email_valid"] = _valid_flags(out[email_column], is_valid_email)
    out["duplicate"] = _duplicates(out, phone_column if has_phone else None, email_column if has_email else None)
    return out


def duplicate_recipients(values: pd.Series, kind: str = "phone", *, valid: np.ndarray | None = None) -> pd.Series:
    """True for each row whose recipient already appears in an earlier row (the first one is not a duplicate).

    ``kind`` is ``"phone"`` (numbers compared as written, so normalise them first: ``read_contacts``
    does) or ``"email"`` (compared ignoring case and surrounding spaces). Missing and invalid
    recipients are never duplicates: the service rejects them anyway. ``valid``: each value's
    validity when already known (``read_contacts``' flags), so it is not worked out again. This is
    the rule behind ``read_contacts``' ``duplicate`` flag, for one recipient column.

        >>> duplicate_recipients(pd.Series(["Ana@example.com", "ana@example.com", None, None]), "email").tolist()
        [False, True, False, False]
    """
    if kind not in ("phone", "email"):
        raise InputError(f"kind must be 'phone' or 'email', not {kind!r}.")
    key = values.astype("str").str.strip().str.lower() if kind == "email" else values
    if valid is None:
        valid = _valid_flags(key, is_valid_email if kind == "email" else is_valid_phone)
    repeated = key.duplicated(keep="first").to_numpy(dtype=bool, na_value=False)
    return pd.Series(repeated & valid, index=values.index)


def _duplicates(frame: pd.DataFrame, phone_column: str | None, email_column: str | None) -> np.ndarray:
    repeated = np.zeros(len(frame), dtype=bool)
    if phone_column is not None:
        repeated |= duplicate_recipients(frame[phone_column], "phone", valid=frame["phone_valid"].to_numpy()).to_numpy()
    if email_column is not None:
        repeated |= duplicate_recipients(frame[email_column], "email", valid=frame["email_valid"].to_numpy()).to_numpy()
    return repeated
