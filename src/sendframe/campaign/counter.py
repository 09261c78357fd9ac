"""Campaign totals that keep up with typing: encoding, characters, parts and cost.

``estimate`` renders every row from scratch. While a template is being written the contacts do not
change, so :class:`MessageCounter` measures each ``{variable|filter}`` column once per row (the text
engine's :func:`~sendframe.text.measure.piece_rows`) and, per keystroke, has
:func:`~sendframe.text.measure.measure_pieces` add those measurements to the literal text's: a few numpy
operations over the table, whatever its size, and the answers of :func:`~sendframe.campaign.estimate.estimate`.

    >>> import pandas as pd, sendframe
    >>> counter = MessageCounter(pd.DataFrame({"phone": ["34600123456"], "name": ["Zoë"]}))
    >>> totals = counter.count(sendframe.sms("Hi {name|upper}", sender="Shop", encoding="auto"))
    >>> totals.parts, totals.encodings, totals.recipients
    (1, {'utf-16': 1}, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign.estimate import price_table, priced_numbers
from sendframe.campaign.measured import asked_encoding
from sendframe.campaign.policy import keep_reasons, key_codes, repeated_rows
from sendframe.campaign.prepared import same_option
from sendframe.campaign.preview import placeholders
from sendframe.errors import SendframeError
from sendframe.text.encodings import ENCODINGS, unencodable_characters
from sendframe.text.measure import measure_pieces, piece_rows
from sendframe.text.scan import FOREIGN_PT, TextStats
from sendframe.text.templates import CodedPiece, Placeholder, parse, piece_codes

if TYPE_CHECKING:
    from sendframe.campaign.message import Message



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
    forced_by: str  # characters that force utf-16, in order of first appearance in the template's sources
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
        self._settings: tuple[Any, ...] | None = None  # (channel, recipient column, link_base, otpConfig) measured
        self._policy: tuple[tuple[Any, ...], np.ndarray] | None = None  # (a message's policy settings, its rows)

    def _measure_for(self, message: Message) -> None:
        """Measure afresh when a setting the measurements depend on changes (channel, recipient column, the
        placeholders' link base and OTP length); per keystroke these stay and nothing is measured again."""
        settings = (message.channel, message.recipient_column(self.contacts), message.link_base,
                    message.fields.get("otpConfig"))
        if self._settings is not None and all(map(same_option, self._settings, settings)):  # tuples of one length
            return
        self._settings, self.channel, column = settings, message.channel, settings[1]
        self._specials, self._shorten = placeholders(message.link_base, settings[3])
        # per (variable, filter): the text engine's piece (distinct values, a code per row), its measurement per
        # row and the characters among its values that force utf-16
        self._pieces: dict[tuple[str, str | None], tuple[CodedPiece, TextStats, str]] = {}
        kind = message.info.recipient
        keys = sendable_keys(self.contacts[column], kind)  # missing where not a valid recipient
        self._valid = keys.notna().to_numpy(dtype=bool)
        self._codes = key_codes(keys)  # as small whole numbers (missing: -1), the plan's repeats are found fast
        self._numbers = priced_numbers(keys, kind)
        self._priced: dict[tuple[int, bool], np.ndarray] = {}  # (parts, certified) -> each row's price

    def _allowed(self, message: Message, keep: frozenset[str]) -> np.ndarray:
        """Rows the send policy lets through whatever the template: valid, not suppressed and under the
        frequency cap (the message's prepared frame's plan, kept while the settings that decide it stay)."""
        settings = (message.channel, message.to, message.default_region, message.suppression, message.frequency_cap,
                    message.history, keep)
        if self._policy is None or not all(same_option(a, b) for a, b in zip(self._policy[0], settings, strict=True)):
            try:  # the rules that depend on the template (text problems, repeats) are applied per keystroke by count
                self._policy = (settings, message.prepare(self.contacts, keep=keep | {"duplicate", "preflight"}).sent)
            except (SendframeError, OSError):  # a broken template, an unreadable suppression list (the check
                return self._valid  # and the send say why): the recipients by validity meanwhile
        return self._policy[1]

    def _costs(self, parts: int, certified: bool) -> np.ndarray:
        """Each row's price for ``parts`` parts, as the send's estimate prices it (a call counted as answered)."""
        if (parts, certified) not in self._priced:
            self._priced[parts, certified] = self._prices.costs(self._numbers, self.channel, parts=parts,
                                                                certified=certified).to_numpy()
        return self._priced[parts, certified]

    def _piece(self, placeholder: Placeholder) -> tuple[CodedPiece, TextStats, str]:
        key = (placeholder.name, placeholder.filter)
        if key not in self._pieces:
            source = parse("{" + placeholder.name + ("|" + placeholder.filter if placeholder.filter else "") + "}")
            piece = cast(CodedPiece, piece_codes(self.contacts, source, specials=self._specials,
                                                 shorten=self._shorten)[0])
            scans: dict[int, TextStats] = {}
            rows = piece_rows(piece, scans)
            scan = scans.get(id(piece))  # None when no row has a value
            flagged = piece.values.take(np.flatnonzero(scan.flags & FOREIGN_PT)).to_pylist() if scan else []
            self._pieces[key] = piece, rows, "".join(unencodable_characters("".join(flagged), "gsm-pt"))
        return self._pieces[key]

    def count(self, message: Message, *, keep: Any = None) -> CounterTotals:
        """Totals of ``message`` as its send would count them: ``recipients`` is the number of rows its prepared
        frame sends to and only they are priced (suppression, frequency cap, repeats). ``keep``: the send's
        ``keep`` (skip reasons it sends anyway). Any template is counted, even one a send would refuse.
        """
        self._measure_for(message)
        sms = message.info.sends_sms
        encoding = asked_encoding(message.encoding)
        n = len(self.contacts)
        found = [p if isinstance(p, str) else self._piece(p) for p in parse(message.template or "").pieces]
        pieces = [piece if isinstance(piece, str) else piece[0] for piece in found]
        rows = {id(piece): piece_rows for piece, piece_rows, _ in self._pieces.values()}
        # not an SMS: one part of utf-16 units, no encoding
        measured = measure_pieces(pieces, n, (None if encoding == "auto" else encoding) if sms else "utf-16",
                                  lambda piece: rows[id(piece)])
        units, missing = measured.units, measured.missing
        chosen = measured.chosen if sms else np.full(n, -1, dtype=np.int8)  # a position in ENCODINGS; -1: none
        needed = measured.parts if sms else np.ones(n, dtype=np.int64)
        too_many = (needed > message.parts) & ~missing if sms else np.zeros(n, dtype=bool)
        kept = keep_reasons(keep)
        sendable = self._allowed(message, kept) & (~(missing | too_many) if "preflight" not in kept else True)
        first = sendable if "duplicate" in kept else sendable & ~repeated_rows(self._codes, sendable)  # plan's rule
        billable = first & ~(missing | too_many)  # sent under keep="preflight", refused by the service: free
        certified = bool(message.fields.get("certified", False))
        cost = sum(float(self._costs(int(k), certified)[billable & (needed == k)].sum())
                   for k in np.flatnonzero(np.bincount(needed[billable]))) + 0.0
        present = ~missing
        per_encoding = np.bincount(chosen[present & (chosen >= 0)], minlength=len(ENCODINGS))
        outside = "".join("".join(unencodable_characters(p, "gsm-pt")) if isinstance(p, str) else p[2] for p in found)
        forced = "".join(dict.fromkeys(outside)) if sms and encoding in ("auto", "utf-16") else ""
        return CounterTotals(
            rows=n,
            recipients=int(first.sum()),
            encodings={ENCODINGS[k]: int(per_encoding[k]) for k in np.argsort(-per_encoding, kind="stable")
                       if per_encoding[k]},
            characters_max=int(units[present].max()) if present.any() else 0,
            parts=int(needed[billable].sum()),
            parts_max=int(needed[present].max()) if present.any() else 0,
            cost=cost,
            forced_by=forced,
            missing_text=int(missing.sum()),
            too_many_parts=int(too_many.sum()),
        )
