"""Accepting send requests: validation, personalisation, parts, cost, planning, one insert per request.

No HTTP here (the routes in :mod:`sendframe.sandbox.app` call :func:`accept`). A request becomes
result items in recipient order plus, for the accepted ones, ``messages`` rows and one ``plans`` row
in ``work`` (the worker asks the carrier for their futures when they are ready), written in one
transaction with ``executemany``. A request refused as a whole raises :class:`~sendframe.errors.ApiError`
(code, description, HTTP status).

Every database step goes through ``on_loop``: a large request is accepted in a worker thread (its
rendering and sizing must not keep other clients waiting), and its database steps (links, OTP codes,
the final insert) then run on the event loop, which owns the connection.

    status, body = accept(state, DEMO_ACCOUNT, "sms", {"message": "Hi", "to": ["34600123456"], "from": "Shop"})
    # status == 202, body == {"campaignId": 1, "sendingId": 1, "result": [...]}
"""

from __future__ import annotations

import functools
import html as html_text
import json
import re
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

from sendframe.api.models import parse_request, result_item
from sendframe.api.recipients import calling_code, is_valid_email, is_valid_phone
from sendframe.api.templates import WHATSAPP_TEMPLATES, whatsapp_field_counts
from sendframe.api.validation import shown, sub_value_text
from sendframe.errors import ApiError, ErrorCode, InputError, MissingVariableError, TemplateError
from sendframe.sandbox import links, otp, store
from sendframe.sandbox.accounts import EMAIL_TEMPLATES, LANDING_TEMPLATES, Account
from sendframe.text import templates
from sendframe.text.encodings import to_deliverable
from sendframe.text.parts import sms_parts, split_parts
from sendframe.text.translate import translate

__all__ = ["OnLoop", "accept", "new_message_id"]

DEFAULT_VOICE_CALLER = "sandbox"
_UNSUB_MARK = "[unsubscribe_link]"
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)
# the quoted http(s) href of a link (<a>, <area>); images and other attributes are never rewritten
_LINK_HREF = re.compile(r"""(<a(?:rea)?\s[^>]*?\bhref\s*=\s*)(["'])\s*(https?://[^"'<>\s]+)\s*\2""", re.IGNORECASE)


T = TypeVar("T")
OnLoop = Callable[[Callable[[], T]], T]
"""Runs a database step where the connection lives: at once (on the event loop), or from a worker thread."""


def _at_once(step: Callable[[], T]) -> T:
    return step()


def _refused(code: int, description: str) -> ApiError:
    return ApiError(code, description, 400)


def new_message_id() -> str:
    """A fresh message id: 20 lower-case hex characters (see :func:`_ids`).

        >>> len(new_message_id())
        20
    """
    return _ids(1)[0]


