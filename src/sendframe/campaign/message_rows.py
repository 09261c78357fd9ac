"""What a :class:`~sendframe.campaign.message.Message` does to the rows of one pandas frame.

The steps its methods share, as plain functions of the message and the frame: measure the text
once (:func:`measure`), check the rows (:func:`find_problems`), plan who is sent to
(:func:`plan_frame`, with the frequency cap), price (:func:`estimate_rows`) and send what the plan
lets through (:func:`send_plan`); :func:`preview_frame`, :func:`estimate_frame` and
:func:`send_frame` are ``preview``, ``estimate`` and ``send`` of one pandas frame. Each reads only
the message's public settings, so what ``estimate`` prices is what ``send`` sends.

    >>> import pandas as pd, sendframe
    >>> msg, frame = sendframe.sms("Hi {name}", sender="Shop"), pd.DataFrame({"phone": ["34600123456"], "name": ["Jo"]})
    >>> measured = measure(msg, frame)
    >>> texts(msg, frame, measured).tolist()
    ['Hi Jo']
    >>> plan_frame(msg, frame, find_problems(msg, frame, None, measured))["action"].tolist()
    ['send']
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from sendframe.api.recipient_columns import recipient_keys
from sendframe.api.validation import format_wire_datetime
from sendframe.api.wire import user_stacklevel
from sendframe.campaign import estimate as estimating
from sendframe.campaign import preflight as checking
from sendframe.campaign.budget import Budget
from sendframe.campaign.caps import frequency_capped, history_from_ledgers
from sendframe.campaign.measured import measure_texts
from sendframe.campaign.policy import OUTCOMES, keep_reasons, plan_rows, skipped_summary
from sendframe.campaign.send import send_rows
from sendframe.campaign.settling import tags_from_callbacks
from sendframe.errors import InputError, RowsSkippedWarning, SendframeError
from sendframe.options import check_options

if TYPE_CHECKING:
    from sendframe.campaign.message import Message

__all__ = ["SEND_OPTIONS", "measured_encoding", "estimate_frame", "estimate_rows", "find_problems",
           "measure", "plan_frame", "preview_frame", "send_frame", "send_plan", "texts"]

# options of Message.send besides the contacts (the message's own settings are not repeated here)
SEND_OPTIONS: tuple[str, ...] = (
    "client", "ledger", "suppression", "keep", "batch_size", "concurrency", "requests_per_second",
    "parts_per_second", "dry_run", "resend_unknown", "stop_after_unknown", "progress", "max_cost", "prices",
    "callbacks",
    "cancel",
)


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
        to_column=msg.recipient_column(frame), default_region=msg.default_region,
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


def plan_frame(msg: Message, frame: pd.DataFrame, problems: pd.DataFrame, *,
               keep: str | Iterable[str] | None = None, now: Any = None, ledger: Any = None) -> pd.DataFrame:
    """``msg.plan`` from the frame's ``problems`` (:func:`find_problems`), so a call checks its rows once."""
    fatal = problems[problems["row"].isna() & (problems["severity"] == "error")]
    if len(fatal):
        lines = "\n".join(f"  - {c}: {m}" for c, m in zip(fatal["column"], fatal["message"], strict=True))
        raise InputError(f"This {msg.channel} message cannot be sent as it is:\n{lines}")
    column = msg.recipient_column(frame)
    values = frame[column]
    key = recipient_keys(values, msg.info.recipient, default_region=None)
    capped, why = _capped(msg, values, now, ledger)
    return plan_rows(problems, frame.index, key.reset_index(drop=True), keep_reasons(keep), capped, why)


def _capped(msg: Message, recipients: pd.Series, now: Any, ledger: Any) -> tuple[Any, str]:
    if msg.frequency_cap is None:
        return None, ""
    n, days = msg.frequency_cap
    history = msg.history
    if not isinstance(history, pd.DataFrame):
        history = history_from_ledgers(history, exclude=ledger)
    moment = pd.Timestamp.now(tz="UTC") if now is None else now
    capped = frequency_capped(recipients, history, n, days, moment, default_region=msg.default_region)
    return capped, f"already sent {n} message(s) in the last {days:g} days (frequency_cap=({n}, {days:g}))."


def preview_frame(msg: Message, frame: pd.DataFrame, *, suppression: Any = None,
                  keep: str | Iterable[str] | None = None) -> pd.DataFrame:
    """``msg.preview`` of a pandas frame: per row ``recipient``, ``text``, ``action`` and ``reason``."""
    column = msg.recipient_column(frame)
    measured = measure(msg, frame)
    plan = plan_frame(msg, frame, find_problems(msg, frame, suppression, measured), keep=keep)
    text = texts(msg, frame, measured)
    return pd.concat([frame[column].astype("str").rename("recipient"), text.rename("text"), plan], axis=1)


def estimate_frame(msg: Message, frame: pd.DataFrame, *, prices: Any = None, suppression: Any = None,
                   keep: str | Iterable[str] | None = None, attachments: int = 0) -> pd.DataFrame:
    """``msg.estimate`` of a pandas frame: every row priced, those a send would skip at no cost; totals in attrs."""
    measured = measure(msg, frame)
    result = estimate_rows(msg, frame, prices=prices, attachments=attachments, measured=measured)
    plan = plan_frame(msg, frame, find_problems(msg, frame, suppression, measured), keep=keep)
    sent = (plan["action"] == "send").to_numpy()
    priced = result.assign(billable=result["billable"].to_numpy() & sent,
                           cost=result["cost"].where(sent, 0.0), action=plan["action"])
    priced.attrs = {"currency": result.attrs.get("currency", "EUR")}
    priced.attrs["totals"] = estimating.estimate_totals(priced)
    return priced


