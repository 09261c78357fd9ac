"""A message, written once and applied to any contact table: preview, preflight, estimate, ready, send.

One :class:`Message` holds a channel's settings (template or message fields, sender, parts,
encoding including ``"auto"``, trans, OTP, links, recipient column, notification address), checked
when it is made: an unknown option is an error naming the closest known one, and the fields are
validated with the service's own models. Every method reads the same settings, so what
``estimate`` prices is what ``send`` sends, and the library, the CLI and the Composer cannot disagree.

    >>> import pandas as pd, sendframe
    >>> contacts = pd.DataFrame({"phone": ["34600123456", "34600123456", "12"], "name": ["ana", "bo", "cy"]})
    >>> msg = sendframe.sms("Hi {name|capitalize}", sender="Shop", parts=2, encoding="auto")
    >>> msg.render(contacts).tolist()
    ['Hi Ana', 'Hi Bo', 'Hi Cy']
    >>> msg.plan(contacts)["action"].tolist()
    ['send', 'skipped_duplicate', 'skipped_invalid']
    >>> len(msg.ready(contacts))
    1
    >>> result = msg.send(contacts, client=client, ledger="spring.sqlite")  # doctest: +SKIP

Rows that should not be sent are left out by one policy (:mod:`sendframe.campaign.policy`), said
once in a warning, and kept in the result with their own outcome.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from sendframe.api.models import parse_request
from sendframe.api.validation import format_wire_datetime
from sendframe.api.wire import user_stacklevel
from sendframe.campaign import estimate as estimating
from sendframe.campaign import preflight as checking
from sendframe.campaign import preview
from sendframe.campaign.batching import wire_fields
from sendframe.campaign.budget import Budget
from sendframe.campaign.caps import frequency_capped, history_from_ledgers
from sendframe.campaign.columns import recipient_column
from sendframe.campaign.policy import OUTCOMES, keep_reasons, plan_rows, skipped_summary
from sendframe.campaign.schedule import local_send_times
from sendframe.campaign.send import ANSWER_COLUMNS, send_rows
from sendframe.campaign.settling import tags_from_callbacks
from sendframe.campaign.tables import as_frame
from sendframe.channels import ChannelInfo, channel
from sendframe.errors import InputError, RowsSkippedWarning, SendframeError
from sendframe.options import check_options, keyword_checked, request_field_names, snake_case
from sendframe.scale import messages as on_dask
from sendframe.scale.runtime import is_dask_frame
from sendframe.scale.sending import send_partitions
from sendframe.text.encodings import ENCODINGS
from sendframe.text.measure import measure_frame

__all__ = ["RESULT_COLUMNS", "SEND_OPTIONS", "Message", "landing_sms", "mailing", "message", "sms", "voice",
           "voice_audio", "whatsapp"]

# options of Message.send besides the contacts (the message's own settings are not repeated here)
SEND_OPTIONS: tuple[str, ...] = (
    "client", "ledger", "suppression", "keep", "batch_size", "concurrency", "requests_per_second",
    "parts_per_second", "dry_run", "resend_unknown", "stop_after_unknown", "progress", "max_cost", "prices",
    "callbacks",
    "cancel",
)
# the columns of a send result, in order: who, what they read, the service's answer, the outcome and why
RESULT_COLUMNS: tuple[str, ...] = ("recipient", "text", *ANSWER_COLUMNS, "reason")
# settings of a Message that are not request fields
_MESSAGE_OPTIONS = ("to", "notification_url", "link_base", "default_region", "campaign", "suppression", "frequency_cap",
                    "history", "local_time", "quiet_hours")
# settings a send may also take for one run (they override the message's)
_RUN_SETTINGS = ("suppression", "frequency_cap", "history", "local_time", "quiet_hours")
_PLACEHOLDER_RECIPIENT = {"phone": "34600000000", "email": "someone@example.com"}
# the text column of a send result: what the recipient reads (mailing: the subject)
_TEXT_FIELD = {"sms": "message", "landingsms": "message", "voice": "message", "mailing": "subject"}


@dataclasses.dataclass(frozen=True, repr=False)
class Message:
    """One channel's message settings, applied to any contact table (see the module docstring).

    Make one with :func:`sms`, :func:`mailing`, :func:`voice`, :func:`voice_audio`,
    :func:`landing_sms`, :func:`whatsapp` or :func:`message`; change one with :meth:`replace`.
    """

    channel: str
    fields: Mapping[str, Any]
    """The request fields by their wire name (``from``, ``campaignName``, ...), checked by the models."""
    encoding: str | None = None
    """``None`` (the service's default, gsm), ``"gsm"``, ``"gsm-pt"``, ``"utf-16"`` or ``"auto"``."""
    to: str | None = None
    """The recipient column; ``None`` finds ``phone``/``email`` (or a usual alias) in each table."""
    notification_url: str | None = None
    """Delivery notification address, or the name of a column holding one per row (sms)."""
    link_base: str | None = None
    """Base address that previews show in ``{UNSUB_URL}``/``{LAND_URL}``/shortened links."""
    default_region: str = "ES"
    """Country assumed for national numbers in a suppression list."""
    whatsapp_columns: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """WhatsApp: wire array name (``bodyFields``, ...) -> the columns filling it, in order."""
    suppression: Any = None
    """Recipients never sent to (a CSV path, a frame or a list): their rows are ``skipped_suppressed``."""
    frequency_cap: tuple[int, float] | None = None
    """``(n, days)``: a recipient sent ``n`` messages in the last ``days`` days (per ``history``) is skipped."""
    history: Any = None
    """Earlier sends for the frequency cap: a folder of ledgers, ledger paths, or a frame (recipient, sent_at)."""
    local_time: str | None = None
    """Send at this time on each recipient's clock (``"10:00"``), its zone from the number or a ``timezone`` column."""
    quiet_hours: tuple[str, str] | None = None
    """``("09:00", "21:00")``: nothing is delivered before the first or from the second local time."""

    # ------------------------------------------------------------------ what it is

    @property
    def info(self) -> ChannelInfo:
        """The channel's facts (:mod:`sendframe.channels`)."""
        return channel(self.channel)

    @property
    def template(self) -> str | None:
        """The text template the recipient reads (mailing: subject and body together), if the channel has one."""
        texts = [self.fields[name] for name in self.info.template_fields if isinstance(self.fields.get(name), str)]
        return "\n".join(texts) if texts else None

    @property
    def parts(self) -> int:
        """The most SMS parts a message may take (the request's ``parts``; 1 when not set)."""
        return int(self.fields.get("parts", 1))

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.fields.items() if k != "notificationUrl"}
        extras = {"encoding": self.encoding, "to": self.to, "link_base": self.link_base}
        settings = [f"{k}={v!r}" for k, v in {**shown, **extras}.items() if v is not None]
        if self.notification_url:
            settings.append(f"notification_url={_without_query(self.notification_url)!r}")
        settings += [f"{k}={list(v)!r}" for k, v in self.whatsapp_columns.items()]
        return f"Message({self.channel!r}, {', '.join(settings)})"

    def replace(self, **changes: Any) -> Message:
        """A copy with some settings changed (any option the channel's constructor takes).

            >>> sms("Hi", sender="Shop").replace(message="Hello", parts=2).fields["parts"]
            2
        """
        options: dict[str, Any] = {"to": self.to, "notification_url": self.notification_url,
                                   "link_base": self.link_base, "default_region": self.default_region,
                                   **{name: getattr(self, name) for name in _RUN_SETTINGS}}
        if self.encoding is not None:
            options["encoding"] = self.encoding
        options.update(self.fields)
        options.update({_WHATSAPP_WIRE_TO_OPTION[k]: v for k, v in self.whatsapp_columns.items()})
        changed = dict(changes)
        if "sender" in changed:
            changed["from"] = changed.pop("sender")
        return message(self.channel, **{**options, **_wire_spelling(self.channel, changed)})

    # ------------------------------------------------------------------ applied to a contact table

    def recipient_column(self, contacts: Any) -> str:
        """The column of ``contacts`` this message sends to (``to``, else ``phone``/``email`` or an alias)."""
        return recipient_column(as_frame(contacts), self.info.recipient, self.to, channel=self.channel)

    @keyword_checked
    def render(self, contacts: Any, *, field: str | None = None) -> pd.Series:
        """The text each recipient would read, on the contacts' index (``field``: mailing's ``"body"``).

            >>> import pandas as pd
            >>> sms("Hi {name|upper}", sender="Shop").render(pd.DataFrame({"name": ["ana"]})).tolist()
            ['Hi ANA']
        """
        if is_dask_frame(contacts):  # lazily, partition by partition (sendframe.scale)
            lazy = on_dask.render(self, contacts, field=field)
            return lazy  # type: ignore[no-any-return]  # a lazy Dask Series
        frame = as_frame(contacts)
        name = request_field_names(self.channel).get(field, field) if field else _TEXT_FIELD.get(self.channel)
        template = self.fields.get(name) if name else None
        if not isinstance(template, str):
            raise InputError(f"A {self.channel} message has no text {field or ''} to render"
                             f"{': it plays its audioUrl' if self.channel == 'voiceAudio' else ''}"
                             f"{': it sends an approved template' if self.channel == 'whatsapp' else ''}.")
        return preview.render(frame, template, channel=self.channel, otp_config=self.fields.get("otpConfig"),
                              link_base=self.link_base, trans=int(self.fields.get("trans", 0)),
                              escape_html=name in self.info.html_fields)

    @keyword_checked
    def preview(self, contacts: Any, *, suppression: Any = None,
                keep: str | Iterable[str] | None = None) -> pd.DataFrame:
        """Per row: ``recipient``, ``text`` and what a send would do with it (``action``, ``reason``).

            >>> import pandas as pd
            >>> sms("Hi {name}", sender="Shop").preview(pd.DataFrame({"phone": ["34600123456"], "name": ["Jo"]}))
                 recipient   text action reason
            0  34600123456  Hi Jo   send    NaN
        """
        if is_dask_frame(contacts):  # lazily; repeats across partitions (sendframe.scale)
            lazy = on_dask.preview(self, contacts, suppression=suppression, keep=keep)
            return lazy  # type: ignore[no-any-return]  # a lazy Dask frame
        frame = as_frame(contacts)
        column = self.recipient_column(frame)
        measured = self._measured(frame)
        plan = self._plan(frame, self._problems(frame, suppression, measured), keep=keep)
        text = self._text(frame, measured)
        return pd.concat([frame[column].astype("str").rename("recipient"), text.rename("text"), plan], axis=1)

    @keyword_checked
    def preflight(self, contacts: Any, *, suppression: Any = None) -> pd.DataFrame:
        """Every problem of sending this message to ``contacts``, one row each (see :func:`sendframe.preflight`).

            >>> import pandas as pd
            >>> problems = sms("Hi {First Name}", sender="Shop").preflight(pd.DataFrame({"phone": ["34600123456"]}))
            >>> problems["rule"].tolist()
            ['malformed_placeholder']
        """
        if is_dask_frame(contacts):  # lazily; repeats across partitions (sendframe.scale)
            lazy = on_dask.preflight(self, contacts, suppression=suppression)
            return lazy  # type: ignore[no-any-return]  # a lazy Dask frame
        return self._problems(as_frame(contacts), suppression)

    def _problems(self, frame: pd.DataFrame, suppression: Any, measured: pd.DataFrame | None = None) -> pd.DataFrame:
        """:meth:`preflight` of a pandas frame; ``measured`` (:meth:`_measured`) spares measuring the text again."""
        whatsapp = {_WHATSAPP_WIRE_TO_OPTION[k]: v for k, v in self.whatsapp_columns.items()}
        return checking.preflight(
            frame, self.channel, self.template, sender=self.fields.get("from"), parts=self.parts,
            encoding=self._checked_encoding, trans=int(self.fields.get("trans", 0)),
            suppression=self.suppression if suppression is None else suppression,
            whatsapp_template=self.fields.get("templateId") if self.channel == "whatsapp" else None,
            to_column=self.recipient_column(frame), default_region=self.default_region,
            otp_config=self.fields.get("otpConfig"), link_base=self.link_base, measured=measured, **whatsapp)

    def _measured(self, frame: pd.DataFrame) -> pd.DataFrame | None:
        """The text engine's one pass over an SMS's rows (text, encoding, parts, unencodable characters), which
        preflight, estimate and a send's result all read; ``None`` when they measure their own way (other
        channels, ``trans``) or the template is broken (preflight then says how)."""
        template = self.fields.get("message")
        if not self.info.is_sms or int(self.fields.get("trans", 0)) != 0 or not isinstance(template, str):
            return None
        specials, shorten = preview.placeholders(self.link_base, self.fields.get("otpConfig"))
        try:
            return measure_frame(frame, template, specials=specials, shorten=shorten,
                                 encoding=None if self.encoding == "auto" else self._checked_encoding,
                                 unencodable=True)
        except SendframeError:
            return None

    def _text(self, frame: pd.DataFrame, measured: pd.DataFrame | None) -> pd.Series:
        """What each row's recipient reads (as :meth:`render`), from ``measured`` when there is one."""
        if measured is not None:
            return pd.Series(measured["text"], index=frame.index).astype("str")
        if self.channel in _TEXT_FIELD:
            return self.render(frame)
        return pd.Series(pd.NA, index=frame.index, dtype="str")

    @keyword_checked
    def plan(self, contacts: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
             now: Any = None, ledger: Any = None) -> pd.DataFrame:
        """Per row: ``action`` (``send`` or a ``skipped_*`` outcome) and ``reason`` (:mod:`sendframe.campaign.policy`).

        Raises ``InputError`` when a problem stops the whole campaign (a malformed template, an
        unknown WhatsApp template): no row could be sent as meant. ``suppression`` replaces the
        message's list for this call; ``now`` (tz-aware) is when the frequency cap counts back from;
        ``ledger`` is the send's own ledger, left out of a history read from a folder of ledgers.
        """
        if is_dask_frame(contacts):  # lazily; repeats across partitions (sendframe.scale)
            lazy = on_dask.plan(self, contacts, suppression=suppression, keep=keep, now=now, ledger=ledger)
            return lazy  # type: ignore[no-any-return]  # a lazy Dask frame
        frame = as_frame(contacts)
        return self._plan(frame, self._problems(frame, suppression), keep=keep, now=now, ledger=ledger)

    def _plan(self, frame: pd.DataFrame, problems: pd.DataFrame, *, keep: str | Iterable[str] | None = None,
              now: Any = None, ledger: Any = None) -> pd.DataFrame:
        """:meth:`plan` from the frame's ``problems`` (:meth:`_problems`), so a call checks its rows once."""
        fatal = problems[problems["row"].isna() & (problems["severity"] == "error")]
        if len(fatal):
            lines = "\n".join(f"  - {c}: {m}" for c, m in zip(fatal["column"], fatal["message"], strict=True))
            raise InputError(f"This {self.channel} message cannot be sent as it is:\n{lines}")
        column = self.recipient_column(frame)
        values = frame[column]
        key = values.str.lower() if self.info.recipient == "email" else values
        capped, why = self._capped(values, now, ledger)
        return plan_rows(problems, frame.index, key.reset_index(drop=True), keep_reasons(keep), capped, why)

    def _capped(self, recipients: pd.Series, now: Any, ledger: Any) -> tuple[Any, str]:
        if self.frequency_cap is None:
            return None, ""
        n, days = self.frequency_cap
        history = self.history
        if not isinstance(history, pd.DataFrame):
            history = history_from_ledgers(history, exclude=ledger)
        moment = pd.Timestamp.now(tz="UTC") if now is None else now
        capped = frequency_capped(recipients, history, n, days, moment, default_region=self.default_region)
        return capped, f"already sent {n} message(s) in the last {days:g} days (frequency_cap=({n}, {days:g}))."

    @keyword_checked
    def schedule(self, contacts: Any, *, now: Any = None) -> pd.DataFrame:
        """When each row would be sent under ``local_time`` / ``quiet_hours``: its zone, local and UTC send time.

        See :func:`sendframe.local_send_times`; nothing is sent.

            >>> import pandas as pd
            >>> msg = sms("Hi", sender="Shop", local_time="10:00")
            >>> str(msg.schedule(pd.DataFrame({"phone": ["34600123456"]}), now="2026-11-24T12:00:00+00:00")
            ...     .loc[0, "send_at_utc"])
            '2026-11-25 09:00:00+00:00'
        """
        frame = as_frame(contacts)
        return local_send_times(frame, self.local_time, quiet_hours=self.quiet_hours, now=now,
                                recipient=self.recipient_column(frame) if self.info.recipient == "phone" else None,
                                default_region=self.default_region)

    @keyword_checked
    def ready(self, contacts: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None) -> pd.DataFrame:
        """The rows a send would send (a new frame; the rest are skipped by :meth:`plan`).

            >>> import pandas as pd
            >>> sms("Hi", sender="Shop").ready(pd.DataFrame({"phone": ["34600123456", "x"]})).index.tolist()
            [0]
        """
        if is_dask_frame(contacts):  # lazily; repeats across partitions (sendframe.scale)
            lazy = on_dask.ready(self, contacts, suppression=suppression, keep=keep)
            return lazy  # type: ignore[no-any-return]  # a lazy Dask frame
        frame = as_frame(contacts)
        plan = self.plan(frame, suppression=suppression, keep=keep)
        return frame.loc[(plan["action"] == "send").to_numpy()].copy()

    @keyword_checked
    def estimate(self, contacts: Any, *, prices: Any = None, suppression: Any = None,
                 keep: str | Iterable[str] | None = None, attachments: int = 0) -> pd.DataFrame:
        """Per row encoding, length, parts and cost of what a send would send, with ``action``; totals in ``.attrs``.

        Rows a send would skip cost nothing (``billable`` False), so the total is what the send spends.

            >>> import pandas as pd
            >>> est = sms("Olá {name}", sender="Shop", encoding="auto").estimate(
            ...     pd.DataFrame({"phone": ["34600123456", "34600123456"], "name": ["Ana", "Bo"]}))
            >>> est[["encoding", "parts", "action"]].to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
            [{'encoding': 'gsm-pt', 'parts': 1, 'action': 'send'},
             {'encoding': 'gsm-pt', 'parts': 1, 'action': 'skipped_duplicate'}]
        """
        if is_dask_frame(contacts):  # lazily; repeats across partitions (sendframe.scale)
            lazy = on_dask.estimate(self, contacts, prices=prices, suppression=suppression, keep=keep,
                                    attachments=attachments)
            return lazy  # type: ignore[no-any-return]  # a lazy Dask frame
        frame = as_frame(contacts)
        measured = self._measured(frame)
        result = self._estimated(frame, prices=prices, attachments=attachments, measured=measured)
        plan = self._plan(frame, self._problems(frame, suppression, measured), keep=keep)
        sent = (plan["action"] == "send").to_numpy()
        priced = result.assign(billable=result["billable"].to_numpy() & sent,
                               cost=result["cost"].where(sent, 0.0), action=plan["action"])
        priced.attrs = {"currency": result.attrs.get("currency", "EUR")}
        priced.attrs["totals"] = estimating.estimate_totals(priced)
        return priced

    def _estimated(self, frame: pd.DataFrame, *, prices: Any = None, attachments: int = 0,
                   measured: pd.DataFrame | None = None) -> pd.DataFrame:
        """:func:`sendframe.estimate` of every row with this message's settings (whether sent or not)."""
        return estimating.estimate(
            frame, self.template or "", channel=self.channel, encoding=self.encoding,
            parts=self.parts if self.info.is_sms else None, certified=bool(self.fields.get("certified", False)),
            attachments=attachments, prices=prices, trans=int(self.fields.get("trans", 0)),
            otp_config=self.fields.get("otpConfig"), link_base=self.link_base, to_column=self.recipient_column(frame),
            measured=measured)

    @keyword_checked
    def send(
        self,
        contacts: Any,
        *,
        client: Any = None,
        ledger: Any = None,
        suppression: Any = None,
        keep: str | Iterable[str] | None = None,
        batch_size: int = 500,
        concurrency: int = 4,
        requests_per_second: float | None = None,
        parts_per_second: float | None = None,
        dry_run: bool = False,
        resend_unknown: bool = False,
        stop_after_unknown: int | None = 3,
        progress: Any = True,
        max_cost: float | None = None,
        prices: Any = None,
        callbacks: Any = None,
        now: Any = None,
        out: str | os.PathLike[str] | None = None,
        cancel: threading.Event | None = None,
        **settings: Any,
    ) -> pd.DataFrame:
        """Send to every row the policy lets through; one result row per contact, on the contacts' index.

        Columns: ``recipient``, ``text`` (what the recipient reads; mailing: the subject), ``outcome``
        (accepted, rejected, unknown, not_sent, dry_run, or a ``skipped_*`` reason), ``reason``
        (why a row was skipped) and the service's answer (``accepted``, ``id``, ``parts``,
        ``scheduled_at``, ...). ``ledger`` (a file) makes the campaign resumable: see
        :func:`sendframe.send_campaign` for unknown outcomes, ``resend_unknown`` and
        ``stop_after_unknown``. Under ``encoding="auto"`` each row goes in the encoding
        :meth:`estimate` chose for it (rows are grouped into requests by encoding). A Dask frame (or
        ``out=<folder>``) is sent one partition at a time through the ledger, its result written to the
        Parquet dataset ``out`` as it goes (:func:`sendframe.scale.sending.send_partitions`). ``progress``:
        True/False for a tqdm bar, or a tqdm-compatible object (``reset(total=)``, ``update(n)``); ``cancel``:
        a ``threading.Event`` that, once set, starts no new batch (rows not attempted are ``not_sent``).

        ``max_cost``: a cap on the estimated spend (:meth:`estimate` with ``prices``) of the whole
        campaign, counting what the ledger already sent: no batch starts that would go above it; its
        rows are ``not_sent`` with the reason, and a run with a higher cap continues from the ledger
        (:mod:`sendframe.campaign.budget`).

        ``callbacks`` (a ``Receiver``, a log path or a callbacks frame): rows of batches whose outcome
        was unknown are marked accepted when a notification names them, before anything is sent
        (:mod:`sendframe.campaign.settling`; sms with a ``notification_url``).

        ``local_time``, ``quiet_hours``, ``frequency_cap`` and ``history`` (settings of the message)
        may also be given here for this run; ``now`` (tz-aware) is when the run counts from.

            >>> result = sms("Hi {name}", sender="Shop").send(contacts, ledger="spring.sqlite")  # doctest: +SKIP
        """
        check_options(settings, [s for s in _RUN_SETTINGS if s != "suppression"], "Message.send")
        if settings:
            return self.replace(**settings).send(
                contacts, client=client, ledger=ledger, suppression=suppression, keep=keep, batch_size=batch_size,
                concurrency=concurrency, requests_per_second=requests_per_second, parts_per_second=parts_per_second,
                dry_run=dry_run, resend_unknown=resend_unknown, stop_after_unknown=stop_after_unknown,
                progress=progress, max_cost=max_cost, prices=prices, callbacks=callbacks, now=now, out=out,
                cancel=cancel)
        if is_dask_frame(contacts) or out is not None:  # by partition, the result to Parquet (sendframe.scale)
            written = send_partitions(
                self, contacts, out=out, ledger=ledger, suppression=suppression, keep=keep, client=client,
                batch_size=batch_size, concurrency=concurrency, requests_per_second=requests_per_second,
                parts_per_second=parts_per_second, dry_run=dry_run, resend_unknown=resend_unknown,
                stop_after_unknown=stop_after_unknown, progress=progress, max_cost=max_cost, prices=prices,
                callbacks=callbacks, now=now, cancel=cancel)
            return written  # type: ignore[no-any-return]  # a lazy Dask frame (the dataset written to out)
        frame = as_frame(contacts)
        measured = self._measured(frame)
        plan = self._plan(frame, self._problems(frame, suppression, measured), keep=keep, now=now, ledger=ledger)
        summary = skipped_summary(plan, "sent" if not dry_run else "to be sent")
        if summary:
            warnings.warn(summary, RowsSkippedWarning, stacklevel=user_stacklevel())
        budget = Budget(max_cost, []) if max_cost is not None else None
        return self._send_planned(
            frame, plan, measured, client=client, ledger=ledger, keep=keep, batch_size=batch_size,
            concurrency=concurrency, requests_per_second=requests_per_second, parts_per_second=parts_per_second,
            dry_run=dry_run,
            resend_unknown=resend_unknown, stop_after_unknown=stop_after_unknown, progress=progress, budget=budget,
            prices=prices, settle=tags_from_callbacks(callbacks, self.notification_url), now=now,
            cancel=cancel)

    def send_planned(self, contacts: pd.DataFrame, plan: pd.DataFrame, *, budget: Budget | None = None,
                     identity: Mapping[str, Any] | None = None, keep: str | Iterable[str] | None = None,
                     prices: Any = None, settle: Mapping[str, str] | None = None, now: Any = None,
                     **send_options: Any) -> pd.DataFrame:
        """Send the rows ``plan`` (from :meth:`plan`) lets through; the building block of :meth:`send`.

        For callers that plan several messages as one campaign (:class:`sendframe.Variants`): a
        shared ``budget`` and the ledger ``identity`` of the whole campaign. ``send_options`` are
        those of :meth:`send` that say how to send (client, ledger, batch_size, ...).
        """
        return self._send_planned(contacts, plan, None, budget=budget, identity=identity, keep=keep, prices=prices,
                                  settle=settle, now=now, **send_options)

    def _send_planned(self, frame: pd.DataFrame, plan: pd.DataFrame, measured: pd.DataFrame | None, *,
                      budget: Budget | None = None, identity: Mapping[str, Any] | None = None,
                      keep: str | Iterable[str] | None = None, prices: Any = None,
                      settle: Mapping[str, str] | None = None, now: Any = None, **send_options: Any) -> pd.DataFrame:
        """:meth:`send_planned`, reading ``measured`` (:meth:`_measured` of ``frame``, or None) for the texts."""
        check_options(send_options, [o for o in SEND_OPTIONS if o not in ("max_cost", "callbacks")],
                      "Message.send_planned")
        column = self.recipient_column(frame)
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
        if (self.encoding == "auto" and self.info.is_sms or budget is not None) and len(to_send):
            # every row sent is priced (the plan has had its say): the rows' own estimate, measured once
            priced = self._estimated(to_send, prices=prices, measured=measured_sent)
        if self.encoding == "auto" and self.info.is_sms and priced is not None:
            row_fields["encoding"] = priced["encoding"].fillna("gsm").tolist()
        if budget is not None:
            budget.start(priced["cost"].tolist() if priced is not None else [])
        if (self.local_time is not None or self.quiet_hours is not None) and len(to_send):
            moment = pd.Timestamp.now(tz="UTC") if now is None else pd.Timestamp(now)
            when = self.schedule(to_send, now=moment)["send_at_utc"]
            row_fields["scheduleDate"] = [format_wire_datetime(t.to_pydatetime()) if t > moment else None
                                          for t in when]
        fields = dict(self.fields)
        if self.encoding not in (None, "auto"):
            fields["encoding"] = self.encoding
        sent = send_rows(
            to_send, self.channel, notification_url=self.notification_url, to_column=column, row_fields=row_fields,
            whatsapp_columns=self.whatsapp_columns, fields=fields, budget=budget, identity=identity, settle=settle,
            **send_options)
        if budget is not None and budget.left_out:
            currency = priced.attrs.get("currency", "") if priced is not None else ""
            sent.loc[sent.index[budget.left_out], "reason"] = budget.reason(currency)
            warnings.warn(f"{len(budget.left_out)} row(s) not sent: {budget.reason(currency)}", RowsSkippedWarning,
                          stacklevel=user_stacklevel())
        return self._result(frame, column, plan, sent, self._text(frame, measured))

    def _result(self, frame: pd.DataFrame, column: str, plan: pd.DataFrame, sent: pd.DataFrame,
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

    @property
    def _checked_encoding(self) -> str:
        """The encoding preflight checks: each row's own under ``"auto"``, gsm when none is asked (the default)."""
        return self.encoding or "gsm"


_WHATSAPP_WIRE_TO_OPTION = {"headerFields": "header_fields", "bodyFields": "body_fields",
                            "callToActionFields": "cta_fields", "defaultAnswer": "default_answer"}


def _without_query(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme:
        return url  # a column name
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}" + (
        "?…" if parts.query else "")


