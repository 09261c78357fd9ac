"""Recipient columns as analysts name them: found case-insensitively, with the usual aliases.

    >>> import pandas as pd
    >>> find_recipient_column(pd.DataFrame({"Móvil": ["600123456"], "E-mail": ["a@b.co"]}), "phone")
    'Móvil'
    >>> find_recipient_column(pd.DataFrame({"Móvil": ["600123456"], "E-mail": ["a@b.co"]}), "email")
    'E-mail'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from sendframe.errors import InputError

__all__ = ["RECIPIENT_ALIASES", "find_recipient_column", "folded", "recipient_column"]

# Compared after folding case, accents, spaces, dashes and underscores ("E-mail" == "email", "Móvil" == "movil").
RECIPIENT_ALIASES: dict[str, tuple[str, ...]] = {
    "phone": ("phone", "phonenumber", "phoneno", "mobile", "mobilephone", "mobilenumber", "cell", "cellphone",
              "msisdn", "movil", "telefono", "telefonomovil", "celular", "telemovel", "telefone", "telephone", "tel",
              "handy", "telefon", "portable", "cellular", "mobiel", "cellulare", "numerotelefono", "numerodetelefono",
              "contactnumber", "whatsapp"),
    "email": ("email", "emailaddress", "mail", "correo", "correoelectronico", "courriel", "emailadresse", "mailaddress",
              "adresseemail", "enderecoemail"),
}


def folded(name: object) -> str:
    """A column name as it is compared: without case, accents, spaces, dashes or underscores.

        >>> folded("E-Mail Address"), folded("Teléfono_Móvil")
        ('emailaddress', 'telefonomovil')
    """
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    return "".join(ch for ch in text.lower() if ch.isalnum())


def find_recipient_column(frame: object, kind: str, given: str | None = None) -> str | None:
    """The column of ``frame`` that holds recipients of ``kind`` (``"phone"`` or ``"email"``), or None.

    ``given`` is a column the analyst named: it must exist (exactly, else compared as :func:`folded`), or be
    the source of a column ``read_contacts`` renamed (``attrs["recipient_columns"]``: ``"Mobile"`` finds
    ``phone``). Otherwise, or when ``given`` is the kind itself (``"phone"``, ``"email"``: the defaults of
    ``read_contacts``), the first alias of :data:`RECIPIENT_ALIASES` found wins, in the order of that list.

        >>> import pandas as pd
        >>> find_recipient_column(pd.DataFrame({"PHONE": ["1"]}), "phone")
        'PHONE'
        >>> find_recipient_column(pd.DataFrame({"Mobile": ["1"]}), "phone", given="phone")
        'Mobile'
        >>> contacts = pd.DataFrame({"phone": ["1"]})
        >>> contacts.attrs["recipient_columns"] = {"phone": "Mobile"}
        >>> find_recipient_column(contacts, "phone", given="Mobile")
        'phone'
    """
    columns: Iterable[object] = getattr(frame, "columns", ())
    names = [c for c in columns if isinstance(c, str)]
    if given is not None:
        if given in names:
            return given
        # a frame from read_contacts renamed the column: {"phone": "Mobile"} in its attrs
        renamed = getattr(frame, "attrs", {}).get("recipient_columns", {})
        for canonical, source in renamed.items() if isinstance(renamed, dict) else ():
            if canonical in names and isinstance(source, str) and folded(source) == folded(given):
                return str(canonical)
        same = [c for c in names if folded(c) == folded(given)]
        if same or folded(given) != kind:
            return same[0] if same else None
    by_fold: dict[str, str] = {}
    for name in names:
        by_fold.setdefault(folded(name), name)
    for alias in RECIPIENT_ALIASES[kind]:
        if alias in by_fold:
            return by_fold[alias]
    return None


def recipient_column(frame: object, kind: str, given: str | None = None, *, channel: str | None = None) -> str:
    """Like :func:`find_recipient_column`, but raises ``InputError`` listing the columns when none is found.

        >>> import pandas as pd
        >>> recipient_column(pd.DataFrame({"Mobile": ["1"]}), "phone")
        'Mobile'
    """
    found = find_recipient_column(frame, kind, given)
    if found is None:
        columns = ", ".join(map(str, getattr(frame, "columns", ())))
        what = f"the {channel} channel" if channel else f"{kind} recipients"
        if given is not None:
            raise InputError(f"The contacts have no column {given!r} for {what}; columns are: {columns}.")
        raise InputError(f"The contacts have no {kind} column for {what} (looked for {kind!r} and its usual names, "
                         f"such as {', '.join(RECIPIENT_ALIASES[kind][1:4])}); columns are: {columns}. "
                         "Name it with to=.")
    return found
