"""The one-call send functions scripts rely on (``send_sms(contacts, "Hi", "Shop")``), made from the constructors.

Each is ``constructor(*args, **message_options).send(contacts, **send_options)``, the options split
by the channel's table (:func:`~sendframe.campaign.channel_options.channel_options`), so a
one-call function takes exactly what the constructor and :meth:`Message.send
<sendframe.campaign.message.Message.send>` take, with the same names, positions and defaults (its
signature, shown by ``help()``, is the table's). Unknown options are errors with a "did you mean".

    >>> import pandas as pd
    >>> send_sms(pd.DataFrame({"phone": ["34600123456"]}), "Hi", "Shop", encodng="auto")
    Traceback (most recent call last):
    ...
    sendframe.errors.UnknownOptionError: sendframe.send_sms() got an unknown option 'encodng'. Did you mean 'encoding'?
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pandas as pd

from sendframe.campaign.channel_options import channel_options, split_options
from sendframe.campaign.message import CONSTRUCTORS
from sendframe.channels import channel as channel_info

__all__ = ["send_campaign", "send_landingsms", "send_mailing", "send_sms", "send_voice", "send_voice_audio",
           "send_whatsapp"]

def send_campaign(contacts: Any, channel: str, **options: Any) -> pd.DataFrame:
    """Send one message to every row on ``channel``: the channel constructor's options and send's, in one call.

    ``options`` are those of the channel's one-call function (``send_sms``, ``send_mailing``, ...),
    all by name; request fields may be spelled as the spec does (``campaignName``, ``from``).

        >>> import pandas as pd
        >>> result = send_campaign(pd.DataFrame({"phone": ["34600123456"]}), "sms", message="Hi", sender="Shop",
        ...                        dry_run=True, progress=False)
        >>> result["outcome"].tolist()
        ['dry_run']
    """
    return _sent(channel_info(channel).name, contacts, (), options, "sendframe.send_campaign")


def _sent(channel_name: str, contacts: Any, args: tuple[Any, ...], options: dict[str, Any], where: str) -> pd.DataFrame:
    """The constructor's message made from ``args`` and the message's ``options``, sent with send's options."""
    message_options, send_options = split_options(channel_name, options, where)
    return CONSTRUCTORS[channel_name](*args, **message_options).send(contacts, **send_options)


def _one_call(channel_name: str, name: str, summary: str, example: str) -> Callable[..., pd.DataFrame]:
    """The one-call function of a channel: its constructor's parameters, then every other option of the table."""
    constructor = CONSTRUCTORS[channel_name]

    def send(contacts: Any, *args: Any, **options: Any) -> pd.DataFrame:
        return _sent(channel_name, contacts, args, options, f"sendframe.{name}")

    own = [p.replace(annotation=inspect.Parameter.empty)
           for p in inspect.signature(constructor).parameters.values() if p.kind is not p.VAR_KEYWORD]
    rest = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default)
            for o in channel_options(channel_name) if o.role != "argument"]  # the table's arguments are the own
    send.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # what help() and IDEs show
        [inspect.Parameter("contacts", inspect.Parameter.POSITIONAL_OR_KEYWORD), *own, *rest],
        return_annotation=pd.DataFrame)
    send.__name__ = send.__qualname__ = name
    send.__doc__ = (f"{summary}\n\n    ``{constructor.__name__}(...)`` then ``.send(contacts, ...)``: the options of "
                    f":func:`sendframe.{constructor.__name__}` and of :meth:`sendframe.Message.send`, by name.\n"
                    "    Each row's ``outcome`` is one of those :mod:`sendframe.campaign.send` lists.\n\n"
                    "        >>> import pandas as pd\n"
                    "        >>> contacts = pd.DataFrame({'phone': ['34600123456'], 'email': ['ana@example.org']})\n"
                    f"        >>> {name}(contacts, {example}, dry_run=True, progress=False)['outcome'].tolist()\n"
                    "        ['dry_run']\n")
    return send


send_sms = _one_call("sms", "send_sms", "Send an SMS to every row.", '"Hi {phone}", "Shop"')
send_landingsms = _one_call("landingsms", "send_landingsms", "Send an SMS with a landing page to every row.",
                            '"See {LAND_URL}", "Shop"')
send_mailing = _one_call("mailing", "send_mailing", "Send an email to every row.",
                         '"Hi", "<p>Hi</p>", from_email="news@example.org"')
send_voice = _one_call("voice", "send_voice", "Call every row with text-to-speech.",
                       '"Hello", language="en_GB", gender="F"')
send_voice_audio = _one_call("voiceAudio", "send_voice_audio", "Call every row and play an audio file.",
                             '"https://example.org/hi.mp3"')
send_whatsapp = _one_call("whatsapp", "send_whatsapp", "Send a WhatsApp template to every row.",
                          '1002, "34911111111", body_fields=["phone"]')
