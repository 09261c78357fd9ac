"""The delivery notifications of one report: its notificationUrl filled, one URL per part when it has ``%n``.

The worker calls :func:`report_urls` for each ``notify`` step. A notificationUrl is split on its escape
codes once (``UrlTemplate``, cached per distinct URL), and the values that repeat from report to report
(sender, statuses, dates, costs, mnc, campaign and sending ids) are URL-encoded once each. A message's own
values are filled once for all its reports (a format kept with the message), so a report costs a few
dictionary lookups and one string formatting, byte for byte what ``substitute`` gives:

    >>> notification_urls("http://x/?id=%i&t=%t", {"i": "ab", "t": "2026-11-21 09:30"}, 1)
    ['http://x/?id=ab&t=2026-11-21%2009%3A30']
"""

from __future__ import annotations

import functools
import itertools
from datetime import UTC, datetime
from typing import Any

from sendframe.api.notifications import NOTIFICATION_DATE_FORMAT, UrlTemplate, quote_value

__all__ = ["moment_at", "notification_urls", "report_urls", "second_at"]


@functools.lru_cache(maxsize=4096)
def moment_at(seconds: float) -> datetime:
    """The UTC datetime of epoch ``seconds``, cached (a request's messages share their ready and sent times).

        >>> moment_at(0.5).isoformat()
        '1970-01-01T00:00:00.500000+00:00'
    """
    return datetime.fromtimestamp(seconds, UTC)


@functools.lru_cache(maxsize=4096)
def second_at(whole: int) -> datetime:
    """The UTC datetime of a whole epoch second, cached (steps crowd into few seconds).

        >>> second_at(60).isoformat()
        '1970-01-01T00:01:00+00:00'
    """
    return datetime.fromtimestamp(whole, UTC)


def notification_urls(template: str, values: dict[str, str], parts: int) -> list[str]:
    """The filled notification URL(s) of one report: one per part when the URL has ``%n`` (``values``
    are the raw values by escape letter; see :func:`sendframe.api.notifications.substitute`).

        >>> notification_urls("http://x/?id=%i&n=%n", {"i": "ab"}, 2)
        ['http://x/?id=ab&n=1', 'http://x/?id=ab&n=2']
        >>> notification_urls("http://x/?id=%i", {"i": "ab"}, 2)
        ['http://x/?id=ab']
    """
    return _filled(_template(template), {code: quote_value(str(value)) for code, value in values.items()}, parts)


def _filled(template: UrlTemplate, quoted: dict[str, str], parts: int) -> list[str]:
    if "n" not in template.codes:
        return [template.fill(quoted)]
    urls = []
    for part in range(1, max(parts, 1) + 1):
        quoted["n"] = str(part)
        urls.append(template.fill(quoted))
    return urls


@functools.lru_cache(maxsize=1024)
def _template(url: str) -> UrlTemplate:
    # requests share their notificationUrl: split each distinct one on its escape codes once
    return UrlTemplate(url)


# the values of a report that repeat (sender, status, delivery, mnc, campaign and sending ids): encode each once
_quoted = functools.lru_cache(maxsize=8192)(quote_value)


@functools.lru_cache(maxsize=4096)
def _quoted_cost(cost: float | None) -> str:
    return quote_value(f"{float(cost or 0.0):.4f}")


@functools.lru_cache(maxsize=4096)
def _quoted_minute(moment: datetime) -> str:
    return quote_value(moment.astimezone(UTC).strftime(NOTIFICATION_DATE_FORMAT))


def _quoted_minute_of(moment: datetime) -> str:
    # messages are sent at microseconds of their own but share their minutes: look the minute up
    return _quoted_minute(moment.astimezone(UTC).replace(second=0, microsecond=0))


@functools.lru_cache(maxsize=1024)
def _quoted_minute_of_text(text: str) -> str:
    return _quoted_minute(datetime.fromisoformat(text))