def estimate_rows(msg: Message, frame: pd.DataFrame, *, prices: Any = None, attachments: int = 0,
                  measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`~sendframe.campaign.estimate.estimate` of every row with this message's settings (whether sent or not)."""
    return estimating.estimate(
        frame, msg.template or "", channel=msg.channel, encoding=msg.encoding,
        parts=msg.parts if msg.info.sends_sms else None, certified=bool(msg.fields.get("certified", False)),
        attachments=attachments, prices=prices, trans=int(msg.fields.get("trans", 0)),
        otp_config=msg.fields.get("otpConfig"), link_base=msg.link_base, to_column=msg.recipient_column(frame),
        measured=measured)


def send_frame(msg: Message, frame: pd.DataFrame, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
               now: Any = None, ledger: Any = None, dry_run: bool = False, max_cost: float | None = None,
               prices: Any = None, callbacks: Any = None, **send_options: Any) -> pd.DataFrame:
    """``msg.send`` of a pandas frame: plan, say once which rows are skipped, send the rest (:func:`send_plan`)."""
    measured = measure(msg, frame)
    plan = plan_frame(msg, frame, find_problems(msg, frame, suppression, measured), keep=keep, now=now, ledger=ledger)
    summary = skipped_summary(plan, "sent" if not dry_run else "to be sent")
    if summary:
        warnings.warn(summary, RowsSkippedWarning, stacklevel=user_stacklevel())
    budget = Budget(max_cost, []) if max_cost is not None else None
    return send_plan(msg, frame, plan, measured, ledger=ledger, keep=keep, dry_run=dry_run, budget=budget,
                     prices=prices, settle=tags_from_callbacks(callbacks, msg.notification_url), now=now,
                     **send_options)


def send_plan(msg: Message, frame: pd.DataFrame, plan: pd.DataFrame, measured: pd.DataFrame | None, *,
              budget: Budget | None = None, identity: Mapping[str, Any] | None = None,
              keep: str | Iterable[str] | None = None, prices: Any = None,
              settle: Mapping[str, str] | None = None, now: Any = None, **send_options: Any) -> pd.DataFrame:
    """``msg.send_planned``, reading ``measured`` (:func:`measure` of ``frame``, or None) for the texts."""
    check_options(send_options, [o for o in SEND_OPTIONS if o not in ("max_cost", "callbacks")],
                  "Message.send_planned")
    column = msg.recipient_column(frame)
    sending = (plan["action"] == "send").to_numpy()
    to_send = frame.loc[sending]
    measured_sent = measured.loc[sending] if measured is not None else None
    if keep_reasons(keep) & {"invalid"}:  # sent as written: the service answers for them (102)
        raw = f"{column}_raw"
        fallback = to_send[raw] if raw in to_send else pd.Series("", index=to_send.index)
        to_send = to_send.assign(**{column: to_send[column].fillna(fallback).fillna("")})
        measured_sent = None  # a template may show the recipient, which has just changed
    row_fields: dict[str, Sequence[Any]] = {}
    priced = None
    if (msg.encoding == "auto" and msg.info.sends_sms or budget is not None) and len(to_send):
        # every row sent is priced (the plan has had its say): the rows' own estimate, measured once
        priced = estimate_rows(msg, to_send, prices=prices, measured=measured_sent)
    if msg.encoding == "auto" and msg.info.sends_sms and priced is not None:
        row_fields["encoding"] = priced["encoding"].fillna("gsm").tolist()
    if budget is not None:
        budget.start(priced["cost"].tolist() if priced is not None else [])
    if (msg.local_time is not None or msg.quiet_hours is not None) and len(to_send):
        moment = pd.Timestamp.now(tz="UTC") if now is None else pd.Timestamp(now)
        when = msg.schedule(to_send, now=moment)["send_at_utc"]
        row_fields["scheduleDate"] = [format_wire_datetime(t.to_pydatetime()) if t > moment else None
                                      for t in when]
    fields = dict(msg.fields)
    if msg.encoding not in (None, "auto"):
        fields["encoding"] = msg.encoding
    sent = send_rows(
        to_send, msg.channel, notification_url=msg.notification_url, to_column=column, row_fields=row_fields,
        whatsapp_columns=msg.whatsapp_columns, fields=fields, budget=budget, identity=identity, settle=settle,
        **send_options)
    if budget is not None and budget.left_out:
        currency = priced.attrs.get("currency", "") if priced is not None else ""
        sent.loc[sent.index[budget.left_out], "reason"] = budget.reason(currency)
        warnings.warn(f"{len(budget.left_out)} row(s) not sent: {budget.reason(currency)}", RowsSkippedWarning,
                      stacklevel=user_stacklevel())
    return _result(frame, column, plan, sent, texts(msg, frame, measured))


def _result(frame: pd.DataFrame, column: str, plan: pd.DataFrame, sent: pd.DataFrame,
            text: pd.Series) -> pd.DataFrame:
    result = sent.reindex(frame.index)
    outcome = result["outcome"].astype("str").where(plan["action"] == "send", plan["action"])
    skipped = (plan["action"] != "send").to_numpy()
    sent_reason = result["reason"] if "reason" in result else pd.Series(pd.NA, index=frame.index, dtype="str")
    result = result.assign(accepted=result["accepted"].mask(skipped, False),
                           outcome=pd.Categorical(outcome, categories=list(OUTCOMES)),
                           reason=plan["reason"].where(skipped, sent_reason))
    front = pd.DataFrame({"recipient": frame[column].astype("str"), "text": text}, index=frame.index)
    return pd.concat([front, result], axis=1)
