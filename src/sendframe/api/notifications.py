"""Delivery notifications: the twelve escape codes, delivery values and statuses.

One place for the vocabulary of the spec's "Events" section; the sandbox's notifier fills
notification URLs with it, the receiver and the log parser read them back with it.

    >>> substitute("https://x/dlr?id=%i&st=%s&ref=crm", {"i": "ab12", "s": "DELIVRD"})
    'https://x/dlr?id=ab12&st=DELIVRD&ref=crm'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from operator import itemgetter
from urllib.parse import quote

import numpy as np
import pandas as pd

# escape letter -> column name in sendframe's callback frames (read_callbacks keeps these names)
ESCAPE_CODES: dict[str, str] = {
    "i": "id",
    "d": "delivery",
    "p": "sender",
    "P": "recipient",
    "t": "sent_at",
    "c": "cost",
    "s": "status",
    "m": "mnc",
    "y": "reported_at",
    "n": "part",
    "C": "campaign_id",
    "S": "sending_id",
}

DELIVERY_MEANINGS: dict[int, str] = {
    1: "delivered to recipient",
    2: "could not be delivered to recipient",
    4: "delivered to the message centre (intermediate)",
    16: "could not be delivered to the end operator",
}
INTERMEDIATE_DELIVERY_VALUES = frozenset({4})
FINAL_DELIVERY_VALUES = frozenset({1, 2, 16})
# the status a %d value stands for when a notification carries no (known) %s
DELIVERY_STATUSES: dict[int, str] = {1: "DELIVRD", 2: "UNDELIV", 4: "ACCEPTD", 16: "REJECTD"}

# ordered from "least final" to "most final"; the order of the ordered categorical
STATUSES: tuple[str, ...] = ("UNKNOWN", "ACCEPTD", "RECEIVED", "DELIVRD", "UNDELIV", "EXPIRED", "REJECTD", "DELETED")
FINAL_STATUSES = frozenset({"DELIVRD", "UNDELIV", "EXPIRED", "REJECTD", "DELETED"})

# the date form of %t and %y
NOTIFICATION_DATE_FORMAT = "%Y-%m-%d %H:%M"

_ESCAPE = re.compile(r"%([idpPtcsmynCS])")


def escape_codes_in(url: str) -> list[str]:
    """The escape letters a notification URL uses, in order.

    >>> escape_codes_in("https://x/?a=%i&b=%n")
    ['i', 'n']
    """
    return _ESCAPE.findall(url)


def substitute(url: str, values: dict[str, str]) -> str:
    """Replace each escape code of ``url`` with its URL-encoded value (missing values become empty).

    The client's own parameters and any other ``%`` sequence are left exactly as written.
    """
    return _ESCAPE.sub(lambda m: quote(str(values.get(m.group(1), "")), safe=""), url)


def quote_value(value: str) -> str:
    """``value`` URL-encoded as :func:`substitute` encodes it (every byte but letters, digits and ``_.-~``).

    >>> quote_value("2026-11-21 09:30"), quote_value("ab12")
    ('2026-11-21%2009%3A30', 'ab12')
    """
    if value.isascii() and value.isalnum():  # ids, numbers: nothing to encode (quote's answer, faster)
        return value
    return quote(value, safe="")


class UrlTemplate:
    """A notification URL split once on its escape codes: :meth:`fill` then only joins values that are
    already URL-encoded (:func:`quote_value`), giving byte for byte what :func:`substitute` gives.

        >>> template = UrlTemplate("https://x/dlr?id=%i&st=%s&ref=100%25")
        >>> template.codes, template.fill({"i": "ab12", "s": "DELIVRD"})
        (('i', 's'), 'https://x/dlr?id=ab12&st=DELIVRD&ref=100%25')
    """

    __slots__ = ("codes", "url", "_format", "_pick")

    def __init__(self, url: str) -> None:
        pieces = _ESCAPE.split(url)  # text, code, text, code, ..., text: the matches substitute replaces
        self.url = url
        self.codes: tuple[str, ...] = tuple(pieces[1::2])
        self._format = "%s".join(text.replace("%", "%%") for text in pieces[0::2])
        self._pick: Callable[[Mapping[str, str]], tuple[str, ...]]
        if len(self.codes) <= 1:
            codes = self.codes
            self._pick = lambda quoted: tuple(quoted[code] for code in codes)
        else:
            self._pick = itemgetter(*self.codes)  # a tuple for two codes or more

    def fill(self, quoted: Mapping[str, str]) -> str:
        """The URL with each escape code replaced by its value in ``quoted`` (already URL-encoded; a missing
        one becomes empty)."""
        if not self.codes:
            return self.url
        try:
            picked = self._pick(quoted)
        except KeyError:
            picked = tuple(quoted.get(code, "") for code in self.codes)
        return self._format % picked


def notification_status(status: pd.Series, delivery: pd.Series | None = None) -> pd.Series:
    """The status each notification stands for: its ``%s`` when known, else the one its ``%d`` implies.

    A status is unknown when it is missing, ``UNKNOWN`` or not one of ``STATUSES``; then the delivery
    value decides (1 DELIVRD, 2 UNDELIV, 4 ACCEPTD, 16 REJECTD). Returns a ``string`` Series on
    ``status``'s index, <NA> where neither says anything.

    >>> notification_status(pd.Series(["DELIVRD", None, "UNKNOWN"]), pd.Series([4, 1, 2])).tolist()
    ['DELIVRD', 'DELIVRD', 'UNDELIV']
    """
    text = status.astype("string")
    known = (text.isin(STATUSES) & (text != "UNKNOWN")).fillna(False).astype(bool)
    implied = pd.Series(pd.NA, index=status.index, dtype="string")
    if delivery is not None:
        values = pd.to_numeric(pd.Series(delivery).reset_index(drop=True), errors="coerce").astype("Float64")
        implied[:] = values.map(DELIVERY_STATUSES, na_action="ignore").to_numpy(dtype=object)
    # UNKNOWN stays UNKNOWN when %d says nothing either
    return text.where(known, implied.fillna(text.where(text == "UNKNOWN")))


def is_final_notification(status: pd.Series, delivery: pd.Series | None = None) -> pd.Series:
    """The one rule for "is this notification final": vectorised over a frame's status and delivery.

    Final when the status is final (DELIVRD, UNDELIV, EXPIRED, REJECTD, DELETED); when the status is
    missing or unknown, final when the delivery value is 1, 2 or 16 (4 is intermediate). A final
    notification is never overridden by an intermediate one for the same message and part.
    Returns a plain ``bool`` Series on ``status``'s index.

    >>> is_final_notification(pd.Series(["ACCEPTD", None, None, "DELIVRD"]), pd.Series([1, 1, 4, 4])).tolist()
    [False, True, False, True]
    """
    return notification_status(status, delivery).isin(FINAL_STATUSES).fillna(False).astype(bool)


def utc_instants(values: pd.Series) -> np.ndarray:
    """Timestamps as naive UTC ``datetime64[us]`` values (NaT where missing), without a Python object per value.

    >>> utc_instants(pd.Series(["2026-01-01T11:00:00+01:00", None])).tolist()
    [datetime.datetime(2026, 1, 1, 10, 0), None]
    """
    stamps = pd.to_datetime(values, utc=True).astype("datetime64[us, UTC]")
    return np.asarray(stamps.dt.tz_localize(None).to_numpy(), dtype="datetime64[us]")


def deciding_order(callbacks: pd.DataFrame, groups: np.ndarray, final: np.ndarray | None = None) -> np.ndarray:
    """The one rule for "which notification decides a message's status", as an order of the rows.

    ``groups`` numbers each row's message (or message and part). Returns the row positions sorted by
    group and, within one, from the notification that decides least to the one that decides (the last):
    a final notification (:func:`is_final_notification`, or ``final`` when the caller has it) over an
    intermediate one whenever it arrived; among notifications of the same kind the latest ``reported_at``
    (a missing one counts as latest), then the latest ``received_at`` when the frame has one, then the later row.

    >>> frame = pd.DataFrame({"status": ["DELIVRD", "ACCEPTD", "ACCEPTD"],
    ...     "reported_at": pd.to_datetime(["2026-01-01 10:01", "2026-01-01 10:05", None], utc=True)})
    >>> deciding_order(frame, np.array([0, 0, 1])).tolist()
    [1, 0, 2]
    """
    if final is None:
        final = is_final_notification(callbacks["status"], callbacks.get("delivery")).to_numpy(dtype=bool)
    # np.lexsort sorts by its last key first and keeps the rows' order among equals (so the later row comes last);
    # group and kind as one number: a key fewer to sort by (each key is a pass over every row)
    group_and_kind = np.asarray(groups, dtype=np.int64) * 2 + np.asarray(final, dtype=bool)
    keys = []
    for column in ("received_at", "reported_at"):
        if column in callbacks:
            instants = utc_instants(callbacks[column]).view(np.int64)
            keys.append(np.where(instants == np.iinfo(np.int64).min, np.iinfo(np.int64).max, instants))
    order: np.ndarray = np.lexsort([*keys, group_and_kind])
    return order


def deciding_notifications(callbacks: pd.DataFrame, groups: np.ndarray, final: np.ndarray | None = None) -> np.ndarray:
    """The row position of the notification deciding each group's status (:func:`deciding_order`), groups ascending.

    >>> frame = pd.DataFrame({"status": ["DELIVRD", "ACCEPTD", "ACCEPTD"], "delivery": [None, 4, 4]})
    >>> deciding_notifications(frame, np.array([0, 0, 1])).tolist()
    [0, 2]
    """
    order = deciding_order(callbacks, groups, final)
    deciding: np.ndarray = order[last_of_each(np.asarray(groups)[order])]
    return deciding


def last_of_each(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values in ``ordered`` ends (a mask).

    >>> last_of_each(np.array([3, 3, 5, 7, 7])).tolist()
    [False, True, True, False, True]
    """
    ends = np.ones(len(ordered), dtype=bool)
    ends[:-1] = ordered[1:] != ordered[:-1]
    return ends
