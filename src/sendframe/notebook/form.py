"""The Composer's inputs as plain values, and the one :class:`~sendframe.Message` they make.

No widgets here: the Composer reads its inputs into a :class:`ComposerForm` and calls
:func:`message_from_form`, so what the widget previews, checks, prices and sends is the message
the library and the CLI would build from the same settings.

    >>> form = ComposerForm(channel="voice", template="Hola {name}", language="es_ES", gender="M")
    >>> message_from_form(form)
    Message('voice', message='Hola {name}', language='es_ES', gender='M')
    >>> CHANNEL_INPUTS["voiceAudio"]
    ('audio_url',)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sendframe.api.models import GENDERS, LANGUAGES
from sendframe.campaign.command import message_ledger_path
from sendframe.campaign.message import Message, landing_sms, mailing, sms, voice, voice_audio, whatsapp
from sendframe.channels import channel
from sendframe.errors import InputError
from sendframe.options import check_options

__all__ = ["CHANNEL_INPUTS", "ENCODING_CHOICES", "GENDERS", "INPUT_LABELS", "LANGUAGES", "MESSAGE_SETTINGS",
           "ComposerForm", "checked_form", "form_fields", "form_from_message", "ledger_for", "message_from_form",
           "preview_message", "template_label"]

ENCODING_CHOICES: tuple[str, ...] = ("auto", "gsm", "gsm-pt", "utf-16")

# the inputs each channel uses, in the order the widget shows them (table, channel and campaign: always)
CHANNEL_INPUTS: dict[str, tuple[str, ...]] = {
    "sms": ("sender", "encoding", "parts", "trans", "template"),
    "landingsms": ("sender", "encoding", "parts", "trans", "template", "landing_body"),
    "mailing": ("subject", "from_email", "reply_to", "template"),
    "voice": ("language", "gender", "template"),
    "voiceAudio": ("audio_url",),
    "whatsapp": ("template_id", "sender", "header_fields", "body_fields", "cta_fields"),
}
# what each input is called on screen (errors name the input as the analyst sees it)
INPUT_LABELS: dict[str, str] = {
    "sender": "From", "encoding": "Encoding", "parts": "Max parts", "trans": "Replace accents",
    "template": "Message", "landing_body": "Landing page", "subject": "Subject", "from_email": "From email",
    "reply_to": "Reply to", "language": "Language", "gender": "Gender", "audio_url": "Audio URL",
    "template_id": "Template id", "header_fields": "Header fields", "body_fields": "Body fields",
    "cta_fields": "Button fields", "campaign": "Campaign",
}
_TEMPLATE_LABELS = {"mailing": "Body (HTML)", "voice": "Spoken text"}
# inputs a message cannot go without, and what to put in them
_SMS_SENDER = ("sender", "the sender label (up to 11 letters and digits, or 15 digits)")
_REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "sms": (("template", "the message"), _SMS_SENDER),
    "landingsms": (("template", "the message"), _SMS_SENDER),
    "mailing": (("subject", "the subject"), ("template", "the HTML body"),
                ("from_email", "a validated sender address")),
    "voice": (("template", "the text to speak"),),
    "voiceAudio": (("audio_url", "the address of the audio file to play"),),
    "whatsapp": (("template_id", "the approved template's id"), ("sender", "the registered WhatsApp sender number")),
}
# what a preview puts in an empty input it needs, so the text can be shown before the form is complete
# the wire field each input fills, per channel (the rest of a message's fields are extra_fields)
_WIRE_INPUTS: dict[str, dict[str, str]] = {
    "sms": {"message": "template", "from": "sender", "parts": "parts", "trans": "trans", "campaignName": "campaign"},
    "mailing": {"subject": "subject", "body": "template", "fromEmail": "from_email", "replyTo": "reply_to",
                "campaignName": "campaign"},
    "voice": {"message": "template", "language": "language", "gender": "gender", "campaignName": "campaign"},
    "voiceAudio": {"audioUrl": "audio_url", "campaignName": "campaign"},
    "whatsapp": {"templateId": "template_id", "from": "sender", "campaignName": "campaign"},
}
_WIRE_INPUTS["landingsms"] = {**_WIRE_INPUTS["sms"], "templateBody": "landing_body"}
# a Message's settings that are not request fields (what the Composer carries besides its inputs)
MESSAGE_SETTINGS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(Message) if f.name not in ("channel", "fields", "encoding", "whatsapp_columns"))
_PLACEHOLDERS = {"sender": "Preview", "subject": "(subject)", "from_email": "preview@example.com",
                 "audio_url": "https://example.com/audio.mp3", "template_id": 1001}


@dataclasses.dataclass(frozen=True)
class ComposerForm:
    """The values of the Composer's inputs (each channel reads those of :data:`CHANNEL_INPUTS`)."""

    channel: str = "sms"
    template: str = ""
    """sms/landingsms: the message; mailing: the HTML body; voice: the text spoken."""
    sender: str = ""
    """sms/landingsms: the sender label; whatsapp: the registered sender number."""
    campaign: str = ""
    encoding: str = "auto"
    parts: int = 1
    trans: bool = False
    landing_body: str = ""
    """landingsms: the landing page's HTML (empty: a page showing the message)."""
    subject: str = ""
    from_email: str = ""
    reply_to: str = ""
    """mailing: empty means the from email."""
    language: str = "en_GB"
    gender: str = "F"
    audio_url: str = ""
    template_id: int = 0
    """whatsapp: the approved template's id (0: not given)."""
    header_fields: tuple[str, ...] = ()
    body_fields: tuple[str, ...] = ()
    cta_fields: tuple[str, ...] = ()
    extra_fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Request fields no input shows (``otpConfig``, ``scheduleDate``, ...), by wire name: sent as given."""


def form_fields() -> tuple[str, ...]:
    """The names of the :class:`ComposerForm` values, in order.

        >>> form_fields()[:3]
        ('channel', 'template', 'sender')
    """
    return tuple(f.name for f in dataclasses.fields(ComposerForm))


def checked_form(values: Mapping[str, Any], where: str = "Composer()",
                 base: ComposerForm | None = None) -> ComposerForm:
    """``base`` (default: an empty form) with ``values`` set; an unknown name is an error with a "did you mean".

        >>> checked_form({"channel": "email", "subject": "Hi"}).channel
        'mailing'
    """
    check_options(values, list(form_fields()), where)
    form = dataclasses.replace(base or ComposerForm(), **values)
    return dataclasses.replace(form, channel=channel(form.channel).name)


def template_label(channel_name: str) -> str:
    """What the template input is called for a channel.

        >>> template_label("mailing"), template_label("sms")
        ('Body (HTML)', 'Message')
    """
    return _TEMPLATE_LABELS.get(channel_name, "Message")


def _missing(form: ComposerForm) -> list[str]:
    return [f"{_label(form.channel, name)} ({what})" for name, what in _REQUIRED[form.channel]
            if not _given(getattr(form, name))]


def _label(channel_name: str, name: str) -> str:
    return template_label(channel_name) if name == "template" else INPUT_LABELS[name]


def _given(value: Any) -> bool:
    return bool(value.strip()) if isinstance(value, str) else bool(value)


def _text(value: str) -> str | None:
    return value.strip() or None


def message_from_form(form: ComposerForm, **settings: Any) -> Message:
    """The :class:`~sendframe.Message` the form describes; ``InputError`` names each empty input it needs.

    ``settings`` are the message's settings no input shows (:data:`MESSAGE_SETTINGS`: ``to``,
    ``notification_url``, ``link_base``, ``suppression``, ``local_time``, ...), as for
    :func:`sendframe.message`; ``None`` means not set, and ``notification_url`` is left out for
    the channels that send no notifications.

        >>> message_from_form(ComposerForm(template="Hi {name}", sender="Shop", parts=2)).fields["parts"]
        2
        >>> message_from_form(ComposerForm(channel="voiceAudio"))
        Traceback (most recent call last):
        ...
        sendframe.errors.InputError: To send by voiceAudio, fill in Audio URL (the address of the audio file to play).
    """
    missing = _missing(form)
    if missing:
        raise InputError(f"To send by {form.channel}, fill in {' and '.join(missing)}.")
    name = form.channel
    info = channel(name)
    check_options(settings, list(MESSAGE_SETTINGS), "message_from_form")
    common: dict[str, Any] = {k: v for k, v in settings.items() if v is not None}
    if not info.has_notifications:
        common.pop("notification_url", None)
    common["campaign"] = _text(form.campaign)
    if info.sends_sms:
        # parts 1 is the service's default: left out, as `sendframe send` without --parts does (same ledger)
        common.update(encoding=form.encoding, parts=int(form.parts) if int(form.parts) != 1 else None,
                      trans=1 if form.trans else None)
    common.update(form.extra_fields)
    if name == "sms":
        return sms(form.template, form.sender.strip(), **common)
    if name == "landingsms":
        return landing_sms(form.template, form.sender.strip(), template_body=_text(form.landing_body), **common)
    if name == "mailing":
        return mailing(form.subject, form.template, from_email=form.from_email.strip(),
                       reply_to=_text(form.reply_to), **common)
    if name == "voice":
        return voice(form.template, language=form.language, gender=form.gender, **common)
    if name == "voiceAudio":
        return voice_audio(form.audio_url.strip(), **common)
    return whatsapp(int(form.template_id), form.sender.strip(), header_fields=tuple(form.header_fields),
                    body_fields=tuple(form.body_fields), cta_fields=tuple(form.cta_fields), **common)


def form_from_message(message: Message) -> ComposerForm:
    """The form showing ``message`` (what ``Composer(tables, message=msg)`` starts from); fields no input
    shows are kept in ``extra_fields``, so :func:`message_from_form` gives the same message back.

        >>> form = form_from_message(sms("Hi {name}", "Shop", parts=2, schedule_date="20300101100000"))
        >>> form.template, form.sender, form.parts, form.extra_fields
        ('Hi {name}', 'Shop', 2, {'scheduleDate': '20300101100000'})
    """
    inputs = _WIRE_INPUTS[message.channel]
    values: dict[str, Any] = {inputs[k]: v for k, v in message.fields.items() if k in inputs}
    values.update({message.info.column_field_option(k): tuple(v) for k, v in message.whatsapp_columns.items()})
    if "trans" in values:
        values["trans"] = bool(values["trans"])
    if message.info.sends_sms:
        values["encoding"] = message.encoding or "gsm"  # the service's default
    extra = {k: v for k, v in message.fields.items() if k not in inputs}
    return ComposerForm(channel=message.channel, extra_fields=extra, **values)


def preview_message(form: ComposerForm, **settings: Any) -> Message:
    """The message a preview shows while the form is incomplete: empty inputs other than the text get placeholders.

    Only the text matters to a preview; :func:`message_from_form` still refuses to send without them.

        >>> preview_message(ComposerForm(template="Hi {name}")).fields["from"]
        'Preview'
    """
    filled: dict[str, Any] = {name: value for name, value in _PLACEHOLDERS.items()
                              if name in CHANNEL_INPUTS[form.channel] and not _given(getattr(form, name))}
    return message_from_form(dataclasses.replace(form, **filled), **settings)


def ledger_for(table: str | Path, message: Message, folder: str | Path = ".") -> Path:
    """The Composer's default ledger: the file ``sendframe send`` would use for this table and message.

    ``table`` is the contacts file, or the name the table has in the Composer; the name also holds
    the campaign (or the table) and a hash of the message, so a changed message starts a new ledger.

        >>> ledger_for("spring contacts", sms("Hi", "Shop")).name
        'spring-contacts-42653ac0.ledger.sqlite'
    """
    return message_ledger_path(table, message, folder)
