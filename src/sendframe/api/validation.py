"""Field rules of the spec and the translation of validation failures into plain English.

The models in :mod:`sendframe.api.models` are built from the annotated types here; every failure
becomes a :class:`~sendframe.errors.Problem` whose ``path`` is the wire path
(``otpConfig.length``, ``messages[2].to``, ``availableTimes[0].from``), whose ``rule`` names the
rule broken, and whose ``message`` is a sentence that starts with the path:

    >>> from sendframe.api.models import parse_request
    >>> try:
    ...     parse_request("sms", {"message": "Hi", "to": ["34600123456"], "from": "Shop", "otpConfig": {"length": 12}})
    ... except RequestValidationError as exc:
    ...     print(exc.problems[0].message)
    otpConfig.length must be between 3 and 10 (got 12)
"""

from __future__ import annotations

import binascii
import json
import math
import numbers
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, PlainValidator, Strict
from pydantic import ValidationError as PydanticValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from sendframe.api.body import (
    MAX_JSON_DEPTH,
    MAX_JSON_NUMBER,
    decode_json,
    invalid_request,
    join_path,
    json_path_at,
    json_problems,
    number_size,
    printable,
    unicode_problem,
    wire_path,
)
from sendframe.errors import ErrorCode, Problem, RequestValidationError

__all__ = [
    "DATETIME_FORMAT",
    "MAX_JSON_DEPTH",
    "MAX_JSON_NUMBER",
    "Base64Text",
    "ClockTime",
    "NonEmptyText",
    "Rule",
    "SenderLabel",
    "SubValue",
    "TextOrTexts",
    "WireDateTime",
    "between",
    "decode_json",
    "describe_problems",
    "error_code",
    "format_wire_datetime",
    "invalid_request",
    "json_path_at",
    "json_problems",
    "one_of",
    "parse_wire_datetime",
    "plural",
    "printable",
    "problems_from_pydantic",
    "sender_label_problem",
    "sub_value_text",
    "unicode_problem",
]

DATETIME_FORMAT = "%Y%m%d%H%M%S"
_DIGITS14 = re.compile(r"\d{14}")
_CLOCK = re.compile(r"([01]\d|2[0-3]):[0-5]\d")
_SENDER_DIGITS = re.compile(r"\d{1,15}")
_SENDER_ALNUM = re.compile(r"[A-Za-z0-9]{1,11}")
_HAS_LETTER = re.compile(r"[A-Za-z]")

# rules that make the whole request answer code 101 instead of 100
TOO_MANY_RULES = frozenset({"max_recipients", "max_lookup_ids"})


def shown(value: object, limit: int = 40) -> str:
    """A value as it looks in JSON, shortened, for messages: ``"5"``, ``12``, ``true``, ``an array``.

    Safe for any value: a lone surrogate is shown as its escape, an integer too long to write as its size.

        >>> shown("Ana"), shown(10 ** 5000), shown("\\ud800")
        ('"Ana"', 'a number of 5001 digits', '"\\\\ud800"')
    """
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, int) and not isinstance(value, bool) and not -MAX_JSON_NUMBER <= value <= MAX_JSON_NUMBER:
        return number_size(value)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(rule: str, message: str) -> PydanticCustomError:
    # our own error type: the translation keeps the rule name and the message as they are
    return PydanticCustomError(rule, message)


# ---------------------------------------------------------------- field rules (annotated types)


@dataclass(frozen=True)
class Rule:
    """A field rule: its check (failing with our plain-English message) and the JSON schema that states it.

    Used in ``Annotated`` like pydantic's own constraints; pydantic runs ``check`` after the type is
    validated and writes ``schema`` into the model's JSON schema (``model_json_schema``), so the
    OpenAPI document says what the check accepts.

        >>> from pydantic import TypeAdapter
        >>> TypeAdapter(Annotated[int, Strict(), between(3, 10)]).json_schema()
        {'maximum': 10, 'minimum': 3, 'type': 'integer'}
    """

    check: Callable[[Any], Any]
    schema: tuple[tuple[str, Any], ...]

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), **dict(self.schema)}


