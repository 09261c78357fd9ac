"""The delivery notifications of one report: its notificationUrl filled, one URL per part when it has ``%n``.

The worker calls :func:`report_urls` for each ``notify`` step. A notificationUrl is split on its escape
codes once (``UrlTemplate``, cached per distinct URL), and the values that repeat from report to report
(sender, statuses, dates, costs, mnc, campaign and sending ids) are URL-encoded once each, so a report
costs a few dictionary lookups and one string formatting, byte for byte what ``substitute`` gives:

    >>> notification_urls("http://x/?id=%i&t=%t", {"i": "ab", "t": "2026-11-21 09:30"}, 1)
    ['http://x/?id=ab&t=2026-11-21%2009%3A30']
"""

from __future__ import annotations

import functools
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
    return _filled(template, {code: quote_value(str(value)) for code, value in values.items()}, parts)


def _filled(url: str, quoted: dict[str, str], parts: int) -> list[str]:
    template, tail = _split(url)
    if "n" not in template.codes:
        return [template.fill(quoted) + tail]
    urls = []
    for part in range(1, max(parts, 1) + 1):
        quoted["n"] = str(part)
        urls.append(template.fill(quoted) + tail)
    return urls


def _split(url: str) -> tuple[UrlTemplate, str]:
    """``url`` as its template up to its last parameter and that parameter, when it holds no ``%`` (so no escape
    code): a campaign's URLs differ row by row only there (the toolkit's ``sf_row`` tag), and the rest of them is
    split on its escape codes once for them all. A cut at ``&`` or ``?`` never splits a code (``%`` and a letter).

        >>> template, tail = _split("http://x/?id=%i&sf_row=7")
        >>> template.url, tail
        ('http://x/?id=%i', '&sf_row=7')
    """
    cut = max(url.rfind("&"), url.rfind("?"))
    if cut > 0 and "%" not in url[cut:]:
        return _template(url[:cut]), url[cut:]
    return _template(url), ""


@functools.lru_cache(maxsize=1024)
def _template(url: str) -> UrlTemplate:
    # requests share their notificationUrl (up to its row tag): split each distinct one on its escape codes once
    return UrlTemplate(url)


# the values of a report that repeat (sender, status, delivery, mnc, campaign and sending ids): encode each once
_quoted = functools.lru_cache(maxsize=8192)(quote_value)


@functools.lru_cache(maxsize=4096)
def _quoted_cost(cost: float | None) -> str:
    return quote_value(f"{float(cost or 0.0):.4f}")


@functools.lru_cache(maxsize=4096)
def _quoted_minute(moment: datetime) -> str:
    return quote_value(moment.astimezone(UTC).strftime(NOTIFICATION_DATE_FORMAT))


@functools.lru_cache(maxsize=1024)
def _quoted_minute_of_text(text: str) -> str:
    return _quoted_minute(datetime.fromisoformat(text))


def _quoted_minute_at(seconds: float) -> str:
    whole = int(seconds)
    if 0 <= seconds - whole < 0.9999994:  # as in _date: the datetime of ``seconds`` is in the second ``whole``
        return _quoted_minute(second_at(whole))
    return _quoted_minute(moment_at(seconds))


def report_urls(message: dict[str, Any], payload: dict[str, Any], due: float) -> list[str]:
    """The filled notification URL(s) of the report ``payload`` (``status``, ``delivery``) of ``message`` (a
    ``messages`` row as a dict plus ``sent_at``) at ``due``: one per part when the URL has ``%n``.

        >>> message = {"id": "ab12", "sender": "Shop", "recipient": "34600000001", "sent_at": second_at(60),
        ...            "cost": 0.04, "mnc": "01", "campaign_id": 1, "sending_id": 2, "parts": 1,
        ...            "notification_url": "http://x/?i=%i&s=%s&t=%t&c=%c"}
        >>> report_urls(message, {"status": "DELIVRD", "delivery": 1}, 61.5)
        ['http://x/?i=ab12&s=DELIVRD&t=1970-01-01%2000%3A01&c=0.0400']
    """
    sent = message["sent_at"]
    delivery = payload.get("delivery")
    quoted = {
        "i": quote_value(message["id"]), "d": "" if delivery is None else _quoted(str(delivery)),
        "p": _quoted(message["sender"] or ""), "P": quote_value(message["recipient"] or ""),
        "t": _quoted_minute(sent) if sent is not None else _quoted_minute_of_text(message["scheduled_at"]
                                                                                  or message["created_at"]),
        "y": _quoted_minute_at(due), "c": _quoted_cost(message["cost"]), "s": _quoted(payload.get("status") or ""),
        "m": _quoted(message["mnc"] or ""), "C": _quoted(str(message["campaign_id"])),
        "S": _quoted(str(message["sending_id"])),
    }
    return _filled(message["notification_url"], quoted, message["parts"])
