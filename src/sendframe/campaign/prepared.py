"""One prepared frame: what a message does to each row of a contact table, worked out once.

:func:`prepare` checks the rows (preflight), renders and measures the texts, plans who is sent to
(:mod:`sendframe.campaign.policy`), prices what is sent and, under ``local_time``/``quiet_hours``,
schedules it. ``preview``, ``preflight``, ``plan``, ``ready``, ``estimate``, ``schedule`` and ``send``
of a :class:`~sendframe.campaign.message.Message` are views of the :class:`Prepared` answer, so what
the estimate prices is what the send sends, row for row. The last answer is kept
(:mod:`sendframe.campaign.preview`): ``msg.estimate(df)`` then ``msg.send(df)`` prepares once.

    >>> import pandas as pd, sendframe
    >>> msg = sendframe.sms("Hi {name}", sender="Shop")
    >>> prepared = prepare(msg, pd.DataFrame({"phone": ["34600123456", "34600123456"], "name": ["Jo", "Al"]}))
    >>> prepared.frame[["recipient", "text", "parts", "action"]]
         recipient   text  parts             action
    0  34600123456  Hi Jo      1               send
    1  34600123456  Hi Al      1  skipped_duplicate

**The estimate** (:func:`estimate`): encoding, length, parts and cost of every message of a campaign, with totals.

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

import contextlib
import dataclasses
import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe import pricing
from sendframe.api.countries import recipient_countries
from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign import preview as kept
from sendframe.campaign.policy import frequency_capped, history_from_ledgers, keep_reasons, key_codes, plan_rows
from sendframe.campaign.preflight import preflight
from sendframe.campaign.preview import asked_encoding, contacts_frame, measure_sms, render
from sendframe.campaign.schedule import local_send_times
from sendframe.engines import dispatched
from sendframe.errors import InputError, SendframeError
from sendframe.options import keyword_checked
from sendframe.send_outcomes import SKIPPED_OUTCOMES
from sendframe.text.encodings import ENCODINGS
from sendframe.text.templates import column_to_arrow

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["ESTIMATE_COLUMNS", "Prepared", "estimate", "estimate_sums", "estimate_totals", "prepare", "price_table",
           "priced_numbers", "same_option", "totals_of_sums"]

# the columns of msg.estimate, in order (the text engine's and the price list's answer per row, then the plan's)
ESTIMATE_COLUMNS = ("text", "encoding", "length", "parts", "forced_by", "lost_characters", "country", "unit_price",
                    "cost", "billable", "too_many_parts", "action")
# how msg.estimate holds its columns of a few known values (a code per row, not a text: the same categories in every
# frame, a Dask partition's too) and its counts (an SMS's length in units fits 32 bits, its parts 16)
_ESTIMATE_TYPES: dict[str, Any] = {
    "encoding": pd.CategoricalDtype(list(ENCODINGS)), "length": "Int32", "parts": "Int16",
    "action": pd.CategoricalDtype(["send", *SKIPPED_OUTCOMES]),
}


@dataclasses.dataclass(frozen=True, eq=False)
class Prepared:
    """A message applied to a contact table: the problems at once, the per-row table when first read.

    ``problems`` is the preflight frame; :attr:`plan` (``action``, ``reason``) and :attr:`frame` (every
    per-row column) are computed when first read and raise ``InputError`` when a problem stops the
    whole campaign (a malformed template): no row could be sent as meant.
    """

    message: Message
    contacts: pd.DataFrame
    recipient_column: str
    """The column of the contacts the message sends to."""
    recipient_key: pd.Series
    """Each row's recipient as compared, missing where it is not a valid recipient (the one rule:
    :func:`~sendframe.api.recipient_columns.sendable_keys`)."""
    recipient_codes: np.ndarray
    """The keys as :func:`~sendframe.campaign.policy.key_codes` numbers them (-1: missing): preflight's and the
    plan's repeats are found on them, hashed once (at 2M rows a hash of the keys took 0.3-0.4 s)."""
    problems: pd.DataFrame
    measured: pd.DataFrame | None
    keep: frozenset[str]
    moment: Any
    """When the run counts from (frequency cap, schedule): ``now``, else the present for a message whose
    ``frequency_cap``, ``local_time`` or ``quiet_hours`` depend on it (None otherwise)."""
    ledger: Any = None
    prices: Any = None
    attachments: int = 0

    @functools.cached_property
    def plan(self) -> pd.DataFrame:
        """Per row: ``action`` (``send`` or a ``skipped_*`` outcome) and ``reason``."""
        msg, problems = self.message, self.problems
        fatal = problems[problems["row"].isna() & (problems["severity"] == "error")]
        if len(fatal):
            lines = "\n".join(f"  - {c}: {m}" for c, m in zip(fatal["column"], fatal["message"], strict=True))
            raise InputError(f"This {msg.channel} message cannot be sent as it is:\n{lines}")
        capped, why = None, ""
        if msg.frequency_cap is not None:
            n, days = msg.frequency_cap
            history = msg.history if isinstance(msg.history, pd.DataFrame) else history_from_ledgers(
                msg.history, exclude=self.ledger)
            capped = frequency_capped(self.recipient_key, history, n, days, self.moment,
                                      default_region=msg.default_region)
            why = f"already sent {n} message(s) in the last {days:g} days (frequency_cap=({n}, {days:g}))."
        return plan_rows(problems, self.contacts.index, self.recipient_key.reset_index(drop=True), self.keep, capped,
                         why, codes=self.recipient_codes)

    @functools.cached_property
    def schedule(self) -> pd.DataFrame:
        """Each row's zone and local and UTC send time under the message's ``local_time`` / ``quiet_hours``."""
        msg = self.message
        return local_send_times(self.contacts, msg.local_time, quiet_hours=msg.quiet_hours, now=self.moment,
                                recipient=self.recipient_column if msg.info.recipient == "phone" else None,
                                default_region=msg.default_region)

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """Per row: ``recipient`` (as typed), ``recipient_key``, ``text`` (what the recipient reads; mailing:
        the subject), ``priced_text`` (when the price counts more than that: mailing's subject and body),
        the estimate's columns (encoding, length, parts, cost, billable: skipped rows cost 0), ``action``,
        ``reason`` and, under ``local_time``/``quiet_hours``, ``send_at_utc``. Totals in ``.attrs``."""
        msg, contacts, field = self.message, self.contacts, self.message.info.result_text_field
        priced = estimate(msg, contacts, prices=self.prices, attachments=self.attachments,
                                     measured=self.measured, keys=self.recipient_key)
        # as the send writes it: 34600123456.0 is 34600123456
        sent_as = pd.array(column_to_arrow(contacts[self.recipient_column]), dtype="str")
        front = {"recipient": sent_as, "recipient_key": self.recipient_key, "text": priced["text"]}
        if field is None:  # nothing for the recipient to read (a recording, a stored template)
            front["text"] = pd.Series(pd.NA, index=contacts.index, dtype="str")
        elif msg.template != msg.fields.get(field):  # priced on more than the recipient reads (mailing's body)
            front.update(text=msg.render(contacts), priced_text=priced["text"])
        table = pd.concat([pd.DataFrame(front, index=contacts.index), priced.drop(columns="text"), self.plan], axis=1)
        if msg.local_time is not None or msg.quiet_hours is not None:
            table["send_at_utc"] = self.schedule["send_at_utc"].array  # tz-aware even when empty
        return _priced_as_sent(table, priced.attrs.get("currency", "EUR"))

    @property
    def estimate(self) -> pd.DataFrame:
        """``msg.estimate``: the priced columns and ``action``, totals in ``.attrs``."""
        table = self.frame
        text = table["priced_text"] if "priced_text" in table else table["text"]
        view = table[list(ESTIMATE_COLUMNS[1:])].assign(text=text)[list(ESTIMATE_COLUMNS)].astype(_ESTIMATE_TYPES)
        view.attrs = dict(table.attrs)
        return view

    @property
    def preview(self) -> pd.DataFrame:
        """``msg.preview``: per row ``recipient``, ``text``, ``action`` and ``reason``."""
        return self.frame[["recipient", "text", "action", "reason"]].copy()

    @property
    def ready(self) -> pd.DataFrame:
        """``msg.ready``: the rows a send sends (a new frame)."""
        return self.contacts.loc[self.sent].copy()

    @property
    def sent(self) -> np.ndarray:
        """Which rows a send sends (a boolean mask over the contacts' rows)."""
        return (self.plan["action"] == "send").to_numpy()

    def replanned(self, plan: pd.DataFrame) -> Prepared:
        """The same preparation with another plan (``action``, ``reason``): a campaign of several messages
        (:class:`~sendframe.campaign.experiment.Variants`) decides repeats across them. Rows newly skipped cost
        nothing."""
        again = dataclasses.replace(self)
        table = _priced_as_sent(self.frame.assign(action=plan["action"], reason=plan["reason"]),
                                self.frame.attrs["currency"])
        # a cached_property keeps its value in the instance's __dict__: the new plan is seeded there
        again.__dict__.update(plan=plan[["action", "reason"]], frame=table)
        return again


