"""The options a :class:`~sendframe.campaign.message.Message` is made from, checked once.

:func:`message_settings` turns the options of :func:`sendframe.message` (request fields in
snake_case or camelCase, and the message's own settings) into the fields and settings of a
``Message``: an unknown option is an error naming the closest known one, and the fields are
validated with the service's own models, as a request to one placeholder recipient.

    >>> message_settings("sms", {"message": "Hi", "sender": "Shop", "parts": 1}, ("to",))["fields"]
    mappingproxy({'message': 'Hi', 'from': 'Shop'})
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from sendframe.api.models import parse_request
from sendframe.campaign.batching import wire_fields
from sendframe.campaign.caps import frequency_window
from sendframe.campaign.measured import asked_encoding
from sendframe.channels import ChannelInfo, channel, channels_where
from sendframe.errors import InputError
from sendframe.options import check_options, request_field_names, snake_case

__all__ = ["CHANNEL_LIMITED", "RUN_SETTINGS", "listed_names", "message_settings", "without_query"]

# settings a send may also take for one run (they override the message's)
RUN_SETTINGS = ("suppression", "frequency_cap", "history", "local_time", "quiet_hours")
# settings only some channels take -> the channel's fact that says which
CHANNEL_LIMITED: dict[str, Callable[[ChannelInfo], bool]] = {
    "encoding": lambda info: info.sends_sms, "notification_url": lambda info: info.has_notifications}


def without_query(url: str) -> str:
    """A notification address as a repr may show it: no query (it may carry a token), no credentials.

        >>> without_query("https://u:pw@hooks.example/cb?token=s3cret")
        'https://hooks.example/cb?…'
    """
    parts = urlsplit(url)
    if not parts.scheme:
        return url  # a column name
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}" + (
        "?…" if parts.query else "")


def message_settings(channel_name: str, options: dict[str, Any], setting_names: tuple[str, ...]) -> dict[str, Any]:
    """The keyword arguments of a ``Message`` from the options of :func:`sendframe.message` (see its docstring).

    ``setting_names``: the message's settings that are not request fields
    (:data:`~sendframe.campaign.message.MESSAGE_OPTIONS`). ``options`` is consumed (settings are popped
    from it). Raises ``UnknownOptionError``, ``InputError`` or ``RequestValidationError`` naming the option or field.

        >>> message_settings("voiceAudio", {"audio_url": "https://example.org/hi.mp3"}, ())["channel"]
        'voiceAudio'
    """
    info = channel(channel_name)
    names = request_field_names(info.name)
    whatsapp_options = dict(info.column_fields)
    # the names a hint shows: the fields' Python spellings (not the wire's camelCase), the settings, WhatsApp's columns
    shown = ({n for n in names if "_" in n or n == n.lower()} - {"from_"}) | {*setting_names, *whatsapp_options}
    check_options(options, [*names, *setting_names, "encoding", *whatsapp_options], "sendframe.message",
                  hint=f"A {info.name} message takes: {', '.join(sorted(shown))}.")
    settings = {k: options.pop(k) for k in setting_names if k in options}
    whatsapp_columns = {whatsapp_options[k]: listed_names(options.pop(k), k)
                        for k in list(options) if k in whatsapp_options and options[k] is not None}
    whatsapp_columns = {k: v for k, v in whatsapp_columns.items() if v}  # no column is the same as none given
    encoding = options.pop("encoding", None)
    asked_encoding(encoding)  # checked
    fields = {names[name]: value for name, value in options.items() if value is not None}
    if fields.get("parts") == 1:  # the service's default: the same message whether it is said or not
        del fields["parts"]
    # what every front door fills in when it is not given: a mailing's replyTo is its fromEmail; a landing SMS without a
    # page (templateBody, templateId or templateV2Id) gets one showing its message without the link to itself
    if info.name == "mailing" and fields.get("replyTo") is None and fields.get("fromEmail") is not None:
        fields["replyTo"] = fields["fromEmail"]
    if info.name == "landingsms" and not {"templateBody", "templateId", "templateV2Id"} & fields.keys():
        page_text = re.sub(r"\s*\{\s*LAND_URL[^}]*\}", "", str(fields.get("message", ""))).strip()
        fields["templateBody"] = f"<p>{page_text}</p>"
    notification_url = settings.get("notification_url") or fields.pop("notificationUrl", None)
    for name, value in (("encoding", encoding), ("notification_url", notification_url)):
        if value is not None and not CHANNEL_LIMITED[name](info):
            raise InputError(f"{name} applies to {' and '.join(channels_where(CHANNEL_LIMITED[name]))}, "
                             f"not {info.name}.")
    for name in ("scheduleDate", "expirationDate"):
        value = fields.get(name)
        if isinstance(value, date) and getattr(value, "tzinfo", None) is None:  # a datetime, Timestamp or bare date
            raise InputError(f"{snake_case(name)}={value!r} has no time zone, so it could mean any of 24 hours: give "
                             "a zone, e.g. datetime(..., tzinfo=ZoneInfo('Europe/Madrid')) or pd.Timestamp(..., "
                             "tz='UTC').")
    cap = settings.get("frequency_cap")
    if cap is not None:
        if not isinstance(cap, (tuple, list)) or len(cap) != 2:
            raise InputError("frequency_cap is (messages, days), e.g. (2, 7): at most 2 messages in 7 days; "
                             f"got {cap!r}.")
        if settings.get("history") is None:
            raise InputError("frequency_cap needs history=: a folder of earlier campaigns' ledgers, their paths, or a "
                             "frame with recipient and sent_at columns.")
        settings["frequency_cap"] = frequency_window(cap[0], cap[1], f"frequency_cap={cap!r}")
    if "scheduleDate" in fields and (settings.get("local_time") or settings.get("quiet_hours")):
        raise InputError("schedule_date and local_time/quiet_hours both say when to send: give one.")
    # the fields checked by the service's model, as a request to one placeholder recipient
    recipient = {"phone": "34600000000", "email": "someone@example.com"}[info.recipient]
    body = {**fields, **({"encoding": encoding} if encoding not in (None, "auto") else {})}
    item = {"to": recipient, **{wire: ["x"] * len(columns) for wire, columns in whatsapp_columns.items()}}
    body = {**body, "messages": [item]} if info.column_fields else {**body, "to": [recipient]}  # WhatsApp's form
    parse_request(info.name, wire_fields(body, info.name))
    settings["quiet_hours"] = tuple(settings.get("quiet_hours") or ()) or None
    return {**settings, "channel": info.name, "fields": MappingProxyType(fields), "encoding": encoding,
            "notification_url": notification_url, "whatsapp_columns": MappingProxyType(whatsapp_columns)}


def listed_names(value: Any, option: str) -> tuple[str, ...]:
    """Names given as a list, or as text separated by commas (how a command line writes them).

        >>> listed_names("name, code", "body_fields"), listed_names(["name"], "body_fields")
        (('name', 'code'), ('name',))
    """
    if isinstance(value, str):
        return tuple(c.strip() for c in value.split(",") if c.strip())
    if isinstance(value, Iterable):
        return tuple(str(c) for c in value)
    raise InputError(f"{option} names the columns filling the template's variables in order, not {value!r}.")