@dataclass
class _Batch:
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
class _Common:
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
    shared: dict[str, Any] | None = None  # sender, notification_url and extra of the sending (see _row)
    on_loop: OnLoop[Any] = _at_once

    def db(self, step: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``step(*args, **kwargs)``, a database step, run where the connection lives (``on_loop``)."""
        return self.on_loop(functools.partial(step, *args, **kwargs))  # type: ignore[no-any-return]

    @property
    def ready_at(self) -> datetime:
        return self.scheduled or self.now

    @property
    def status(self) -> str:
        return "SCHEDULED" if self.scheduled else "QUEUED"


def _common(state: Any, account: Account, request: Any) -> _Common:
    now = state.clock.now()
    scheduled = request.schedule_datetime
    if scheduled is not None and scheduled <= now:
        scheduled = None
    return _Common(state, account, request.channel, now, scheduled, getattr(request, "expiration_datetime", None),
                   getattr(request, "campaign_name", None), getattr(request, "tags", None))


def _plan(batch: _Batch, message_id: str, c: _Common, to: str, parts: int | None = None,
          **request_arguments: Any) -> None:
    """Queue the carrier planning of one message. A plan depends only on the seed, the message id and
    these arguments, so when it is made does not change it: :func:`accept` stores one ``plans`` row in
    ``work`` per request, due when the messages are ready, and the worker plans them then, off the
    request's path (see :mod:`sendframe.sandbox.worker`).

    ``request_arguments`` are the same for every message of a request: they are kept once."""
    if c.plan_common is None:
        c.plan_common = {**request_arguments, "channel": c.channel, "ready_at": c.ready_at.timestamp(),
                         "expires_at": c.expires.timestamp() if c.expires else None}
    batch.plans.append((message_id, to, parts))


def _plans_row(batch: _Batch, c: _Common) -> tuple[Any, ...]:
    """The one ``work`` row planning every accepted message of the request: the shared arguments plus
    ``messages``, a list of ``[id, to, parts]``."""
    # orjson writes what json.dumps(separators=(",", ":")) writes, several times faster (a request's plans are long)
    payload = orjson.dumps({**(c.plan_common or {}), "messages": batch.plans}).decode()
    return (c.ready_at.timestamp(), batch.plans[0][0], "plans", payload)


def _unsubscribed(state: Any, account: str, recipients: list[str]) -> set[str]:
    """The recipients (as ``links.recipient_key``) of this request who unsubscribed from ``account``.

    One query per 500 recipients.
    """
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


def _ids(count: int) -> list[str]:
    """``count`` fresh message ids, time-ordered like UUIDv7: 11 hex digits of the wall clock in milliseconds,
    5 of a process-wide sequence (unique unless a million ids are made in one millisecond), 4 random. Still
    opaque to clients; sorted ids make the index inserts of a request land on a few neighbouring pages instead
    of one random page per message, so a 500-recipient commit writes far fewer pages.

        >>> a, b = _ids(2)
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


def _vars(sub: list[dict[str, Any]] | None, index: int) -> dict[str, str]:
    if not sub:
        return {}
    return {str(k): t for k, v in sub[index].items() if (t := sub_value_text(v)) is not None}


class _Refusal(NamedTuple):
    """Why a recipient's text cannot be rendered: the error code and description of its result item."""

    code: int
    description: str


def _render(template: templates.Template, variables: dict[str, str], index: int, *, specials: dict[str, str],
            shorten: Callable[[str], str] | None = None) -> str | _Refusal:
    """Render, or explain why not."""
    try:
        return templates.render(template, variables, specials=specials, shorten=shorten)
    except MissingVariableError as exc:
        return _Refusal(ErrorCode.MISSING_VARIABLE,
                        f"The text needs {{{exc.name}}} but sub[{index}] has no value for it.")
    except InputError as exc:  # shorten of a value that is not an http/https URL
        return _Refusal(ErrorCode.INVALID_REQUEST, f"sub[{index}]: {exc}")


def _refusal(template: templates.Template, variables: dict[str, str], index: int, *,
             specials: dict[str, str]) -> _Refusal | None:
    """Why the template cannot be rendered for this recipient, or None when it can."""
    rendered = _render(template, variables, index, specials=specials)
    return rendered if isinstance(rendered, _Refusal) else None


def _parse(text: str, field_name: str) -> templates.Template:
    try:
        return templates.parse(text)
    except TemplateError as exc:
        raise _refused(ErrorCode.INVALID_REQUEST, f"{field_name}: {exc}") from None


def _placeholders(state: Any, otp_config: Any) -> tuple[dict[str, str], Callable[[str], str]]:
    cfg = otp.otp_config(otp_config)
    return templates.placeholder_links(state.public_url, otp_length=cfg["length"], otp_alpha=cfg["alpha"])


def _check_shorten(url: str) -> str:
    scheme = url.strip().split(":", 1)[0].lower()
    if scheme not in ("http", "https") or "://" not in url:
        raise InputError(f"The shorten filter needs an http or https URL, not {url!r}.")
    return url


# ---------------------------------------------------------------- SMS and landing SMS


def _sms_like(c: _Common, request: Any, batch: _Batch, *, landing_html: str | None) -> None:
    state, account = c.state, c.account
    template = _parse(request.message, "message")
    encoding, max_parts = request.encoding, request.parts
    urls = request.notification_url
    sub = request.sub
    otp_cfg = getattr(request, "otp_config", None)
    otp_wire = otp_cfg.to_wire() if otp_cfg is not None else {}
    windows = [w.to_wire() for w in (getattr(request, "available_times", None) or [])] or None
    landing_template = _parse(landing_html, "templateBody") if landing_html is not None else None
    dummy_specials, dummy_shorten = _placeholders(state, otp_wire)
    dummy_shorten_checked = (lambda url: dummy_shorten(_check_shorten(url))) if template.uses_shorten else None
    page_unsubscribes = landing_template is not None and "UNSUB_URL" in landing_template.specials
    needs_links = bool(template.specials) or template.uses_shorten or page_unsubscribes
    uses_otp = "OTP_CODE" in template.specials
    uses_unsub = "UNSUB_URL" in template.specials or page_unsubscribes
    # a text that makes only links renders once, for real (a refused message gives its links back); an OTP code
    # or a landing page is checked first with placeholders
    precheck = not needs_links or uses_otp or landing_template is not None
    made = batch.links
    constant = not template.variables and not needs_links
    sizing: dict[str, tuple[str, int]] = {}
    extra = json.dumps({"encoding": encoding, "splitParts": request.split_parts, "flash": bool(request.flash),
                        "certified": bool(request.certified), "tags": c.tags})
    unsubscribed = c.db(_unsubscribed, state, account.username, request.to)
    ids = _ids(len(request.to))
    for index, to in enumerate(request.to):
        if not is_valid_phone(to):
            batch.reject(to, ErrorCode.INVALID_RECIPIENT, f"to[{index}]: {shown(to)} is not a valid phone number "
                         "(digits only, 8 to 15, country calling code first)")
            continue
        if unsubscribed and links.recipient_key(to) in unsubscribed:
            batch.reject(to, ErrorCode.UNSUBSCRIBED, f"to[{index}]: {to} unsubscribed from this account's messages")
            continue
        variables = _vars(sub, index)
        text = ""
        if precheck:  # the text and the page render? (checked before a code is issued: a refused recipient gets none)
            rendered = _render(template, variables, index, specials=dummy_specials, shorten=dummy_shorten_checked)
            if isinstance(rendered, str) and landing_template is not None:
                rendered = _refusal(landing_template, variables, index, specials=dummy_specials) or rendered
            if isinstance(rendered, _Refusal):
                batch.reject(to, *rendered)
                continue
            text = rendered
        message_id = ids[index]
        mark = made.mark()
        if needs_links:
            specials: dict[str, str] = {}
            if uses_otp:
                code = c.db(otp.issue_code, state, account=account.username, to=to, config=otp_wire)
                if code is None:
                    batch.reject(to, ErrorCode.OTP_PENDING, f"to[{index}]: a code is still pending for {to} "
                                 f"(appId {otp_wire.get('appId', '')!r}) and rejectIfPendingCode is true")
                    continue
                specials["OTP_CODE"] = code
            if uses_unsub:
                specials["UNSUB_URL"] = made.unsubscribe(message_id, account=account.username, recipient=to)
            if "LAND_URL" in template.specials and landing_template is not None:
                page = templates.render(landing_template, variables, specials=specials, escape_html=True)
                specials["LAND_URL"] = made.landing(message_id, page)
            rendered = _render(template, variables, index, specials=specials,
                               shorten=functools.partial(made.short, message_id) if template.uses_shorten else None)
            if isinstance(rendered, _Refusal):
                made.discard(mark)
                batch.reject(to, *rendered)
                continue
            text = rendered
        elif landing_template is not None:
            made.landing(message_id, templates.render(landing_template, variables, escape_html=True))
        key = "" if constant else text
        sized = sizing.get(key)
        if sized is None:
            deliverable = to_deliverable(translate(text) if request.trans == 1 else text, encoding)
            count = len(split_parts(deliverable, encoding)) if request.split_parts else sms_parts(deliverable, encoding)
            sized = sizing[key] = (deliverable, count)
        deliverable, parts = sized
        if parts > max_parts:
            made.discard(mark)
            batch.reject(to, ErrorCode.TOO_MANY_PARTS, f"to[{index}]: the text needs {parts} parts but parts allows "
                         f"{max_parts} (encoding {encoding})", parts=parts)
            continue
        url = urls[index] if isinstance(urls, list) else urls
        cost = _cost(state, c.channel, to, parts, bool(request.certified))
        _plan(batch, message_id, c, to=to, parts=parts, available_times=windows)
        batch.messages.append(_row(c, message_id, request.sender, to, deliverable, parts, sub, index, url, cost, extra,
                                   variables))
        batch.items.append(result_item(c.channel, accepted=True, to=to, id=message_id, parts=parts,
                                       scheduled_at=c.scheduled, expires_at=c.expires))


def _cost(state: Any, channel: str, to: str, parts: int, certified: bool) -> float:
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


def _custom_fields(sub: list[dict[str, Any]] | None, index: int, variables: dict[str, str] | None = None) -> str:
    if not sub:
        return "{}"
    values = _vars(sub, index) if variables is None else variables
    # what json.dumps(values, ensure_ascii=False) writes, for a dict of str to str, without its encoder set-up
    return "{" + ", ".join(f"{_json_text(k)}: {_json_text(v)}" for k, v in values.items()) + "}"


def _row(c: _Common, message_id: str, sender: str, to: str, text: str, parts: int, sub: Any, index: int,
         url: str | None, cost: float, extra: str, variables: dict[str, str] | None = None) -> tuple[Any, ...]:
    """A ``messages`` row (sending_id is added at insert time). Sender, notification URL and extra are the
    sending's (the first message's values); a message keeps its own only when it differs."""
    shared = c.shared
    if shared is None:
        shared = c.shared = {"sender": sender, "notification_url": url, "extra": extra}
    own_url = None if url == shared["notification_url"] else ("" if url is None else url)
    return (message_id, to, text, parts, _custom_fields(sub, index, variables), cost,
            None if sender == shared["sender"] else sender, own_url, None if extra == shared["extra"] else extra)


def _sms(c: _Common, request: Any, batch: _Batch) -> None:
    _sms_like(c, request, batch, landing_html=None)


def _landingsms(c: _Common, request: Any, batch: _Batch) -> None:
    if request.template_v2_id is not None or request.template_id is not None:
        generation = "templateV2Id" if request.template_v2_id is not None else "templateId"
        number = request.template_v2_id if request.template_v2_id is not None else request.template_id
        html = LANDING_TEMPLATES.get((generation, number))
        if html is None:
            known = ", ".join(str(n) for g, n in LANDING_TEMPLATES if g == generation)
            raise _refused(ErrorCode.INVALID_REQUEST, f"{generation}: no landing template {number} (known: {known})")
    else:
        html = request.template_body
    _sms_like(c, request, batch, landing_html=html)


# ---------------------------------------------------------------- email


def _mailing(c: _Common, request: Any, batch: _Batch) -> None:
    state, account = c.state, c.account
    for name, address in (("fromEmail", request.from_email), ("replyTo", request.reply_to)):
        if address.strip().lower() not in account.emails:
            validated = ", ".join(sorted(account.emails)) or "none"
            raise _refused(ErrorCode.SENDER_NOT_VALIDATED, f"{name}: {shown(address)} is not a validated sender "
                           f"address of account {account.username} (validated: {validated})")
    if request.template_v2_id is not None or request.template_id is not None:
        generation = "templateV2Id" if request.template_v2_id is not None else "templateId"
        number = request.template_v2_id if request.template_v2_id is not None else request.template_id
        body = EMAIL_TEMPLATES.get((generation, number))
        if body is None:
            known = ", ".join(str(n) for g, n in EMAIL_TEMPLATES if g == generation)
            raise _refused(ErrorCode.INVALID_REQUEST, f"{generation}: no email template {number} (known: {known})")
    else:
        body = request.body
    subject_t, body_t = _parse(request.subject, "subject"), _parse(body, "body")
    otp_wire = request.otp_config.to_wire() if request.otp_config is not None else {}
    dummy_specials, _ = _placeholders(state, otp_wire)
    uses_otp = "OTP_CODE" in subject_t.specials | body_t.specials
    uses_unsub = "UNSUB_URL" in subject_t.specials | body_t.specials or _UNSUB_MARK in body
    extra = json.dumps({"subject": None, "fromEmail": request.from_email, "fromName": request.from_name,
                        "replyTo": request.reply_to, "cc": request.cc, "bcc": request.bcc, "tags": c.tags,
                        "attachments": [a.name for a in request.attachments or []],
                        "certified": bool(request.certified)})
    unsubscribed = c.db(_unsubscribed, state, account.username, request.to)
    for index, to in enumerate(request.to):
        if not is_valid_email(to):
            batch.reject(to, ErrorCode.INVALID_RECIPIENT, f"to[{index}]: {shown(to)} is not a valid email address")
            continue
        if unsubscribed and links.recipient_key(to) in unsubscribed:
            batch.reject(to, ErrorCode.UNSUBSCRIBED, f"to[{index}]: {to} unsubscribed from this account's messages")
            continue
        variables = _vars(request.sub, index)
        problem = (_refusal(subject_t, variables, index, specials=dummy_specials)
                   or _refusal(body_t, variables, index, specials=dummy_specials))
        if problem is not None:
            batch.reject(to, *problem)
            continue
        message_id = new_message_id()
        specials: dict[str, str] = {}
        if uses_otp:
            code = c.db(otp.issue_code, state, account=account.username, to=to, config=otp_wire)
            if code is None:
                batch.reject(to, ErrorCode.OTP_PENDING,
                             f"to[{index}]: a code is still pending for {to} and rejectIfPendingCode is true")
                continue
            specials["OTP_CODE"] = code
        if uses_unsub:
            specials["UNSUB_URL"] = batch.links.unsubscribe(message_id, account=account.username, recipient=to)
        # the subject and the body are HTML (webmail shows a subject in HTML):
        # every value put into them is escaped, so a value is always shown as text (docs/api-notes.md)
        subject = templates.render(subject_t, variables, specials=specials, escape_html=True)
        html = templates.render(body_t, variables, specials=specials, escape_html=True)
        html = html.replace(_UNSUB_MARK, specials.get("UNSUB_URL", ""))
        if request.track_clicks:
            html = _track_clicks(batch.links, message_id, html)
        if request.track_opens:
            pixel = f'<img src="{batch.links.pixel(message_id)}" width="1" height="1" alt="" />'
            end = _BODY_END.search(html)
            html = html[:end.start()] + pixel + html[end.start():] if end else html + pixel
        cost = state.prices.message_cost(to, "mailing", certified=bool(request.certified),
                                         attachments=len(request.attachments or []))
        _plan(batch, message_id, c, to=to)
        row_extra = extra.replace('"subject": null', f'"subject": {json.dumps(subject, ensure_ascii=False)}', 1)
        batch.messages.append(_row(c, message_id, request.from_email, to, html, 1, request.sub, index, None, cost,
                                   row_extra))
        batch.items.append(result_item("mailing", accepted=True, to=to, id=message_id, scheduled_at=c.scheduled))


def _track_clicks(made: links.NewLinks, message_id: str, html: str) -> str:
    """``html`` with the http(s) link targets (``href`` of ``<a>`` and ``<area>``) replaced by tracked short
    links of this message, so a click records a ``clicked`` event. The sandbox's own links (unsubscribe,
    landing, already shortened) stay as they are; so do images and anything that is not a valid URL.

        >>> [m.group(3) for m in _LINK_HREF.finditer('<a class="b" href="https://shop.example/?a=1&amp;b=2">s</a>'
        ...                                          '<img src="https://x.example/i.png">')]
        ['https://shop.example/?a=1&amp;b=2']
    """
    own = made.base + "/"
    out, end = [], 0
    for match in _LINK_HREF.finditer(html):
        url = html_text.unescape(match.group(3))
        if url.startswith(own):
            continue
        try:
            link = made.short(message_id, url)
        except InputError:  # not a valid http(s) URL: left as it is
            continue
        out += [html[end:match.start()], match.group(1), match.group(2), link, match.group(2)]
        end = match.end()
    return "".join([*out, html[end:]])


# ---------------------------------------------------------------- voice


def _voice(c: _Common, request: Any, batch: _Batch) -> None:
    audio = c.channel == "voiceAudio"
    template = None if audio else _parse(request.message, "message")
    callers = request.callers or {}
    extra = json.dumps({"retries": request.retries or 0, "amd": request.amd, "tags": c.tags,
                        **({"audioUrl": request.audio_url} if audio
                           else {"language": request.language, "gender": request.gender})})
    sub = getattr(request, "sub", None)
    for index, to in enumerate(request.to):
        if not is_valid_phone(to):
            batch.reject(to, ErrorCode.INVALID_RECIPIENT, f"to[{index}]: {shown(to)} is not a valid phone number "
                         "(digits only, 8 to 15, country calling code first)")
            continue
        if template is None:
            text = request.audio_url
        else:
            rendered = _render(template, _vars(sub, index), index, specials={})
            if isinstance(rendered, _Refusal):
                batch.reject(to, *rendered)
                continue
            text = rendered
        message_id = new_message_id()
        sender = callers.get(calling_code(to), DEFAULT_VOICE_CALLER)
        _plan(batch, message_id, c, to=to, retries=request.retries or 0, amd=request.amd)
        batch.messages.append(_row(c, message_id, sender, to, text, 1, sub, index, None, 0.0, extra))
        batch.items.append(result_item(c.channel, accepted=True, to=to, id=message_id, scheduled_at=c.scheduled,
                                       expires_at=c.expires))


# ---------------------------------------------------------------- WhatsApp


def _whatsapp(c: _Common, request: Any, batch: _Batch) -> None:
    state, account = c.state, c.account
    if request.template_id not in WHATSAPP_TEMPLATES:
        raise _refused(ErrorCode.INVALID_TEMPLATE, f"templateId: {request.template_id} is not an approved WhatsApp "
                        f"template of this account (approved: {', '.join(map(str, WHATSAPP_TEMPLATES))})")
    if request.sender not in account.whatsapp_senders:
        registered = ", ".join(sorted(account.whatsapp_senders)) or "none"
        raise _refused(ErrorCode.SENDER_NOT_VALIDATED, f"from: {shown(request.sender)} is not a WhatsApp sender "
                       f"registered for account {account.username} (registered: {registered})")
    needed = whatsapp_field_counts(request.template_id)
    for index, message in enumerate(request.messages):
        wire = message.to_wire()
        to = message.to
        if not is_valid_phone(to):
            batch.reject(to, ErrorCode.INVALID_RECIPIENT, f"messages[{index}].to: {shown(to)} is not a valid phone "
                         "number (digits only, 8 to 15, country calling code first)")
            continue
        wrong = [(name, count, len(wire.get(name) or [])) for name, count in needed.items()
                 if len(wire.get(name) or []) != count]
        if wrong:
            name, count, got = wrong[0]
            batch.reject(to, ErrorCode.TEMPLATE_FIELDS, f"messages[{index}].{name}: template {request.template_id} "
                         f"needs {count} value{'s' if count != 1 else ''} (got {got})")
            continue
        message_id = new_message_id()
        text = json.dumps({k: v for k, v in wire.items() if k != "to"}, ensure_ascii=False)
        cost = _cost(state, "whatsapp", to, 1, False)
        _plan(batch, message_id, c, to=to)
        batch.messages.append(_row(c, message_id, request.sender, to, text, 1, None, index, None, cost,
                                   json.dumps({"templateId": request.template_id})))
        batch.items.append(result_item("whatsapp", accepted=True, to=to, id=message_id))


_HANDLERS: dict[str, Callable[[_Common, Any, _Batch], None]] = {
    "sms": _sms, "landingsms": _landingsms, "mailing": _mailing,
    "voice": _voice, "voiceAudio": _voice, "whatsapp": _whatsapp,
}

_INSERT = ("INSERT INTO messages (id, recipient, message, parts, custom_fields, cost, sender, notification_url, extra, "
           "sending_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def _relinked(row: tuple[Any, ...], replaced: dict[str, str]) -> tuple[Any, ...]:
    """``row`` with each link another request took meanwhile (``{old: new}``, almost always empty) replaced."""
    if not replaced:
        return row
    out = []
    for value in row:
        if isinstance(value, str):
            for old, new in replaced.items():
                value = value.replace(old, new)
        out.append(value)
    return tuple(out)


def _store(state: Any, account: Account, channel: str, common: _Common, batch: _Batch) -> tuple[int, int]:
    """Write the accepted messages and their plans row in one transaction; wake the worker. (campaign, sending)."""
    db = state.db
    with db:
        shared = common.shared or {}
        details = {**shared, "status": common.status, "scheduled_at": store.iso(common.scheduled),
                   "expires_at": store.iso(common.expires)}
        campaign_id, sending_id = store.campaign_and_sending(db, account.username, common.campaign_name,
                                                             channel=channel, tags=common.tags, now=common.now,
                                                             details=details)
        replaced = batch.links.store(db)
        db.executemany(_INSERT, [(*_relinked(row, replaced), sending_id) for row in batch.messages])
        db.execute("INSERT INTO work (due, message_id, kind, payload) VALUES (?, ?, ?, ?)", _plans_row(batch, common))
    state.poke()
    return campaign_id, sending_id


def accept(state: Any, account: Account, channel: str, payload: object, *,
           on_loop: OnLoop[Any] = _at_once) -> tuple[int, dict[str, Any]]:
    """Validate and store one send request; return (HTTP status, wire body).

    Raises :class:`~sendframe.errors.ApiError` (or ``RequestValidationError``) when the request is refused as a
    whole. ``on_loop`` runs each database step: at once by default; from a worker thread, the server passes
    ``anyio.from_thread.run_sync`` so the steps run on the event loop that owns the connection.
    """
    request = parse_request(channel, payload)
    common = _common(state, account, request)
    common.on_loop = on_loop
    batch = _Batch(channel, links.NewLinks(state.public_url, common.now.isoformat(timespec="seconds")),
                   common.scheduled, common.expires)
    _HANDLERS[channel](common, request, batch)
    if not batch.messages:
        codes = {item["error"]["code"] for item in batch.items}
        code = codes.pop() if len(codes) == 1 else int(ErrorCode.INVALID_RECIPIENT)
        first = "; ".join(item["error"]["description"] for item in batch.items[:3])
        more = f" (and {len(batch.items) - 3} more)" if len(batch.items) > 3 else ""
        raise _refused(code, f"No recipient was accepted: {first}{more}")
    campaign_id, sending_id = common.db(_store, state, account, channel, common, batch)
    status = 202 if len(batch.messages) == len(batch.items) else 207
    return status, {"campaignId": campaign_id, "sendingId": sending_id, "result": batch.items}
