"""Estimate: encoding, length, parts and cost of every message of a campaign, with totals.

Everything is vectorised (pyarrow compute through the text engine's ``*_series`` functions and
pandas vector operations); Python only runs once per *distinct* value (countries, prices) or for
the rare rows holding characters an encoding cannot carry.

    >>> import pandas as pd
    >>> contacts = pd.DataFrame({"phone": ["34600123456"], "name": ["Ana"]})
    >>> row = estimate(contacts, "Hola {name}")
    >>> row[["text", "encoding", "length", "parts"]].to_dict("records")
    [{'text': 'Hola Ana', 'encoding': 'gsm', 'length': 8, 'parts': 1}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from sendframe.api.errors import InputError
from sendframe.campaign.preview import render

__all__ = ["SMS_CHANNELS", "estimate", "estimate_totals"]

SMS_CHANNELS: tuple[str, ...] = ("sms", "landingsms")
_CHANNELS = ("sms", "mailing", "voice", "voiceAudio", "landingsms", "whatsapp")


def recipient_column(channel: str, to_column: str | None = None) -> str:
    """The column holding the recipients of ``channel``: ``email`` for mailing, else ``phone``.

        >>> recipient_column("mailing"), recipient_column("sms"), recipient_column("sms", "mobile")
        ('email', 'phone', 'mobile')
    """
    if channel not in _CHANNELS:
        raise InputError(f"Unknown channel {channel!r}: use one of {', '.join(_CHANNELS)}.")
    return to_column or ("email" if channel == "mailing" else "phone")


def _choose_encoding(text: pd.Series, encoding: str | None) -> pd.Series:
    from sendframe.text.encodings import ENCODINGS, cheapest_encoding_series

    if encoding is None:
        encoding = "gsm"
    if encoding == "auto":
        chosen = cheapest_encoding_series(text)
        return chosen.astype("str")
    if encoding not in ENCODINGS:
        raise InputError(f"Unknown encoding {encoding!r}: use one of {', '.join(ENCODINGS)} or 'auto' (the cheapest per row).")
    return pd.Series(encoding, index=text.index, dtype="str")


def _common_characters(first: pd.Series, second: pd.Series) -> pd.Series:
    # characters present in both joined strings, in the order of ``first``; once per distinct pair
    pairs = pd.DataFrame({"a": first, "b": second})
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(pairs))
    answers = ["".join(c for c in a if c in b) for a, b in uniques]
    return pd.Series(np.asarray(answers, dtype=object)[codes], index=first.index, dtype="str")


def _forced_by(text: pd.Series, chosen: pd.Series) -> pd.Series:
    """Characters that pushed each row off gsm: for gsm-pt the ones gsm lacks; for utf-16 the ones
    neither gsm nor gsm-pt carries (or, when each lacks different ones, every one of them)."""
    from sendframe.text.encodings import unencodable_series

    forced = pd.Series("", index=text.index, dtype="str")
    off_gsm = (chosen != "gsm").to_numpy(dtype=bool, na_value=False)
    if not off_gsm.any():
        return forced
    subset = text[off_gsm]
    not_gsm = unencodable_series(subset, "gsm").fillna("")
    not_pt = unencodable_series(subset, "gsm-pt").fillna("")
    neither = _common_characters(not_gsm, not_pt)
    union = (not_gsm + not_pt).map(lambda s: "".join(dict.fromkeys(s)))  # few distinct values
    is_utf16 = (chosen[off_gsm] == "utf-16").to_numpy(dtype=bool)
    value = np.where(is_utf16, np.where(neither.to_numpy(dtype=object) == "", union.to_numpy(dtype=object), neither.to_numpy(dtype=object)), not_gsm.to_numpy(dtype=object))
    forced[off_gsm] = value
    return forced


def _lost_characters(text: pd.Series, chosen: pd.Series) -> pd.Series:
    from sendframe.text.encodings import unencodable_series

    lost = pd.Series("", index=text.index, dtype="str")
    for name in ("gsm", "gsm-pt"):
        rows = (chosen == name).to_numpy(dtype=bool, na_value=False)
        if rows.any():
            lost[rows] = unencodable_series(text[rows], name).fillna("").to_numpy(dtype=object)
    return lost


def _load_table(prices: Any) -> Any:
    from sendframe import pricing

    if prices is not None and hasattr(prices, "costs"):
        return prices
    return pricing.load_prices(prices)


def _countries(numbers: pd.Series) -> pd.Series:
    from sendframe.api.recipients import region_of

    codes, uniques = pd.factorize(numbers, use_na_sentinel=True)
    regions = np.asarray([region_of(v) for v in uniques] + [None], dtype=object)[codes]
    return pd.Series(regions, index=numbers.index, dtype="str")


def estimate(
    contacts: pd.DataFrame,
    template: str,
    *,
    channel: str = "sms",
    encoding: str | None = None,
    parts: int | None = None,
    certified: bool = False,
    attachments: int = 0,
    prices: Any = None,
    trans: int = 0,
    otp_config: Mapping[str, Any] | None = None,
    link_base: str | None = None,
    to_column: str | None = None,
) -> pd.DataFrame:
    """Per row: ``text, encoding, length, parts, forced_by, lost_characters, country, unit_price,
    cost, billable``; totals in ``.attrs["totals"]`` (see :func:`estimate_totals`).

    - ``encoding``: ``None`` is what a request without ``encoding`` gets (``gsm``); ``"gsm"``,
      ``"gsm-pt"``, ``"utf-16"`` as requested; ``"auto"`` the cheapest that carries every
      character of each row (``forced_by`` then names the characters that forced it off gsm).
    - ``length`` is in message units (septets, or UTF-16 code units); ``lost_characters`` lists
      the characters the chosen encoding cannot carry: they would arrive as ``?``.
    - ``parts``: the most parts the request will allow; rows needing more would be rejected
      (code 105) and are not billable. ``None`` means no limit for the estimate.
    - cost comes from :mod:`sendframe.pricing` (``prices``: a ``PriceTable``, a CSV path, or
      ``None`` for data/prices.csv): unit price x parts for SMS and landing SMS, x 1 for other
      channels (voice assumes the call is answered), plus the certified and attachment
      surcharges. Rows that would be rejected (missing variable, invalid recipient, too many
      parts) cost 0 and have ``billable`` False; ``too_many_parts`` marks the 105 ones.

    Non-SMS channels (mailing, voice, whatsapp) get no encoding, ``length`` in characters and 1 part.
    The contacts frame is not modified.

        >>> import pandas as pd
        >>> est = estimate(pd.DataFrame({"phone": ["34600123456"]}), "Olá", encoding="auto")
        >>> est.loc[0, "encoding"], est.loc[0, "forced_by"]
        ('gsm-pt', 'á')
    """
    from sendframe.api.recipients import is_valid_email, is_valid_phone
    from sendframe.text.encodings import message_units_series
    from sendframe.text.parts import sms_parts_series

    column = recipient_column(channel, to_column)
    if column not in contacts.columns:
        raise InputError(f"The contacts have no {column!r} column for the {channel} channel; pass to_column=.")
    if parts is not None and (isinstance(parts, bool) or not isinstance(parts, int) or parts < 1):
        raise InputError(f"parts must be a whole number of at least 1 (got {parts!r}).")
    if isinstance(attachments, bool) or not isinstance(attachments, int) or attachments < 0:
        raise InputError(f"attachments must be a whole number of at least 0 (got {attachments!r}).")
    text = render(contacts, template, channel=channel, otp_config=otp_config, link_base=link_base, trans=trans)
    index = contacts.index
    has_text = text.notna().to_numpy(dtype=bool)
    if channel in SMS_CHANNELS:
        chosen = _choose_encoding(text, encoding)
        chosen = chosen.where(has_text)
        length = message_units_series(text, chosen.fillna("gsm"))
        needed = sms_parts_series(text, chosen.fillna("gsm"))
        forced = _forced_by(text, chosen) if encoding == "auto" else pd.Series("", index=index, dtype="str")
        lost = _lost_characters(text, chosen)
    else:
        chosen = pd.Series(pd.NA, index=index, dtype="str")
        length = text.str.len().astype("Int64")
        needed = pd.Series(1, index=index, dtype="Int64")
        forced = pd.Series("", index=index, dtype="str")
        lost = pd.Series("", index=index, dtype="str")
    length = length.where(has_text, pd.NA).astype("Int64")
    needed = needed.where(has_text, pd.NA).astype("Int64")
    forced = forced.where(has_text)
    lost = lost.where(has_text)

    recipients = contacts[column]
    rule = is_valid_email if channel == "mailing" else is_valid_phone
    codes, uniques = pd.factorize(recipients, use_na_sentinel=True)
    valid = np.array([bool(rule(v)) for v in uniques] + [False], dtype=bool)[codes]
    too_many = needed.gt(parts).to_numpy(dtype=bool, na_value=False) if parts is not None else np.zeros(len(index), dtype=bool)
    billable = has_text & valid & ~too_many

    table = _load_table(prices)
    if channel == "mailing":  # priced by the default row: an address has no country
        numbers = pd.Series(pd.NA, index=index, dtype="str")
        country = pd.Series(pd.NA, index=index, dtype="str")
    else:
        numbers = recipients.astype("str").where(valid)
        country = _countries(numbers)
    found = table.lookup(numbers, channel)
    charged_parts = needed.fillna(1).astype("int64") if channel in SMS_CHANNELS else 1
    costs = table.costs(numbers, channel, parts=charged_parts, certified=certified, attachments=attachments)
    cost = np.where(billable, costs.to_numpy(dtype=float), 0.0)
    currencies = found["currency"].dropna().unique().tolist()

    frame = pd.DataFrame(
        {
            "text": text,
            "encoding": chosen,
            "length": length,
            "parts": needed,
            "forced_by": forced,
            "lost_characters": lost,
            "country": country,
            "unit_price": found["unit_price"].astype("float64").to_numpy(),
            "cost": cost,
            "billable": billable,
            "too_many_parts": too_many,
        },
        index=index,
    )
    frame.attrs["currency"] = currencies[0] if len(currencies) == 1 else "/".join(map(str, currencies))
    frame.attrs["totals"] = estimate_totals(frame)
    return frame


def estimate_totals(frame: pd.DataFrame) -> dict[str, Any]:
    """Totals of an :func:`estimate` frame (also after filtering it).

    Keys: ``rows``, ``billable`` (rows that would be charged), ``messages`` (SMS parts or messages
    charged), ``cost``, ``currency``, ``encodings`` (rows per encoding), ``rows_losing_characters``,
    ``too_many_parts``, ``missing_text`` (rows with a missing variable).

        >>> import pandas as pd
        >>> est = estimate(pd.DataFrame({"phone": ["34600123456", "34600123457"]}), "Hi")
        >>> t = estimate_totals(est); t["rows"], t["messages"]
        (2, 2)
    """
    billable = frame["billable"].to_numpy(dtype=bool)
    parts = frame["parts"].fillna(0).to_numpy(dtype=np.int64)
    lost = frame["lost_characters"].fillna("").str.len().gt(0)
    encodings = frame["encoding"].value_counts(dropna=True)
    return {
        "rows": int(len(frame)),
        "billable": int(billable.sum()),
        "messages": int(parts[billable].sum()),
        "cost": round(float(frame["cost"].sum()), 4),
        "currency": frame.attrs.get("currency", "EUR"),
        "encodings": {str(k): int(v) for k, v in encodings.items()},
        "rows_losing_characters": int(lost.sum()),
        "too_many_parts": int(frame["too_many_parts"].sum()),
        "missing_text": int(frame["text"].isna().sum()),
    }