def _quoted_minute_at(seconds: float) -> str:
    whole = int(seconds)
    if 0 <= seconds - whole < 0.9999994:  # as in _date: the datetime of ``seconds`` is in the second ``whole``
        return _quoted_minute(second_at(whole))
    return _quoted_minute(moment_at(seconds))


_REPORT_CODES = frozenset("dsyn")  # what differs between the reports of one message: the rest is the message's


def report_urls(message: dict[str, Any], payload: dict[str, Any], due: float) -> list[str]:
    """The filled notification URL(s) of the report ``payload`` (``status``, ``delivery``) of ``message`` (a
    ``messages`` row as a dict plus ``sent_at``) at ``due``: one per part when the URL has ``%n``.

    The message's own values are filled once, into a format kept in ``message["report_format"]`` (made
    again when its ``sent_at``, ``cost`` or ``mnc`` change); each report fills only its ``%d %s %y %n``.

        >>> message = {"id": "ab12", "sender": "Shop", "recipient": "34600000001", "sent_at": second_at(60),
        ...            "cost": 0.04, "mnc": "01", "campaign_id": 1, "sending_id": 2, "parts": 1,
        ...            "notification_url": "http://x/?i=%i&s=%s&t=%t&c=%c"}
        >>> report_urls(message, {"status": "DELIVRD", "delivery": 1}, 61.5)
        ['http://x/?i=ab12&s=DELIVRD&t=1970-01-01%2000%3A01&c=0.0400']
    """
    sent, cost, mnc, url = message["sent_at"], message["cost"], message["mnc"], message["notification_url"]
    kept = message.get("report_format")  # one flat tuple: a message holds no more objects for the collector to scan
    if kept is None or kept[:4] != (sent, cost, mnc, url):
        kept = message["report_format"] = (sent, cost, mnc, url, _message_format(message), _report_codes(url))
    form, codes = kept[4], kept[5]
    delivery = payload.get("delivery")
    quoted = {"d": "" if delivery is None else _quoted(str(delivery)), "s": _quoted(payload.get("status") or ""),
              "y": _quoted_minute_at(due)}
    if "n" not in codes:
        return [form % tuple([quoted[code] for code in codes])]
    urls = []
    for part in range(1, max(message["parts"], 1) + 1):
        quoted["n"] = str(part)
        urls.append(form % tuple([quoted[code] for code in codes]))
    return urls


def _message_format(message: dict[str, Any]) -> str:
    """The notificationUrl of ``message`` with its own values filled, as a %-format of the codes left
    (:func:`_report_codes`)."""
    template = _template(message["notification_url"])
    sent = message["sent_at"]
    quoted = {
        "i": quote_value(message["id"]), "p": _quoted(message["sender"] or ""),
        "P": quote_value(message["recipient"] or ""),
        "t": _quoted_minute_of(sent) if sent is not None else _quoted_minute_of_text(message["scheduled_at"]
                                                                                     or message["created_at"]),
        "c": _quoted_cost(message["cost"]), "m": _quoted(message["mnc"] or ""),
        "C": _quoted(str(message["campaign_id"])), "S": _quoted(str(message["sending_id"])),
    }
    hole = _hole(template.url)
    return template.fill({**quoted, **dict.fromkeys(_REPORT_CODES, hole)}).replace("%", "%%").replace(hole, "%s")


@functools.lru_cache(maxsize=1024)
def _report_codes(url: str) -> tuple[str, ...]:
    # the codes a report fills in its message's format, in order of appearance
    return tuple(code for code in _template(url).codes if code in _REPORT_CODES)


@functools.lru_cache(maxsize=1024)
def _hole(url: str) -> str:
    # a character that marks a report's code in a message's filled URL: neither in the URL's own text nor in a
    # quoted value (control and non-ASCII characters are always encoded)
    return next(char for char in map(chr, itertools.chain(range(32), range(0x80, 0x110000))) if char not in url)
