"""One handler per channel for the sandbox's acceptance of send requests: SMS and landing SMS,
email (with click and open tracking), voice, WhatsApp.

A handler checks each recipient of a parsed request, renders its text and fills the request's
:class:`~sendframe.sandbox.sending_batch.RequestBatch` with result items, ``messages`` rows and planned
messages; a request refused as a whole raises :class:`~sendframe.errors.ApiError`.
:func:`sendframe.sandbox.sending.accept` picks the handler in :data:`_HANDLERS` and stores the batch.
"""

from __future__ import annotations

import functools
import html as html_text
import json
import re
from collections.abc import Callable
from typing import Any

from sendframe.api.models import result_item
from sendframe.api.recipients import calling_code, is_valid_email, is_valid_phone
from sendframe.api.templates import WHATSAPP_TEMPLATES, whatsapp_field_counts
from sendframe.api.validation import shown
from sendframe.errors import ErrorCode, InputError
from sendframe.sandbox import links, otp
from sendframe.sandbox.accounts import EMAIL_TEMPLATES, LANDING_TEMPLATES
from sendframe.sandbox.sending_batch import (
    Refusal,
    RequestBatch,
    RequestCommon,
    checked_shorten_url,
    message_cost,
    message_row,
    new_message_id,
    new_message_ids,
    otp_placeholders,
    parse_template,
    plan_message_row,
    recipient_variables,
    refusal_of,
    refused_error,
    render_text,
    unsubscribed_recipients,
)
from sendframe.text import templates
from sendframe.text.encodings import to_deliverable
from sendframe.text.parts import sms_parts, split_parts
from sendframe.text.translate import translate

__all__ = ["DEFAULT_VOICE_CALLER"]

DEFAULT_VOICE_CALLER = "sandbox"
_UNSUB_MARK = "[unsubscribe_link]"
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)
# the quoted http(s) href of a link (<a>, <area>); images and other attributes are never rewritten
_LINK_HREF = re.compile(r"""(<a(?:rea)?\s[^>]*?\bhref\s*=\s*)(["'])\s*(https?://[^"'<>\s]+)\s*\2""", re.IGNORECASE)


# ---------------------------------------------------------------- SMS and landing SMS


def _sms_like(c: RequestCommon, request: Any, batch: RequestBatch, *, landing_html: str | None) -> None:
    state, account = c.state, c.account
    template = parse_template(request.message, "message")
    encoding, max_parts = request.encoding, request.parts
    urls = request.notification_url
    sub = request.sub
    otp_cfg = getattr(request, "otp_config", None)
    otp_wire = otp_cfg.to_wire() if otp_cfg is not None else {}
    windows = [w.to_wire() for w in (getattr(request, "available_times", None) or [])] or None
    landing_template = parse_template(landing_html, "templateBody") if landing_html is not None else None
    dummy_specials, dummy_shorten = otp_placeholders(state, otp_wire)
    dummy_shorten_checked = (lambda url: dummy_shorten(checked_shorten_url(url))) if template.uses_shorten else None
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
    unsubscribed = c.db(unsubscribed_recipients, state, account.username, request.to)
    ids = new_message_ids(len(request.to))
    for index, to in enumerate(request.to):
        if not is_valid_phone(to):
            batch.reject(to, ErrorCode.INVALID_RECIPIENT, f"to[{index}]: {shown(to)} is not a valid phone number "
                         "(digits only, 8 to 15, country calling code first)")
            continue
        if unsubscribed and links.recipient_key(to) in unsubscribed:
            batch.reject(to, ErrorCode.UNSUBSCRIBED, f"to[{index}]: {to} unsubscribed from this account's messages")
            continue
        variables = recipient_variables(sub, index)
        text = ""
        if precheck:  # the text and the page render? (checked before a code is issued: a refused recipient gets none)
            rendered = render_text(template, variables, index, specials=dummy_specials, shorten=dummy_shorten_checked)
            if isinstance(rendered, str) and landing_template is not None:
                rendered = refusal_of(landing_template, variables, index, specials=dummy_specials) or rendered
            if isinstance(rendered, Refusal):
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
            rendered = render_text(template, variables, index, specials=specials,
                                   shorten=functools.partial(made.short, message_id) if template.uses_shorten else None)
            if isinstance(rendered, Refusal):
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
        cost = message_cost(state, c.channel, to, parts, bool(request.certified))
        plan_message_row(batch, message_id, c, to=to, parts=parts, available_times=windows)
        batch.messages.append(message_row(c, message_id, request.sender, to, deliverable, parts, sub, index, url, cost,
                                          extra, variables))
        batch.items.append(result_item(c.channel, accepted=True, to=to, id=message_id, parts=parts,
                                       scheduled_at=c.scheduled, expires_at=c.expires))


def _sms(c: RequestCommon, request: Any, batch: RequestBatch) -> None:
    _sms_like(c, request, batch, landing_html=None)


def _stored_template(request: Any, templates_by_id: dict[tuple[str, int], str], what: str) -> str | None:
    """The account's stored template a request names by ``templateV2Id`` or ``templateId``, or None when it names
    none; an unknown number is refused, listing the known ones."""
    if request.template_v2_id is None and request.template_id is None:
        return None
    generation = "templateV2Id" if request.template_v2_id is not None else "templateId"
    number = request.template_v2_id if request.template_v2_id is not None else request.template_id
    found = templates_by_id.get((generation, number))
    if found is None:
        known = ", ".join(str(n) for g, n in templates_by_id if g == generation)
        raise refused_error(ErrorCode.INVALID_REQUEST, f"{generation}: no {what} template {number} (known: {known})")
    return found


