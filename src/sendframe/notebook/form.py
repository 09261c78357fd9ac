"""The Composer's inputs as plain values, and the one :class:`~sendframe.Message` they make.

No widgets here: the Composer reads its inputs into a :class:`ComposerForm` and calls
:func:`message_from_form`, so what the widget previews, checks, prices and sends is the message
the library and the CLI would build from the same settings. The inputs are named as the library's
options (``message``, ``template_body``, ``to``, ...), and the message is built by the channel's own
constructor (:data:`~sendframe.campaign.channel_options.CONSTRUCTORS`), as ``send_sms`` and
``sendframe send`` build it.

    >>> form = ComposerForm(channel="voice", message="Hola {name}", language="es_ES", gender="M")
    >>> message_from_form(form)
    Message('voice', message='Hola {name}', language='es_ES', gender='M')
    >>> CHANNEL_INPUTS["voiceAudio"]
    ('to', 'audio_url')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sendframe.api.models import GENDERS, LANGUAGES
from sendframe.campaign.channel_options import (
    CONSTRUCTORS,
    PREVIEW_PLACEHOLDERS,
    channel_options,
    option_names,
    text_option,
)
from sendframe.campaign.message import MESSAGE_OPTIONS, Message
from sendframe.channels import CHANNELS, channel
from sendframe.errors import InputError
from sendframe.options import check_options, request_field_names
from sendframe.text.encodings import ENCODINGS

__all__ = ["CHANNEL_INPUTS", "COLUMN_INPUTS", "ENCODING_CHOICES", "FORM_FIELDS", "GENDERS", "INPUT_LABELS",
           "LANGUAGES", "MESSAGE_SETTINGS", "NOT_COMPOSER_OPTIONS", "SEND_SETTINGS", "ComposerForm", "checked_form",
           "composer_options", "form_from_message", "message_from_form", "preview_message", "template_label"]

# (label, value) of the encoding input; empty is the library's default: no encoding sent, the service's gsm
ENCODING_CHOICES: tuple[tuple[str, str], ...] = (
    ("default (gsm)", ""), *((name, name) for name in ("auto", *ENCODINGS)))
# the WhatsApp inputs naming the columns that fill each array of the template
COLUMN_INPUTS: tuple[str, ...] = tuple(
    dict.fromkeys(channel("whatsapp").column_field_option(wire) for _, wire in channel("whatsapp").column_fields))

# what each input is called on screen (errors name the input as the analyst sees it)
INPUT_LABELS: dict[str, str] = {
    "to": "To (column)", "sender": "From", "encoding": "Encoding", "parts": "Max parts", "trans": "Replace accents",
    "message": "Message", "template_body": "Landing page", "subject": "Subject", "body": "Body (HTML)",
    "from_email": "From email", "reply_to": "Reply to", "language": "Language", "gender": "Gender",
    "audio_url": "Audio URL", "template_id": "Template id", "header_fields": "Header fields",
    "body_fields": "Body fields", "call_to_action_fields": "Button fields", "default_answer": "Default answer fields",
    "campaign_name": "Campaign",
}
_TEMPLATE_LABELS = {"voice": "Spoken text"}
# what to put in an input a message cannot go without (which ones: the constructor's required options and the text)
_WHAT = {"message": "the message", "sender": "the sender label (up to 11 letters and digits, or 15 digits)",
         "subject": "the subject", "body": "the HTML body", "from_email": "a validated sender address",
         "audio_url": "the address of the audio file to play", "template_id": "the approved template's id",
         "language": "the voice's language", "gender": "the voice's gender", "voice message": "the text to speak",
         "whatsapp sender": "the registered WhatsApp sender number"}
# a Message's settings that no input shows (what the Composer carries besides its inputs)
MESSAGE_SETTINGS: tuple[str, ...] = tuple(name for name in MESSAGE_OPTIONS if name != "to")
# options of Message.send the Composer does not take, and why (the rest are its keywords, see SEND_SETTINGS)
NOT_COMPOSER_OPTIONS: dict[str, str] = {
    "progress": "the Composer shows its own progress bar",
    "cancel": "the Composer's Cancel button stops the send",
    "out": "the result lands in composer.results",
}
# options of Message.send the Composer takes as keywords and passes to every send
SEND_SETTINGS: tuple[str, ...] = tuple(
    o.name for o in channel_options("sms") if o.role == "send" and o.name not in NOT_COMPOSER_OPTIONS)
# where an input starts: the library's default of its option (the one table), shown as the input shows it
_SMS_DEFAULTS = {o.name: o.default for o in channel_options("sms")}


@dataclasses.dataclass(frozen=True)
class ComposerForm:
    """The values of the Composer's inputs (each channel reads those of :data:`CHANNEL_INPUTS`)."""

    channel: str = "sms"
    message: str = ""
    """sms/landingsms: the message; voice: the text spoken."""
    sender: str = ""
    """sms/landingsms: the sender label; whatsapp: the registered sender number."""
    campaign_name: str = ""
    to: str = ""
    """The recipient column (empty: ``phone``/``email`` or a usual name, found in the table)."""
    encoding: str = _SMS_DEFAULTS["encoding"] or ""
    """sms/landingsms: empty is the library's default (none sent: the service's gsm)."""
    parts: int = _SMS_DEFAULTS["parts"]
    trans: bool = bool(_SMS_DEFAULTS["trans"])
    template_body: str = ""
    """landingsms: the landing page's HTML (empty: a page showing the message)."""
    subject: str = ""
    body: str = ""
    """mailing: the HTML body."""
    from_email: str = ""
    reply_to: str = ""
    """mailing: empty means the from email."""
    language: str = "en_GB"
    gender: str = "F"
    audio_url: str = ""
    template_id: int = 0
    """whatsapp: the approved template's id; landingsms, mailing: a stored page or template instead (0: none)."""
    header_fields: tuple[str, ...] = ()
    body_fields: tuple[str, ...] = ()
    call_to_action_fields: tuple[str, ...] = ()
    default_answer: tuple[str, ...] = ()
    extra_fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Request fields no input shows (``otpConfig``, ``scheduleDate``, ...), by wire name: sent as given."""


FORM_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ComposerForm))
"""The names of the :class:`ComposerForm` values, in order."""
CHANNEL_INPUTS: dict[str, tuple[str, ...]] = {
    name: tuple(f for f in FORM_FIELDS if f in option_names(name) and f != "campaign_name") for name in CHANNELS}
"""The inputs each channel uses: the form's values that are its options (table, channel and campaign: always)."""


