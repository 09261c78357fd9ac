"""Campaign totals that keep up with typing: encoding, characters, parts and cost.

A view of what a send would do, split by what changes while a template is being written. Who is sent to
(valid, not suppressed, under the frequency cap) does not depend on the template: it is the message's
prepared frame's plan (:func:`~sendframe.campaign.prepared.prepare`), worked out once per table and send
settings. The texts do: per keystroke they are measured by the text engine's one pass
(:func:`~sendframe.campaign.measured.measure_texts`, the pass ``prepare`` itself reads, so a send of the
template last counted measures nothing again), and the repeats and prices are applied to those rows.
The answers equal :func:`~sendframe.campaign.estimate.estimate`'s.

    >>> import pandas as pd, sendframe
    >>> counter = MessageCounter(pd.DataFrame({"phone": ["34600123456"], "name": ["Zoë"]}))
    >>> totals = counter.count(sendframe.sms("Hi {name|upper}", sender="Shop", encoding="auto"))
    >>> totals.parts, totals.encodings, totals.recipients
    (1, {'utf-16': 1}, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign.estimate import price_table, priced_numbers
from sendframe.campaign.measured import asked_encoding, measure_texts
from sendframe.campaign.policy import keep_reasons, repeated_rows
from sendframe.campaign.prepared import same_option
from sendframe.errors import SendframeError
from sendframe.text.encodings import ENCODINGS

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

# the rules a counter applies per keystroke itself: text problems and repeats (those depend on the template)
_PER_TEMPLATE = ("duplicate", "preflight")


@dataclass(frozen=True)
class CounterTotals:
    """What the counter shows for one template."""

    rows: int
    recipients: int  # rows a send would send to (action == send): one per recipient, with a text that fits
    encodings: dict[str, int]  # rows per encoding
    characters_max: int  # longest message, in message units
    parts: int  # parts of every billable row
    parts_max: int
    cost: float
    forced_by: str  # characters that force utf-16, in order of first appearance in the texts
    missing_text: int  # rows with a missing variable
    too_many_parts: int


class MessageCounter:
    """Counts a contact table's campaign totals for message after message, fast.

    :meth:`count` takes the message being written and returns :class:`CounterTotals`; ``prices`` as
    :func:`~sendframe.campaign.estimate.estimate` takes them. The contacts frame is not modified.
    """

    def __init__(self, contacts: pd.DataFrame, *, prices: Any = None) -> None:
        self.contacts = contacts
        self._prices = price_table(prices)
        self.policy: tuple[tuple[Any, ...], pd.Series, np.ndarray] | None = None
        """(the send settings, each row's recipient key, the rows the plan lets through), kept while they stay."""
        self._priced: dict[tuple[int, bool], np.ndarray] = {}  # (parts, certified) -> each row's price

    def _allowed(self, message: Message, keep: frozenset[str]) -> tuple[pd.Series, np.ndarray]:
        """Each row's recipient key, and the rows the send policy lets through whatever the template: valid, not
        suppressed and under the frequency cap (the message's prepared frame's plan)."""
        settings = (message.channel, message.to, message.default_region, message.suppression, message.frequency_cap,
                    message.history, keep)
        if self.policy is None or not all(same_option(a, b) for a, b in zip(self.policy[0], settings, strict=True)):
            self._priced = {}
            try:
                prepared = message.prepare(self.contacts, keep=keep | set(_PER_TEMPLATE))
                self.policy = (settings, prepared.recipient_key, prepared.sent)
            except (SendframeError, OSError):  # a broken template, an unreadable suppression list (the check
                self.policy = None  # and the send say why): the recipients by validity meanwhile
                keys = sendable_keys(self.contacts[message.recipient_column(self.contacts)], message.info.recipient)
                return keys, keys.notna().to_numpy(dtype=bool)
        return self.policy[1], self.policy[2]

    def count(self, message: Message, *, keep: Any = None) -> CounterTotals:
        """Totals of ``message`` as its send would count them: ``recipients`` is the number of rows its prepared
        frame sends to and only they are priced (suppression, frequency cap, repeats). ``keep``: the send's
        ``keep`` (skip reasons it sends anyway). Any template is counted, even one a send would refuse.
        """
        kept = keep_reasons(keep)
        keys, allowed = self._allowed(message, kept)
        sms = message.info.sends_sms
        encoding = asked_encoding(message.encoding) if sms else "utf-16"  # other channels: length in characters
        measured = measure_texts(self.contacts, message.template or "", encoding=encoding,
                                 link_base=message.link_base, otp_config=message.fields.get("otpConfig"))
        present = measured["parts"].notna().to_numpy(dtype=bool)
        units = measured["units"].fillna(0).to_numpy(dtype=np.int64)
        needed = measured["parts"].fillna(0).to_numpy(dtype=np.int64) if sms else np.ones(len(present), np.int64)
        too_many = (needed > message.parts) & present if sms else np.zeros(len(present), dtype=bool)
        sendable = allowed & ((present & ~too_many) if "preflight" not in kept else True)
        first = sendable if "duplicate" in kept else sendable & ~repeated_rows(keys, sendable)  # the plan's rule
        certified = bool(message.fields.get("certified", False))
        cost = sum(float(self._costs(message, keys, int(k), certified)[first & (needed == k)].sum())
                   for k in np.unique(needed[first]) if k) + 0.0
        counts = measured["encoding"].value_counts() if sms else pd.Series(dtype=int)
        forced = ""
        if sms and encoding in ("auto", "utf-16"):
            outside = measured["unencodable_gsm_pt"]
            forced = "".join(dict.fromkeys("".join(outside.cat.categories[np.unique(outside.cat.codes[present])])))
        return CounterTotals(
            rows=len(present),
            recipients=int(first.sum()),
            encodings={e: int(counts[e]) for e in sorted(counts.index, key=lambda e: (-counts[e], ENCODINGS.index(e)))},
            characters_max=int(units[present].max()) if present.any() else 0,
            parts=int(needed[first].sum()),
            parts_max=int(needed[present].max()) if present.any() else 0,
            cost=cost,
            forced_by=forced,
            missing_text=int((~present).sum()),
            too_many_parts=int(too_many.sum()),
        )

    def _costs(self, message: Message, keys: pd.Series, parts: int, certified: bool) -> np.ndarray:
        """Each row's price for ``parts`` parts, as the send's estimate prices it (a call counted as answered)."""
        if (parts, certified) not in self._priced:
            numbers = priced_numbers(keys, message.info.recipient)
            self._priced[parts, certified] = self._prices.costs(numbers, message.channel, parts=parts,
                                                                certified=certified).to_numpy()
        return self._priced[parts, certified]
