"""What a :class:`~sendframe.campaign.message.Message` does to the rows of one pandas frame.

The steps :func:`sendframe.campaign.prepared.prepare` takes, as plain functions of the message and
the frame: measure the text once (:func:`measure`), check the rows (:func:`find_problems`), find the
rows over the frequency cap (:func:`capped_rows`) and price (:func:`estimate_rows`). Each reads only
the message's public settings.

    >>> import pandas as pd, sendframe
    >>> msg, frame = sendframe.sms("Hi {name}", sender="Shop"), pd.DataFrame({"phone": ["34600123456"], "name": ["Jo"]})
    >>> measured = measure(msg, frame)
    >>> texts(msg, frame, measured).tolist()
    ['Hi Jo']
    >>> find_problems(msg, frame, None, measured).empty
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from sendframe.campaign import estimate as estimating
from sendframe.campaign import preflight as checking
from sendframe.campaign.caps import frequency_capped, history_from_ledgers
from sendframe.campaign.measured import measure_texts
from sendframe.errors import SendframeError

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["capped_rows", "estimate_rows", "find_problems", "measure", "measured_encoding", "texts"]


def measured_encoding(msg: Message) -> str:
    """The encoding preflight measures the texts under: each row's own under ``"auto"``, gsm when none is asked.

        >>> import sendframe
        >>> measured_encoding(sendframe.sms("Hi", sender="Shop"))
        'gsm'
    """
    return msg.encoding or "gsm"


def find_problems(msg: Message, frame: pd.DataFrame, suppression: Any,
                  measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """``msg.preflight`` of a pandas frame; ``measured`` (:func:`measure`) spares measuring the text again."""
    whatsapp = {msg.info.column_field_option(k): v for k, v in msg.whatsapp_columns.items()}
    return checking.preflight(
        frame, msg.channel, msg.template, sender=msg.fields.get("from"), parts=msg.parts,
        encoding=measured_encoding(msg), trans=int(msg.fields.get("trans", 0)),
        suppression=msg.suppression if suppression is None else suppression,
        whatsapp_template=msg.fields.get("templateId") if msg.channel == "whatsapp" else None,
        to=msg.recipient_column(frame), default_region=msg.default_region,
        otp_config=msg.fields.get("otpConfig"), link_base=msg.link_base, measured=measured, **whatsapp)


def measure(msg: Message, frame: pd.DataFrame) -> pd.DataFrame | None:
    """The text engine's one pass over an SMS's rows (text, encoding, parts, unencodable characters), which
    preflight, estimate and a send's result all read; ``None`` when they measure their own way (other
    channels, ``trans``) or the template is broken (preflight then says how)."""
    template = msg.fields.get("message")
    if not msg.info.sends_sms or int(msg.fields.get("trans", 0)) != 0 or not isinstance(template, str):
        return None
    try:
        return measure_texts(frame, template, encoding="auto" if msg.encoding == "auto" else measured_encoding(msg),
                             link_base=msg.link_base, otp_config=msg.fields.get("otpConfig"))
    except SendframeError:
        return None


def texts(msg: Message, frame: pd.DataFrame, measured: pd.DataFrame | None) -> pd.Series:
    """What each row's recipient reads (as ``msg.render``), from ``measured`` when there is one."""
    if measured is not None:
        return pd.Series(measured["text"], index=frame.index).astype("str")
    if msg.info.result_text_field:
        return msg.render(frame)
    return pd.Series(pd.NA, index=frame.index, dtype="str")


def capped_rows(msg: Message, recipients: pd.Series, now: Any, ledger: Any) -> tuple[Any, str]:
    """Rows over the message's ``frequency_cap`` as of ``now`` (None when it has none), and why."""
    if msg.frequency_cap is None:
        return None, ""
    n, days = msg.frequency_cap
    history = msg.history
    if not isinstance(history, pd.DataFrame):
        history = history_from_ledgers(history, exclude=ledger)
    moment = pd.Timestamp.now(tz="UTC") if now is None else now
    capped = frequency_capped(recipients, history, n, days, moment, default_region=msg.default_region)
    return capped, f"already sent {n} message(s) in the last {days:g} days (frequency_cap=({n}, {days:g}))."


def estimate_rows(msg: Message, frame: pd.DataFrame, *, prices: Any = None, attachments: int = 0,
                  measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`~sendframe.campaign.estimate.estimate` of every row with this message's settings (whether sent or not)."""
    return estimating.estimate(
        frame, msg.template or "", channel=msg.channel, encoding=msg.encoding,
        parts=msg.parts if msg.info.sends_sms else None, certified=bool(msg.fields.get("certified", False)),
        attachments=attachments, prices=prices, trans=int(msg.fields.get("trans", 0)),
        otp_config=msg.fields.get("otpConfig"), link_base=msg.link_base, to=msg.recipient_column(frame),
        measured=measured)
