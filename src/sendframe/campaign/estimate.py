"""Estimate: encoding, length, parts and cost of every message of a campaign, with totals.

Everything is vectorised (pyarrow compute through the text engine's ``*_series`` functions and
pandas vector operations); Python only runs once per *distinct* value (countries, prices) or for
the rare rows holding characters an encoding cannot carry.

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["34600123456"], "name": ["Ana"]})
    >>> row = estimate(sendframe.sms("Hola {name}", sender="Shop"), contacts)
    >>> row[["text", "encoding", "length", "parts"]].to_dict("records")
    [{'text': 'Hola Ana', 'encoding': 'gsm', 'length': 8, 'parts': 1}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe import pricing
from sendframe.api.countries import recipient_countries
from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign.measured import asked_encoding, measure_sms
from sendframe.campaign.preview import contacts_frame, render
from sendframe.engines import dispatched
from sendframe.errors import InputError
from sendframe.options import keyword_checked
from sendframe.text.encodings import ENCODINGS

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["estimate", "estimate_sums", "estimate_totals", "price_table", "priced_numbers", "totals_of_sums"]


def _per_combination(not_gsm: pd.Series, not_pt: pd.Series, chosen: pd.Series, answer: Any) -> pd.Series:
    """``answer(not_gsm, not_pt, encoding)`` once per distinct combination, spread over the rows (a missing
    value given as ``""``). ``not_gsm`` / ``not_pt`` are categoricals of the characters each encoding cannot carry."""
    combinations = pd.MultiIndex.from_arrays([not_gsm, not_pt, chosen])
    distinct = combinations.unique()
    answers = [answer(*(value if isinstance(value, str) else "" for value in values)) for values in distinct]
    return pd.Series(pd.array(answers, dtype="str").take(distinct.get_indexer(combinations)), index=chosen.index)


def _forced_answer(not_gsm: str, not_pt: str, encoding: str) -> str:
    """Characters that pushed a row off gsm: for gsm-pt the ones gsm lacks; for utf-16 the ones neither gsm
    nor gsm-pt carries (or, when each lacks different ones, every one of them)."""
    if encoding == "gsm-pt":  # gsm-pt rows need only what gsm lacks
        return not_gsm
    if encoding != "utf-16":
        return ""
    neither = "".join(c for c in not_gsm if c in not_pt)
    return neither or "".join(dict.fromkeys(not_gsm + not_pt))


def _lost_answer(not_gsm: str, not_pt: str, encoding: str) -> str:
    """Characters the chosen encoding cannot carry: they arrive as ``?``."""
    return not_gsm if encoding == "gsm" else not_pt if encoding == "gsm-pt" else ""


def price_table(prices: Any) -> Any:
    """``prices`` as a ``PriceTable``: one as it is, a CSV path read, ``None`` the table shipped with sendframe."""
    if prices is not None and hasattr(prices, "costs"):
        return prices
    return pricing.load_prices(prices)


def priced_numbers(keys: pd.Series, kind: str) -> pd.Series:
    """The numbers a price is looked up by: the valid phones' keys; none for an address (the price list's default row).

        >>> priced_numbers(pd.Series(["34600123456", None]), "phone").tolist()
        ['34600123456', nan]
    """
    return pd.Series(pd.NA, index=keys.index, dtype="str") if kind == "email" else keys.astype("str")


@keyword_checked
def estimate(msg: Message, contacts: pd.DataFrame, *, prices: Any = None, attachments: int = 0,
             measured: pd.DataFrame | None = None, keys: pd.Series | None = None) -> pd.DataFrame:
    """Per row of what ``msg`` sends: ``text, encoding, length, parts, forced_by, lost_characters, country,
    unit_price, cost, billable``; totals in ``.attrs["totals"]`` (see :func:`estimate_totals`). Every row is
    priced: :meth:`sendframe.Message.estimate` then makes the rows a send skips cost nothing.

    - ``encoding`` (the message's): ``None`` is what a request without ``encoding`` gets (``gsm``); ``"auto"``
      the cheapest that carries every character of each row (``forced_by`` then names the characters that
      forced it off gsm).
    - ``length`` is in message units (septets, or UTF-16 code units); ``lost_characters`` lists
      the characters the chosen encoding cannot carry: they would arrive as ``?``.
    - a recipient is valid when it has a key (:func:`~sendframe.api.recipient_columns.sendable_keys`).
    - rows needing more than the message's ``parts`` would be rejected (code 105) and are not billable.
    - cost comes from :mod:`sendframe.pricing` (``prices``: a ``PriceTable``, a CSV path, or
      ``None`` for data/prices.csv): unit price x parts for SMS and landing SMS, x 1 for other
      channels (voice assumes the call is answered), plus the certified and ``attachments``
      surcharges. Rows that would be rejected (missing variable, invalid recipient, too many
      parts) cost 0 and have ``billable`` False; ``too_many_parts`` marks the 105 ones.

    Non-SMS channels (mailing, voice, whatsapp) get no encoding, ``length`` in characters and 1 part.
    The contacts frame is not modified. ``measured``: the text engine's
    :func:`~sendframe.text.measure.measure_frame` of these rows and template (``unencodable=True``, the
    encoding asked or ``None`` for ``"auto"``), when the caller already has it, so the text is measured once;
    ``keys``: the recipient column's :func:`~sendframe.api.recipient_columns.sendable_keys`, likewise.

        >>> import pandas as pd, sendframe
        >>> msg = sendframe.sms("Olá", sender="Shop", encoding="auto")
        >>> est = estimate(msg, pd.DataFrame({"phone": ["34600123456"]}))
        >>> est.loc[0, "encoding"], est.loc[0, "forced_by"]
        ('gsm-pt', 'á')
    """
    contacts_frame(contacts)
    if isinstance(attachments, bool) or not isinstance(attachments, int) or attachments < 0:
        raise InputError(f"attachments must be a whole number of at least 0 (got {attachments!r}).")
    info, index, none = msg.info, contacts.index, pd.Series("", index=contacts.index, dtype="str")
    if info.sends_sms:
        asked = asked_encoding(msg.encoding)
        measured = measure_sms(contacts, msg, measured=measured)
        text = pd.Series(measured["text"], index=index, name="text").astype("str")
        chosen = (measured["encoding"] if asked == "auto" else pd.Series(asked, index=index)).astype("str")
        characters = _per_combination(measured["unencodable_gsm"], measured["unencodable_gsm_pt"], chosen,
                                      _forced_answer if asked == "auto" else _lost_answer)
        # "auto": the cheapest encoding carries every character, nothing is lost; else none is forced
        forced, lost = (characters, none) if asked == "auto" else (none, characters)
        length, needed = measured["units"], measured["parts"]
    else:
        text = render(contacts, msg.template or "", channel=msg.channel, otp_config=msg.fields.get("otpConfig"),
                      link_base=msg.link_base, trans=int(msg.fields.get("trans", 0)))
        chosen, length, needed = pd.Series(pd.NA, index=index, dtype="str"), text.str.len(), pd.Series(1, index=index)
        forced = lost = none
    has_text = text.notna().to_numpy(dtype=bool)
    chosen, forced, lost = chosen.where(has_text), forced.where(has_text), lost.where(has_text)
    length, needed = (values.where(has_text, pd.NA).astype("Int64") for values in (length, needed))

    if keys is None:
        keys = sendable_keys(contacts[msg.recipient_column(contacts)], info.recipient)
    too_many = needed.gt(msg.parts).to_numpy(dtype=bool, na_value=False)  # other channels: 1 part of 1
    billable = has_text & keys.notna().to_numpy(dtype=bool) & ~too_many  # a valid recipient has a key

    table = price_table(prices)
    numbers = priced_numbers(keys, info.recipient)
    country = recipient_countries(numbers).astype("str")  # the country rule, not the price's prefix (+1: US or CA)
    found = table.lookup(numbers, msg.channel)
    charged_parts = needed.fillna(1).astype("int64") if info.billed_per_part else 1
    costs = table.costs(numbers, msg.channel, parts=charged_parts, certified=bool(msg.fields.get("certified", False)),
                        attachments=attachments)
    cost = np.where(billable, costs.to_numpy(dtype=float), 0.0)
    currencies = found["currency"].dropna().unique().tolist()

    frame = pd.DataFrame({"text": text, "encoding": chosen, "length": length, "parts": needed, "forced_by": forced,
                          "lost_characters": lost, "country": country,
                          "unit_price": found["unit_price"].astype("float64").to_numpy(), "cost": cost,
                          "billable": billable, "too_many_parts": too_many}, index=index)
    frame.attrs["currency"] = currencies[0] if len(currencies) == 1 else "/".join(map(str, currencies))
    frame.attrs["totals"] = estimate_totals(frame)
    return frame


def estimate_sums(frame: pd.DataFrame) -> dict[str, int | float]:
    """The counts and cost behind :func:`sendframe.estimate_totals`, each a sum over rows (the sums of a frame's
    parts add up to the frame's); the rows per encoding under ``encoding:<name>``.

        >>> import sendframe
        >>> sums = estimate_sums(estimate(sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": ["34600123456"]})))
        >>> sums["messages"], sums["encoding:gsm"]
        (1, 1)
    """
    billable = frame["billable"].to_numpy(dtype=bool)
    parts = frame["parts"].fillna(0).to_numpy(dtype=np.int64)
    counts = frame["encoding"].value_counts(dropna=True)
    return {
        "rows": len(frame), "billable": int(billable.sum()), "messages": int(parts[billable].sum()),
        "cost": float(frame["cost"].sum()),
        "rows_losing_characters": int(frame["lost_characters"].str.len().gt(0).sum()),  # a missing one: False
        "too_many_parts": int(frame["too_many_parts"].sum()), "missing_text": int(frame["text"].isna().sum()),
        **{f"encoding:{name}": int(counts.get(name, 0)) for name in ENCODINGS},
    }


def totals_of_sums(sums: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """:func:`sendframe.estimate_totals` from :func:`estimate_sums` (of one frame, or added up over its parts).

        >>> sums = {"rows": 3, "billable": 2, "messages": 4, "cost": 0.123456, "rows_losing_characters": 0,
        ...         "too_many_parts": 0, "missing_text": 1, "encoding:gsm": 1, "encoding:utf-16": 2}
        >>> totals = totals_of_sums(sums, "EUR"); totals["cost"], totals["encodings"]
        (0.1235, {'utf-16': 2, 'gsm': 1})
    """
    encodings = {name: int(sums[f"encoding:{name}"]) for name in ENCODINGS if int(sums.get(f"encoding:{name}", 0))}
    return {
        "rows": int(sums["rows"]), "billable": int(sums["billable"]), "messages": int(sums["messages"]),
        "cost": round(float(sums["cost"]), 4), "currency": currency,
        "encodings": dict(sorted(encodings.items(), key=lambda item: -item[1])),
        "rows_losing_characters": int(sums["rows_losing_characters"]),
        "too_many_parts": int(sums["too_many_parts"]), "missing_text": int(sums["missing_text"]),
    }


@dispatched("frame")
def estimate_totals(frame: pd.DataFrame) -> dict[str, Any]:
    """Totals of an :func:`estimate` frame (also after filtering it): :func:`totals_of_sums` of its
    :func:`estimate_sums` (a Dask frame's: of its partitions' sums added up, so both answer alike).

    Keys: ``rows``, ``billable`` (rows that would be charged), ``messages`` (SMS parts or messages
    charged), ``cost``, ``currency``, ``encodings`` (rows per encoding, most first), ``rows_losing_characters``,
    ``too_many_parts``, ``missing_text`` (rows with a missing variable).

        >>> import pandas as pd, sendframe
        >>> est = estimate(sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": ["34600123456", "34600123457"]}))
        >>> t = estimate_totals(est); t["rows"], t["messages"]
        (2, 2)
    """
    return totals_of_sums(estimate_sums(frame), frame.attrs.get("currency", "EUR"))