def _landingsms(c: RequestCommon, request: Any, batch: RequestBatch) -> None:
    html = _stored_template(request, LANDING_TEMPLATES, "landing")
    _sms_like(c, request, batch, landing_html=request.template_body if html is None else html)


# ---------------------------------------------------------------- email


def _mailing(c: RequestCommon, request: Any, batch: RequestBatch) -> None:
    state, account = c.state, c.account
    for name, address in (("fromEmail", request.from_email), ("replyTo", request.reply_to)):
        if address.strip().lower() not in account.emails:
            validated = ", ".join(sorted(account.emails)) or "none"
            raise refused_error(ErrorCode.SENDER_NOT_VALIDATED, f"{name}: {shown(address)} is not a validated sender "
                                f"address of account {account.username} (validated: {validated})")
    stored = _stored_template(request, EMAIL_TEMPLATES, "email")
    body = request.body if stored is None else stored
    subject_t, body_t = parse_template(request.subject, "subject"), parse_template(body, "body")
    otp_wire = request.otp_config.to_wire() if request.otp_config is not None else {}
    dummy_specials, _ = otp_placeholders(state, otp_wire)
    uses_otp = "OTP_CODE" in subject_t.specials | body_t.specials
    uses_unsub = "UNSUB_URL" in subject_t.specials | body_t.specials or _UNSUB_MARK in body
    extra = json.dumps({"subject": None, "fromEmail": request.from_email, "fromName": request.from_name,
                        "replyTo": request.reply_to, "cc": request.cc, "bcc": request.bcc, "tags": c.tags,
                        "attachments": [a.name for a in request.attachments or []],
                        "certified": bool(request.certified)})
    unsubscribed = c.db(unsubscribed_recipients, state, account.username, request.to)
    for index, to in enumerate(request.to):
        if not is_valid_email(to):
            batch.reject(to, ErrorCode.INVALID_RECIPIENT, f"to[{index}]: {shown(to)} is not a valid email address")
            continue
        if unsubscribed and links.recipient_key(to) in unsubscribed:
            batch.reject(to, ErrorCode.UNSUBSCRIBED, f"to[{index}]: {to} unsubscribed from this account's messages")
            continue
        variables = recipient_variables(request.sub, index)
        problem = (refusal_of(subject_t, variables, index, specials=dummy_specials)
                   or refusal_of(body_t, variables, index, specials=dummy_specials))
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
        plan_message_row(batch, message_id, c, to=to)
        row_extra = extra.replace('"subject": null', f'"subject": {json.dumps(subject, ensure_ascii=False)}', 1)
        batch.messages.append(message_row(c, message_id, request.from_email, to, html, 1, request.sub, index, None,
                                          cost, row_extra))
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


def _voice(c: RequestCommon, request: Any, batch: RequestBatch) -> None:
    audio = c.channel == "voiceAudio"
    template = None if audio else parse_template(request.message, "message")
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
            rendered = render_text(template, recipient_variables(sub, index), index, specials={})
            if isinstance(rendered, Refusal):
                batch.reject(to, *rendered)
                continue
            text = rendered
        message_id = new_message_id()
        sender = callers.get(calling_code(to), DEFAULT_VOICE_CALLER)
        plan_message_row(batch, message_id, c, to=to, retries=request.retries or 0, amd=request.amd)
        batch.messages.append(message_row(c, message_id, sender, to, text, 1, sub, index, None, 0.0, extra))
        batch.items.append(result_item(c.channel, accepted=True, to=to, id=message_id, scheduled_at=c.scheduled,
                                       expires_at=c.expires))


# ---------------------------------------------------------------- WhatsApp


def _whatsapp(c: RequestCommon, request: Any, batch: RequestBatch) -> None:
    state, account = c.state, c.account
    if request.template_id not in WHATSAPP_TEMPLATES:
        raise refused_error(ErrorCode.INVALID_TEMPLATE,
                            f"templateId: {request.template_id} is not an approved WhatsApp "
                            f"template of this account (approved: {', '.join(map(str, WHATSAPP_TEMPLATES))})")
    if request.sender not in account.whatsapp_senders:
        registered = ", ".join(sorted(account.whatsapp_senders)) or "none"
        raise refused_error(ErrorCode.SENDER_NOT_VALIDATED, f"from: {shown(request.sender)} is not a WhatsApp sender "
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
        cost = message_cost(state, "whatsapp", to, 1, False)
        plan_message_row(batch, message_id, c, to=to)
        batch.messages.append(message_row(c, message_id, request.sender, to, text, 1, None, index, None, cost,
                                          json.dumps({"templateId": request.template_id})))
        batch.items.append(result_item("whatsapp", accepted=True, to=to, id=message_id))


_HANDLERS: dict[str, Callable[[RequestCommon, Any, RequestBatch], None]] = {
    "sms": _sms, "landingsms": _landingsms, "mailing": _mailing,
    "voice": _voice, "voiceAudio": _voice, "whatsapp": _whatsapp,
}

