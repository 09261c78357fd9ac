"""Typed models of every request and response of the messaging API (camelCase on the wire).

Python attributes are snake_case; the wire names are the spec's (``campaignName``, ``otpConfig``,
``from``); either may be used to build a model. ``to_wire()`` gives the JSON body with only the
fields that were set. Requests are strict: an integer field takes a JSON integer (never ``"5"`` or
``5.0``), a boolean field takes ``true``/``false`` (never ``1``), a text field takes a string; an
explicit ``null`` for an optional field counts as absent; unknown fields are ignored.

    >>> request = SmsRequest(message="Hi {name}", to=["34600123456"], sender="Shop", campaign_name="Spring")
    >>> request.to_wire()
    {'to': ['34600123456'], 'campaignName': 'Spring', 'message': 'Hi {name}', 'from': 'Shop'}
    >>> parse_request("sms", {"message": "Hi", "to": ["34600123456"], "from": "Shop", "parts": 3}).parts
    3
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    Strict,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from sendframe.api.json_schema import (
    FieldsRule,
    RecipientSchema,
    SchemaRules,
    one_given,
    present,
    state_request_schema,
)
from sendframe.api.validation import (
    Base64Text,
    ClockTime,
    NonEmptyText,
    SenderLabel,
    SubValue,
    Text,
    TextOrTexts,
    WireDateTime,
    between,
    invalid_request,
    json_problems,
    one_of,
    parse_wire_datetime,
    plural,
    problems_from_pydantic,
    shown,
    sub_problems,
)
from sendframe.channels import CHANNELS, channel
from sendframe.errors import Problem, RequestValidationError, TemplateError  # noqa: F401  (re-exported for callers)
from sendframe.text.encodings import ENCODINGS
from sendframe.text.templates import parse

__all__ = [
    "CHANNELS", "ENCODINGS", "GENDERS", "LANGUAGES", "MAX_LOOKUP_IDS", "MAX_RECIPIENTS", "REQUEST_MODELS",
    "RESULT_ITEM_FIELDS", "Attachment", "AvailableTime", "ErrorObject", "ErrorResponse", "LandingSmsRequest",
    "LookupResponse", "MailingRequest", "OtpCheckRequest", "OtpCheckResponse", "OtpCheckResult", "OtpConfig",
    "RecordLinks", "ResultItem", "SendResponse", "SmsEvent", "SmsRecord", "SmsRequest", "VoiceAudioRequest",
    "VoiceRequest", "WhatsappMessage", "WhatsappRequest", "format_timestamp", "landing_page_problems", "parse_body",
    "parse_request", "result_item", "result_item_fields",
]

MAX_RECIPIENTS = 1000
MAX_LOOKUP_IDS = 100
LANGUAGES = ("en_GB", "en_US", "es_ES", "es_US", "pt_PT", "pt_BR", "cmn_CN", "arb", "de_DE", "fr_FR", "it_IT", "hi_IN")
FEMALE_ONLY_LANGUAGES = frozenset({"cmn_CN", "arb", "hi_IN"})
GENDERS = ("F", "M")

Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]
Texts = Annotated[list[Text], Strict()]


Phone = Annotated[Text, RecipientSchema("phone")]
Email = Annotated[Text, RecipientSchema("email")]
PhoneRecipients = Annotated[list[Phone], Field(min_length=1, max_length=MAX_RECIPIENTS)]
EmailRecipients = Annotated[list[Email], Field(min_length=1, max_length=MAX_RECIPIENTS)]


# ``parts``: 1 (the service's default) up to the channel's maximum
SmsParts = Annotated[int, Strict(), between(1, channel("sms").max_parts)]
LandingSmsParts = Annotated[int, Strict(), between(1, channel("landingsms").max_parts)]


# ---------------------------------------------------------------- rules across fields, in JSON schema

TAGS_NEED_CAMPAIGN_NAME = FieldsRule(
    {"anyOf": [{"properties": {"tags": {"type": "null"}}},
               present("campaignName", {"type": "string", "minLength": 1})]},
    lambda value: Problem("tags", "requires_campaign_name", "tags requires campaignName to be given")
    if value("tags") is not None and not value("campaign_name") else None)
FEMALE_ONLY_VOICES = FieldsRule(
    {"anyOf": [{"properties": {"language": {"not": {"enum": sorted(FEMALE_ONLY_LANGUAGES)}}}},
               present("gender", {"const": "F"})]},
    lambda value: Problem("gender", "female_only_language",
                          f"gender must be F for language {value('language')} (cmn_CN, arb and hi_IN have only a "
                          f"female voice; got {shown(value('gender'))})")
    if value("language") in FEMALE_ONLY_LANGUAGES and value("gender") != "F" else None)


def format_timestamp(moment: datetime) -> str:
    """Write a tz-aware datetime as a response timestamp: UTC, whole seconds, ISO 8601.

        >>> from datetime import timedelta, timezone
        >>> format_timestamp(datetime(2026, 11, 21, 10, 30, 5, 999, tzinfo=timezone(timedelta(hours=1))))
        '2026-11-21T09:30:05+00:00'
    """
    return moment.astimezone(UTC).isoformat(timespec="seconds")


Timestamp = Annotated[AwareDatetime, PlainSerializer(format_timestamp, return_type=str, when_used="json")]


class WireModel(BaseModel):
    """Base of every model: snake_case in Python, camelCase on the wire, ``to_wire()``."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore")

    def to_wire(self) -> dict[str, Any]:
        """The JSON-able body by wire name, with only the fields that were set.

            >>> OtpConfig(length=6).to_wire()
            {'length': 6}
        """
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class RequestModel(WireModel):
    """A request (or part of one): strict types, ``null`` means absent, plain-English failures.

    ``schema_rules`` states the model's rules across fields in JSON schema (``allOf``), next to the
    ``problems()`` that checks them.
    """

    model_config = ConfigDict(json_schema_extra=state_request_schema)
    schema_rules: ClassVar[SchemaRules] = ()

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except PydanticValidationError as exc:
            raise invalid_request(problems_from_pydantic(exc), type(self).__name__) from None

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        if isinstance(data, dict) and None in data.values():
            return {key: value for key, value in data.items() if value is not None}
        return data

    @model_validator(mode="before")
    @classmethod
    def _body_rule(cls, data: Any) -> Any:
        # the rule every body follows (validation.json_problems): the sandbox decodes bodies with it, and a
        # request built in Python meets it too, so text that is not Unicode never reaches the wire
        if isinstance(data, dict):
            problems = json_problems(data)
            if problems:
                raise invalid_request(problems)
        return data


