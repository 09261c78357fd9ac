"""The six channels of the service and the facts every part of sendframe needs about each.

One registry instead of a list per module: the toolkit (render, preflight, estimate, send, the
CLI, the Composer) and the sandbox read the same facts from here.

    >>> channel("email").name
    'mailing'
    >>> channel("sms").recipient, channel("sms").sends_sms, channel("sms").billed_per_part
    ('phone', True, True)
    >>> channels_where(lambda info: info.has_notifications)
    ('sms', 'landingsms')

Next to :mod:`sendframe.errors` at the bottom of the layering: it imports nothing else of sendframe.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from sendframe.errors import InputError

__all__ = ["CHANNELS", "CHANNEL_INFO", "ChannelInfo", "channel", "channel_name", "channels_where"]


@dataclass(frozen=True)
class ChannelInfo:
    """What one channel is: its wire name, whom it sends to, which fields are templates, how it is billed."""

    name: str
    """The spec's name of the channel (the endpoint's last path segment)."""
    recipient: str
    """``"phone"`` or ``"email"``: the kind of recipient, and the default column holding it."""
    template_fields: tuple[str, ...]
    """Request fields whose ``{variables}`` are filled per recipient from ``sub``."""
    sends_sms: bool
    """True when the recipient gets an SMS: the text's encoding, its parts and the sender label apply."""
    billed_per_part: bool
    """True when the price is per SMS part (SMS and landing SMS); else per message or answered call."""
    has_notifications: bool
    """True when the request takes a ``notificationUrl`` (delivery notifications of the spec)."""
    max_parts: int
    """The largest ``parts`` a request may ask for (1 where the channel has no parts)."""
    billed_per_answered_call: bool = False
    """Voice channels: a call is billed only when answered."""
    aliases: tuple[str, ...] = ()
    """Other spellings analysts use for the channel."""
    html_fields: tuple[str, ...] = ()
    """Template fields that are HTML: values substituted into them are HTML-escaped (docs/api-notes.md)."""
    result_text_field: str | None = None
    """The field whose text a send result's ``text`` column shows (what the recipient reads first), or None."""
    sends_instead: str = ""
    """What a channel with no text template sends instead (a message asked to render its text says so)."""
    column_fields: tuple[tuple[str, str], ...] = ()
    """Per-message arrays filled from contact columns (WhatsApp): ``(option name, wire name)`` pairs in the
    wire's order."""

    def column_field_option(self, wire_name: str) -> str:
        """The option naming the column-filled array ``wire_name`` (:attr:`column_fields`).

            >>> channel("whatsapp").column_field_option("callToActionFields")
            'call_to_action_fields'
        """
        return next(option for option, wire in self.column_fields if wire == wire_name)


CHANNEL_INFO: dict[str, ChannelInfo] = {
    info.name: info
    for info in (
        ChannelInfo("sms", "phone", ("message",), sends_sms=True, billed_per_part=True, has_notifications=True,
                    max_parts=15, result_text_field="message"),
        ChannelInfo("mailing", "email", ("subject", "body"), sends_sms=False, billed_per_part=False,
                    has_notifications=False, max_parts=1, aliases=("email", "mail"), html_fields=("subject", "body"),
                    result_text_field="subject"),
        ChannelInfo("voice", "phone", ("message",), sends_sms=False, billed_per_part=False, has_notifications=False,
                    max_parts=1, billed_per_answered_call=True, result_text_field="message"),
        ChannelInfo("voiceAudio", "phone", (), sends_sms=False, billed_per_part=False, has_notifications=False,
                    max_parts=1, billed_per_answered_call=True, aliases=("voice_audio", "voiceaudio", "audio"),
                    sends_instead="it plays its audioUrl"),
        ChannelInfo("landingsms", "phone", ("message",), sends_sms=True, billed_per_part=True, has_notifications=True,
                    max_parts=8, aliases=("landing_sms", "landing"), html_fields=("templateBody",),
                    result_text_field="message"),
        ChannelInfo("whatsapp", "phone", (), sends_sms=False, billed_per_part=False, has_notifications=False,
                    max_parts=1, aliases=("wa",), sends_instead="it sends an approved template",
                    column_fields=(("header_fields", "headerFields"), ("body_fields", "bodyFields"),
                                   ("call_to_action_fields", "callToActionFields"),
                                   ("default_answer", "defaultAnswer"))),
    )
}
CHANNELS: tuple[str, ...] = tuple(CHANNEL_INFO)
_BY_SPELLING: dict[str, str] = {
    spelling.lower(): info.name for info in CHANNEL_INFO.values() for spelling in (info.name, *info.aliases)
}


def channel_name(name: str) -> str:
    """The spec's name of a channel given in any usual spelling; raises ``InputError`` naming the known ones.

        >>> channel_name("voice_audio")
        'voiceAudio'
    """
    found = _BY_SPELLING.get(str(name).lower()) if isinstance(name, str) else None
    if found is None:
        close = difflib.get_close_matches(str(name).lower(), list(_BY_SPELLING), n=1)
        hint = f" Did you mean {_BY_SPELLING[close[0]]!r}?" if close else ""
        raise InputError(f"Unknown channel {name!r}: use one of {', '.join(CHANNELS)}.{hint}")
    return found


def channel(name: str) -> ChannelInfo:
    """The facts of one channel, by any usual spelling of its name.

        >>> channel("landingsms").template_fields
        ('message',)
    """
    return CHANNEL_INFO[channel_name(name)]


def channels_where(fact: Callable[[ChannelInfo], bool]) -> tuple[str, ...]:
    """The spec's names of the channels ``fact`` holds for, in the registry's order.

        >>> channels_where(lambda info: info.sends_sms)
        ('sms', 'landingsms')
    """
    return tuple(info.name for info in CHANNEL_INFO.values() if fact(info))