def _wire_spelling(channel_name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    names = request_field_names(channel_name)
    return {names.get(k, k): v for k, v in options.items()}


def message(channel_name: str, **options: Any) -> Message:
    """A :class:`Message` for any channel: the spec's request fields (snake_case or camelCase) and
    the settings ``encoding`` (incl. ``"auto"``), ``to``, ``notification_url``, ``link_base``,
    ``default_region``, ``campaign`` (the ``campaignName``) and, for WhatsApp, ``header_fields``,
    ``body_fields``, ``cta_fields`` (the columns filling each array).

    An unknown option raises :class:`sendframe.errors.UnknownOptionError` naming the closest known
    one; the fields are validated as the service would (``RequestValidationError`` naming the field).

        >>> message("email", subject="Hi {name}", body="<p>Hi</p>", from_email="a@b.co", reply_to="a@b.co").channel
        'mailing'
    """
    info = channel(channel_name)
    names = request_field_names(info.name)
    whatsapp_options = {option: wire for wire, option in _WHATSAPP_WIRE_TO_OPTION.items()} | {
        "call_to_action_fields": "callToActionFields"}
    known = [*names, *_MESSAGE_OPTIONS, "encoding"]
    if info.name == "whatsapp":
        known += list(whatsapp_options)
    check_options(options, known, "sendframe.message",
                  hint=f"A {info.name} message takes: {', '.join(sorted({*_public_names(names), *_MESSAGE_OPTIONS}))}.")
    settings = {k: options.pop(k) for k in _MESSAGE_OPTIONS if k in options}
    whatsapp_columns = {whatsapp_options[k]: _column_names(options.pop(k), k)
                        for k in list(options) if k in whatsapp_options and options[k] is not None}
    whatsapp_columns = {k: v for k, v in whatsapp_columns.items() if v}  # no column is the same as none given
    encoding = options.pop("encoding", None)
    if encoding is not None and encoding != "auto" and encoding not in ENCODINGS:
        raise InputError(f"Unknown encoding {encoding!r}: use one of {', '.join(ENCODINGS)} or 'auto' "
                         "(the cheapest that carries each row's text).")
    if encoding is not None and not info.is_sms:
        raise InputError(f"encoding applies to sms and landingsms, not {info.name}.")
    fields: dict[str, Any] = {}
    for name, value in options.items():
        if value is not None:
            fields[names[name]] = value
    if fields.get("parts") == 1:  # the service's default: the same message whether it is said or not
        del fields["parts"]
    campaign = settings.pop("campaign", None)
    if campaign is not None:
        fields["campaignName"] = campaign
    notification_url = settings.get("notification_url") or fields.pop("notificationUrl", None)
    for name in ("scheduleDate", "expirationDate"):
        value = fields.get(name)
        if isinstance(value, (datetime, pd.Timestamp)) and value.tzinfo is None:
            raise InputError(f"{snake_case(name)}={value!r} has no time zone, so it could mean any of 24 hours: give "
                             "a zone, e.g. datetime(..., tzinfo=ZoneInfo('Europe/Madrid')) or pd.Timestamp(..., "
                             "tz='UTC').")
    cap = settings.get("frequency_cap")
    if cap is not None:
        if (not isinstance(cap, (tuple, list)) or len(cap) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in cap)):
            raise InputError("frequency_cap is (messages, days), e.g. (2, 7): at most 2 messages in 7 days; "
                             f"got {cap!r}.")
        if settings.get("history") is None:
            raise InputError("frequency_cap needs history=: a folder of earlier campaigns' ledgers, their paths, or a "
                             "frame with recipient and sent_at columns.")
        settings["frequency_cap"] = (int(cap[0]), float(cap[1]))
    if "scheduleDate" in fields and (settings.get("local_time") or settings.get("quiet_hours")):
        raise InputError("schedule_date and local_time/quiet_hours both say when to send: give one.")
    if notification_url is not None and not info.has_notifications:
        raise InputError(f"notification_url applies to {' and '.join(c for c in ('sms', 'landingsms'))}, "
                         f"not {info.name}.")
    _validate(info, {**fields, **({"encoding": encoding} if encoding not in (None, "auto") else {})}, whatsapp_columns)
    return Message(info.name, MappingProxyType(fields), encoding, settings.get("to"), notification_url,
                   settings.get("link_base"), settings.get("default_region", "ES"),
                   MappingProxyType(whatsapp_columns), settings.get("suppression"), settings.get("frequency_cap"),
                   settings.get("history"), settings.get("local_time"),
                   tuple(settings["quiet_hours"]) if settings.get("quiet_hours") else None)


