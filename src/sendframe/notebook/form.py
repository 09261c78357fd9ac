"""The Composer's inputs as plain values, and the one :class:`~sendframe.Message` they make.

No widgets here. A form is a plain mapping of the Composer's inputs, named as the library's options
(``message``, ``template_body``, ``to``, ...), to the values the inputs show; what is not in it
is where the input starts (:data:`FORM_DEFAULTS`). :func:`message_from_form` builds the message with
the channel's own constructor (:data:`~sendframe.campaign.message.CONSTRUCTORS`), as
``send_sms`` and ``sendframe send`` build it, so what the widget previews, checks, prices and sends
is the message the library and the CLI would build from the same settings.

    >>> message_from_form({"channel": "voice", "message": "Hola {name}", "language": "es_ES", "gender": "M"})
    Message('voice', message='Hola {name}', language='es_ES', gender='M')
    >>> CHANNEL_INPUTS["voiceAudio"]
    ('to', 'audio_url')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sendframe.api.models import GENDERS, LANGUAGES
from sendframe.campaign.channel_options import (
    channel_help,
    channel_options,
    missing_options,
    option_names,
    preview_placeholders,
    text_option,
)
from sendframe.campaign.message import CONSTRUCTORS, MESSAGE_OPTIONS, Message
from sendframe.channels import CHANNELS, channel
from sendframe.errors import InputError
from sendframe.options import check_options, request_field_names
from sendframe.text.encodings import ENCODINGS

__all__ = ["CHANNEL_INPUTS", "CHOICES", "COLUMN_INPUTS", "FORM_DEFAULTS", "INPUT_LABELS", "MESSAGE_SETTINGS",
           "NOT_COMPOSER_OPTIONS", "SEND_SETTINGS", "checked_form", "composer_options", "form_from_message",
           "message_from_form", "preview_message", "template_label"]

_CHANNEL_LABELS = {"sms": "SMS", "landingsms": "SMS with landing page", "mailing": "Email",
                   "voice": "Voice (text to speech)", "voiceAudio": "Voice (audio file)", "whatsapp": "WhatsApp"}
# the values of the inputs chosen from a list, as (label, value) or value; the empty encoding is the library's
# default: no encoding sent, the service's gsm
CHOICES: dict[str, Any] = {
    "channel": [(_CHANNEL_LABELS[name], name) for name in CHANNELS], "language": LANGUAGES, "gender": GENDERS,
    "encoding": [("default (gsm)", ""), *((name, name) for name in ("auto", *ENCODINGS))]}
# the WhatsApp inputs naming the columns that fill each array of the template
COLUMN_INPUTS: tuple[str, ...] = tuple(
    dict.fromkeys(channel("whatsapp").column_field_option(wire) for _, wire in channel("whatsapp").column_fields))

# what each input is called on screen (errors name the input as the analyst sees it)
INPUT_LABELS: dict[str, str] = {
    "channel": "Channel", "to": "To (column)", "sender": "From", "encoding": "Encoding", "parts": "Max parts",
    "trans": "Replace accents", "message": "Message", "template_body": "Landing page", "subject": "Subject",
    "body": "Body (HTML)", "from_email": "From email", "reply_to": "Reply to", "language": "Language",
    "gender": "Gender", "audio_url": "Audio URL", "template_id": "Template id", "header_fields": "Header fields",
    "body_fields": "Body fields", "call_to_action_fields": "Button fields", "default_answer": "Default answer fields",
    "campaign_name": "Campaign",
}
_TEMPLATE_LABELS = {"voice": "Spoken text"}
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
# where each input starts: empty, or the library's default of its option (the one table) as the input shows it;
# extra_fields: request fields no input shows (``otpConfig``, ``scheduleDate``, ...), by wire name, sent as given
FORM_DEFAULTS: dict[str, Any] = {
    **dict.fromkeys(INPUT_LABELS, ""), **dict.fromkeys(COLUMN_INPUTS, ()), "channel": "sms", "template_id": 0,
    "parts": next(o.default for o in channel_options("sms") if o.name == "parts"), "trans": False,
    "language": LANGUAGES[0], "gender": GENDERS[0], "extra_fields": {}}
CHANNEL_INPUTS: dict[str, tuple[str, ...]] = {
    name: tuple(f for f in INPUT_LABELS if f in option_names(name) and f != "campaign_name") for name in CHANNELS}
"""The inputs each channel uses: those that are its options (table, channel and campaign: always)."""


def checked_form(values: Mapping[str, Any], where: str = "Composer", base: Mapping[str, Any] | None = None
                 ) -> dict[str, Any]:
    """``base`` (default: :data:`FORM_DEFAULTS`) with ``values`` set; an unknown name is an error with a "did you mean".

        >>> checked_form({"channel": "email", "subject": "Hi"})["channel"]
        'mailing'
        >>> checked_form({"mesage": "Hi"}, "Composer.set")
        Traceback (most recent call last):
        ...
        sendframe.errors.UnknownOptionError: Composer.set() got an unknown option 'mesage'. Did you mean 'message'?
    """
    check_options(values, list(FORM_DEFAULTS), where)
    form = {**(base or FORM_DEFAULTS), **values}
    return {**form, "channel": channel(form["channel"]).name}


def composer_options(options: Mapping[str, Any], message: Message | str | None = None,
                     where: str = "Composer") -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The Composer's keywords as (its starting form, the message's settings no input shows, send's options).

    They start from ``message``: a :class:`~sendframe.Message` (its inputs, settings and request fields
    no input shows) or the text of the message input. Request fields no input shows go to the form's
    ``extra_fields`` by wire name. An unknown name is an error with a "did you mean".

        >>> form, settings, send = composer_options({"local_time": "10:00", "tags": ["a"], "max_cost": 9}, "Hi")
        >>> form["message"], form["extra_fields"], settings, send
        ('Hi', {'tags': ['a']}, {'local_time': '10:00'}, {'max_cost': 9})
    """
    written = message if isinstance(message, Message) else None
    base = form_from_message(written) if written is not None else FORM_DEFAULTS
    options = {**options, "message": message} if isinstance(message, str) else options
    fields = request_field_names(channel(options.get("channel") or base["channel"]).name)
    check_options(options, [*FORM_DEFAULTS, *MESSAGE_SETTINGS, *SEND_SETTINGS, *fields], where)
    form = {k: v for k, v in options.items() if k in FORM_DEFAULTS}
    settings = {k: getattr(written, k) for k in MESSAGE_SETTINGS} if written is not None else {}
    settings.update({k: v for k, v in options.items() if k in MESSAGE_SETTINGS and v is not None})
    send = {k: v for k, v in options.items() if k in SEND_SETTINGS and k not in MESSAGE_SETTINGS}
    extra = {fields[k]: v for k, v in options.items() if k not in form and k not in MESSAGE_SETTINGS and k not in send}
    form["extra_fields"] = {**base["extra_fields"], **form.get("extra_fields", {}), **extra}
    return checked_form(form, where, base), settings, send