def between(low: int, high: int) -> Rule:
    """An inclusive range rule for an integer field: ``Annotated[int, Strict(), between(3, 10)]``."""

    def check(value: int) -> int:
        if not low <= value <= high:
            raise _fail("range", f"must be between {low} and {high} (got {value})")
        return value

    return Rule(check, (("minimum", low), ("maximum", high)))


def one_of(*allowed: object) -> Rule:
    """An enumeration rule: ``Annotated[str, Strict(), one_of("gsm", "gsm-pt", "utf-16")]``."""
    allowed_set = frozenset(allowed)
    listing = ", ".join(str(value) for value in allowed)

    def check(value: Any) -> Any:
        if value not in allowed_set:
            raise _fail("enum", f"must be one of {listing} (got {shown(value)})")
        return value

    return Rule(check, (("enum", list(allowed)),))


def _check_text_or_texts(value: Any) -> str | list[str]:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise _fail("type", f"must be a string or an array of strings (entry {index} is {shown(item)})")
        return value
    raise _fail("type", f"must be a string or an array of strings (got {shown(value)})")


def sender_label_problem(value: str) -> str | None:
    """Why ``value`` is not a valid SMS sender label, or ``None`` when it is.

    A label is 1 to 15 digits, or 1 to 11 letters and digits (A-Z, a-z, 0-9) with at least one letter.

        >>> sender_label_problem("Shop"), sender_label_problem("34600123456")
        (None, None)
        >>> sender_label_problem("My Shop!")
        'must be 1 to 15 digits, or 1 to 11 letters and digits with at least one letter (got "My Shop!")'
    """
    if _SENDER_DIGITS.fullmatch(value) or (_SENDER_ALNUM.fullmatch(value) and _HAS_LETTER.search(value)):
        return None
    return f"must be 1 to 15 digits, or 1 to 11 letters and digits with at least one letter (got {shown(value)})"


def _check_sender(value: str) -> str:
    problem = sender_label_problem(value)
    if problem:
        raise _fail("sender_label", problem)
    return value


def parse_wire_datetime(text: str) -> datetime:
    """Read a ``YYYYmmddHHiiss`` request date-time (UTC) into a tz-aware datetime.

        >>> parse_wire_datetime("20261121093000")
        datetime.datetime(2026, 11, 21, 9, 30, tzinfo=datetime.timezone.utc)
    """
    if not _DIGITS14.fullmatch(text):
        raise ValueError(f"{shown(text)} is not a date-time written YYYYmmddHHiiss (14 digits)")
    return datetime.strptime(text, DATETIME_FORMAT).replace(tzinfo=UTC)