# ---------------------------------------------------------------- parts of requests


class OtpConfig(RequestModel):
    """One-time-password options (SMS and email)."""

    alpha: Bool = False
    length: Annotated[int, Strict(), between(3, 10)] = 4
    max_attempts: Annotated[int, Strict(), between(1, 10)] = 3
    max_seconds_validity: Annotated[int, Strict(), between(30, 600)] = 60
    app_id: Text = ""
    reject_if_pending_code: Bool = False


class AvailableTime(RequestModel):
    """A window (UTC) in which SMS may be sent; ``day`` 1-7 (Monday-Sunday) or every day when absent."""

    day: Annotated[int, Strict(), between(1, 7)] | None = None
    from_: ClockTime = Field(alias="from")
    to: ClockTime


class Attachment(RequestModel):
    """An email attachment: file name, base64 content, MIME type."""

    name: NonEmptyText
    content: Base64Text
    content_type: NonEmptyText


class WhatsappMessage(RequestModel):
    """One WhatsApp message: recipient and the template's positional fields."""

    to: Phone
    header_fields: Texts | None = None
    body_fields: Texts | None = None
    call_to_action_fields: Texts | None = None
    default_answer: Texts | None = None


# ---------------------------------------------------------------- send requests


class SendRequest(RequestModel):
    """What the send requests share; subclasses add their fields and rules."""

    channel: ClassVar[str]

    def problems(self) -> list[Problem]:
        """Rules across fields (the field rules have passed); empty when the request is valid."""
        fields = type(self).model_fields
        field_value = self.__dict__.get
        problems = [problem for rule in self.schema_rules if (problem := rule.broken(field_value)) is not None]
        recipients = len(self.recipients)
        if "sub" in fields and self.sub is not None:  # type: ignore[attr-defined]
            problems += sub_problems(self.sub, recipients)  # type: ignore[attr-defined]
        schedule, expiry = getattr(self, "schedule_date", None), getattr(self, "expiration_date", None)
        if schedule and expiry and expiry < schedule:  # same 14-digit form: text order is time order
            problems.append(Problem("expirationDate", "expiration_before_schedule",
                                    f"expirationDate ({expiry}) must not be earlier than scheduleDate ({schedule})"))
        return problems

    @model_validator(mode="after")
    def _rules_across_fields(self) -> SendRequest:
        problems = self.problems()
        if problems:
            raise invalid_request(problems)
        return self

    @property
    def recipients(self) -> list[str]:
        """The recipients in request order (``to``, or each message's ``to`` for WhatsApp)."""
        return self.to  # type: ignore[attr-defined,no-any-return]

    @property
    def schedule_datetime(self) -> datetime | None:
        """``scheduleDate`` as a tz-aware UTC datetime, or ``None``."""
        value = getattr(self, "schedule_date", None)
        return parse_wire_datetime(value) if value else None

    @property
    def expiration_datetime(self) -> datetime | None:
        """``expirationDate`` as a tz-aware UTC datetime, or ``None``."""
        value = getattr(self, "expiration_date", None)
        return parse_wire_datetime(value) if value else None