def template_label(channel_name: str) -> str:
    """What the text input is called for a channel.

        >>> template_label("mailing"), template_label("voice")
        ('Body (HTML)', 'Spoken text')
    """
    text = text_option(channel_name)
    return _TEMPLATE_LABELS.get(channel_name, INPUT_LABELS[text] if text else "Message")


def _value(value: Any) -> Any:
    """An input's value as the library's option: empty (blank, 0, no column) is not given; trans is the spec's 1."""
    if isinstance(value, bool):
        return 1 if value else None
    value = value.strip() if isinstance(value, str) else tuple(value) if isinstance(value, list) else value
    return value or None


def _values(form: Mapping[str, Any]) -> dict[str, Any]:
    """The form's inputs as the library's options (:func:`_value`)."""
    return {name: _value(value) for name, value in form.items()}


def message_from_form(form: Mapping[str, Any], **settings: Any) -> Message:
    """The :class:`~sendframe.Message` the form describes; ``InputError`` names each empty input it needs.

    ``settings`` are the message's settings no input shows (:data:`MESSAGE_SETTINGS`:
    ``notification_url``, ``link_base``, ``suppression``, ``local_time``, ...), as for
    :func:`sendframe.message`; ``None`` means not set, and ``notification_url`` is left out for
    the channels that send no notifications.

        >>> message_from_form({"message": "Hi {name}", "sender": "Shop", "parts": 2}).fields["parts"]
        2
        >>> message_from_form({"channel": "voiceAudio"})
        Traceback (most recent call last):
        ...
        sendframe.errors.InputError: To send by voiceAudio, fill in Audio URL (the address of the audio file to play).
    """
    form = checked_form(form, "message_from_form")
    name, values = form["channel"], _values(form)
    missing = [f"{template_label(name) if n == text_option(name) else INPUT_LABELS[n]} ({channel_help(name, n)})"
               for n in missing_options(name, values)]
    if missing:
        raise InputError(f"To send by {name}, fill in {' and '.join(missing)}.")
    check_options(settings, list(MESSAGE_SETTINGS), "message_from_form")
    if not channel(name).has_notifications:
        settings.pop("notification_url", None)
    shown = {input_name: values[input_name] for input_name in ("campaign_name", *CHANNEL_INPUTS[name])}
    options = {k: v for k, v in {**settings, **shown}.items() if v is not None}
    return CONSTRUCTORS[name](**options, **form["extra_fields"])


def form_from_message(message: Message) -> dict[str, Any]:
    """The form showing ``message`` (what ``Composer(tables, message=msg)`` starts from); fields no input
    shows are kept in ``extra_fields``, so :func:`message_from_form` gives the same message back.

        >>> from sendframe.campaign.message import sms
        >>> form = form_from_message(sms("Hi {name}", "Shop", parts=2, schedule_date="20300101100000"))
        >>> form["message"], form["sender"], form["parts"], form["extra_fields"]
        ('Hi {name}', 'Shop', 2, {'scheduleDate': '20300101100000'})
    """
    names = request_field_names(message.channel)
    inputs = {names[name]: name for name in ("campaign_name", *CHANNEL_INPUTS[message.channel]) if name in names}
    values = {inputs[k]: v for k, v in message.fields.items() if k in inputs}
    values.update({message.info.column_field_option(k): v for k, v in message.whatsapp_columns.items()})
    extra = {k: v for k, v in message.fields.items() if k not in inputs}
    shown = {"channel": message.channel, "to": message.to or "", "encoding": message.encoding or "",
             "trans": bool(values.get("trans"))}
    return checked_form({**values, **shown, "extra_fields": extra})


def preview_message(form: Mapping[str, Any], **settings: Any) -> Message:
    """The message a preview shows while the form is incomplete: empty inputs other than the text get placeholders.

    Only the text matters to a preview; :func:`message_from_form` still refuses to send without them.

        >>> preview_message({"message": "Hi {name}"}).fields["from"]
        'Preview'
    """
    form = checked_form(form, "preview_message")
    return message_from_form({**form, **preview_placeholders(form["channel"], _values(form))}, **settings)