def _public_names(names: Mapping[str, str]) -> set[str]:
    return {name for name in names if "_" in name or name == name.lower()} - {"from_"}


def _column_names(value: Any, option: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(c.strip() for c in value.split(",") if c.strip())
    if isinstance(value, Iterable):
        return tuple(str(c) for c in value)
    raise InputError(f"{option} names the columns filling the template's variables in order, not {value!r}.")


def _validate(info: ChannelInfo, fields: Mapping[str, Any], whatsapp_columns: Mapping[str, tuple[str, ...]]) -> None:
    """Check the fields with the service's model, as a request to one placeholder recipient."""
    recipient = _PLACEHOLDER_RECIPIENT[info.recipient]
    if info.name == "whatsapp":
        item: dict[str, Any] = {"to": recipient}
        item.update({wire: ["x"] * len(columns) for wire, columns in whatsapp_columns.items() if columns})
        body = {**fields, "messages": [item]}
    else:
        body = {**fields, "to": [recipient]}
    parse_request(info.name, wire_fields(body))


# ---------------------------------------------------------------------- one constructor per channel


def sms(message_text: str, sender: str, **options: Any) -> Message:
    """An SMS: ``sms("Hi {name|capitalize}", sender="Shop", parts=2, encoding="auto")``.

    Options: the SMS request fields (``parts``, ``encoding``, ``trans``, ``otp_config``,
    ``schedule_date``, ``certified``, ...) and the settings of :func:`message`.

        >>> sms("Hi {name}", sender="Shop", parts=2).parts
        2
    """
    return message("sms", message=message_text, sender=sender, **options)


def landing_sms(message_text: str, sender: str, *, template_body: str | None = None, **options: Any) -> Message:
    """An SMS with a landing page (``{LAND_URL}``):
    ``landing_sms("See {LAND_URL}", "Shop", template_body="<p>Hi</p>")``.

        >>> landing_sms("See {LAND_URL}", "Shop", template_body="<p>Hi {name}</p>").channel
        'landingsms'
    """
    if template_body is None and options.get("template_id") is None and options.get("templateId") is None:
        page_text = re.sub(r"\s*\{\s*LAND_URL[^}]*\}", "", message_text).strip()
        template_body = f"<p>{page_text}</p>"  # the default page shows the message, without the link to itself
    return message("landingsms", message=message_text, sender=sender, template_body=template_body, **options)


def mailing(subject: str, body: str | None = None, *, from_email: str, reply_to: str | None = None,
            **options: Any) -> Message:
    """An email: ``mailing("Hi {name}", "<p>...</p>", from_email="news@shop.example")``
    (reply_to defaults to from_email).

        >>> mailing("Hi", "<p>Hi</p>", from_email="a@b.co").fields["replyTo"]
        'a@b.co'
    """
    return message("mailing", subject=subject, body=body, from_email=from_email,
                   reply_to=reply_to or from_email, **options)


def voice(message_text: str, *, language: str, gender: str, **options: Any) -> Message:
    """A text-to-speech call: ``voice("Hello {name}", language="en_GB", gender="F")``.

        >>> voice("Hello", language="en_GB", gender="F").channel
        'voice'
    """
    return message("voice", message=message_text, language=language, gender=gender, **options)


def voice_audio(audio_url: str, **options: Any) -> Message:
    """A call playing an audio file: ``voice_audio("https://example.org/hi.mp3")``.

        >>> voice_audio("https://example.org/hi.mp3").channel
        'voiceAudio'
    """
    return message("voiceAudio", audio_url=audio_url, **options)


def whatsapp(template_id: int, sender: str, **options: Any) -> Message:
    """A WhatsApp template: ``whatsapp(1002, "34911111111", body_fields=["name"])``.

        >>> whatsapp(1002, "34911111111", body_fields=["name"]).whatsapp_columns["bodyFields"]
        ('name',)
    """
    return message("whatsapp", template_id=template_id, sender=sender, **options)