class _Campaign(SendRequest):
    schema_rules: ClassVar[SchemaRules] = (TAGS_NEED_CAMPAIGN_NAME,)
    to: PhoneRecipients
    schedule_date: WireDateTime | None = None
    campaign_name: Text | None = None
    tags: Texts | None = None


class _StoredTemplate(SendRequest):
    """A request whose content is written in it or stored (``templateId``, ``templateV2Id``): one is required."""

    template_id: Int | None = None
    template_v2_id: Int | None = None

    @staticmethod
    def content_rule(written: str, content: str) -> FieldsRule:
        """The rule that ``written`` (the wire name of the written content) or a template id is given."""
        return one_given(written, "templateId", "templateV2Id", content=content)


class _SmsFields(_Campaign):
    message: NonEmptyText
    sender: SenderLabel = Field(alias="from")
    encoding: Annotated[str, Strict(), one_of(*ENCODINGS)] = "gsm"
    expiration_date: WireDateTime | None = None
    trans: Annotated[int, Strict(), one_of(0, 1)] = 0
    certified: Bool | None = None
    sub: list[dict[str, SubValue]] | None = None
    split_parts: Bool = False
    flash: Bool | None = None


class SmsRequest(_SmsFields):
    """POST /api/rest/sms."""

    channel: ClassVar[str] = "sms"
    parts: SmsParts = 1
    notification_url: TextOrTexts | None = None
    available_times: list[AvailableTime] | None = None
    otp_config: OtpConfig | None = None

    def problems(self) -> list[Problem]:
        problems = super().problems()
        urls = self.notification_url
        if isinstance(urls, list) and len(urls) != len(self.to):
            problems.append(Problem("notificationUrl", "one_per_recipient",
                                    "notificationUrl as an array must hold one address per recipient: "
                                    f"{plural(len(self.to), 'recipient')} "
                                    f"but {plural(len(urls), 'address', 'addresses')}"))
        return problems


class LandingSmsRequest(_SmsFields, _StoredTemplate):
    """POST /api/rest/landingsms: the SMS fields (no availableTimes, otpConfig) plus the landing page."""

    channel: ClassVar[str] = "landingsms"
    schema_rules: ClassVar[SchemaRules] = (
        TAGS_NEED_CAMPAIGN_NAME,
        _StoredTemplate.content_rule("templateBody", "the landing page content"))
    parts: LandingSmsParts = 1
    notification_url: Text | None = None
    template_body: NonEmptyText | None = None

    def problems(self) -> list[Problem]:
        problems = super().problems()
        if self.template_body is not None:
            problems.extend(landing_page_problems(self.template_body))
        return problems


def landing_page_problems(page: str) -> list[Problem]:
    """A landing page may hold ``sub`` variables, filters and ``{UNSUB_URL}``; not ``{LAND_URL}`` (the
    page's own address, made from the page) nor ``{OTP_CODE}`` (it belongs in the message).

    >>> [p.rule for p in landing_page_problems("<a href='{LAND_URL}'>share</a>")]
    ['landing_page_placeholders']
    """
    try:
        refused = sorted(parse(page).specials - {"UNSUB_URL"})
    except TemplateError:  # an unknown filter is reported where the page is rendered
        return []
    if not refused:
        return []
    names = ", ".join("{" + name + "}" for name in refused)
    return [Problem("templateBody", "landing_page_placeholders",
                    f"templateBody: a landing page may hold sub variables and {{UNSUB_URL}}, not {names}: "
                    "{LAND_URL} is the page's own address and {OTP_CODE} belongs in the message")]