def checked_form(values: Mapping[str, Any], where: str = "Composer",
                 base: ComposerForm | None = None) -> ComposerForm:
    """``base`` (default: an empty form) with ``values`` set; an unknown name is an error with a "did you mean".

        >>> checked_form({"channel": "email", "subject": "Hi"}).channel
        'mailing'
        >>> checked_form({"mesage": "Hi"}, "Composer.set")
        Traceback (most recent call last):
        ...
        sendframe.errors.UnknownOptionError: Composer.set() got an unknown option 'mesage'. Did you mean 'message'?
    """
    check_options(values, list(FORM_FIELDS), where)
    form = dataclasses.replace(base or ComposerForm(), **values)
    return dataclasses.replace(form, channel=channel(form.channel).name)


def composer_options(options: Mapping[str, Any], channel_name: str,
                     where: str = "Composer") -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The Composer's keywords as (inputs, the message's settings and request fields no input shows, send's).

    Request fields no input shows go to the form's ``extra_fields`` by wire name. An unknown name
    is an error with a "did you mean".

        >>> composer_options({"message": "Hi", "local_time": "10:00", "tags": ["a"], "max_cost": 9}, "sms")
        ({'message': 'Hi', 'extra_fields': {'tags': ['a']}}, {'local_time': '10:00'}, {'max_cost': 9})
    """
    fields = request_field_names(channel(channel_name).name)
    inputs = set(FORM_FIELDS)
    check_options(options, [*inputs, *MESSAGE_SETTINGS, *SEND_SETTINGS, *(f for f in fields if f not in inputs)],
                  where)
    form = {k: v for k, v in options.items() if k in inputs}
    settings = {k: v for k, v in options.items() if k in MESSAGE_SETTINGS}
    send = {k: v for k, v in options.items() if k in SEND_SETTINGS and k not in settings}
    extra = {fields[k]: v for k, v in options.items() if k not in inputs and k not in settings and k not in send}
    if extra:
        form["extra_fields"] = {**form.get("extra_fields", {}), **extra}
    return form, settings, send


def template_label(channel_name: str) -> str:
    """What the text input is called for a channel.

        >>> template_label("mailing"), template_label("voice")
        ('Body (HTML)', 'Spoken text')
    """
    text = text_option(channel_name)
    return _TEMPLATE_LABELS.get(channel_name, INPUT_LABELS[text] if text else "Message")


def _missing(form: ComposerForm) -> list[str]:
    """The inputs the form's message cannot go without and does not have (mailing's body: or a stored template)."""
    text = text_option(form.channel)
    needed = [o.name for o in channel_options(form.channel) if o.required or o.name == text]
    return [name for name in needed if not _given(getattr(form, name)) and not (name == "body" and form.template_id)]


def _label(channel_name: str, name: str) -> str:
    return template_label(channel_name) if name == text_option(channel_name) else INPUT_LABELS[name]


def _given(value: Any) -> bool:
    return bool(value.strip()) if isinstance(value, str) else bool(value)


def _value(name: str, value: Any) -> Any:
    """An input's value as the library's option: empty is not given; parts 1 and no trans are the service's default."""
    if isinstance(value, str):
        return value.strip() or None
    if name == "parts":
        return int(value) if int(value) != 1 else None  # left out, as `sendframe send` without --parts (same ledger)
    if name == "trans":
        return 1 if value else None
    if name == "template_id":
        return int(value) or None
    return tuple(value) if isinstance(value, (tuple, list)) else value


