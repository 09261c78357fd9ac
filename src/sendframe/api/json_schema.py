"""What the request models state in their JSON schema beyond what pydantic reads off their fields.

pydantic writes each field's schema from its type and constraints (``Field(min_length=)``, the
:class:`~sendframe.api.validation.Rule` annotations); this module adds the rest, so the OpenAPI document
(:mod:`sendframe.sandbox.openapi`) says what the sandbox accepts: the form of a recipient (checked one by
one by the service, not by the model), ``null`` for optional fields, and the rules across fields.

    >>> one_given("body", "templateId", content="the email content").schema["anyOf"][0]
    {'required': ['body'], 'properties': {'body': {'not': {'type': 'null'}}}}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE
from pydantic import BaseModel, GetJsonSchemaHandler
from pydantic.alias_generators import to_snake
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from sendframe.api.recipients import (
    EMAIL_PATTERN,
    MAX_EMAIL_LENGTH,
    MAX_PHONE_DIGITS,
    MIN_PHONE_DIGITS,
    is_valid_phone,
)
from sendframe.errors import Problem

__all__ = ["FieldsRule", "RecipientSchema", "SchemaRules", "one_given", "phone_pattern", "present",
           "state_request_schema"]


def _digit_runs(lengths: list[int]) -> str:
    runs: list[tuple[int, int]] = []
    for size in lengths:
        if runs and runs[-1][1] == size - 1:
            runs[-1] = (runs[-1][0], size)
        else:
            runs.append((size, size))
    pattern = "|".join(f"[0-9]{{{low}}}" if low == high else f"[0-9]{{{low},{high}}}" for low, high in runs)
    return pattern if len(runs) == 1 else f"({pattern})"


@lru_cache(maxsize=1)
def phone_pattern() -> str:
    """The regular expression of exactly the phone recipients :func:`~sendframe.api.recipients.is_valid_phone`
    accepts, derived from it: per calling code, the lengths the numbering plan lists as possible.

        >>> import re
        >>> [bool(re.fullmatch(phone_pattern(), n)) for n in ("447700900123", "00000000", "+447700900123")]
        [True, False, False]
    """
    by_lengths: dict[tuple[int, ...], list[str]] = {}
    for code in sorted(str(code) for code in COUNTRY_CODE_TO_REGION_CODE):
        lengths = tuple(size - len(code) for size in range(MIN_PHONE_DIGITS, MAX_PHONE_DIGITS + 1)
                        if is_valid_phone(code + "9" * (size - len(code))))  # the rule reads only the length
        if lengths:
            by_lengths.setdefault(lengths, []).append(code)
    groups = [f"({'|'.join(codes)}){_digit_runs(list(lengths))}" for lengths, codes in by_lengths.items()]
    return "^(" + "|".join(groups) + ")$"


class RecipientSchema:
    """JSON schema of one recipient, stated but not checked by the model: the service checks each recipient on
    its own (a bad one is rejected in its result item, code 102, and the others are sent: 207)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        if self.kind == "phone":  # built when the schema is asked for: it reads every country's numbering plan
            return {"type": "string", "pattern": phone_pattern(),
                    "description": "digits only, country calling code first, a possible length for that country"}
        return {"type": "string", "pattern": f"^{EMAIL_PATTERN}$", "maxLength": MAX_EMAIL_LENGTH}


@dataclass(frozen=True)
class FieldsRule:
    """A rule across a request's fields, stated once: its JSON schema (``/openapi.json``) and its check (the
    problem a 400 names), so the document and the service cannot disagree.

        >>> rule = one_given("body", "templateId", content="the email content")
        >>> rule.broken({"body": None, "template_id": None}.get).message
        'body or templateId is required (the email content)'
    """

    schema: dict[str, Any]
    broken: Callable[[Callable[[str], Any]], Problem | None]
    """Given the request's field values (by snake_case name), the problem when the rule is broken, else None."""


SchemaRules = tuple[FieldsRule, ...]


def present(field: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """JSON schema: ``field`` is given and not ``null`` (an explicit ``null`` counts as absent).

        >>> present("body")
        {'required': ['body'], 'properties': {'body': {'not': {'type': 'null'}}}}
    """
    return {"required": [field], "properties": {field: schema or {"not": {"type": "null"}}}}


def one_given(*fields: str, content: str) -> FieldsRule:
    """At least one of ``fields`` (wire names) is given, not ``null``: "body, templateId or templateV2Id is required
    (``content``)", the problem naming the first field.

        >>> len(one_given("body", "templateId", content="the email content").schema["anyOf"])
        2
    """
    names = [to_snake(field) for field in fields]
    listed = f"{', '.join(fields[:-1])} or {fields[-1]}"

    def broken(value: Callable[[str], Any]) -> Problem | None:
        if any(value(name) is not None for name in names):
            return None
        return Problem(fields[0], "body_or_template", f"{listed} is required ({content})")

    return FieldsRule({"anyOf": [present(field) for field in fields]}, broken)


def state_request_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Complete a request model's JSON schema (its ``json_schema_extra``): ``null`` is accepted for every optional
    field (the models count it as absent), and the model's ``schema_rules`` (rules across fields) go in ``allOf``.

        >>> schema = {"properties": {"to": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["to"]}
        >>> state_request_schema(schema, BaseModel)
        >>> schema["properties"]["alpha"]
        {'anyOf': [{'type': 'boolean'}, {'type': 'null'}]}
    """
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        branches = prop.get("anyOf", [prop])
        if name in required or any(branch.get("type") == "null" for branch in branches):
            continue
        keep = {key: prop.pop(key) for key in ("title", "default", "description") if key in prop}
        schema["properties"][name] = {"anyOf": [dict(prop), {"type": "null"}], **keep}
    rules: SchemaRules = getattr(model, "schema_rules", ())
    if rules:
        schema["allOf"] = [rule.schema for rule in rules]