class MailingRequest(_Campaign, _StoredTemplate):
    """POST /api/rest/mailing."""

    channel: ClassVar[str] = "mailing"
    schema_rules: ClassVar[SchemaRules] = (
        TAGS_NEED_CAMPAIGN_NAME, _StoredTemplate.content_rule("body", "the email content"))
    to: EmailRecipients
    cc: Texts | None = None
    bcc: Texts | None = None
    from_email: NonEmptyText
    from_name: Text | None = None
    reply_to: NonEmptyText
    subject: NonEmptyText
    body: NonEmptyText | None = None
    certified: Bool | None = None
    sub: list[dict[str, SubValue]] | None = None
    attachments: list[Attachment] | None = None
    track_opens: Bool = True
    track_clicks: Bool = True
    otp_config: OtpConfig | None = None


class _CallFields(_Campaign):
    callers: dict[str, Text] | None = None
    retries: Annotated[int, Strict(), between(0, 5)] | None = None
    expiration_date: WireDateTime | None = None
    amd: Bool = False


class VoiceRequest(_CallFields):
    """POST /api/rest/voice: a text-to-speech call."""

    channel: ClassVar[str] = "voice"
    schema_rules: ClassVar[SchemaRules] = (TAGS_NEED_CAMPAIGN_NAME, FEMALE_ONLY_VOICES)
    message: Annotated[str, Strict(), Field(min_length=1, max_length=500)]
    language: Annotated[str, Strict(), one_of(*LANGUAGES)]
    gender: Annotated[str, Strict(), one_of(*GENDERS)]
    sub: list[dict[str, SubValue]] | None = None


class VoiceAudioRequest(_CallFields):
    """POST /api/rest/voiceAudio: a call that plays an audio file."""

    channel: ClassVar[str] = "voiceAudio"
    audio_url: NonEmptyText


class WhatsappRequest(SendRequest):
    """POST /api/rest/whatsapp: one approved template, one object per message."""

    channel: ClassVar[str] = "whatsapp"
    template_id: Int
    sender: NonEmptyText = Field(alias="from")
    messages: Annotated[list[WhatsappMessage], Field(min_length=1, max_length=MAX_RECIPIENTS)]

    @property
    def recipients(self) -> list[str]:
        return [message.to for message in self.messages]


REQUEST_MODELS: dict[str, type[SendRequest]] = {
    "sms": SmsRequest, "mailing": MailingRequest, "voice": VoiceRequest,
    "voiceAudio": VoiceAudioRequest, "landingsms": LandingSmsRequest, "whatsapp": WhatsappRequest,
}


def parse_body(model: type[RequestModel], payload: object, what: str = "request") -> Any:
    """Validate a decoded JSON body against ``model``; raise :class:`RequestValidationError` listing every problem.

        >>> parse_body(OtpCheckRequest, {"to": "34600123456", "code": "1234"}).app_id
        ''
    """
    if not isinstance(payload, dict):
        problem = Problem("", "type", f"The request body must be a JSON object (got {shown(payload)})")
        raise invalid_request([problem], what)
    try:
        return model.model_validate(payload)
    except PydanticValidationError as exc:
        raise invalid_request(problems_from_pydantic(exc), what) from None


def parse_request(channel: str, payload: object) -> SendRequest:
    """Validate the body of a send request of ``channel`` (one of :data:`CHANNELS`).

    Raises :class:`RequestValidationError` whose ``.problems`` name each field path and rule;
    ``validation.error_code(problems)`` gives the code to answer (101 for too many recipients, else 100).

        >>> body = {"message": "Hola", "to": ["34600123456"], "language": "es_ES", "gender": "M"}
        >>> parse_request("voice", body).language
        'es_ES'
    """
    model = REQUEST_MODELS.get(channel)
    if model is None:
        raise ValueError(f"Unknown channel {channel!r}; expected one of {', '.join(CHANNELS)}")
    return parse_body(model, payload, f"{channel} request")  # type: ignore[no-any-return]


# ---------------------------------------------------------------- responses


class ErrorObject(WireModel):
    """The error object ``{code, description}`` (whole-request errors and rejected recipients)."""

    code: int
    description: str


class ErrorResponse(WireModel):
    """``{"error": {"code": ..., "description": ...}}``."""

    error: ErrorObject