def _priced_as_sent(table: pd.DataFrame, currency: str) -> pd.DataFrame:
    """``table`` with the rows its ``action`` skips costing nothing (not billable); its totals in ``.attrs``."""
    sent = (table["action"] == "send").to_numpy()
    priced = table.assign(billable=table["billable"].to_numpy() & sent, cost=table["cost"].where(sent, 0.0))
    priced.attrs = {"currency": currency}
    priced.attrs["totals"] = estimate_totals(priced)
    return priced


def same_option(a: Any, b: Any) -> bool:
    """Whether two option values are the same for reuse: the same object, equal plain values, tuples and
    dataclasses (a message) of the same options, or equal mappings (a list or frame: the same object).

        >>> import sendframe
        >>> same_option(("a",), ("a",)), same_option([1], [1])
        (True, False)
        >>> same_option(sendframe.sms("Hi", sender="Shop"), sendframe.sms("Hi", sender="Shop"))
        True
    """
    if a is b:
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return dict(a) == dict(b)
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return all(same_option(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(same_option, a, b))
    return isinstance(a, (str, bytes, int, float, bool, frozenset, type(None))) and a == b


def prepare(msg: Message, frame: pd.DataFrame, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
            now: Any = None, ledger: Any = None, prices: Any = None, attachments: int = 0) -> Prepared:
    """``msg.prepare`` of a pandas frame; the last answer is reused for the same message settings, options and
    table content (:func:`same_option`, :func:`~sendframe.campaign.preview.frame_fingerprint`).

    ``now`` only matters to a message with ``frequency_cap``, ``local_time`` or ``quiet_hours``; such a
    message prepared without ``now`` counts from the present and is not reused.
    """
    reasons = keep_reasons(keep)
    timed = msg.frequency_cap is not None or msg.local_time is not None or msg.quiet_hours is not None
    fingerprint = None if timed and now is None else kept.frame_fingerprint(frame, [str(c) for c in frame.columns])
    settings = (msg, suppression, reasons, now, ledger if msg.frequency_cap else None, prices, attachments, fingerprint)
    last = kept.last("prepared")
    if fingerprint is not None and last is not None and same_option(last[0], settings):
        return last[1]  # type: ignore[no-any-return]
    moment = pd.Timestamp.now(tz="UTC") if now is None and timed else now
    # the text engine's one pass over an SMS's rows, which preflight, estimate and the send's result all read;
    # other channels and ``trans`` measure their own way, and a broken template is preflight's to explain
    measured, template, trans = None, msg.fields.get("message"), int(msg.fields.get("trans", 0))
    if msg.info.sends_sms and trans == 0 and isinstance(template, str):
        with contextlib.suppress(SendframeError):
            measured = measure_sms(frame, msg)
    column = msg.recipient_column(frame)
    keys = sendable_keys(frame[column], msg.info.recipient)
    codes = key_codes(keys)
    problems = preflight(msg, frame, suppression=suppression, measured=measured, keys=keys, codes=codes)
    prepared = Prepared(msg, frame, column, keys, codes, problems, measured, reasons, moment, ledger=ledger,
                        prices=prices, attachments=attachments)
    kept.store("prepared", None if fingerprint is None else settings, prepared)
    return prepared


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
    return prices if hasattr(prices, "costs") else pricing.load_prices(prices)


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
        text = render(contacts, msg.template or "", otp_config=msg.fields.get("otpConfig"),
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
