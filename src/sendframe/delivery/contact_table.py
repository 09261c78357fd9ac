"""The contact table a send or an outcome table is keyed by: a DataFrame whose index labels each row once.

    >>> import pandas as pd
    >>> two = pd.DataFrame({"phone": ["447700900001", "447700900002"]}, index=[7, 7])
    >>> checked_contacts(two, "the ledger keys rows by label")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sendframe.errors.InputError: The contacts' index repeats labels ([7]): the ledger keys rows by label. Use ...
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from sendframe.errors import InputError

__all__ = ["checked_contacts"]


def checked_contacts(contacts: Any, why: str, *, what: str = "see sendframe.read_contacts") -> pd.DataFrame:
    """``contacts`` when it is a DataFrame whose index repeats no label; else an ``InputError`` saying so and
    ``why`` the labels matter (``what`` tells where a contact table comes from)."""
    if not isinstance(contacts, pd.DataFrame):
        raise InputError(f"contacts must be a DataFrame ({what}), not {type(contacts).__name__}.")
    if not contacts.index.is_unique:
        repeated = contacts.index[contacts.index.duplicated()].unique()[:5].tolist()
        raise InputError(f"The contacts' index repeats labels ({repeated}): {why}. "
                         "Use contacts.reset_index(drop=True) first.")
    return contacts