def format_wire_datetime(moment: datetime) -> str:
    """Write a tz-aware datetime as a ``YYYYmmddHHiiss`` request date-time in UTC.

        >>> from datetime import timedelta, timezone
        >>> format_wire_datetime(datetime(2026, 11, 21, 10, 30, tzinfo=timezone(timedelta(hours=1))))
        '20261121093000'
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("the date-time needs a time zone (use UTC), "
                         "e.g. datetime(2026, 11, 21, 9, 30, tzinfo=timezone.utc)")
    return moment.astimezone(UTC).strftime(DATETIME_FORMAT)


def _datetime_to_text(value: Any) -> Any:
    if isinstance(value, datetime):
        try:
            return format_wire_datetime(value)
        except ValueError as exc:
            raise _fail("datetime_timezone", f"must be a date-time with a time zone: {exc}") from None
    return value


def _check_wire_datetime(value: str) -> str:
    if not _DIGITS14.fullmatch(value):
        raise _fail("datetime_format", "must be a UTC date-time written YYYYmmddHHiiss "
                    f"(14 digits, e.g. 20261121093000; got {shown(value)})")
    try:
        datetime.strptime(value, DATETIME_FORMAT)
    except ValueError:
        raise _fail("datetime_calendar", f"is not a real calendar date-time (got {shown(value)})") from None
    return value


def _check_clock(value: str) -> str:
    if not _CLOCK.fullmatch(value):
        raise _fail("time_format", f"must be a time written HH:MM between 00:00 and 23:59 (got {shown(value)})")
    return value


def _check_base64(value: str) -> str:
    try:
        binascii.a2b_base64(value, strict_mode=True)
    except (binascii.Error, ValueError):
        raise _fail("base64", "must be the file content encoded as base64") from None
    return value


# the JSON-schema patterns state exactly what the checks above accept
Text = Annotated[str, Strict()]
NonEmptyText = Annotated[str, Strict(), Field(min_length=1)]
# "at least one letter" of the alphanumeric form adds nothing: 1 to 11 digits are valid as digits
SenderLabel = Annotated[str, Strict(), Rule(_check_sender, (("pattern", "^([0-9]{1,15}|[A-Za-z0-9]{1,11})$"),))]
_YEAR = "([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_MONTH_DAY = "((0[1-9]|1[0-2])(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])(29|30)|(0[13578]|1[02])31)"
_LEAP_DAY = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)0229"
WIRE_DATETIME_PATTERN = f"^({_YEAR}{_MONTH_DAY}|{_LEAP_DAY})([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]$"
WireDateTime = Annotated[str, BeforeValidator(_datetime_to_text), Strict(), Rule(_check_wire_datetime, (
    ("pattern", WIRE_DATETIME_PATTERN), ("description", "UTC date-time YYYYmmddHHiiss (a real calendar date-time)")))]
ClockTime = Annotated[str, Strict(), Rule(_check_clock, (("pattern", "^([01][0-9]|2[0-3]):[0-5][0-9]$"),
                                                         ("description", "HH:MM, UTC 24-hour")))]
Base64Text = Annotated[str, Strict(), Rule(_check_base64, (
    ("pattern", "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"), ("contentEncoding", "base64")))]
TextOrTexts = Annotated[str | list[str], PlainValidator(_check_text_or_texts, json_schema_input_type=str | list[str])]


def plural(count: int, word: str, words: str | None = None) -> str:
    """``plural(1, "recipient")`` -> ``'1 recipient'``; ``plural(2, "recipient")`` -> ``'2 recipients'``."""
    return f"{count} {word}" if count == 1 else f"{count} {words or word + 's'}"


def sub_value_text(value: object) -> str | None:
    """A ``sub`` value as the text that replaces ``{variable}``; ``None`` means "no value".

    Strings are kept; whole numbers lose any ``.0``; other numbers use the shortest form that reads
    back the same.

        >>> [sub_value_text(value) for value in ("Ana", 3, 12.0, 1234567.5, None)]
        ['Ana', '3', '12', '1234567.5', None]
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _check_sub_value(value: Any) -> str | int | float | None:
    kind = type(value)
    if kind is str or kind is int or value is None:
        return value  # type: ignore[no-any-return]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail("type", f"must be a string or a number (got {shown(value)})")
    number = int(value) if isinstance(value, numbers.Integral) else float(value)  # numpy scalars become plain numbers
    if isinstance(number, float) and not math.isfinite(number):
        raise _fail("type", f"must be a string or a finite number (got {shown(value)})")
    return number


SubValue = Annotated[str | int | float | None,
                     PlainValidator(_check_sub_value, json_schema_input_type=str | int | float | None)]


def sub_problems(sub: list[dict[str, Any]], recipients: int, field: str = "sub") -> list[Problem]:
    """Problems of a ``sub`` array whose values passed their rule: it must hold one object per recipient."""
    if len(sub) == recipients:
        return []
    return [Problem(field, "one_per_recipient",
                    f"{field} must hold one object per recipient: {plural(recipients, 'recipient')} "
                    f"but {plural(len(sub), 'object')}")]


# ---------------------------------------------------------------- translation of failures

