"""Campaign totals that keep up with typing: encoding, characters, parts and cost.

``estimate`` renders every row from scratch. While a template is being written the contacts do not
change, so :class:`MessageCounter` measures each ``{variable|filter}`` column once (message units in
every encoding, which characters it holds outside gsm and gsm-pt) and, per keystroke, only adds
those measurements to the literal text's: a few numpy operations over the table, whatever its size.
Rows where a part boundary could fall on an escape sequence or a surrogate pair are rendered and
split exactly, so the answers equal :func:`~sendframe.campaign.estimate.estimate`'s.

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
import pyarrow as pa

from sendframe.api.recipient_columns import sendable_keys
from sendframe.campaign.estimate import price_table, priced_numbers
from sendframe.campaign.measured import asked_encoding
from sendframe.campaign.policy import keep_reasons, key_codes, repeated_rows
from sendframe.campaign.prepared import same_option
from sendframe.campaign.preview import placeholders
from sendframe.errors import SendframeError
from sendframe.text.encodings import CHARSETS, ENCODINGS
from sendframe.text.parts import exact_parts_needed, parts_from_units, sms_parts
from sendframe.text.scan import DOUBLE_FLAG, FOREIGN_FLAG, FOREIGN_PT, scan_text
from sendframe.text.templates import parse, render_frame

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
    forced_by: str  # characters that force utf-16, in order of first appearance in the template's sources
    missing_text: int  # rows with a missing variable
    too_many_parts: int


@dataclass
class _Measure:
    units: dict[str, np.ndarray]
    foreign: dict[str, np.ndarray]  # a character the encoding cannot carry
    double: dict[str, np.ndarray]  # a 2-unit character (escape or surrogate pair)
    missing: np.ndarray
    outside_pt: str  # characters outside gsm-pt, i.e. forcing utf-16


def _measure(arr: pa.Array) -> _Measure:
    stats = scan_text(arr)
    units = {e: stats.units[k] for k, e in enumerate(ENCODINGS)}
    foreign = {e: (stats.flags & FOREIGN_FLAG[k]) != 0 for k, e in enumerate(ENCODINGS)}
    double = {e: (stats.flags & DOUBLE_FLAG[k]) != 0 for k, e in enumerate(ENCODINGS)}
    outside = ""
    flagged = np.flatnonzero(stats.flags & FOREIGN_PT)
    if len(flagged):
        seen = dict.fromkeys("".join(pa.compute.unique(arr.take(flagged)).to_pylist()))
        outside = "".join(c for c in seen if c not in CHARSETS["gsm-pt"])
    return _Measure(units, foreign, double, stats.missing, outside)


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
        if self._settings is not None and all(same_option(a, b) for a, b in zip(self._settings, settings,
                                                                                  strict=True)):
            return
        self._settings, self.channel, column = settings, message.channel, settings[1]
        self._specials, self._shorten = placeholders(message.link_base, settings[3])
        self._measures: dict[tuple[str, str | None], _Measure] = {}
        kind = message.info.recipient
        keys = sendable_keys(self.contacts[column], kind)  # missing where not a valid recipient
        self._valid = keys.notna().to_numpy(dtype=bool)
        numbered = key_codes(keys)  # as small whole numbers (missing: <NA>), the plan's repeats are found fast
        self._codes = pd.Series(numbered, dtype="Int64").mask(numbered < 0)
        self._numbers = priced_numbers(keys, kind)
        self._priced: dict[tuple[int, bool], np.ndarray] = {}  # (parts, certified) -> each row's price

    def _allowed(self, message: Message, keep: frozenset[str]) -> np.ndarray:
        """Rows the send policy lets through whatever the template: valid, not suppressed and under the
        frequency cap (the message's prepared frame's plan, kept while the settings that decide it stay)."""
        settings = (message.channel, message.to, message.default_region, message.suppression, message.frequency_cap,
                    message.history, keep)
        if self._policy is None or not all(same_option(a, b) for a, b in zip(self._policy[0], settings, strict=True)):
            try:
                self._policy = (settings, message.prepare(self.contacts, keep=keep | set(_PER_TEMPLATE)).sent)
            except (SendframeError, OSError):  # a broken template, an unreadable suppression list (the check
                return self._valid  # and the send say why): the recipients by validity meanwhile
        return self._policy[1]

    def _costs(self, parts: int, certified: bool) -> np.ndarray:
        """Each row's price for ``parts`` parts, as the send's estimate prices it (a call counted as answered)."""
        if (parts, certified) not in self._priced:
            self._priced[parts, certified] = self._prices.costs(self._numbers, self.channel, parts=parts,
                                                                certified=certified).to_numpy()
        return self._priced[parts, certified]

    def _piece(self, name: str, filter_name: str | None) -> _Measure:
        key = (name, filter_name)
        if key not in self._measures:
            source = "{" + name + ("|" + filter_name if filter_name else "") + "}"
            text = render_frame(self.contacts, source, specials=self._specials, shorten=self._shorten)
            array = pa.array(text.array)  # the text engine's Arrow strings, as they are
            array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
            self._measures[key] = _measure(array.cast(pa.large_string()))
        return self._measures[key]

    def count(self, message: Message, *, keep: Any = None) -> CounterTotals:
        """Totals of ``message`` as its send would count them: ``recipients`` is the number of rows its prepared
        frame sends to and only they are priced (suppression, frequency cap, repeats). ``keep``: the send's
        ``keep`` (skip reasons it sends anyway). Any template is counted, even one a send would refuse.
        """
        self._measure_for(message)
        sms = message.info.sends_sms
        encoding = asked_encoding(message.encoding)
        parts = message.parts if sms else None
        template = message.template or ""
        parsed = parse(template)
        n = len(self.contacts)
        literal = "".join(p for p in parsed.pieces if isinstance(p, str))
        measures = [_measure(pa.array([literal], type=pa.large_string()))]
        broadcast = [True]
        for piece in parsed.pieces:
            if not isinstance(piece, str):
                measures.append(self._piece(piece.name, piece.filter))
                broadcast.append(False)

        def total(field: str, enc: str, combine: Any) -> np.ndarray:
            out = np.zeros(n, dtype=np.int64 if field == "units" else bool)
            for m, is_literal in zip(measures, broadcast, strict=True):
                values = getattr(m, field)[enc]
                out = combine(out, values[0] if is_literal else values)
            return out

        missing = np.zeros(n, dtype=bool)
        for m, is_literal in zip(measures, broadcast, strict=True):
            if not is_literal:
                missing |= m.missing
        if not sms:
            chosen = np.full(n, -1, dtype=np.int8)  # a position in ENCODINGS; -1: none
            units = total("units", "utf-16", np.add)
            needed = np.ones(n, dtype=np.int64)
        else:
            if encoding == "auto":
                not_gsm = total("foreign", "gsm", np.logical_or)
                not_pt = total("foreign", "gsm-pt", np.logical_or)
                chosen = np.where(not_gsm, np.where(not_pt, 2, 1), 0).astype(np.int8)
            else:
                chosen = np.full(n, ENCODINGS.index(encoding), dtype=np.int8)
            units = np.zeros(n, dtype=np.int64)
            needed = np.zeros(n, dtype=np.int64)
            for position, enc in enumerate(ENCODINGS):
                rows = chosen == position
                if not rows.any():
                    continue
                enc_units = total("units", enc, np.add)
                units[rows] = enc_units[rows]
                needed[rows] = parts_from_units(enc_units[rows], enc)
                risky = exact_parts_needed(enc_units, total("double", enc, np.logical_or), enc)
                exact = np.flatnonzero(rows & ~missing & risky)
                if len(exact):
                    texts = render_frame(self.contacts.iloc[exact], parsed, specials=self._specials,
                                         shorten=self._shorten)
                    needed[exact] = [sms_parts(t, enc) for t in texts]
        too_many = (needed > parts) & ~missing if parts is not None else np.zeros(n, dtype=bool)
        kept = keep_reasons(keep)
        sendable = self._allowed(message, kept) & (~(missing | too_many) if "preflight" not in kept else True)
        first = sendable if "duplicate" in kept else sendable & ~repeated_rows(self._codes, sendable)  # plan's rule
        certified = bool(message.fields.get("certified", False))
        cost = sum(float(self._costs(int(k), certified)[first & (needed == k)].sum())
                   for k in np.flatnonzero(np.bincount(needed[first]))) + 0.0
        present = ~missing
        per_encoding = np.bincount(chosen[present & (chosen >= 0)], minlength=len(ENCODINGS))
        forced = ""
        if sms and (encoding == "auto" or encoding == "utf-16"):
            forced = "".join(dict.fromkeys("".join(m.outside_pt for m in measures)))
        return CounterTotals(
            rows=n,
            recipients=int(first.sum()),
            encodings={ENCODINGS[k]: int(per_encoding[k]) for k in np.argsort(-per_encoding, kind="stable")
                       if per_encoding[k]},
            characters_max=int(units[present].max()) if present.any() else 0,
            parts=int(needed[first].sum()),
            parts_max=int(needed[present].max()) if present.any() else 0,
            cost=cost,
            forced_by=forced,
            missing_text=int(missing.sum()),
            too_many_parts=int(too_many.sum()),
        )
