"""The pieces every channel's handler shares when the sandbox accepts a send request.

What one request produces (:class:`RequestBatch`: result items, ``messages`` rows, planned messages), the
fields every channel reads once (:class:`RequestCommon`), message ids, rendering a recipient's text or saying
why not, the cost of a message and its ``messages`` row. The handlers in
:mod:`sendframe.sandbox.sending_channels` fill a batch; :func:`sendframe.sandbox.sending.accept` stores it.
They are shared by these three modules only; the sandbox's public entry point is ``accept``.

    >>> len(new_message_id())
    20
"""

from __future__ import annotations

import functools
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from json.encoder import encode_basestring as _json_text
from typing import Any, NamedTuple, TypeVar

import numpy as np
import orjson

from sendframe.api.models import result_item
from sendframe.api.validation import sub_value_text
from sendframe.errors import ApiError, ErrorCode, InputError, MissingVariableError, TemplateError
from sendframe.sandbox import links, otp
from sendframe.sandbox.accounts import Account
from sendframe.text import templates

__all__ = ["OnLoop", "new_message_id"]


T = TypeVar("T")
OnLoop = Callable[[Callable[[], T]], T]
"""Runs a database step where the connection lives: at once (on the event loop), or from a worker thread."""


def run_at_once(step: Callable[[], T]) -> T:
    return step()


def refused_error(code: int, description: str) -> ApiError:
    return ApiError(code, description, 400)


def new_message_id() -> str:
    """A fresh message id: 20 lower-case hex characters (see :func:`new_message_ids`).

        >>> len(new_message_id())
        20
    """
    return new_message_ids(1)[0]


@dataclass
class RequestBatch:
    """What one request produces: result items, message rows and planned steps."""

    channel: str
    links: links.NewLinks  # stored with the messages, in the same transaction
    scheduled: datetime | None = None
    expires: datetime | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    plans: list[tuple[str, str, int | None]] = field(default_factory=list)  # (id, to, parts) of each accepted message

    def reject(self, to: str, code: int, description: str, **extra: Any) -> None:
        extra = {"scheduled_at": self.scheduled, "expires_at": self.expires, **extra}
        self.items.append(result_item(self.channel, accepted=False, to=to, error=(int(code), description), **extra))


