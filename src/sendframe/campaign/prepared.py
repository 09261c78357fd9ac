"""One prepared frame: what a message does to each row of a contact table, worked out once.

:func:`prepare` checks the rows (preflight), renders and measures the texts, plans who is sent to
(:mod:`sendframe.campaign.policy`), prices what is sent and, under ``local_time``/``quiet_hours``,
schedules it. ``preview``, ``preflight``, ``plan``, ``ready``, ``estimate``, ``schedule`` and ``send``
of a :class:`~sendframe.campaign.message.Message` are views of the :class:`Prepared` answer, so what
the estimate prices is what the send sends, row for row. The last answer is kept
(:mod:`sendframe.campaign.measured`): ``msg.estimate(df)`` then ``msg.send(df)`` prepares once.

    >>> import pandas as pd, sendframe
    >>> msg = sendframe.sms("Hi {name}", sender="Shop")
    >>> prepared = prepare(msg, pd.DataFrame({"phone": ["34600123456", "34600123456"], "name": ["Jo", "Al"]}))
    >>> prepared.frame[["recipient", "text", "parts", "action"]]
         recipient   text  parts             action
    0  34600123456  Hi Jo      1               send
    1  34600123456  Hi Al      1  skipped_duplicate
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign import estimate as estimating
from sendframe.campaign import measured as kept
from sendframe.campaign.caps import frequency_capped, history_from_ledgers
from sendframe.campaign.policy import keep_reasons, plan_rows
from sendframe.campaign.preflight import preflight
from sendframe.campaign.schedule import local_send_times
from sendframe.errors import InputError, SendframeError
from sendframe.send_outcomes import SKIPPED_OUTCOMES
from sendframe.text.encodings import ENCODINGS
from sendframe.text.templates import column_to_arrow

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["ESTIMATE_COLUMNS", "Prepared", "prepare", "released", "same_option"]

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
                         why)

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
        priced = estimating.estimate(msg, contacts, prices=self.prices, attachments=self.attachments,
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
    priced.attrs["totals"] = estimating.estimate_totals(priced)
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
    table content (:func:`same_option`, :func:`~sendframe.campaign.measured.frame_fingerprint`).

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
            measured = kept.measure_sms(frame, msg)
    column = msg.recipient_column(frame)
    keys = sendable_keys(frame[column], msg.info.recipient)
    problems = preflight(msg, frame, suppression=suppression, measured=measured, keys=keys)
    prepared = Prepared(msg, frame, column, keys, problems, measured, reasons, moment, ledger=ledger, prices=prices,
                        attachments=attachments)
    kept.store("prepared", None if fingerprint is None else settings, prepared)
    return prepared


def released(prepared: Prepared) -> Prepared:
    """``prepared``, no longer kept for reuse (nor the texts measured for it): a send that sends is its last use,
    and the session then holds the send's result, not a second per-row table (about 150 bytes a row).

        >>> import pandas as pd, sendframe
        >>> msg, frame = sendframe.sms("Hi", sender="Shop"), pd.DataFrame({"phone": ["34600123456"]})
        >>> first = released(prepare(msg, frame))
        >>> prepare(msg, frame) is first
        False
    """
    kept.forget()
    return prepared