_TYPE_NAMES = {
    "int": "a whole number", "bool": "true or false", "string": "a string", "list": "an array",
    "dict": "an object", "model": "an object", "float": "a number", "tuple": "an array",
}


def _translate(error: ErrorDetails, lists: frozenset[str]) -> list[Problem]:
    kind, ctx, got = error["type"], error.get("ctx") or {}, error["input"]
    path = wire_path(error["loc"])
    inner = ctx.get("error")
    if kind == "value_error" and isinstance(inner, RequestValidationError):
        return [Problem(join_path(path, p.path), p.rule, join_path(path, p.message) if path else p.message)
                for p in inner.problems]
    where = path or "The request body"
    if kind == "missing":
        return [Problem(path, "required", f"{where} is required")]
    family = kind.split("_", 1)[0]
    if kind.endswith(("_type", "_parsing")) or kind in ("int_from_float", "model_attributes_type"):
        expected = _TYPE_NAMES.get(family, "of another type")
        return [Problem(path, "type", f"{where} must be {expected} (got {shown(got)})")]
    if kind == "literal_error":
        return [Problem(path, "enum", f"{where} must be one of {ctx.get('expected')} (got {shown(got)})")]
    if kind in ("too_short", "string_too_short"):
        what = ("must not be empty" if ctx.get("min_length") == 1
                else f"must have at least {ctx.get('min_length')} entries")
        return [Problem(path, "not_empty" if ctx.get("min_length") == 1 else "min_length", f"{where} {what}")]
    if kind in ("too_long", "string_too_long"):
        size = ctx.get("actual_length", len(got) if hasattr(got, "__len__") else "?")
        if path in lists:
            return [Problem(path, "max_recipients",
                            f"{where} must have at most {ctx.get('max_length')} recipients (got {size})")]
        unit = "characters" if kind.startswith("string") else "entries"
        return [Problem(path, "max_length", f"{where} must be at most {ctx.get('max_length')} {unit} (got {size})")]
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = next(iter(ctx.values()), "?")
        words = {"greater_than_equal": "at least", "less_than_equal": "at most",
                 "greater_than": "more than", "less_than": "less than"}
        return [Problem(path, "range", f"{where} must be {words[kind]} {bound} (got {shown(got)})")]
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return [Problem(path, "type", f"{where} is not of an accepted shape")]
    if kind in _OUR_RULES:  # our PydanticCustomError types
        return [Problem(path, kind, f"{where} {error['msg']}")]
    return [Problem(path, "invalid", f"{where} is not valid (got {shown(got)})")]


_OUR_RULES = frozenset({"range", "sender_label", "datetime_format", "datetime_calendar", "datetime_timezone",
                        "time_format", "not_empty", "base64", "one_per_recipient", "type", "enum",
                        "unicode", "number_range", "json_depth"})


def problems_from_pydantic(exc: PydanticValidationError,
                           recipient_lists: Iterable[str] = ("to", "messages")) -> list[Problem]:
    """Translate a pydantic failure into our problems, in plain English with wire paths."""
    lists = frozenset(recipient_lists)
    problems: list[Problem] = []
    for error in exc.errors(include_url=False):
        for problem in _translate(error, lists):
            if problem not in problems:
                problems.append(problem)
    return problems


def error_code(problems: Iterable[Problem]) -> int:
    """The error code a request with these problems answers: 101 for too many recipients or ids, else 100.

        >>> error_code([Problem("to", "max_recipients", "to must have at most 1000 recipients (got 1001)")])
        101
    """
    rules = {p.rule for p in problems}
    return int(ErrorCode.TOO_MANY_RECIPIENTS if rules & TOO_MANY_RULES else ErrorCode.INVALID_REQUEST)


def describe_problems(problems: Iterable[Problem]) -> str:
    """One line for an error object's ``description``: the messages joined by ``; ``.

        >>> describe_problems([Problem("to", "required", "to is required"),
        ...                    Problem("from", "required", "from is required")])
        'to is required; from is required'
    """
    return "; ".join(p.message for p in problems)