@dataclass
class RequestCommon:
    """Fields every channel shares, read once per request."""

    state: Any
    account: Account
    channel: str
    now: datetime
    scheduled: datetime | None  # None: immediate (a scheduleDate in the past means now)
    expires: datetime | None
    campaign_name: str | None
    tags: list[str] | None
    plan_common: dict[str, Any] | None = None  # the planning arguments every message of the request shares
    shared: dict[str, Any] | None = None  # sender, notification_url and extra of the sending (see message_row)
    on_loop: OnLoop[Any] = run_at_once

    def db(self, step: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``step(*args, **kwargs)``, a database step, run where the connection lives (``on_loop``)."""
        return self.on_loop(functools.partial(step, *args, **kwargs))  # type: ignore[no-any-return]

    @property
    def ready_at(self) -> datetime:
        return self.scheduled or self.now

    @property
    def status(self) -> str:
        return "SCHEDULED" if self.scheduled else "QUEUED"


def request_common(state: Any, account: Account, request: Any) -> RequestCommon:
    now = state.clock.now()
    scheduled = request.schedule_datetime
    if scheduled is not None and scheduled <= now:
        scheduled = None
    return RequestCommon(state, account, request.channel, now, scheduled, getattr(request, "expiration_datetime", None),
                         getattr(request, "campaign_name", None), getattr(request, "tags", None))


def plan_message_row(batch: RequestBatch, message_id: str, c: RequestCommon, to: str, parts: int | None = None,
                     **request_arguments: Any) -> None:
    """Queue the carrier planning of one message. A plan depends only on the seed, the message id and
    these arguments, so when it is made does not change it: :func:`~sendframe.sandbox.sending.accept`
    stores one ``plans`` row in ``work`` per request, due when the messages are ready, and the worker
    plans them then, off the request's path (see :mod:`sendframe.sandbox.worker`).

    ``request_arguments`` are the same for every message of a request: they are kept once."""
    if c.plan_common is None:
        c.plan_common = {**request_arguments, "channel": c.channel, "ready_at": c.ready_at.timestamp(),
                         "expires_at": c.expires.timestamp() if c.expires else None}
    batch.plans.append((message_id, to, parts))


def plans_row(batch: RequestBatch, c: RequestCommon, rows: tuple[int, int]) -> tuple[Any, ...]:
    """The one ``work`` row planning every accepted message of the request: the shared arguments plus
    ``messages``, a list of ``[id, to, parts]``, and ``rows``, the first and last rowid of their ``messages`` rows
    (one insert gives them consecutive rowids: the worker reads them as one range, not id by id)."""
    # orjson writes what json.dumps(separators=(",", ":")) writes, several times faster (a request's plans are long)
    payload = orjson.dumps({**(c.plan_common or {}), "messages": batch.plans, "rows": rows}).decode()
    return (c.ready_at.timestamp(), batch.plans[0][0], "plans", payload)


def unsubscribed_recipients(state: Any, account: str, recipients: list[str]) -> set[str]:
    """The recipients (as ``links.recipient_key``) of this request who unsubscribed from ``account``.

    One query per 500 recipients, none when nobody unsubscribed from ``account``.
    """
    if state.db.execute("SELECT 1 FROM unsubscribes WHERE account = ? LIMIT 1", (account,)).fetchone() is None:
        return set()
    keys = list({links.recipient_key(r) for r in recipients})
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(r for (r,) in state.db.execute(
            f"SELECT recipient FROM unsubscribes WHERE account = ? AND recipient IN ({marks})", (account, *chunk)))
    return found


class _Sequence:
    """The id generator's process-wide sequence, like a UUIDv7 counter: hands out blocks of numbers."""

    def __init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()

    def block(self, count: int) -> int:
        """Reserve ``count`` consecutive numbers; return the first."""
        with self._lock:
            first, self._next = self._next, self._next + count
        return first


_ID_SEQUENCE = _Sequence()


def new_message_ids(count: int) -> list[str]:
    """``count`` fresh message ids, time-ordered like UUIDv7: 11 hex digits of the wall clock in milliseconds,
    5 of a process-wide sequence (unique unless a million ids are made in one millisecond), 4 random. Still
    opaque to clients; sorted ids make the index inserts of a request land on a few neighbouring pages instead
    of one random page per message, so a 500-recipient commit writes far fewer pages.

        >>> a, b = new_message_ids(2)
        >>> len(a), a < b, a[:11] == b[:11]
        (20, True, True)
    """
    millis = time.time_ns() // 1_000_000 & 0xFFFFFFFFFFF
    # each id is 10 bytes (44 bits of time, 20 of sequence, 16 random) written out as hex in one go
    sequence = (np.arange(count, dtype=np.uint64) + np.uint64(_ID_SEQUENCE.block(count))) & np.uint64(0xFFFFF)
    head = (np.uint64(millis) << np.uint64(20)) | sequence
    raw = np.empty((count, 10), dtype=np.uint8)
    raw[:, :8] = head.astype(">u8").view(np.uint8).reshape(count, 8)
    raw[:, 8:] = np.frombuffer(secrets.token_bytes(2 * count), dtype=np.uint8).reshape(count, 2)
    text = raw.tobytes().hex()
    return [text[i:i + 20] for i in range(0, 20 * count, 20)]


def recipient_variables(sub: list[dict[str, Any]] | None, index: int) -> dict[str, str]:
    if not sub:
        return {}
    return {str(k): t for k, v in sub[index].items() if (t := sub_value_text(v)) is not None}


class Refusal(NamedTuple):
    """Why a recipient's text cannot be rendered: the error code and description of its result item."""

    code: int
    description: str


def render_text(template: templates.Template, variables: dict[str, str], index: int, *, specials: dict[str, str],
                shorten: Callable[[str], str] | None = None) -> str | Refusal:
    """Render, or explain why not."""
    try:
        return templates.render(template, variables, specials=specials, shorten=shorten)
    except MissingVariableError as exc:
        return Refusal(ErrorCode.MISSING_VARIABLE,
                       f"The text needs {{{exc.name}}} but sub[{index}] has no value for it.")
    except InputError as exc:  # shorten of a value that is not an http/https URL
        return Refusal(ErrorCode.INVALID_REQUEST, f"sub[{index}]: {exc}")


def refusal_of(template: templates.Template, variables: dict[str, str], index: int, *,
               specials: dict[str, str]) -> Refusal | None:
    """Why the template cannot be rendered for this recipient, or None when it can."""
    rendered = render_text(template, variables, index, specials=specials)
    return rendered if isinstance(rendered, Refusal) else None


def parse_template(text: str, field_name: str) -> templates.Template:
    try:
        return templates.parse(text)
    except TemplateError as exc:
        raise refused_error(ErrorCode.INVALID_REQUEST, f"{field_name}: {exc}") from None


def otp_placeholders(state: Any, otp_config: Any) -> tuple[dict[str, str], Callable[[str], str]]:
    cfg = otp.otp_config(otp_config)
    return templates.placeholder_links(state.public_url, otp_length=cfg["length"], otp_alpha=cfg["alpha"])


def checked_shorten_url(url: str) -> str:
    scheme = url.strip().split(":", 1)[0].lower()
    if scheme not in ("http", "https") or "://" not in url:
        raise InputError(f"The shorten filter needs an http or https URL, not {url!r}.")
    return url



def message_cost(state: Any, channel: str, to: str, parts: int, certified: bool) -> float:
    # the price row depends on the prefix only: cache by the first digits the table distinguishes
    cache: dict[tuple[str, str, int, bool], float] = state.__dict__.setdefault("_price_cache", {})
    key = (channel, to[:6], parts, certified)
    cost = cache.get(key)
    if cost is None:
        priced: float = state.prices.message_cost(to, channel, parts=parts, certified=certified)
        if state.prices.prefix_of(to, channel) != state.prices.prefix_of(to[:6], channel):
            return priced
        cost = cache[key] = priced
    return cost


def custom_fields_json(sub: list[dict[str, Any]] | None, index: int, variables: dict[str, str] | None = None) -> str:
    if not sub:
        return "{}"
    values = recipient_variables(sub, index) if variables is None else variables
    # what json.dumps(values, ensure_ascii=False) writes, for a dict of str to str, without its encoder set-up
    return "{" + ", ".join(f"{_json_text(k)}: {_json_text(v)}" for k, v in values.items()) + "}"


def message_row(c: RequestCommon, message_id: str, sender: str, to: str, text: str, parts: int, sub: Any, index: int,
                url: str | None, cost: float, extra: str, variables: dict[str, str] | None = None) -> tuple[Any, ...]:
    """A ``messages`` row (sending_id is added at insert time). Sender, notification URL and extra are the
    sending's (the first message's values); a message keeps its own only when it differs."""
    shared = c.shared
    if shared is None:
        shared = c.shared = {"sender": sender, "notification_url": url, "extra": extra}
    own_url = None if url == shared["notification_url"] else ("" if url is None else url)
    return (message_id, to, text, parts, custom_fields_json(sub, index, variables), cost,
            None if sender == shared["sender"] else sender, own_url, None if extra == shared["extra"] else extra)

