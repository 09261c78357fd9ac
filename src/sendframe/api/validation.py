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
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, BeforeValidator, PlainValidator, Strict
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticCustomError

from sendframe.errors import ErrorCode, Problem, RequestValidationError

__all__ = [
    "DATETIME_FORMAT",
    "MAX_JSON_DEPTH",
    "MAX_JSON_NUMBER",
    "Base64Text",
    "ClockTime",
    "NonEmptyText",
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
        return _number_size(value)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(rule: str, message: str) -> PydanticCustomError:
    # our own error type: the translation keeps the rule name and the message as they are
    return PydanticCustomError(rule, message)


# ---------------------------------------------------------------- the body rule: what JSON a request may hold

MAX_JSON_DEPTH = 32
MAX_JSON_NUMBER = 2**53 - 1  # the integers JSON carries exactly everywhere (I-JSON, RFC 7493)
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_PROBLEMS = 20


def printable(text: str) -> str:
    """``text`` with every lone surrogate written as its escape (``\\ud800``), so it can be encoded as UTF-8.

        >>> printable("a\\ud800b")
        'a\\\\ud800b'
    """
    if text.isascii():
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not Unicode text (it holds a lone surrogate, which no UTF-8 text can carry), or ``None``.

        >>> unicode_problem("Ana"), unicode_problem("A\\ud800")
        (None, 'is not Unicode text: it holds a lone surrogate (\\\\ud800 at character 1); send UTF-8 text')
    """
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return f"is not Unicode text: it holds a lone surrogate (\\u{ord(found.group()):04x} at character {found.start()}); send UTF-8 text"


def _number_size(value: int) -> str:
    digits = len(str(value)) if value.bit_length() < 10_000 else int(value.bit_length() * math.log10(2)) + 1
    return f"a number of {digits} digits" if digits < 10_000 else f"a number of about {digits} digits"


def _number_problem(value: float) -> str | None:
    if -MAX_JSON_NUMBER <= value <= MAX_JSON_NUMBER:
        return None
    if isinstance(value, float) and math.isnan(value):
        return "must be a number (got NaN)"
    got = _number_size(value) if isinstance(value, int) else shown(value)
    return f"must be a number between -{MAX_JSON_NUMBER} and {MAX_JSON_NUMBER} (got {got})"


def _where(path: str) -> str:
    if not path:
        return "The request body"
    return path if len(path) <= 120 else path[:100] + "..." + path[-15:]


def json_problems(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> list[Problem]:
    """The problems of a decoded request body under the one rule every body follows: arrays and objects at most
    ``max_depth`` levels deep, numbers finite and within ±(2**53 - 1), text (values and field names) Unicode.

    Values of other Python types (dates, models, numpy numbers) are left to the field rules.

        >>> [p.message for p in json_problems({"sub": [{"n": 10 ** 30, "name": "\\udc00"}]})]  # doctest: +NORMALIZE_WHITESPACE
        ['sub[0].n must be a number between -9007199254740991 and 9007199254740991 (got a number of 31 digits)',
         'sub[0].name is not Unicode text: it holds a lone surrogate (\\\\udc00 at character 0); send UTF-8 text']
    """
    problems: list[Problem] = []

    def add(loc: tuple[Any, ...], rule: str, text: str) -> None:
        path = wire_path(loc)
        problems.append(Problem(_where(path) if path else "", rule, f"{_where(path)} {text}"))

    def scalar(item: object, loc: tuple[Any, ...]) -> None:
        kind = type(item)
        if kind is str:
            problem = unicode_problem(item)  # type: ignore[arg-type]
            if problem:
                add(loc, "unicode", problem)
        elif kind is int or kind is float:
            problem = _number_problem(item)  # type: ignore[arg-type]
            if problem:
                add(loc, "number_range", problem)

    stack: list[tuple[object, tuple[Any, ...], int]] = [(value, (), 1)]
    while stack and len(problems) < _MAX_PROBLEMS:
        node, loc, depth = stack.pop()
        kind = type(node)
        if kind is not dict and kind is not list and kind is not tuple:
            scalar(node, loc)  # the body itself is a scalar
            continue
        if depth > max_depth:
            add(loc, "json_depth", f"nests arrays and objects deeper than {max_depth} levels")
            continue
        items = node.items() if kind is dict else enumerate(node)  # type: ignore[attr-defined,arg-type]
        children = []
        for key, item in items:
            if kind is dict and type(key) is str and not key.isascii() and (problem := unicode_problem(key)):
                add(loc, "unicode", f"has a field name that {problem} (field {printable(key)[:40]!r})")
            item_kind = type(item)
            if item_kind is dict or item_kind is list or item_kind is tuple:
                children.append((item, (*loc, key), depth + 1))
            elif item_kind is not str or not item.isascii():  # type: ignore[attr-defined]
                scalar(item, (*loc, key))
        stack.extend(reversed(children))  # depth first, in document order
    return problems[:_MAX_PROBLEMS]


# a JSON token: a string (perhaps cut at the end) or one of the structural characters
_JSON_TOKEN = re.compile(r'"(?:[^"\\]+|\\.)*"?|[{}\[\],:]', re.DOTALL)


def _key_text(token: str) -> str:
    try:
        return printable(json.loads(token if len(token) > 1 and token.endswith('"') else token + '"'))
    except ValueError:
        return printable(token.strip('"'))


def _position_state(text: str, position: int) -> tuple[str, bool]:
    """The wire path of the value at character ``position`` of JSON ``text``, and whether the position is in a
    field name (the object's path is given then)."""
    stack: list[list[Any]] = []  # [opening character, key or index, expecting a key]
    for match in _JSON_TOKEN.finditer(text, 0, position):
        token = match.group()
        first = token[0]
        if first == '"':
            if stack and stack[-1][0] == "{" and stack[-1][2]:
                stack[-1][1] = _key_text(token) if match.end() < position else None
        elif first == "{":
            stack.append(["{", None, True])
        elif first == "[":
            stack.append(["[", 0, False])
        elif first in "}]":
            if stack:
                stack.pop()
        elif first == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][1] += 1
            elif stack:
                stack[-1][2] = True
        elif stack:  # ":"
            stack[-1][2] = False
    in_key = bool(stack) and stack[-1][0] == "{" and stack[-1][2]
    return wire_path(frame[1] for frame in stack[: len(stack) - in_key] if frame[1] is not None), in_key


def json_path_at(text: str, position: int) -> str:
    """The wire path of the value at character ``position`` of the JSON ``text`` (where a decoder stopped).

        >>> json_path_at('{"sub": [{"a": 1}, {"name": "x', 30)
        'sub[1].name'
    """
    return _position_state(text, position)[0]


def _decode_problem(raw: bytes | str, exc: orjson.JSONDecodeError) -> Problem:
    message = exc.msg
    if "UTF-8" in message and isinstance(raw, bytes):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            before = raw[: bad.start].decode("utf-8")
            path = json_path_at(before, len(before))
            return Problem(_where(path) if path else "", "unicode", f"{_where(path)} is not UTF-8 text "
                           f"(byte 0x{raw[bad.start]:02X} at byte {bad.start}); send UTF-8 text")
    text = exc.doc if isinstance(exc.doc, str) else ""
    path, in_key = _position_state(text, exc.pos) if text else ("", False)
    where = _where(path)
    if "surrogate" in message:
        what = "has a field name that is not Unicode text" if in_key else "is not Unicode text"
        return Problem(where if path else "", "unicode", f"{where} {what}: it holds a lone surrogate "
                       f"(a \\u escape without its pair, line {exc.lineno}, column {exc.colno}); send UTF-8 text")
    if "depth" in message or "recursion" in message:
        return Problem(where if path else "", "json_depth", f"{where} nests arrays and objects deeper than {MAX_JSON_DEPTH} levels")
    if "infinity" in message or "range" in message:
        number = re.match(r"-?[0-9.eE+-]*", text[exc.pos : exc.pos + 1_000_000])
        size = f"a number of {len(number.group())} characters" if number else "a number out of range"
        return Problem(where if path else "", "number_range",
                       f"{where} must be a number between -{MAX_JSON_NUMBER} and {MAX_JSON_NUMBER} (got {size})")
    return Problem("", "json_syntax", f"The request body is not valid JSON: {message} (line {exc.lineno}, column {exc.colno})")


def decode_json(raw: bytes | str) -> Any:
    """Decode a request body under the one rule of :func:`json_problems`; raise :class:`RequestValidationError`
    naming the field (or the line and column of malformed JSON). The sandbox decodes every body with it.

        >>> decode_json(b'{"to": ["34600123456"]}')
        {'to': ['34600123456']}
        >>> try:
        ...     decode_json(b'{"sub": [{"name": "\\\\ud800"}]}')
        ... except RequestValidationError as exc:
        ...     print(exc.problems[0].path, exc.problems[0].rule)
        sub[0].name unicode
    """
    if not raw or raw.isspace():
        raise invalid_request([Problem("", "json_syntax", "The request body is empty; send a JSON object")], "request body")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid_request([_decode_problem(raw, exc)], "request body") from None
    problems = json_problems(value)
    if problems:
        raise invalid_request(problems, "request body")
    return value


# ---------------------------------------------------------------- field rules (annotated types)


def between(low: int, high: int) -> AfterValidator:
    """An inclusive range rule for an integer field: ``Annotated[int, Strict(), between(3, 10)]``."""

    def check(value: int) -> int:
        if not low <= value <= high:
            raise _fail("range", f"must be between {low} and {high} (got {value})")
        return value

    return AfterValidator(check)


def one_of(*allowed: object) -> AfterValidator:
    """An enumeration rule: ``Annotated[str, Strict(), one_of("gsm", "gsm-pt", "utf-16")]``."""
    allowed_set = frozenset(allowed)
    listing = ", ".join(str(value) for value in allowed)

    def check(value: Any) -> Any:
        if value not in allowed_set:
            raise _fail("enum", f"must be one of {listing} (got {shown(value)})")
        return value

    return AfterValidator(check)


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
    return datetime.strptime(text, DATETIME_FORMAT).replace(tzinfo=timezone.utc)


def format_wire_datetime(moment: datetime) -> str:
    """Write a tz-aware datetime as a ``YYYYmmddHHiiss`` request date-time in UTC.

        >>> from datetime import timedelta
        >>> format_wire_datetime(datetime(2026, 11, 21, 10, 30, tzinfo=timezone(timedelta(hours=1))))
        '20261121093000'
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("the date-time needs a time zone (use UTC), e.g. datetime(2026, 11, 21, 9, 30, tzinfo=timezone.utc)")
    return moment.astimezone(timezone.utc).strftime(DATETIME_FORMAT)


def _datetime_to_text(value: Any) -> Any:
    if isinstance(value, datetime):
        try:
            return format_wire_datetime(value)
        except ValueError as exc:
            raise _fail("datetime_timezone", f"must be a date-time with a time zone: {exc}") from None
    return value


def _check_wire_datetime(value: str) -> str:
    if not _DIGITS14.fullmatch(value):
        raise _fail("datetime_format", f"must be a UTC date-time written YYYYmmddHHiiss (14 digits, e.g. 20261121093000; got {shown(value)})")
    try:
        datetime.strptime(value, DATETIME_FORMAT)
    except ValueError:
        raise _fail("datetime_calendar", f"is not a real calendar date-time (got {shown(value)})") from None
    return value


def _check_clock(value: str) -> str:
    if not _CLOCK.fullmatch(value):
        raise _fail("time_format", f"must be a time written HH:MM between 00:00 and 23:59 (got {shown(value)})")
    return value


def _check_not_empty(value: str) -> str:
    if not value:
        raise _fail("not_empty", "must not be empty")
    return value


def _check_base64(value: str) -> str:
    try:
        binascii.a2b_base64(value, strict_mode=True)
    except (binascii.Error, ValueError):
        raise _fail("base64", "must be the file content encoded as base64") from None
    return value


Text = Annotated[str, Strict()]
NonEmptyText = Annotated[str, Strict(), AfterValidator(_check_not_empty)]
SenderLabel = Annotated[str, Strict(), AfterValidator(_check_sender)]
WireDateTime = Annotated[str, BeforeValidator(_datetime_to_text), Strict(), AfterValidator(_check_wire_datetime)]
ClockTime = Annotated[str, Strict(), AfterValidator(_check_clock)]
Base64Text = Annotated[str, Strict(), AfterValidator(_check_base64)]
TextOrTexts = Annotated[str | list[str], PlainValidator(_check_text_or_texts, json_schema_input_type=str | list[str])]


def plural(count: int, word: str, words: str | None = None) -> str:
    """``plural(1, "recipient")`` -> ``'1 recipient'``; ``plural(2, "recipient")`` -> ``'2 recipients'``."""
    return f"{count} {word}" if count == 1 else f"{count} {words or word + 's'}"


def sub_value_text(value: object) -> str | None:
    """A ``sub`` value as the text that replaces ``{variable}``; ``None`` means "no value".

    Strings are kept; whole numbers lose any ``.0``; other numbers use the shortest form that reads
    back the same.

        >>> sub_value_text("Ana"), sub_value_text(3), sub_value_text(12.0), sub_value_text(1234567.5), sub_value_text(None)
        ('Ana', '3', '12', '1234567.5', None)
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


SubValue = Annotated[str | int | float | None, PlainValidator(_check_sub_value, json_schema_input_type=str | int | float | None)]


def sub_problems(sub: list[dict[str, Any]], recipients: int, field: str = "sub") -> list[Problem]:
    """Problems of a ``sub`` array whose values passed their rule: it must hold one object per recipient."""
    if len(sub) == recipients:
        return []
    return [Problem(field, "one_per_recipient",
                    f"{field} must hold one object per recipient: {plural(recipients, 'recipient')} but {plural(len(sub), 'object')}")]


# ---------------------------------------------------------------- translation of failures

_TYPE_NAMES = {
    "int": "a whole number", "bool": "true or false", "string": "a string", "list": "an array",
    "dict": "an object", "model": "an object", "float": "a number", "tuple": "an array",
}


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def wire_path(loc: Iterable[int | str]) -> str:
    """A pydantic location as a wire path: ``("messages", 2, "to")`` -> ``messages[2].to``."""
    path = ""
    for part in loc:
        path = f"{path}[{part}]" if isinstance(part, int) else _join(path, str(part))
    return path


def _translate(error: dict[str, Any], lists: frozenset[str]) -> list[Problem]:
    kind, ctx, got = error["type"], error.get("ctx") or {}, error.get("input")
    path = wire_path(error["loc"])
    inner = ctx.get("error")
    if kind == "value_error" and isinstance(inner, RequestValidationError):
        return [Problem(_join(path, p.path), p.rule, _join(path, p.message) if path else p.message) for p in inner.problems]
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
        what = "must not be empty" if ctx.get("min_length") == 1 else f"must have at least {ctx.get('min_length')} entries"
        return [Problem(path, "not_empty" if ctx.get("min_length") == 1 else "min_length", f"{where} {what}")]
    if kind in ("too_long", "string_too_long"):
        size = ctx.get("actual_length", len(got) if hasattr(got, "__len__") else "?")
        if path in lists:
            return [Problem(path, "max_recipients", f"{where} must have at most {ctx.get('max_length')} recipients (got {size})")]
        unit = "characters" if kind.startswith("string") else "entries"
        return [Problem(path, "max_length", f"{where} must be at most {ctx.get('max_length')} {unit} (got {size})")]
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = next(iter(ctx.values()), "?")
        words = {"greater_than_equal": "at least", "less_than_equal": "at most", "greater_than": "more than", "less_than": "less than"}
        return [Problem(path, "range", f"{where} must be {words[kind]} {bound} (got {shown(got)})")]
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return [Problem(path, "type", f"{where} is not of an accepted shape")]
    if kind in _OUR_RULES:  # our PydanticCustomError types
        return [Problem(path, kind, f"{where} {error['msg']}")]
    return [Problem(path, "invalid", f"{where} is not valid (got {shown(got)})")]


_OUR_RULES = frozenset({"range", "sender_label", "datetime_format", "datetime_calendar", "datetime_timezone",
                        "time_format", "not_empty", "base64", "one_per_recipient", "type", "enum",
                        "unicode", "number_range", "json_depth"})


def problems_from_pydantic(exc: PydanticValidationError, recipient_lists: Iterable[str] = ("to", "messages")) -> list[Problem]:
    """Translate a pydantic failure into our problems, in plain English with wire paths."""
    lists = frozenset(recipient_lists)
    problems: list[Problem] = []
    for error in exc.errors(include_url=False):
        for problem in _translate(error, lists):
            if problem not in problems:
                problems.append(problem)
    return problems


def invalid_request(problems: list[Problem], what: str = "request") -> RequestValidationError:
    """The exception for ``problems``; its text lists each message once (they already name the path)."""
    exc = RequestValidationError(problems, what)
    exc.args = ("\n".join([f"The {what} is not valid:"] + [f"  - {p.message}" for p in problems]),)
    return exc


def error_code(problems: Iterable[Problem]) -> int:
    """The error code a request with these problems answers: 101 for too many recipients or ids, else 100.

        >>> error_code([Problem("to", "max_recipients", "to must have at most 1000 recipients (got 1001)")])
        101
    """
    rules = {p.rule for p in problems}
    return int(ErrorCode.TOO_MANY_RECIPIENTS if rules & TOO_MANY_RULES else ErrorCode.INVALID_REQUEST)


def describe_problems(problems: Iterable[Problem]) -> str:
    """One line for an error object's ``description``: the messages joined by ``; ``.

        >>> describe_problems([Problem("to", "required", "to is required"), Problem("from", "required", "from is required")])
        'to is required; from is required'
    """
    return "; ".join(p.message for p in problems)

