"""The one-call send functions scripts rely on (``send_sms(contacts, "Hi", "Shop")``), as thin wrappers.

Each builds a :class:`~sendframe.campaign.message.Message` from its arguments and sends it, so it
follows the same rules: unknown options are errors with a "did you mean", rows that should not be
sent are skipped with their own outcome, ``encoding="auto"`` sends what ``estimate`` priced.

    >>> import pandas as pd
    >>> send_sms(pd.DataFrame({"phone": ["34600123456"]}), "Hi", "Shop", encodng="auto")
    Traceback (most recent call last):
    ...
    sendframe.errors.UnknownOptionError: sendframe.send_sms() got an unknown option 'encodng'. Did you mean 'encoding'?
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from sendframe.campaign.message import SEND_OPTIONS, message
from sendframe.channels import channel as channel_info
from sendframe.options import check_options, request_field_names

__all__ = ["send_campaign", "send_landingsms", "send_mailing", "send_sms", "send_voice", "send_voice_audio",
           "send_whatsapp"]

_SETTINGS = ("to_column", "notification_url", "campaign", "link_base", "encoding", "default_region")
_WHATSAPP_OPTIONS = tuple(option for option, _ in channel_info("whatsapp").column_fields)


def _split(channel: str, options: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(message options, send options) of a one-call send; an unknown name raises with the closest known one."""
    fields = request_field_names(channel)
    known = [*SEND_OPTIONS, *_SETTINGS, *fields, *(_WHATSAPP_OPTIONS if channel == "whatsapp" else ())]
    check_options(options, known, where)
    send_options = {k: v for k, v in options.items() if k in SEND_OPTIONS}
    message_options = {k: v for k, v in options.items() if k not in SEND_OPTIONS}
    if "to_column" in message_options:
        message_options["to"] = message_options.pop("to_column")
    return message_options, send_options


def _send(channel: str, contacts: Any, options: dict[str, Any], where: str) -> pd.DataFrame:
    message_options, send_options = _split(channel, options, where)
    return message(channel, **message_options).send(contacts, **send_options)


def send_campaign(contacts: Any, channel: str, **options: Any) -> pd.DataFrame:
    """Send one message to every row on ``channel``: the request fields and send options in one call.

    ``options`` are the spec's request fields (snake_case or camelCase; ``sender`` for ``from``),
    the message settings of :func:`sendframe.message` (``to_column``, ``notification_url``,
    ``campaign``, ``encoding``, ...) and the options of :meth:`Message.send <sendframe.Message.send>`
    (``client``, ``ledger``, ``suppression``, ``keep``, ``batch_size``, ``concurrency``,
    ``requests_per_second``, ``parts_per_second``, ``dry_run``, ``resend_unknown``,
    ``stop_after_unknown``, ``progress``).

    Each row's ``outcome``: ``accepted``; ``rejected`` (refused by the service); ``unknown`` (sent,
    no readable answer: check before re-sending with ``resend_unknown=True``); ``not_sent``
    (nothing was sent; the next run with the same ledger sends it); ``dry_run``; or the
    ``skipped_*`` reason a row was left out (:mod:`sendframe.campaign.policy`).

        >>> result = send_campaign(  # doctest: +SKIP
        ...     contacts, "sms", message="Hi {name}", sender="Shop", ledger="c.sqlite")
    """
    return _send(channel_info(channel).name, contacts, options, "sendframe.send_campaign")


def send_sms(contacts: Any, message: str, sender: str, **options: Any) -> pd.DataFrame:
    """Send an SMS to every row. ``send_sms(contacts, "Hi {name}", "Shop", ledger="spring.sqlite")``

        >>> send_sms(contacts, "Hi {name}", "Shop", parts=2, encoding="auto")  # doctest: +SKIP
    """
    return _send("sms", contacts, {"message": message, "sender": sender, **options}, "sendframe.send_sms")


def send_mailing(contacts: Any, subject: str, body: str | None = None, *, from_email: str,
                 reply_to: str | None = None, **options: Any) -> pd.DataFrame:
    """Send an email to every row. ``send_mailing(contacts, "Hi {name}", "<p>...</p>", from_email=...)``

        >>> send_mailing(contacts, "Offer", "<p>Hi {name}</p>", from_email="a@b.co")  # doctest: +SKIP
    """
    return _send("mailing", contacts, {"subject": subject, "body": body, "from_email": from_email,
                                       "reply_to": reply_to or from_email, **options}, "sendframe.send_mailing")


def send_voice(contacts: Any, message: str, *, language: str, gender: str, **options: Any) -> pd.DataFrame:
    """Call every row with text-to-speech. ``send_voice(contacts, "Hello {name}", language="en_GB", gender="F")``

        >>> send_voice(contacts, "Hello {name}", language="en_GB", gender="F", retries=2)  # doctest: +SKIP
    """
    return _send("voice", contacts, {"message": message, "language": language, "gender": gender, **options},
                 "sendframe.send_voice")


def send_voice_audio(contacts: Any, audio_url: str, **options: Any) -> pd.DataFrame:
    """Call every row and play an audio file. ``send_voice_audio(contacts, "https://example.com/a.mp3")``

        >>> send_voice_audio(contacts, "https://example.com/a.mp3")  # doctest: +SKIP
    """
    return _send("voiceAudio", contacts, {"audio_url": audio_url, **options}, "sendframe.send_voice_audio")


def send_landingsms(contacts: Any, message: str, sender: str, *, template_body: str | None = None,
                    template_id: int | None = None, **options: Any) -> pd.DataFrame:
    """Send an SMS with a landing page.
    ``send_landingsms(contacts, "See {LAND_URL}", "Shop", template_body="<p>Hi</p>")``

        >>> send_landingsms(contacts, "Offer: {LAND_URL}", "Shop", template_body="<h1>Hi</h1>")  # doctest: +SKIP
    """
    return _send("landingsms", contacts, {"message": message, "sender": sender, "template_body": template_body,
                                          "template_id": template_id, **options}, "sendframe.send_landingsms")


def send_whatsapp(contacts: Any, template_id: int, sender: str, *, header_fields: Sequence[str] = (),
                  body_fields: Sequence[str] = (), cta_fields: Sequence[str] = (), **options: Any) -> pd.DataFrame:
    """Send a WhatsApp template; each ``*_fields`` names the columns filling its positional variables in order.

        >>> send_whatsapp(contacts, 1, "Shop", body_fields=("name", "order_id"))  # doctest: +SKIP
    """
    return _send("whatsapp", contacts, {"template_id": template_id, "sender": sender, "header_fields": header_fields,
                                        "body_fields": body_fields, "cta_fields": cta_fields, **options},
                 "sendframe.send_whatsapp")