class ResultItem(WireModel):
    """One recipient's outcome; ``model_fields_set`` records which wire fields were present."""

    accepted: bool
    to: str
    id: str | None = None
    parts: int | None = None
    scheduled_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    error: ErrorObject | None = None


RESULT_ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "sms": ("accepted", "to", "id", "parts", "scheduledAt", "expiresAt", "error"),
    "landingsms": ("accepted", "to", "id", "parts", "scheduledAt", "expiresAt", "error"),
    "mailing": ("accepted", "to", "id", "scheduledAt", "error"),
    "voice": ("accepted", "to", "id", "scheduledAt", "expiresAt", "error"),
    "voiceAudio": ("accepted", "to", "id", "scheduledAt", "expiresAt", "error"),
    "whatsapp": ("accepted", "to", "id", "error"),
}


def result_item_fields(channel: str) -> tuple[str, ...]:
    """The wire fields a result item of ``channel`` may carry (``id`` only when accepted, ``error`` only when not).

        >>> result_item_fields("whatsapp")
        ('accepted', 'to', 'id', 'error')
    """
    try:
        return RESULT_ITEM_FIELDS[channel]
    except KeyError:
        raise ValueError(f"Unknown channel {channel!r}; expected one of {', '.join(CHANNELS)}") from None


def result_item(channel: str, *, accepted: bool, to: str, id: str | None = None, parts: int | None = None,
                scheduled_at: datetime | None = None, expires_at: datetime | None = None,
                error: tuple[int, str] | None = None) -> dict[str, Any]:
    """The wire dict of one result item with exactly the fields the spec lists for ``channel``.

    Timestamps are written ``2026-11-21T09:30:00+00:00`` (``null`` when immediate / no expiry).

        >>> result_item("sms", accepted=True, to="34600123456", id="ab" * 10, parts=1)  # doctest: +NORMALIZE_WHITESPACE
        {'accepted': True, 'to': '34600123456', 'id': 'abababababababababab', 'parts': 1,
         'scheduledAt': None, 'expiresAt': None}
        >>> result_item("whatsapp", accepted=False, to="12", error=(102, "not a valid phone number"))
        {'accepted': False, 'to': '12', 'error': {'code': 102, 'description': 'not a valid phone number'}}
    """
    fields = result_item_fields(channel)
    item: dict[str, Any] = {"accepted": accepted, "to": to}
    if accepted:
        item["id"] = id
    if "parts" in fields:
        item["parts"] = parts
    if "scheduledAt" in fields:
        item["scheduledAt"] = format_timestamp(scheduled_at) if scheduled_at is not None else None
    if "expiresAt" in fields:
        item["expiresAt"] = format_timestamp(expires_at) if expires_at is not None else None
    if not accepted:
        code, description = error if error is not None else (102, "not a valid recipient")
        item["error"] = {"code": int(code), "description": description}
    return item


class SendResponse(WireModel):
    """The answer of every send endpoint (202 / 207)."""

    campaign_id: int
    sending_id: int
    result: list[ResultItem]


class SmsEvent(WireModel):
    """An event of a message record (``sent``, ``delivered``)."""

    type: str
    date: Timestamp
    is_mobile: bool
    browser: str
    os: str


class RecordLinks(WireModel):
    """``links`` of a message record; ``self`` is its full address."""

    self_: str = Field(alias="self")


class SmsRecord(WireModel):
    """An SMS message record, as the lookup endpoint returns it."""

    id: str
    sender: str = Field(alias="from")
    to: str
    message: str
    campaign_id: int
    sending_id: int
    is_delivered: bool
    is_clicked: bool
    events: list[SmsEvent]
    custom_fields: dict[str, str]
    links: RecordLinks


class LookupResponse(WireModel):
    """``{"data": [record, ...]}`` of GET /api/rest/sms/<ids>."""

    data: list[SmsRecord]


class OtpCheckRequest(RequestModel):
    """POST /api/rest/otp/check (docs/api-notes.md)."""

    to: NonEmptyText
    code: NonEmptyText
    app_id: Text = ""


class OtpCheckResult(WireModel):
    """Whether the code was valid, the status, and the attempts left."""

    valid: bool
    status: Literal["valid", "invalid", "expired", "blocked", "not_found"]
    attempts_left: int


class OtpCheckResponse(WireModel):
    """``{"data": {...}}`` of the OTP check."""

    data: OtpCheckResult

