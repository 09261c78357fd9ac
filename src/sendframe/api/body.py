"""The one rule every request body follows, and how its failures are named.

A body is UTF-8 JSON, its arrays and objects at most :data:`MAX_JSON_DEPTH` levels deep, its numbers
finite and within ±:data:`MAX_JSON_NUMBER` (2**53 - 1, the integers JSON carries exactly everywhere),
its text (values and field names) Unicode: no lone surrogate. :func:`decode_json` decodes a body under
the rule (the sandbox decodes every body with it, on every endpoint); :func:`json_problems` checks a
decoded one (the models check requests built in Python with it). A failure is a
:class:`~sendframe.errors.RequestValidationError` whose problems name the field by its wire path
(``sub[0].name``), answered 400, code 100 (docs/api-notes.md, "Hostile input").

At the bottom of ``sendframe.api``: it imports only :mod:`sendframe.errors`.

    >>> decode_json(b'{"to": ["34600123456"], "sub": [{"n": 1e400}]}')
    Traceback (most recent call last):
    ...
    sendframe.errors.RequestValidationError: The request body is not valid:
      - sub[0].n must be a number between -9007199254740991 and 9007199254740991 (got a number of 5 characters)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

import orjson

from sendframe.errors import Problem, RequestValidationError

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_NUMBER",
    "decode_json",
    "invalid_request",
    "join_path",
    "json_path_at",
    "json_problems",
    "number_size",
    "printable",
    "unicode_problem",
    "wire_path",
]

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
    escape = f"\\u{ord(found.group()):04x}"
    return f"is not Unicode text: it holds a lone surrogate ({escape} at character {found.start()}); send UTF-8 text"


def number_size(value: int) -> str:
    """How big an integer is, in words (it may be too long to write out: Python refuses past 4,300 digits).

        >>> number_size(10 ** 5000)
        'a number of 5001 digits'
    """
    digits = len(str(value)) if value.bit_length() < 10_000 else int(value.bit_length() * math.log10(2)) + 1
    return f"a number of {digits} digits" if digits < 10_000 else f"a number of about {digits} digits"


def _number_problem(value: float) -> str | None:
    if -MAX_JSON_NUMBER <= value <= MAX_JSON_NUMBER:
        return None
    if isinstance(value, float) and math.isnan(value):
        return "must be a number (got NaN)"
    got = number_size(value) if isinstance(value, int) else json.dumps(value)
    return f"must be a number between -{MAX_JSON_NUMBER} and {MAX_JSON_NUMBER} (got {got})"


def _where(path: str) -> str:
    if not path:
        return "The request body"
    return path if len(path) <= 120 else path[:100] + "..." + path[-15:]


def json_problems(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> list[Problem]:
    """The problems of a decoded request body under the one rule every body follows: arrays and objects at most
    ``max_depth`` levels deep, numbers finite and within ±(2**53 - 1), text (values and field names) Unicode.

    Values of other Python types (dates, models, numpy numbers) are left to the field rules.

        >>> body = {"sub": [{"n": 10 ** 30, "name": "\\udc00"}]}
        >>> [p.message for p in json_problems(body)]  # doctest: +NORMALIZE_WHITESPACE
        ['sub[0].n must be a number between -9007199254740991 and 9007199254740991 (got a number of 31 digits)',
         'sub[0].name is not Unicode text: it holds a lone surrogate (\\\\udc00 at character 0); send UTF-8 text']
    """
    kind = type(value)
    if kind is dict or kind is list or kind is tuple:
        found = _scan(value, 1, max_depth) or []
    else:  # the body itself is a scalar
        found = _scalar_problem(value, [])
    problems = []
    for loc, rule, text in found[:_MAX_PROBLEMS]:
        path = wire_path(reversed(loc))
        problems.append(Problem(_where(path) if path else "", rule, f"{_where(path)} {text}"))
    return problems


def _scalar_problem(item: object, loc: list[Any]) -> list[tuple[list[Any], str, str]]:
    kind = type(item)
    problem = None
    if kind is str:
        problem, rule = unicode_problem(item), "unicode"  # type: ignore[arg-type]
    elif kind is int or kind is float:
        problem, rule = _number_problem(item), "number_range"  # type: ignore[arg-type]
    return [(loc, rule, problem)] if problem else []


def _scan(node: Any, depth: int, max_depth: int) -> list[tuple[list[Any], str, str]] | None:
    """The problems under the array or object ``node`` at ``depth``, each with its location innermost first
    (built only when there is a problem: the walk over a valid body creates nothing). Recursion stops at
    ``max_depth``, so it is never deeper than that."""
    found: list[tuple[list[Any], str, str]] | None = None
    is_dict = type(node) is dict
    for key, item in (node.items() if is_dict else enumerate(node)):
        if is_dict and type(key) is str and not key.isascii() and (problem := unicode_problem(key)):
            found = found or []
            found.append(([], "unicode", f"has a field name that {problem} (field {printable(key)[:40]!r})"))
        kind = type(item)
        if kind is str:
            if item.isascii():
                continue
            more = _scalar_problem(item, [key])
        elif kind is dict or kind is list or kind is tuple:
            if depth >= max_depth:
                more = [([key], "json_depth", f"nests arrays and objects deeper than {max_depth} levels")]
            else:
                more = _scan(item, depth + 1, max_depth) or []
                for loc, _, _ in more:
                    loc.append(key)
        elif kind is int or kind is float:
            more = _scalar_problem(item, [key])
        else:
            continue
        if more:
            found = found or []
            found.extend(more)
            if len(found) >= _MAX_PROBLEMS:
                break
    return found


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
        return Problem(where if path else "", "json_depth",
                       f"{where} nests arrays and objects deeper than {MAX_JSON_DEPTH} levels")
    if "infinity" in message or "range" in message:
        number = re.match(r"-?[0-9.eE+-]*", text[exc.pos : exc.pos + 1_000_000])
        size = f"a number of {len(number.group())} characters" if number else "a number out of range"
        return Problem(where if path else "", "number_range",
                       f"{where} must be a number between -{MAX_JSON_NUMBER} and {MAX_JSON_NUMBER} (got {size})")
    return Problem("", "json_syntax",
                   f"The request body is not valid JSON: {message} (line {exc.lineno}, column {exc.colno})")


def decode_json(raw: bytes | str, *, checked_by_model: bool = False) -> Any:
    """Decode a request body under the one rule of :func:`json_problems`; raise :class:`RequestValidationError`
    naming the field (or the line and column of malformed JSON). The sandbox decodes every body with it.

    The decoder itself refuses text that is not UTF-8 or holds a lone surrogate escape, numbers beyond a
    double and nesting beyond 1,024 levels; ``checked_by_model=True`` leaves the rest of the rule (32
    levels, ±(2**53 - 1)) to the request model the body goes to next, which applies it (one walk, not two).

        >>> decode_json(b'{"to": ["34600123456"]}')
        {'to': ['34600123456']}
        >>> try:
        ...     decode_json(b'{"sub": [{"name": "\\\\ud800"}]}')
        ... except RequestValidationError as exc:
        ...     print(exc.problems[0].path, exc.problems[0].rule)
        sub[0].name unicode
    """
    if not raw or raw.isspace():
        empty = Problem("", "json_syntax", "The request body is empty; send a JSON object")
        raise invalid_request([empty], "request body")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid_request([_decode_problem(raw, exc)], "request body") from None
    problems = [] if checked_by_model else json_problems(value)
    if problems:
        raise invalid_request(problems, "request body")
    return value


def join_path(prefix: str, path: str) -> str:
    """``prefix`` and ``path`` joined as one wire path: ``join_path("sub", "[0].name")`` -> ``'sub[0].name'``."""
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def wire_path(loc: Iterable[int | str]) -> str:
    """A pydantic location as a wire path: ``("messages", 2, "to")`` -> ``messages[2].to``."""
    path = ""
    for part in loc:
        path = f"{path}[{part}]" if isinstance(part, int) else join_path(path, str(part))
    return path


def invalid_request(problems: list[Problem], what: str = "request") -> RequestValidationError:
    """The exception for ``problems``; its text lists each message once (they already name the path)."""
    exc = RequestValidationError(problems, what)
    exc.args = ("\n".join([f"The {what} is not valid:"] + [f"  - {p.message}" for p in problems]),)
    return exc
