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
once in a warning, and kept in the result with their own outcome. The options are checked by
:mod:`sendframe.campaign.message_options`. Every method is a view of one prepared frame
(:meth:`Message.prepare`, :mod:`sendframe.campaign.prepared`): each row checked, rendered, measured,
planned and priced once; ``send`` sends it (:func:`sendframe.campaign.send.send_prepared`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from sendframe.campaign import preview
from sendframe.campaign.columns import recipient_column
from sendframe.campaign.message_options import RUN_SETTINGS, message_settings, without_query
from sendframe.campaign.prepared import Prepared, prepare, released
from sendframe.campaign.send import ANSWER_COLUMNS, SendOptions, send_prepared, send_signature
from sendframe.campaign.tables import as_frame
from sendframe.channels import ChannelInfo, channel
from sendframe.engines import dispatched
from sendframe.errors import InputError
from sendframe.options import keyword_checked, request_field_names
from sendframe.text.templates import parse

__all__ = ["CONSTRUCTORS", "MESSAGE_OPTIONS", "RESULT_COLUMNS", "Message", "landing_sms", "mailing", "message", "sms",
           "voice", "voice_audio", "whatsapp"]

# the columns of a send result, in order: who, what they read, the service's answer, the outcome and why
RESULT_COLUMNS: tuple[str, ...] = ("recipient", "text", *ANSWER_COLUMNS, "reason")


def _setting(default: Any, help_text: str) -> Any:
    return dataclasses.field(default=default, metadata={"help": help_text})


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
    # the settings below are options of every front door: their help is the CLI's and the reference's too
    to: str | None = _setting(None, "the recipient column (default: phone or email, or a usual name such as Mobile, "
                                    "Móvil, E-mail)")
    notification_url: str | None = _setting(None, "delivery notification address (escape codes such as %i, %s), or "
                                                   "a column holding one per row")
    link_base: str | None = _setting(None, "base address that previews show in {UNSUB_URL}, {LAND_URL} and "
                                           "shortened links")
    default_region: str = _setting("ES", "country assumed for national numbers (ISO code)")
    whatsapp_columns: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """WhatsApp: wire array name (``bodyFields``, ...) -> the columns filling it, in order."""
    suppression: Any = _setting(None, "recipients never sent to (a CSV of phones or emails, a frame or a list): "
                                      "those rows are skipped")
    frequency_cap: tuple[int, float] | None = _setting(None, "(N, DAYS): skip recipients already sent N messages in "
                                                             "the last DAYS days (per history)")
    history: Any = _setting(None, "earlier campaigns' ledgers (a folder, ledger paths, or a frame of recipient and "
                                  "sent_at), for frequency_cap")
    local_time: str | None = _setting(None, "send at this time (HH:MM) on each recipient's clock (zone from a "
                                            "timezone column, else the number)")
    quiet_hours: tuple[str, str] | None = _setting(None, "(FROM, TO): deliver only between these local times")

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

    @property
    def variables(self) -> tuple[str, ...]:
        """The contact columns the message reads: its templates' ``{variables}`` in order, then WhatsApp's fields.

            >>> sms("Hi {name|upper}, your code is {OTP_CODE}. {UNSUB_URL} {nickname}", sender="Shop").variables
            ('name', 'nickname')
        """
        columns = [column for columns in self.whatsapp_columns.values() for column in columns]
        return tuple(dict.fromkeys([*parse(self.template or "").variables, *columns]))

    def __repr__(self) -> str:
        extras = {"encoding": self.encoding, "to": self.to, "link_base": self.link_base,
                  "notification_url": without_query(self.notification_url) if self.notification_url else None}
        settings = [f"{k}={v!r}" for k, v in {**self.fields, **extras}.items() if v is not None]
        settings += [f"{k}={list(v)!r}" for k, v in self.whatsapp_columns.items()]
        return f"Message({self.channel!r}, {', '.join(settings)})"

    def replace(self, **changes: Any) -> Message:
        """A copy with some settings changed (any option the channel's constructor takes).

            >>> sms("Hi", sender="Shop").replace(message="Hello", parts=2).fields["parts"]
            2
        """
        options = {name: getattr(self, name) for name in ("encoding", *MESSAGE_OPTIONS)}
        options.update({self.info.column_field_option(k): v for k, v in self.whatsapp_columns.items()})
        names = request_field_names(self.channel)  # a changed request field under its wire name, as the fields are
        return message(self.channel, **{**options, **self.fields, **{names.get(k, k): v for k, v in changes.items()}})

    # ------------------------------------------------------------------ applied to a contact table

    def recipient_column(self, contacts: Any) -> str:
        """The column of ``contacts`` this message sends to (``to``, else ``phone``/``email`` or an alias)."""
        return recipient_column(as_frame(contacts), self.info.recipient, self.to, channel=self.channel)

    @keyword_checked
    @dispatched("contacts")
    def render(self, contacts: Any, *, field: str | None = None) -> pd.Series:
        """The text each recipient would read, on the contacts' index (``field``: mailing's ``"body"``).

            >>> import pandas as pd
            >>> sms("Hi {name|upper}", sender="Shop").render(pd.DataFrame({"name": ["ana"]})).tolist()
            ['Hi ANA']
        """
        frame = as_frame(contacts)
        name = request_field_names(self.channel).get(field, field) if field else self.info.result_text_field
        template = self.fields.get(name) if name else None
        if not isinstance(template, str):
            instead = f": {self.info.sends_instead}" if self.info.sends_instead else ""
            raise InputError(f"A {self.channel} message has no text{f' {field}' if field else ''} to render{instead}.")
        return preview.render(frame, template, channel=self.channel, otp_config=self.fields.get("otpConfig"),
                              link_base=self.link_base, trans=int(self.fields.get("trans", 0)),
                              escape_html=name in self.info.html_fields)

    @keyword_checked
    @dispatched("contacts")
    def prepare(self, contacts: Any, *, suppression: Any = None, keep: str | Iterable[str] | None = None,
                now: Any = None, ledger: Any = None, prices: Any = None, attachments: int = 0) -> Prepared:
        """Everything this message does to each row of ``contacts``, worked out once (:class:`Prepared`).

        ``.problems`` is the preflight frame; ``.frame`` has per row the recipient (as typed and as
        compared), the text, encoding, parts, cost (0 for a skipped row), ``action``, ``reason`` and, under
        ``local_time``/``quiet_hours``, ``send_at_utc``. The other methods are views of it and take its options;
        the last one is reused for the same message, options and table content: an estimate then a send prepare
        once. ``suppression`` replaces the message's list for this call; ``now`` (tz-aware) is when the frequency
        cap counts back from; ``ledger`` is the send's own, left out of a history read from a folder of ledgers. A Dask
        frame's answer is lazy (``sendframe.scale.messages.PreparedPartitions``, through :mod:`sendframe.engines`).

            >>> import pandas as pd
            >>> prepared = sms("Hi {name}", sender="Shop").prepare(pd.DataFrame({"phone": ["34600123456", "x"],
            ...                                                                  "name": ["Jo", "Al"]}))
            >>> prepared.frame[["text", "parts", "action"]].to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
            [{'text': 'Hi Jo', 'parts': 1, 'action': 'send'},
             {'text': 'Hi Al', 'parts': 1, 'action': 'skipped_invalid'}]
        """
        return prepare(self, as_frame(contacts), suppression=suppression, keep=keep, now=now, ledger=ledger,
                       prices=prices, attachments=attachments)

    def preview(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """Per row: ``recipient``, ``text`` and what a send would do with it (``action``, ``reason``).

            >>> import pandas as pd
            >>> sms("Hi {name}", sender="Shop").preview(pd.DataFrame({"phone": ["34600123456"], "name": ["Jo"]}))
                 recipient   text action reason
            0  34600123456  Hi Jo   send    NaN
        """
        return self.prepare(contacts, **options).preview

    def preflight(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """Every problem of sending this message to ``contacts``, one row each (see
        :func:`~sendframe.campaign.preflight.preflight`).

            >>> import pandas as pd
            >>> problems = sms("Hi {First Name}", sender="Shop").preflight(pd.DataFrame({"phone": ["34600123456"]}))
            >>> problems["rule"].tolist()
            ['malformed_placeholder']
        """
        return self.prepare(contacts, **options).problems.copy()

    def plan(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """Per row: ``action`` (``send`` or a ``skipped_*`` outcome) and ``reason`` (:mod:`sendframe.campaign.policy`).

        Raises ``InputError`` when a problem stops the whole campaign (a malformed template, an
        unknown WhatsApp template): no row could be sent as meant.
        """
        return self.prepare(contacts, **options).plan.copy()

    def schedule(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """When each row would be sent under ``local_time`` / ``quiet_hours``: its zone, local and UTC send time.

        See :func:`~sendframe.campaign.schedule.local_send_times`; nothing is sent.

            >>> import pandas as pd
            >>> msg = sms("Hi", sender="Shop", local_time="10:00")
            >>> str(msg.schedule(pd.DataFrame({"phone": ["34600123456"]}), now="2026-11-24T12:00:00+00:00")
            ...     .loc[0, "send_at_utc"])
            '2026-11-25 09:00:00+00:00'
        """
        return self.prepare(contacts, **options).schedule.copy()

    def ready(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """The rows a send would send (a new frame; the rest are skipped by :meth:`plan`).

            >>> import pandas as pd
            >>> sms("Hi", sender="Shop").ready(pd.DataFrame({"phone": ["34600123456", "x"]})).index.tolist()
            [0]
        """
        return self.prepare(contacts, **options).ready

    def estimate(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """Per row encoding, length, parts and cost of what a send would send, with ``action``; totals in ``.attrs``.

        Rows a send would skip cost nothing (``billable`` False), so the total is what the send spends.

            >>> import pandas as pd
            >>> est = sms("Olá {name}", sender="Shop", encoding="auto").estimate(
            ...     pd.DataFrame({"phone": ["34600123456", "34600123456"], "name": ["Ana", "Bo"]}))
            >>> est[["encoding", "parts", "action"]].to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
            [{'encoding': 'gsm-pt', 'parts': 1, 'action': 'send'},
             {'encoding': 'gsm-pt', 'parts': 1, 'action': 'skipped_duplicate'}]
        """
        return self.prepare(contacts, **options).estimate

    @send_signature
    @dispatched("contacts", named_by=lambda arguments: "dask" if arguments["options"].get("out") is not None else None)
    def send(self, contacts: Any, **options: Any) -> pd.DataFrame:
        """Send to every row the policy lets through; one result row per contact, on the contacts' index.

        Columns: ``recipient``, ``text`` (what the recipient reads; mailing: the subject), ``outcome``
        (accepted, rejected, unknown, not_sent, dry_run, or a ``skipped_*`` reason), ``reason``
        (why a row was skipped) and the service's answer (``accepted``, ``id``, ``parts``,
        ``scheduled_at``, ...). ``ledger`` (a file) makes the campaign resumable: see
        :mod:`sendframe.campaign.send` for unknown outcomes, ``resend_unknown`` and
        ``stop_after_unknown``. Under ``encoding="auto"`` each row goes in the encoding
        :meth:`estimate` chose for it (rows are grouped into requests by encoding). A Dask frame (or
        ``out=<folder>``) is sent one partition at a time through the ledger, its result written to the
        Parquet dataset ``out`` as it goes (``sendframe.scale.sending``, through :mod:`sendframe.engines`).
        ``progress``: True/False for a tqdm bar, or a tqdm-compatible object (``reset(total=)``, ``update(n)``);
        ``cancel``: a ``threading.Event`` that, once set, starts no new batch (rows not attempted are ``not_sent``).

        ``max_cost``: a cap on the estimated spend (:meth:`estimate` with ``prices``) of the whole
        campaign, counting what the ledger already sent: no batch starts that would go above it; its
        rows are ``not_sent`` with the reason, and a run with a higher cap continues from the ledger
        (:class:`~sendframe.campaign.send.Budget`).

        ``callbacks`` (a ``Receiver``, a log path or a callbacks frame): rows of batches whose outcome
        was unknown are marked accepted when a notification names them, before anything is sent
        (:mod:`sendframe.campaign.ledger_keys`; sms with a ``notification_url``).

        ``local_time``, ``quiet_hours``, ``frequency_cap`` and ``history`` (settings of the message)
        may also be given here for this run; ``now`` (tz-aware) is when the run counts from.

            >>> result = sms("Hi {name}", sender="Shop").send(contacts, ledger="spring.sqlite")  # doctest: +SKIP
        """
        settings = {name: options.pop(name) for name in RUN_SETTINGS if name != "suppression" and name in options}
        if settings:
            return self.replace(**settings).send(contacts, **options)
        how = SendOptions.of(options, "Message.send", also=RUN_SETTINGS)
        prepared = self.prepare(contacts, suppression=how.suppression, keep=how.keep, now=how.now,
                                ledger=how.ledger, prices=how.prices)
        return send_prepared(prepared if how.dry_run else released(prepared), how)


# the settings of a Message that are not request fields: its own fields but the channel's request and its columns
MESSAGE_OPTIONS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Message)
                                         if f.name not in ("channel", "fields", "encoding", "whatsapp_columns"))


def _made(channel_name: str, options: dict[str, Any]) -> Message:
    return Message(**message_settings(channel_name, options, MESSAGE_OPTIONS))


# the views take prepare's options: help() and editors show them, as they show send's (send_signature)
for _view in (Message.preview, Message.preflight, Message.plan, Message.schedule, Message.ready, Message.estimate):
    _view.__signature__ = inspect.signature(Message.prepare).replace(  # type: ignore[attr-defined]
        return_annotation=inspect.signature(_view).return_annotation)


def message(channel_name: str, **options: Any) -> Message:
    """A :class:`Message` for any channel: the spec's request fields (snake_case or camelCase), the settings of
    :class:`Message` and those below (this list is the CLI's help too; other request fields: see the API spec).

    - ``message``: sms/landingsms: the message template: {variable}, {variable|filter}, {OTP_CODE}, {UNSUB_URL},
      {LAND_URL}; voice: the text to speak
    - ``sender``: sms/landingsms: the sender label (15 digits or 11 letters and digits); whatsapp: the registered
      sender number
    - ``subject``: the email subject, a template
    - ``body``: the email's HTML body, a template
    - ``from_email``: a validated sender address
    - ``reply_to``: a validated reply address (default: from_email)
    - ``language``: text-to-speech language (some have only a female voice: gender F)
    - ``gender``: voice gender
    - ``audio_url``: the address of the audio file to play
    - ``template_id``: whatsapp: the approved template's id; landingsms: a stored landing page instead of
      template_body
    - ``template_body``: the landing page's HTML (default: a page showing the message)
    - ``campaign_name``: campaign name (groups the statistics)
    - ``schedule_date``: when the service sends: a tz-aware time, or the spec's text
    - ``expiration_date``: when the service gives up sending: a tz-aware time, or the spec's text
    - ``tags``: labels of the send, for the statistics
    - ``encoding``: an encoding, or auto: the cheapest that carries each row's text, sent as estimated (default:
      the service's, gsm)
    - ``parts``: most SMS parts per message; rows needing more are skipped
    - ``trans``: 1: replace accented characters per the spec's table
    - ``certified``: certified sending (priced as such)
    - ``header_fields``: columns filling the template's header variables, in order
    - ``body_fields``: columns filling the template's body variables, in order
    - ``call_to_action_fields``: columns filling the template's button (call to action) variables, in order
    - ``default_answer``: columns filling the template's default answer, in order

    An unknown option raises :class:`sendframe.errors.UnknownOptionError` naming the closest known
    one; the fields are validated as the service would (``RequestValidationError`` naming the field).

        >>> message("email", subject="Hi {name}", body="<p>Hi</p>", from_email="a@b.co", reply_to="a@b.co").channel
        'mailing'
    """
    return _made(channel_name, options)


# ---------------------------------------------------------------------- one constructor per channel


def sms(message: str, sender: str, **options: Any) -> Message:
    """An SMS: ``sms("Hi {name|capitalize}", sender="Shop", parts=2, encoding="auto")``.

    Options: the SMS request fields (``parts``, ``encoding``, ``trans``, ``otp_config``,
    ``schedule_date``, ``certified``, ...) and the settings of :func:`message`.

        >>> sms("Hi {name}", sender="Shop", parts=2).parts
        2
    """
    return _made("sms", {"message": message, "sender": sender, **options})


def landing_sms(message: str, sender: str, *, template_body: str | None = None, **options: Any) -> Message:
    """An SMS with a landing page (``{LAND_URL}``):
    ``landing_sms("See {LAND_URL}", "Shop", template_body="<p>Hi</p>")``.

        >>> landing_sms("See {LAND_URL}", "Shop", template_body="<p>Hi {name}</p>").channel
        'landingsms'
    """
    return _made("landingsms", {"message": message, "sender": sender, "template_body": template_body, **options})


def mailing(subject: str, body: str | None = None, *, from_email: str, reply_to: str | None = None,
            **options: Any) -> Message:
    """An email: ``mailing("Hi {name}", "<p>...</p>", from_email="news@shop.example")``
    (reply_to defaults to from_email).

        >>> mailing("Hi", "<p>Hi</p>", from_email="a@b.co").fields["replyTo"]
        'a@b.co'
    """
    return message("mailing", subject=subject, body=body, from_email=from_email, reply_to=reply_to, **options)


def voice(message: str, *, language: str, gender: str, **options: Any) -> Message:
    """A text-to-speech call: ``voice("Hello {name}", language="en_GB", gender="F")``.

        >>> voice("Hello", language="en_GB", gender="F").channel
        'voice'
    """
    return _made("voice", {"message": message, "language": language, "gender": gender, **options})


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


CONSTRUCTORS: dict[str, Callable[..., Message]] = {
    "sms": sms, "landingsms": landing_sms, "mailing": mailing, "voice": voice, "voiceAudio": voice_audio,
    "whatsapp": whatsapp}
"""The constructor of each channel, by the spec's name: its parameters come first in the channel's options
(:func:`~sendframe.campaign.channel_options.channel_options`), positional where it takes them."""