def message_from_form(form: ComposerForm, **settings: Any) -> Message:
    """The :class:`~sendframe.Message` the form describes; ``InputError`` names each empty input it needs.

    ``settings`` are the message's settings no input shows (:data:`MESSAGE_SETTINGS`:
    ``notification_url``, ``link_base``, ``suppression``, ``local_time``, ...), as for
    :func:`sendframe.message`; ``None`` means not set, and ``notification_url`` is left out for
    the channels that send no notifications.

        >>> message_from_form(ComposerForm(message="Hi {name}", sender="Shop", parts=2)).fields["parts"]
        2
        >>> message_from_form(ComposerForm(channel="voiceAudio"))
        Traceback (most recent call last):
        ...
        sendframe.errors.InputError: To send by voiceAudio, fill in Audio URL (the address of the audio file to play).
    """
    missing = [f"{_label(form.channel, name)} ({_WHAT.get(f'{form.channel} {name}') or _WHAT[name]})"
               for name in _missing(form)]
    if missing:
        raise InputError(f"To send by {form.channel}, fill in {' and '.join(missing)}.")
    check_options(settings, list(MESSAGE_SETTINGS), "message_from_form")
    options: dict[str, Any] = {k: v for k, v in settings.items() if v is not None}
    if not channel(form.channel).has_notifications:
        options.pop("notification_url", None)
    for name in ("campaign_name", *CHANNEL_INPUTS[form.channel]):
        value = _value(name, getattr(form, name))
        if value is not None and value != ():
            options[name] = value
    return CONSTRUCTORS[form.channel](**options, **form.extra_fields)


def form_from_message(message: Message) -> ComposerForm:
    """The form showing ``message`` (what ``Composer(tables, message=msg)`` starts from); fields no input
    shows are kept in ``extra_fields``, so :func:`message_from_form` gives the same message back.

        >>> from sendframe.campaign.message import sms
        >>> form = form_from_message(sms("Hi {name}", "Shop", parts=2, schedule_date="20300101100000"))
        >>> form.message, form.sender, form.parts, form.extra_fields
        ('Hi {name}', 'Shop', 2, {'scheduleDate': '20300101100000'})
    """
    names = request_field_names(message.channel)
    inputs = {names[name]: name for name in CHANNEL_INPUTS[message.channel] if name in names}
    inputs["campaignName"] = "campaign_name"
    values: dict[str, Any] = {inputs[k]: v for k, v in message.fields.items() if k in inputs}
    values.update({message.info.column_field_option(k): tuple(v) for k, v in message.whatsapp_columns.items()})
    if "trans" in values:
        values["trans"] = bool(values["trans"])
    values["encoding"] = message.encoding or ""
    extra = {k: v for k, v in message.fields.items() if k not in inputs}
    return ComposerForm(channel=message.channel, to=message.to or "", extra_fields=extra, **values)


def preview_message(form: ComposerForm, **settings: Any) -> Message:
    """The message a preview shows while the form is incomplete: empty inputs other than the text get placeholders.

    Only the text matters to a preview; :func:`message_from_form` still refuses to send without them.

        >>> preview_message(ComposerForm(message="Hi {name}")).fields["from"]
        'Preview'
    """
    filled = {name: PREVIEW_PLACEHOLDERS[name] for name in _missing(form) if name in PREVIEW_PLACEHOLDERS}
    return message_from_form(dataclasses.replace(form, **filled), **settings)

