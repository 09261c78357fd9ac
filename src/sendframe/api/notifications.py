"""Delivery notifications: the twelve escape codes, delivery values and statuses.

One place for the vocabulary of the spec's "Events" section; the sandbox's notifier fills
notification URLs with it, the receiver and the log parser read them back with it.

    >>> substitute("https://x/dlr?id=%i&st=%s&ref=crm", {"i": "ab12", "s": "DELIVRD"})
    'https://x/dlr?id=ab12&st=DELIVRD&ref=crm'
"""

from __future__ import annotations

import re
from urllib.parse import quote

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
